"""Fair ratings benchmark: controlled ratings (`arena rate --control length`) against planted truth, on real debates,
and what the control costs.

Prints each figure beside its reference or target, in the same run:
  1. Planted truth: --tournaments simulated tournaments of 12 entries of planted strengths (one of middling
     strength writing 1.8x the words of the rest), each match judged by 3 runs of Bradley–Terry with a planted
     length effect (--coef logits per unit of x = (pro - con)/(pro + con) of the words). For the long-winded
     entry: its raw rating's error (target: over-rated by >= 60 Elo) beside its controlled rating's (target:
     within 15 Elo of the truth); and how often the length coefficient's 95% interval (bootstrap, 1000
     replicates) holds the planted value (target >= 90%). Both fits use --weighting none, the plain likelihood
     whose coefficient is the planted one (the paper's weighting stretches the scale by about 12% at 3 runs);
     the paper's coefficient is printed beside it.
  2. Real debates (--lechmazur WS: a workspace of `arena import lechmazur` of lechmazur/debate's checkout): the
     longer side's share of decided matches, the length coefficient with its interval, how many of the raw top
     10 change place, and Spearman's rank correlation of raw and controlled ratings.
  3. Cost (--cost): `arena rate --results FILE --bootstrap 1000 --format json` on --matches matches among 100
     entries (default 100,000 and 1,000,000), in subprocesses: CPU time (user + system) of the plain bootstrap fit,
     and beside it that of `--control length` by each option (OPTIONS: replicates over cells, the default; exact
     replicates, as before; exact replicates over x binned; the sandwich), with the ratio against the target
     (<= 1.5x the plain fit at 100,000 matches, <= 3x at 1,000,000) and the load average; each the median of
     --repeats runs taken in turn (the machine's other work moves one run's CPU time by some 15%).

Run: .venv/bin/python benchmarks/fair_ratings.py [--tournaments 100] [--lechmazur WS]
     [--cost [--matches 100000,1000000] [--options cells,exact,binned,sandwich] [--repeats 3]]
"""
from __future__ import annotations

import argparse
import io
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from leaderboard import bt, elo  # noqa: E402
from leaderboard.ratings import rate  # noqa: E402
from leaderboard.results import csv_text  # noqa: E402

ARENA = str(Path(sys.executable).with_name("arena"))
ENTRIES = [f"e{k:02d}" for k in range(12)]
VERBOSE = "e05"
TARGET_RAW, TARGET_FAIR, TARGET_COVERAGE = 60.0, 15.0, 0.90
TARGET_COST, TARGET_COST_MILLION = 1.5, 3.0  # controlled over plain bootstrap fit: at 100,000 matches, at 1,000,000
BINS = 16  # the binned option's x bins per unit


def tournament(seed: int, matches: int, coef: float, factor: float = 1.8, runs: int = 3, entries=ENTRIES,
               verbose: str | None = VERBOSE) -> tuple[pd.DataFrame, dict[str, float]]:
    """Results rows of a tournament of planted strengths (evenly spread over 2.4 logits, the verbose entry at the
    mean) and words (about 500 a side, sd 60; the verbose entry `factor` times that), each of `runs` runs won by
    Pro with P = sigmoid(t_pro - t_con + coef x); and the true ratings."""
    rng = np.random.default_rng(seed)
    n = len(entries)
    strength = np.linspace(-1.2, 1.2, n)
    rng.shuffle(strength)
    if verbose is not None:
        k = entries.index(verbose)
        middle = int(np.argmin(np.abs(strength)))
        strength[[k, middle]] = strength[[middle, k]]
    strength -= strength.mean()
    a = rng.integers(0, n, matches)
    b = (a + rng.integers(1, n, matches)) % n
    length = np.array([factor if name == verbose else 1.0 for name in entries])
    words_a = np.maximum(1, np.round(rng.normal(500, 60, matches) * length[a])).astype(int)
    words_b = np.maximum(1, np.round(rng.normal(500, 60, matches) * length[b])).astype(int)
    x = (words_a - words_b) / (words_a + words_b)
    score_a = rng.binomial(runs, bt.sigmoid(strength[a] - strength[b] + coef * x)).astype(float)
    names = np.array(entries)
    frame = pd.DataFrame({"match_id": [f"m{k}" for k in range(matches)], "entry_a": names[a], "entry_b": names[b],
                          "score_a": score_a, "score_b": runs - score_a, "words_a": words_a, "words_b": words_b})
    return frame, dict(zip(entries, elo.BASE_RATING + elo.ELO_SCALE * strength))


