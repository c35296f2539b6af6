"""Weighted Bradley–Terry ratings on the Elo scale (Agent4Debate).

Model: P(i beats j) = 1 / (1 + 10^((R_j - R_i) / 400)), fitted by maximising
sum_m w_m [y_m log P_m + (1 - y_m) log(1 - P_m)] over matches m, where y_m is
the soft outcome (score share) and w_m the match weight; where the MLE does not
exist, a weak N(0, 1/PRIOR_PRECISION) prior on the logit strengths is added.

Strengths live on the logit scale, theta = (R - BASE_RATING) / ELO_SCALE (these
constants: leaderboard.elo), so that P(i beats j) = sigmoid(theta_i - theta_j).
Matches enter the fit only via W[i, j] = sum of w*y scored by i against j, so a
Newton step costs O(n^3) whatever the number of matches. Bootstrap intervals
are in leaderboard.bootstrap.
"""

from __future__ import annotations

from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from leaderboard import elo


@dataclass(frozen=True)
class FitResult:
    """Elo-scale ratings, and whether the weak prior had to replace the MLE."""

    ratings: np.ndarray
    prior_used: bool


def match_weights(score_a, score_b, weighting="paper"):
    """Match weight w = 1 / (1 + exp(-|score_a - score_b|)) ("paper") or w = 1 ("none")."""
    margin = np.abs(np.asarray(score_a, dtype=float) - np.asarray(score_b, dtype=float))
    if weighting == "paper":
        return sigmoid(margin)  # decisive matches count more; a tie weighs 1/2
    if weighting == "none":
        return np.ones_like(margin)
    raise ValueError(f"unknown weighting {weighting!r}: expected 'paper' or 'none'")


def soft_outcomes(score_a, score_b):
    """Soft outcome y = score_a / (score_a + score_b); 0.5 when neither side scored."""
    score_a = np.asarray(score_a, dtype=float)
    total = score_a + np.asarray(score_b, dtype=float)
    return np.divide(score_a, total, out=np.full_like(total, 0.5), where=total > 0)


def pair_statistics(a, b, y, w, n):
    """Sufficient statistics W[i, j] = sum of w*y of i over j, and N = W + W.T."""
    a = np.asarray(a, dtype=np.intp)
    b = np.asarray(b, dtype=np.intp)
    w = np.asarray(w, dtype=float)
    y = np.asarray(y, dtype=float)
    # Match (a, b) scores w*y for a over b and w*(1-y) for b over a.
    wins = np.bincount(a * n + b, weights=w * y, minlength=n * n)
    wins += np.bincount(b * n + a, weights=w * (1 - y), minlength=n * n)
    W = wins.reshape(n, n)
    return W, W + W.T


def mle_exists(W):
    """The MLE exists iff the graph with edges i -> j where W[i, j] > 0 is strongly connected."""
    return bool(_strongly_connected(np.asarray(W)))


def _strongly_connected(W):
    """mle_exists for each n x n matrix in a stack W of shape (..., n, n)."""
    edges = W > 0
    # Strongly connected iff entry 0 reaches everyone and everyone reaches entry 0.
    return _reaches_all(edges) & _reaches_all(np.swapaxes(edges, -1, -2))


def _reaches_all(edges):
    """Whether node 0 reaches every node, for each graph in a stack (..., n, n)."""
    reached = np.zeros(edges.shape[:-1], dtype=bool)
    reached[..., 0] = True
    # Breadth-first search on all graphs at once: one frontier step per pass.
    while True:
        grown = reached | np.any(reached[..., :, None] & edges, axis=-2)
        if np.array_equal(grown, reached):
            return np.all(reached, axis=-1)
        reached = grown


