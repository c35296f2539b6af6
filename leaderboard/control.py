"""Controlled Bradley–Terry: ratings net of what judges reward besides the debating (length, citations, markdown).

Model: P(Pro a beats Con b) = sigmoid(t_a - t_b [+ h] + sum_k beta_k x_k), where x_k = (pro_k - con_k) /
(pro_k + con_k) is the contrast of style feature k over the match's speeches (contrast), fitted jointly in
(t, h, beta) by maximising leaderboard.bt's weighted soft likelihood. A rating is then what an entry wins
with the features level; beta_k is how much the judge rewards feature k, in logits per unit of x.

As in leaderboard.bt, the strengths take the weak prior only where their MLE does not exist, while h and each
beta always have one (one more observation each: without it a feature that never varies would leave its
coefficient unidentified). Beta's is the strengths' N(0, 1/PRIOR_PRECISION) put on the effect of a typical
difference, beta times the spread of x (precision PRIOR_PRECISION var(x)), so that a feature whose x varies
little, as length does between similar debaters, is not pulled to 0 (Design.precision_of).

Matches do not reduce to n x n statistics here, since each has its own x, so the fit, the sandwich and the
bootstrap pass over the distinct matches (identical ones pooled, with counts); leaderboard.control_bootstrap
gives bootstrap replicates over n x n cells instead, where that is cheaper.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from statistics import NormalDist
from typing import cast

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy import sparse

from leaderboard import bt, elo
from leaderboard.bootstrap import _chord_fit, _Evaluate, _multinomial, _poisson_tables
from leaderboard.bt import BoolArray, FloatArray, IndexArray

# Numbers held at once per batch of bootstrap replicates: replicates x distinct matches <= this.
_BATCH_CELLS = 1 << 22
_TOLERANCE = 1e-5  # replicates are fitted to within this many logits, as leaderboard.bootstrap's
# The least spread (variance) of a feature the coefficient's prior is set by, in the design's units (a feature's
# mean square is 1): x varying by less than a ten-thousandth of its size cannot be told from the strengths in
# doubles, and its coefficient, left a prior that weak, made the Hessian singular (words 1,000,000 and 999,999 to 1).
_LEAST_SPREAD = 1e-8


def contrast(pro: ArrayLike, con: ArrayLike) -> FloatArray:
    """x = (pro - con) / (pro + con): one side's share of a feature as a difference in [-1, 1]; 0 where both are 0.
    Any finite counts give a finite x: where 2 pro or pro + con could overflow, both are halved first."""
    pro, con = np.asarray(pro, dtype=float), np.asarray(con, dtype=float)
    huge = np.maximum(pro, con) > np.finfo(float).max / 4
    if huge.any():  # halving is exact, and keeps the ratio
        pro, con = np.where(huge, pro / 2, pro), np.where(huge, con / 2, con)
    total = pro + con
    # np.divide with out= is typed as returning Any by numpy's stubs; out is a float array.
    return cast(FloatArray, np.divide(2 * pro - total, total, out=np.zeros_like(total), where=total > 0))


@dataclass(frozen=True)
class Design:
    """Distinct matches as the fit reads them: a (Pro) vs b (Con), soft outcome y, weight w, how many identical
    matches each stands for (count), features X (matches x K) divided by `scale`; n entries, the side fitted or
    not; `signs` the sparse matches x n matrix of e_a - e_b and `cells` the sparse matches x n^2 one-hot of the
    cell a n + b.

    Each feature is divided by its root mean square over the matches (scale; 1 for one that is 0 throughout), so
    that its coefficient is as well conditioned whether x varies by halves or by millionths (a feature that
    varied by 1e-6 on one match of 40 left Newton short of convergence). fit, covariance and bootstrap work in
    these units; per_unit and per_unit_variance turn their results back to per unit of x. The model is the
    same: the prior (precision_of) is put on the coefficient per unit of x, as before the division."""

    a: IndexArray
    b: IndexArray
    y: FloatArray
    w: FloatArray
    count: FloatArray
    X: FloatArray
    n: int
    side: bool
    signs: sparse.csr_matrix
    cells: sparse.csr_matrix
    scale: FloatArray

    @property
    def size(self) -> int:
        """Parameters: n strengths, the Pro advantage when fitted, a coefficient per feature."""
        return self.n + int(self.side) + int(self.X.shape[1])

    @property
    def _units(self) -> FloatArray:
        """Each parameter's unit over its unit in fit's results: 1 for the strengths and the side, scale for the
        coefficients."""
        return np.concatenate([np.ones(self.n + int(self.side)), self.scale])

    def per_unit(self, x: FloatArray) -> FloatArray:
        """Parameter rows of fit or bootstrap with the coefficients per unit of x."""
        return x / self._units

    def per_unit_variance(self, variance: FloatArray) -> FloatArray:
        """Parameter variances (covariance's diagonal) with the coefficients' per unit of x."""
        return variance / self._units**2

    def precision_of(self, ridge: ArrayLike) -> FloatArray:
        """The prior's precision on every parameter: `ridge` on the strengths (one per problem), PRIOR_PRECISION on
        h, and on beta_k PRIOR_PRECISION times the variance of x_k over the matches (at least _LEAST_SPREAD;
        PRIOR_PRECISION per unit of x where x_k never varies): (problems, size)."""
        ridge = np.atleast_1d(np.asarray(ridge, dtype=float))
        spread = np.zeros(self.X.shape[1])
        if len(self.X):
            mean = np.average(self.X, axis=0, weights=self.count)
            spread = np.average((self.X - mean) ** 2, axis=0, weights=self.count)
        # In the design's units a coefficient is scale times one per unit of x, so its precision 1 / scale^2 times.
        spread = np.where(spread > 0, np.maximum(spread, _LEAST_SPREAD), 1.0 / self.scale**2)
        fixed = np.r_[[elo.PRIOR_PRECISION] * self.side, elo.PRIOR_PRECISION * spread]
        return np.concatenate([np.repeat(ridge[:, None], self.n, axis=1), np.tile(fixed, (len(ridge), 1))], axis=1)


def design(a: ArrayLike, b: ArrayLike, y: ArrayLike, w: ArrayLike, X: ArrayLike, n: int, *,
           side: bool = False) -> Design:
    """The Design of matches a[m] vs b[m] (outcome y, weight w, features X, which must be finite), identical
    matches pooled."""
    a, b = np.asarray(a, dtype=np.intp), np.asarray(b, dtype=np.intp)
    y, w = np.asarray(y, dtype=float), np.asarray(w, dtype=float)
    X = np.asarray(X, dtype=float).reshape(len(a), -1)
    if not np.isfinite(X).all():
        raise ValueError("features must be finite numbers (contrast gives them from any finite counts)")
    count = np.ones(len(a))
    if len(a):
        a, b, y, w, count, X = _pooled(a, b, y, w, X)
    rms = np.sqrt(np.average(X**2, axis=0, weights=count)) if len(a) else np.ones(X.shape[1])
    scale = np.where(rms > 0, rms, 1.0)
    m = np.arange(len(a))
    signs = sparse.csr_matrix((np.r_[np.ones(len(a)), -np.ones(len(a))], (np.r_[m, m], np.r_[a, b])),
                              shape=(len(a), n))
    cells = sparse.csr_matrix((np.ones(len(a)), (m, a * n + b)), shape=(len(a), n * n))
    return Design(a, b, y, w, count, X / scale, n, bool(side), signs, cells, scale)


def _pooled(a: IndexArray, b: IndexArray, y: FloatArray, w: FloatArray,
            X: FloatArray) -> tuple[IndexArray, IndexArray, FloatArray, FloatArray, FloatArray, FloatArray]:
    """Identical matches (a, b, y, w, X) as one, with their count, in the order of (a, b, y, w, X)."""
    # Each column coded (pandas' hashing) and the codes combined into one integer, recoded only where the product of
    # the columns' numbers of values could overflow: a row-wise sort of the columns took seconds at a million matches.
    code, values = np.zeros(len(a), dtype=np.int64), 1
    for column in (a, b, y, w, *X.T):
        codes, distinct = pd.factorize(column, sort=True)
        if values * len(distinct) >= 2**62:
            code, kept = pd.factorize(code, sort=True)
            values = len(kept)
        code, values = code * len(distinct) + codes, values * len(distinct)
    code = pd.factorize(code, sort=True)[0]
    count = np.bincount(code).astype(float)
    first = np.empty(len(count), dtype=np.intp)
    first[code[::-1]] = np.arange(len(code))[::-1]  # the first row of each
    return a[first], b[first], y[first], w[first], count, X[first]


def _logits(d: Design, x: FloatArray) -> FloatArray:
    """eta[r, m] = t_a - t_b [+ h] + X beta for each parameter row x[r]."""
    eta = np.asarray(d.signs @ x[:, : d.n].T).T
    if d.side:
        eta += x[:, d.n, None]
    return eta + x[:, d.n + d.side :] @ d.X.T


def _loss(d: Design, x: FloatArray, weights: FloatArray, precision: FloatArray,
          centre: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Negative penalised log-likelihood per row of x (matches weighted by weights[r]), and P = sigmoid(eta)."""
    eta = _logits(d, x)
    # y log P + (1 - y) log (1 - P), with log P = -log(1 + e^-eta) computed without overflow.
    nll = np.einsum("rm,rm->r", weights, d.y * np.logaddexp(0, -eta) + (1 - d.y) * np.logaddexp(0, eta))
    return nll + 0.5 * np.sum(precision * (x - centre) ** 2, axis=-1), bt.sigmoid(eta)


def _gradient(d: Design, x: FloatArray, P: FloatArray, weights: FloatArray, precision: FloatArray,
              centre: FloatArray) -> FloatArray:
    """Gradient of _loss: the design's transpose applied to each match's w (P - y), plus the prior's."""
    return _transposed(d, weights * (P - d.y)) + precision * (x - centre)


def _transposed(d: Design, r: FloatArray) -> FloatArray:
    """D^T r for each row of r (r[row, match]), D the design matrix (e_a - e_b [, 1], x)."""
    parts = [np.asarray(d.signs.T @ r.T).T]
    if d.side:
        parts.append(r.sum(axis=1, keepdims=True))
    parts.append(r @ d.X)
    return np.concatenate(parts, axis=1)


def form(d: Design, c: FloatArray) -> FloatArray:
    """D^T diag(c[r]) D for each row of c: the Fisher information when c = w P (1 - P), the sandwich's meat when
    c = (w (y - P))^2."""
    n, side, k = d.n, d.side, d.X.shape[1]
    summed = np.asarray(d.cells.T @ c.T).T.reshape(len(c), n, n)
    out = np.zeros((len(c), d.size, d.size))
    out[:, : n + side, : n + side] = bt.pair_form(summed, side)
    for j in range(k):
        cross = _transposed(d, c * d.X[:, j])  # (e_a - e_b [, 1], x) x_j
        out[:, : n + side, n + side + j] = out[:, n + side + j, : n + side] = cross[:, : n + side]
        out[:, n + side + j, n + side :] = cross[:, n + side :]
    return out


def fit(d: Design, *, ridge: ArrayLike, weights: FloatArray | None = None, centre: ArrayLike = 0.0,
        init: ArrayLike | None = None, tol: float = 1e-10, max_iter: int = 100) -> FloatArray:
    """x = (t, [h,] beta) maximising the controlled likelihood less the prior's precision/2 |x - centre|^2
    (Design.precision_of: `ridge` on t, one per problem; 0 asks for the MLE of t, which must exist), per row of
    weights (the matches' counts in each of a stack of problems; default: the data's), t mean zero; beta, centre
    and init in the design's units (Design.per_unit). leaderboard.bt.NotConverged if Newton does not converge."""
    weights = (d.count if weights is None else weights) * d.w
    weights = weights.reshape(-1, len(d.w))
    problems = len(weights)
    precision = d.precision_of(np.broadcast_to(np.asarray(ridge, dtype=float), (problems,)))
    centre = np.broadcast_to(np.asarray(centre, dtype=float), (problems, d.size))
    free = d.size - d.n

    def newton_step(x: FloatArray, P: FloatArray) -> tuple[FloatArray, FloatArray]:
        grad = _gradient(d, x, P, weights, precision, centre)
        hess = form(d, weights * P * (1 - P))
        hess[:, np.arange(d.size), np.arange(d.size)] += precision
        return grad, bt._mean_zero_newton_step(grad, hess, free=free)

    start = bt._start(init, (problems, d.size), d.n)
    x = bt._damped_newton(start, lambda x: _loss(d, x, weights, precision, centre), newton_step, tol, max_iter)
    x[:, : d.n] -= x[:, : d.n].mean(axis=1, keepdims=True)
    return x


def covariance(d: Design, x: FloatArray) -> FloatArray:
    """Sandwich covariance B^-1 M B^-1 of x under the weak prior on every coordinate, clustered by match (as
    bt.sandwich_covariance): B the Fisher information, M the summed outer squares of the match scores."""
    P = bt.sigmoid(_logits(d, x[None]))[0]
    ridge: FloatArray = np.diag(d.precision_of(elo.PRIOR_PRECISION)[0])
    bread = bt.mean_zero_inverse(form(d, (d.count * d.w * P * (1 - P))[None])[0] + ridge, free=d.size - d.n)
    meat: FloatArray = form(d, (d.count * (d.w * (d.y - P)) ** 2)[None])[0] + ridge
    return bread @ meat @ bread


def bootstrap(d: Design, *, replicates: int = 1000, seed: int = 0,
              init: ArrayLike | None = None) -> tuple[FloatArray, FloatArray]:
    """x refitted on `replicates` resamples of the matches with replacement, each under the weak prior centred on
    a draw from it (as leaderboard.bootstrap), in logits: (replicates, size); and the full data's fit under the
    prior, about which they spread. init, a fit of the same matches, saves that fit most of its steps.

    Each replicate is refitted by chord steps with the full data's Hessian under the prior, rescaled to the
    replicate's own curvature (leaderboard.bootstrap._chord_fit); the few that do not converge get full Newton.
    Batches run on a thread pool, each with its own child seed, so the result depends on the seed and the data
    only.
    """
    counts = d.count.astype(np.int64)
    drawing = _poisson_tables(counts)
    order = drawing[1]
    # The matches as the draws' rows hold them: in the order they are drawn.
    drawn = Design(d.a[order], d.b[order], d.y[order], d.w[order], d.count[order], d.X[order], d.n, d.side,
                   d.signs[order], d.cells[order], d.scale)
    start = fit(d, ridge=elo.PRIOR_PRECISION, init=init)[0]
    P = bt.sigmoid(_logits(d, start[None]))[0]
    precision = d.precision_of(elo.PRIOR_PRECISION)[0]
    hessian = form(d, (d.count * d.w * P * (1 - P))[None])[0] + np.diag(precision)
    inverse = bt.mean_zero_inverse(hessian, free=d.size - d.n)
    batch = max(1, min(replicates, _BATCH_CELLS // max(1, len(counts))))
    firsts = range(0, replicates, batch)
    seeds = np.random.SeedSequence(seed).spawn(len(firsts))
    x = np.empty((replicates, d.size))

    def run(k: int) -> None:
        rng = np.random.default_rng(seeds[k])
        size = min(batch, replicates - firsts[k])
        draws = _multinomial([rng], counts, drawing, [size]).T * drawn.w
        centre = rng.normal(0.0, 1 / np.sqrt(precision), (size, d.size))
        evaluate = _evaluator(drawn, draws, precision, centre)
        fitted, converged = _chord_fit(evaluate, start, inverse, np.diag(hessian), size, free=d.size - d.n,
                                       tol=_TOLERANCE)
        redo = np.flatnonzero(~converged)
        if len(redo):
            fitted[redo] = fit(drawn, ridge=elo.PRIOR_PRECISION, weights=draws[redo] / drawn.w, centre=centre[redo],
                               init=start, tol=_TOLERANCE)
        x[firsts[k] : firsts[k] + size] = fitted

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    with ThreadPoolExecutor(max_workers=cores) as pool:
        list(pool.map(run, range(len(firsts))))
    return x, start


def _evaluator(d: Design, weights: FloatArray, precision: FloatArray, centre: FloatArray) -> _Evaluate:
    """(x, rescale, which) -> the gradient of the controlled loss under the weak prior centred on `centre` for the
    problems `which` of a stack (the matches weighted weights[r]: count times w); with rescale also the
    Hessian's diagonal; and that every problem holds (leaderboard.bootstrap._chord_fit's evaluate)."""
    touches = abs(d.signs)  # each match's two entries

    def evaluate(x: FloatArray, rescale: bool, which: BoolArray) -> tuple[FloatArray, FloatArray | None, BoolArray]:
        rows = np.flatnonzero(which)
        gradient = np.zeros_like(x)
        P = bt.sigmoid(_logits(d, x[rows]))
        gradient[rows] = (_transposed(d, weights[rows] * (P - d.y))
                          + precision * (x[rows] - centre[rows]))
        if not rescale:
            return gradient, None, np.ones(len(x), dtype=bool)
        c = weights[rows] * P * (1 - P)
        diagonal = np.ones_like(x)  # left alone for problems not evaluated
        parts = [np.asarray(touches.T @ c.T).T, *([c.sum(axis=1, keepdims=True)] if d.side else []), c @ d.X ** 2]
        diagonal[rows] = np.concatenate(parts, axis=1) + precision
        return gradient, diagonal, np.ones(len(x), dtype=bool)

    return evaluate


def z_value(level: float = 0.95) -> float:
    """The normal quantile of a two-sided interval at `level`."""
    return NormalDist().inv_cdf(0.5 + level / 2)


# A coefficient (Elo per unit of x) whose 95% interval is wider than this is not estimated: at x = 0.2 (PRO said 60%
# of the words) an interval 1,000 wide spans 200 Elo, from a taste against length that turns a 50% match into a 36%
# one to a taste for it that makes it 64%. The CLI and the site say so rather than print a figure that means nothing.
LOOSE = 1000.0


def loose(low: float, high: float) -> bool:
    """Whether a coefficient's interval (low, high), in Elo per unit of x, is too wide to mean anything."""
    return high - low > LOOSE
