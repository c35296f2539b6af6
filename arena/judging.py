"""Deprecated path: the module moved to arena.match.judging; plug-ins import its names from arena.plugins."""
from arena._moved import forwarding

__getattr__ = forwarding("arena.judging", "arena.match.judging")