def planted(tournaments: int, matches: int, coef: float, replicates: int) -> None:
    """Part 1: the long-winded entry raw and controlled against its truth; the coefficient's coverage."""
    raw_error, fair_error, covered, paper = [], [], [], []
    planted_elo = coef * elo.ELO_SCALE
    started = time.perf_counter()
    for seed in range(tournaments):
        frame, truth = tournament(seed, matches, coef)
        raw = {r["entry"]: r["rating"] for r in rate(frame, bootstrap=0, weighting="none")["ratings"]}
        fit = rate(frame, control=("length",), bootstrap=replicates, seed=seed, weighting="none")
        fair = {r["entry"]: r["rating"] for r in fit["ratings"]}
        raw_error.append(raw[VERBOSE] - truth[VERBOSE])
        fair_error.append(fair[VERBOSE] - truth[VERBOSE])
        length = fit["control"]["length"]
        covered.append(length["ci_low"] <= planted_elo <= length["ci_high"])
        if seed < 10:
            paper.append(rate(frame, control=("length",), bootstrap=0)["control"]["length"]["coef"])
    seconds = time.perf_counter() - started
    raw_error, fair_error = np.array(raw_error), np.array(fair_error)
    print(f"1. planted truth: {tournaments} tournaments of 12 entries x {matches} matches x 3 runs, planted length "
          f"effect {coef} logits = {planted_elo:.0f} Elo per unit of x; {VERBOSE} at the mean writes 1.8x the words "
          f"({seconds:.0f} s)")
    print(f"   {VERBOSE} raw rating - truth:        mean {raw_error.mean():+6.1f} Elo (min {raw_error.min():+.1f})   "
          f"target >= +{TARGET_RAW:.0f}   {_verdict(raw_error.mean() >= TARGET_RAW)}")
    print(f"   {VERBOSE} controlled rating - truth: mean {fair_error.mean():+6.1f} Elo, mean |error| "
          f"{np.abs(fair_error).mean():.1f} (largest {np.abs(fair_error).max():.1f})   target within "
          f"{TARGET_FAIR:.0f}   {_verdict(abs(fair_error.mean()) <= TARGET_FAIR)}")
    print(f"   length coefficient's 95% interval ({replicates} bootstrap replicates) holds {planted_elo:.0f}: "
          f"{np.mean(covered):.0%} of tournaments   target >= {TARGET_COVERAGE:.0%}   "
          f"{_verdict(np.mean(covered) >= TARGET_COVERAGE)}")
    print(f"   (the paper's weighting: coefficient {np.mean(paper):.0f} Elo on average over the first {len(paper)}, "
          f"against {planted_elo:.0f} planted)")