def fit(W, N, *, prior=None, init=None, tol=1e-10, max_iter=100):
    """Mean-zero logit strengths maximising sum W_ij log sigmoid(t_i - t_j) - prior/2 |t|^2.

    Damped Newton from `init` (default zeros); once every coordinate of a step
    is below `tol`, that step is applied and the iteration stops. W and N may
    be stacks (..., n, n) of independent problems, solved together; `prior` is
    then a scalar or one ridge precision per problem (0 = none).
    """
    W = np.asarray(W, dtype=float)
    N = np.asarray(N, dtype=float)
    *batch, n, _ = W.shape
    if prior is None and not _strongly_connected(W).all():
        raise ValueError("the MLE does not exist for these data (see mle_exists); pass a prior")
    ridge = np.broadcast_to(np.asarray(0.0 if prior is None else prior, dtype=float), batch)
    theta = np.zeros((*batch, n)) if init is None else np.broadcast_to(init, (*batch, n)).astype(float)
    theta -= theta.mean(axis=-1, keepdims=True)
    wins = W.sum(axis=-1)
    loss, P = _loss(theta, W, ridge)
    for _ in range(max_iter):
        grad, hess = gradient_hessian(theta, P, wins, N, ridge)
        step = _mean_zero_newton_step(grad, hess)
        if np.all(np.abs(step) < tol):
            theta = theta + step
            return theta - theta.mean(axis=-1, keepdims=True)
        # Damped Newton (Armijo backtracking, per problem) so extreme data cannot
        # overshoot; the slack absorbs rounding in the loss once steps are tiny.
        bound = loss + 1e-12 * np.abs(loss)
        slope = 1e-4 * np.sum(grad * step, axis=-1)
        t = np.ones(batch)
        while True:
            new_loss, new_P = _loss(theta + t[..., None] * step, W, ridge)
            worse = new_loss > bound + t * slope
            if not np.any(worse):
                break
            t = np.where(worse, t / 2, t)
        theta, loss, P = theta + t[..., None] * step, new_loss, new_P
    raise RuntimeError(f"Newton did not converge in {max_iter} iterations")


def _mean_zero_newton_step(grad, hess):
    """Newton step d solving hess d = -grad within the mean-zero subspace.

    The likelihood is flat along the all-ones direction (and with a ridge the
    exact step from a mean-zero point is mean zero), so the step is sought as
    d = E d' with E = [I; -1^T], i.e. d_n = -(d_1 + ... + d_{n-1}), leaving an
    invertible (n-1) x (n-1) system E^T hess E d' = -E^T grad.
    """
    free = np.linalg.solve(_reduced(hess), (grad[..., -1:] - grad[..., :-1])[..., None])[..., 0]
    return np.concatenate([free, -free.sum(axis=-1, keepdims=True)], axis=-1)


def mean_zero_inverse(matrix):
    """E (E^T matrix E)^-1 E^T, E = [I; -1^T]: the inverse of a Hessian within the mean-zero subspace."""
    E = np.vstack([np.eye(len(matrix) - 1), -np.ones(len(matrix) - 1)])
    return E @ np.linalg.solve(_reduced(matrix), E.T)


def _reduced(matrix):
    """E^T matrix E for E = [I; -1^T]: a quadratic form restricted to the mean-zero subspace."""
    return matrix[..., :-1, :-1] - matrix[..., :-1, -1:] - matrix[..., -1:, :-1] + matrix[..., -1:, -1:]


def _loss(theta, W, ridge):
    """Negative penalised log-likelihood -sum W_ij log P_ij + ridge/2 |t|^2, and P.

    P_ij = sigmoid(t_i - t_j) is returned too since the gradient reuses it.
    """
    P = sigmoid(theta[..., :, None] - theta[..., None, :])
    # Flooring P only matters past ~700 logits, where it keeps the loss finite.
    log_P = np.log(np.maximum(P, np.finfo(float).tiny))
    return 0.5 * ridge * np.sum(theta**2, axis=-1) - np.einsum("...ij,...ij->...", W, log_P), P


def gradient_hessian(theta, P, wins, N, ridge):
    """Gradient and Hessian of _loss (wins = W.sum(-1)); the Hessian is a weighted Laplacian + ridge."""
    expected = N * P
    grad = expected.sum(axis=-1) - wins + ridge[..., None] * theta
    hess = -expected * np.swapaxes(P, -1, -2)  # off-diagonal: -N_ij P_ij (1 - P_ij)
    diagonal = np.arange(theta.shape[-1])
    hess[..., diagonal, diagonal] -= hess.sum(axis=-1) - ridge[..., None]
    return grad, hess


def prior_for(W):
    """Ridge precision per problem in W: 0 where the MLE exists, else the weak prior."""
    return np.where(_strongly_connected(W), 0.0, elo.PRIOR_PRECISION)


def to_elo(theta, anchor):
    """Elo ratings: mean BASE_RATING, or entry anchor[0] pinned at rating anchor[1]."""
    if anchor is None:
        return elo.BASE_RATING + elo.ELO_SCALE * theta
    index, rating = anchor
    return rating + elo.ELO_SCALE * (theta - theta[..., index, None])


