"""Raters' outcomes on matches, and how far two raters agree: the primitives every judge statistic shares."""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TypedDict

from arena.domain.records import JudgedVerdict, Outcome, score

OUTCOMES: tuple[Outcome, ...] = ("pro", "con", "tie")


class Agreement(TypedDict):
    """Two raters' agreement on the matches both rated."""

    matches: int
    agreement: float | None
    kappa: float | None


def match_outcome(score_pro: float, score_con: float) -> Outcome:
    """A judge's match-level outcome, the majority of its runs: pro if score_pro > score_con, con if less, else tie."""
    return "pro" if score_pro > score_con else "con" if score_pro < score_con else "tie"


def agreement(a: Sequence[str], b: Sequence[str]) -> float | None:
    """Agent4Debate's consistency of two judges' outcomes on the same matches.

    agreement = (1/n) Σ_i [a_i = b_i or a_i = tie or b_i = tie]: consistent when both pick the same
    side, and a tie is consistent with anything. None for no matches.
    """
    if len(a) != len(b):
        raise ValueError("agreement needs two equally long sequences of outcomes")
    if not a:
        return None
    return sum(x == y or "tie" in (x, y) for x, y in zip(a, b)) / len(a)


def cohen_kappa(a: Sequence[str], b: Sequence[str], categories: Sequence[str] = OUTCOMES) -> float | None:
    """Cohen's kappa of two raters' labels of the same items.

    κ = (p_o − p_e) / (1 − p_e), with p_o = (1/n) Σ_i [a_i = b_i] the observed agreement and
    p_e = Σ_k (n_a(k)/n)(n_b(k)/n) the agreement expected by chance from each rater's label
    frequencies. None when undefined: no items, or p_e = 1 (both raters used one same label throughout).
    """
    if len(a) != len(b):
        raise ValueError("kappa needs two equally long sequences of labels")
    n = len(a)
    if n == 0:
        return None
    p_o = sum(x == y for x, y in zip(a, b)) / n
    p_e = sum((list(a).count(k) / n) * (list(b).count(k) / n) for k in categories)
    return None if p_e == 1 else (p_o - p_e) / (1 - p_e)


def side_bias(pro_wins: int, con_wins: int) -> tuple[float | None, float | None]:
    """(Pro win rate, p-value): rate = pro_wins / (pro_wins + con_wins), ties left out, and the
    two-sided exact binomial test of that count against 0.5. (None, None) with nothing decided."""
    decided = pro_wins + con_wins
    if decided == 0:
        return None, None
    from scipy.stats import binomtest  # lazy: scipy costs import time the other statistics do not need

    return pro_wins / decided, float(binomtest(pro_wins, decided, 0.5, alternative="two-sided").pvalue)


def runs_by_judge(verdicts: Iterable[JudgedVerdict]) -> dict[str, dict[str, list[JudgedVerdict]]]:
    """judge → match → its stored verdicts there (its runs)."""
    runs: dict[str, dict[str, list[JudgedVerdict]]] = {}
    for v in verdicts:
        runs.setdefault(v.verdict.judge, {}).setdefault(v.match_id, []).append(v)
    return runs


def judge_outcomes(runs: Mapping[str, Mapping[str, list[JudgedVerdict]]]) -> dict[str, dict[str, Outcome]]:
    """judge → match → the judge's outcome there, the majority of its runs (match_outcome of summed points).

    runs: as runs_by_judge groups them. A match with a failed run has no outcome: the judge does not rate it. A
    judge of people's runs are its ballots, so its outcome is the majority of the ballots cast, on every match
    with at least one.
    """
    return {name: {match_id: match_outcome(*score([r.verdict for r in rs]))
                   for match_id, rs in matches.items() if not any(r.verdict.failed for r in rs)}
            for name, matches in runs.items()}


def compare(a: Mapping[str, str], b: Mapping[str, str]) -> Agreement:
    """Two raters' outcomes (match → pro|con|tie) over the matches both rated: {matches, agreement, kappa}."""
    both = [m for m in a if m in b]
    x, y = [a[m] for m in both], [b[m] for m in both]
    return {"matches": len(both), "agreement": agreement(x, y), "kappa": cohen_kappa(x, y)}


def ballot_outcomes(verdicts: Iterable[JudgedVerdict],
                    people: Mapping[str, Mapping[int, str]]) -> dict[str, dict[str, dict[str, Outcome]]]:
    """judge → person → match → that person's ballot (overall), for the judges of people.

    people: judge of people → run → person. A run no name is known for is left out, and so is a failed one.
    """
    out: dict[str, dict[str, dict[str, Outcome]]] = {judge: {} for judge in people}
    for v in verdicts:
        said = v.verdict
        person = people[said.judge].get(said.run) if said.judge in people else None
        if person is not None and not said.error and said.overall is not None:
            out[said.judge].setdefault(person, {})[v.match_id] = said.overall
    return out
