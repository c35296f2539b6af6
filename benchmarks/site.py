"""Site benchmark: `arena publish` of big tournaments, from scratch and again, against issue 26's targets.

Each workspace is built directly through arena.store.Store — simulated entries, done matches of six short
speeches each, and three verdict runs per match from one judge — in one transaction, so building takes
seconds. Then `arena publish` runs as a subprocess, timed end to end (start-up, loading, the 7 rating fits
with [site]'s default intervals, rendering, writing, the swap), wall and CPU time:

- 100 entries × 10,000 matches from scratch (target 10 s), published again with nothing new (target 2 s: the
  site is left as it is), and again after one more match (its page written, the other match pages linked);
- 500 entries × 20,000 matches from scratch (target 90 s).

The reference is the same publish by the code of --reference (default REFERENCE, the last commit before issue
26's publishing work: 7 fits of 1,000 bootstrap replicates, every page written, each with an fsync), run from a
`git archive` of it on the same workspace, written to a folder of its own; at 100 × 10,000 only unless asked,
since at 500 × 20,000 it takes minutes (the issue: 218 s on a quiet machine, unfinished after 590 s on a loaded
one). The machine is shared: the load average is printed, and CPU time beside wall time.

Run: .venv/bin/python benchmarks/site.py [--scale ENTRIES:MATCHES ...] [--reference REV] [--no-reference]
     [--keep DIR]
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
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


from arena.app.commands import open_workspace  # noqa: E402
from arena.domain.records import STAGES  # noqa: E402
from arena.base.clock import now  # noqa: E402
from arena.workspace.folder import init_workspace  # noqa: E402

TARGETS_S = {(100, 10_000): 10.0, (500, 20_000): 90.0}  # from scratch
TARGET_AGAIN_S = 2.0  # at 10,000 matches, nothing new
TARGET_INDEX = 1_000_000  # at 100 entries: the index lists every entry in each of its 7 tabs
REFERENCE = "618d573"
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
        play(ws, pairings, strengths, rng, seed)
    finally:
        ws.close()


def play(ws, pairings: list[tuple[str, str, str]], strengths: dict[str, float], rng: random.Random, seed: int) -> None:
    """Store the pairings as done matches: six speeches each, three verdict runs of the judge, in one transaction."""
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
    conn.executemany("INSERT INTO verdicts (match_id, judge, run, overall, dimensions, rationale, error, simulated,"
                     " created_at) VALUES (?,?,?,?,?,?,?,?,?)", verdicts)
    conn.executemany("UPDATE matches SET status='done', started_at=?, finished_at=? WHERE id=?",
                     [(stamp, stamp, match_id) for match_id in ids])
    conn.execute("COMMIT")


def one_more(path: Path, seed: int = 1) -> None:
    """One more done match between two of the workspace's entries, as a run commits one."""
    ws = open_workspace(path)
    try:
        rng = random.Random(seed)
        strengths = {e.name: e.strength for e in ws.config.entries}
        motion = next(m for m, _ in ws.motions.values() if m.language == "en")
        play(ws, [(motion.id, *rng.sample(list(strengths), 2))], strengths, rng, seed)
    finally:
        ws.close()


def size_of(folder: Path) -> tuple[int, int]:
    files = [p for p in folder.rglob("*") if p.is_file()]
    return sum(p.stat().st_size for p in files), len(files)


def checkout(rev: str, root: Path) -> Path:
    """The repository's files at rev, in a folder of root (git archive: the working tree is left alone)."""
    folder = root / f"code-{rev}"
    folder.mkdir()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    return folder


def publish(ws: Path, *options: str, code: Path = ROOT) -> tuple[float, float]:
    """`arena publish -w ws` as a process of its own, of the code in code: (wall, CPU) seconds."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "arena", "publish", "-w", str(ws), *options], capture_output=True,
                          text=True, cwd=code, env={**os.environ, "PYTHONPATH": str(code)})
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"arena publish failed:\n{done.stderr}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def identities(site: Path) -> dict[str, tuple[int, int, int] | None]:
    """Each file of the site → (inode, size, mtime): which a publish wrote anew."""
    return {str(p.relative_to(site)): (p.stat().st_ino, p.stat().st_size, p.stat().st_mtime_ns)
            for p in site.rglob("*") if p.is_file()}


def line(what: str, figures: tuple[float, float], target: float | None, note: str = "") -> str:
    wall, cpu = figures
    verdict = "" if target is None else f"{target:6.0f} s  {'OK' if wall <= target else 'MISSED'}"
    return f"{what:34}{wall:7.1f} s{cpu:8.1f} s   {verdict or '     —':16}{note}"


def measure(root: Path, entries: int, matches: int, reference: Path | None) -> None:
    ws = root / f"ws-{entries}x{matches}"
    started = time.perf_counter()
    build(ws, entries, matches)
    print(f"\n{entries} entries, {matches:,} done matches (6 speeches, 3 verdict runs each), built in "
          f"{time.perf_counter() - started:.0f} s; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"{'':34}{'wall':>9}{'CPU':>10}   {'target':14}")
    print(line("arena publish, from scratch", publish(ws), TARGETS_S.get((entries, matches))))
    if reference is not None:  # on a copy: the reference's code may leave the workspace as it keeps it
        copy = shutil.copytree(ws, root / f"reference-{ws.name}", ignore=shutil.ignore_patterns("site"))
        print(line(f"  reference ({reference.name[5:]})", publish(copy, code=reference), None))
    site = ws / "site"
    index = (site / "index.html").stat().st_size
    total, count = size_of(site)
    if matches <= 10_000:  # the incremental figures: the issue asks them at 10,000
        before = identities(site)
        again = publish(ws)
        written = sum(before.get(name) != seen for name, seen in identities(site).items())
        print(line("again, nothing new", again, TARGET_AGAIN_S, f"{written} of {count} files written"))
        one_more(ws)
        before = identities(site)
        figures = publish(ws)
        after = identities(site)
        written = sum(before.get(name) != seen for name, seen in after.items())
        pages = sum(1 for name in after if name.startswith("matches/"))
        linked = sum(1 for name, seen in after.items() if name.startswith("matches/") and before.get(name) == seen)
        print(line("again, after one new match", figures, None,
                   f"{written} of {len(after)} files written; {linked} of {pages} match pages linked"))
    verdict = "OK" if index < TARGET_INDEX else "MISSED"
    target = f" (target at 100 entries: under {TARGET_INDEX / 1e6:.0f} MB, {verdict})" if entries == 100 else ""
    print(f"index.html {index / 1e6:.2f} MB{target}; the whole site {total / 1e6:.0f} MB in {count:,} files")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", action="append", metavar="ENTRIES:MATCHES",
                        help="a workspace to publish (default: 100:10000 and 500:20000)")
    parser.add_argument("--reference", metavar="REV",
                        help=f"time the publish of this revision too (default: {REFERENCE} at 100 entries x 10,000)")
    parser.add_argument("--no-reference", action="store_true", help="time no reference")
    parser.add_argument("--keep", type=Path, help="build the workspaces here and keep them")
    args = parser.parse_args()
    scales = [tuple(int(x) for x in s.split(":")) for s in args.scale] if args.scale else list(TARGETS_S)
    root = args.keep or Path(tempfile.mkdtemp(prefix="arena-site-bench-"))
    try:
        codes = {}
        for entries, matches in scales:
            rev = None if args.no_reference else args.reference or (REFERENCE if (entries, matches) == (100, 10_000)
                                                                     else None)
            if rev and rev not in codes:
                codes[rev] = checkout(rev, root)
            measure(root, entries, matches, codes.get(rev))
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
