"""The bootstrap's fast path (leaderboard.bootstrap) against straightforward references: each replicate's fit
against a dense Newton fit (leaderboard.bt) of the very same resample and prior centre, its cell sums against
the sigmoid written out, and its alias look-up against Walker's draw it replaces."""

import math

import numpy as np
import pandas as pd
import pytest

from leaderboard import bootstrap, bt, elo


def tournament(n, matches, seed, *, runs=3, chain=False):
    """Judge points out of `runs`, 15% of runs tied, between random pairs of planted strengths; or, with chain,
    without ties between neighbours only, each entry far stronger than the one before it, sides at random."""
    rng = np.random.default_rng(seed)
    if chain:
        theta, tie_rate = np.arange(n) * 6.0, 0.0
        a = rng.integers(0, n - 1, matches)
        b = a + 1
        a, b = np.where(rng.random(matches) < 0.5, (a, b), (b, a))  # either one Pro
    else:
        theta, tie_rate = rng.normal(0.0, 1.5, n), 0.15
        a = rng.integers(0, n, matches)
        b = (a + rng.integers(1, n, matches)) % n
    p = 1 / (1 + np.exp(theta[a] - theta[b]))  # P(b beats a)
    tie = rng.random((matches, runs)) < tie_rate
    points = np.where(tie, 0.5, rng.random((matches, runs)) >= p[:, None]).sum(axis=1)
    return a, b, points, runs - points


def dense_replicates(a, b, score_a, score_b, n, *, replicates, seed, weighting, side):
    """The replicates by the book: the same resamples and prior centres as bootstrap_ratings draws, each fitted
    to convergence by bt's damped Newton on its dense statistics; logit strengths (and h) per replicate."""
    first, second, score_first, score_second, counts = bootstrap.match_kinds(a, b, score_a, score_b, n, keep_sides=side)
    y, w = bt.soft_outcomes(score_first, score_second), bt.match_weights(score_first, score_second, weighting)
    drawing = bootstrap._poisson_tables(counts)
    batch = bootstrap._batch_size(replicates, first * n + second, n)
    firsts = range(0, replicates, batch)
    fitted = []
    for start, seed_sequence in zip(firsts, np.random.SeedSequence(seed).spawn(len(firsts))):
        rng = np.random.default_rng(seed_sequence)
        size = min(batch, replicates - start)
        draws = bootstrap._multinomial([rng], counts, drawing, [size])[np.argsort(drawing[1])].T  # kinds in order
        centre = rng.normal(0.0, 1 / math.sqrt(elo.PRIOR_PRECISION), (size, n + side))
        statistics = bt.side_statistics if side else bt.pair_statistics
        stacked = [np.stack(s) for s in zip(*(statistics(first, second, y, w * count, n) for count in draws))]
        fit = bt.fit_side if side else bt.fit
        fitted.append(fit(*stacked, prior=elo.PRIOR_PRECISION, centre=centre, tol=1e-12))
    return np.concatenate(fitted)


@pytest.mark.parametrize("side", [False, True], ids=["side-blind", "side-fitted"])
@pytest.mark.parametrize("weighting", ["paper", "none"])
@pytest.mark.parametrize("field", ["mixed", "chain"])
def test_each_replicate_is_the_dense_fit_of_its_resample(side, weighting, field):
    # "mixed": 14 entries, a few matches per pair, ties; the chord path fits every replicate. "chain": each entry
    # crushes the next, so strengths span far more than _SPAN logits and every replicate falls back to Newton.
    n, matches = (14, 500) if field == "mixed" else (10, 30_000)
    a, b, score_a, score_b = tournament(n, matches, seed=31, chain=field == "chain")
    replicates = 150
    boot = bootstrap.bootstrap_ratings(a, b, score_a, score_b, n, replicates=replicates, seed=32, weighting=weighting,
                                       side=side)
    reference = dense_replicates(a, b, score_a, score_b, n, replicates=replicates, seed=32, weighting=weighting,
                                 side=side)
    if field == "chain":
        assert np.ptp(reference[:, :n], axis=1).min() > bootstrap._SPAN
    # Within 0.01 Elo of the dense fit, replicate by replicate (the chord stops within 1e-5 logits).
    np.testing.assert_allclose(boot.ratings, elo.BASE_RATING + elo.ELO_SCALE * reference[:, :n], rtol=0, atol=0.01)
    if side:
        np.testing.assert_allclose(boot.pro_advantage, elo.ELO_SCALE * reference[:, n], rtol=0, atol=0.01)
    else:
        assert boot.pro_advantage is None


