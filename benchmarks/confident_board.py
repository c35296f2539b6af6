"""The saving, measured: matches until a board is confident enough, for `arena run --until` against round robins,
balanced uniform batches and swiss, on the rating-level simulator of the same loop (arena.app.runner.until.simulate).

Tournaments of 6, 10 and 20 entries with planted strengths of two shapes (spread, clustered: see their functions),
each match won by Pro with the Bradley–Terry probability of the planted ratings, the board refitted after each batch
as `arena rate` fits it (bootstrap intervals of --replicates). Criteria: top=1, top=3, separability=0.8. Designs:
until (active batches of as many matches as entries, among the pairs the criterion waits on), uniform (balanced
random batches of as many matches as entries), round-robin (whole double round robins), swiss (two rounds a batch).
`until` runs once per criterion, since its draw serves the criterion; a baseline's draws do not depend on the
criterion, so it runs once per seed and each criterion is read off the first refit at which it holds. A run that
reaches --max-matches stops there, counted at the cap (its figure a lower bound) and reported.

Prints per tournament x criterion the matches (median and 10th-90th percentile over --seeds seeds) of each design,
the ratio until/uniform beside its target (<= 0.5 for top=3 and separability=0.8), and the accuracy at the stop:
Kendall's tau of the board's order against the planted order, and the share of seeds whose board's best K (top=1:
the best; otherwise the best three, in order) is the planted best K (target for until's top=3: >= 95%); then a
rule of thumb and the wall time.

--weights: instead, `until` runs twice on the same seeds, refitted with and without inverse-probability weights
(each match weighted by 1 / its selection probability, normalised to mean 1), both with sandwich intervals (the
robust covariance a weighted fit needs; the bootstrap takes no match weights): matches, tau, best K, and the
coverage of the 95% intervals (the share of entries whose interval holds its planted rating, both centred at the
mean rating).

--save FILE records each run as it ends and skips those FILE holds (with the same --replicates and --max-matches),
so that a killed benchmark goes on from where it was: the full run takes hours on 2 shared cores.

Run: .venv/bin/python benchmarks/confident_board.py [--quick] [--seeds 20] [--replicates 1000]
     [--max-matches 3000] [--sizes 6 10 20] [--workers 2] [--weights] [--save FILE]
"""
from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Sequence

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # the workers are the parallelism; n <= 20 matrices gain nothing
import numpy as np  # noqa: E402
from scipy.stats import kendalltau  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from arena.app.runner import until  # noqa: E402
from leaderboard import bt, elo  # noqa: E402

CRITERIA = ("top=1", "top=3", "separability=0.8")
DESIGNS = ("until", "uniform", "round-robin", "swiss")
SHAPES = ("spread", "clustered")
TARGET_RATIO, TARGET_TOP3 = 0.5, 0.95
RATIO_TARGETED = ("top=3", "separability=0.8")


# --- the planted tournaments ----------------------------------------------------------------------------------

def spread(n: int) -> list[float]:
    """Planted logit strengths, best first: evenly 1 logit apart (174 Elo: the better wins 73% of matches)."""
    return [float(n - 1 - i) for i in range(n)]


def clustered(n: int) -> list[float]:
    """Planted logit strengths, best first: the best three 2.5 logits apart (the better wins 92%) and 2.5 above the
    rest, which come in clusters of three 0.5 apart (62%), each cluster 2.5 below the one above. For 6 entries: gaps
    of 2.5 down to the fourth, the last three 0.5 apart (the issue's example)."""
    strengths = [0.0]
    for i in range(1, n):
        within_cluster = i > 3 and (i - 3) % 3 != 0
        strengths.append(strengths[-1] - (0.5 if within_cluster else 2.5))
    return strengths


def planted(n: int, shape: str, seed: int) -> tuple[list[str], dict[str, float]]:
    """The entries best first and their planted Elo ratings (mean BASE_RATING); names are shuffled per seed, so that
    no tie broken by name favours the planted order."""
    logits = (spread if shape == "spread" else clustered)(n)
    mean = sum(logits) / n
    names = [f"e{k:02d}" for k in range(n)]
    random.Random(seed).shuffle(names)
    return names, {e: elo.BASE_RATING + elo.ELO_SCALE * (t - mean) for e, t in zip(names, logits)}


