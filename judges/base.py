"""Deprecated path of the judge contract: plug-ins import it from arena.plugins (it lives in arena.match.judging)."""
from arena._moved import forwarding

__getattr__ = forwarding("judges.base", "arena.match.judging")
