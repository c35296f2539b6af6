"""Weighted Bradley–Terry ratings on the Elo scale (Agent4Debate).

Model: P(i beats j) = 1 / (1 + 10^((R_j - R_i) / 400)), fitted by maximising
sum_m w_m [y_m log P_m + (1 - y_m) log(1 - P_m)] over matches m, where y_m is
the soft outcome (score share) and w_m the match weight.

Strengths live on the logit scale, theta = (R - BASE_RATING) / ELO_SCALE, so
that P(i beats j) = sigmoid(theta_i - theta_j). Matches enter the fit only via
W[i, j] = sum of w*y scored by i against j, so a Newton step costs O(n^3)
whatever the number of matches.
"""

from __future__ import annotations

import math
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import sparse
from scipy.special import expit

ELO_SCALE = 400 / math.log(10)
BASE_RATING = 1000.0

# Ridge precision of the N(0, 1/PRIOR_PRECISION) prior on logit strengths, used
# only when the MLE does not exist. A tied game of weight 1 against an opponent
# at the mean has curvature 1/4 at theta = 0, so 0.5 is worth two virtual ties:
# SD sqrt(2) logits (~246 Elo), weak enough that a handful of real games
# dominate it, yet enough to keep a winless or unbeaten entry finite.
PRIOR_PRECISION = 0.5

# Bootstrap batch size bound: replicates x max(match kinds, n^2) <= this, so
# each batch's arrays stay around 32 MB.
_BATCH_CELLS = 1 << 22


@dataclass(frozen=True)
class FitResult:
    """Elo-scale ratings, and whether the weak prior had to replace the MLE."""

    ratings: np.ndarray
    prior_used: bool


def match_weights(score_a, score_b, weighting="paper"):
    """Match weight w = 1 / (1 + exp(-|score_a - score_b|)) ("paper") or w = 1 ("none")."""
    margin = np.abs(np.asarray(score_a, dtype=float) - np.asarray(score_b, dtype=float))
    if weighting == "paper":
        return expit(margin)  # decisive matches count more; a tie weighs 1/2
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
        grad, hess = _gradient_hessian(theta, P, wins, N, ridge)
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
    reduced = hess[..., :-1, :-1] - hess[..., :-1, -1:] - hess[..., -1:, :-1] + hess[..., -1:, -1:]
    free = np.linalg.solve(reduced, (grad[..., -1:] - grad[..., :-1])[..., None])[..., 0]
    return np.concatenate([free, -free.sum(axis=-1, keepdims=True)], axis=-1)


def _loss(theta, W, ridge):
    """Negative penalised log-likelihood -sum W_ij log P_ij + ridge/2 |t|^2, and P.

    P_ij = sigmoid(t_i - t_j) is returned too since the gradient reuses it.
    """
    P = expit(theta[..., :, None] - theta[..., None, :])
    # Flooring P only matters past ~700 logits, where it keeps the loss finite.
    log_P = np.log(np.maximum(P, np.finfo(float).tiny))
    return 0.5 * ridge * np.sum(theta**2, axis=-1) - np.einsum("...ij,...ij->...", W, log_P), P


def _gradient_hessian(theta, P, wins, N, ridge):
    """Gradient and Hessian of _loss (wins = W.sum(-1)); the Hessian is a weighted Laplacian + ridge."""
    expected = N * P
    grad = expected.sum(axis=-1) - wins + ridge[..., None] * theta
    hess = -expected * np.swapaxes(P, -1, -2)  # off-diagonal: -N_ij P_ij (1 - P_ij)
    diagonal = np.arange(theta.shape[-1])
    hess[..., diagonal, diagonal] -= hess.sum(axis=-1) - ridge[..., None]
    return grad, hess


def _prior_for(W):
    """Ridge precision per problem in W: 0 where the MLE exists, else the weak prior."""
    return np.where(_strongly_connected(W), 0.0, PRIOR_PRECISION)


def _to_elo(theta, anchor):
    """Elo ratings: mean BASE_RATING, or entry anchor[0] pinned at rating anchor[1]."""
    if anchor is None:
        return BASE_RATING + ELO_SCALE * theta
    index, rating = anchor
    return rating + ELO_SCALE * (theta - theta[..., index, None])


def fit_ratings(a, b, score_a, score_b, n, *, weighting="paper", anchor=None):
    """Elo ratings maximising the weighted soft BT likelihood of matches a[m] vs b[m].

    The exact MLE when it exists; otherwise the weak prior is added and flagged.
    """
    y, w = soft_outcomes(score_a, score_b), match_weights(score_a, score_b, weighting)
    W, N = pair_statistics(a, b, y, w, n)
    ridge = _prior_for(W)
    return FitResult(_to_elo(fit(W, N, prior=ridge), anchor), bool(ridge > 0))


