"""Coverage benchmark: how often `arena rate`'s 95% intervals hold the true rating, beside the intervals it gave before.

1. Small samples. Tournaments of 6 entries whose true ratings are drawn N(1000, SD^2): SD 30 Elo, the spread of
   the Agent4Debate paper's Debatrix-Elo table (954 to 1034 over its ten entries), and SD 150 Elo, a field five
   times as spread, where the prior's pull towards 1000 matters more. Each has M = 8, 20 or 60 matches between
   uniformly drawn pairs, sides drawn at random, each judged by 3 runs drawn from the BT probability (no side
   advantage). Per tournament, for weightings none and paper:
     before: the plain bootstrap (rows resampled, each replicate the MLE, the weak prior only where its MLE does
             not exist) and the plain sandwich (the prior in the bread only where the MLE does not exist), both
             around the MLE, rebuilt here from leaderboard.bt's pieces;
     now:    leaderboard.ratings.rate, as `arena rate --results` calls it: bootstrap and sandwich with the prior
             taken as data, side fitted (the default), and the bootstrap with the side ignored.
   Coverage is the share of rated entries whose interval holds its true rating, centred like the ratings (mean
   1000 over the entries rated); also the share of zero-width intervals and the mean width. Targets: >= 88% at
   8 matches and >= 92% at 60, no zero width.
2. The Pro advantage. 16 entries (SD 150 Elo), 6,000 matches, a planted +80 Elo Pro advantage, and a schedule
   where the stronger entry of each pair takes Pro 80% of the time. Per weighting: the fitted advantage and its
   bootstrap and sandwich intervals, and the ratings' RMSE from the truth with the side fitted and ignored, for
   one tournament and over several. Targets (weighting none): within 25 Elo of 80, the interval covering 80, a
   smaller RMSE than ignoring the side. The paper's weighting stretches the Elo scale by about 12% at 3 runs
   (README, Ratings), so there the estimate targets about 90 rather than 80.

Run: .venv/bin/python benchmarks/coverage.py [--tournaments T] [--replicates R] [--repeats K]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from statistics import NormalDist

import numpy as np
import pandas as pd
from scipy.special import expit

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from leaderboard import bt, elo  # noqa: E402
from leaderboard.ratings import rate  # noqa: E402

RUNS = 3
SPREADS = (30.0, 150.0)  # SD of the true ratings, in Elo
MATCHES = (8, 20, 60)
ENTRIES = 6
TARGETS = {8: 0.88, 60: 0.92}
METHODS = ("before: bootstrap", "before: sandwich", "now: bootstrap", "now: sandwich", "now: bootstrap, side ignored")
Z = NormalDist().inv_cdf(0.975)


def tournament(rng, n: int, matches: int, spread: float, *, advantage: float = 0.0, stronger_pro: float = 0.5):
    """True ratings N(1000, spread^2) and matches between uniform pairs, the stronger entry Pro with probability
    stronger_pro, each scored by RUNS runs drawn from the BT probability with the Pro side `advantage` Elo up."""
    truth = elo.BASE_RATING + rng.normal(0.0, spread, n)
    a = rng.integers(0, n, matches)
    b = (a + rng.integers(1, n, matches)) % n
    stronger_first = truth[a] > truth[b]
    pro_is_stronger = rng.random(matches) < stronger_pro
    swap = stronger_first != pro_is_stronger
    pro, con = np.where(swap, b, a), np.where(swap, a, b)
    points = rng.binomial(RUNS, expit((truth[pro] - truth[con] + advantage) * elo.LOGIT_PER_ELO)).astype(float)
    frame = pd.DataFrame({"match_id": np.arange(matches), "entry_a": [f"e{i}" for i in pro],
                          "entry_b": [f"e{i}" for i in con], "score_a": points, "score_b": RUNS - points})
    return truth, frame


def centred_truth(truth: np.ndarray, names: list[str]) -> np.ndarray:
    """The true ratings of the rated entries, in the ratings' gauge: mean 1000 over them."""
    values = np.array([truth[int(name[1:])] for name in names])
    return values - values.mean() + elo.BASE_RATING