def lechmazur(workspace: Path) -> None:
    """Part 2: the length control on lechmazur/debate's imported panel."""
    from scipy.stats import spearmanr  # here: --cost's subprocesses import this module, and should not pay for it

    frame = pd.read_csv(io.StringIO(_arena("rate", "-w", str(workspace), "--judge", "lechmazur-panel", "--format",
                                      "csv")), keep_default_na=False)
    main = frame[frame["dimension"] == "overall"]
    decided = main[main["score_a"] != main["score_b"]]
    longer = decided[decided["words_a"] != decided["words_b"]]
    longer_won = ((longer["score_a"] > longer["score_b"]) == (longer["words_a"] > longer["words_b"])).mean()
    raw = json.loads(_arena("rate", "-w", str(workspace), "--judge", "lechmazur-panel", "--format", "json"))
    fair = json.loads(_arena("rate", "-w", str(workspace), "--judge", "lechmazur-panel", "--control", "length",
                             "--format", "json"))
    sandwich = json.loads(_arena("rate", "-w", str(workspace), "--judge", "lechmazur-panel", "--control", "length",
                                 "--ci", "sandwich", "--format", "json"))
    raw_rank = {r["entry"]: k for k, r in enumerate(raw["ratings"], 1)}
    fair_rank = {r["entry"]: k for k, r in enumerate(fair["ratings"], 1)}
    moved = [name for name, k in raw_rank.items() if k <= 10 and fair_rank[name] != k]
    rho = spearmanr([raw_rank[e] for e in raw_rank], [fair_rank[e] for e in raw_rank]).statistic
    length, robust = fair["control"]["length"], sandwich["control"]["length"]
    print(f"\n2. lechmazur/debate ({len(main)} debates, {len(raw_rank)} models): the side with more words won "
          f"{longer_won:.1%} of {len(longer)} decided matches")
    print(f"   length coefficient {length['coef']:+.0f} Elo per unit of x, 95% CI {length['ci_low']:+.0f} to "
          f"{length['ci_high']:+.0f} (bootstrap; sandwich {robust['ci_low']:+.0f} to {robust['ci_high']:+.0f}); "
          f"x has sd {np.std(_contrast(main)):.3f}, so a 55/45 split of the words is worth "
          f"{length['coef'] * 0.1:+.0f} Elo")
    print(f"   Pro advantage raw {raw['side']['pro_advantage']:+.0f}, controlled {fair['side']['pro_advantage']:+.0f}")
    print(f"   of the raw top 10, {len(moved)} change place ({', '.join(moved) or 'none'}); Spearman raw vs "
          f"controlled {rho:.3f}")
    for name in list(raw_rank)[:10]:
        print(f"     {raw_rank[name]:>2} -> {fair_rank[name]:>2}  {name}")


# The ways tried to give a controlled fit its bootstrap intervals, each run as `arena rate --control length` with
# leaderboard.control_bootstrap.bootstrap replaced (use_option): (name, --ci, what it is).
OPTIONS = (
    ("cells", "bootstrap", "replicates over the n x n cells, each kind's spread of x drawn from its moments (default)"),
    ("exact", "bootstrap", "exact replicates, over every distinct match (the code before)"),
    ("binned", "bootstrap", f"exact replicates over matches pooled by pair, outcome and x binned to 1/{BINS}"),
    ("sandwich", "sandwich", "closed-form sandwich intervals (--ci sandwich), no bootstrap"),
)


def cost(sizes: list[int], replicates: int, options: list[str], repeats: int) -> None:
    """Part 3: CPU of `arena rate --results` without --control (the plain bootstrap fit) and with --control length
    by each option, side by side, and each ratio against its target: the median of `repeats` runs, taken in turn
    (an option over 3x the plain fit is run once: no noise brings it near a target)."""
    for matches in sizes:
        target = TARGET_COST if matches <= 100_000 else TARGET_COST_MILLION
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "results.csv"
            frame, _ = tournament(0, matches, 0.8, entries=[f"m{k:03d}" for k in range(100)], verbose=None)
            path.write_text(csv_text(frame), encoding="utf-8")
            print(f"\n3. cost: {matches:,} matches among 100 entries, {replicates} bootstrap replicates (`arena rate "
                  f"--results`, CPU = user + system of the subprocess, median of {repeats} runs; load average "
                  f"{_load()})")
            common = ("rate", "--results", str(path), "--bootstrap", str(replicates), "--format", "json")
            chosen = [option for option in OPTIONS if option[0] in options]
            seconds: dict[str, list[float]] = {name: [] for name, _, _ in [("plain", "", ""), *chosen]}
            outputs: dict[str, str] = {}
            for run in range(repeats):
                seconds["plain"].append(_cpu(*common, option="cells")[0])
                for name, ci, _ in chosen:
                    if run and np.median(seconds[name]) > 3 * np.median(seconds["plain"]):
                        continue
                    spent, outputs[name] = _cpu(*common, "--ci", ci, "--control", "length", option=name)
                    seconds[name].append(spent)
            plain = float(np.median(seconds["plain"]))
            print(f"   plain bootstrap fit: {plain:6.1f} s  ({' '.join(f'{s:.1f}' for s in seconds['plain'])})")
            for name, ci, what in chosen:
                spent, length = float(np.median(seconds[name])), json.loads(outputs[name])["control"]["length"]
                ratio = spent / plain
                print(f"   --control length, {name:<8} {spent:6.1f} s: {ratio:5.2f}x the plain fit   target <= "
                      f"{target:g}x   {_verdict(ratio <= target)}   (runs {' '.join(f'{s:.1f}' for s in seconds[name])};"
                      f" coefficient {length['coef']:+.0f} Elo, 95% {length['ci_low']:+.0f} to "
                      f"{length['ci_high']:+.0f}; planted {0.8 * elo.ELO_SCALE:+.0f}): {what}")
            print(f"   (load average at the end {_load()})")


