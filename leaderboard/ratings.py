"""Leaderboard tables from match results: weighted BT ratings, bootstrap or sandwich intervals, records.

Input is a DataFrame with columns match_id, entry_a, entry_b (the Pro side), score_a, score_b;
output is JSON-ready Python (dicts, lists, floats, ints, bools, None), typed by the shapes below
(leaderboard.tables: docs/reference/json.md's `arena rate`, which adds what the arena knows beside the fit).
"""

from __future__ import annotations

from typing import Any, Literal, Sequence, TypeVar, cast

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from leaderboard import bt, control, control_bootstrap, elo
from leaderboard.bootstrap import bootstrap_ratings, match_kinds
from leaderboard.bt import FloatArray, IndexArray
from leaderboard.confidence import separability
from leaderboard.results import FEATURE_COLUMNS
from leaderboard.tables import Coefficient, Fit, FitMeta, Rating, SideFit, WinMatrices, FitSettings

PROVISIONAL_MATCHES = 15
CI_METHODS: tuple[Literal["bootstrap", "sandwich"], ...] = ("bootstrap", "sandwich")
SIDE_MODELS: tuple[Literal["fit", "ignore"], ...] = ("fit", "ignore")
WEIGHTINGS: tuple[Literal["paper", "none"], ...] = ("paper", "none")


_Choice = TypeVar("_Choice", bound=str)


def _one_of(name: str, value: str, allowed: tuple[_Choice, ...]) -> _Choice:
    """value as one of allowed, or ValueError naming name and what is allowed."""
    for choice in allowed:
        if value == choice:
            return choice
    raise ValueError(f"unknown {name} {value!r}: expected {' or '.join(repr(a) for a in allowed)}")


