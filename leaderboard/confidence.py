"""How settled a board is: which entries' 95% intervals are apart. Pure functions over a fit's bounds.

Two intervals are apart when they do not overlap (one's low above the other's high), the conservative test
Arena-Hard's separability uses: two 95% intervals apart means a difference at well under the 5% level.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from leaderboard.bt import BoolArray
from leaderboard.tables import Separability as Separability  # declared with the fit's shapes, which carry it


def apart(ci_low: ArrayLike, ci_high: ArrayLike) -> BoolArray:
    """Matrix of whether entry i's and entry j's intervals do not overlap (symmetric, False on the diagonal)."""
    low, high = np.asarray(ci_low, dtype=float), np.asarray(ci_high, dtype=float)
    above = low[:, None] > high[None, :]
    return above | above.T


def separability(ci_low: ArrayLike, ci_high: ArrayLike) -> Separability:
    """The pairs of entries whose intervals do not overlap, of all n(n-1)/2 pairs."""
    n = len(np.asarray(ci_low))
    pairs = n * (n - 1) // 2
    separated = int(np.triu(apart(ci_low, ci_high), 1).sum())
    return {"pairs": pairs, "separated": separated, "share": separated / pairs if pairs else None}


def settled_boundaries(rating: ArrayLike, ci_low: ArrayLike, ci_high: ArrayLike, k: int) -> list[bool]:
    """For each of the k best entries (by rating, ties in input order), whether its interval lies wholly above the
    interval of every entry ranked below it; at most n - 1 boundaries (the last entry has none below)."""
    r = np.asarray(rating, dtype=float)
    order = np.argsort(-r, kind="stable")
    low, high = np.asarray(ci_low, dtype=float)[order], np.asarray(ci_high, dtype=float)[order]
    # below[i]: the highest upper bound among the entries ranked after i
    below = np.maximum.accumulate(high[::-1])[::-1]
    return [bool(low[i] > below[i + 1]) for i in range(min(k, len(r) - 1))]
