"""Judged matches → results rows (the results CSV of docs/reference/formats.md), the input of every rating fit."""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import TypedDict

from arena.domain import features
from arena.domain.records import DIMENSIONS, JudgedVerdict, Side, Verdict, score
from arena.store import Store


class ResultsRow(TypedDict):
    """One match's scores on one dimension under one judge: the results CSV's row (docs/reference/formats.md).
    It stays a row of its own, not a record: it is the rating's input, which a results file gives as well as a
    workspace. entry_a is Pro and entry_b Con; forfeit: the side that forfeited, or None."""

    match_id: str
    entry_a: str
    entry_b: str
    score_a: float
    score_b: float
    category: str
    dimension: str
    forfeit: Side | None
    simulated: bool


def ordered_dimensions(names: Iterable[str]) -> list[str]:
    """Dimension names as every listing shows them: the default three in their order, then others by name."""
    found = set(names)
    return [d for d in DIMENSIONS if d in found] + sorted(found - set(DIMENSIONS))


def judged_runs(verdicts: Iterable[JudgedVerdict]) -> dict[str, tuple[JudgedVerdict, list[Verdict]]]:
    """match → (its first stored verdict, its runs) of one judge's stored verdicts, for the matches with no failed
    run: a judge that failed on a match does not score it."""
    by_match: dict[str, list[JudgedVerdict]] = defaultdict(list)
    for v in verdicts:
        by_match[v.match_id].append(v)
    return {match_id: (runs[0], [r.verdict for r in runs])
            for match_id, runs in by_match.items() if not any(r.verdict.failed for r in runs)}


def results_rows(store: Store, judge: str, runs: int) -> list[ResultsRow]:
    """One row per (match, dimension) for matches the judge judged without a failed run, and for forfeits.

    entry_a is Pro and entry_b is Con; scores are judge points out of the judge's runs R. The
    dimensions are every one found in the judge's verdicts (a debatrix judge may define its own),
    overall first, then in ordered_dimensions' order. A forfeit gives the other side all R runs of
    every one of those dimensions (R–0): the match is rated, so an entry that cannot debate is not
    rated only on the matches it managed to finish. Rows carry `forfeit`: the side that forfeited, or None; and
    `simulated`: the match's flag (arena.domain.records.simulated: anything of it came from the simulator).
    """
    judged = judged_runs(store.judged_verdicts(judge))
    dimensions = ordered_dimensions(d for _, verdicts in judged.values() for v in verdicts for d in v.dimensions)
    out: list[ResultsRow] = []
    for match_id, (first, verdicts) in judged.items():
        for dimension in ("overall", *dimensions):
            pro, con = score(verdicts, dimension)
            if pro + con > 0:
                out.append({"match_id": match_id, "entry_a": first.pro, "entry_b": first.con,
                            "score_a": pro, "score_b": con, "category": first.category, "dimension": dimension,
                            "forfeit": None, "simulated": first.match_simulated})
    for match in store.match_states(status="done", forfeited=True):
        side = match.forfeit.side if match.forfeit else None
        pro = float(runs) if side == "con" else 0.0
        out += [{"match_id": match.id, "entry_a": match.pro, "entry_b": match.con, "score_a": pro,
                 "score_b": runs - pro, "category": match.category, "dimension": dimension,
                 "forfeit": side, "simulated": match.simulated}
                for dimension in ("overall", *dimensions)]
    return out


def match_features(store: Store) -> dict[str, dict[str, dict[str, int]]]:
    """match → side → feature → count (arena.domain.features.side_totals) over the side's speeches, for every completed
    match; a side with no speeches (a forfeit in the first stage) counts 0."""
    speeches: dict[str, list[tuple[str, str]]] = defaultdict(list)
    language = {}
    for match_id, side, text, motion_language in store.done_speech_texts():
        speeches[match_id].append((side, text))
        language[match_id] = motion_language
    return {match_id: features.side_totals(texts, language[match_id]) for match_id, texts in speeches.items()}
