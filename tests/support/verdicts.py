"""Stored verdicts made by hand, for the statistics' tests: what the store's judged_verdicts would give."""
from __future__ import annotations

from typing import Any, Mapping

from arena.domain.records import JudgedVerdict, Outcome, Verdict


def judged(match_id: str, judge: str, overall: Outcome | None, *, run: int = 0, error: str | None = None,
           dimensions: Mapping[str, Outcome] | None = None, rationale: str = "", extra: Mapping[str, Any] | None = None,
           pro: str = "a", con: str = "b", category: str = "fact") -> JudgedVerdict:
    """A stored verdict of judge's run on a completed match (pro against con, of a motion of category)."""
    return JudgedVerdict(match_id, Verdict(judge, run, overall, dict(dimensions or {}), rationale, error,
                                           dict(extra or {})), False, "", pro, con, category, False)