def test_the_chord_fit_gives_up_what_it_cannot_hold_and_keeps_the_rest():
    # Two copies of one problem (entry 0 scored 6 of 10 against entry 1), the second seen shifted so far
    # apart that its strengths span more than _SPAN logits: it is given up, the first converges.
    n = 2
    cells = np.zeros((2, n, n), dtype=np.float32)
    cells[:, 0, 1] = 10.0
    scored = np.array([[6.0, -6.0], [6.0, -6.0]])
    evaluate = bootstrap._evaluator(cells, scored, np.zeros((2, n)))
    far = np.array([[0.0, 0.0], [bootstrap._SPAN, -bootstrap._SPAN]])
    hessian = 10 * 0.25 * np.array([[1.0, -1.0], [-1.0, 1.0]]) + elo.PRIOR_PRECISION * np.eye(n)
    x, converged = bootstrap._chord_fit(lambda x, rescale, which: evaluate(x + far, rescale, which),
                                        np.zeros(n), bt.mean_zero_inverse(hessian), np.diag(hessian), 2, free=0,
                                        tol=1e-5)
    assert list(converged) == [True, False]
    # The first is bt.fit's answer: mean-zero strengths at the posterior mode.
    reference = bt.fit(np.array([[0.0, 6.0], [4.0, 0.0]]), np.array([[0.0, 10.0], [10.0, 0.0]]),
                       prior=elo.PRIOR_PRECISION)
    np.testing.assert_allclose(x[0], reference, atol=1e-5)


@pytest.mark.parametrize("h", [0.0, 0.7, -1.3])
def test_cell_sums_are_the_sigmoid_sums_written_out(h):
    rng = np.random.default_rng(33)
    n = 9
    T = (rng.random((n, n)) * rng.integers(0, 4, (n, n))).astype(np.float32)
    t = rng.normal(0.0, 2.0, n)
    a = np.exp(t - t.max())
    b = a * np.exp(h)
    scratch = np.empty((2, n, n), dtype=np.float32), np.ones(n, dtype=np.float32)
    sums = bootstrap._cell_sums(T, a.astype(np.float32), b.astype(np.float32), True, scratch)
    P = bt.sigmoid(t[:, None] - t[None, :] + h)
    expected = [(T * P).sum(axis=1), (T * P).sum(axis=0), (T * P * (1 - P)).sum(axis=1), (T * P * (1 - P)).sum(axis=0)]
    for got, want in zip(sums, expected):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(bootstrap._cell_sums(T, a.astype(np.float32), b.astype(np.float32), False,
                                                       scratch)[0], sums[0])


def walker_multinomial(rng, counts, size):
    """Multinomial(M, counts / M) draws made plainly, one column per replicate: Walker's alias method on each
    table of _poisson_tables, then the fix-up to the total M, drawing the random numbers as _multinomial does."""
    tables, order = bootstrap._poisson_tables(counts)
    total = int(counts.sum())
    draws = np.zeros((len(counts), size))
    kinds = np.split(order, np.cumsum([table[0] for table in tables])[:-1])
    for kind, (_, lowest, _, threshold, alias) in zip(kinds, tables):
        u = rng.random((len(kind), size)) * len(threshold)
        slot = u.astype(np.intp)
        draws[kind] = np.where(u < threshold[slot], slot, alias[slot]) + lowest
    missing = total - draws.sum(axis=0).astype(np.int64)
    short = np.flatnonzero(missing > 0)
    added = np.repeat(np.arange(len(counts)), counts)[rng.integers(0, total, missing[short].sum())]
    np.add.at(draws, (added, np.repeat(short, missing[short])), 1)
    for column in np.flatnonzero(missing < 0):
        picks = rng.choice(total - missing[column], -missing[column], replace=False)
        np.subtract.at(draws[:, column], np.searchsorted(np.cumsum(draws[:, column]), picks, side="right"), 1)
    return draws


