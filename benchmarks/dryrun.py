"""Dry-run benchmark: `arena run --dry-run` on the agent4debate preset (200 pending matches), beside the full
simulation it replaces.

Sets up the preset with `arena init --preset agent4debate` in a temporary folder, then measures in the same run:
  1. ours: `arena run --dry-run -w WS`, end to end as a user runs it (start-up included), which plays one match
     in ten of each class on the offline simulator and projects the rest;
  2. the reference: with --before TREE (a checkout of the earlier version, e.g. `git archive f596fc1 | tar -x -C
     TREE`), that tree's `arena run --dry-run`, which played every match; without it, this version's full
     simulation (`arena.app.runner.dryrun.dry_run(ws, every=1)`, the same algorithm) in a subprocess.
Prints wall and CPU seconds (user + system of the child: the machine is shared, so wall time alone says little)
and their ratios (--repeat N: medians of N alternating runs of each), then per model the calls and tokens of the
projection beside the full simulation's and how far apart they are, and PASS/FAIL against the target (>= 5x
less CPU time). The simulated Agent4Debate's research and review rounds vary from match to match, so a
projection of the mean differs from one full play by a few per cent per model; the other kinds' calls are equal.

Run: LITELLM_LOCAL_MODEL_COST_MAP=True .venv/bin/python benchmarks/dryrun.py [--before TREE] [--repeat N]
     [--workspace DIR]
"""
from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET_SPEEDUP = 5.0
ROW = re.compile(r"^(\S+/\S+)\s+([\d,]+)\s+([\d,]+)\s+([\d,]+)\s", re.MULTILINE)  # a model's row of the table
FULL = ("import sys\nfrom arena.app import commands as app\nfrom arena.app.runner.dryrun import dry_run\n"
        "ws = app.open_workspace(sys.argv[1])\np = dry_run(ws, every=1)\n"
        "for r in p['models']:\n    print(r['model'], r['calls'], r['prompt_tokens'], r['completion_tokens'], '-')\n")


def measured(cmd: list[str], cwd: Path, env: dict) -> tuple[float, float, str]:
    """Wall seconds, CPU seconds (user + system of that child, via wait4) and stdout of a command."""
    with tempfile.TemporaryFile() as out:
        started = time.perf_counter()
        child = subprocess.Popen(cmd, stdout=out, stderr=subprocess.PIPE, cwd=cwd, env=env)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - started
        stderr = child.stderr.read().decode()
        if os.waitstatus_to_exitcode(status):
            raise RuntimeError(f"{' '.join(cmd[:6])} failed: {stderr}")
        out.seek(0)
        return wall, usage.ru_utime + usage.ru_stime, out.read().decode()


def table(stdout: str) -> dict[str, tuple[int, int]]:
    """model -> (calls, tokens) from a dry run's table (with or without thousands separators)."""
    return {m[1]: (int(m[2].replace(",", "")), int(m[3].replace(",", "")) + int(m[4].replace(",", "")))
            for m in ROW.finditer(stdout)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, default=None, metavar="TREE",
                        help="a checkout of the earlier version, whose `arena run --dry-run` played every match")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each, alternating; medians are compared")
    parser.add_argument("--workspace", type=Path, default=None, metavar="DIR",
                        help="a workspace of yours to project instead of a fresh agent4debate preset (only read)")
    args = parser.parse_args()
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    with tempfile.TemporaryDirectory(prefix="bench-dryrun-") as tmp:
        ws = args.workspace or Path(tmp) / "a4d"
        if args.workspace is None:
            measured([sys.executable, "-m", "arena", "init", str(ws), "--preset", "agent4debate"], ROOT, env)
        ours_cmd = ([sys.executable, "-m", "arena", "run", "--dry-run", "-w", str(ws)], ROOT, env)
        if args.before is not None:
            label = f"before ({args.before}: arena run --dry-run, every match played)"
            # From within the tree, so that its packages come before the installed ones (`-m` puts it first).
            ref_cmd = ([sys.executable, "-m", "arena", "run", "--dry-run", "-w", str(ws)], args.before.resolve(),
                       {**env, "PYTHONPATH": str(args.before.resolve())})
        else:
            label = "full simulation (dry_run(ws, every=1): every match played)"
            ref_cmd = ([sys.executable, "-c", FULL, str(ws)], ROOT, env)
        ours, ref = [], []
        for _ in range(args.repeat):
            ours.append(measured(*ours_cmd))
            ref.append(measured(*ref_cmd))
        wall, cpu = (statistics.median(r[i] for r in ours) for i in (0, 1))
        ref_wall, ref_cpu = (statistics.median(r[i] for r in ref) for i in (0, 1))
        projected, full = table(ours[0][2]), table(ref[0][2])
        sampled = re.search(r"projected from ([\d,]+) sampled", ours[0][2])
    of = f" (medians of {args.repeat})" if args.repeat > 1 else ""
    pending = re.search(r"dry run: ([\d,]+) pending", ours[0][2])
    print(f"{args.workspace or 'agent4debate preset'}, {pending[1] if pending else '?'} pending matches{of}")
    print(f"  ours (projection from {sampled[1] if sampled else '?'} played)  wall {wall:7.2f} s   CPU {cpu:7.2f} s")
    print(f"  {label}\n  {'':37s}wall {ref_wall:7.2f} s   CPU {ref_cpu:7.2f} s")
    print(f"  ratio: {ref_wall / wall:.1f}x wall, {ref_cpu / cpu:.1f}x CPU")
    print(f"\n{'model':38s} {'calls':>7s} {'full':>7s} {'diff':>7s}  {'tokens':>11s} {'full':>11s} {'diff':>7s}")
    for model in sorted(set(projected) | set(full)):
        (c, t), (fc, ft) = projected.get(model, (0, 0)), full.get(model, (0, 0))
        print(f"{model:38s} {c:7,d} {fc:7,d} {_pct(c, fc):>7s}  {t:11,d} {ft:11,d} {_pct(t, ft):>7s}")
    c, t = sum(v[0] for v in projected.values()), sum(v[1] for v in projected.values())
    fc, ft = sum(v[0] for v in full.values()), sum(v[1] for v in full.values())
    print(f"{'all models':38s} {c:7,d} {fc:7,d} {_pct(c, fc):>7s}  {t:11,d} {ft:11,d} {_pct(t, ft):>7s}")
    verdict = "PASS" if ref_cpu / cpu >= TARGET_SPEEDUP else "FAIL"
    print(f"\n{verdict}: {ref_cpu / cpu:.1f}x less CPU time than playing every match (target >= {TARGET_SPEEDUP:.0f}x)")


def _pct(ours: int, full: int) -> str:
    return f"{100 * (ours - full) / full:+.1f}%" if full else "-"


if __name__ == "__main__":
    main()