# --- one run ----------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Task:
    n: int
    shape: str
    seed: int
    design: str
    criteria: tuple[str, ...]  # until: one; a baseline: all, read off the same run
    weights: str = "bootstrap"  # the fit: "bootstrap" (the arena's), "sandwich" or "ipw" (--weights)


@dataclass(frozen=True)
class Outcome:
    task: Task
    criterion: str
    matches: int
    met: bool
    tau: float
    best: bool  # the board's best K are the planted best K, in order
    coverage: float  # share of entries whose 95% interval holds the planted rating
    seconds: float


class _AllHeld(Exception):
    """Raised by _Watch once every criterion has held: the baseline's run has nothing left to tell."""


class _Watch:
    """simulate's fit hook for a baseline: the simulator's own fit, and the first refit at which each criterion
    holds (matches so far and the board)."""

    def __init__(self, criteria: Sequence[str], entries: Sequence[str]) -> None:
        self.criteria = {c: until.parse_criterion(c) for c in criteria}
        self.entries = list(entries)
        self.first: dict[str, tuple[int, until.Board]] = {}

    def __call__(self, played: list[tuple[str, str, float]], replicates: int, seed: int) -> Any:
        rows = until._fit(played, replicates, seed)  # the simulator's fit, as `arena rate` fits
        b = until.board(rows, self.entries)
        for name, criterion in self.criteria.items():
            if name not in self.first and until.settlement(criterion, b).met:
                self.first[name] = (len(played), b)
        if len(self.first) == len(self.criteria):
            raise _AllHeld
        return rows


class _Weighted:
    """simulate's fit hook for --weights: the side-fitted BT fit under the weak prior with sandwich 95% intervals
    (as bt.sandwich_intervals), each match weighted by 1 / its selection probability (ipw) or not (sandwich).
    until's draw picks each match among the focus pairs with probability 1 / |focus| of the board before the batch,
    so the weight is |focus|, normalised to mean 1."""

    def __init__(self, criterion: until.Criterion, entries: Sequence[str], ipw: bool) -> None:
        self.criterion, self.entries, self.ipw = criterion, list(entries), ipw
        self.before = until.board([], self.entries)
        self.focus: list[int] = []  # per match: |focus| when it was drawn

    def __call__(self, played: list[tuple[str, str, float]], replicates: int, seed: int) -> Any:
        self.focus += [len(until.focus(self.criterion, self.before))] * (len(played) - len(self.focus))
        inverse = np.array(self.focus, dtype=float)
        rows = sandwich_fit(played, inverse / inverse.mean() if self.ipw else np.ones(len(played)))
        self.before = until.board(rows, self.entries)
        return rows


def sandwich_fit(played: Sequence[tuple[str, str, float]], weights: np.ndarray) -> list[dict[str, Any]]:
    """Rows (entry, rating, ci_low, ci_high) of the weighted BT fit with the side, as `arena rate --ci sandwich`
    fits it with match weights w = the paper's times `weights`: the rating the MLE where it exists, the interval the
    mode under the weak prior +- 1.96 sandwich standard errors (bt.sandwich_intervals), stretched to the rating."""
    names = sorted({e for pro, con, _ in played for e in (pro, con)})
    n = len(names)
    index = {e: i for i, e in enumerate(names)}
    a = np.array([index[p[0]] for p in played])
    b = np.array([index[p[1]] for p in played])
    share = np.array([p[2] for p in played])
    y = bt.soft_outcomes(share, 1 - share)
    w = bt.match_weights(share, 1 - share) * weights
    statistics = bt.side_statistics(a, b, y, w, n)
    rating = bt.to_elo(bt.fit_side(*statistics, prior=bt.prior_for(bt.pair_statistics(a, b, y, w, n)[0]))[:n], None)
    x = bt.fit_side(*statistics, prior=elo.PRIOR_PRECISION)
    cov = bt.sandwich_covariance(x, a, b, y, w, prior=elo.PRIOR_PRECISION, side=True)
    half = until.Z * elo.ELO_SCALE * np.sqrt(np.maximum(np.diag(cov)[:n], 0.0))
    mode = bt.to_elo(x[:n], None)
    low, high = np.minimum(mode - half, rating), np.maximum(mode + half, rating)
    return [{"entry": names[i], "rating": float(rating[i]), "ci_low": float(low[i]), "ci_high": float(high[i])}
            for i in np.argsort(-rating, kind="stable")]