def use_option(name: str) -> None:
    """Make leaderboard.control_bootstrap.bootstrap take option `name` (OPTIONS) in this process."""
    from leaderboard import control, control_bootstrap

    chosen = control_bootstrap.bootstrap
    if name == "exact":
        control_bootstrap.bootstrap = lambda d, **options: chosen(d, **options, cells=False)
    elif name == "binned":
        def binned(d: control.Design, **options: object) -> tuple[np.ndarray, np.ndarray]:
            """Exact replicates over d's matches with x rounded to 1/BINS, pooled by design(); in d's units."""
            rows = np.repeat(np.arange(len(d.count)), d.count.astype(int))
            x = np.round(d.X[rows] * d.scale * BINS) / BINS
            pooled = control.design(d.a[rows], d.b[rows], d.y[rows], d.w[rows], x, d.n, side=d.side)
            to_pooled = d.per_unit(np.ones(d.size)) / pooled.per_unit(np.ones(d.size))  # design units: d's to pooled's
            init = options.pop("init", None)
            replicates, start = chosen(pooled, **options, init=None if init is None else np.asarray(init) * to_pooled,
                                       cells=False)
            return replicates / to_pooled, start / to_pooled
        control_bootstrap.bootstrap = binned


def _cpu(*args: str, option: str | None = None) -> tuple[float, str]:
    """(CPU seconds of the subprocess, its stdout) of `arena ARGS`, with option (use_option) in force if given."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = _arena(*args, option=option)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), out


def _arena(*args: str, option: str | None = None) -> str:
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    if option is None:
        command = [ARENA, *args]
    else:  # arena's own main, in a Python that took the option first (every --cost run, so all start alike)
        command = [sys.executable, "-c", f"import sys; sys.path.insert(0, {str(ROOT)!r}); "
                   f"from benchmarks.fair_ratings import use_option; use_option({option!r}); "
                   "from arena.app.cli import main; sys.argv[0] = 'arena'; main()", *args]
    return subprocess.run(command, check=True, capture_output=True, text=True, env=env).stdout


def _load() -> str:
    return " ".join(f"{value:.1f}" for value in os.getloadavg())


def _contrast(frame: pd.DataFrame) -> np.ndarray:
    return ((frame["words_a"] - frame["words_b"]) / (frame["words_a"] + frame["words_b"])).to_numpy()


def _verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tournaments", type=int, default=100)
    parser.add_argument("--tournament-matches", type=int, default=2000)
    parser.add_argument("--coef", type=float, default=1.5, help="planted length effect, logits per unit of x")
    parser.add_argument("--replicates", type=int, default=1000)
    parser.add_argument("--lechmazur", type=Path, default=None, metavar="WS")
    parser.add_argument("--cost", action="store_true")
    parser.add_argument("--matches", default="100000,1000000", help="sizes for --cost, comma-separated")
    parser.add_argument("--repeats", type=int, default=3, help="--cost's runs of each, of which the median counts")
    parser.add_argument("--options", default=",".join(name for name, _, _ in OPTIONS),
                        help="--cost's options for --control, comma-separated: " + ", ".join(n for n, _, _ in OPTIONS))
    args = parser.parse_args()
    if args.tournaments:
        planted(args.tournaments, args.tournament_matches, args.coef, args.replicates)
    if args.lechmazur:
        lechmazur(args.lechmazur)
    if args.cost:
        cost([int(m) for m in args.matches.split(",")], args.replicates, args.options.split(","), args.repeats)


if __name__ == "__main__":
    main()
