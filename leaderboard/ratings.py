"""Leaderboard tables from match results: weighted BT ratings, bootstrap or sandwich intervals, records.

Input is a DataFrame with columns match_id, entry_a, entry_b (the Pro side), score_a, score_b;
output is plain JSON-ready Python (dicts, lists, floats, ints, bools, None).
"""

from __future__ import annotations

from typing import cast

import numpy as np
import pandas as pd

from leaderboard import bt, control, elo
from leaderboard.bootstrap import bootstrap_ratings, match_kinds
from leaderboard.results import FEATURE_COLUMNS

PROVISIONAL_MATCHES = 15


def rate(results: pd.DataFrame, *, ci="bootstrap", bootstrap=1000, seed=0, weighting="paper",
         anchor: tuple[str, float] | None = None, side="fit", control=()) -> dict:
    """Ratings table: full-data BT fit, 95% intervals, Rank (UB), records; with side="fit" the Pro advantage
    is fitted with the ratings and reported with its interval ("ignore": the side-blind model, side None).
    control: style features (leaderboard.results.FEATURE_COLUMNS) fitted with them (leaderboard.control), each
    coefficient reported with its interval under "control", the ratings then net of them.

    ci="bootstrap" gives percentile intervals over `bootstrap` resamples of the
    matches (none when 0); ci="sandwich" the robust normal intervals instead.
    Both take the weak prior as data (leaderboard.bt), so an entry few matches
    pin gets a wide interval, never a zero-width one.
    """
    if ci not in ("bootstrap", "sandwich"):
        raise ValueError(f"unknown ci {ci!r}: expected 'bootstrap' or 'sandwich'")
    if side not in ("fit", "ignore"):
        raise ValueError(f"unknown side {side!r}: expected 'fit' or 'ignore'")
    unknown = [name for name in control if name not in FEATURE_COLUMNS]
    if unknown:
        raise ValueError(f"unknown control {unknown[0]!r}: expected one of {', '.join(FEATURE_COLUMNS)}")
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
    if control:
        meta["control"] = list(control)
    if n == 0:  # no matches yet: an empty table, not an error
        return {"ratings": [], "side": None, **({"control": None} if control else {}), "meta": {**meta, "prior": False}}

    fitted = side == "fit"
    options = {"weighting": weighting, "anchor": anchor, "side": fitted}
    # Identical matches pooled, with their counts: the fit, the bootstrap and the records then pass over each
    # kind of match once, not over every row (a million rows are some 60,000 kinds among 100 entries).
    kinds = match_kinds(a, b, score_a, score_b, n, keep_sides=True)
    pooled, counts = kinds[:4], kinds[4]
    if control:
        features = _features(results, control)
        full, (ci_low, ci_high, side_low, side_high), coefficients = _controlled(
            a, b, score_a, score_b, features, n, ci=ci, bootstrap=bootstrap, seed=seed, **options)
    else:
        full, (ci_low, ci_high, side_low, side_high) = _uncontrolled(pooled, counts, a, b, score_a, score_b, n, ci=ci,
                                                                     bootstrap=bootstrap, seed=seed, **options)
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
    out = {"ratings": rows, "side": _side(full.pro_advantage, side_low, side_high)}
    if control:
        out["control"] = {name: _interval("coef", *values) for name, values in zip(control, coefficients)}
    return {**out, "meta": {**meta, "prior": full.prior_used}}


def _uncontrolled(pooled: tuple[bt.IndexArray, bt.IndexArray, bt.FloatArray, bt.FloatArray], counts, a, b, score_a,
                  score_b, n, *, ci, bootstrap, seed, **options):
    """The BT fit (leaderboard.bt) of the pooled matches and the bounds (ratings low, high; side low, high) of
    its intervals."""
    fitted = options["side"]
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
        side_low, side_high = (np.percentile(cast(bt.FloatArray, replicates.pro_advantage), [2.5, 97.5]) if fitted
                               else (None, None))
    else:
        ci_low = ci_high = full.ratings
        side_low = side_high = full.pro_advantage
    return full, (ci_low, ci_high, side_low, side_high)


def _features(results: pd.DataFrame, control) -> np.ndarray:
    """Each controlled feature's contrast x = (pro - con) / (pro + con) per row (matches x features); 0 on a
    forfeit, which no judge decided, so that no style can have swayed it."""
    missing = [c for name in control for c in FEATURE_COLUMNS[name] if c not in results.columns]
    if missing:
        raise ValueError(f"no {', '.join(missing)} column{'s' * (len(missing) > 1)} for the controlled features")
    X = np.column_stack([control_contrast(results, name) for name in control])
    if "forfeit" in results.columns:
        X[(results["forfeit"].fillna("") != "").to_numpy()] = 0.0
    return X