def run(task: Task, replicates: int, cap: int) -> list[Outcome]:
    """One simulated tournament of the task's design, and each of its criteria's outcome at its stop."""
    order, ratings = planted(task.n, task.shape, task.seed)
    start = time.perf_counter()
    if task.design == "until":
        criterion = until.parse_criterion(task.criteria[0])
        fit = None if task.weights == "bootstrap" else _Weighted(criterion, order, task.weights == "ipw")
        done = until.simulate(ratings, criterion, design="until", max_matches=cap, seed=task.seed,
                              replicates=replicates, fit=fit)
        stops = {task.criteria[0]: (done.matches, done.met, done.board)}
    else:
        watch = _Watch(task.criteria, order)
        # separability=1 implies the others, so it never ends the run before _Watch has seen them all hold.
        try:
            capped = until.simulate(ratings, until.parse_criterion("separability=1"), design=task.design,
                                    max_matches=cap, seed=task.seed, replicates=replicates, fit=watch).board
        except _AllHeld:
            capped = until.board([], order)  # not used: every criterion held
        stops = {c: (watch.first[c][0], True, watch.first[c][1]) if c in watch.first else (cap, False, capped)
                 for c in task.criteria}
    seconds = time.perf_counter() - start
    return [Outcome(task, c, matches, met, *accuracy(b, order, ratings, 1 if c == "top=1" else 3), seconds)
            for c, (matches, met, b) in stops.items()]


def accuracy(b: until.Board, order: Sequence[str], ratings: dict[str, float], k: int) -> tuple[float, bool, float]:
    """Kendall's tau of the board against the planted ratings, whether its best k are the planted best k in order,
    and the share of entries whose interval holds the planted rating."""
    tau = float(kendalltau([ratings[e] for e in b.entries], b.rating)[0])
    covered = [lo <= ratings[e] <= hi for e, lo, hi in zip(b.entries, b.low, b.high)]
    return tau, tuple(b.entries[:k]) == tuple(order[:k]), sum(covered) / len(covered)


def tasks(sizes: Sequence[int], seeds: int, weights: bool) -> list[Task]:
    """Every run, the slowest first (big tournaments; swiss pairs exactly up to 20 entries), so the workers end
    together."""
    cost = {"swiss": 0, "uniform": 1, "until": 2, "round-robin": 3}
    todo = []
    for n in sizes:
        for shape in SHAPES:
            for seed in range(seeds):
                if weights:
                    todo += [Task(n, shape, seed, "until", (c,), w) for c in CRITERIA for w in ("sandwich", "ipw")]
                    continue
                todo += [Task(n, shape, seed, "until", (c,)) for c in CRITERIA]
                todo += [Task(n, shape, seed, d, CRITERIA) for d in DESIGNS[1:]]
    return sorted(todo, key=lambda t: (-t.n, cost[t.design], t.seed))


def load(path: Path | None, replicates: int, cap: int) -> dict[Task, list[Outcome]]:
    """The runs --save has recorded in `path` (JSON lines) with these replicates and cap, by task."""
    if path is None or not path.exists():
        return {}
    done = {}
    for line in path.read_text().splitlines():
        record = json.loads(line)
        if (record["replicates"], record["cap"]) == (replicates, cap):
            task = Task(**{**record["task"], "criteria": tuple(record["task"]["criteria"])})
            done[task] = [Outcome(**{**o, "task": task}) for o in record["outcomes"]]
    return done


def save(path: Path | None, replicates: int, cap: int, found: list[Outcome]) -> None:
    """Append one run's outcomes to `path` (JSON lines), so that a killed benchmark goes on from where it was."""
    if path is not None:
        outcomes = [{k: v for k, v in asdict(o).items() if k != "task"} for o in found]
        record = {"replicates": replicates, "cap": cap, "task": asdict(found[0].task), "outcomes": outcomes}
        with path.open("a") as f:
            f.write(json.dumps(record) + "\n")


