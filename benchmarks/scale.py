"""Scale benchmark (issue 26): one `arena run` of many offline matches, sampled while it runs; and the store's
per-match CPU with 10,000 matches stored against a fresh store.

Run mode (default). Builds an offline workspace: --entries simulated entries (offline/<name>, planted strengths
spread over ±1) of the --debater kind, one --judge of --runs runs, search offline; schedules --matches matches
(`arena schedule --format random`), and runs ONE `arena run --concurrency C [--workers W]` as a subprocess. What a
match costs in simulated LLM calls (agent4debate's format: six speeches):
  debaters   direct: 6 calls (one per speech);  agent4debate: ~47 (search planning, drafting, reviews per speech)
  judge      single: 1 call per run;  devils_advocate: ~3 per run;  debatrix: 22 per run (3 analysts × 6 speeches,
             3 dimension verdicts, a summary)
The default, direct debaters and one single-judge run (7 calls a match), is what makes 100,000 matches fit in one
session on 2 cores; the measured calls per match are printed from the ledger.

While the run plays, every progress line ("[k/M] ... done") is stamped with the process tree's CPU time
(/proc/PID/stat utime+stime, its workers' too) and resident memory, and twice a second the database is asked how
many matches are 'running'. Printed beside the targets:
  - CPU ms per match at the start (matches 5–15% of the plan) and at the end (85–95%): end within 1.2x of start;
  - peak RSS (the run's VmHWM, and ru_maxrss of it and its workers): at most 300 MB, independent of the plan;
  - matches under way: the most 'running' rows seen, at most 2 × concurrency;
  - store size per match (arena.db and its WAL after the run), wall time (start-up, scheduling, playing), matches
    per second, and the wall time a plan of 100,000 would take at the measured pace.
(≤ 150 KB per agent4debate match is measured elsewhere; with --debater agent4debate this prints the figure too.)

Commit mode (--commit): target 1, flat commits. One match of the configured kinds is played offline for real; its
speeches, verdicts, agent messages and ledger rows are then written again and again through arena.store.Store, as
a run writes each match: the budget's check (spent), claim_match, one record_call per ledger row, commit_match.
CPU per match (process time, system time included) on a fresh store and on one with --stored matches in, measured
in turns (--rounds windows of --window matches on each): the median match's within 1.2x (each step's mean printed).

Run: .venv/bin/python benchmarks/scale.py [--matches 100000] [--entries 10] [--debater direct] [--judge single]
                                          [--runs 1] [--concurrency 4] [--workers 1] [--keep DIR]
     .venv/bin/python benchmarks/scale.py --commit [--stored 10000] [--window 100] [--rounds 5] [--debater ...] ...
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from arena.app.runner import runs  # noqa: E402
from arena.app.commands import open_workspace  # noqa: E402
from arena.match.claims import Holder  # noqa: E402
from arena.workspace.folder import init_workspace  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")
PAGE_KB = os.sysconf("SC_PAGE_SIZE") // 1024
PROGRESS = re.compile(r"^\[(\d+)/(\d+)\] ")
RSS_MB, CPU_RATIO, KB_PER_A4D_MATCH = 300, 1.2, 150  # the targets
BIG_PLAN = 100_000


def workspace_toml(entries: int, debater: str, judge: str, runs_: int) -> str:
    """An offline arena.toml: `entries` simulated entries of one debater kind, strengths spread over ±1, one judge."""
    lines = ["[arena]", f"judge_runs = {runs_}", "[search]", 'provider = "offline"', "[motions]",
             'sets = ["builtin:en"]']
    for k in range(entries):
        strength = 0.0 if entries == 1 else -1 + 2 * k / (entries - 1)
        lines += ["[[entries]]", f'name = "e{k:03d}"', f'debater = "{debater}"', f'model = "offline/e{k:03d}"',
                  f"strength = {strength:.3f}"]
    lines += ["[[judges]]", 'name = "judge"', f'kind = "{judge}"', 'model = "offline/judge"']
    return "\n".join(lines) + "\n"


def arena(*args: str) -> list[str]:
    return [sys.executable, "-m", "arena", *args]


# --- the process tree, from /proc ----------------------------------------------------------------------------

def _stat(pid: int) -> list[str]:
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()  # after the command name, which may hold spaces


def _children(pid: int) -> list[int]:
    out = []
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/children") as f:
                out += [int(c) for c in f.read().split()]
        except OSError:
            pass
    return out


def tree(pid: int) -> list[int]:
    """pid and every live descendant."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            todo += _children(p)
        except OSError:
            pass
    return out


