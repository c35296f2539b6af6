"""Intervals that cover at small n, and the Pro advantage in the model (leaderboard.ratings, leaderboard.bt).

Simulated tournaments with known true ratings: 6 entries drawn N(1000, 150^2) Elo, a handful of matches
between uniform pairs, each judged by 3 runs drawn from the BT probability. A 95% interval should hold the
true rating (centred like the ratings: mean 1000 over the entries rated) about 95% of the time; the plain
bootstrap around the MLE, which `arena rate` used before, holds it far less often at 8 matches.
"""

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit

from leaderboard import bt, elo
from leaderboard.ratings import rate

RUNS = 3


def tournament(rng, n=6, matches=8, spread=150.0, advantage=0.0):
    """True Elo ratings and a results frame: uniform pairs and sides, RUNS runs per match."""
    truth = elo.BASE_RATING + rng.normal(0.0, spread, n)
    a = rng.integers(0, n, matches)
    b = (a + rng.integers(1, n, matches)) % n
    points = rng.binomial(RUNS, expit((truth[a] - truth[b] + advantage) * elo.LOGIT_PER_ELO)).astype(float)
    return truth, pd.DataFrame({"match_id": np.arange(matches), "entry_a": [f"e{i}" for i in a],
                                "entry_b": [f"e{i}" for i in b], "score_a": points, "score_b": RUNS - points})


def plain_bootstrap(frame, replicates, seed):
    """The intervals before the prior counted as data: percentiles of rows resampled and refitted, each
    replicate the MLE where it exists (the weak prior only where not); entries in name order."""
    names = sorted(set(frame.entry_a) | set(frame.entry_b))
    a = frame.entry_a.map(names.index).to_numpy()
    b = frame.entry_b.map(names.index).to_numpy()
    y, w = bt.soft_outcomes(frame.score_a, frame.score_b), np.ones(len(frame))
    rows = np.random.default_rng(seed).integers(0, len(frame), (replicates, len(frame)))
    W = np.stack([bt.pair_statistics(a[r], b[r], y[r], w[r], len(names))[0] for r in rows])
    theta = bt.fit(W, W + np.swapaxes(W, 1, 2), prior=bt.prior_for(W))
    return np.percentile(bt.to_elo(theta, None), [2.5, 97.5], axis=0)


def covered(truth, names, low, high):
    """Hits of the true ratings (in the ratings' gauge) by [low, high], beyond JSON rounding."""
    values = np.array([truth[int(name[1:])] for name in names])
    target = values - values.mean() + elo.BASE_RATING
    return int(np.sum((low - 0.01 <= target) & (target <= high + 0.01)))


def test_intervals_cover_at_8_matches_where_the_plain_bootstrap_does_not():
    rng = np.random.default_rng(2024)
    hits = {"bootstrap": 0, "sandwich": 0, "plain bootstrap": 0}
    total = 0
    for k in range(40):
        truth, frame = tournament(rng)
        names = sorted(set(frame.entry_a) | set(frame.entry_b))
        total += len(names)
        for ci in ("bootstrap", "sandwich"):
            rows = sorted(rate(frame, ci=ci, bootstrap=200, seed=k, weighting="none")["ratings"],
                          key=lambda r: r["entry"])
            low, high = np.array([r["ci_low"] for r in rows]), np.array([r["ci_high"] for r in rows])
            assert np.all(high - low > 50)  # no entry of 8 matches is pinned
            hits[ci] += covered(truth, names, low, high)
        hits["plain bootstrap"] += covered(truth, names, *plain_bootstrap(frame, 200, k))
    coverage = {method: count / total for method, count in hits.items()}
    assert coverage["bootstrap"] >= 0.88 and coverage["sandwich"] >= 0.88, coverage
    assert coverage["plain bootstrap"] < 0.8, coverage  # the check can fail: the old intervals fail it


def test_the_pro_advantage_is_recovered_and_a_balanced_schedule_is_not_thrown_by_it():
    # Sides drawn at random: ignoring the side costs the ratings nothing but the noise of 240 Elo of Pro
    # advantage, which the fit takes out of the outcomes; both fits rank alike.
    truth, frame = tournament(np.random.default_rng(7), n=8, matches=3000, advantage=120.0)
    fitted = rate(frame, bootstrap=200, weighting="none")
    side = fitted["side"]
    assert abs(side["pro_advantage"] - 120) <= 15 and side["ci_low"] <= 120 <= side["ci_high"]
    ignored = rate(frame, bootstrap=200, weighting="none", side="ignore")
    assert [r["entry"] for r in fitted["ratings"]] == [r["entry"] for r in ignored["ratings"]]
    order = [f"e{i}" for i in np.argsort(-truth)]
    assert [r["entry"] for r in fitted["ratings"]] == order


def test_no_advantage_planted_gives_an_interval_around_zero():
    _, frame = tournament(np.random.default_rng(8), n=8, matches=2000)
    for ci in ("bootstrap", "sandwich"):
        side = rate(frame, ci=ci, bootstrap=200, weighting="none")["side"]
        assert side["ci_low"] < 0 < side["ci_high"] and side["ci_high"] - side["ci_low"] < 40


@pytest.mark.parametrize("ci", ["bootstrap", "sandwich"])
def test_one_match_gives_wide_intervals_and_ranks_nobody_first(ci):
    frame = pd.DataFrame({"match_id": ["m1"], "entry_a": ["a"], "entry_b": ["b"], "score_a": [3.0],
                          "score_b": [0.0]})
    for side in ("fit", "ignore"):
        table = rate(frame, ci=ci, side=side)
        rows = {r["entry"]: r for r in table["ratings"]}
        assert rows["a"]["rating"] > rows["b"]["rating"]
        for row in rows.values():
            assert row["ci_high"] - row["ci_low"] > 300 and row["rank_ub"] == 1
            assert row["ci_low"] < row["rating"] < row["ci_high"]
        if side == "fit":
            # One match cannot tell the side from the strengths: the advantage keeps about its prior's width.
            spread = table["side"]["ci_high"] - table["side"]["ci_low"]
            assert 2 * elo.PRIOR_SD < spread < 5 * elo.PRIOR_SD
