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
from itertools import pairwise
from typing import Any, Callable, Sequence, cast

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from leaderboard.bt import (Anchor, BoolArray, FloatArray, IndexArray, fit, fit_side, gradient_hessian, match_weights,
                            mean_zero_inverse, pair_statistics, side_gradient_hessian, side_statistics, sigmoid,
                            soft_outcomes, to_elo)
from leaderboard.elo import ELO_SCALE, PRIOR_PRECISION

Float32Array = NDArray[np.float32]
CountArray = NDArray[np.integer[Any]]
# Draws of the kinds of match: whole numbers, in float32 (or float64 past 2^24 matches: _multinomial)
DrawArray = NDArray[np.floating[Any]]
# _alias_lookup's look-up: int16 or int32, the narrowest that holds the slots
Lookup = NDArray[np.signedinteger[Any]]
# An alias table of _poisson_tables: (number of kinds, lowest value, look-up, threshold, alias)
_Table = tuple[int, int, Lookup, FloatArray, IndexArray]
# _evaluator's function: (x, rescale, which) -> (gradient, Hessian diagonal or None, whether _cell_sums holds)
_Evaluate = Callable[[FloatArray, bool, BoolArray], tuple[FloatArray, FloatArray | None, BoolArray]]

# Batch size bound: replicates x max(padded match kinds, n^2) <= this (see _batch_size).
_BATCH_CELLS = 1 << 22
# Bound on the columns of draws (replicates) a task draws and sums at once, times max(match kinds, n^2): wide
# enough that numpy's per-row work on the draws costs little beside the numbers (see _group_size).
_GROUP_CELLS = 1 << 24
# Numbers of draws summed at a time: 128 KiB of them, well within a core's cache.
_CACHED = 1 << 15
# Replicates are fitted to within this many logits (0.002 Elo), far inside the percentiles' Monte Carlo noise.
_TOLERANCE = 1e-5
# Strengths more than this many logits below the strongest (or a Pro advantage this large) are left to full
# Newton: beyond it the single-precision cell sums could overflow.
_SPAN = 30.0


@dataclass(frozen=True)
class Replicates:
    """Bootstrap replicates: Elo ratings (replicates, n) and, with the side fitted, Pro advantages in Elo."""

    ratings: FloatArray
    pro_advantage: FloatArray | None = None


