"""Weighted Bradley–Terry ratings on the Elo scale (Agent4Debate).

Model: P(i beats j) = 1 / (1 + 10^((R_j - R_i) / 400)), fitted by maximising
sum_m w_m [y_m log P_m + (1 - y_m) log(1 - P_m)] over matches m, where y_m is
the soft outcome (score share) and w_m the match weight; where the MLE does not
exist, a weak N(0, 1/PRIOR_PRECISION) prior on the logit strengths is added.
With the side fitted, entry a (Pro) plays with an advantage h, like home
advantage: P_m = sigmoid(theta_a - theta_b + h), and h always has that prior.

Strengths live on the logit scale, theta = (R - BASE_RATING) / ELO_SCALE (these
constants: leaderboard.elo), so that P(i beats j) = sigmoid(theta_i - theta_j).
Matches enter the fit only via W[i, j] = sum of w*y scored by i against j (with
the side, per Pro and Con: S[i, j] = sum of w*y of Pro i against Con j, A[i, j]
= sum of w), so a Newton step costs O(n^3) whatever the number of matches.

Intervals always use the prior, as one more observation per parameter: the
sandwich adds its precision to bread and meat alike, and the bootstrap
(leaderboard.bootstrap) redraws its centre from the prior in every replicate.
For a Gaussian model both match the posterior's spread; so a rating that a few
matches barely pin keeps about the prior's width, while many matches swamp it.
"""

from __future__ import annotations

from dataclasses import dataclass
from statistics import NormalDist
from typing import Any, Callable, Sequence, cast

import numpy as np
from numpy.typing import ArrayLike, NDArray

from leaderboard import elo

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]
IndexArray = NDArray[np.intp]
# A rating's gauge: None, ratings of mean BASE_RATING; else (entry index, its rating)
Anchor = tuple[int, float] | None


class NotConverged(RuntimeError):
    """A fit whose Newton iteration did not settle within its steps: no ratings are given rather than unsettled
    ones (`arena` exits 1 with the message)."""


@dataclass(frozen=True)
class FitResult:
    """Elo-scale ratings, whether the weak prior had to replace the MLE, and the Pro advantage in Elo
    (None when the side is not fitted)."""

    ratings: FloatArray
    prior_used: bool
    pro_advantage: float | None = None


def match_weights(score_a: ArrayLike, score_b: ArrayLike, weighting: str = "paper") -> FloatArray:
    """Match weight w = 1 / (1 + exp(-|score_a - score_b|)) ("paper") or w = 1 ("none")."""
    margin = np.abs(np.asarray(score_a, dtype=float) - np.asarray(score_b, dtype=float))
    if weighting == "paper":
        return sigmoid(margin)  # decisive matches count more; a tie weighs 1/2
    if weighting == "none":
        return np.ones_like(margin)
    raise ValueError(f"unknown weighting {weighting!r}: expected 'paper' or 'none'")


def soft_outcomes(score_a: ArrayLike, score_b: ArrayLike) -> FloatArray:
    """Soft outcome y = score_a / (score_a + score_b); 0.5 when neither side scored."""
    score_a = np.asarray(score_a, dtype=float)
    total = score_a + np.asarray(score_b, dtype=float)
    return cast(FloatArray, np.divide(score_a, total, out=np.full_like(total, 0.5), where=total > 0))


def pair_statistics(a: ArrayLike, b: ArrayLike, y: ArrayLike, w: ArrayLike, n: int) -> tuple[FloatArray, FloatArray]:
    """Sufficient statistics W[i, j] = sum of w*y of i over j, and N = W + W.T."""
    a = np.asarray(a, dtype=np.intp)
    b = np.asarray(b, dtype=np.intp)
    w = np.asarray(w, dtype=float)
    y = np.asarray(y, dtype=float)
    # Match (a, b) scores w*y for a over b and w*(1-y) for b over a. (np.bincount with weights sums in floats,
    # which numpy's stubs do not know: hence the casts to FloatArray, here and below.)
    wins = cast(FloatArray, np.bincount(a * n + b, weights=w * y, minlength=n * n))
    wins += np.bincount(b * n + a, weights=w * (1 - y), minlength=n * n)
    W = wins.reshape(n, n)
    return W, W + W.T