@pytest.mark.parametrize("counts", [[3, 1, 1, 2, 9, 1, 40, 2, 2, 250], [1] * 60 + [2] * 7 + [5], [2, 1, 3]])
def test_the_draws_are_walkers_from_the_same_random_numbers(counts):
    # The look-up must draw what Walker's method draws, number for number, so that a seed keeps giving the
    # replicates (and intervals) it gave; 400 replicates see both fix-ups, adding and removing matches.
    counts = np.array(counts)
    drawing = bootstrap._poisson_tables(counts)
    draws = bootstrap._multinomial([np.random.default_rng(35)], counts, drawing, [400])
    reference = walker_multinomial(np.random.default_rng(35), counts, 400)
    np.testing.assert_array_equal(draws[np.argsort(drawing[1])], reference)
    assert np.all(draws.sum(axis=0) == counts.sum())


def test_the_alias_look_up_settles_draws_on_either_side_of_each_threshold():
    # Uniforms on every bin edge and threshold, nudged both ways, where a look-up could slip by one.
    for mean in (0.3, 1.0, 7.5, 40.0):
        k = np.arange(0, int(mean + 10 * math.sqrt(mean) + 12))
        pmf = np.exp(k * math.log(mean) - mean - np.array([math.lgamma(j + 1) for j in k]))
        lookup, threshold, alias = bootstrap._alias_lookup(*bootstrap._alias_table(pmf / pmf.sum()))
        near = np.concatenate([threshold / len(threshold), np.arange(len(lookup) + 1) / len(lookup)])
        u = np.concatenate([np.nextafter(near, 0), near, np.nextafter(near, 1)])
        u = u[(u >= 0) & (u < 1)]
        scaled = u * len(threshold)
        slot = scaled.astype(np.intp)
        drawn = lookup.take((u * len(lookup)).astype(np.intp))
        settled = drawn >= 0
        assert settled.mean() > 0.5
        np.testing.assert_array_equal(drawn[settled], np.where(scaled < threshold[slot], slot, alias[slot])[settled])


def test_batches_are_sized_by_the_padded_layout_of_the_kinds():
    # Batches fix which random numbers each replicate gets, so their size keeps its first rule: 4, 8, 12...
    # batches of at most _BATCH_CELLS / max(slots, n^2) replicates, slots counting the kinds in rows of the mean
    # kinds per pair. 50,000 pairs of 1 kind and 50,000 of 5: 300,000 kinds, rows of 3, pairs of 5 take two
    # rows, so 450,000 slots: 9 replicates per batch fit (4 * 28 batches for 1000), where counting the kinds
    # alone would fit 13.
    keys = np.repeat(np.arange(100_000), np.r_[np.ones(50_000, int), np.full(50_000, 5)])
    assert bootstrap._BATCH_CELLS // 450_000 == 9
    assert bootstrap._batch_size(1000, keys, 300) == 9
    # The cells bound instead once n^2 is the larger: 700^2 = 490,000 cells, 8 per batch (4 * 32 batches).
    assert bootstrap._batch_size(1000, keys, 700) == 8


def test_generators_side_by_side_draw_what_each_draws_alone():
    # A task draws several batches at once, each from its own generator: the columns of each must be the draws
    # that generator makes alone (the fix-ups included), so that grouping changes no replicate.
    counts = np.array([3, 1, 1, 2, 9, 1, 40, 2, 2, 250] * 5)
    drawing = bootstrap._poisson_tables(counts)
    sizes = [7, 30, 1]
    together = bootstrap._multinomial([np.random.default_rng(k) for k in range(3)], counts, drawing, sizes)
    alone = [bootstrap._multinomial([np.random.default_rng(k)], counts, drawing, [size])
             for k, size in enumerate(sizes)]
    np.testing.assert_array_equal(together, np.concatenate(alone, axis=1))
    assert np.all(together.sum(axis=0) == counts.sum())