def tree_cpu(pid: int) -> float:
    """CPU seconds (user + system) of pid, its live descendants, and the descendants it has reaped."""
    ticks = 0
    for k, p in enumerate(tree(pid)):
        try:
            fields = _stat(p)  # fields[11:15]: utime stime cutime cstime
        except OSError:
            continue
        ticks += int(fields[11]) + int(fields[12]) + (int(fields[13]) + int(fields[14]) if k == 0 else 0)
    return ticks / TICK


def tree_rss_mb(pid: int) -> tuple[float, float]:
    """(resident MB now, peak resident MB: VmHWM) of the largest process of the tree."""
    now = peak = 0
    for p in tree(pid):
        try:
            with open(f"/proc/{p}/status") as f:
                status = dict(line.split(":", 1) for line in f if ":" in line)
        except OSError:
            continue
        now = max(now, int(status.get("VmRSS", "0 kB").split()[0]))
        peak = max(peak, int(status.get("VmHWM", "0 kB").split()[0]))
    return now / 1024, peak / 1024


# --- run mode --------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Sample:
    """The run as one progress line found it: seconds since start, matches finished, CPU seconds, RSS MB."""

    t: float
    finished: int
    cpu: float
    rss: float


def build(path: Path, args) -> float:
    """The workspace and its plan of args.matches matches; the seconds `arena schedule` took."""
    init_workspace(path, workspace_toml(args.entries, args.debater, args.judge, args.runs))
    open_workspace(path).close()  # the first open stores the motions
    started = time.perf_counter()
    done = subprocess.run(arena("schedule", "-w", str(path), "--format", "random", "--matches", str(args.matches),
                                "--seed", "1"), capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"arena schedule failed:\n{done.stderr}")
    return time.perf_counter() - started


def watch(path: Path, args) -> dict:
    """Run `arena run` on path and sample it until it ends."""
    proc = subprocess.Popen(arena("run", "-w", str(path), "--concurrency", str(args.concurrency),
                                  "--workers", str(args.workers)),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    started = time.perf_counter()
    samples: list[Sample] = []
    tail: list[str] = []

    def read() -> None:
        rss = 0.0
        for line in proc.stderr:
            if found := PROGRESS.match(line):
                finished = int(found.group(1))
                if finished % 100 == 1:  # reading every process's status for every match would cost the run CPU
                    rss = tree_rss_mb(proc.pid)[0]
                samples.append(Sample(time.perf_counter() - started, finished, tree_cpu(proc.pid), rss))
                if "failed:" in line:
                    tail.append(line.strip())
            else:
                tail.append(line.strip())

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    running, peak = 0, 0.0
    db = sqlite3.connect(f"file:{path / 'arena.db'}?mode=ro", uri=True, timeout=30)
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)  # the run's own rusage, not `arena schedule`'s too
        if pid:
            proc.returncode = os.waitstatus_to_exitcode(status)
            break
        try:
            running = max(running, db.execute("SELECT COUNT(*) FROM matches WHERE status='running'").fetchone()[0])
            peak = max(peak, tree_rss_mb(proc.pid)[1])
        except (sqlite3.OperationalError, OSError):
            pass  # the database is busy, or the run has just ended
        time.sleep(0.5)
    db.close()
    wall = time.perf_counter() - started
    reader.join()
    return {"samples": samples, "running": running, "peak_mb": max(peak, usage.ru_maxrss / 1024), "wall": wall,
            "usage": usage, "log": tail, "code": proc.returncode}