def side_statistics(a: ArrayLike, b: ArrayLike, y: ArrayLike, w: ArrayLike, n: int) -> tuple[FloatArray, FloatArray]:
    """Sufficient statistics of the side model: S[i, j] = sum of w*y of Pro i against Con j, A[i, j] = sum of w.

    The side-blind W of pair_statistics is S + (A - S).T.
    """
    cell = np.asarray(a, dtype=np.intp) * n + np.asarray(b, dtype=np.intp)
    w = np.asarray(w, dtype=float)
    S = cast(FloatArray, np.bincount(cell, weights=w * np.asarray(y, dtype=float), minlength=n * n)).reshape(n, n)
    return S, cast(FloatArray, np.bincount(cell, weights=w, minlength=n * n)).reshape(n, n)


def mle_exists(W: ArrayLike) -> bool:
    """The MLE exists iff the graph with edges i -> j where W[i, j] > 0 is strongly connected."""
    return bool(_strongly_connected(np.asarray(W)))


def _strongly_connected(W: NDArray[np.floating[Any]]) -> BoolArray:
    """mle_exists for each n x n matrix in a stack W of shape (..., n, n)."""
    edges = W > 0
    # Strongly connected iff entry 0 reaches everyone and everyone reaches entry 0.
    return _reaches_all(edges) & _reaches_all(np.swapaxes(edges, -1, -2))


def _reaches_all(edges: BoolArray) -> BoolArray:
    """Whether node 0 reaches every node, for each graph in a stack (..., n, n)."""
    reached = np.zeros(edges.shape[:-1], dtype=bool)
    reached[..., 0] = True
    # Breadth-first search on all graphs at once: one frontier step per pass.
    while True:
        grown = reached | np.any(reached[..., :, None] & edges, axis=-2)
        if np.array_equal(grown, reached):
            return cast(BoolArray, np.all(reached, axis=-1))
        reached = grown


def fit(W: ArrayLike, N: ArrayLike, *, prior: ArrayLike | None = None, centre: ArrayLike | None = None,
        init: ArrayLike | None = None, tol: float = 1e-10, max_iter: int = 100) -> FloatArray:
    """Mean-zero logit strengths maximising sum W_ij log sigmoid(t_i - t_j) - prior/2 |t - centre|^2.

    Damped Newton from `init` (default zeros); once every coordinate of a step
    is below `tol`, that step is applied and the iteration stops. W and N may
    be stacks (..., n, n) of independent problems, solved together; `prior` is
    then a scalar or one ridge precision per problem (0 = none), and `centre`
    (default 0) the prior's mean, (..., n).
    """
    W = np.asarray(W, dtype=float)
    N = np.asarray(N, dtype=float)
    *batch, n, _ = W.shape
    ridge = _ridge(W, prior, batch)
    centre = 0.0 if centre is None else np.asarray(centre, dtype=float)
    wins = W.sum(axis=-1)

    def newton_step(theta: FloatArray, P: FloatArray) -> tuple[FloatArray, FloatArray]:
        grad, hess = gradient_hessian(theta, P, wins, N, ridge, centre)
        return grad, _mean_zero_newton_step(grad, hess)

    theta = _damped_newton(_start(init, (*batch, n), n), lambda t: _loss(t, W, ridge, centre), newton_step,
                           tol, max_iter)
    return cast(FloatArray, theta - theta.mean(axis=-1, keepdims=True))


