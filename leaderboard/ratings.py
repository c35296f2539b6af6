"""Leaderboard tables from match results: weighted BT ratings, bootstrap or sandwich intervals, records.

Input is a DataFrame with columns match_id, entry_a, entry_b (the Pro side), score_a, score_b;
output is plain JSON-ready Python (dicts, lists, floats, ints, bools, None).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from leaderboard import bt, elo
from leaderboard.bootstrap import bootstrap_ratings, match_kinds

PROVISIONAL_MATCHES = 15


def rate(results: pd.DataFrame, *, ci="bootstrap", bootstrap=1000, seed=0, weighting="paper",
         anchor: tuple[str, float] | None = None, side="fit") -> dict:
    """Ratings table: full-data BT fit, 95% intervals, Rank (UB), records; with side="fit" the Pro advantage
    is fitted with the ratings and reported with its interval ("ignore": the side-blind model, side None).

    ci="bootstrap" gives percentile intervals over `bootstrap` resamples of the
    matches (none when 0); ci="sandwich" the robust normal intervals instead.
    Both take the weak prior as data (leaderboard.bt), so an entry few matches
    pin gets a wide interval, never a zero-width one.
    """
    if ci not in ("bootstrap", "sandwich"):
        raise ValueError(f"unknown ci {ci!r}: expected 'bootstrap' or 'sandwich'")
    if side not in ("fit", "ignore"):
        raise ValueError(f"unknown side {side!r}: expected 'fit' or 'ignore'")
    entries, a, b = _entry_indices(results)
    score_a = results["score_a"].to_numpy(dtype=float)
    score_b = results["score_b"].to_numpy(dtype=float)
    n = len(entries)
    if anchor is not None:
        name, rating = anchor
        if name not in entries:
            raise ValueError(f"anchor entry {name!r} has no matches in the results; known entries: {entries}")
        anchor = (entries.index(name), float(rating))
    meta = {"matches": len(results), "ci": ci, "bootstrap": int(bootstrap) if ci == "bootstrap" else 0,
            "weighting": weighting, "seed": int(seed), "side": side}
    if n == 0:  # no matches yet: an empty table, not an error
        return {"ratings": [], "side": None, "meta": {**meta, "prior": False}}

    fitted = side == "fit"
    options = {"weighting": weighting, "anchor": anchor, "side": fitted}
    # Identical matches pooled, with their counts: the fit, the bootstrap and the records then pass over each
    # kind of match once, not over every row (a million rows are some 60,000 kinds among 100 entries).
    *pooled, counts = match_kinds(a, b, score_a, score_b, n, keep_sides=True)
    full = bt.fit_ratings(*pooled, n, counts=counts, **options)
    if ci == "sandwich":
        robust = bt.sandwich_intervals(a, b, score_a, score_b, n, **options)
        ci_low, ci_high, side_low, side_high = robust.low, robust.high, robust.side_low, robust.side_high
    elif bootstrap > 0:
        # Started from this fit, the bootstrap's own of the full data under the prior takes a step or two.
        init = np.append(full.ratings - full.ratings.mean(), [full.pro_advantage] if fitted else []) / elo.ELO_SCALE
        replicates = bootstrap_ratings(*pooled, n, replicates=bootstrap, seed=seed, counts=counts, init=init,
                                       **options)
        ci_low, ci_high = np.percentile(replicates.ratings, [2.5, 97.5], axis=0)
        side_low, side_high = np.percentile(replicates.pro_advantage, [2.5, 97.5]) if fitted else (None, None)
    else:
        ci_low = ci_high = full.ratings
        side_low = side_high = full.pro_advantage
    # The rating is the MLE where it exists, the interval from the prior's posterior; in the rare small
    # sample where the MLE lies beyond the posterior's 95%, the interval is stretched to reach it.
    ci_low, ci_high = np.minimum(ci_low, full.ratings), np.maximum(ci_high, full.ratings)
    wins, ties, losses = _records(*pooled, n, counts)
    matches = wins + ties + losses
    rank = bt.rank_ub(ci_low, ci_high)
    # Entries are in name order, so a stable sort breaks rating ties by name.
    order = np.argsort(-full.ratings, kind="stable")
    rows = [
        {
            "entry": entries[i],
            "rating": round(float(full.ratings[i]), 2),
            "ci_low": round(float(ci_low[i]), 2),
            "ci_high": round(float(ci_high[i]), 2),
            "matches": int(matches[i]),
            "wins": int(wins[i]),
            "ties": int(ties[i]),
            "losses": int(losses[i]),
            "rank_ub": int(rank[i]),
            "provisional": bool(matches[i] < PROVISIONAL_MATCHES),
        }
        for i in order
    ]
    return {"ratings": rows, "side": _side(full.pro_advantage, side_low, side_high),
            "meta": {**meta, "prior": full.prior_used}}


def _side(advantage, low, high) -> dict | None:
    """The Pro advantage and its interval, in Elo, as JSON (None when the side is not fitted)."""
    if advantage is None:
        return None
    low, high = min(low, advantage), max(high, advantage)  # as for the ratings
    return {"pro_advantage": round(advantage, 2), "ci_low": round(float(low), 2), "ci_high": round(float(high), 2)}


def win_matrices(results: pd.DataFrame, *, weighting="paper", side="fit") -> dict:
    """Predicted P(row beats column) from the fit's ratings (with side "fit", on neutral sides: the Pro
    advantage left out), observed mean score share, and match counts."""
    entries, a, b = _entry_indices(results)
    score_a = results["score_a"].to_numpy(dtype=float)
    score_b = results["score_b"].to_numpy(dtype=float)
    n = len(entries)
    ratings = (bt.fit_ratings(a, b, score_a, score_b, n, weighting=weighting, side=side == "fit").ratings if n
               else np.zeros(0))
    # Unit weights turn the pair statistics into summed shares and match counts.
    shares, counts = bt.pair_statistics(a, b, bt.soft_outcomes(score_a, score_b), np.ones(len(a)), n)
    counts = counts.round().astype(int)
    return {
        "entries": entries,
        "predicted": bt.win_probability(ratings).tolist(),
        "observed_share": [
            [float(shares[i, j] / counts[i, j]) if counts[i, j] else None for j in range(n)] for i in range(n)
        ],
        "counts": counts.tolist(),
    }


def _entry_indices(results):
    """Entry names in sorted order, and the index arrays of entry_a and entry_b."""
    names = pd.concat([results["entry_a"], results["entry_b"]], ignore_index=True)
    codes, entries = pd.factorize(names, sort=True)
    return entries.tolist(), codes[: len(results)], codes[len(results) :]


def _records(a, b, score_a, score_b, n, counts):
    """Per-entry wins, ties and losses, from each match's overall scores, match m counting counts[m] times."""
    a_won, tied, b_won = (score_a > score_b) * counts, (score_a == score_b) * counts, (score_a < score_b) * counts
    wins = np.bincount(a, weights=a_won, minlength=n) + np.bincount(b, weights=b_won, minlength=n)
    ties = np.bincount(a, weights=tied, minlength=n) + np.bincount(b, weights=tied, minlength=n)
    losses = np.bincount(a, weights=b_won, minlength=n) + np.bincount(b, weights=a_won, minlength=n)
    return wins.astype(int), ties.astype(int), losses.astype(int)
