"""Deprecated path: the module moved to arena.domain.records; plug-ins import its names from arena.plugins."""
from arena._moved import forwarding

__getattr__ = forwarding("arena.records", "arena.domain.records")