def fit_side(S: ArrayLike, A: ArrayLike, *, prior: ArrayLike | None = None, centre: ArrayLike | None = None,
             init: ArrayLike | None = None, tol: float = 1e-10, max_iter: int = 100) -> FloatArray:
    """x = (t, h), mean-zero logit strengths t and the Pro advantage h, maximising
    sum S_ij log sigmoid(t_i - t_j + h) + (A_ij - S_ij) log sigmoid(t_j - t_i - h)
    - prior/2 |t - c_t|^2 - PRIOR_PRECISION/2 (h - c_h)^2, with centre c = (c_t, c_h) (default 0).

    As fit, stacks of problems are solved together; `prior` is the ridge on t
    (None: the MLE of t, which must exist). h always has the weak prior: only
    cycles of Pro and Con turns tell it apart from the strengths.
    """
    S = np.asarray(S, dtype=float)
    A = np.asarray(A, dtype=float)
    *batch, n, _ = S.shape
    ridge = _ridge(S + np.swapaxes(A - S, -1, -2), prior, batch)
    precision = np.concatenate([np.repeat(ridge[..., None], n, axis=-1), np.full((*batch, 1), elo.PRIOR_PRECISION)],
                               axis=-1)
    centre = 0.0 if centre is None else np.asarray(centre, dtype=float)

    def newton_step(x: FloatArray, P: FloatArray) -> tuple[FloatArray, FloatArray]:
        grad, hess = side_gradient_hessian(x, P, S, A, precision, centre)
        return grad, _mean_zero_newton_step(grad, hess, free=1)

    x = _damped_newton(_start(init, (*batch, n + 1), n), lambda x: _side_loss(x, S, A, precision, centre),
                       newton_step, tol, max_iter)
    x[..., :n] -= x[..., :n].mean(axis=-1, keepdims=True)
    return x


def _ridge(W: FloatArray, prior: ArrayLike | None, batch: Sequence[int]) -> FloatArray:
    """The ridge precision per problem; prior None asks for the MLE, an error for data where it does not exist."""
    if prior is None and not _strongly_connected(W).all():
        raise ValueError("the MLE does not exist for these data (see mle_exists); pass a prior")
    return np.broadcast_to(np.asarray(0.0 if prior is None else prior, dtype=float), batch)


def _start(init: ArrayLike | None, shape: tuple[int, ...], n: int) -> FloatArray:
    """Newton's starting point: `init` (default zeros) with its first n coordinates, the strengths, made mean zero."""
    x = np.zeros(shape) if init is None else np.array(np.broadcast_to(init, shape), dtype=float)
    x[..., :n] -= x[..., :n].mean(axis=-1, keepdims=True)
    return x


def _damped_newton(x: FloatArray, objective: Callable[[FloatArray], tuple[FloatArray, FloatArray]],
                   newton_step: Callable[[FloatArray, FloatArray], tuple[FloatArray, FloatArray]], tol: float,
                   max_iter: int) -> FloatArray:
    """Minimise by Newton from x, where objective(x) = (loss, state) and newton_step(x, state) = (gradient, step).

    Once every coordinate of a step is below `tol`, that step is applied and the iteration stops; NotConverged if
    that takes more than max_iter steps.
    """
    loss, state = objective(x)
    step = np.zeros_like(x)
    for _ in range(max_iter):
        try:
            grad, step = newton_step(x, state)
        except np.linalg.LinAlgError:  # a Hessian singular in doubles: some parameter is not determined
            raise NotConverged("the rating fit did not converge: its Hessian is singular, so the data leave some "
                               "rating or coefficient undetermined, and no ratings are given") from None
        if np.all(np.abs(step) < tol):
            return x + step
        # Damped Newton (Armijo backtracking, per problem) so extreme data cannot
        # overshoot; the slack absorbs rounding in the loss once steps are tiny.
        bound = loss + 1e-12 * np.abs(loss)
        slope = 1e-4 * np.sum(grad * step, axis=-1)
        t = np.ones(np.shape(loss))
        while True:
            new_loss, new_state = objective(x + t[..., None] * step)
            worse = new_loss > bound + t * slope
            if not np.any(worse):
                break
            t = np.where(worse, t / 2, t)
        x, loss, state = x + t[..., None] * step, new_loss, new_state
    raise NotConverged(f"the rating fit did not converge in {max_iter} Newton steps (its last step still moved a "
                       f"parameter {float(np.max(np.abs(step))):.3g} logits): the data put some rating or coefficient "
                       f"too far out, or pin it too loosely, for the fit to settle, so no ratings are given")