def rate(results: pd.DataFrame, *, ci: str = "bootstrap", bootstrap: int = 1000, seed: int = 0,
         weighting: str = "paper", anchor: tuple[str, float] | None = None, side: str = "fit",
         control: Sequence[str] = ()) -> Fit:
    """Ratings table: full-data BT fit, 95% intervals, Rank (UB), records, and the separability of the rows'
    intervals (leaderboard.confidence: the pairs of entries whose intervals do not overlap); with side="fit" the
    Pro advantage is fitted with the ratings and reported with its interval ("ignore": the side-blind model, side
    None).
    control: style features (leaderboard.results.FEATURE_COLUMNS) fitted with them (leaderboard.control), each
    coefficient reported with its interval under "control", the ratings then net of them.

    ci="bootstrap" gives percentile intervals over `bootstrap` resamples of the
    matches (none when 0); ci="sandwich" the robust normal intervals instead.
    Both take the weak prior as data (leaderboard.bt), so an entry few matches
    pin gets a wide interval, never a zero-width one.
    """
    method = _one_of("ci", ci, CI_METHODS)
    side_model = _one_of("side", side, SIDE_MODELS)
    unknown = [name for name in control if name not in FEATURE_COLUMNS]
    if unknown:
        raise ValueError(f"unknown control {unknown[0]!r}: expected one of {', '.join(FEATURE_COLUMNS)}")
    entries, a, b = _entry_indices(results)
    score_a = results["score_a"].to_numpy(dtype=float)
    score_b = results["score_b"].to_numpy(dtype=float)
    n = len(entries)
    pinned: bt.Anchor = None
    if anchor is not None:
        name, rating = anchor
        if name not in entries:
            raise ValueError(f"anchor entry {name!r} has no matches in the results; known entries: {entries}")
        pinned = (entries.index(name), float(rating))
    settings: FitSettings = {"matches": len(results), "ci": method,
                           "bootstrap": int(bootstrap) if method == "bootstrap" else 0,
                           "weighting": _one_of("weighting", weighting, WEIGHTINGS), "seed": int(seed),
                           "side": side_model}
    if control:
        settings["control"] = list(control)
    if n == 0:  # no matches yet: an empty table, not an error
        apart = separability([], [])
        if control:
            return {"ratings": [], "separability": apart, "side": None, "control": None,
                    "meta": {**settings, "prior": False}}
        return {"ratings": [], "separability": apart, "side": None, "meta": {**settings, "prior": False}}

    fitted = side_model == "fit"
    # Identical matches pooled, with their counts: the fit, the bootstrap and the records then pass over each
    # kind of match once, not over every row (a million rows are some 60,000 kinds among 100 entries).
    kinds = match_kinds(a, b, score_a, score_b, n, keep_sides=True)
    pooled, counts = (kinds[0], kinds[1], kinds[2], kinds[3]), kinds[4]
    coefficients: list[tuple[float, float, float]] = []
    if control:
        features = _features(results, control)
        full, (ci_low, ci_high, side_low, side_high), coefficients = _controlled(
            a, b, score_a, score_b, features, n, ci=method, bootstrap=bootstrap, seed=seed, weighting=weighting,
            anchor=pinned, side=fitted)
    else:
        full, (ci_low, ci_high, side_low, side_high) = _uncontrolled(
            pooled, counts, a, b, score_a, score_b, n, ci=method, bootstrap=bootstrap, seed=seed,
            weighting=weighting, anchor=pinned, side=fitted)
    # The rating is the MLE where it exists, the interval from the prior's posterior; in the rare small
    # sample where the MLE lies beyond the posterior's 95%, the interval is stretched to reach it.
    ci_low, ci_high = np.minimum(ci_low, full.ratings), np.maximum(ci_high, full.ratings)
    wins, ties, losses = _records(*pooled, n, counts)
    matches = wins + ties + losses
    rank = bt.rank_ub(ci_low, ci_high)
    # Entries are in name order, so a stable sort breaks rating ties by name.
    order = np.argsort(-full.ratings, kind="stable")
    rows: list[Rating] = [
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
    meta: FitMeta = {**settings, "prior": full.prior_used}
    side_fit = _side(full.pro_advantage, side_low, side_high)
    # Of the bounds as the rows show them, so that a reader's count from the table is this count.
    apart = separability([r["ci_low"] for r in rows], [r["ci_high"] for r in rows])
    if control:
        return {"ratings": rows, "separability": apart, "side": side_fit,
                "control": {name: _coefficient(*values) for name, values in zip(control, coefficients)},
                "meta": meta}
    return {"ratings": rows, "separability": apart, "side": side_fit, "meta": meta}


# The bounds of a fit's intervals: the ratings' low and high, the Pro advantage's low and high (None: not fitted).
_Bounds = tuple[FloatArray, FloatArray, float | None, float | None]


def _uncontrolled(pooled: tuple[IndexArray, IndexArray, FloatArray, FloatArray], counts: NDArray[np.integer[Any]],
                  a: IndexArray, b: IndexArray, score_a: FloatArray, score_b: FloatArray, n: int, *,
                  ci: Literal["bootstrap", "sandwich"], bootstrap: int, seed: int, weighting: str, anchor: bt.Anchor,
                  side: bool) -> tuple[bt.FitResult, _Bounds]:
    """The BT fit (leaderboard.bt) of the pooled matches and the bounds (ratings low, high; side low, high) of
    its intervals."""
    full = bt.fit_ratings(*pooled, n, counts=counts, weighting=weighting, anchor=anchor, side=side)
    side_low: float | None
    side_high: float | None
    if ci == "sandwich":
        robust = bt.sandwich_intervals(a, b, score_a, score_b, n, weighting=weighting, anchor=anchor, side=side)
        ci_low, ci_high, side_low, side_high = robust.low, robust.high, robust.side_low, robust.side_high
    elif bootstrap > 0:
        # Started from this fit, the bootstrap's own of the full data under the prior takes a step or two.
        init = np.append(full.ratings - full.ratings.mean(), [full.pro_advantage] if side else []) / elo.ELO_SCALE
        replicates = bootstrap_ratings(*pooled, n, replicates=bootstrap, seed=seed, counts=counts, init=init,
                                       weighting=weighting, anchor=anchor, side=side)
        ci_low, ci_high = np.percentile(replicates.ratings, [2.5, 97.5], axis=0)
        side_low, side_high = (np.percentile(cast(FloatArray, replicates.pro_advantage), [2.5, 97.5]) if side
                               else (None, None))
    else:
        ci_low = ci_high = full.ratings
        side_low = side_high = full.pro_advantage
    return full, (ci_low, ci_high, side_low, side_high)


def _features(results: pd.DataFrame, control: Sequence[str]) -> FloatArray:
    """Each controlled feature's contrast x = (pro - con) / (pro + con) per row (matches x features); 0 on a
    forfeit, which no judge decided, so that no style can have swayed it."""
    missing = [c for name in control for c in FEATURE_COLUMNS[name] if c not in results.columns]
    if missing:
        raise ValueError(f"no {', '.join(missing)} column{'s' * (len(missing) > 1)} for the controlled features")
    X = np.column_stack([control_contrast(results, name) for name in control])
    if "forfeit" in results.columns:
        X[(results["forfeit"].fillna("") != "").to_numpy()] = 0.0
    return X


def control_contrast(results: pd.DataFrame, name: str) -> FloatArray:
    """Feature `name`'s contrast (leaderboard.control.contrast) of each results row."""
    pro, con = FEATURE_COLUMNS[name]
    return control.contrast(results[pro].to_numpy(dtype=float), results[con].to_numpy(dtype=float))


def _controlled(a: IndexArray, b: IndexArray, score_a: FloatArray, score_b: FloatArray, X: FloatArray, n: int, *,
                ci: Literal["bootstrap", "sandwich"], bootstrap: int, seed: int, weighting: str, anchor: bt.Anchor,
                side: bool) -> tuple[bt.FitResult, _Bounds, list[tuple[float, float, float]]]:
    """The controlled fit (leaderboard.control), the bounds of its intervals as _uncontrolled's, and each
    feature's (coefficient, low, high) in Elo per unit of x.

    Each interval is the uncontrolled fit's kind of spread (the replicates' percentiles, or the mode under the
    prior +- z SE) about the fit under the prior, moved onto the estimate. Where a feature goes with the entry
    (verbose models write long in every match), the prior's pull moves the coefficient and the strengths
    together, so that the spread left where it was would leave a coefficient far out of its own interval
    (lechmazur/debate's length: 391 Elo, percentiles 197 to 1717) and the ratings' intervals in the prior fit's
    order, not the estimates' (the demo's sim-deft and sim-eager: estimates 842 and 811, sandwich intervals about 873
    and 870, so rank_ub, from the bounds, ranked the lower one better).
    """
    y, w = bt.soft_outcomes(score_a, score_b), bt.match_weights(score_a, score_b, weighting)
    d = control.design(a, b, y, w, X, n, side=side)
    ridge = bt.prior_for(bt.pair_statistics(a, b, y, w, n)[0])
    x: FloatArray = control.fit(d, ridge=ridge)[0]  # in the design's units (coefficients: d.per_unit)
    point = _in_gauge(d.per_unit(x) * elo.ELO_SCALE, n, anchor)
    low: FloatArray
    high: FloatArray
    if ci == "sandwich":
        posterior: FloatArray = control.fit(d, ridge=elo.PRIOR_PRECISION, init=x)[0]
        cov = control.covariance(d, posterior)
        variance = _gauged(d.per_unit_variance(np.diag(cov)), cov, n, anchor)  # the strengths' block is per unit
        half = control.z_value() * elo.ELO_SCALE * np.sqrt(np.maximum(variance, 0.0))
        centre = _in_gauge(d.per_unit(posterior) * elo.ELO_SCALE, n, anchor)
        low, high = centre - half, centre + half
    elif bootstrap > 0:
        replicates, start = control_bootstrap.bootstrap(d, replicates=bootstrap, seed=seed, init=x)
        centre = _in_gauge(d.per_unit(start) * elo.ELO_SCALE, n, anchor)
        low, high = np.percentile(_in_gauge(d.per_unit(replicates) * elo.ELO_SCALE, n, anchor), [2.5, 97.5], axis=0)
    else:
        centre = low = high = point
    low += point - centre  # every parameter's spread about the rating (or coefficient) shown
    high += point - centre
    ratings = point
    full = bt.FitResult(ratings[:n], bool(ridge > 0), float(ratings[n]) if side else None)
    k = n + side
    coefficients = [(float(ratings[k + j]), float(low[k + j]), float(high[k + j])) for j in range(X.shape[1])]
    side_bounds = (float(low[n]), float(high[n])) if side else (None, None)
    return full, (low[:n], high[:n], *side_bounds), coefficients


def _in_gauge(x: FloatArray, n: int, anchor: bt.Anchor) -> FloatArray:
    """Parameter rows in Elo (mean-zero strengths first) with the strengths made ratings (bt.to_elo)."""
    x = np.array(x, dtype=float)
    shift = elo.BASE_RATING if anchor is None else anchor[1] - x[..., anchor[0], None]
    x[..., :n] = x[..., :n] + shift
    return x


def _gauged(variance: FloatArray, cov: FloatArray, n: int, anchor: bt.Anchor) -> FloatArray:
    """Variances of the parameters in the ratings' gauge: with an anchor k, of t_i - t_k for the strengths."""
    if anchor is None:
        return variance
    k = anchor[0]
    out = variance.copy()
    out[:n] = variance[:n] + cov[k, k] - 2 * cov[:n, k]
    return out


def _side(advantage: float | None, low: float | None, high: float | None) -> SideFit | None:
    """The Pro advantage and its interval, in Elo, as JSON (None when the side is not fitted)."""
    if advantage is None:
        return None
    low, high = _stretched(advantage, low, high)
    return {"pro_advantage": round(advantage, 2), "ci_low": low, "ci_high": high}


def _coefficient(value: float, low: float, high: float) -> Coefficient:
    """A coefficient and its interval, in Elo per unit of x, as JSON."""
    low, high = _stretched(value, low, high)
    return {"coef": round(value, 2), "ci_low": low, "ci_high": high}


def _stretched(value: float, low: float | None, high: float | None) -> tuple[float, float]:
    """An interval's bounds rounded, stretched to reach the value (as for the ratings). A bound is None only
    where the side is fitted without an interval's method to give one (bt's), which never happens with a value."""
    if low is None or high is None:
        raise ValueError("an interval without bounds")
    return round(float(min(low, value)), 2), round(float(max(high, value)), 2)


def win_matrices(results: pd.DataFrame, *, weighting: str = "paper", side: str = "fit") -> WinMatrices:
    """Predicted P(row beats column) from the fit's ratings (with side "fit", on neutral sides: the Pro
    advantage left out), observed mean score share, and match counts."""
    entries, a, b = _entry_indices(results)
    score_a = results["score_a"].to_numpy(dtype=float)
    score_b = results["score_b"].to_numpy(dtype=float)
    n = len(entries)
    ratings = (bt.fit_ratings(a, b, score_a, score_b, n, weighting=weighting, side=side == "fit").ratings if n
               else np.zeros(0))
    # Unit weights turn the pair statistics into summed shares and match counts.
    shares, pairs = bt.pair_statistics(a, b, bt.soft_outcomes(score_a, score_b), np.ones(len(a)), n)
    counts = pairs.round().astype(int)
    predicted: list[list[float]] = bt.win_probability(ratings).tolist()
    met: list[list[int]] = counts.tolist()
    return {
        "entries": entries,
        "predicted": predicted,
        "observed_share": [
            [float(shares[i, j] / counts[i, j]) if counts[i, j] else None for j in range(n)] for i in range(n)
        ],
        "counts": met,
    }


def _entry_indices(results: pd.DataFrame) -> tuple[list[str], IndexArray, IndexArray]:
    """Entry names in sorted order, and the index arrays of entry_a and entry_b."""
    names = pd.concat([results["entry_a"], results["entry_b"]], ignore_index=True)
    codes, entries = pd.factorize(names, sort=True)
    listed: list[str] = entries.tolist()
    return listed, codes[: len(results)], codes[len(results) :]


def _records(a: IndexArray, b: IndexArray, score_a: FloatArray, score_b: FloatArray, n: int,
             counts: NDArray[np.integer[Any]]) -> tuple[NDArray[np.int_], NDArray[np.int_], NDArray[np.int_]]:
    """Per-entry wins, ties and losses, from each match's overall scores, match m counting counts[m] times."""
    a_won, tied, b_won = (score_a > score_b) * counts, (score_a == score_b) * counts, (score_a < score_b) * counts
    wins = np.bincount(a, weights=a_won, minlength=n) + np.bincount(b, weights=b_won, minlength=n)
    ties = np.bincount(a, weights=tied, minlength=n) + np.bincount(b, weights=tied, minlength=n)
    losses = np.bincount(a, weights=b_won, minlength=n) + np.bincount(b, weights=a_won, minlength=n)
    return wins.astype(int), ties.astype(int), losses.astype(int)
