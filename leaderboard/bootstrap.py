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
"""

from __future__ import annotations

import math
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import pandas as pd

from leaderboard.bt import (fit, fit_side, gradient_hessian, match_weights, mean_zero_inverse, side_gradient_hessian,
                            sigmoid, soft_outcomes, to_elo)
from leaderboard.elo import ELO_SCALE, PRIOR_PRECISION

# Batch size bound: replicates x max(match kinds, n^2) <= this, so each
# batch's arrays stay around 32 MB.
_BATCH_CELLS = 1 << 22


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
    first, second, score_first, score_second, kind_counts = _match_kinds(a, b, score_a, score_b, n, side)
    y, w = soft_outcomes(score_first, score_second), match_weights(score_first, score_second, weighting)
    # The kinds laid out in rows of one pair each, padded with kinds that never occur,
    # so that summing a replicate's counts per pair is one batched matrix product.
    slot, pair, width = _grid(first * n + second)
    counts = np.zeros(len(pair) * width, dtype=np.intp)
    counts[slot] = kind_counts
    scores = np.zeros((2, len(pair) * width))
    # Side-blind, a kind adds w*y to W[first, second] and w*(1 - y) to W[second, first];
    # with the side, w*y to S[Pro, Con] and w to A[Pro, Con].
    scores[:, slot] = (w * y, w) if side else (w * y, w * (1 - y))
    up, other = scores.reshape(2, len(pair), width)
    down = (pair % n) * n + pair // n

    def statistics(draws):
        if side:
            return _pair_cells(draws, pair, [(pair, up)], n), _pair_cells(draws, pair, [(pair, other)], n)
        W = _pair_cells(draws, pair, [(pair, up), (down, other)], n)
        return W, W + np.swapaxes(W, -1, -2)

    full = [s[0] for s in statistics(counts[:, None])]
    start = (fit_side if side else fit)(*full, prior=PRIOR_PRECISION)
    inverse = mean_zero_inverse(_hessian(start, *full, side), free=int(side))
    tables = _poisson_tables(counts)
    # Batches within the size bound, a multiple of 4 of them so that 2 or 4 cores
    # finish together; the split depends on the data alone, hence so do the results.
    rounds = max(1, -(-replicates // (4 * max(1, _BATCH_CELLS // max(len(counts), n * n)))))
    batch = max(1, -(-replicates // (4 * rounds)))
    x = np.empty((replicates, n + side))

    def run_batch(first_replicate, seed_sequence):
        # Drawing M matches uniformly with replacement and pooling identical ones
        # is Multinomial(M, counts / M) over the kinds, so draw that directly.
        rng = np.random.default_rng(seed_sequence)
        size = min(batch, replicates - first_replicate)
        stats = statistics(_multinomial(rng, counts, tables, size))
        centre = rng.normal(0.0, 1 / math.sqrt(PRIOR_PRECISION), (size, n + side))
        # Replicates lie close to the full data, so the full-data Hessian serves
        # them all; the few it does not get full Newton.
        gradient = _side_gradient(*stats, centre) if side else _gradient(*stats, centre)
        fitted, converged = _chord_fit(gradient, start, inverse, size, tol=1e-6)
        if not converged.all():
            redo = ~converged
            fitted[redo] = (fit_side if side else fit)(*(s[redo] for s in stats), prior=PRIOR_PRECISION,
                                                       centre=centre[redo], init=start, tol=1e-6)
        x[first_replicate : first_replicate + size] = fitted

    # Threads suffice: the draws and the array maths release the GIL.
    firsts = range(0, replicates, batch)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    with ThreadPoolExecutor(max_workers=cores) as pool:
        list(pool.map(run_batch, firsts, np.random.SeedSequence(seed).spawn(len(firsts))))
    return Replicates(to_elo(x[:, :n], anchor), ELO_SCALE * x[:, n] if side else None)


def _hessian(x, first, second, side):
    """Hessian of the loss under the weak prior at x (leaderboard.bt's), from the full data's (W, N) or, with
    side, (S, A)."""
    n = first.shape[-1]
    P = sigmoid(x[:n, None] - x[None, :n] + (x[n] if side else 0.0))
    if side:
        return side_gradient_hessian(x, P, first, second, np.full(n + 1, PRIOR_PRECISION), 0.0)[1]
    return gradient_hessian(x, P, first.sum(axis=-1), second, np.asarray(PRIOR_PRECISION))[1]


def _multinomial(rng, counts, tables, size):
    """`size` columns of Multinomial(M, counts / M) draws, M = counts.sum(); tables = _poisson_tables(counts).

    Independent Poisson(rate * counts) draws are Multinomial(T, counts / M) given
    their total T, so adding M - T draws of single matches (uniform over the
    data) makes each column exactly Multinomial(M, counts / M). The rate sits
    two standard deviations below 1 so that T > M, which needs T - M draws
    removed at random instead, is rare. Unlike numpy's multinomial (one
    binomial, with its set-up, per category) the bulk of the work is
    vectorised table look-ups.
    """
    total = int(counts.sum())
    draws = np.zeros((len(counts), size))
    for kinds, lowest, threshold, alias in tables:  # Walker's alias method
        u = rng.random((len(kinds), size))
        u *= len(threshold)
        slot = u.astype(np.intp)
        draws[kinds] = np.where(u < threshold[slot], slot, alias[slot]) + lowest
    missing = total - draws.sum(axis=0).astype(np.int64)
    short = np.flatnonzero(missing > 0)
    # The kind of each data match, in kind order: a look-up beats searching the cumulative counts.
    kinds = np.repeat(np.arange(len(counts)), counts)[rng.integers(0, total, missing[short].sum())]
    draws += np.bincount(kinds * size + np.repeat(short, missing[short]), minlength=draws.size).reshape(draws.shape)
    for column in np.flatnonzero(missing < 0):  # remove distinct draws, chosen uniformly among the T
        picks = rng.choice(total - missing[column], -missing[column], replace=False)
        np.subtract.at(draws[:, column], np.searchsorted(np.cumsum(draws[:, column]), picks, side="right"), 1)
    return draws


def _poisson_tables(counts):
    """Alias tables of Poisson(rate * c), rate = 1 - 2 / sqrt(M), for each distinct count c.

    Each is (kinds with count c, lowest value, threshold, alias) and spans the
    mean +- (10 sd + 10), leaving out tails far below float resolution.
    """
    rate = max(0.0, 1 - 2 / math.sqrt(counts.sum()))  # P(T > M) ~ P(Z > 2)
    values, inverse = np.unique(counts, return_inverse=True)
    order = np.argsort(inverse, kind="stable")
    bounds = np.searchsorted(inverse[order], np.arange(len(values) + 1))
    tables = []
    for c, start, stop in zip(values, bounds[:-1], bounds[1:]):
        if c == 0:  # padding: always drawn 0 times
            continue
        mean = rate * c
        spread = 10 * math.sqrt(mean) + 10
        k = np.arange(max(0, math.floor(mean - spread)), math.ceil(mean + spread) + 1)
        if mean > 0:  # log pmf(k) - log pmf(k[0]), by the ratios pmf(k) / pmf(k - 1) = mean / k
            log_pmf = np.concatenate([[0.0], np.cumsum(np.log(mean / k[1:]))])
            pmf = np.exp(log_pmf - log_pmf.max())
        else:  # M <= 4: rate 0, so the fix-up draws every match
            pmf = (k == 0).astype(float)
        prob, alias = _alias_table(pmf / pmf.sum())
        # Slot j = floor(u) of u ~ U(0, len) keeps j when u < j + prob[j].
        tables.append((order[start:stop], k[0], np.arange(len(prob)) + prob, alias))
    return tables


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


def _grid(keys):
    """Slots in rows of `width` for sorted keys, a row holding entries of one key: (slot per entry, key per row, width).

    width is the mean number of entries per key, rounded up, so that padding
    at most about doubles the slots; a key with more entries takes more rows.
    """
    distinct, first, sizes = np.unique(keys, return_index=True, return_counts=True)
    width = -(-len(keys) // len(distinct))
    rows = -(-sizes // width)
    rank = np.arange(len(keys)) - np.repeat(first, sizes)
    slot = (np.repeat(np.cumsum(rows) - rows, sizes) + rank // width) * width + rank % width
    return slot, np.repeat(distinct, rows), width


def _pair_cells(draws, pair, parts, n):
    """Stack of n x n matrices, one per column of `draws`, the counts of the kinds laid out by _grid.

    pair is each row's pair first * n + second; each part (cell of each row, score of
    each slot, as rows) adds to that cell the row's count-weighted sum of scores.
    """
    rows = draws.reshape(len(pair), -1, draws.shape[1])
    head = np.concatenate([[True], pair[1:] != pair[:-1]])  # a pair's first row
    out = np.zeros((n * n, draws.shape[1]))
    for cell, score in parts:
        sums = np.matmul(score[:, None, :], rows)[:, 0]
        out[cell[head]] += sums[head]  # a pair's first rows hit distinct cells
        np.add.at(out, cell[~head], sums[~head])
    return np.ascontiguousarray(out.T).reshape(-1, n, n)


def _chord_fit(gradient, init, inverse, count, *, tol, max_iter=50):
    """Fit of `count` problems by Newton-chord steps x <- x - inverse @ gradient(x).

    One fixed (mean-zero) inverse Hessian serves every problem and step, so
    convergence is linear: with steps shrinking by a ratio r <= 1/2, the error
    left after a step s is about s r / (1 - r), and a problem has converged once
    that is below `tol` (for the first step r counts as 1/2). Also returns which
    problems converged; one whose step fails to halve is given up, as too far
    from where `inverse` holds.
    """
    x = np.repeat(np.asarray(init, dtype=float)[None], count, axis=0)
    converged = np.zeros(count, dtype=bool)
    active = np.ones(count, dtype=bool)
    previous = None
    for _ in range(max_iter):
        if not active.any():
            break
        # Problems stay in the stack once done (their steps zeroed): problems
        # tend to finish together, and gathering the rest would cost a pass.
        step = gradient(x) @ inverse
        size = np.abs(step).max(axis=-1)
        x -= np.where(active[:, None], step, 0.0)
        if previous is None:
            ratio, shrinking = 0.5, True
        else:
            ratio = np.minimum(size / np.maximum(previous, np.finfo(float).tiny), 0.5)
            shrinking = size < previous / 2
        done = active & (size * ratio / (1 - ratio) < tol)
        converged |= done
        active &= ~done & shrinking
        previous = size
    return x, converged


def _gradient(W, N, centre):
    """x -> gradient of bt.fit's loss under the weak prior centred on `centre`, for a stack of problems."""
    wins = W.sum(axis=-1)
    out = np.empty_like(W)  # scratch

    def gradient(theta):
        # sum_j N_ij sigmoid(t_i - t_j) - wins_i, computed in place.
        np.subtract(theta[:, None, :], theta[:, :, None], out=out)
        with np.errstate(over="ignore"):  # exp overflows to inf only where P is 0, and N / inf = 0
            np.exp(out, out=out)
        np.add(out, 1, out=out)
        np.divide(N, out, out=out)
        return out.sum(axis=-1) - wins + PRIOR_PRECISION * (theta - centre)

    return gradient


def _side_gradient(S, A, centre):
    """x -> gradient of bt.fit_side's loss under the weak prior centred on `centre`, for a stack of problems."""
    n = S.shape[-1]
    scored = np.concatenate([S.sum(axis=-1) - S.sum(axis=-2), S.sum(axis=(-2, -1))[:, None]], axis=-1)
    out = np.empty_like(S)  # scratch
    grad = np.empty((len(S), n + 1))

    def gradient(x):
        # The expected Pro scores E_ij = A_ij sigmoid(t_i - t_j + h), computed in place; the
        # gradient is E's row minus column sums (its total for h) less the same of S.
        theta, h = x[:, :n], x[:, n]
        np.subtract(theta[:, None, :], (theta + h[:, None])[:, :, None], out=out)
        with np.errstate(over="ignore"):  # as in _gradient
            np.exp(out, out=out)
        np.add(out, 1, out=out)
        np.divide(A, out, out=out)
        rows = out.sum(axis=-1)
        grad[:, :n] = rows - out.sum(axis=-2)
        grad[:, n] = rows.sum(axis=-1)
        return grad - scored + PRIOR_PRECISION * (x - centre)

    return gradient


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