def _work(job: tuple[Task, int, int]) -> list[Outcome]:
    """run, for a worker process."""
    return run(*job)


# --- the figures --------------------------------------------------------------------------------------------------

def spread_text(values: Sequence[int], capped: int) -> str:
    """'372 (300–450)': the median and the 10th–90th percentile; ' [3 capped]' when runs hit the cap."""
    p10, median, p90 = np.percentile(values, [10, 50, 90])
    return f"{median:.0f} ({p10:.0f}–{p90:.0f})" + (f" [{capped} capped]" if capped else "")


def tables(outcomes: list[Outcome], sizes: Sequence[int], cap: int) -> list[str]:
    """The matches table and the accuracy table, in Markdown, and the rule of thumb."""
    by: dict[tuple[int, str, str, str], list[Outcome]] = {}
    for o in outcomes:
        by.setdefault((o.task.n, o.task.shape, o.criterion, o.task.design), []).append(o)
    matches = ["| tournament | criterion | " + " | ".join(DESIGNS) + " | until/uniform | target |",
               "|---|---|" + "---|" * (len(DESIGNS) + 2)]
    accurate = ["| tournament | criterion | " + " | ".join(DESIGNS) + " | target |",
                "|---|---|" + "---|" * (len(DESIGNS) + 1)]
    per_entry: dict[str, list[float]] = {c: [] for c in CRITERIA}
    for n in sizes:
        for shape in SHAPES:
            for c in CRITERIA:
                cells, marks = [], []
                medians = {}
                for d in DESIGNS:
                    runs = by.get((n, shape, c, d), [])
                    if not runs:
                        cells.append("–")
                        marks.append("–")
                        continue
                    counts = [o.matches for o in runs]
                    medians[d] = float(np.median(counts))
                    cells.append(spread_text(counts, sum(not o.met for o in runs)))
                    best = sum(o.best for o in runs) / len(runs)
                    marks.append(f"τ {np.mean([o.tau for o in runs]):.2f} · {best:.0%}")
                ratio, target = "–", "–"
                if "until" in medians and "uniform" in medians:
                    r = medians["until"] / medians["uniform"]
                    capped = any(not o.met for o in by[(n, shape, c, "uniform")])
                    ratio = f"{r:.2f}" + (" (uniform capped: at most)" if capped else "")
                    if c in RATIO_TARGETED:
                        target = f"<= {TARGET_RATIO} {'met' if r <= TARGET_RATIO else 'MISSED'}"
                if "until" in medians:
                    per_entry[c].append(medians["until"] / n)
                tournament = f"{n} {shape}"
                matches.append(f"| {tournament} | {c} | " + " | ".join(cells) + f" | {ratio} | {target} |")
                top = "–"
                if c == "top=3" and (n, shape, c, "until") in by:
                    runs = by[(n, shape, c, "until")]
                    share = sum(o.best for o in runs) / len(runs)
                    top = f"until best 3 >= {TARGET_TOP3:.0%} {'met' if share >= TARGET_TOP3 else 'MISSED'}"
                accurate.append(f"| {tournament} | {c} | " + " | ".join(marks) + f" | {top} |")
    thumb = ", ".join(f"{c} {np.median(v):.0f} ({min(v):.0f}–{max(v):.0f})" for c, v in per_entry.items() if v)
    capped_runs = sum(not o.met for o in outcomes)
    return ["Matches until the criterion holds: median (10th–90th percentile) over seeds; a run that hit the cap "
            f"({cap}) counts at the cap, [k capped] says how many did.", "", *matches, "",
            "Accuracy at the stop: mean Kendall τ of the board against the planted order · share of seeds whose "
            "best K (top=1: the best; otherwise the best three, in order) is the planted best K.", "", *accurate, "",
            f"Rule of thumb (--until, matches per entry, median over the tournaments (range)): {thumb}.",
            f"Runs that hit the cap: {capped_runs} of {len(outcomes)} (criterion x run)."]


