"""Tests of the weighted Bradley–Terry rating math (leaderboard.bt, leaderboard.bootstrap, leaderboard.ratings)."""

import json

import choix
import numpy as np
import pandas as pd
import pytest
from scipy import optimize, stats

from leaderboard import bootstrap, bt, elo
from leaderboard.ratings import PROVISIONAL_MATCHES, rate, win_matrices


def simulate(n=10, matches=400, runs=3, spread=1.5, seed=0):
    """A random tournament: planted logit strengths and judge points out of `runs`."""
    rng = np.random.default_rng(seed)
    theta = rng.normal(0.0, spread, n)
    a = rng.integers(0, n, matches)
    b = (a + rng.integers(1, n, matches)) % n
    p = 1 / (1 + np.exp(theta[b] - theta[a]))
    # Each judge run gives 1 to the winner, or 0.5 each for a tie (10% of runs).
    tie = rng.random((matches, runs)) < 0.1
    points = np.where(tie, 0.5, rng.random((matches, runs)) < p[:, None]).sum(axis=1)
    return theta, a, b, points, runs - points


def stats_of(a, b, score_a, score_b, n, weighting="paper"):
    y = bt.soft_outcomes(score_a, score_b)
    w = bt.match_weights(score_a, score_b, weighting)
    return bt.pair_statistics(a, b, y, w, n)


def centred(x):
    return x - np.mean(x)


# --- building blocks --------------------------------------------------------


def test_weights_and_soft_outcomes():
    np.testing.assert_allclose(bt.match_weights([3, 1.5, 0], [0, 1.5, 2]), 1 / (1 + np.exp([-3, 0, -2])))
    np.testing.assert_array_equal(bt.match_weights([3, 1], [0, 1], weighting="none"), [1.0, 1.0])
    np.testing.assert_allclose(bt.soft_outcomes([3, 2, 1.5, 0, 0], [0, 1, 1.5, 1, 0]), [1, 2 / 3, 0.5, 0, 0.5])
    with pytest.raises(ValueError, match="weighting"):
        bt.match_weights([1], [0], weighting="elo")


def test_pair_statistics_splits_each_match_between_both_directions():
    W, N = bt.pair_statistics([0, 1, 0], [1, 0, 2], [0.75, 1.0, 0.5], [2.0, 1.0, 1.0], 3)
    np.testing.assert_allclose(W, [[0.0, 1.5, 0.5], [1.5, 0.0, 0.0], [0.5, 0.0, 0.0]])
    np.testing.assert_allclose(N, [[0.0, 3.0, 1.0], [3.0, 0.0, 0.0], [1.0, 0.0, 0.0]])


def test_mle_exists_is_strong_connectivity_of_who_scored_against_whom():
    cycle = np.array([[0, 1, 0], [0, 0, 1], [1, 0, 0]], dtype=float)
    assert bt.mle_exists(cycle)
    chain = np.array([[0, 1, 0], [1, 0, 1], [0, 0, 0]], dtype=float)  # 2 never scored
    assert not bt.mle_exists(chain)
    two_groups = np.kron(np.eye(2), np.ones((2, 2)))  # {0, 1} never met {2, 3}
    assert not bt.mle_exists(two_groups)


# --- the fit is the MLE -----------------------------------------------------


def test_fit_equals_scipy_minimize_of_per_match_log_likelihood():
    n = 8
    _, a, b, score_a, score_b = simulate(n=n, matches=300, seed=1)
    y = bt.soft_outcomes(score_a, score_b)
    w = bt.match_weights(score_a, score_b)

    def nll(free):  # per match, strength of entry 0 pinned at 0
        theta = np.append(0.0, free)
        d = theta[a] - theta[b]
        value = np.sum(w * (y * np.logaddexp(0, -d) + (1 - y) * np.logaddexp(0, d)))
        slope = w * (1 / (1 + np.exp(-d)) - y)
        grad = np.bincount(a, slope, minlength=n) - np.bincount(b, slope, minlength=n)
        return value, grad[1:]

    reference = optimize.minimize(nll, np.zeros(n - 1), jac=True, method="BFGS", options={"gtol": 1e-9})
    assert np.max(np.abs(reference.jac)) < 1e-7  # converged (BFGS may still report precision loss)
    W, N = bt.pair_statistics(a, b, y, w, n)
    theta = bt.fit(W, N)
    np.testing.assert_allclose(theta, centred(np.append(0.0, reference.x)), atol=1e-6)
    assert abs(theta.mean()) < 1e-12


