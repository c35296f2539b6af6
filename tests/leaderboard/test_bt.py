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
    boot = bootstrap.bootstrap_ratings(a, b, score_a, score_b, n, replicates=50, seed=7).ratings
    boot2 = bootstrap.bootstrap_ratings(a2, b2, sa2, sb2, n, replicates=50, seed=7).ratings
    np.testing.assert_allclose(boot2, boot, atol=1e-9)


def test_with_the_side_fitted_row_order_does_not_matter_and_swapping_every_side_negates_the_advantage():
    n = 9
    _, a, b, score_a, score_b = simulate(n=n, matches=300, seed=5)
    order = np.random.default_rng(6).permutation(len(a))
    fitted = bt.fit_ratings(a, b, score_a, score_b, n, side=True)
    shuffled = bt.fit_ratings(a[order], b[order], score_a[order], score_b[order], n, side=True)
    np.testing.assert_allclose(shuffled.ratings, fitted.ratings, atol=1e-9)
    assert shuffled.pro_advantage == pytest.approx(fitted.pro_advantage, abs=1e-9)
    # Every match replayed with Pro and Con swapped: the same strengths, the opposite advantage.
    swapped = bt.fit_ratings(b, a, score_b, score_a, n, side=True)
    np.testing.assert_allclose(swapped.ratings, fitted.ratings, atol=1e-9)
    assert swapped.pro_advantage == pytest.approx(-fitted.pro_advantage, abs=1e-9)
    boot = bootstrap.bootstrap_ratings(a, b, score_a, score_b, n, replicates=50, seed=7, side=True)
    again = bootstrap.bootstrap_ratings(a[order], b[order], score_a[order], score_b[order], n, replicates=50, seed=7,
                                        side=True)
    np.testing.assert_allclose(again.ratings, boot.ratings, atol=1e-9)
    np.testing.assert_allclose(again.pro_advantage, boot.pro_advantage, atol=1e-9)


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

    for side in (False, True):
        boot = bootstrap.bootstrap_ratings(a, b, score_a, score_b, 7, replicates=20, anchor=(2, 1500.0), side=side)
        np.testing.assert_allclose(boot.ratings[:, 2], 1500.0, atol=1e-9)


def test_rank_ub_counts_entries_whose_lower_bound_clears_this_upper_bound():
    ci_low = np.array([1100.0, 1000.0, 900.0, 850.0, 1060.0])
    ci_high = np.array([1200.0, 1150.0, 1050.0, 990.0, 1080.0])
    np.testing.assert_array_equal(bt.rank_ub(ci_low, ci_high), [1, 1, 3, 4, 2])


# --- bootstrap --------------------------------------------------------------


def test_bootstrap_is_deterministic_and_its_intervals_contain_the_fit():
    n = 10
    _, a, b, score_a, score_b = simulate(n=n, matches=800, seed=11)
    for side in (False, True):
        boot = bootstrap.bootstrap_ratings(a, b, score_a, score_b, n, replicates=300, seed=12, side=side)
        again = bootstrap.bootstrap_ratings(a, b, score_a, score_b, n, replicates=300, seed=12, side=side)
        other = bootstrap.bootstrap_ratings(a, b, score_a, score_b, n, replicates=300, seed=13, side=side)
        assert boot.ratings.shape == (300, n)
        np.testing.assert_array_equal(boot.ratings, again.ratings)
        assert not np.allclose(boot.ratings, other.ratings)
        full = bt.fit_ratings(a, b, score_a, score_b, n, side=side)
        low, high = np.percentile(boot.ratings, [2.5, 97.5], axis=0)
        assert np.all((low < full.ratings) & (full.ratings < high))
        assert np.all(high - low > 1.0)
        if side:
            assert boot.pro_advantage.shape == (300,)
            np.testing.assert_array_equal(boot.pro_advantage, again.pro_advantage)
            low, high = np.percentile(boot.pro_advantage, [2.5, 97.5])
            assert low < full.pro_advantage < high
        else:
            assert boot.pro_advantage is None


def textbook_bootstrap(a, b, score_a, score_b, n, replicates, seed, *, side=False, resample=True):
    """The bootstrap by definition: draw rows with replacement (or keep them all, resample=False) and a prior
    centre from the prior, and fit each replicate under the prior at that centre; logit x per replicate."""
    rng = np.random.default_rng(seed)
    y, w = bt.soft_outcomes(score_a, score_b), bt.match_weights(score_a, score_b, "none")
    rows = rng.integers(0, len(a), (replicates, len(a))) if resample else np.tile(np.arange(len(a)), (replicates, 1))
    centre = rng.normal(0.0, elo.PRIOR_SD * elo.LOGIT_PER_ELO, (replicates, n + side))
    if side:
        S, A = zip(*(bt.side_statistics(a[r], b[r], y[r], w[r], n) for r in rows))
        return bt.fit_side(np.stack(S), np.stack(A), prior=elo.PRIOR_PRECISION, centre=centre)
    W = np.stack([bt.pair_statistics(a[r], b[r], y[r], w[r], n)[0] for r in rows])
    return bt.fit(W, W + np.swapaxes(W, 1, 2), prior=elo.PRIOR_PRECISION, centre=centre)