def bootstrap_ratings(a: ArrayLike, b: ArrayLike, score_a: ArrayLike, score_b: ArrayLike, n: int, *,
                      replicates: int = 1000, seed: int = 0, weighting: str = "paper", anchor: Anchor = None,
                      side: bool = False, counts: ArrayLike | None = None,
                      init: ArrayLike | None = None) -> Replicates:
    """Elo ratings (with side, and a[m]'s Pro advantage: bt.fit_side) refitted on `replicates` resamples of the
    matches (rows, match m counts[m] times: default once) with replacement, each under the weak prior centred on
    a draw from that prior. Rows pooled by match_kinds(keep_sides=True), with their counts, give the very same
    replicates as the rows. init, a fit of the same matches (logit strengths, and h), saves the full data's
    refit under the prior most of its Newton steps.

    Batches of replicates run on a thread pool, each with its own child seed, so
    the result depends on the seed only.
    """
    first, second, score_first, score_second, counts = match_kinds(a, b, score_a, score_b, n, keep_sides=side,
                                                                   counts=counts)
    y, w = soft_outcomes(score_first, score_second), match_weights(score_first, score_second, weighting)
    refit = fit_side if side else fit
    full = _statistics(first, second, y, w * counts, n, side)
    start = refit(*full, prior=PRIOR_PRECISION, init=init)
    hessian = _hessian(start, *full, side)
    inverse = mean_zero_inverse(hessian, free=int(side))
    drawing = _poisson_tables(counts)
    batch = _batch_size(replicates, first * n + second, n)
    # The kinds as the draws' rows hold them: in the order they are drawn.
    first, second, y, w, score_first, score_second = (
        v[drawing[1]] for v in cast(tuple[NDArray[Any], ...], (first, second, y, w, score_first, score_second)))
    (first_score, _), (second_score, second_scores) = pd.factorize(score_first), pd.factorize(score_second)
    outcome = first_score * len(second_scores) + second_score
    blocks = _outcome_blocks(first * n + second, outcome, w, w * y) if len(w) >= n * n else None
    kinds = _Kinds(first, second, w, w * y, blocks)
    x = np.empty((replicates, n + side))
    firsts = range(0, replicates, batch)
    seeds = np.random.SeedSequence(seed).spawn(len(firsts))

    def run_group(batches: range) -> None:
        # Drawing M matches uniformly with replacement and pooling identical ones is Multinomial(M, counts / M)
        # over the kinds, so draw that directly: each batch from its own generator, side by side.
        rngs = [np.random.default_rng(seeds[k]) for k in batches]
        sizes = [min(batch, replicates - firsts[k]) for k in batches]
        draws = _multinomial(rngs, counts, drawing, sizes)
        centre = np.concatenate([rng.normal(0.0, 1 / math.sqrt(PRIOR_PRECISION), (size, n + side))
                                 for rng, size in zip(rngs, sizes)])
        # Replicates lie close to the full data, so its Hessian, rescaled, serves
        # them all; the few it does not get full Newton.
        evaluate = _evaluator(*_replicate_cells(draws, kinds, n, side), centre)
        fitted, converged = _chord_fit(evaluate, start, inverse, np.diag(hessian), len(centre), free=int(side),
                                       tol=_TOLERANCE)
        redo = np.flatnonzero(~converged)
        if len(redo):
            stats = zip(*(_statistics(first, second, y, w * draws[:, r], n, side) for r in redo))
            fitted[redo] = refit(*map(np.stack, stats), prior=PRIOR_PRECISION, centre=centre[redo], init=start,
                                 tol=_TOLERANCE)
        x[firsts[batches[0]] : firsts[batches[0]] + len(fitted)] = fitted

    # Threads suffice: the draws and the array maths release the GIL.
    per_group = _group_size(len(firsts), batch, len(counts), n)
    groups = [range(k, min(k + per_group, len(firsts))) for k in range(0, len(firsts), per_group)]
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    with ThreadPoolExecutor(max_workers=cores) as pool:
        list(pool.map(run_group, groups))
    return Replicates(to_elo(x[:, :n], anchor), ELO_SCALE * x[:, n] if side else None)


def _statistics(first: IndexArray, second: IndexArray, y: FloatArray, w: FloatArray, n: int,
                side: bool) -> tuple[FloatArray, FloatArray]:
    """bt's sufficient statistics of matches first[k] vs second[k] of outcome y and weight w: (S, A) with the
    side, else (W, N)."""
    return (side_statistics if side else pair_statistics)(first, second, y, w, n)


def _batch_size(replicates: int, keys: IndexArray, n: int) -> int:
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