@pytest.mark.parametrize("weighting", ["none", "paper"])
def test_fit_equals_choix_on_weighted_win_matrix(weighting):
    _, a, b, score_a, score_b = simulate(n=10, matches=500, seed=2)
    W, N = stats_of(a, b, score_a, score_b, 10, weighting)
    reference = choix.ilsr_pairwise_dense(W, tol=1e-13, max_iter=10_000)
    np.testing.assert_allclose(bt.fit(W, N), centred(reference), atol=1e-6)


def test_unweighted_equals_plain_bradley_terry_with_ties_as_halves():
    rng = np.random.default_rng(3)
    n, m = 6, 200
    a = rng.integers(0, n, m)
    b = (a + rng.integers(1, n, m)) % n
    outcome = rng.choice([1.0, 0.5, 0.0], size=m, p=[0.5, 0.2, 0.3])  # 0.5 = tie
    # Plain BT on counts, a tie as half a win each way: double every game so
    # that halves become whole comparisons (the MLE is unchanged by scaling).
    games = [(i, j) for i, j, o in zip(a, b, outcome) for _ in range(int(2 * o))]
    games += [(j, i) for i, j, o in zip(a, b, outcome) for _ in range(int(2 * (1 - o)))]
    reference = choix.ilsr_pairwise(n, games, tol=1e-13, max_iter=10_000)
    result = bt.fit_ratings(a, b, outcome, 1 - outcome, n, weighting="none")
    np.testing.assert_allclose(result.ratings, elo.BASE_RATING + elo.ELO_SCALE * centred(reference), atol=1e-4)
    assert not result.prior_used


def test_fit_solves_the_score_equations_exactly_when_the_mle_exists():
    _, a, b, score_a, score_b = simulate(n=12, matches=600, seed=4)
    W, N = stats_of(a, b, score_a, score_b, 12)
    assert bt.mle_exists(W)
    theta = bt.fit(W, N)
    P = bt.win_probability(elo.BASE_RATING + elo.ELO_SCALE * theta)
    np.testing.assert_allclose((N * P).sum(axis=1), W.sum(axis=1), atol=1e-9)  # no penalty pulls


def test_elo_scale_matches_the_paper_formula():
    ratings = np.array([1200.0, 1000.0, 800.0])
    P = bt.win_probability(ratings)
    np.testing.assert_allclose(P, 1 / (1 + 10 ** ((ratings[None, :] - ratings[:, None]) / 400)))
    np.testing.assert_allclose(P + P.T, 1.0)


# --- invariances and recovery -----------------------------------------------


def test_invariant_to_row_order_and_to_swapping_sides():
    n = 9
    _, a, b, score_a, score_b = simulate(n=n, matches=300, seed=5)
    rng = np.random.default_rng(6)
    order = rng.permutation(len(a))
    swap = rng.random(len(a)) < 0.5
    a2, b2 = np.where(swap, b, a)[order], np.where(swap, a, b)[order]
    sa2, sb2 = np.where(swap, score_b, score_a)[order], np.where(swap, score_a, score_b)[order]

    np.testing.assert_allclose(
        bt.fit_ratings(a2, b2, sa2, sb2, n).ratings, bt.fit_ratings(a, b, score_a, score_b, n).ratings, atol=1e-9
    )
    boot, _ = bootstrap.bootstrap_ratings(a, b, score_a, score_b, n, replicates=50, seed=7)
    boot2, _ = bootstrap.bootstrap_ratings(a2, b2, sa2, sb2, n, replicates=50, seed=7)
    np.testing.assert_allclose(boot2, boot, atol=1e-9)


def test_planted_strengths_are_recovered():
    theta, a, b, score_a, score_b = simulate(n=16, matches=1500, seed=8)
    result = bt.fit_ratings(a, b, score_a, score_b, 16)
    assert not result.prior_used
    assert stats.spearmanr(result.ratings, theta).statistic >= 0.9
    assert abs(result.ratings.mean() - elo.BASE_RATING) < 1e-9


