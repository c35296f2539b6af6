"""Deprecated path: the module moved to arena.base.params; plug-ins import its names from arena.plugins."""
from arena._moved import forwarding

__getattr__ = forwarding("arena.params", "arena.base.params")
