"""Judged matches → results rows (the results CSV schema of docs/reference.md), the input of every rating fit."""
from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable

from arena.records import DIMENSIONS, Verdict, score
from arena.store import Store


def ordered_dimensions(names: Iterable[str]) -> list[str]:
    """Dimension names as every listing shows them: the default three in their order, then others by name."""
    found = set(names)
    return [d for d in DIMENSIONS if d in found] + sorted(found - set(DIMENSIONS))


def results_rows(store: Store, judge: str, runs: int) -> list[dict]:
    """One row per (match, dimension) for matches the judge judged without a failed run, and for forfeits.

    entry_a is Pro and entry_b is Con; scores are judge points out of the judge's runs R. The
    dimensions are every one found in the judge's verdicts (a debatrix judge may define its own),
    overall first, then in ordered_dimensions' order. A forfeit gives the other side all R runs of
    every one of those dimensions (R–0): the match is rated, so an entry that cannot debate is not
    rated only on the matches it managed to finish. Rows carry `forfeit`: the side that forfeited, or None.
    """
    by_match: dict[str, list] = defaultdict(list)
    for row in store.verdict_rows(judge):
        by_match[row["match_id"]].append(row)
    judged: dict[str, list[Verdict]] = {}
    for match_id, rows in by_match.items():
        if not any(r["error"] for r in rows):  # a match is not rated by a judge that failed on it
            judged[match_id] = [Verdict(r["judge"], r["run"], r["overall"], json.loads(r["dimensions"]))
                                for r in rows]
    dimensions = ordered_dimensions(d for verdicts in judged.values() for v in verdicts for d in v.dimensions)
    out = []
    for match_id, verdicts in judged.items():
        first = by_match[match_id][0]
        for dimension in ("overall", *dimensions):
            pro, con = score(verdicts, dimension)
            if pro + con > 0:
                out.append({"match_id": match_id, "entry_a": first["pro"], "entry_b": first["con"],
                            "score_a": pro, "score_b": con, "category": first["category"], "dimension": dimension,
                            "forfeit": None})
    for match in store.forfeits():
        pro = float(runs) if match["forfeit"] == "con" else 0.0
        out += [{"match_id": match["id"], "entry_a": match["pro"], "entry_b": match["con"], "score_a": pro,
                 "score_b": runs - pro, "category": match["category"], "dimension": dimension,
                 "forfeit": match["forfeit"]} for dimension in ("overall", *dimensions)]
    return out