# --- when the MLE does not exist --------------------------------------------


def test_winless_entry_gets_a_finite_rating_and_the_prior_is_flagged():
    n = 5
    _, a, b, score_a, score_b = simulate(n=n, matches=200, seed=9)
    # Entry 4 loses everything: it never scores, so no MLE exists.
    score_a = np.where(a == 4, 0.0, np.where(b == 4, 3.0, score_a))
    score_b = np.where(b == 4, 0.0, np.where(a == 4, 3.0, score_b))
    W, N = stats_of(a, b, score_a, score_b, n)
    assert not bt.mle_exists(W)
    with pytest.raises(ValueError, match="MLE does not exist"):
        bt.fit(W, N)

    result = bt.fit_ratings(a, b, score_a, score_b, n)
    assert result.prior_used
    assert np.all(np.isfinite(result.ratings))
    assert np.argmin(result.ratings) == 4
    assert abs(result.ratings.mean() - elo.BASE_RATING) < 1e-9


def test_unbeaten_entry_and_disconnected_groups_use_the_prior():
    # Entry 0 never loses.
    result = bt.fit_ratings([0, 0, 1, 2], [1, 2, 2, 1], [3, 3, 2, 1], [0, 0, 1, 2], 3)
    assert result.prior_used and np.argmax(result.ratings) == 0
    # {0, 1} and {2, 3} never met: only the prior relates the two groups.
    result = bt.fit_ratings([0, 1, 2, 3], [1, 0, 3, 2], [2, 2, 2, 2], [1, 1, 1, 1], 4)
    assert result.prior_used
    assert np.all(np.isfinite(result.ratings))


def test_data_with_an_mle_do_not_use_the_prior():
    result = bt.fit_ratings([0, 1, 2], [1, 2, 0], [2, 2, 2], [1, 1, 1], 3)  # a cycle
    assert not result.prior_used
    np.testing.assert_allclose(result.ratings, elo.BASE_RATING)  # symmetric cycle: all equal


# --- anchor and rank --------------------------------------------------------


def test_anchor_fixes_that_entry_and_shifts_the_rest():
    _, a, b, score_a, score_b = simulate(n=7, matches=250, seed=10)
    free = bt.fit_ratings(a, b, score_a, score_b, 7).ratings
    anchored = bt.fit_ratings(a, b, score_a, score_b, 7, anchor=(2, 1500.0)).ratings
    assert anchored[2] == pytest.approx(1500.0, abs=1e-9)
    np.testing.assert_allclose(anchored - anchored[2], free - free[2], atol=1e-9)

    boot, _ = bootstrap.bootstrap_ratings(a, b, score_a, score_b, 7, replicates=20, anchor=(2, 1500.0))
    np.testing.assert_allclose(boot[:, 2], 1500.0, atol=1e-9)


def test_rank_ub_counts_entries_whose_lower_bound_clears_this_upper_bound():
    ci_low = np.array([1100.0, 1000.0, 900.0, 850.0, 1060.0])
    ci_high = np.array([1200.0, 1150.0, 1050.0, 990.0, 1080.0])
    np.testing.assert_array_equal(bt.rank_ub(ci_low, ci_high), [1, 1, 3, 4, 2])


# --- bootstrap --------------------------------------------------------------


def test_bootstrap_is_deterministic_and_its_intervals_contain_the_fit():
    n = 10
    _, a, b, score_a, score_b = simulate(n=n, matches=800, seed=11)
    boot, prior_used = bootstrap.bootstrap_ratings(a, b, score_a, score_b, n, replicates=300, seed=12)
    again, _ = bootstrap.bootstrap_ratings(a, b, score_a, score_b, n, replicates=300, seed=12)
    other, _ = bootstrap.bootstrap_ratings(a, b, score_a, score_b, n, replicates=300, seed=13)
    assert boot.shape == (300, n)
    np.testing.assert_array_equal(boot, again)
    assert not np.allclose(boot, other)
    assert not prior_used

    full = bt.fit_ratings(a, b, score_a, score_b, n).ratings
    low, high = np.percentile(boot, [2.5, 97.5], axis=0)
    assert np.all((low < full) & (full < high))
    assert np.all(high - low > 1.0)


