"""Judged matches → results rows (the results CSV schema of docs/reference.md), the input of every rating fit."""
from __future__ import annotations

import json
from collections import defaultdict

from arena.records import DIMENSIONS, Verdict, score
from arena.store import Store

COLUMNS = ["match_id", "entry_a", "entry_b", "score_a", "score_b", "category", "dimension"]


def results_rows(store: Store, judge: str) -> list[dict]:
    """One row per (match, dimension) for matches the judge judged without a failed run.

    entry_a is Pro and entry_b is Con; scores are judge points out of the judge's runs R.
    """
    by_match: dict[str, list] = defaultdict(list)
    for row in store.verdict_rows(judge):
        by_match[row["match_id"]].append(row)
    out = []
    for match_id, rows in by_match.items():
        if any(r["error"] for r in rows):
            continue  # a match is not rated by a judge that failed on it
        verdicts = [Verdict(r["judge"], r["run"], r["overall"], json.loads(r["dimensions"])) for r in rows]
        first = rows[0]
        for dimension in ("overall", *DIMENSIONS):
            pro, con = score(verdicts, dimension)
            if pro + con > 0:
                out.append({"match_id": match_id, "entry_a": first["pro"], "entry_b": first["con"],
                            "score_a": pro, "score_b": con, "category": first["category"], "dimension": dimension})
    return out
