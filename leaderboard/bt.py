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
from statistics import NormalDist

import numpy as np
import pandas as pd

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
        return _sigmoid(margin)  # decisive matches count more; a tie weighs 1/2
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
    free = np.linalg.solve(_reduced(hess), (grad[..., -1:] - grad[..., :-1])[..., None])[..., 0]
    return np.concatenate([free, -free.sum(axis=-1, keepdims=True)], axis=-1)


def _mean_zero_inverse(matrix):
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
    P = _sigmoid(theta[..., :, None] - theta[..., None, :])
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
    low, high, score_low, score_high, kind_counts = _match_kinds(a, b, score_a, score_b, n)
    y, w = soft_outcomes(score_low, score_high), match_weights(score_low, score_high, weighting)
    # The kinds laid out in rows of one pair each, padded with kinds that never occur,
    # so that summing a replicate's counts per pair is one batched matrix product.
    slot, pair, width = _grid(low * n + high)
    counts = np.zeros(len(pair) * width, dtype=np.intp)
    counts[slot] = kind_counts
    scores = np.zeros((2, len(pair) * width))
    scores[:, slot] = w * y, w * (1 - y)
    cells = (pair, *scores.reshape(2, len(pair), width))
    W = _pair_cells(counts[:, None], cells, n)[0]
    ridge = _prior_for(W)
    start = fit(W, W + W.T, prior=ridge)
    _, hess = _gradient_hessian(start, _sigmoid(start[:, None] - start[None, :]), W.sum(axis=-1), W + W.T, ridge)
    inverse = _mean_zero_inverse(hess)
    tables = _poisson_tables(counts)
    # Batches within the size bound, a multiple of 4 of them so that 2 or 4 cores
    # finish together; the split depends on the data alone, hence so do the results.
    rounds = max(1, -(-replicates // (4 * max(1, _BATCH_CELLS // max(len(counts), n * n)))))
    batch = max(1, -(-replicates // (4 * rounds)))
    theta = np.empty((replicates, n))

    def run_batch(first_replicate, seed_sequence):
        # Drawing M matches uniformly with replacement and pooling identical ones
        # is Multinomial(M, counts / M) over the kinds, so draw that directly.
        rng = np.random.default_rng(seed_sequence)
        draws = _multinomial(rng, counts, tables, min(batch, replicates - first_replicate))
        W = _pair_cells(draws, cells, n)
        N = W + np.swapaxes(W, 1, 2)
        ridge = _prior_for(W)
        # Replicates lie close to the full data, so the full-data Hessian serves
        # them all; the few it does not (or that need the prior) get full Newton.
        fitted, converged = _chord_fit(W, N, start, inverse, tol=1e-6)
        redo = ~converged | (ridge > 0)
        if redo.any():
            fitted[redo] = fit(W[redo], N[redo], prior=ridge[redo], init=start, tol=1e-6)
        theta[first_replicate : first_replicate + len(W)] = fitted
        return bool(np.any(ridge > 0))

    # Threads suffice: the draws and the array maths release the GIL.
    firsts = range(0, replicates, batch)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    with ThreadPoolExecutor(max_workers=cores) as pool:
        priors = list(pool.map(run_batch, firsts, np.random.SeedSequence(seed).spawn(len(firsts))))
    return _to_elo(theta, anchor), any(priors)


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


def _pair_cells(draws, cells, n):
    """Stack of W, one per column of `draws`, the counts of the kinds laid out by _grid.

    cells = (pair low * n + high of each row, w*y and w*(1 - y) of each slot, as rows).
    """
    pair, score_up, score_down = cells
    rows = draws.reshape(len(pair), -1, draws.shape[1])
    head = np.concatenate([[True], pair[1:] != pair[:-1]])  # a pair's first row
    W = np.zeros((n * n, draws.shape[1]))
    for cell, score in ((pair, score_up), ((pair % n) * n + pair // n, score_down)):
        sums = np.matmul(score[:, None, :], rows)[:, 0]
        W[cell[head]] = sums[head]
        np.add.at(W, cell[~head], sums[~head])
    return np.ascontiguousarray(W.T).reshape(-1, n, n)


def _chord_fit(W, N, init, inverse, *, tol, max_iter=50):
    """Unpenalised fit of a stack of problems by Newton-chord steps t <- t - inverse @ grad(t).

    One fixed (mean-zero) inverse Hessian serves every problem and step, so
    convergence is linear: with steps shrinking by a ratio r <= 1/2, the error
    left after a step s is about s r / (1 - r), and a problem has converged once
    that is below `tol` (for the first step r counts as 1/2). Also returns which
    problems converged; one whose step fails to halve is given up, as too far
    from where `inverse` holds.
    """
    theta = np.repeat(np.asarray(init, dtype=float)[None], len(W), axis=0)
    wins = W.sum(axis=-1)
    converged = np.zeros(len(W), dtype=bool)
    active = np.ones(len(W), dtype=bool)
    previous = None
    buffer = np.empty_like(W)
    for _ in range(max_iter):
        if not active.any():
            break
        # Problems stay in the stack once done (their steps zeroed): problems
        # tend to finish together, and gathering the rest would cost a pass.
        step = (_expected_wins(theta, N, buffer) - wins) @ inverse
        size = np.abs(step).max(axis=-1)
        theta -= np.where(active[:, None], step, 0.0)
        if previous is None:
            ratio, shrinking = 0.5, True
        else:
            ratio = np.minimum(size / np.maximum(previous, np.finfo(float).tiny), 0.5)
            shrinking = size < previous / 2
        done = active & (size * ratio / (1 - ratio) < tol)
        converged |= done
        active &= ~done & shrinking
        previous = size
    return theta, converged


def _expected_wins(theta, N, out):
    """sum_j N_ij sigmoid(t_i - t_j) for each problem of a stack, using `out` as scratch."""
    np.subtract(theta[:, None, :], theta[:, :, None], out=out)
    with np.errstate(over="ignore"):  # exp overflows to inf only where P is 0, and N / inf = 0
        np.exp(out, out=out)
    out += 1
    np.divide(N, out, out=out)
    return out.sum(axis=-1)


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
    P = _sigmoid(theta[:, None] - theta[None, :])
    _, hess = _gradient_hessian(theta, P, W.sum(axis=-1), N, np.asarray(prior, dtype=float))
    # Each match's score is r (e_a - e_b), so M is the Laplacian of the summed r^2 per pair.
    residual = np.asarray(w, dtype=float) * (np.asarray(y, dtype=float) - P[a, b])
    S = np.bincount(a * n + b, weights=residual**2, minlength=n * n).reshape(n, n)
    S += S.T
    meat = np.diag(S.sum(axis=-1)) - S
    bread_inverse = _mean_zero_inverse(hess)
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
    ridge = _prior_for(W)
    theta = fit(W, N, prior=ridge)
    cov = sandwich_covariance(theta, a, b, y, w, prior=ridge)
    if anchor is None:
        variance = np.diag(cov)
    else:  # the variance of theta_i - theta_anchor
        k = anchor[0]
        variance = np.diag(cov) + cov[k, k] - 2 * cov[:, k]
    # Rounding can leave the anchor's zero variance a hair below zero.
    half = NormalDist().inv_cdf(0.5 + level / 2) * ELO_SCALE * np.sqrt(np.maximum(variance, 0.0))
    ratings = _to_elo(theta, anchor)
    return IntervalResult(ratings, ratings - half, ratings + half, bool(ridge > 0))


def rank_ub(ci_low, ci_high):
    """Rank (UB) = 1 + number of entries whose lower bound exceeds this entry's upper bound."""
    ci_low = np.asarray(ci_low, dtype=float)
    ci_high = np.asarray(ci_high, dtype=float)
    return 1 + (ci_low[None, :] > ci_high[:, None]).sum(axis=1)


def win_probability(ratings):
    """Matrix of P(row beats column) = 1 / (1 + 10^((R_col - R_row) / 400))."""
    ratings = np.asarray(ratings, dtype=float)
    return _sigmoid((ratings[:, None] - ratings[None, :]) / ELO_SCALE)


def _sigmoid(x):
    """1 / (1 + exp(-x)), accurate in relative terms even where it underflows towards 0."""
    with np.errstate(over="ignore"):  # exp(-x) = inf gives the limit 0
        return 1 / (1 + np.exp(-np.asarray(x, dtype=float)))