def test_bootstrap_resamples_matches_not_pair_cells():
    # Two entries, 40 decisive matches, 25 won by entry 0. Resampling matches
    # makes the replicate's win count k ~ Binomial(40, 25/40), and the 2-entry
    # MLE is P = k / 40; resampling per-pair cells would never vary at all.
    m, k = 40, 25
    score_a = (np.arange(m) < k).astype(float)
    boot, _ = bootstrap.bootstrap_ratings(np.zeros(m, int), np.ones(m, int), score_a, 1 - score_a, 2,
                                          replicates=2000, seed=14, weighting="none")
    wins = m / (1 + np.exp(-(boot[:, 0] - boot[:, 1]) / elo.ELO_SCALE))
    valid = (wins > 0.5) & (wins < m - 0.5)  # k = 0 or 40 would need the prior
    # Replicates are fitted to 1e-6 logits, i.e. to about 1e-5 in wins here.
    np.testing.assert_allclose(wins[valid], np.round(wins[valid]), atol=1e-4)
    assert wins.mean() == pytest.approx(k, abs=0.4)
    assert wins.var() == pytest.approx(m * (k / m) * (1 - k / m), rel=0.15)


def test_each_replicate_uses_the_prior_only_if_its_own_data_lack_an_mle():
    # Entry 2 scored only once, so about a third of resamples leave it winless.
    a = np.array([0, 1, 0, 1, 2, 2, 0, 1, 2, 2])
    b = np.array([1, 0, 1, 0, 0, 1, 2, 2, 0, 1])
    score_a = np.array([2, 2, 1, 2, 3, 0, 3, 3, 0, 0], dtype=float)
    full = bt.fit_ratings(a, b, score_a, 3 - score_a, 3)
    assert not full.prior_used
    boot, prior_used = bootstrap.bootstrap_ratings(a, b, score_a, 3 - score_a, 3, replicates=200, seed=15)
    assert prior_used
    assert np.all(np.isfinite(boot))


def test_resampling_counts_are_exactly_multinomial():
    # Poisson draws brought to the total M by the fix-up: the whole vector of counts
    # must be Multinomial(M, counts / M), checked over every outcome of a small case.
    counts = np.array([2, 1, 3])
    draws = bootstrap._multinomial(np.random.default_rng(17), counts, bootstrap._poisson_tables(counts), 100_000)
    outcomes, observed = np.unique(draws.T.astype(int), axis=0, return_counts=True)
    assert np.all(outcomes.sum(axis=1) == 6) and len(outcomes) == 28  # every split of 6 into 3 parts
    expected = stats.multinomial.pmf(outcomes, 6, counts / 6) * draws.shape[1]
    assert stats.chisquare(observed, expected).pvalue > 1e-3
    # A larger case, where both fix-ups (adding and removing draws) occur.
    counts = np.array([5, 1, 10, 24])
    draws = bootstrap._multinomial(np.random.default_rng(18), counts, bootstrap._poisson_tables(counts), 50_000)
    assert np.all(draws.sum(axis=0) == 40)
    np.testing.assert_allclose(np.cov(draws), 40 * (np.diag(counts / 40) - np.outer(counts, counts) / 1600), atol=0.1)


def test_bootstrap_equals_resampling_rows_and_refitting_each_replicate():
    n, replicates = 8, 2000
    _, a, b, score_a, score_b = simulate(n=n, matches=300, seed=19)
    boot, _ = bootstrap.bootstrap_ratings(a, b, score_a, score_b, n, replicates=replicates, seed=20)
    # The textbook bootstrap: draw rows with replacement, fit each resample.
    rng = np.random.default_rng(21)
    y, w = bt.soft_outcomes(score_a, score_b), bt.match_weights(score_a, score_b)
    W = np.stack([bt.pair_statistics(a[rows], b[rows], y[rows], w[rows], n)[0]
                  for rows in rng.integers(0, len(a), (replicates, len(a)))])
    assert bt.mle_exists(W.sum(axis=0)) and all(bt.mle_exists(x) for x in W)
    reference = elo.BASE_RATING + elo.ELO_SCALE * bt.fit(W, W + np.swapaxes(W, 1, 2))
    np.testing.assert_allclose(boot.mean(axis=0), reference.mean(axis=0), atol=2.0)
    np.testing.assert_allclose(boot.std(axis=0), reference.std(axis=0), rtol=0.06)


