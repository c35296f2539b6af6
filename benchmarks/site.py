"""Site benchmark: `arena publish` on 100 entries and 10,000 judged matches, against the issue's targets.

The workspace is built directly through arena.store.Store — 100 simulated entries, 10,000 done matches
of six short speeches each, and three verdict runs per match from one judge — in one transaction, so
building takes seconds. Then `arena publish` runs as a subprocess and is timed end to end (start-up,
loading, 7 rating fits with 1000 bootstrap replicates each, rendering, writing).

Targets (the issue): at most 30 s of wall time, index.html under 1 MB.

Run: .venv/bin/python benchmarks/site.py [--entries 100] [--matches 10000] [--keep DIR]
"""
from __future__ import annotations

import argparse
import json
import math
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


from arena.app.commands import open_workspace  # noqa: E402
from arena.records import STAGES  # noqa: E402
from arena.store import now  # noqa: E402
from arena.workspace import init_workspace  # noqa: E402

TARGET_S = 30.0
TARGET_INDEX = 1_000_000
ORDER = [("constructive", "pro"), ("constructive", "con"), ("rebuttal", "pro"), ("rebuttal", "con"),
         ("summary", "con"), ("summary", "pro")]
assert {s for s, _ in ORDER} == set(STAGES)


def build(path: Path, n_entries: int, n_matches: int, seed: int = 0) -> None:
    rng = random.Random(seed)
    strengths = {f"e{i:03d}": rng.gauss(0, 1) for i in range(n_entries)}
    toml = ['[arena]', 'judge_runs = 3', '[search]', 'provider = "offline"', '[motions]', 'sets = ["builtin:en"]']
    for name, strength in strengths.items():
        toml += ['[[entries]]', f'name = "{name}"', 'debater = "direct"', f'model = "offline/{name}"',
                 f'strength = {strength:.3f}']
    toml += ['[[judges]]', 'name = "sim-judge"', 'kind = "single"', 'model = "offline/judge"', 'runs = 3']
    init_workspace(path, "\n".join(toml) + "\n")
    ws = open_workspace(path)
    try:
        motions = [m for m, _ in ws.motions.values() if m.language == "en"]
        names = list(strengths)
        pairings = []
        for _ in range(n_matches):
            pro, con = rng.sample(names, 2)
            pairings.append((rng.choice(motions).id, pro, con))
        ids = ws.store.add_tournament("random", seed, {}, pairings)
        conn, stamp = ws.store.conn, now()
        agents = json.dumps({"writer": {"calls": 1, "prompt_tokens": 900, "completion_tokens": 420, "cost": 0.0}})
        refs = json.dumps([{"title": "A simulated source", "url": "https://offline.invalid/src/1"}])
        speeches, verdicts = [], []
        for match_id, (motion_id, pro, con) in zip(ids, pairings):
            for seq, (stage, side) in enumerate(ORDER):
                text = (f"The {side.upper()} {stage} on {motion_id}. " + "An argument with evidence and a reply. " * 12)
                speeches.append((match_id, seq, stage, side, text, refs if stage == "constructive" else "[]",
                                 agents, stamp, stamp))
            p = 1 / (1 + math.exp(strengths[con] - strengths[pro]))
            for run in range(3):
                outcome = "pro" if rng.random() < p else "con"
                dims = {d: (outcome if rng.random() < 0.8 else "tie") for d in ("argument", "source", "language")}
                verdicts.append((match_id, "sim-judge", run, outcome, json.dumps(dims),
                                 f"Run {run}: {outcome.upper()} carried the main clash.", None, 1, stamp))
        conn.execute("BEGIN IMMEDIATE")
        conn.executemany("INSERT INTO speeches (match_id, seq, stage, side, text, refs, agents, started_at, finished_at)"
                         " VALUES (?,?,?,?,?,?,?,?,?)", speeches)
        conn.executemany("INSERT INTO verdicts VALUES (?,?,?,?,?,?,?,?,?)", verdicts)
        conn.execute("UPDATE matches SET status='done', started_at=?, finished_at=?", (stamp, stamp))
        conn.execute("COMMIT")
    finally:
        ws.close()


def size_of(folder: Path) -> tuple[int, int]:
    files = [p for p in folder.rglob("*") if p.is_file()]
    return sum(p.stat().st_size for p in files), len(files)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=100)
    parser.add_argument("--matches", type=int, default=10_000)
    parser.add_argument("--keep", type=Path, help="build the workspace here and keep it")
    args = parser.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="arena-site-bench-"))
    ws = root / "ws"
    try:
        started = time.perf_counter()
        build(ws, args.entries, args.matches)
        built_s = time.perf_counter() - started
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "arena", "publish", "-w", str(ws)], capture_output=True,
                              text=True)
        publish_s = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu_s = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        if done.returncode != 0:
            sys.exit(f"arena publish failed:\n{done.stderr}")
        site = ws / "site"
        index = (site / "index.html").stat().st_size
        total, count = size_of(site)
        print(f"workspace: {args.entries} entries, {args.matches} done matches (6 speeches, 3 verdict runs each), "
              f"built in {built_s:.1f} s")
        print(f"arena publish   {publish_s:6.1f} s   target {TARGET_S:.0f} s   {100 * publish_s / TARGET_S:4.0f}% of budget"
              f"   {'OK' if publish_s <= TARGET_S else 'MISSED'}")
        print(f"                CPU time {cpu_s:.1f} s over {os.cpu_count()} cores (wall time grows when other work shares them;"
              f" load average {os.getloadavg()[0]:.1f})")
        print(f"index.html      {index / 1e6:6.2f} MB  target {TARGET_INDEX / 1e6:.0f} MB   "
              f"{100 * index / TARGET_INDEX:4.0f}% of budget   {'OK' if index < TARGET_INDEX else 'MISSED'}")
        print(f"whole site      {total / 1e6:6.1f} MB in {count} files")
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
