"""Bootstrap of the weighted Bradley–Terry ratings (leaderboard.bt), the weak prior taken as data.

Model: the matches are resampled with replacement, as whole rows, and each
replicate refitted by leaderboard.bt's fit under the weak N(0, 1/PRIOR_PRECISION)
prior whose centre is itself drawn from that prior, anew for each replicate;
percentiles of the replicates give intervals. The prior is then one more
observation per parameter, resampled like the matches: for a Gaussian model
this draws from the posterior, so a rating few matches pin keeps about the
prior's spread (a plain bootstrap of one 3-0 match would give a zero-width
interval), while with many matches it is the plain bootstrap. Resampling M
matches is drawing Multinomial(M, counts / M) over the distinct kinds of
match, which is what is drawn here.

Each replicate is refitted from the full data's fit by chord steps with the full data's Hessian, rescaled
to the replicate's own curvature (_chord_fit): a handful of passes over its n x n cells, in single
precision and with no exp per cell (_cell_sums); the few replicates that do not converge get full Newton.
"""

from __future__ import annotations

import math
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import pandas as pd

from leaderboard.bt import (fit, fit_side, gradient_hessian, match_weights, mean_zero_inverse, pair_statistics,
                            side_gradient_hessian, side_statistics, sigmoid, soft_outcomes, to_elo)
from leaderboard.elo import ELO_SCALE, PRIOR_PRECISION

# Batch size bound: replicates x max(padded match kinds, n^2) <= this (see _batch_size).
_BATCH_CELLS = 1 << 22
# Replicates are fitted to within this many logits (0.002 Elo), far inside the percentiles' Monte Carlo noise.
_TOLERANCE = 1e-5
# Strengths more than this many logits below the strongest (or a Pro advantage this large) are left to full
# Newton: beyond it the single-precision cell sums could overflow.
_SPAN = 30.0


@dataclass(frozen=True)
class Replicates:
    """Bootstrap replicates: Elo ratings (replicates, n) and, with the side fitted, Pro advantages in Elo."""

    ratings: np.ndarray
    pro_advantage: np.ndarray | None = None


def bootstrap_ratings(a, b, score_a, score_b, n, *, replicates=1000, seed=0, weighting="paper", anchor=None,
                      side=False) -> Replicates:
    """Elo ratings (with side, and a[m]'s Pro advantage: bt.fit_side) refitted on `replicates` resamples of the
    matches (rows) with replacement, each under the weak prior centred on a draw from that prior.

    Batches of replicates run on a thread pool, each with its own child seed, so
    the result depends on the seed only.
    """
    first, second, score_first, score_second, counts = _match_kinds(a, b, score_a, score_b, n, side)
    y, w = soft_outcomes(score_first, score_second), match_weights(score_first, score_second, weighting)
    refit = fit_side if side else fit
    full = _statistics(first, second, y, w * counts, n, side)
    start = refit(*full, prior=PRIOR_PRECISION)
    hessian = _hessian(start, *full, side)
    inverse = mean_zero_inverse(hessian, free=int(side))
    drawing = _poisson_tables(counts)
    batch = _batch_size(replicates, first * n + second, n)
    first, second, y, w = (v[drawing[1]] for v in (first, second, y, w))  # in the order they are drawn
    x = np.empty((replicates, n + side))

    def run_batch(first_replicate, seed_sequence):
        # Drawing M matches uniformly with replacement and pooling identical ones
        # is Multinomial(M, counts / M) over the kinds, so draw that directly.
        rng = np.random.default_rng(seed_sequence)
        size = min(batch, replicates - first_replicate)
        draws = _multinomial(rng, counts, drawing, size)
        centre = rng.normal(0.0, 1 / math.sqrt(PRIOR_PRECISION), (size, n + side))
        # Replicates lie close to the full data, so its Hessian, rescaled, serves
        # them all; the few it does not get full Newton.
        evaluate = _evaluator(*_replicate_cells(draws, first, second, y, w, n, side), centre)
        fitted, converged = _chord_fit(evaluate, start, inverse, np.diag(hessian), size, free=int(side),
                                       tol=_TOLERANCE)
        redo = np.flatnonzero(~converged)
        if len(redo):
            stats = zip(*(_statistics(first, second, y, w * draws[r], n, side) for r in redo))
            fitted[redo] = refit(*map(np.stack, stats), prior=PRIOR_PRECISION, centre=centre[redo], init=start,
                                 tol=_TOLERANCE)
        x[first_replicate : first_replicate + size] = fitted

    # Threads suffice: the draws and the array maths release the GIL.
    firsts = range(0, replicates, batch)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    with ThreadPoolExecutor(max_workers=cores) as pool:
        list(pool.map(run_batch, firsts, np.random.SeedSequence(seed).spawn(len(firsts))))
    return Replicates(to_elo(x[:, :n], anchor), ELO_SCALE * x[:, n] if side else None)