def before(frame: pd.DataFrame, weighting: str, replicates: int, seed: int) -> dict[str, tuple]:
    """The intervals `arena rate` gave before the prior counted as data: names, (low, high) per method."""
    names = sorted(set(frame.entry_a) | set(frame.entry_b))
    index = {name: i for i, name in enumerate(names)}
    a, b = frame.entry_a.map(index).to_numpy(), frame.entry_b.map(index).to_numpy()
    y = bt.soft_outcomes(frame.score_a, frame.score_b)
    w = bt.match_weights(frame.score_a, frame.score_b, weighting)
    n, m = len(names), len(frame)
    W, N = bt.pair_statistics(a, b, y, w, n)
    ridge = bt.prior_for(W)
    theta = bt.fit(W, N, prior=ridge)
    # Plain bootstrap: every replicate's pair statistics at once, then each fitted as the data allow.
    rows = np.random.default_rng(seed).integers(0, m, (replicates, m))
    offset = np.repeat(np.arange(replicates) * n * n, m)
    cells = offset + (a[rows] * n + b[rows]).ravel()
    down = offset + (b[rows] * n + a[rows]).ravel()
    stack = (np.bincount(cells, (w * y)[rows].ravel(), replicates * n * n)
             + np.bincount(down, (w * (1 - y))[rows].ravel(), replicates * n * n)).reshape(replicates, n, n)
    boot = bt.fit(stack, stack + np.swapaxes(stack, 1, 2), prior=bt.prior_for(stack))
    low, high = np.percentile(bt.to_elo(boot, None), [2.5, 97.5], axis=0)
    # Plain sandwich: H^-1 M H^-1 around the fit, the prior in H only where the MLE does not exist.
    P = bt.sigmoid(theta[a] - theta[b])
    curvature = np.bincount(a * n + b, w * P * (1 - P), n * n).reshape(n, n)
    squares = np.bincount(a * n + b, (w * (y - P)) ** 2, n * n).reshape(n, n)
    inverse = bt.mean_zero_inverse(bt.pair_form(curvature) + ridge * np.eye(n))
    half = Z * elo.ELO_SCALE * np.sqrt(np.maximum(np.diag(inverse @ bt.pair_form(squares) @ inverse), 0.0))
    ratings = bt.to_elo(theta, None)
    return names, {"before: bootstrap": (low, high), "before: sandwich": (ratings - half, ratings + half)}


def now(frame: pd.DataFrame, weighting: str, replicates: int, seed: int) -> dict[str, tuple]:
    """The intervals of leaderboard.ratings.rate, per method, in entry-name order."""
    out = {}
    for method, options in (("now: bootstrap", {}), ("now: sandwich", {"ci": "sandwich"}),
                            ("now: bootstrap, side ignored", {"side": "ignore"})):
        rows = sorted(rate(frame, bootstrap=replicates, seed=seed, weighting=weighting, **options)["ratings"],
                      key=lambda r: r["entry"])
        out[method] = (np.array([r["ci_low"] for r in rows]), np.array([r["ci_high"] for r in rows]))
    return out


def small_samples(tournaments: int, replicates: int) -> bool:
    """Part 1: coverage and mean width per spread, weighting, method and number of matches; whether the targets
    were met."""
    ok = True
    zero = dict.fromkeys(METHODS, 0)
    intervals_counted = 0
    for spread in SPREADS:
        for weighting in ("none", "paper"):
            print(f"\n6 entries, true ratings SD {spread:.0f} Elo, weighting {weighting}, {tournaments} tournaments: "
                  "coverage (mean width)")
            cells = {method: [] for method in METHODS}
            for matches in MATCHES:
                rng = np.random.default_rng([int(spread), matches, int(weighting == "paper")])
                hits, width, total = dict.fromkeys(METHODS, 0), dict.fromkeys(METHODS, 0.0), 0
                for k in range(tournaments):
                    truth, frame = tournament(rng, ENTRIES, matches, spread)
                    names, intervals = before(frame, weighting, replicates, k)
                    intervals |= now(frame, weighting, replicates, k)
                    target = centred_truth(truth, names)
                    total += len(names)
                    for method, (low, high) in intervals.items():
                        # Rounding to the JSON's 2 decimals must not count as a miss.
                        hits[method] += int(np.sum((low - 0.01 <= target) & (target <= high + 0.01)))
                        zero[method] += int(np.sum(high - low < 0.01))
                        width[method] += float(np.sum(high - low))
                intervals_counted += total
                for method in METHODS:
                    cells[method].append(f"{hits[method] / total:6.1%} ({width[method] / total:3.0f} Elo)")
                    if method in ("now: bootstrap", "now: sandwich") and hits[method] / total < TARGETS.get(matches, 0):
                        ok = False
            print(f"  {'':30}" + "".join(f"{f'{m} matches':>18}" for m in MATCHES))
            for method in METHODS:
                print(f"  {method:30}" + "".join(f"{cell:>18}" for cell in cells[method]))
    print(f"\n  zero-width intervals, of the {intervals_counted:,} each method gave above: "
          + ", ".join(f"{method} {zero[method]}" for method in METHODS))
    return ok and not zero["now: bootstrap"] and not zero["now: sandwich"]