def test_bootstrap_resamples_matches_not_pair_cells():
    # Two entries, 40 decisive matches, 25 won by entry 0. Resampling matches makes the
    # replicate's win count k ~ Binomial(40, 25/40); resampling per-pair cells would leave
    # the data as they are, so only the prior's redrawn centre would move the replicates.
    m, k = 40, 25
    a, b = np.zeros(m, int), np.ones(m, int)
    score_a = (np.arange(m) < k).astype(float)
    boot = bootstrap.bootstrap_ratings(a, b, score_a, 1 - score_a, 2, replicates=2000, seed=14, weighting="none")
    gap = (boot.ratings[:, 0] - boot.ratings[:, 1]) * elo.LOGIT_PER_ELO
    reference = textbook_bootstrap(a, b, score_a, 1 - score_a, 2, 2000, 15)
    fixed = textbook_bootstrap(a, b, score_a, 1 - score_a, 2, 2000, 15, resample=False)
    assert gap.mean() == pytest.approx((reference[:, 0] - reference[:, 1]).mean(), abs=0.03)
    assert gap.std() == pytest.approx((reference[:, 0] - reference[:, 1]).std(), rel=0.08)
    assert gap.std() > 2 * (fixed[:, 0] - fixed[:, 1]).std()  # the matches' resampling dominates


def test_a_single_match_leaves_both_ratings_wide_open():
    """One 3-0 match: a plain bootstrap resamples the same match every time and gives both entries a
    zero-width interval; with the prior as data, the intervals are as wide as one match leaves them."""
    a, b, score_a, score_b = np.array([0]), np.array([1]), np.array([3.0]), np.array([0.0])
    for side in (False, True):
        boot = bootstrap.bootstrap_ratings(a, b, score_a, score_b, 2, replicates=1000, seed=1, side=side)
        low, high = np.percentile(boot.ratings, [2.5, 97.5], axis=0)
        robust = bt.sandwich_intervals(a, b, score_a, score_b, 2, side=side)
        point = bt.fit_ratings(a, b, score_a, score_b, 2, side=side).ratings
        for lo, hi in ((low, high), (robust.low, robust.high)):
            # Wider than the 176-Elo gap the fit puts between the two, and about the prior's own width.
            assert np.all(hi - lo > 300) and np.all(hi - lo < 4 * elo.PRIOR_SD)
            assert np.all((lo < point) & (point < hi))
        # Entry 0 won: its interval sits higher, yet the two overlap, so neither ranks above the other.
        assert low[0] > low[1] and high[0] > high[1] and low[0] < high[1]
        assert list(bt.rank_ub(low, high)) == [1, 1]


def test_every_replicate_is_finite_even_where_its_resample_has_no_mle():
    # Entry 2 scored only once, so about a third of resamples leave it winless.
    a = np.array([0, 1, 0, 1, 2, 2, 0, 1, 2, 2])
    b = np.array([1, 0, 1, 0, 0, 1, 2, 2, 0, 1])
    score_a = np.array([2, 2, 1, 2, 3, 0, 3, 3, 0, 0], dtype=float)
    full = bt.fit_ratings(a, b, score_a, 3 - score_a, 3)
    assert not full.prior_used
    for side in (False, True):
        boot = bootstrap.bootstrap_ratings(a, b, score_a, 3 - score_a, 3, replicates=200, seed=15, side=side)
        assert np.all(np.isfinite(boot.ratings))
        assert side == (boot.pro_advantage is not None and bool(np.all(np.isfinite(boot.pro_advantage))))


def test_resampling_counts_are_exactly_multinomial():
    # Poisson draws brought to the total M by the fix-up: the whole vector of counts
    # must be Multinomial(M, counts / M), checked over every outcome of a small case.
    counts = np.array([2, 1, 3])
    drawing = bootstrap._poisson_tables(counts)
    draws = bootstrap._multinomial([np.random.default_rng(17)], counts, drawing, [100_000])[np.argsort(drawing[1])].T
    outcomes, observed = np.unique(draws.astype(int), axis=0, return_counts=True)
    assert np.all(outcomes.sum(axis=1) == 6) and len(outcomes) == 28  # every split of 6 into 3 parts
    expected = stats.multinomial.pmf(outcomes, 6, counts / 6) * len(draws)
    assert stats.chisquare(observed, expected).pvalue > 1e-3
    # A larger case, where both fix-ups (adding and removing draws) occur.
    counts = np.array([5, 1, 10, 24])
    drawing = bootstrap._poisson_tables(counts)
    draws = bootstrap._multinomial([np.random.default_rng(18)], counts, drawing, [50_000])[np.argsort(drawing[1])].T
    assert np.all(draws.sum(axis=1) == 40)
    np.testing.assert_allclose(np.cov(draws.T), 40 * (np.diag(counts / 40) - np.outer(counts, counts) / 1600), atol=0.1)