def _statistics(first, second, y, w, n, side):
    """bt's sufficient statistics of matches first[k] vs second[k] of outcome y and weight w: (S, A) with the
    side, else (W, N)."""
    return (side_statistics if side else pair_statistics)(first, second, y, w, n)


def _batch_size(replicates, keys, n):
    """Replicates per batch: 4, 8, 12... batches within _BATCH_CELLS over max(slots, n^2).

    A multiple of 4 batches, so that 2 or 4 cores finish together; the split depends
    on the data alone, hence so do the results. slots counts the match kinds (keys:
    their pairs, sorted) laid out one pair per row of the mean kinds per pair, padded:
    the layout this bound was first set for, kept because the batches fix which random
    numbers each replicate gets, so that a seed keeps giving the intervals it gave.
    """
    _, sizes = np.unique(keys, return_counts=True)
    width = -(-len(keys) // len(sizes))
    slots = int(np.sum(-(-sizes // width))) * width
    rounds = max(1, -(-replicates // (4 * max(1, _BATCH_CELLS // max(slots, n * n)))))
    return max(1, -(-replicates // (4 * rounds)))


def _hessian(x, first, second, side):
    """Hessian of the loss under the weak prior at x (leaderboard.bt's), from the full data's (W, N) or, with
    side, (S, A)."""
    n = first.shape[-1]
    P = sigmoid(x[:n, None] - x[None, :n] + (x[n] if side else 0.0))
    if side:
        return side_gradient_hessian(x, P, first, second, np.full(n + 1, PRIOR_PRECISION), 0.0)[1]
    return gradient_hessian(x, P, first.sum(axis=-1), second, np.asarray(PRIOR_PRECISION))[1]


def _multinomial(rng, counts, drawing, size, block=4096):
    """`size` rows of Multinomial(M, counts / M) draws, M = counts.sum(), the kinds in the order
    (tables, order) = drawing = _poisson_tables(counts) draws them.

    Independent Poisson(rate * counts) draws are Multinomial(T, counts / M) given
    their total T, so adding M - T draws of single matches (uniform over the
    data) makes each row exactly Multinomial(M, counts / M). The rate sits
    two standard deviations below 1 so that T > M, which needs T - M draws
    removed at random instead, is rare. Unlike numpy's multinomial (one
    binomial, with its set-up, per category) the bulk of the work is
    vectorised table look-ups.
    """
    tables, order = drawing
    total = int(counts.sum())
    # Whole numbers, exact in single precision below 2^24.
    draws = np.empty((size, len(counts)), dtype=np.float32 if total < 2**24 else np.float64)
    stop = 0
    for number, lowest, lookup, threshold, alias in tables:  # Walker's alias method, by look-up
        start, stop = stop, stop + number
        u = rng.random((number, size))
        u *= len(lookup)  # bins of U(0, len(threshold)), in which u * len(threshold) is u / fine, exactly
        drawn = lookup.take(u.astype(np.intp))
        split = np.flatnonzero(drawn < 0)
        slot_u = u.flat[split] / (len(lookup) // len(threshold))
        slot = slot_u.astype(np.intp)
        drawn.flat[split] = np.where(slot_u < threshold[slot], slot, alias[slot])
        # The random numbers come a row per kind: transposed a block of kinds at a time, as
        # numpy's transposing copy of the whole walks the memory far more slowly.
        for block_start in range(0, number, block):
            rows = drawn[block_start : block_start + block]
            draws[:, start + block_start : start + block_start + len(rows)] = rows.T + lowest
    place = np.empty_like(order)
    place[order] = np.arange(len(order))  # the column of each kind
    missing = total - draws.sum(axis=1, dtype=np.float64).astype(np.int64)
    short = np.flatnonzero(missing > 0)
    # The kind of each data match, in kind order: a look-up beats searching the cumulative counts.
    kinds = np.repeat(np.arange(len(counts)), counts)[rng.integers(0, total, missing[short].sum())]
    # One of draws' own type: add.at's fast path.
    np.add.at(draws.reshape(-1), np.repeat(short, missing[short]) * len(counts) + place[kinds], draws.dtype.type(1))
    for row in np.flatnonzero(missing < 0):  # remove distinct draws, chosen uniformly among the T
        picks = rng.choice(total - missing[row], -missing[row], replace=False)
        kinds = np.searchsorted(np.cumsum(draws[row, place]), picks, side="right")
        np.subtract.at(draws[row], place[kinds], draws.dtype.type(1))
    return draws


def _poisson_tables(counts):
    """Alias tables of Poisson(rate * c), rate = 1 - 2 / sqrt(M), for each distinct count c, in increasing c,
    and the order in which they draw the kinds: by count, stably.

    Each table is (the number of kinds with count c, lowest value, _alias_lookup's
    look-up, threshold and alias) and spans the mean +- (10 sd + 10), leaving out
    tails far below float resolution.
    """
    rate = max(0.0, 1 - 2 / math.sqrt(counts.sum()))  # P(T > M) ~ P(Z > 2)
    values, inverse, sizes = np.unique(counts, return_inverse=True, return_counts=True)
    tables = []
    for c, kinds in zip(values, sizes):
        mean = rate * c
        spread = 10 * math.sqrt(mean) + 10
        k = np.arange(max(0, math.floor(mean - spread)), math.ceil(mean + spread) + 1)
        if mean > 0:  # log pmf(k) - log pmf(k[0]), by the ratios pmf(k) / pmf(k - 1) = mean / k
            log_pmf = np.concatenate([[0.0], np.cumsum(np.log(mean / k[1:]))])
            pmf = np.exp(log_pmf - log_pmf.max())
        else:  # M <= 4: rate 0, so the fix-up draws every match
            pmf = (k == 0).astype(float)
        tables.append((kinds, k[0], *_alias_lookup(*_alias_table(pmf / pmf.sum()))))
    return tables, np.argsort(inverse, kind="stable")


def _alias_table(pmf):
    """Walker's alias table (Vose's construction): draw slot j uniformly, keep it with prob[j], else alias[j]."""
    prob = (pmf * len(pmf)).tolist()
    alias = list(range(len(pmf)))
    small = [j for j, p in enumerate(prob) if p < 1]
    large = [j for j, p in enumerate(prob) if p >= 1]
    while small and large:
        j, k = small.pop(), large[-1]
        alias[j] = k
        prob[k] += prob[j] - 1  # k gives slot j the mass it lacks
        if prob[k] < 1:
            small.append(large.pop())
    for j in small + large:  # left over only through rounding: full slots
        prob[j] = 1.0
    return np.array(prob), np.array(alias)


def _alias_lookup(prob, alias, fine=256):
    """Walker's draw from u ~ U(0, len(prob)) (slot j = floor(u), kept when u < j + prob[j], else alias[j]) as a
    look-up: the outcome of each of `fine` equal bins per slot, -1 where j + prob[j] splits the bin; and the
    thresholds j + prob[j] and the alias, for the draws in those.

    fine is a power of two, so that the bins' edges, and u scaled to them, are exact.
    """
    threshold = np.arange(len(prob)) + prob
    slot = np.repeat(np.arange(len(prob)), fine)
    low = np.arange(len(slot)) / fine
    kept = np.where(low + 1 / fine <= threshold[slot], slot, -1)
    return np.where(low >= threshold[slot], alias[slot], kept), threshold, alias


def _replicate_cells(draws, first, second, y, w, n, side):
    """Each replicate's (row of draws: counts of the match kinds) T[i, j] = summed weight of its matches of
    first i against second j, as n x n float32, and what it scored: sum of w*y as first less as second, and in
    all (the Pro advantage's) with the side."""
    cell = first * n + second
    won = w * y
    cells = np.empty((len(draws), n, n), dtype=np.float32)
    scored = np.empty((len(draws), n + side))
    for r, count in enumerate(draws):
        # Weights of a handful of kinds per cell sum exactly enough in single precision;
        # the scores, sums over all of an entry's matches, stay in double.
        cells[r] = np.bincount(cell, weights=count * w, minlength=n * n).reshape(n, n)
        points = count * won
        scored[r, :n] = np.bincount(first, weights=points, minlength=n) - np.bincount(second, weights=points,
                                                                                      minlength=n)
        if side:
            scored[r, n] = points.sum()
    return cells, scored


def _evaluator(cells, scored, centre):
    """(x, rescale, which) -> the gradient of bt's loss (fit's, or fit_side's when x has the Pro advantage h
    last) under the weak prior centred on `centre`, for the problems `which` of a stack of replicates
    (_replicate_cells); with rescale also the Hessian's diagonal; and whether _cell_sums holds for each."""
    size, n, _ = cells.shape
    side = scored.shape[1] > n
    scratch = np.empty((2, n, n), dtype=np.float32), np.ones(n, dtype=np.float32)

    def evaluate(x, rescale, which):
        strengths = x[:, :n] - x[:, :n].max(axis=1, keepdims=True)
        h = x[:, n] if side else np.zeros(size)
        held = (strengths.min(axis=1) > -_SPAN) & (np.abs(h) < _SPAN)
        a = np.exp(np.maximum(strengths, -_SPAN)).astype(np.float32)
        b = (a * np.exp(np.clip(h, -_SPAN, _SPAN))[:, None]).astype(np.float32)
        sums = np.zeros((4, size, n))  # rows and columns of T P, then of T P (1 - P)
        for r in np.flatnonzero(which):
            sums[: 4 if rescale else 2, r] = _cell_sums(cells[r], a[r], b[r], rescale, scratch)
        expected = [sums[0] - sums[1], sums[2] + sums[3]]  # strengths: gradient's data part, curvature
        if side:
            expected = [np.concatenate([e, total.sum(axis=1, keepdims=True)], axis=1)
                        for e, total in zip(expected, (sums[0], sums[2]))]
        gradient = expected[0] - scored + PRIOR_PRECISION * (x - centre)
        return gradient, expected[1] + PRIOR_PRECISION if rescale else None, held

    return evaluate


def _cell_sums(T, a, b, curvature, scratch):
    """Row and column sums of T P, P_ij = b_i / (b_i + a_j), and with curvature those of T P (1 - P).

    With a = exp(t - max t) and b = a exp(h), P_ij = sigmoid(t_i - t_j + h) with no exp
    per cell: T P = b_i Q_ij and T P (1 - P) = b_i a_j Q_ij / (b_i + a_j), Q = T / (b_i + a_j).
    """
    (total, Q), ones = scratch
    np.add(b[:, None], a[None, :], out=total)
    np.divide(T, total, out=Q)
    rows, columns = b * (Q @ ones), b @ Q  # matrix-vector products: faster than numpy's row sums
    if not curvature:
        return rows, columns
    np.divide(Q, total, out=Q)
    return rows, columns, b * (Q @ a), (b @ Q) * a


def _chord_fit(evaluate, init, inverse, curvature, count, *, free, tol, max_iter=50):
    """Fit of `count` problems by chord steps x <- x - D ((D g(x)) @ inverse), kept to mean-zero strengths.

    inverse is the full data's mean-zero inverse Hessian and curvature that Hessian's
    diagonal; D = sqrt(curvature / a problem's own Hessian diagonal) rescales it to
    each problem, from the diagonal at its first two points (the second sees the first
    step's change of curvature; later steps change it too little to matter). The last
    `free` coordinates are not strengths. Convergence is linear: with steps shrinking by
    a ratio r <= 1/2, the error left after a step s is about s r / (1 - r), and a problem
    has converged once that is below `tol` (for the first step r counts as 1/2). Also
    returns which problems converged; one whose step fails to halve, or that evaluate
    does not hold for, is given up, as too far from where `inverse` holds.
    """
    x = np.repeat(np.asarray(init, dtype=float)[None], count, axis=0)
    strengths = x.shape[1] - free
    inverse = inverse.astype(np.float32)
    converged = np.zeros(count, dtype=bool)
    active = np.ones(count, dtype=bool)
    previous = None
    for k in range(max_iter):
        if not active.any():
            break
        gradient, diagonal, held = evaluate(x, k < 2, active)
        if diagonal is not None:
            scale = np.sqrt(curvature / diagonal)
        # One matrix-vector product per problem: unthreaded, where OpenBLAS's threads for
        # the whole stack at once would fight the pool's threads for the cores.
        direction = (_centred(gradient, strengths) * scale).astype(np.float32)[:, None, :] @ inverse
        step = _centred(scale * direction[:, 0], strengths)
        size = np.abs(step).max(axis=-1)
        x -= np.where(active[:, None], step, 0.0)
        if previous is None:
            ratio, shrinking = 0.5, True
        else:
            ratio = np.minimum(size / np.maximum(previous, np.finfo(float).tiny), 0.5)
            shrinking = size < previous / 2
        active &= held
        done = active & (size * ratio / (1 - ratio) < tol)
        converged |= done
        active &= ~done & shrinking
        previous = size
    return x, converged


def _centred(x, strengths):
    """x with its first `strengths` coordinates made mean zero (the directions the data identify)."""
    x = x.copy()
    x[:, :strengths] -= x[:, :strengths].mean(axis=1, keepdims=True)
    return x


def _match_kinds(a, b, score_a, score_b, n, keep_sides=False):
    """Distinct matches (first, second, score of first, score of second) and their counts.

    Unless keep_sides, each match is oriented from the lower to the higher index,
    making a match and its a/b-swapped copy the same kind; with it, first is a.
    """
    a = np.asarray(a, dtype=np.intp)
    b = np.asarray(b, dtype=np.intp)
    score_a = np.asarray(score_a, dtype=float)
    score_b = np.asarray(score_b, dtype=float)
    swap = np.zeros(len(a), dtype=bool) if keep_sides else a > b
    low, high = np.where(swap, b, a), np.where(swap, a, b)
    # Code each match as one integer (pair, score pair) so that a 1-D unique
    # finds the kinds; much faster than a row-wise unique. (pandas' hashing
    # codes the float scores several times faster than np.unique's sort.)
    codes, values = pd.factorize(np.concatenate([score_a, score_b]), sort=True)
    code_a, code_b = codes[: len(a)], codes[len(a) :]
    code_low, code_high = np.where(swap, code_b, code_a), np.where(swap, code_a, code_b)
    outcomes, outcome = _distinct(code_low * len(values) + code_high, len(values) ** 2)
    keys, kind = _distinct((low * n + high) * len(outcomes) + outcome, n * n * len(outcomes))
    counts = np.bincount(kind)
    pair, outcome = np.divmod(keys, len(outcomes))
    code_low, code_high = np.divmod(outcomes[outcome], len(values))
    return pair // n, pair % n, values[code_low], values[code_high], counts


def _distinct(keys, bound):
    """np.unique(keys, return_inverse=True) for keys in [0, bound): by counting, when bound allows."""
    if bound > 4 * len(keys) + 4096:
        return np.unique(keys, return_inverse=True)
    present = np.bincount(keys, minlength=bound) > 0
    return np.flatnonzero(present), (np.cumsum(present) - 1)[keys]
