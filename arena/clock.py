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
    """A length of time as people read it: 45s, 5m30s, 1h20m."""
    whole = round(seconds)
    if whole < 60:
        return f"{whole}s"
    minutes, secs = divmod(whole, 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{secs:02d}s"