def _mean_zero_newton_step(grad: FloatArray, hess: FloatArray, free: int = 0) -> FloatArray:
    """Newton step d solving hess d = -grad within the mean-zero subspace of the strengths.

    The likelihood is flat along the all-ones direction of the strengths (and with a
    ridge the exact step from a mean-zero point is mean zero), so the step is sought
    as d = E d' (see _reduced): d_n = -(d_1 + ... + d_{n-1}) for the strengths, the
    last `free` coordinates (the Pro advantage) as they are, leaving an invertible
    system E^T hess E d' = -E^T grad one smaller.
    """
    order, c = _constrained_last(grad.shape[-1], free)
    g = grad[..., order]
    reduced = np.linalg.solve(_reduced(hess, free), (c * g[..., -1:] - g[..., :-1])[..., None])[..., 0]
    step = np.empty_like(g)
    step[..., order] = np.concatenate([reduced, -(reduced @ c)[..., None]], axis=-1)
    return step


def mean_zero_inverse(matrix: FloatArray, free: int = 0) -> FloatArray:
    """E (E^T matrix E)^-1 E^T (E: see _reduced): the inverse of a Hessian within the mean-zero subspace."""
    size = len(matrix)
    order, c = _constrained_last(size, free)
    E = np.zeros((size, size - 1))
    E[order[:-1], np.arange(size - 1)] = 1.0
    E[order[-1]] = -c
    return E @ np.linalg.solve(_reduced(matrix, free), E.T)


def _reduced(matrix: FloatArray, free: int = 0) -> FloatArray:
    """E^T matrix E: a quadratic form restricted to strengths of mean zero.

    E maps (t_1 .. t_{n-1}, f) to (t_1 .. t_n, f) with t_n = -(t_1 + ... + t_{n-1}),
    where f are the last `free` coordinates, left unconstrained. With t_n moved
    last, E = [I; -c^T] with c 1 on the strengths and 0 on f.
    """
    order, c = _constrained_last(matrix.shape[-1], free)
    M = matrix[..., order[:, None], order]
    return (M[..., :-1, :-1] - c[:, None] * M[..., -1:, :-1] - M[..., :-1, -1:] * c
            + np.multiply.outer(c, c) * M[..., -1:, -1:])


def _constrained_last(size: int, free: int) -> tuple[IndexArray, FloatArray]:
    """Coordinate order putting t_n, which the mean-zero constraint fixes, last; and c (see _reduced)."""
    n = size - free
    order = np.r_[0 : n - 1, n:size, n - 1]
    return order, (order[:-1] < n).astype(float)


def _loss(theta: FloatArray, W: FloatArray, ridge: FloatArray,
          centre: float | FloatArray = 0.0) -> tuple[FloatArray, FloatArray]:
    """Negative penalised log-likelihood -sum W_ij log P_ij + ridge/2 |t - centre|^2, and P.

    P_ij = sigmoid(t_i - t_j) is returned too since the gradient reuses it.
    """
    P = sigmoid(theta[..., :, None] - theta[..., None, :])
    # Flooring P only matters past ~700 logits, where it keeps the loss finite.
    log_P = np.log(np.maximum(P, np.finfo(float).tiny))
    return 0.5 * ridge * np.sum((theta - centre) ** 2, axis=-1) - np.einsum("...ij,...ij->...", W, log_P), P


def gradient_hessian(theta: FloatArray, P: FloatArray, wins: FloatArray, N: FloatArray, ridge: FloatArray,
                     centre: float | FloatArray = 0.0) -> tuple[FloatArray, FloatArray]:
    """Gradient and Hessian of _loss (wins = W.sum(-1)); the Hessian is a weighted Laplacian + ridge."""
    expected = N * P
    grad = expected.sum(axis=-1) - wins + ridge[..., None] * (theta - centre)
    hess = -expected * np.swapaxes(P, -1, -2)  # off-diagonal: -N_ij P_ij (1 - P_ij)
    diagonal = np.arange(theta.shape[-1])
    hess[..., diagonal, diagonal] -= hess.sum(axis=-1) - ridge[..., None]
    return grad, hess


def _side_loss(x: FloatArray, S: FloatArray, A: FloatArray, precision: FloatArray,
               centre: float | FloatArray) -> tuple[FloatArray, FloatArray]:
    """Negative penalised log-likelihood of fit_side's model at x = (t, h), and P_ij = sigmoid(t_i - t_j + h)."""
    d = x[..., :-1, None] - x[..., None, :-1] + x[..., -1, None, None]
    P = sigmoid(d)
    tiny = np.finfo(float).tiny  # as in _loss
    log_likelihood = (np.einsum("...ij,...ij->...", S, np.log(np.maximum(P, tiny)))
                      + np.einsum("...ij,...ij->...", A - S, np.log(np.maximum(sigmoid(-d), tiny))))
    return 0.5 * np.sum(precision * (x - centre) ** 2, axis=-1) - log_likelihood, P