@dataclass(frozen=True)
class Window:
    """Between the progress lines at two shares of the plan: the matches, CPU ms and wall ms per match, RSS at its end."""

    first: int
    last: int
    cpu_ms: float
    wall_ms: float
    rss: float


def between(samples: list[Sample], low: float, high: float, plan: int) -> Window:
    a = next(s for s in samples if s.finished >= max(1, round(plan * low)))
    b = next(s for s in samples if s.finished >= max(a.finished + 1, round(plan * high)))
    n = b.finished - a.finished
    return Window(a.finished, b.finished, (b.cpu - a.cpu) / n * 1000, (b.t - a.t) / n * 1000, b.rss)


def slope(xs: list[float], ys: list[float]) -> float:
    """The least-squares slope of ys on xs."""
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)


def store_size(path: Path) -> tuple[int, dict[str, int]]:
    """Bytes of the database files, and per table (indexes included) when SQLite has its dbstat table."""
    total = sum(f.stat().st_size for f in path.glob("arena.db*"))
    conn = sqlite3.connect(path / "arena.db")
    try:
        rows = conn.execute("SELECT COALESCE(m.tbl_name, d.name), SUM(d.pgsize) FROM dbstat d "
                            "LEFT JOIN sqlite_master m ON m.name = d.name GROUP BY 1 ORDER BY 2 DESC").fetchall()
    except sqlite3.OperationalError:  # built without SQLITE_ENABLE_DBSTAT_VTAB
        rows = []
    calls = conn.execute("SELECT COUNT(*) FROM calls WHERE kind = 'llm'").fetchone()[0]
    done = conn.execute("SELECT COUNT(*) FROM matches WHERE status = 'done'").fetchone()[0]
    conn.close()
    return total, {**dict(rows), "_calls": calls, "_done": done}


def run_mode(args) -> None:
    base = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="arena-scale-"))
    path = base / "ws"
    if path.exists():
        sys.exit(f"{path} exists: give --keep a new folder")
    try:
        measure(path, args)
    finally:
        if not args.keep:
            shutil.rmtree(base)


