"""The arena's timestamps: ISO-8601 UTC with microseconds, as the JSON contract asks."""
from __future__ import annotations

from datetime import datetime, timezone


def now() -> str:
    """This moment, as every stored and printed time is written."""
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


def iso(seconds: float) -> str:
    """A wall-clock time in seconds since the epoch (a claim's), written as now() writes times."""
    return datetime.fromtimestamp(seconds, timezone.utc).isoformat(timespec="microseconds")


def span(seconds: float) -> str:
    """A duration as people read it at a glance: 42s, 3m12s, 2h05m."""
    whole = max(0, round(seconds))
    if whole < 60:
        return f"{whole}s"
    minutes, whole = divmod(whole, 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{whole:02d}s"