@pytest.mark.parametrize("side", [False, True])
def test_bootstrap_equals_resampling_rows_and_refitting_each_replicate(side):
    n, replicates = 8, 2000
    _, a, b, score_a, score_b = simulate(n=n, matches=300, seed=19)
    boot = bootstrap.bootstrap_ratings(a, b, score_a, score_b, n, replicates=replicates, seed=20, weighting="none",
                                       side=side)
    reference = textbook_bootstrap(a, b, score_a, score_b, n, replicates, 21, side=side)
    ratings = elo.BASE_RATING + elo.ELO_SCALE * reference[:, :n]
    np.testing.assert_allclose(boot.ratings.mean(axis=0), ratings.mean(axis=0), atol=2.0)
    np.testing.assert_allclose(boot.ratings.std(axis=0), ratings.std(axis=0), rtol=0.06)
    if side:
        advantage = elo.ELO_SCALE * reference[:, n]
        assert boot.pro_advantage.mean() == pytest.approx(advantage.mean(), abs=2.0)
        assert boot.pro_advantage.std() == pytest.approx(advantage.std(), rel=0.06)


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


def test_sandwich_covariance_with_the_side_and_the_prior_is_the_per_match_formula():
    n, prior = 6, elo.PRIOR_PRECISION
    _, a, b, score_a, score_b = simulate(n=n, matches=250, seed=22)
    y, w = bt.soft_outcomes(score_a, score_b), bt.match_weights(score_a, score_b)
    x = bt.fit_side(*bt.side_statistics(a, b, y, w, n), prior=prior)
    # A match's design row is (e_a - e_b, 1); the prior is one more observation per coordinate, with
    # information `prior` and a score of variance `prior`.
    D = np.zeros((len(a), n + 1))
    D[np.arange(len(a)), a], D[np.arange(len(a)), b], D[:, n] = 1.0, -1.0, 1.0
    P = 1 / (1 + np.exp(-(D @ x)))
    scores = (w * (y - P))[:, None] * D
    H = (D * (w * P * (1 - P))[:, None]).T @ D + prior * np.eye(n + 1)
    # The inverse within the mean-zero strengths: E maps (t_1..t_{n-1}, h) to (t, h) with sum t = 0.
    E = np.zeros((n + 1, n))
    E[: n - 1, : n - 1], E[n - 1, : n - 1], E[n, n - 1] = np.eye(n - 1), -1.0, 1.0
    H_inv = E @ np.linalg.inv(E.T @ H @ E) @ E.T
    expected = H_inv @ (scores.T @ scores + prior * np.eye(n + 1)) @ H_inv
    np.testing.assert_allclose(bt.sandwich_covariance(x, a, b, y, w, prior=prior, side=True), expected, atol=1e-12)


@pytest.mark.parametrize("side", [False, True])
def test_sandwich_intervals_agree_with_the_bootstrap_and_follow_the_gauge(side):
    n = 10
    _, a, b, score_a, score_b = simulate(n=n, matches=2000, seed=23)
    robust = bt.sandwich_intervals(a, b, score_a, score_b, n, side=side)
    # Centred on the posterior mode, which 2000 matches hold within 10 Elo of the MLE (a 2.5% shrink).
    y, w = bt.soft_outcomes(score_a, score_b), bt.match_weights(score_a, score_b)
    mode = (bt.fit_side(*bt.side_statistics(a, b, y, w, n), prior=elo.PRIOR_PRECISION) if side
            else bt.fit(*bt.pair_statistics(a, b, y, w, n), prior=elo.PRIOR_PRECISION))
    np.testing.assert_allclose((robust.low + robust.high) / 2, bt.to_elo(mode[:n], None), atol=1e-9)
    full = bt.fit_ratings(a, b, score_a, score_b, n, side=side)
    np.testing.assert_allclose((robust.low + robust.high) / 2, full.ratings, atol=10.0)
    boot = bootstrap.bootstrap_ratings(a, b, score_a, score_b, n, replicates=2000, seed=24, side=side)
    low, high = np.percentile(boot.ratings, [2.5, 97.5], axis=0)
    np.testing.assert_allclose(robust.high - robust.low, high - low, rtol=0.1)
    if side:
        assert (robust.side_low + robust.side_high) / 2 == pytest.approx(elo.ELO_SCALE * mode[n])
        assert elo.ELO_SCALE * mode[n] == pytest.approx(full.pro_advantage, abs=1.0)
        low, high = np.percentile(boot.pro_advantage, [2.5, 97.5])
        assert robust.side_high - robust.side_low == pytest.approx(high - low, rel=0.1)
    else:
        assert robust.side_low is robust.side_high is None

    anchored = bt.sandwich_intervals(a, b, score_a, score_b, n, anchor=(4, 1500.0), side=side)
    assert anchored.low[4] == anchored.high[4] == pytest.approx(1500.0)
    boot = bootstrap.bootstrap_ratings(a, b, score_a, score_b, n, replicates=2000, seed=24, anchor=(4, 1500.0),
                                       side=side)
    low, high = np.percentile(boot.ratings, [2.5, 97.5], axis=0)
    others = np.arange(n) != 4
    np.testing.assert_allclose((anchored.high - anchored.low)[others], (high - low)[others], rtol=0.1)
    assert np.all(bt.sandwich_intervals(a, b, score_a, score_b, n, level=0.99, side=side).high > robust.high)