def measure(path: Path, args) -> None:
    print(f"{args.matches} matches, {args.entries} `{args.debater}` entries, judge `{args.judge}` × {args.runs}, "
          f"--concurrency {args.concurrency} --workers {args.workers}; workspace {path}")
    scheduled = build(path, args)
    print(f"scheduled in {scheduled:.1f} s")
    seen = watch(path, args)
    samples, plan = seen["samples"], args.matches
    if not samples or samples[-1].finished < plan:
        print("\n".join(seen["log"][-20:]))
        sys.exit(f"the run ended after {samples[-1].finished if samples else 0} of {plan} matches")
    size, tables = store_size(path)
    done, calls = tables.pop("_done"), tables.pop("_calls")
    start, end = between(samples, 0.05, 0.15, plan), between(samples, 0.85, 0.95, plan)
    usage = seen["usage"]
    cpu = usage.ru_utime + usage.ru_stime
    print(f"{done} done ({plan - done} not), {calls / max(1, done):.1f} simulated LLM calls per match; "
          f"`arena run` exited {seen['code']}")
    print(f"wall {seen['wall']:.1f} s ({seen['wall'] / 60:.1f} min; first match done after {samples[0].t:.1f} s, "
          f"start-up included), {plan / seen['wall']:.1f} matches/s; CPU {cpu:.1f} s (user {usage.ru_utime:.1f}, "
          f"system {usage.ru_stime:.1f}), {cpu / plan * 1000:.1f} ms per match")
    ratio = end.cpu_ms / start.cpu_ms
    print(f"CPU per match   start (matches {start.first}–{start.last}) {start.cpu_ms:6.1f} ms   "
          f"end ({end.first}–{end.last}) {end.cpu_ms:6.1f} ms   end/start {ratio:.2f}   "
          f"target ≤ {CPU_RATIO}   {'ok' if ratio <= CPU_RATIO else 'MISSED'}")
    tenths = [between(samples, k / 10, (k + 1) / 10, plan) for k in range(10)]
    growth = slope([(w.first + w.last) / 2 for w in tenths], [w.cpu_ms for w in tenths]) * 1000
    print("                by tenth of the plan: " + " ".join(f"{w.cpu_ms:.1f}" for w in tenths)
          + f" ms; least-squares growth {growth:+.2f} ms per 1,000 matches stored")
    print(f"                wall per match: start {start.wall_ms:.1f} ms, end {end.wall_ms:.1f} ms")
    print(f"peak RSS        {seen['peak_mb']:6.1f} MB (RSS at match {start.last}: {start.rss:.1f} MB, at match "
          f"{end.last}: {end.rss:.1f} MB)   target ≤ {RSS_MB} MB   {'ok' if seen['peak_mb'] <= RSS_MB else 'MISSED'}")
    bound = 2 * args.concurrency
    print(f"under way       at most {seen['running']} matches 'running' (sampled twice a second)   "
          f"target ≤ 2 × {args.concurrency} = {bound}   {'ok' if seen['running'] <= bound else 'MISSED'}")
    kb = size / plan / 1024
    target = (f"target ≤ {KB_PER_A4D_MATCH} KB   {'ok' if kb <= KB_PER_A4D_MATCH else 'MISSED'}"
              if args.debater == "agent4debate" else "(the 150 KB target is agent4debate's: --debater agent4debate)")
    print(f"store           {size / 2**20:.1f} MB, {kb:.1f} KB per match   {target}")
    if tables:
        print("                by table: " + ", ".join(f"{name} {b / plan / 1024:.1f} KB"
                                                   for name, b in list(tables.items())[:6]))
    if plan < BIG_PLAN:
        hours = BIG_PLAN * end.wall_ms / 1000 / 3600
        extra = max(0.0, growth) * (BIG_PLAN - plan) / 1000 * (BIG_PLAN - plan) / 2 / 1000 / 3600
        print(f"estimate        {BIG_PLAN:,} matches at the end's pace: {hours:.1f} h of play (scheduling them: "
              f"~20 s); were the growth above real (a short plan's noise is ± a few ms per 1,000), the matches "
              f"after these {plan:,} would add {extra:.1f} h")


# --- commit mode -----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Played:
    """One match as a run writes it: its speeches, verdicts, agent messages and ledger rows."""

    speeches: list
    verdicts: list
    messages: list[dict]
    calls: list[dict]


def play_one(folder: Path, args) -> Played:
    """One offline match of the configured kinds, played for real, read back from its store."""
    init_workspace(folder, workspace_toml(2, args.debater, args.judge, args.runs))
    ws = open_workspace(folder)
    try:
        match_id = ws.store.add_tournament("scale", 0, {}, [(ws.store.motion_ids()[0], "e000", "e001")])[0]
        runs.run(ws, concurrency=1, progress=lambda line: None)
        match = ws.store.match(match_id)
        keys = ("kind", "model", "latency_s", "cache_hit", "simulated", "role", "stage", "side", "judge",
                "prompt_tokens", "completion_tokens", "cost", "error", "structured", "fitted", "finish_reason")
        calls = [{k: getattr(call, k) for k in keys} for call in ws.store.ledger() if call.match_id == match_id]
        messages = [dataclasses.asdict(m) for m in ws.store.agent_messages(match_id)]
        return Played(list(match.speeches), list(match.verdicts), messages, calls)
    finally:
        ws.close()


def write(store, holder: Holder, played: Played) -> dict[str, float]:
    """A match as a run writes it, each step's CPU seconds: the budget's check, the claim, the ledger, the commit."""
    clock = time.process_time
    t0 = clock()
    store.spent()
    t1 = clock()
    match_id = store.claim_match(holder)
    t2 = clock()
    for call in played.calls:
        store.record_call(match_id=match_id, **call)
    t3 = clock()
    store.commit_match(match_id, played.speeches, played.verdicts, played.messages, True, holder=holder)
    t4 = clock()
    return {"budget": t1 - t0, "claim": t2 - t1, "ledger": t3 - t2, "commit": t4 - t3}