def control_contrast(results: pd.DataFrame, name: str) -> np.ndarray:
    """Feature `name`'s contrast (leaderboard.control.contrast) of each results row."""
    pro, con = FEATURE_COLUMNS[name]
    return control.contrast(results[pro].to_numpy(dtype=float), results[con].to_numpy(dtype=float))


def _controlled(a, b, score_a, score_b, X, n, *, ci, bootstrap, seed, weighting, anchor, side):
    """The controlled fit (leaderboard.control), the bounds of its intervals as _uncontrolled's, and each
    feature's (coefficient, low, high) in Elo per unit of x.

    The ratings' and the side's intervals are the uncontrolled fit's kind: the replicates' percentiles (or the
    mode under the prior +- z SE), stretched to reach the estimate. A coefficient's is the same spread about the
    fit under the prior, moved onto the estimate: where a feature goes with the entry (verbose models write long
    in every match), the prior's pull on the strengths moves the coefficient with them, which would leave the
    estimate far out of its own interval (lechmazur/debate's length: 391 Elo, percentiles 197 to 1717).
    """
    y, w = bt.soft_outcomes(score_a, score_b), bt.match_weights(score_a, score_b, weighting)
    d = control.design(a, b, y, w, X, n, side=side)
    ridge = bt.prior_for(bt.pair_statistics(a, b, y, w, n)[0])
    x = control.fit(d, ridge=ridge)[0]
    point = _in_gauge(x * elo.ELO_SCALE, n, anchor)
    if ci == "sandwich":
        posterior = control.fit(d, ridge=elo.PRIOR_PRECISION, init=x)[0]
        cov = control.covariance(d, posterior)
        half = control.z_value() * elo.ELO_SCALE * np.sqrt(np.maximum(_gauged(np.diag(cov), cov, n, anchor), 0.0))
        centre = _in_gauge(posterior * elo.ELO_SCALE, n, anchor)
        low, high = centre - half, centre + half
    elif bootstrap > 0:
        replicates, posterior = control.bootstrap(d, replicates=bootstrap, seed=seed, init=x)
        centre = _in_gauge(posterior * elo.ELO_SCALE, n, anchor)
        low, high = np.percentile(_in_gauge(replicates * elo.ELO_SCALE, n, anchor), [2.5, 97.5], axis=0)
    else:
        centre = low = high = point
    beyond = slice(n + side, None)  # the coefficients
    low[beyond] += point[beyond] - centre[beyond]
    high[beyond] += point[beyond] - centre[beyond]
    ratings = point
    full = bt.FitResult(ratings[:n], bool(ridge > 0), float(ratings[n]) if side else None)
    k = n + side
    coefficients = [(float(ratings[k + j]), float(low[k + j]), float(high[k + j])) for j in range(X.shape[1])]
    return full, (low[:n], high[:n], *((float(low[n]), float(high[n])) if side else (None, None))), coefficients


def _in_gauge(x, n, anchor):
    """Parameter rows in Elo (mean-zero strengths first) with the strengths made ratings (bt.to_elo)."""
    x = np.array(x, dtype=float)
    shift = elo.BASE_RATING if anchor is None else anchor[1] - x[..., anchor[0], None]
    x[..., :n] = x[..., :n] + shift
    return x


def _gauged(variance, cov, n, anchor):
    """Variances of the parameters in the ratings' gauge: with an anchor k, of t_i - t_k for the strengths."""
    if anchor is None:
        return variance
    k = anchor[0]
    out = variance.copy()
    out[:n] = variance[:n] + cov[k, k] - 2 * cov[:n, k]
    return out


def _side(advantage, low, high) -> dict | None:
    """The Pro advantage and its interval, in Elo, as JSON (None when the side is not fitted)."""
    if advantage is None:
        return None
    return {"pro_advantage": round(advantage, 2), **_interval(None, advantage, low, high)}


def _interval(key, value, low, high) -> dict:
    """{key: value, ci_low, ci_high} rounded, the interval stretched to reach the value (as for the ratings);
    without a key, just the bounds."""
    low, high = min(low, value), max(high, value)
    return {**({key: round(value, 2)} if key else {}), "ci_low": round(float(low), 2), "ci_high": round(float(high), 2)}


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
