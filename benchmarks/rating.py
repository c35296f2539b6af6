"""Rating benchmark: `arena rate --results` on a million matches, beside a FastChat-style pipeline, and on a
big field.

Generates 1,000,000 matches among 100 entries of planted strengths (each judged by 3 runs
of the BT model, 10% of runs tied, so scores are points out of 3) into a results CSV,
then measures in the same run:
  1. ours, end to end as a user runs it: `arena rate --results FILE --bootstrap 1000
     --format json` in a subprocess (CSV reading included), its wall time and peak RSS,
     with the Pro advantage fitted (the default) and with `--side ignore`, the model the
     pipeline fits (sides are drawn at random here, so the fitted advantage is about 0);
  2. the reference: a FastChat-style pipeline on the same CSV — deduplicated outcome
     cells, then one scipy L-BFGS-B fit of the weighted BT likelihood per bootstrap
     replicate, each replicate drawing multinomial counts of the cells;
  3. a big field: 100,000 matches among 500 entries (--big-matches, --big-entries), the same
     `arena rate --results` with 1000 replicates, side fitted and ignored;
  4. `arena rate` on a workspace holding 10,000 judged matches.
Prints the times (wall, and the CPU time, user + system, of the subprocess: the machine is
shared, so wall time alone says little), the ratio, the memory, how far our `--side ignore`
ratings and intervals are from the pipeline's (beside how far two of our runs with different
seeds are from each other: the Monte Carlo noise of 1000-replicate percentiles), and PASS/FAIL
against the targets (1M matches: <= 1.5 s, >= 10x, <= 1.5 GB, widths within 10%; the big
field: <= 5 s; the workspace: < 2 s).

With --before TREE (a checkout of an earlier version, e.g. `git archive COMMIT | tar -x -C
TREE`), every `arena rate --results` run is also timed with that tree's code on the same file,
--repeat times each, the two alternating (medians printed: the machine is shared), and the
largest difference between the two outputs (ratings, interval bounds, Pro advantage) is
printed: the same seed draws the same resamples, so they should agree to within rounding.

Run: .venv/bin/python benchmarks/rating.py [--matches N] [--replicates R] [--big-matches N]
     [--big-entries N] [--before TREE [--repeat N]]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import optimize
from scipy.special import expit, log_expit

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from leaderboard import bt, elo  # noqa: E402

ENTRIES, RUNS, TIE_RATE = 100, 3, 0.1
TARGET_S, TARGET_SPEEDUP, TARGET_GB, TARGET_WIDTH, TARGET_WORKSPACE_S = 1.5, 10.0, 1.5, 0.10, 2.0
TARGET_BIG_S = 5.0


def generate(path: Path, matches: int, seed: int = 0, entries: int = ENTRIES) -> None:
    """Results CSV of `matches` matches between uniformly drawn pairs of planted strengths."""
    rng = np.random.default_rng(seed)
    theta = rng.normal(0.0, 1.0, entries)
    a = rng.integers(0, entries, matches)
    b = (a + rng.integers(1, entries, matches)) % entries
    p = expit(theta[a] - theta[b])
    ties = rng.binomial(RUNS, TIE_RATE, matches)
    wins = rng.binomial(RUNS - ties, p)
    names = np.array([f"entry-{i:03d}" for i in range(entries)])
    pd.DataFrame({
        "match_id": np.char.add("m", np.arange(matches).astype(str)), "entry_a": names[a], "entry_b": names[b],
        "score_a": wins + 0.5 * ties, "score_b": RUNS - ties - wins + 0.5 * ties,
        "category": "policy", "dimension": "overall",
    }).to_csv(path, index=False)


def run_measured(cmd: list[str], env: dict | None = None, cwd: Path | None = None) -> tuple[float, float, str, float]:
    """Wall seconds, peak RSS in GB and CPU seconds (user + system; of that child alone, via wait4), and stdout
    of a command."""
    with tempfile.TemporaryFile() as out:
        started = time.perf_counter()
        child = subprocess.Popen(cmd, stdout=out, stderr=subprocess.PIPE, env=env, cwd=cwd)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - started
        child.returncode = os.waitstatus_to_exitcode(status)
        stderr = child.stderr.read().decode()
        if child.returncode:
            raise RuntimeError(f"{cmd[:4]} failed ({child.returncode}): {stderr}")
        out.seek(0)
        # ru_maxrss is in KiB on Linux
        return wall, usage.ru_maxrss / 2**20, out.read().decode(), usage.ru_utime + usage.ru_stime


def ours(csv: Path, replicates: int, seed: int = 0, side: str = "fit",
         tree: Path | None = None) -> tuple[float, float, dict, dict | None, float]:
    """`arena rate --results` end to end (with tree, that checkout's code): wall seconds, peak GB, entry ->
    (rating, ci_low, ci_high), the Pro advantage (None with side "ignore"), and CPU seconds."""
    # From within the tree, so that its packages come before the installed ones (`-m` puts the folder first).
    env = None if tree is None else {**os.environ, "PYTHONPATH": str(tree)}
    wall, peak_gb, stdout, cpu = run_measured([sys.executable, "-m", "arena", "rate", "--results", str(csv),
                                               "--bootstrap", str(replicates), "--seed", str(seed), "--side", side,
                                               "--format", "json"], env, tree)
    result = json.loads(stdout)
    return wall, peak_gb, {r["entry"]: (r["rating"], r["ci_low"], r["ci_high"]) for r in result["ratings"]}, \
        result["side"], cpu


def against_before(label: str, csv: Path, replicates: int, side: str, now: tuple, tree: Path | None,
                   repeat: int = 1) -> None:
    """With tree, the same run of that checkout's code: its wall and CPU seconds beside ours (medians of `repeat`
    runs of each, alternating, ours counting `now` as its first), and how far apart the two outputs are
    (ratings, interval bounds and Pro advantage, in Elo)."""
    if tree is None:
        return
    runs = {"now": [now], "before": []}
    for k in range(repeat):
        runs["before"].append(ours(csv, replicates, side=side, tree=tree))
        if k + 1 < repeat:
            runs["now"].append(ours(csv, replicates, side=side))
    (wall, cpu), (our_wall, our_cpu) = ((np.median([r[0] for r in runs[key]]), np.median([r[4] for r in runs[key]]))
                                        for key in ("before", "now"))
    _, _, table, advantage, _ = runs["before"][0]
    apart = max(abs(now[2][k][i] - table[k][i]) for k in table for i in range(3))
    if advantage is not None:
        apart = max(apart, *(abs(now[3][key] - advantage[key]) for key in advantage))
    medians = f"medians of {repeat}: ours {our_wall:.2f} s, CPU {our_cpu:.2f} s; " if repeat > 1 else ""
    print(f"{label} before {wall:7.2f} s   CPU {cpu:6.2f} s   ({medians}{wall / our_wall:.2f}x our wall, "
          f"{cpu / our_cpu:.2f}x our CPU; outputs at most {apart:.2f} Elo apart)")


def pipeline(csv: Path, replicates: int, seed: int = 0) -> dict:
    """FastChat-style: deduplicated (a, b, outcome) cells, one L-BFGS-B fit per bootstrap replicate."""
    frame = pd.read_csv(csv)
    cells = frame.groupby(["entry_a", "entry_b", "score_a", "score_b"], sort=False).size().reset_index(name="count")
    codes, names = pd.factorize(pd.concat([cells.entry_a, cells.entry_b]), sort=True)
    a, b = codes[: len(cells)], codes[len(cells):]
    y = bt.soft_outcomes(cells.score_a, cells.score_b)
    w = bt.match_weights(cells.score_a, cells.score_b)
    counts = cells["count"].to_numpy()
    n, total = len(names), counts.sum()

    def nll(free, weight):  # mean over matches; entry 0 pinned at 0
        theta = np.concatenate([[0.0], free])
        d = theta[a] - theta[b]
        value = -np.sum(weight * (y * log_expit(d) + (1 - y) * log_expit(-d))) / total
        slope = weight * (expit(d) - y) / total
        grad = np.bincount(a, slope, minlength=n) - np.bincount(b, slope, minlength=n)
        return value, grad[1:]

    def fit(count):
        result = optimize.minimize(nll, np.zeros(n - 1), args=(w * count,), jac=True, method="L-BFGS-B",
                                   options={"gtol": 1e-9, "ftol": 1e-13, "maxiter": 10_000})
        theta = np.concatenate([[0.0], result.x])
        return elo.BASE_RATING + elo.ELO_SCALE * (theta - theta.mean())

    full = fit(counts)
    rng = np.random.default_rng(seed)
    boot = np.empty((replicates, n))
    started = time.perf_counter()
    for r in range(replicates):
        boot[r] = fit(rng.multinomial(total, counts / total))
        if (r + 1) % max(1, replicates // 10) == 0:
            print(f"  pipeline: {r + 1}/{replicates} replicates, {time.perf_counter() - started:.0f} s", flush=True)
    low, high = np.percentile(boot, [2.5, 97.5], axis=0)
    return {name: (full[i], low[i], high[i]) for i, name in enumerate(names)}, len(cells)


def workspace(path: Path, matches: int, seed: int = 0) -> None:
    """A workspace of 20 offline entries and `matches` done matches, each judged by 3 runs."""
    from arena.app.commands import open_workspace
    from arena.app.setup.demo import CONFIG
    from arena.workspace.folder import init_workspace

    names = [f"sim-{i:02d}" for i in range(20)]
    rng = np.random.default_rng(seed)
    strengths = rng.normal(0.0, 1.0, len(names))
    entries = "".join(f'\n[[entries]]\nname = "{name}"\ndebater = "direct"\nmodel = "offline/{name}"\n'
                      f"strength = {s:.3f}\n" for name, s in zip(names, strengths))
    init_workspace(path, CONFIG.format(entries=entries, language="en"))
    ws = open_workspace(path)
    try:
        motions = ws.store.motion_ids()
        pro = rng.integers(0, len(names), matches)
        con = (pro + rng.integers(1, len(names), matches)) % len(names)
        ids = ws.store.add_tournament("round-robin", seed, {}, [
            (motions[k % len(motions)], names[i], names[j]) for k, (i, j) in enumerate(zip(pro, con))])
        p = expit(strengths[pro] - strengths[con])
        outcome = np.where(rng.random((matches, RUNS)) < TIE_RATE, "tie",
                           np.where(rng.random((matches, RUNS)) < p[:, None], "pro", "con"))
        stamp = "2025-01-01T00:00:00.000000+00:00"
        rows = [(match_id, "sim-debatrix", run, outcome[k, run],  # the first judge: the one `arena rate` rates
                 json.dumps({d: outcome[k, run] for d in ("argument", "source", "language")}), "", None, 1, stamp)
                for k, match_id in enumerate(ids) for run in range(RUNS)]
        conn = ws.store.conn
        conn.execute("BEGIN IMMEDIATE")
        conn.executemany("INSERT INTO verdicts (match_id, judge, run, overall, dimensions, rationale, error, simulated,"
                         " created_at) VALUES (?,?,?,?,?,?,?,?,?)", rows)
        conn.execute("UPDATE matches SET status='done', started_at=?, finished_at=?", (stamp, stamp))
        conn.execute("COMMIT")
    finally:
        ws.close()


def width_change(table: dict, reference: dict, names: list[str]) -> np.ndarray:
    """Per entry, the interval width in table relative to reference, minus 1."""
    mine, theirs = np.array([table[k] for k in names]), np.array([reference[k] for k in names])
    return (mine[:, 2] - mine[:, 1]) / (theirs[:, 2] - theirs[:, 1]) - 1


def verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=1_000_000)
    parser.add_argument("--replicates", type=int, default=1000)
    parser.add_argument("--workspace-matches", type=int, default=10_000)
    parser.add_argument("--big-matches", type=int, default=100_000)
    parser.add_argument("--big-entries", type=int, default=500)
    parser.add_argument("--before", type=Path, default=None, metavar="TREE",
                        help="a checkout of an earlier version, timed on the same files")
    parser.add_argument("--repeat", type=int, default=1,
                        help="with --before: runs of each version, alternating, whose medians are compared")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        csv = Path(tmp) / "results.csv"
        started = time.perf_counter()
        generate(csv, args.matches)
        print(f"generated {args.matches:,} matches among {ENTRIES} entries in {time.perf_counter() - started:.1f} s"
              f" ({csv.stat().st_size / 2**20:.0f} MB CSV)")

        run = ours(csv, args.replicates)
        ours_s, ours_gb, fitted, side, ours_cpu = run
        print(f"ours       {ours_s:7.2f} s   CPU {ours_cpu:6.2f} s   peak RSS {ours_gb:.2f} GB   (side fitted: Pro "
              f"advantage {side['pro_advantage']:+.2f} Elo, 95% CI {side['ci_low']:+.2f} to {side['ci_high']:+.2f})")
        against_before("ours      ", csv, args.replicates, "fit", run, args.before, args.repeat)
        blind = ours(csv, args.replicates, side="ignore")
        blind_s, blind_gb, our_table, _, blind_cpu = blind
        print(f"ours blind {blind_s:7.2f} s   CPU {blind_cpu:6.2f} s   peak RSS {blind_gb:.2f} GB   (--side ignore, "
              f"the pipeline's model)")
        against_before("ours blind", csv, args.replicates, "ignore", blind, args.before, args.repeat)
        again_s, _, other_seed, _, _ = ours(csv, args.replicates, seed=1, side="ignore")
        print(f"ours again {again_s:7.2f} s   (--side ignore, seed 1, for the Monte Carlo noise below)")
        moved = max(abs(fitted[k][0] - our_table[k][0]) for k in fitted)
        print(f"side       max |fitted - ignored| rating {moved:.2f} Elo")
        started = time.perf_counter()
        reference, cells = pipeline(csv, args.replicates)
        pipeline_s = time.perf_counter() - started
        print(f"pipeline   {pipeline_s:7.2f} s   ({cells:,} deduplicated cells, {args.replicates} L-BFGS-B fits)")

        names = sorted(reference)
        change = width_change(our_table, reference, names)
        noise = np.abs(width_change(other_seed, our_table, names))
        width_diff = np.abs(change)
        rating_diff = max(abs(our_table[k][0] - reference[k][0]) for k in names)
        ratio = pipeline_s / ours_s
        print(f"ratio      {ratio:7.1f}x")
        print(f"ratings    max |ours - pipeline| {rating_diff:.3f} Elo")
        median_width = np.median([reference[k][2] - reference[k][1] for k in names])
        print(f"intervals  |width ours / pipeline - 1|: mean {width_diff.mean():.1%}, max {width_diff.max():.1%}"
              f" (signed mean {change.mean():+.1%}; median width {median_width:.1f} Elo)")
        print(f"           ours seed 1 vs seed 0, the same:  mean {noise.mean():.1%}, max {noise.max():.1%}")
        print(f"  {verdict(ours_s <= TARGET_S)} time <= {TARGET_S} s   {verdict(ratio >= TARGET_SPEEDUP)} "
              f">= {TARGET_SPEEDUP:.0f}x   {verdict(ours_gb <= TARGET_GB)} memory <= {TARGET_GB} GB   "
              f"{verdict(width_diff.max() <= TARGET_WIDTH)} widths within {TARGET_WIDTH:.0%}")

    with tempfile.TemporaryDirectory() as tmp:
        csv = Path(tmp) / "big.csv"
        generate(csv, args.big_matches, entries=args.big_entries)
        field = f"{args.big_matches:,} matches among {args.big_entries} entries, {args.replicates} replicates"
        print(f"big field: {field}")
        times = []
        for side in ("fit", "ignore"):
            run = ours(csv, args.replicates, side=side)
            times.append(run[0])
            print(f"big {side:6s} {run[0]:7.2f} s   CPU {run[4]:6.2f} s   peak RSS {run[1]:.2f} GB")
            against_before(f"big {side:6s}", csv, args.replicates, side, run, args.before, args.repeat)
        print(f"  {verdict(max(times) <= TARGET_BIG_S)} time <= {TARGET_BIG_S:.0f} s")

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "ws"
        workspace(path, args.workspace_matches)
        times = [run_measured([sys.executable, "-m", "arena", "rate", "-w", str(path), "--format", "json"])[0]
                 for _ in range(3)]
        print(f"arena rate on a {args.workspace_matches:,}-match workspace: {np.median(times):.2f} s (median of 3)"
              f"   {verdict(np.median(times) < TARGET_WORKSPACE_S)} < {TARGET_WORKSPACE_S:.0f} s")


if __name__ == "__main__":
    main()