def summary(spent: list[dict[str, float]]) -> dict[str, float]:
    """CPU ms per match: each step's mean, their sum, and the median match's total (what the target is checked on:
    a loaded machine's odd slow match moves a mean of a few hundred)."""
    per = {step: sum(s[step] for s in spent) / len(spent) * 1000 for step in spent[0]}
    return {**per, "total": sum(per.values()), "median": statistics.median(sum(s.values()) for s in spent) * 1000}


def planned(path: Path, args, matches: int):
    """A workspace of the configured kinds with `matches` matches scheduled, open."""
    init_workspace(path, workspace_toml(2, args.debater, args.judge, args.runs))
    ws = open_workspace(path)
    ws.store.add_tournament("scale", 0, {}, [(ws.store.motion_ids()[0], "e000", "e001")] * matches)
    return ws


def commit_mode(args) -> None:
    with tempfile.TemporaryDirectory(prefix="arena-scale-") as tmp:
        played = play_one(Path(tmp) / "one", args)
        size = sum(len(m["prompt"]) + len(m["response"]) for m in played.messages)
        print(f"a `{args.debater}` match judged by `{args.judge}` × {args.runs}: {len(played.calls)} ledger rows, "
              f"{len(played.messages)} agent messages, {size / 1024:.0f} KB of prompts and responses")
        holder, measured = Holder.here(), args.rounds * args.window
        fresh, big = planned(Path(tmp) / "fresh", args, measured), planned(Path(tmp) / "big", args, args.stored + measured)
        started = time.perf_counter()
        for k in range(args.stored):
            write(big.store, holder, played)
            if (k + 1) % 2000 == 0:
                print(f"  {k + 1} stored ({time.perf_counter() - started:.0f} s)", flush=True)
        # The two stores take turns, a window each, so that a change in the machine's load weighs on both alike.
        spent: dict[str, list] = {"fresh": [], "big": []}
        for _ in range(args.rounds):
            for name, ws in (("fresh", fresh), ("big", big)):
                spent[name] += [write(ws.store, holder, played) for _ in range(args.window)]
        sizes = [sum(f.stat().st_size for f in ws.path.glob("arena.db*")) for ws in (fresh, big)]
        fresh.close()
        big.close()
    rows = {f"fresh store (0–{measured:,})": summary(spent["fresh"]),
            f"after {args.stored:,} stored": summary(spent["big"])}
    print(f"CPU ms per match, {args.rounds} windows of {args.window} matches on each store in turn (process time, "
          f"system included); stores {sizes[0] / 2**20:.0f} MB and {sizes[1] / 2**20:.0f} MB after")
    print(f"{'':28}" + "".join(f"{step:>9}" for step in next(iter(rows.values()))))
    for label, row in rows.items():
        print(f"{label:28}" + "".join(f"{v:9.2f}" for v in row.values()))
    first, second = rows.values()
    ratio = second["median"] / first["median"]
    print(f"after/fresh (medians) {ratio:.2f}   target ≤ {CPU_RATIO}   {'ok' if ratio <= CPU_RATIO else 'MISSED'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--matches", type=int, default=BIG_PLAN)
    parser.add_argument("--entries", type=int, default=10)
    parser.add_argument("--debater", default="direct")
    parser.add_argument("--judge", default="single")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--keep", help="build the workspace in this folder (new) and leave it there")
    parser.add_argument("--commit", action="store_true", help="commit mode: a synthetic store, fresh vs --stored")
    parser.add_argument("--stored", type=int, default=10_000)
    parser.add_argument("--window", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=5, help="commit mode: windows measured on each store in turn")
    args = parser.parse_args()
    commit_mode(args) if args.commit else run_mode(args)


if __name__ == "__main__":
    main()