def side_gradient_hessian(x: FloatArray, P: FloatArray, S: FloatArray, A: FloatArray, precision: FloatArray,
                          centre: float | FloatArray) -> tuple[FloatArray, FloatArray]:
    """Gradient and Hessian of _side_loss: the Hessian is pair_form of the curvature A P (1 - P), plus the prior."""
    excess = S - A * P  # Pro's score above its expectation
    grad = precision * (x - centre)
    grad[..., :-1] += excess.sum(axis=-2) - excess.sum(axis=-1)
    grad[..., -1] -= excess.sum(axis=(-2, -1))
    hess = pair_form(A * P * (1 - P), side=True)
    diagonal = np.arange(x.shape[-1])
    hess[..., diagonal, diagonal] += precision
    return grad, hess


def pair_form(C: FloatArray, side: bool = False) -> FloatArray:
    """Matrix of the quadratic form sum_ij C_ij (x_i - x_j + h)^2 in (x[, h]); h = 0 unless side.

    With C_ij the summed w P (1 - P) of i (Pro) against j (Con) it is the Fisher
    information; with the summed squared score residuals, the sandwich's meat.
    """
    n = C.shape[-1]
    rows, columns = C.sum(axis=-1), C.sum(axis=-2)
    form = np.zeros((*C.shape[:-2], n + side, n + side))
    form[..., :n, :n] = -(C + np.swapaxes(C, -1, -2))
    diagonal = np.arange(n)
    form[..., diagonal, diagonal] += rows + columns
    if side:
        form[..., :n, n] = form[..., n, :n] = rows - columns
        form[..., n, n] = C.sum(axis=(-2, -1))
    return form


def prior_for(W: FloatArray) -> FloatArray:
    """Ridge precision per problem in W: 0 where the MLE exists, else the weak prior."""
    return np.where(_strongly_connected(W), 0.0, elo.PRIOR_PRECISION)


def to_elo(theta: FloatArray, anchor: Anchor) -> FloatArray:
    """Elo ratings: mean BASE_RATING, or entry anchor[0] pinned at rating anchor[1]."""
    if anchor is None:
        return elo.BASE_RATING + elo.ELO_SCALE * theta
    index, rating = anchor
    return rating + elo.ELO_SCALE * (theta - theta[..., index, None])


def fit_ratings(a: ArrayLike, b: ArrayLike, score_a: ArrayLike, score_b: ArrayLike, n: int, *, weighting: str = "paper",
                anchor: Anchor = None, side: bool = False,
                counts: NDArray[np.integer[Any]] | None = None) -> FitResult:
    """Elo ratings maximising the weighted soft BT likelihood of matches a[m] vs b[m] (each counts[m] times:
    default once) and, with side, the Pro advantage of a[m], in Elo, with them (fit_side).

    The exact MLE of the strengths when it exists; otherwise the weak prior is added and flagged.
    """
    y, w = soft_outcomes(score_a, score_b), match_weights(score_a, score_b, weighting)
    if counts is not None:
        w = w * counts
    W, N = pair_statistics(a, b, y, w, n)
    ridge = prior_for(W)
    if not side:
        return FitResult(to_elo(fit(W, N, prior=ridge), anchor), bool(ridge > 0))
    x = fit_side(*side_statistics(a, b, y, w, n), prior=ridge)
    return FitResult(to_elo(x[:n], anchor), bool(ridge > 0), float(elo.ELO_SCALE * x[n]))


