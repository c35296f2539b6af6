"""The arena's timestamps: ISO-8601 UTC with microseconds, as the JSON contract asks."""
from __future__ import annotations

from datetime import datetime, timezone


def now() -> str:
    """This moment, as every stored and printed time is written."""
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


def iso(seconds: float) -> str:
    """A wall-clock time in seconds since the epoch (a claim's), written as now() writes times."""
    return datetime.fromtimestamp(seconds, timezone.utc).isoformat(timespec="microseconds")
