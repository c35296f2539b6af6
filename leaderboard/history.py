"""Ratings over time: the rating fit of the first k matches, after every N matches in the order given.

Input is a DataFrame of results rows (a match's rows for each dimension may lie anywhere), its matches in the
order they happened; output is a list of snapshots, plain JSON-ready Python.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from leaderboard.ratings import rate
from leaderboard.tables import Snapshot

# The default spacing keeps a history at most this long however many matches there are: each snapshot is a fit,
# and `arena publish` draws one.
MAX_SNAPSHOTS = 25


def default_every(matches: int, most: int = MAX_SNAPSHOTS) -> int:
    """The smallest spacing N giving at most `most` snapshots of `matches` matches: ceil(matches / most), ≥ 1."""
    return max(1, math.ceil(matches / most))


def cutoffs(matches: int, every: int) -> list[int]:
    """Snapshot sizes k = N, 2N, ... up to `matches`, and `matches` itself when N does not divide it."""
    sizes = list(range(every, matches + 1, every))
    return sizes if not matches or (sizes and sizes[-1] == matches) else [*sizes, matches]


def in_order(results: pd.DataFrame, order: list[str]) -> pd.DataFrame:
    """The rows of results with their matches in `order` (match ids; rows of one match keep their order)."""
    position = {match_id: k for k, match_id in enumerate(order)}
    return results.iloc[results["match_id"].map(position).argsort(kind="stable")]


def prefixes(results: pd.DataFrame, *, every: int | None = None) -> list[tuple[int, str, pd.DataFrame]]:
    """(k, the k-th match's id, the rows of the first k matches) for each k of cutoffs, matches counted by match_id
    in order of first appearance (default N: default_every); the last holds every row."""
    codes, ids = pd.factorize(results["match_id"], sort=False)
    every = default_every(len(ids)) if every is None else every
    return [(k, str(ids[k - 1]), results[codes < k]) for k in cutoffs(len(ids), every)]


def history(results: pd.DataFrame, *, every: int | None = None, **options: Any) -> list[Snapshot]:
    """Snapshots {"matches": k, "last_match", **rate(rows of the first k matches, **options)} for each of prefixes."""
    return [{"matches": k, "last_match": last, **rate(rows, **options)} for k, last, rows in prefixes(results, every=every)]
