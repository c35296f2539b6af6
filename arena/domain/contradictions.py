"""A judge's stated winner against its own scores: the one rule for when a verdict contradicts itself.

A judge that scores the sides as well as naming a winner (a debatrix dimension verdict, a devil's-advocate
scorer's verdict) contradicts itself when the side it names the winner scored strictly lower than the other.
The gateway re-asks such an answer with the problem (arena.match.judging.scores_check), a run whose answers keep
contradicting themselves fails, the simulator never writes one (arena.gateway.offline), and `arena stats judges` counts
them (arena.analysis.stats). Standard library only: every one of those may import it.
"""
from __future__ import annotations

from typing import Any, Mapping

CONTRADICTION = "self-contradiction"  # how a contradiction's problem starts (the re-ask, a failed run's error)


def contradicts(winner: str | None, pro: float, con: float) -> bool:
    """Whether a stated winner contradicts its own scores: the side named the winner scored strictly lower than
    the other. A tie on unequal scores is no contradiction (rules may call a small lead a tie), nor is a winner on
    equal scores, nor an outcome that is no winner (None)."""
    return (winner == "pro" and pro < con) or (winner == "con" and con < pro)


def pair(scores: Any) -> tuple[float, float] | None:
    """(PRO, CON) of a score pair as judges give it: a [pro, con] pair or a {"pro", "con"} table of numbers; None
    for anything else (an imported source's scores may be single numbers under names of its own)."""
    if isinstance(scores, Mapping):
        scores = [scores.get("pro"), scores.get("con")]
    if not isinstance(scores, (list, tuple)) or len(scores) != 2:
        return None
    return (scores[0], scores[1]) if _number(scores[0]) and _number(scores[1]) else None


def _number(x: object) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def contradiction(winners: Mapping[str, str | None], scores: Mapping[str, Any]) -> str:
    """The first dimension whose winner contradicts its scores (contradicts), told as a problem the judge can
    act on; "" when none does. winners: dimension → outcome; scores: dimension → its (PRO, CON) pair (pair;
    values that are no pair are passed over)."""
    for dimension, scored in scores.items():
        winner, both = winners.get(dimension), pair(scored)
        if both is None:
            continue
        pro, con = both
        if contradicts(winner, pro, con):
            named, other = ("PRO", "CON") if winner == "pro" else ("CON", "PRO")
            low, high = (pro, con) if winner == "pro" else (con, pro)
            return (f"{CONTRADICTION}: on {dimension} the winner is {named}, yet {named} scored {low:g} and {other} "
                    f"{high:g}; give the higher score to the side that wins {dimension}, or name as its winner the "
                    f"side you scored higher")
    return ""