def side_advantage(replicates: int, repeats: int) -> bool:
    """Part 2: the planted Pro advantage; whether the targets were met (weighting none)."""
    n, matches, planted = 16, 6000, 80.0
    ok = True
    for weighting in ("none", "paper"):
        print(f"\n16 entries (SD 150 Elo), {matches} matches, Pro advantage +{planted:.0f} Elo, the stronger entry Pro "
              f"80% of the time, weighting {weighting}:")
        rows = []
        for k in range(repeats):
            truth, frame = tournament(np.random.default_rng([16, k]), n, matches, 150.0, advantage=planted,
                                      stronger_pro=0.8)
            fits = {}
            for label, options in (("fit", {}), ("fit, sandwich", {"ci": "sandwich"}), ("ignore", {"side": "ignore"})):
                fits[label] = rate(frame, bootstrap=replicates, seed=k, weighting=weighting, **options)
            target = centred_truth(truth, [r["entry"] for r in fits["fit"]["ratings"]])
            rmse = {label: float(np.sqrt(np.mean((np.array([r["rating"] for r in fit["ratings"]]) - target) ** 2)))
                    for label, fit in fits.items()}
            rows.append((fits["fit"]["side"], fits["fit, sandwich"]["side"], rmse["fit"], rmse["ignore"]))
            if k == 0:
                boot, robust = fits["fit"]["side"], fits["fit, sandwich"]["side"]
                print(f"  tournament 0: Pro advantage {boot['pro_advantage']:+.1f} Elo, bootstrap 95% CI "
                      f"{boot['ci_low']:+.1f} to {boot['ci_high']:+.1f}, sandwich {robust['ci_low']:+.1f} to "
                      f"{robust['ci_high']:+.1f}; ratings RMSE {rmse['fit']:.1f} Elo fitted vs {rmse['ignore']:.1f} "
                      f"ignored")
        estimates = np.array([boot["pro_advantage"] for boot, _, _, _ in rows])
        covered = {name: np.mean([s["ci_low"] <= planted <= s["ci_high"] for s in column])
                   for name, column in (("bootstrap", [r[0] for r in rows]), ("sandwich", [r[1] for r in rows]))}
        fitted, ignored = np.array([r[2] for r in rows]), np.array([r[3] for r in rows])
        print(f"  over {repeats} tournaments: estimate mean {estimates.mean():+.1f} Elo (SD {estimates.std():.1f}, "
              f"worst {estimates[np.argmax(np.abs(estimates - planted))]:+.1f}); intervals holding +{planted:.0f}: "
              f"bootstrap {covered['bootstrap']:.0%}, sandwich {covered['sandwich']:.0%}; ratings RMSE mean "
              f"{fitted.mean():.1f} Elo fitted vs {ignored.mean():.1f} ignored (fitted smaller in "
              f"{np.mean(fitted < ignored):.0%})")
        if weighting == "none":
            first = rows[0][0]
            ok = (abs(first["pro_advantage"] - planted) <= 25 and first["ci_low"] <= planted <= first["ci_high"]
                  and rows[0][2] < rows[0][3])
    return ok


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tournaments", type=int, default=200, help="simulated tournaments per cell of part 1")
    parser.add_argument("--replicates", type=int, default=1000, help="bootstrap replicates, as `arena rate`'s")
    parser.add_argument("--repeats", type=int, default=20, help="simulated tournaments in part 2")
    args = parser.parse_args()
    started = time.perf_counter()
    small = small_samples(args.tournaments, args.replicates)
    side = side_advantage(args.replicates, args.repeats)
    print(f"\n  {'PASS' if small else 'FAIL'} coverage >= 88% at 8 matches and >= 92% at 60, no zero width (now)"
          f"   {'PASS' if side else 'FAIL'} Pro advantage within 25 Elo of +80, covered, ratings closer than ignoring "
          f"(weighting none, tournament 0)   [{time.perf_counter() - started:.0f} s]")


if __name__ == "__main__":
    main()