def _group_size(batches: int, batch: int, kinds: int, n: int) -> int:
    """Batches drawn and summed together by one task: with more kinds than n^2 cells, as many as _GROUP_CELLS
    allows over the kinds, leaving 4 tasks or more (so that 2 or 4 cores finish together); else one.

    Grouping changes no random number (each batch keeps its generator), only how
    wide the arrays are: numpy spends some 0.1 us on each row of a fancy-indexed
    copy or sum, as much as on 50 to 100 numbers, so one batch's 16 to 50 columns
    would spend more time on rows than on numbers. With fewer kinds than cells each
    replicate's cells are summed on their own (_replicate_cells): wider arrays would
    only hold more n x n cells at once.
    """
    if kinds < n * n:
        return 1
    return max(1, min(_GROUP_CELLS // (batch * kinds), batches // 4))


def _hessian(x: FloatArray, first: FloatArray, second: FloatArray, side: bool) -> FloatArray:
    """Hessian of the loss under the weak prior at x (leaderboard.bt's), from the full data's (W, N) or, with
    side, (S, A)."""
    n = first.shape[-1]
    P = sigmoid(x[:n, None] - x[None, :n] + (x[n] if side else 0.0))
    if side:
        return side_gradient_hessian(x, P, first, second, np.full(n + 1, PRIOR_PRECISION), 0.0)[1]
    return gradient_hessian(x, P, first.sum(axis=-1), second, np.asarray(PRIOR_PRECISION))[1]


def _multinomial(rngs: Sequence[np.random.Generator], counts: CountArray, drawing: tuple[list[_Table], IndexArray],
                 sizes: Sequence[int]) -> DrawArray:
    """Columns of Multinomial(M, counts / M) draws, M = counts.sum(): sizes[g] of them from generator rngs[g], side
    by side, a row per kind in the order (tables, order) = drawing = _poisson_tables(counts) draws them (row j
    kind order[j]). Each generator draws what it would alone.

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
    rows = np.empty_like(order)
    rows[order] = np.arange(len(order))  # the row of each kind
    # Whole numbers, exact in single precision below 2^24.
    number_type = np.float32 if total < 2**24 else np.float64
    width = sum(sizes)
    draws = np.empty((len(counts), width), dtype=number_type)
    offsets = np.cumsum([0, *sizes])
    stop = 0
    for number, lowest, lookup, threshold, alias in tables:  # Walker's alias method, by look-up
        start, stop = stop, stop + number
        for rng, size, offset in zip(rngs, sizes, offsets):
            # The random numbers come a row per kind, as the draws are laid out.
            drawn = _walker(rng.random((number, size)), lookup, threshold, alias)
            np.add(drawn, number_type(lowest), out=draws[start:stop, offset : offset + size])
    missing = total - draws.sum(axis=0, dtype=np.float64).astype(np.int64)
    # The kind of each data match, in kind order: a look-up beats searching the cumulative counts.
    matches = np.repeat(np.arange(len(counts)), counts)
    for rng, offset, end in zip(rngs, offsets, offsets[1:]):
        columns = np.arange(offset, end)
        short = columns[missing[columns] > 0]
        kinds = matches[rng.integers(0, total, missing[short].sum())]
        # One of draws' own type: add.at's fast path.
        np.add.at(draws.reshape(-1), rows[kinds] * width + np.repeat(short, missing[short]), number_type(1))
        for column in columns[missing[columns] < 0]:  # remove distinct draws, chosen uniformly among the T
            picks = rng.choice(total - missing[column], -missing[column], replace=False)
            kinds = np.searchsorted(np.cumsum(draws[rows, column]), picks, side="right")
            np.subtract.at(draws[:, column], rows[kinds], number_type(1))
    return draws


def _walker(u: FloatArray, lookup: Lookup, threshold: FloatArray, alias: IndexArray) -> Lookup:
    """Walker's draws (slots) from uniforms u in [0, 1) (scaled in place), by _alias_lookup's look-up."""
    u *= len(lookup)  # bins of U(0, len(threshold)), in which u * len(threshold) is u / fine, exactly
    drawn = lookup.take(u.astype(np.intp))
    split = np.flatnonzero(drawn < 0)
    slot_u = u.flat[split] / (len(lookup) // len(threshold))
    slot = slot_u.astype(np.intp)
    drawn.flat[split] = np.where(slot_u < threshold[slot], slot, alias[slot])
    return drawn


def _poisson_tables(counts: CountArray) -> tuple[list[_Table], IndexArray]:
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


def _alias_table(pmf: FloatArray) -> tuple[FloatArray, IndexArray]:
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


def _alias_lookup(prob: FloatArray, alias: IndexArray, fine: int = 256) -> tuple[Lookup, FloatArray, IndexArray]:
    """Walker's draw from u ~ U(0, len(prob)) (slot j = floor(u), kept when u < j + prob[j], else alias[j]) as a
    look-up: the outcome of each of `fine` equal bins per slot, -1 where j + prob[j] splits the bin; and the
    thresholds j + prob[j] and the alias, for the draws in those.

    fine is a power of two, so that the bins' edges, and u scaled to them, are exact.
    """
    threshold = np.arange(len(prob)) + prob
    slot = np.repeat(np.arange(len(prob)), fine)
    low = np.arange(len(slot)) / fine
    kept = np.where(low + 1 / fine <= threshold[slot], slot, -1)
    # The narrowest type that holds the slots: the look-up's result is the largest array drawn.
    lookup = np.where(low >= threshold[slot], alias[slot], kept).astype(np.int16 if len(prob) < 2**15 else np.int32)
    return cast(Lookup, lookup), threshold, alias


# An outcome's rows of the draws, their cells, and the outcome's w and w*y (_outcome_blocks)
_Block = tuple[IndexArray, IndexArray, np.float32, np.float32]


@dataclass(frozen=True)
class _Kinds:
    """The kinds of match as the draws' rows hold them: first vs second, of weight w and points w*y; and, where
    the kinds outnumber the n^2 cells, their rows by outcome (_outcome_blocks), else None."""

    first: IndexArray
    second: IndexArray
    w: FloatArray
    won: FloatArray
    blocks: list[_Block] | None


def _outcome_blocks(cells: IndexArray, outcome: IndexArray, w: FloatArray, won: FloatArray) -> list[_Block]:
    """The draws' rows (kinds: in cells, of outcome, weight w and w*y) by outcome: (the rows, their cells, the
    outcome's w and w*y) per outcome, the cells distinct within one."""
    rows = np.argsort(outcome, kind="stable")
    bounds = np.r_[0, np.flatnonzero(np.diff(outcome[rows])) + 1, len(rows)]
    return [(rows[start:stop], cells[rows[start:stop]], np.float32(w[rows[start]]), np.float32(won[rows[start]]))
            for start, stop in pairwise(bounds)]


def _replicate_cells(draws: DrawArray, kinds: _Kinds, n: int, side: bool) -> tuple[Float32Array, FloatArray]:
    """Each replicate's (column of draws: counts of the _Kinds) T[i, j] = summed weight of its matches of first i
    against second j, as n x n float32, and what it scored: sum of w*y as first less as second, and in all (the
    Pro advantage's) with the side.

    With more kinds than cells an outcome's kinds (distinct cells) are added to every replicate's cells at once;
    with fewer, as in a big field, most cells are empty and each replicate's are summed on their own.
    """
    if kinds.blocks is None:
        return _sparse_cells(_transposed(draws), kinds, n, side)
    size = draws.shape[1]
    cells = np.zeros((n * n, size), dtype=np.float32)
    won: Float32Array = np.zeros((n * n, size), dtype=np.float32)
    step = max(1, _CACHED // size)
    for rows, where, weight, points in kinds.blocks:
        # An outcome's cells are distinct, so a fancy-indexed sum adds each once. A cell sums a handful of
        # kinds (one per outcome): exact enough in single precision. A piece at a time, so that the
        # numbers stay in the cache.
        for start in range(0, len(rows), step):
            counts, piece = draws.take(rows[start : start + step], axis=0), where[start : start + step]
            cells[piece] += weight * counts
            won[piece] += points * counts
    won = won.reshape(n, n, size)
    scored = np.empty((size, n + side))
    # The scores, sums over all of an entry's matches, in double.
    scored[:, :n] = (won.sum(axis=1, dtype=np.float64) - won.sum(axis=0, dtype=np.float64)).T
    if side:
        scored[:, n] = won.sum(axis=(0, 1), dtype=np.float64)
    return np.ascontiguousarray(cells.T).reshape(size, n, n), scored


def _transposed(draws: DrawArray, block: int = 4096) -> DrawArray:
    """draws.T, copied a block of rows at a time: numpy's transposing copy of the whole walks the memory far more
    slowly."""
    copy = np.empty(draws.shape[::-1], dtype=draws.dtype)
    for start in range(0, len(draws), block):
        copy[:, start : start + block] = draws[start : start + block].T
    return copy


def _sparse_cells(draws: DrawArray, kinds: _Kinds, n: int, side: bool) -> tuple[Float32Array, FloatArray]:
    """_replicate_cells from draws a row per replicate, one replicate at a time."""
    cell = kinds.first * n + kinds.second
    cells = np.empty((len(draws), n, n), dtype=np.float32)
    scored = np.empty((len(draws), n + side))
    for r, count in enumerate(draws):
        # Weights of a handful of kinds per cell sum exactly enough in single precision;
        # the scores, sums over all of an entry's matches, stay in double.
        cells[r] = np.bincount(cell, weights=count * kinds.w, minlength=n * n).reshape(n, n)
        points = count * kinds.won
        scored[r, :n] = np.bincount(kinds.first, weights=points, minlength=n) - np.bincount(kinds.second,
                                                                                           weights=points, minlength=n)
        if side:
            scored[r, n] = points.sum()
    return cells, scored


def _evaluator(cells: Float32Array, scored: FloatArray, centre: FloatArray) -> _Evaluate:
    """(x, rescale, which) -> the gradient of bt's loss (fit's, or fit_side's when x has the Pro advantage h
    last) under the weak prior centred on `centre`, for the problems `which` of a stack of replicates
    (_replicate_cells); with rescale also the Hessian's diagonal; and whether _cell_sums holds for each."""
    size, n, _ = cells.shape
    side = scored.shape[1] > n
    scratch = np.empty((2, n, n), dtype=np.float32), np.ones(n, dtype=np.float32)

    def evaluate(x: FloatArray, rescale: bool, which: BoolArray) -> tuple[FloatArray, FloatArray | None, BoolArray]:
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


def _cell_sums(T: Float32Array, a: Float32Array, b: Float32Array, curvature: bool,
               scratch: tuple[Float32Array, Float32Array]) -> tuple[Float32Array, ...]:
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


def _chord_fit(evaluate: _Evaluate, init: FloatArray, inverse: FloatArray, curvature: FloatArray, count: int, *,
               free: int, tol: float, max_iter: int = 50) -> tuple[FloatArray, BoolArray]:
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
        # One matrix-vector product per problem still active: unthreaded, where OpenBLAS's threads
        # for the whole stack at once would fight the pool's threads for the cores.
        rows = np.flatnonzero(active)
        direction = (_centred(gradient[rows], strengths) * scale[rows]).astype(np.float32)[:, None, :] @ inverse
        step = np.zeros_like(x)
        step[rows] = _centred(scale[rows] * direction[:, 0], strengths)
        size = np.abs(step).max(axis=-1)
        x -= step
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


def _centred(x: FloatArray, strengths: int) -> FloatArray:
    """x with its first `strengths` coordinates made mean zero (the directions the data identify)."""
    x = x.copy()
    x[:, :strengths] -= x[:, :strengths].mean(axis=1, keepdims=True)
    return x


def match_kinds(a: ArrayLike, b: ArrayLike, score_a: ArrayLike, score_b: ArrayLike, n: int, *, keep_sides: bool = False,
                counts: ArrayLike | None = None) -> tuple[IndexArray, IndexArray, FloatArray, FloatArray, CountArray]:
    """Distinct matches (first, second, score of first, score of second) and their counts (match m counting
    counts[m] times: default once), in order of pair (first * n + second) and score pair.

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
    counts = np.bincount(kind) if counts is None else np.bincount(kind, weights=counts).astype(np.int64)
    pair, outcome = np.divmod(keys, len(outcomes))
    code_low, code_high = np.divmod(outcomes[outcome], len(values))
    return pair // n, pair % n, values[code_low], values[code_high], counts


def _distinct(keys: IndexArray, bound: int) -> tuple[IndexArray, IndexArray]:
    """np.unique(keys, return_inverse=True) for keys in [0, bound): by counting, when bound allows."""
    if bound > 4 * len(keys) + 4096:
        return np.unique(keys, return_inverse=True)
    present = np.bincount(keys, minlength=bound) > 0
    return np.flatnonzero(present), (np.cumsum(present) - 1)[keys]