def test_sandwich_intervals_stay_finite_without_an_mle():
    n = 5
    _, a, b, score_a, score_b = simulate(n=n, matches=200, seed=25)
    score_a = np.where(a == 4, 0.0, np.where(b == 4, 3.0, score_a))  # entry 4 never scores
    score_b = np.where(b == 4, 0.0, np.where(a == 4, 3.0, score_b))
    assert bt.fit_ratings(a, b, score_a, score_b, n).prior_used
    for side in (False, True):
        robust = bt.sandwich_intervals(a, b, score_a, score_b, n, side=side)
        assert np.all(np.isfinite(robust.low) & np.isfinite(robust.high) & (robust.low < robust.high))
        assert np.argmin(robust.high) == 4


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
    assert list(table) == ["ratings", "separability", "side", "meta"]
    assert table["meta"] == {"matches": 120, "ci": "bootstrap", "bootstrap": 200, "weighting": "paper", "seed": 3,
                             "side": "fit", "prior": False}
    side = table["side"]
    assert set(side) == {"pro_advantage", "ci_low", "ci_high"}
    assert side["ci_low"] < side["pro_advantage"] < side["ci_high"]
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
    assert table["side"]["ci_low"] == table["side"]["pro_advantage"] == table["side"]["ci_high"]
    assert {r["entry"]: r["rating"] for r in table["ratings"]}["entry-3"] == 1200.0
    with pytest.raises(ValueError, match="nobody"):
        rate(results, bootstrap=0, anchor=("nobody", 1000.0))


def test_rate_with_sandwich_intervals():
    results = results_frame()
    table = rate(results, ci="sandwich", bootstrap=500, seed=3, side="ignore")
    assert table["meta"] == {"matches": 120, "ci": "sandwich", "bootstrap": 0, "weighting": "paper", "seed": 3,
                             "side": "ignore", "prior": False}
    assert table["side"] is None
    rows = table["ratings"]
    assert all(row["ci_low"] < row["rating"] < row["ci_high"] for row in rows)
    ranks = bt.rank_ub(np.array([r["ci_low"] for r in rows]), np.array([r["ci_high"] for r in rows]))
    assert [r["rank_ub"] for r in rows] == ranks.tolist()
    with pytest.raises(ValueError, match="unknown ci"):
        rate(results, ci="normal")
    with pytest.raises(ValueError, match="unknown side"):
        rate(results, side="both")


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
    assert rate(empty)["ratings"] == [] and rate(empty)["side"] is None
    assert win_matrices(empty) == {"entries": [], "predicted": [], "observed_share": [], "counts": []}


@pytest.mark.parametrize("side", [False, True])
def test_fit_of_pooled_matches_with_counts_equals_the_fit_of_every_row(side):
    _, a, b, score_a, score_b = simulate(n=9, matches=700, seed=22)
    rows = bt.fit_ratings(a, b, score_a, score_b, 9, side=side)
    *kinds, counts = bootstrap.match_kinds(a, b, score_a, score_b, 9, keep_sides=True)
    assert len(counts) < len(a)
    pooled = bt.fit_ratings(*kinds, 9, side=side, counts=counts)
    np.testing.assert_allclose(pooled.ratings, rows.ratings, rtol=0, atol=1e-9)
    assert pooled.prior_used == rows.prior_used
    if side:
        assert pooled.pro_advantage == pytest.approx(rows.pro_advantage, abs=1e-9)