@pytest.mark.parametrize("side", [False, True], ids=["side-blind", "side-fitted"])
def test_grouping_batches_and_pooling_rows_change_no_replicate(side, monkeypatch):
    a, b, score_a, score_b = tournament(12, 3000, seed=36)
    n, options = 12, {"replicates": 120, "seed": 37, "side": side}
    # 12 batches of 10 replicates, which tasks of 3 batches each draw side by side.
    monkeypatch.setattr(bootstrap, "_batch_size", lambda replicates, keys, n: 10)
    *kinds, counts = bootstrap.match_kinds(a, b, score_a, score_b, n, keep_sides=True)
    assert bootstrap._group_size(12, 10, len(counts), n) == 3
    boot = bootstrap.bootstrap_ratings(a, b, score_a, score_b, n, **options)
    # The same matches pooled into kinds with their counts, as leaderboard.ratings passes them.
    assert counts.sum() == len(a) and len(counts) < len(a) / 4
    pooled = bootstrap.bootstrap_ratings(*kinds, n, counts=counts, **options)
    # One batch per task instead of three side by side.
    monkeypatch.setattr(bootstrap, "_GROUP_CELLS", 1)
    assert bootstrap._group_size(12, 10, len(counts), n) == 1
    alone = bootstrap.bootstrap_ratings(a, b, score_a, score_b, n, **options)
    for other in (pooled, alone):
        np.testing.assert_allclose(other.ratings, boot.ratings, rtol=0, atol=1e-9)
        if side:
            np.testing.assert_allclose(other.pro_advantage, boot.pro_advantage, rtol=0, atol=1e-9)


def test_batches_are_grouped_within_the_cells_bound_leaving_four_tasks():
    # 20 batches of 50 over 62,000 kinds: 5 a task (250 x 62,000 within 2^24 cells), so 4 tasks; were there
    # room for more, 4 tasks would still be left for the cores.
    assert bootstrap._group_size(20, 50, 62_000, 100) == 5
    assert bootstrap._group_size(20, 50, 1_000, 10) == 5
    assert bootstrap._group_size(40, 50, 200_000, 100) == 1  # 50 x 200,000 kinds: one batch fills the bound
    assert bootstrap._group_size(4, 250, 1 << 20, 100) == 1
    # Fewer kinds than cells (a big field): each replicate is summed on its own, one batch a task.
    assert bootstrap._group_size(64, 16, 100_000, 500) == 1


@pytest.mark.parametrize("side", [False, True])
def test_cells_summed_by_outcome_equal_cells_summed_replicate_by_replicate(side):
    # More kinds than cells: an outcome's kinds (distinct cells) are added to every replicate's cells at once.
    # Each replicate summed on its own, the way with fewer kinds than cells, must give the same cells and scores.
    n = 8
    a, b, score_a, score_b = tournament(n, 2000, seed=38)
    *kinds, counts = bootstrap.match_kinds(a, b, score_a, score_b, n, keep_sides=side)
    assert len(counts) >= n * n
    drawing = bootstrap._poisson_tables(counts)
    draws = bootstrap._multinomial([np.random.default_rng(39)], counts, drawing, [25])
    # The draws' rows hold the kinds in the order drawn.
    first, second, score_first, score_second = (v[drawing[1]] for v in kinds)
    y, w = bt.soft_outcomes(score_first, score_second), bt.match_weights(score_first, score_second)
    outcome = pd.factorize(score_first * 10 + score_second)[0]
    blocks = bootstrap._outcome_blocks(first * n + second, outcome, w, w * y)
    assert all(len(np.unique(where)) == len(where) for _, where, _, _ in blocks)
    by_outcome = bootstrap._replicate_cells(draws, bootstrap._Kinds(first, second, w, w * y, blocks), n, side)
    one_by_one = bootstrap._replicate_cells(draws, bootstrap._Kinds(first, second, w, w * y, None), n, side)
    # The cells alike to single precision; the scores to a ten-thousandth of a point (of some 2,000 in all), the
    # outcomes' points being summed per cell in single precision.
    np.testing.assert_allclose(by_outcome[0], one_by_one[0], rtol=1e-6)
    np.testing.assert_allclose(by_outcome[1], one_by_one[1], rtol=0, atol=1e-4)
    np.testing.assert_allclose(by_outcome[0].sum(axis=(1, 2)), (draws * w[:, None]).sum(axis=0), rtol=1e-6)
