"""Bootstrap of the controlled fit (leaderboard.control): exact, or over the n x n cells where that is cheaper.

Model: as leaderboard.bootstrap's, matches resampled with replacement, each replicate refitted under the weak
prior centred on a draw from it. The exact replicates (leaderboard.control.bootstrap) pass over every distinct
match, since each has its own x. Over cells, a replicate draws each kind of match (Pro, Con, y, w) as often as
leaderboard.bootstrap does, and the sum of x - m over a kind's c drawn matches from the kind's moments, as root
s sqrt(c) (m, V = root root^T: the kind's mean and spread of x; s random signs, so that the sum has mean 0 and
covariance c V, for a bit a feature); a cell (Pro, Con) then holds its drawn matches' weight W0, w-weighted
mean mu and spread S of x. The likelihood's outcome term, sum w y eta, is linear in the parameters and taken
whole; its other term, sum w log(1 + e^eta), is taken at the 2K points mu +- sqrt(K) L_j (L L^T = S; the
unscented transform), each of weight W0 / 2K: exact to second order in beta (x - mu), and still a logistic fit,
of 2K pseudo-matches a cell, whatever the number of matches. A replicate then costs the n x n cells' work, not
the matches'.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from leaderboard import bt, control, elo
from leaderboard.bootstrap import CountArray, _chord_fit, _Evaluate, _multinomial, _poisson_tables, _transposed
from leaderboard.bt import BoolArray, FloatArray, IndexArray
from leaderboard.control import Design

Float32Array = NDArray[np.float32]
# Numbers held at once per batch of bootstrap replicates: replicates x the cells' numbers <= this.
_BATCH_CELLS = 1 << 22
# Numbers an array holds per step over a batch's replicates: a few replicates' cells at a time, so that they stay
# in a core's cache (each step's numpy calls then cost little beside the numbers).
_CACHED = 1 << 18
_TOLERANCE = 1e-5  # replicates are fitted to within this many logits, as leaderboard.bootstrap's


def bootstrap(d: Design, *, replicates: int = 1000, seed: int = 0, init: ArrayLike | None = None,
              cells: bool | None = None) -> tuple[FloatArray, FloatArray]:
    """x refitted on `replicates` resamples of the matches with replacement, each under the weak prior centred on
    a draw from it (as leaderboard.bootstrap), in the design's units: (replicates, size); and the fit of the full
    data under the prior (over cells: the cells'), about which they spread. init, a fit of the same matches, saves
    that fit most of its steps. cells: the replicates over the n x n cells (default: where there are at least half
    as many distinct matches as cells, beyond which the cells cost less, and a feature), else exact
    (leaderboard.control's)."""
    if cells if cells is not None else 2 * len(d.count) >= d.n * d.n and d.X.shape[1] > 0:
        return _cells_bootstrap(d, replicates, seed, init)
    return control.bootstrap(d, replicates=replicates, seed=seed, init=init)


def _in_batches(run: Callable[[np.random.Generator, int, int], None], replicates: int, batch: int,
                seed: int) -> None:
    """run(rng, first, size) for each batch of replicates on a thread pool, each batch with its own child seed, so
    that the result depends on the seed and the batch size only."""
    firsts = range(0, replicates, batch)
    seeds = np.random.SeedSequence(seed).spawn(len(firsts))

    def one(k: int) -> None:
        run(np.random.default_rng(seeds[k]), firsts[k], min(batch, replicates - firsts[k]))

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    with ThreadPoolExecutor(max_workers=cores) as pool:  # the draws and the array maths release the GIL
        list(pool.map(one, range(len(firsts))))


@dataclass(frozen=True)
class _Kinds:
    """A Design's matches pooled by kind (Pro, Con, y, w), and what a replicate's cells are summed from.

    counts (in the kinds' own order) and drawing (leaderboard.bootstrap._poisson_tables) draw the kinds; slot is
    the place (outcome o of the O distinct (y, w), cell a n + b: o n^2 + a n + b) of each row of the draws. A
    replicate's statistics of each cell are linear in its values per slot (the count c drawn, then r_a = sqrt(c)
    s_a per feature and q_ab = s_a s_b [c > 0] per pair a < b of them, s random signs): statistic t of cell c is
    sum_k coefficients[t, k, c] values[k, c], k over the value kinds and outcomes. centre (K, n^2):
    each cell's w-weighted mean x."""

    counts: CountArray
    drawing: tuple[list[tuple[int, int, NDArray[np.signedinteger[Any]], FloatArray, IndexArray]], IndexArray]
    slot: IndexArray
    outcomes: int
    coefficients: Float32Array
    centre: Float32Array
    side: bool


def _pairs(K: int, distinct: bool = False) -> list[tuple[int, int]]:
    """The (j, l), j <= l (j < l if distinct), of a symmetric K x K matrix's entries, in the order W2 holds them."""
    return [(j, l) for j in range(K) for l in range(j + distinct, K)]


def _kinds(d: Design) -> _Kinds:
    """The Design's matches pooled by kind (leaderboard.control's Design pools identical matches only).

    A kind's c drawn matches sum to c m + e in x (m its mean, e = root s sqrt(c)), about their cell's centre to
    W1 = w (c o + e), o = m - centre, and W2 = w (c (o o^T + V) + o e^T + e o^T + [c > 0] root (s s^T - I)
    root^T): c d d^T, d = o + e / c their mean, plus their spread about it at its mean, (c - 1) V; positive
    semi-definite, as a spread must be, and of mean c (o o^T + V). The statistics are W0 = w c, W0 y, W1, W2
    (_pairs) and the outcome term's sum w y (c m + e)."""
    n, K = d.n, d.X.shape[1]
    outcome, outcomes = pd.factorize(pd.factorize(d.y, sort=True)[0] * len(d.w) + pd.factorize(d.w, sort=True)[0],
                                     sort=True)
    codes = pd.factorize((d.a * n + d.b).astype(np.int64) * len(outcomes) + outcome, sort=True)[0]
    kinds = int(codes.max()) + 1
    counts: FloatArray = np.bincount(codes, weights=d.count, minlength=kinds).astype(float)
    first = np.zeros(kinds, dtype=np.intp)
    first[codes[::-1]] = np.arange(len(codes))[::-1]  # a row of each kind: its Pro, Con, y, w
    cell, w, wy = d.a[first] * n + d.b[first], d.w[first], d.w[first] * d.y[first]
    mean = np.stack([np.bincount(codes, weights=d.count * d.X[:, j], minlength=kinds) for j in range(K)]) / counts
    deviation = d.X.T - mean[:, codes]
    spread = np.stack([np.stack([np.bincount(codes, weights=d.count * deviation[j] * deviation[l], minlength=kinds)
                                 for l in range(K)]) for j in range(K)]) / counts
    held = np.bincount(cell, weights=counts * w, minlength=n * n)
    centre = np.stack([np.bincount(cell, weights=counts * w * mean[j], minlength=n * n) for j in range(K)])
    centre = np.divide(centre, held, out=np.zeros_like(centre), where=held > 0)
    offset = mean - centre[:, cell]
    values, vectors = np.linalg.eigh(spread.transpose(2, 0, 1))
    root = (vectors * np.sqrt(np.maximum(values, 0.0))[:, None, :]).transpose(1, 2, 0)  # root root^T = spread
    O, pairs, signs = len(outcomes), _pairs(K), _pairs(K, distinct=True)
    o = outcome[first]
    coefficients = np.zeros((2 + 2 * K + len(pairs), (1 + K + len(signs)) * O, n * n), dtype=np.float32)

    def put(statistic: int, column: int, value: FloatArray) -> None:
        """Each kind's coefficient of value `column` (0: c, 1 + a: r_a, 1 + K + p: q of signs[p]) in statistic."""
        coefficients[statistic, column * O + o, cell] = value

    put(0, 0, w)
    put(1, 0, wy)
    for j in range(K):
        put(2 + j, 0, w * offset[j])
        put(2 + K + len(pairs) + j, 0, wy * mean[j])
        for a in range(K):
            put(2 + j, 1 + a, w * root[j, a])
            put(2 + K + len(pairs) + j, 1 + a, wy * root[j, a])
    for s, (j, l) in enumerate(pairs):
        put(2 + K + s, 0, w * (offset[j] * offset[l] + spread[j, l]))
        for a in range(K):
            put(2 + K + s, 1 + a, w * (offset[j] * root[l, a] + offset[l] * root[j, a]))
        for p, (a, b) in enumerate(signs):
            put(2 + K + s, 1 + K + p, w * (root[j, a] * root[l, b] + root[j, b] * root[l, a]))
    drawing = _poisson_tables(counts.astype(np.int64))
    slot = (o * n * n + cell)[drawing[1]]
    return _Kinds(counts.astype(np.int64), drawing, slot, O, coefficients, centre.astype(np.float32), d.side)


@dataclass(frozen=True)
class _Cells:
    """Replicates' cells as the chord fit reads them: each cell's weight W0 / 2K at each of its 2K points
    (replicates, n, n) and the points (replicates, 2K, K, n, n), in float32; and each replicate's outcome term
    (replicates, size)."""

    weight: Float32Array
    points: Float32Array
    scored: FloatArray


def _cells(kinds: _Kinds, draws: NDArray[np.floating[Any]], rng: np.random.Generator | None, n: int) -> _Cells:
    """The cells of replicates drawing draws[row, r] of each kind (rows: as kinds.slot), their signs s from rng
    (None: the data's own cells, draws its counts, e = 0); a few replicates at a time, within a core's cache."""
    K, side, O = kinds.centre.shape[0], kinds.side, kinds.outcomes
    cells, size = n * n, draws.shape[1]
    columns = kinds.coefficients.shape[1]
    weight = np.empty((size, cells), dtype=np.float32)
    points = np.empty((size, 2 * K, K, cells), dtype=np.float32)
    scored = np.empty((size, n + side + K))
    counts = _transposed(draws)  # a row per replicate
    step = max(1, _CACHED // (columns * cells))
    values = np.zeros((min(step, size), columns, cells), dtype=np.float32)  # empty slots stay 0
    # Where each replicate's counts go in the flat values: a flat index beats a fancy index over two axes.
    places = (kinds.slot + np.arange(len(values))[:, None] * columns * cells).reshape(-1)
    pairs = _pairs(K)
    # The values each statistic reads: W0 and W0 y the counts alone, the rest the signs' terms too.
    used = [O if t < 2 else columns for t in range(2 + K + len(pairs))]
    for first in range(0, size, step):
        rows = slice(first, min(first + step, size))
        here = values[: rows.stop - first]
        values.reshape(-1)[places[: len(here) * counts.shape[1]]] = counts[rows].reshape(-1)
        if rng is not None:
            c = here[:, :O]
            bits = np.unpackbits(rng.integers(0, 256, (K * c.size + 7) // 8, dtype=np.uint8))[: K * c.size]
            sign = bits.reshape(K, *c.shape).astype(np.float32) * np.float32(-2) + np.float32(1)
            for a in range(K):  # r_a = sqrt(c) s_a
                np.multiply(np.sqrt(c), sign[a], out=here[:, O * (1 + a) : O * (2 + a)])
            for p, (a, b) in enumerate(_pairs(K, distinct=True)):  # q_ab = s_a s_b [c > 0]
                np.multiply(sign[a] * sign[b], c > 0, out=here[:, O * (1 + K + p) : O * (2 + K + p)])
        S = [np.einsum("rkc,kc->rc", here[:, : used[t]], kinds.coefficients[t, : used[t]])
             for t in range(2 + K + len(pairs))]
        won = S[1].reshape(len(here), n, n)
        scored[rows, :n] = won.sum(axis=2, dtype=np.float64) - won.sum(axis=1, dtype=np.float64)
        if side:
            scored[rows, n] = won.sum(axis=(1, 2), dtype=np.float64)
        for j in range(K):  # einsum, not BLAS: OpenBLAS's threads would spin beside the pool's for a product this small
            scored[rows, n + side + j] = np.einsum("rkc,kc->r", here, kinds.coefficients[2 + K + len(pairs) + j])
        share = 1 / np.maximum(S[0], np.finfo(np.float32).tiny)  # a cell drawn has W0 >= the least w; else W1 = 0
        mean = [S[2 + j] * share for j in range(K)]
        L = _cholesky({(j, l): S[2 + K + s] * share - mean[j] * mean[l] for s, (j, l) in enumerate(pairs)}, K)
        np.multiply(S[0], np.float32(1 / (2 * K)), out=weight[rows])
        for j in range(K):
            middle = kinds.centre[j] + mean[j]
            for q in range(K):
                shift = np.sqrt(K, dtype=np.float32) * L[j, q] if j >= q else np.float32(0)
                np.add(middle, shift, out=points[rows, 2 * q, j])
                np.subtract(middle, shift, out=points[rows, 2 * q + 1, j])
    return _Cells(weight.reshape(size, n, n), points.reshape(size, 2 * K, K, n, n), scored)


def _cholesky(S: dict[tuple[int, int], Float32Array], K: int) -> dict[tuple[int, int], Float32Array]:
    """L (lower, keys (j, l) with j >= l) with L L^T = S (keys j <= l), elementwise over S's arrays; S positive
    semi-definite, so a column whose pivot is 0 is 0."""
    L: dict[tuple[int, int], Float32Array] = {}
    for l in range(K):
        pivot = np.sqrt(np.maximum(S[l, l] - sum((L[l, q] ** 2 for q in range(l)), np.float32(0)), 0))
        L[l, l] = pivot
        for j in range(l + 1, K):
            rest = S[l, j] - sum((L[j, q] * L[l, q] for q in range(l)), np.float32(0))
            L[j, l] = np.where(pivot > 0, rest / np.where(pivot > 0, pivot, 1), 0)
    return L


def _cells_evaluator(cells: _Cells, precision: FloatArray, centre: FloatArray, side: bool) -> _Evaluate:
    """(x, rescale, which) -> the gradient of the cells' loss (the module's) under the weak prior centred on
    `centre` for the replicates `which`; with rescale also the Hessian's diagonal; and that every one holds
    (leaderboard.bootstrap._chord_fit's evaluate)."""
    n = cells.weight.shape[1]
    chunk = max(1, _CACHED // (n * n))

    def evaluate(x: FloatArray, rescale: bool, which: BoolArray) -> tuple[FloatArray, FloatArray | None, BoolArray]:
        rows = np.flatnonzero(which)
        gradient = np.zeros_like(x)
        diagonal = np.ones_like(x) if rescale else None  # left alone for problems not evaluated
        for start in range(0, len(rows), chunk):
            stop = min(start + chunk, len(rows))
            some: IndexArray | slice = rows[start:stop]
            if rows[stop - 1] - rows[start] == stop - start - 1:  # a run of replicates: read in place, not copied
                some = slice(rows[start], rows[stop - 1] + 1)
            expected, curvature = _cell_sums(cells, some, x[some], side, rescale)
            gradient[some] = expected - cells.scored[some] + precision * (x[some] - centre[some])
            if diagonal is not None and curvature is not None:
                diagonal[some] = curvature + precision
        return gradient, diagonal, np.ones(len(x), dtype=bool)

    return evaluate


def _cell_sums(cells: _Cells, rows: IndexArray | slice, x: FloatArray, side: bool,
               curvature: bool) -> tuple[FloatArray, FloatArray | None]:
    """For replicates `rows` at x: the gradient of sum weight log(1 + e^eta) over every cell's points, eta = t_a -
    t_b [+ h] + beta . point; with curvature also the diagonal of its Hessian."""
    n, K = cells.weight.shape[1], cells.points.shape[2]
    t = x[:, :n].astype(np.float32)
    negative = t[:, None, :] - t[:, :, None]  # -eta's strengths' part, so that no pass negates eta
    if side:
        negative -= x[:, n, None, None].astype(np.float32)
    beta = -x[:, n + side :].astype(np.float32)
    weight = cells.weight[rows]
    G, C = np.zeros_like(negative), np.zeros_like(negative)
    P, wP = np.empty_like(negative), np.empty_like(negative)
    beta_sums, beta_curvature = np.zeros((len(x), K)), np.zeros((len(x), K))
    for q in range(cells.points.shape[1]):
        points = cells.points[rows, q]  # (rows, K, n, n)
        np.multiply(points[:, 0], beta[:, 0, None, None], out=P)
        for j in range(1, K):
            P += points[:, j] * beta[:, j, None, None]
        P += negative
        with np.errstate(over="ignore"):  # e^-eta = inf gives P = 0, its limit
            np.exp(P, out=P)
        P += 1
        np.reciprocal(P, out=P)
        np.multiply(weight, P, out=wP)
        G += wP
        beta_sums += np.einsum("rij,rkij->rk", wP, points)
        if curvature:
            np.subtract(1, P, out=P)
            wP *= P  # w P (1 - P)
            C += wP
            beta_curvature += np.einsum("rij,rkij,rkij->rk", wP, points, points)
    ones = np.ones(n, dtype=np.float32)
    # Row and column sums as matrix-vector products: faster than numpy's sums, and summed in blocks.
    expected = [(G @ ones).astype(np.float64) - (ones @ G).astype(np.float64)]
    if side:
        expected.append(G.sum(axis=(1, 2), dtype=np.float64)[:, None])
    if not curvature:
        return np.concatenate([*expected, beta_sums], axis=1), None
    diagonal = [(C @ ones).astype(np.float64) + (ones @ C).astype(np.float64)]
    if side:
        diagonal.append(C.sum(axis=(1, 2), dtype=np.float64)[:, None])
    return np.concatenate([*expected, beta_sums], axis=1), np.concatenate([*diagonal, beta_curvature], axis=1)


def _cell_newton(cells: _Cells, rows: IndexArray, precision: FloatArray, centre: FloatArray,
                 init: ArrayLike | None) -> FloatArray:
    """The replicates `rows` refitted by leaderboard.bt's damped Newton, in double: the minimum of the cells' loss,
    sum weight log(1 + e^eta) over every cell's points less the outcome term scored . x, plus precision/2 |x -
    centre[r]|^2."""
    n, size = cells.weight.shape[1], cells.scored.shape[1]
    weight, points, scored = (cells.weight[rows, None].astype(float), cells.points[rows].astype(float),
                              cells.scored[rows])

    def objective(x: FloatArray) -> tuple[FloatArray, FloatArray]:
        eta = _cell_logits(points, x, n)
        loss = ((weight * np.logaddexp(0, eta)).sum(axis=(1, 2, 3)) - np.sum(scored * x, axis=1)
                + 0.5 * np.sum(precision * (x - centre) ** 2, axis=1))
        return loss, bt.sigmoid(eta)

    def newton_step(x: FloatArray, P: FloatArray) -> tuple[FloatArray, FloatArray]:
        gradient, hessian = _cell_derivatives(weight * P, weight * P * (1 - P), points, size - n)
        gradient += precision * (x - centre) - scored
        hessian[:, np.arange(size), np.arange(size)] += precision
        return gradient, bt._mean_zero_newton_step(gradient, hessian, free=size - n)

    x = bt._damped_newton(bt._start(init, (len(rows), size), n), objective, newton_step, _TOLERANCE, 100)
    x[:, :n] -= x[:, :n].mean(axis=1, keepdims=True)
    return x


def _cell_logits(points: FloatArray, x: FloatArray, n: int) -> FloatArray:
    """eta[r, q, a, b] = t_a - t_b [+ h] + beta . points[r, q, :, a, b] for each row of x."""
    K = points.shape[2]
    eta: FloatArray = np.einsum("rk,rqkij->rqij", x[:, -K:], points)
    eta += (x[:, :n, None] - x[:, None, :n])[:, None]
    if x.shape[1] > n + K:  # the side
        eta += x[:, n, None, None, None]
    return eta


def _cell_derivatives(first: FloatArray, second: FloatArray, points: FloatArray,
                      free: int) -> tuple[FloatArray, FloatArray]:
    """The gradient and Hessian of sum weight log(1 + e^eta) over every cell's points, from the derivatives of each
    point's term by eta: first (weight P) and second (weight P (1 - P)), (rows, points, n, n)."""
    n, K = points.shape[-1], points.shape[2]
    side = free > K
    G, C = first.sum(axis=1), second.sum(axis=1)
    gradient = [G.sum(axis=2) - G.sum(axis=1), *([G.sum(axis=(1, 2))[:, None]] if side else []),
                np.einsum("rqij,rqkij->rk", first, points)]
    hessian = np.zeros((len(first), n + free, n + free))
    hessian[:, : n + side, : n + side] = bt.pair_form(C, side)
    cross = np.einsum("rqij,rqkij->rkij", second, points)  # each coefficient with eta's other terms
    for j in range(K):
        column = [cross[:, j].sum(axis=2) - cross[:, j].sum(axis=1), *([cross[:, j].sum(axis=(1, 2))[:, None]]
                                                                      if side else [])]
        hessian[:, : n + side, n + side + j] = hessian[:, n + side + j, : n + side] = np.concatenate(column, axis=1)
    hessian[:, n + side :, n + side :] = np.einsum("rqij,rqkij,rqlij->rkl", second, points, points)
    return np.concatenate(gradient, axis=1), hessian


def _cells_bootstrap(d: Design, replicates: int, seed: int, init: ArrayLike | None) -> tuple[FloatArray, FloatArray]:
    """bootstrap with every replicate over the cells, about the cells' own fit of the data: refitted by chord steps
    with the data's cells' Hessian under the prior (leaderboard.bootstrap._chord_fit), the few that do not converge
    by damped Newton (_cell_newton). Batches run on a thread pool, each with its own child seed."""
    kinds = _kinds(d)
    K = d.X.shape[1]
    precision = d.precision_of(elo.PRIOR_PRECISION)[0]
    data = _cells(kinds, kinds.counts[kinds.drawing[1], None].astype(np.float32), None, d.n)
    start = _cell_newton(data, np.zeros(1, dtype=np.intp), precision, np.zeros(d.size), init)[0]
    weight, points = data.weight[:, None].astype(float), data.points.astype(float)
    P = bt.sigmoid(_cell_logits(points, start[None], d.n))
    hessian = _cell_derivatives(weight * P, weight * P * (1 - P), points, d.size - d.n)[1][0] + np.diag(precision)
    inverse = bt.mean_zero_inverse(hessian, free=d.size - d.n)
    batch = max(1, min(replicates, _BATCH_CELLS // (d.n * d.n * max(kinds.coefficients.shape[1], 1 + 2 * K * K))))
    x = np.empty((replicates, d.size))

    def run(rng: np.random.Generator, first: int, size: int) -> None:
        draws = _multinomial([rng], kinds.counts, kinds.drawing, [size])
        centre = rng.normal(0.0, 1 / np.sqrt(precision), (size, d.size))
        cells = _cells(kinds, draws, rng, d.n)
        evaluate = _cells_evaluator(cells, precision, centre, d.side)
        fitted, converged = _chord_fit(evaluate, start, inverse, np.diag(hessian), size, free=d.size - d.n,
                                       tol=_TOLERANCE)
        redo = np.flatnonzero(~converged)
        if len(redo):
            fitted[redo] = _cell_newton(cells, redo, precision, centre[redo], start)
        x[first : first + size] = fitted

    _in_batches(run, replicates, batch, seed)
    return x, start