def fit_ratings(a, b, score_a, score_b, n, *, weighting="paper", anchor=None):
    """Elo ratings maximising the weighted soft BT likelihood of matches a[m] vs b[m].

    The exact MLE when it exists; otherwise the weak prior is added and flagged.
    """
    y, w = soft_outcomes(score_a, score_b), match_weights(score_a, score_b, weighting)
    W, N = pair_statistics(a, b, y, w, n)
    ridge = prior_for(W)
    return FitResult(to_elo(fit(W, N, prior=ridge), anchor), bool(ridge > 0))


def sandwich_covariance(theta, a, b, y, w, *, prior=0.0):
    """Robust covariance H^-1 M H^-1 of mean-zero logit strengths theta, clustered by match.

    H is the Hessian of the penalised loss at theta (the weighted Fisher
    information plus the ridge `prior`) and M the sum over matches of the outer
    product of each match's score w (y - P)(e_a - e_b); both are taken within
    the mean-zero subspace, the only directions the data identify.
    """
    theta = np.asarray(theta, dtype=float)
    a = np.asarray(a, dtype=np.intp)
    b = np.asarray(b, dtype=np.intp)
    n = len(theta)
    W, N = pair_statistics(a, b, y, w, n)
    P = sigmoid(theta[:, None] - theta[None, :])
    _, hess = gradient_hessian(theta, P, W.sum(axis=-1), N, np.asarray(prior, dtype=float))
    # Each match's score is r (e_a - e_b), so M is the Laplacian of the summed r^2 per pair.
    residual = np.asarray(w, dtype=float) * (np.asarray(y, dtype=float) - P[a, b])
    S = np.bincount(a * n + b, weights=residual**2, minlength=n * n).reshape(n, n)
    S += S.T
    meat = np.diag(S.sum(axis=-1)) - S
    bread_inverse = mean_zero_inverse(hess)
    return bread_inverse @ meat @ bread_inverse


@dataclass(frozen=True)
class IntervalResult:
    """Elo-scale ratings with interval bounds, and whether the weak prior replaced the MLE."""

    ratings: np.ndarray
    low: np.ndarray
    high: np.ndarray
    prior_used: bool


def sandwich_intervals(a, b, score_a, score_b, n, *, weighting="paper", anchor=None, level=0.95):
    """Ratings +- z * robust (sandwich) standard errors, on the Elo scale in the ratings' gauge.

    With no MLE the bread includes the weak prior, and prior_used says so.
    """
    y, w = soft_outcomes(score_a, score_b), match_weights(score_a, score_b, weighting)
    W, N = pair_statistics(a, b, y, w, n)
    ridge = prior_for(W)
    theta = fit(W, N, prior=ridge)
    cov = sandwich_covariance(theta, a, b, y, w, prior=ridge)
    if anchor is None:
        variance = np.diag(cov)
    else:  # the variance of theta_i - theta_anchor
        k = anchor[0]
        variance = np.diag(cov) + cov[k, k] - 2 * cov[:, k]
    # Rounding can leave the anchor's zero variance a hair below zero.
    half = NormalDist().inv_cdf(0.5 + level / 2) * elo.ELO_SCALE * np.sqrt(np.maximum(variance, 0.0))
    ratings = to_elo(theta, anchor)
    return IntervalResult(ratings, ratings - half, ratings + half, bool(ridge > 0))


def rank_ub(ci_low, ci_high):
    """Rank (UB) = 1 + number of entries whose lower bound exceeds this entry's upper bound."""
    ci_low = np.asarray(ci_low, dtype=float)
    ci_high = np.asarray(ci_high, dtype=float)
    return 1 + (ci_low[None, :] > ci_high[:, None]).sum(axis=1)


def win_probability(ratings):
    """Matrix of P(row beats column) = 1 / (1 + 10^((R_col - R_row) / 400))."""
    ratings = np.asarray(ratings, dtype=float)
    return sigmoid((ratings[:, None] - ratings[None, :]) / elo.ELO_SCALE)


def sigmoid(x):
    """1 / (1 + exp(-x)), accurate in relative terms even where it underflows towards 0."""
    with np.errstate(over="ignore"):  # exp(-x) = inf gives the limit 0
        return 1 / (1 + np.exp(-np.asarray(x, dtype=float)))