# --- sandwich intervals -----------------------------------------------------


def test_sandwich_covariance_is_the_per_match_formula():
    n = 6
    _, a, b, score_a, score_b = simulate(n=n, matches=250, seed=22)
    y, w = bt.soft_outcomes(score_a, score_b), bt.match_weights(score_a, score_b)
    theta = bt.fit(*bt.pair_statistics(a, b, y, w, n))
    # Each match's score vector and Fisher information, summed one match at a time.
    D = np.zeros((len(a), n))
    D[np.arange(len(a)), a], D[np.arange(len(a)), b] = 1.0, -1.0
    P = 1 / (1 + np.exp(-(D @ theta)))
    scores = (w * (y - P))[:, None] * D
    H = (D * (w * P * (1 - P))[:, None]).T @ D
    H_inv = np.linalg.pinv(H)  # the pseudo-inverse keeps to the mean-zero subspace
    np.testing.assert_allclose(bt.sandwich_covariance(theta, a, b, y, w), H_inv @ scores.T @ scores @ H_inv,
                               atol=1e-12)


def test_sandwich_intervals_agree_with_the_bootstrap_and_follow_the_gauge():
    n = 10
    _, a, b, score_a, score_b = simulate(n=n, matches=2000, seed=23)
    robust = bt.sandwich_intervals(a, b, score_a, score_b, n)
    assert not robust.prior_used
    np.testing.assert_allclose(robust.ratings, bt.fit_ratings(a, b, score_a, score_b, n).ratings)
    np.testing.assert_allclose(robust.high - robust.ratings, robust.ratings - robust.low)
    boot, _ = bootstrap.bootstrap_ratings(a, b, score_a, score_b, n, replicates=2000, seed=24)
    low, high = np.percentile(boot, [2.5, 97.5], axis=0)
    np.testing.assert_allclose(robust.high - robust.low, high - low, rtol=0.1)

    anchored = bt.sandwich_intervals(a, b, score_a, score_b, n, anchor=(4, 1500.0))
    assert anchored.low[4] == anchored.high[4] == pytest.approx(1500.0)
    boot, _ = bootstrap.bootstrap_ratings(a, b, score_a, score_b, n, replicates=2000, seed=24, anchor=(4, 1500.0))
    low, high = np.percentile(boot, [2.5, 97.5], axis=0)
    others = np.arange(n) != 4
    np.testing.assert_allclose((anchored.high - anchored.low)[others], (high - low)[others], rtol=0.1)
    assert np.all(bt.sandwich_intervals(a, b, score_a, score_b, n, level=0.99).high > robust.high)


def test_sandwich_intervals_flag_the_prior():
    n = 5
    _, a, b, score_a, score_b = simulate(n=n, matches=200, seed=25)
    score_a = np.where(a == 4, 0.0, np.where(b == 4, 3.0, score_a))  # entry 4 never scores
    score_b = np.where(b == 4, 0.0, np.where(a == 4, 3.0, score_b))
    robust = bt.sandwich_intervals(a, b, score_a, score_b, n)
    assert robust.prior_used
    assert np.all(np.isfinite(robust.low) & np.isfinite(robust.high) & (robust.low <= robust.high))
    np.testing.assert_allclose(robust.ratings, bt.fit_ratings(a, b, score_a, score_b, n).ratings)


# --- leaderboard tables -----------------------------------------------------


def results_frame(seed=16, n=6, matches=120):
    _, a, b, score_a, score_b = simulate(n=n, matches=matches, seed=seed)
    names = np.array([f"entry-{i}" for i in range(n)])
    return pd.DataFrame({
        "match_id": np.arange(len(a)), "entry_a": names[a], "entry_b": names[b],
        "score_a": score_a, "score_b": score_b, "motion": "ignored",
    })