def bootstrap_ratings(a, b, score_a, score_b, n, *, replicates=1000, seed=0, weighting="paper", anchor=None):
    """Elo ratings refitted on `replicates` resamples of the matches (rows) with replacement.

    Returns the (replicates, n) ratings and whether any replicate needed the prior.
    Batches of replicates run on a thread pool, each with its own child seed, so
    the result depends on the seed only.
    """
    low, high, score_low, score_high, counts = _match_kinds(a, b, score_a, score_b, n)
    to_cells = _kinds_to_cells(low, high, score_low, score_high, n, weighting)
    W = (to_cells @ counts).reshape(n, n)
    start = fit(W, W + W.T, prior=_prior_for(W))
    total = int(counts.sum())
    batch = max(1, _BATCH_CELLS // max(len(counts), n * n))
    theta = np.empty((replicates, n))

    def run_batch(first, seed_sequence):
        # Drawing M matches uniformly with replacement and pooling identical ones
        # is Multinomial(M, counts / M) over the kinds, so draw that directly.
        rng = np.random.default_rng(seed_sequence)
        draws = rng.multinomial(total, counts / total, size=min(batch, replicates - first))
        W = (to_cells @ draws.T).T.reshape(-1, n, n)
        ridge = _prior_for(W)
        # Newton converges quadratically from the warm start: once a step is
        # below 1e-6 logits, applying it leaves an error of order its square.
        theta[first : first + len(W)] = fit(W, W + np.swapaxes(W, 1, 2), prior=ridge, init=start, tol=1e-6)
        return bool(np.any(ridge > 0))

    # Threads suffice: the multinomial draws and the array maths release the GIL.
    firsts = range(0, replicates, batch)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    with ThreadPoolExecutor(max_workers=cores) as pool:
        priors = list(pool.map(run_batch, firsts, np.random.SeedSequence(seed).spawn(len(firsts))))
    return _to_elo(theta, anchor), any(priors)


def _match_kinds(a, b, score_a, score_b, n):
    """Distinct matches (low, high, score of low, score of high) and their counts.

    Orienting each match from the lower to the higher index makes a match and
    its a/b-swapped copy the same kind.
    """
    a = np.asarray(a, dtype=np.intp)
    b = np.asarray(b, dtype=np.intp)
    score_a = np.asarray(score_a, dtype=float)
    score_b = np.asarray(score_b, dtype=float)
    swap = a > b
    low, high = np.where(swap, b, a), np.where(swap, a, b)
    # Code each match as one integer (pair, score pair) so that a 1-D unique
    # finds the kinds; much faster than a row-wise unique. (pandas' hashing
    # codes the float scores several times faster than np.unique's sort.)
    codes, values = pd.factorize(np.concatenate([score_a, score_b]), sort=True)
    code_a, code_b = codes[: len(a)], codes[len(a) :]
    code_low, code_high = np.where(swap, code_b, code_a), np.where(swap, code_a, code_b)
    outcomes, outcome = np.unique(code_low * len(values) + code_high, return_inverse=True)
    keys, counts = np.unique((low * n + high) * len(outcomes) + outcome, return_counts=True)
    pair, outcome = np.divmod(keys, len(outcomes))
    code_low, code_high = np.divmod(outcomes[outcome], len(values))
    return pair // n, pair % n, values[code_low], values[code_high], counts


def _kinds_to_cells(low, high, score_low, score_high, n, weighting):
    """Sparse (n*n, kinds) map taking how often each kind of match occurs to the flattened W."""
    y, w = soft_outcomes(score_low, score_high), match_weights(score_low, score_high, weighting)
    kind = np.arange(len(low))
    cells = np.concatenate([low * n + high, high * n + low])
    return sparse.csr_array(
        (np.concatenate([w * y, w * (1 - y)]), (cells, np.concatenate([kind, kind]))), shape=(n * n, len(low))
    )


def rank_ub(ci_low, ci_high):
    """Rank (UB) = 1 + number of entries whose lower bound exceeds this entry's upper bound."""
    ci_low = np.asarray(ci_low, dtype=float)
    ci_high = np.asarray(ci_high, dtype=float)
    return 1 + (ci_low[None, :] > ci_high[:, None]).sum(axis=1)


def win_probability(ratings):
    """Matrix of P(row beats column) = 1 / (1 + 10^((R_col - R_row) / 400))."""
    ratings = np.asarray(ratings, dtype=float)
    return expit((ratings[:, None] - ratings[None, :]) / ELO_SCALE)