def weights_table(outcomes: list[Outcome], sizes: Sequence[int]) -> list[str]:
    """--weights: until's runs refitted plain and with inverse-probability weights (sandwich intervals), side by side."""
    by: dict[tuple[int, str, str, str], list[Outcome]] = {}
    for o in outcomes:
        by.setdefault((o.task.n, o.task.shape, o.criterion, o.task.weights), []).append(o)
    lines = ["| tournament | criterion | matches plain | matches ipw | τ plain | τ ipw | best K plain | best K ipw | "
             "coverage plain | coverage ipw |", "|---|---|" + "---|" * 8]
    for n in sizes:
        for shape in SHAPES:
            for c in CRITERIA:
                plain, ipw = by.get((n, shape, c, "sandwich"), []), by.get((n, shape, c, "ipw"), [])
                if not plain or not ipw:
                    continue
                cells = [spread_text([o.matches for o in runs], sum(not o.met for o in runs)) for runs in (plain, ipw)]
                cells += [f"{np.mean([o.tau for o in runs]):.2f}" for runs in (plain, ipw)]
                cells += [f"{sum(o.best for o in runs) / len(runs):.0%}" for runs in (plain, ipw)]
                cells += [f"{np.mean([o.coverage for o in runs]):.0%}" for runs in (plain, ipw)]
                lines.append(f"| {n} {shape} | {c} | " + " | ".join(cells) + " |")
    return ["until refitted without (plain) and with inverse-probability weights (ipw), sandwich intervals both: "
            "matches median (10th–90th percentile), mean τ, best K recovered, mean coverage of the planted ratings "
            "by the 95% intervals (target 95%).", "", *lines]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--replicates", type=int, default=1000, help="bootstrap replicates of each refit")
    parser.add_argument("--max-matches", type=int, default=3000, help="a run's cap")
    parser.add_argument("--sizes", type=int, nargs="+", default=[6, 10, 20], help="tournament sizes (entries)")
    parser.add_argument("--workers", type=int, default=2, help="processes")
    parser.add_argument("--quick", action="store_true", help="5 seeds, 200 replicates, 6 and 10 entries")
    parser.add_argument("--weights", action="store_true", help="until with and without inverse-probability weights")
    parser.add_argument("--save", type=Path, default=None, metavar="FILE",
                        help="record each run in FILE (JSON lines) and skip the runs it holds already")
    args = parser.parse_args(argv)
    if args.quick:
        args.seeds, args.replicates, args.sizes = 5, 200, [6, 10]
    for name in ("seeds", "replicates", "max_matches", "workers"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")
    if any(n < 4 for n in args.sizes):
        parser.error("--sizes: top=3 needs at least 4 entries")
    todo = tasks(args.sizes, args.seeds, args.weights)
    print(f"$ python benchmarks/confident_board.py {' '.join(sys.argv[1:] if argv is None else argv)}")
    print(f"{len(todo)} runs: sizes {args.sizes}, {args.seeds} seeds, {args.replicates} bootstrap replicates, "
          f"cap {args.max_matches} matches, {args.workers} workers")
    start = time.perf_counter()
    done = load(args.save, args.replicates, args.max_matches)
    outcomes = [o for t in todo if t in done for o in done[t]]
    if done:
        print(f"{sum(t in done for t in todo)} runs read from {args.save}")
    jobs = [(t, args.replicates, args.max_matches) for t in todo if t not in done]
    with multiprocessing.Pool(args.workers) as pool:
        for k, found in enumerate(pool.imap_unordered(_work, jobs), len(todo) - len(jobs) + 1):
            outcomes += found
            save(args.save, args.replicates, args.max_matches, found)
            t = found[0].task
            print(f"[{k}/{len(todo)}] {t.n} {t.shape} seed {t.seed} {t.design}"
                  f"{'' if t.weights == 'bootstrap' else ' ' + t.weights} {'/'.join(t.criteria)}: "
                  + ", ".join(f"{o.matches}{'' if o.met else ' capped'}" for o in found)
                  + f" ({found[0].seconds:.0f} s)", file=sys.stderr, flush=True)
    print()
    print("\n".join(weights_table(outcomes, args.sizes) if args.weights else tables(outcomes, args.sizes,
                                                                                   args.max_matches)))
    runs = {o.task: o.seconds for o in outcomes}
    print(f"\nwall time {time.perf_counter() - start:.0f} s ({len(jobs)} runs; the {len(runs)} runs' own times add up "
          f"to {sum(runs.values()):.0f} s)")


if __name__ == "__main__":
    main()