def test_rate_returns_the_json_table_sorted_by_rating():
    results = results_frame()
    table = rate(results, bootstrap=200, seed=3)
    assert json.loads(json.dumps(table)) == table
    assert table["meta"] == {"matches": 120, "ci": "bootstrap", "bootstrap": 200, "weighting": "paper", "seed": 3,
                             "prior": False}
    rows = table["ratings"]
    assert [r["rating"] for r in rows] == sorted((r["rating"] for r in rows), reverse=True)
    assert rows[0]["rank_ub"] == 1
    for row in rows:
        assert set(row) == {"entry", "rating", "ci_low", "ci_high", "matches", "wins", "ties", "losses",
                            "rank_ub", "provisional"}
        assert row["ci_low"] <= row["rating"] <= row["ci_high"]
        assert row["rating"] == round(row["rating"], 2)
        assert row["wins"] + row["ties"] + row["losses"] == row["matches"]
        assert row["provisional"] == (row["matches"] < PROVISIONAL_MATCHES)
        name = row["entry"]
        played = results[(results.entry_a == name) | (results.entry_b == name)]
        won = ((played.entry_a == name) & (played.score_a > played.score_b)) | (
            (played.entry_b == name) & (played.score_b > played.score_a))
        assert row["matches"] == len(played) and row["wins"] == won.sum()
        assert row["ties"] == (played.score_a == played.score_b).sum()


def test_rate_without_bootstrap_and_with_an_anchor():
    results = results_frame()
    table = rate(results, bootstrap=0, anchor=("entry-3", 1200.0))
    for row in table["ratings"]:
        assert row["ci_low"] == row["rating"] == row["ci_high"]
    assert {r["entry"]: r["rating"] for r in table["ratings"]}["entry-3"] == 1200.0
    with pytest.raises(ValueError, match="nobody"):
        rate(results, bootstrap=0, anchor=("nobody", 1000.0))


def test_rate_with_sandwich_intervals():
    results = results_frame()
    table = rate(results, ci="sandwich", bootstrap=500, seed=3)
    assert table["meta"] == {"matches": 120, "ci": "sandwich", "bootstrap": 0, "weighting": "paper", "seed": 3,
                             "prior": False}
    rows = table["ratings"]
    assert all(row["ci_low"] < row["rating"] < row["ci_high"] for row in rows)
    ranks = bt.rank_ub(np.array([r["ci_low"] for r in rows]), np.array([r["ci_high"] for r in rows]))
    assert [r["rank_ub"] for r in rows] == ranks.tolist()
    with pytest.raises(ValueError, match="unknown ci"):
        rate(results, ci="normal")


def test_rate_marks_few_matches_provisional():
    results = pd.DataFrame({"match_id": [1, 2, 3], "entry_a": ["x", "y", "z"], "entry_b": ["y", "z", "x"],
                            "score_a": [2.0, 1.5, 0.0], "score_b": [1.0, 1.5, 3.0]})
    rows = {r["entry"]: r for r in rate(results, bootstrap=50)["ratings"]}
    assert rows["x"]["wins"] == 2 and rows["y"]["ties"] == 1 and rows["z"]["losses"] == 1
    assert all(r["provisional"] for r in rows.values())


def test_win_matrices():
    results = results_frame(n=4, matches=30)
    results = pd.concat([results, pd.DataFrame({
        "match_id": [99], "entry_a": ["newcomer"], "entry_b": ["entry-0"], "score_a": [1.0], "score_b": [2.0]})])
    matrices = win_matrices(results)
    assert json.loads(json.dumps(matrices)) == matrices
    entries, counts = matrices["entries"], np.array(matrices["counts"])
    assert entries == sorted(entries) and "newcomer" in entries
    np.testing.assert_array_equal(counts, counts.T)
    assert counts.sum() == 2 * len(results)
    predicted = np.array(matrices["predicted"])
    np.testing.assert_allclose(predicted + predicted.T, 1.0)
    share = matrices["observed_share"]
    new, zero, one = entries.index("newcomer"), entries.index("entry-0"), entries.index("entry-1")
    assert share[new][one] is None and share[new][new] is None
    assert share[new][zero] == pytest.approx(1 / 3)
    for i in range(len(entries)):
        for j in range(len(entries)):
            if counts[i, j]:
                assert share[i][j] + share[j][i] == pytest.approx(1.0)


def test_no_results_give_empty_tables():
    empty = pd.DataFrame([], columns=["match_id", "entry_a", "entry_b", "score_a", "score_b"])
    assert rate(empty)["ratings"] == []
    assert win_matrices(empty) == {"entries": [], "predicted": [], "observed_share": [], "counts": []}