def sandwich_covariance(x: ArrayLike, a: ArrayLike, b: ArrayLike, y: ArrayLike, w: ArrayLike, *, prior: float = 0.0,
                        side: bool = False) -> FloatArray:
    """Robust covariance B^-1 M B^-1 of x = (mean-zero logit strengths[, Pro advantage]), clustered by match.

    B is the Hessian of the penalised loss at x (the weighted Fisher information
    plus the ridge `prior` on every coordinate) and M the sum over matches of the
    outer product of each match's score w (y - P)(e_a - e_b[, 1]), plus `prior`
    again: the prior counts as one more observation, of variance its precision.
    Both are taken within the mean-zero subspace of the strengths, the only
    directions the data identify.
    """
    x = np.asarray(x, dtype=float)
    a = np.asarray(a, dtype=np.intp)
    b = np.asarray(b, dtype=np.intp)
    w = np.asarray(w, dtype=float)
    n = len(x) - side
    P = sigmoid(x[a] - x[b] + (x[n] if side else 0.0))
    cell = a * n + b
    curvature = cast(FloatArray, np.bincount(cell, weights=w * P * (1 - P), minlength=n * n)).reshape(n, n)
    squares = cast(FloatArray, np.bincount(cell, weights=(w * (np.asarray(y, dtype=float) - P)) ** 2,
                                           minlength=n * n)).reshape(n, n)
    ridge = prior * np.eye(n + side)
    bread_inverse = mean_zero_inverse(pair_form(curvature, side) + ridge, free=int(side))
    return bread_inverse @ (pair_form(squares, side) + ridge) @ bread_inverse


@dataclass(frozen=True)
class IntervalResult:
    """Elo-scale interval bounds of the ratings and, with the side fitted, of the Pro advantage (else None)."""

    low: FloatArray
    high: FloatArray
    side_low: float | None = None
    side_high: float | None = None


def sandwich_intervals(a: ArrayLike, b: ArrayLike, score_a: ArrayLike, score_b: ArrayLike, n: int, *,
                       weighting: str = "paper", anchor: Anchor = None, level: float = 0.95,
                       side: bool = False) -> IntervalResult:
    """Posterior mode +- z * sandwich standard errors under the weak prior, on the Elo scale in the ratings' gauge.

    The mode and the covariance (sandwich_covariance) both take the prior, so an
    entry that the matches barely pin keeps about the prior's spread.
    """
    y, w = soft_outcomes(score_a, score_b), match_weights(score_a, score_b, weighting)
    if side:
        x = fit_side(*side_statistics(a, b, y, w, n), prior=elo.PRIOR_PRECISION)
    else:
        x = fit(*pair_statistics(a, b, y, w, n), prior=elo.PRIOR_PRECISION)
    cov = sandwich_covariance(x, a, b, y, w, prior=elo.PRIOR_PRECISION, side=side)
    if anchor is None:
        variance = np.diag(cov)[:n]
    else:  # the variance of theta_i - theta_anchor
        k = anchor[0]
        variance = np.diag(cov)[:n] + cov[k, k] - 2 * cov[:n, k]
    z = NormalDist().inv_cdf(0.5 + level / 2) * elo.ELO_SCALE
    # Rounding can leave the anchor's zero variance a hair below zero.
    half = z * np.sqrt(np.maximum(variance, 0.0))
    mode = to_elo(x[:n], anchor)
    if not side:
        return IntervalResult(mode - half, mode + half)
    advantage, spread = elo.ELO_SCALE * x[n], z * np.sqrt(cov[n, n])
    return IntervalResult(mode - half, mode + half, float(advantage - spread), float(advantage + spread))


def rank_ub(ci_low: ArrayLike, ci_high: ArrayLike) -> IndexArray:
    """Rank (UB) = 1 + number of entries whose lower bound exceeds this entry's upper bound."""
    ci_low = np.asarray(ci_low, dtype=float)
    ci_high = np.asarray(ci_high, dtype=float)
    return cast(IndexArray, 1 + (ci_low[None, :] > ci_high[:, None]).sum(axis=1))


def win_probability(ratings: ArrayLike) -> FloatArray:
    """Matrix of P(row beats column) = 1 / (1 + 10^((R_col - R_row) / 400))."""
    ratings = np.asarray(ratings, dtype=float)
    return sigmoid((ratings[:, None] - ratings[None, :]) / elo.ELO_SCALE)


def sigmoid(x: ArrayLike) -> FloatArray:
    """1 / (1 + exp(-x)), accurate in relative terms even where it underflows towards 0."""
    with np.errstate(over="ignore"):  # exp(-x) = inf gives the limit 0
        return cast(FloatArray, 1 / (1 + np.exp(-np.asarray(x, dtype=float))))
