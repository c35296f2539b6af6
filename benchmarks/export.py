"""Export benchmark: `arena export` (full and --public) and `arena import arena` back into a fresh workspace, on the
demo's workspace and on one of 2,000 matches, each beside the workspace's own size and the floor of any command.

The demo workspace is `arena demo` as a user runs it (60 simulated matches: six entries, two LLM judges and three
simulated people), so its arena.db holds everything a played workspace holds (agent messages, the response
cache). The large one repeats the demo's done matches, with their speeches, verdicts, ballots and ledger rows,
under new ids until it holds --matches of them (through arena.store's own writes, so building takes about half a
minute); its arena.db holds no agent messages or cache, so it is smaller than a played one of that size.

Each figure is the best of --repeat subprocess runs (start-up included), printed beside its reference:
  - export and import-back times beside `arena entry list` on the same workspace (start-up and opening: the
    floor of any command);
  - the export's size beside arena.db's (the export leaves out agent messages and the cache, and compresses).

Run: .venv/bin/python benchmarks/export.py [--matches 2000] [--repeat 2] [--keep DIR]
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from arena.app.commands import open_workspace  # noqa: E402
from arena.workspace.folder import init_workspace  # noqa: E402

ARENA = str(Path(sys.executable).with_name("arena"))
CALL_KEYS = ("kind", "model", "latency_s", "match_id", "role", "stage", "side", "judge", "prompt_tokens",
             "completion_tokens", "cost", "error", "structured", "finish_reason")


def wall(args: list, repeat: int) -> float:
    """Best-of-repeat wall time of `arena ARGS`, in seconds."""
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        subprocess.run([ARENA, *map(str, args)], check=True, capture_output=True)
        best = min(best, time.perf_counter() - started)
    return best


def size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.is_dir() else path.stat().st_size


def grow(demo: Path, path: Path, n: int) -> None:
    """A workspace of the demo's arena.toml whose n done matches repeat the demo's, ledger rows and all."""
    init_workspace(path, (demo / "arena.toml").read_text(encoding="utf-8"))
    source, ws = open_workspace(demo), open_workspace(path)
    try:
        done = [m for m in source.store.matches() if m.status == "done"]
        calls: dict[str, list] = {}
        for call in source.store.ledger():
            calls.setdefault(call.match_id, []).append(call._asdict())
        copies = [dataclasses.replace(done[k % len(done)], id=f"x{k:06d}") for k in range(n)]
        ws.store.import_matches(copies)
        for k, copy in enumerate(copies):
            for r in calls.get(done[k % len(done)].id, ()):
                ws.store.record_call(**{key: r[key] for key in CALL_KEYS if key != "match_id"}, match_id=copy.id,
                                     cache_hit=bool(r["cache_hit"]), simulated=bool(r["simulated"]),
                                     fitted=bool(r["fitted"]))
    finally:
        source.close()
        ws.close()


def measure(name: str, path: Path, root: Path, repeat: int) -> None:
    floor = wall(["entry", "list", "-w", path], repeat)
    full, public = root / f"{name}-export", root / f"{name}-public"
    export_s = wall(["export", "-w", path, "--out", full], repeat)
    public_s = wall(["export", "-w", path, "--out", public, "--public"], repeat)
    best = float("inf")
    for k in range(repeat):  # into a fresh workspace each time: a second import adds nothing
        back = root / f"{name}-back{k}"
        subprocess.run([ARENA, "init", str(back)], check=True, capture_output=True)
        started = time.perf_counter()
        subprocess.run([ARENA, "import", "arena", str(full), "-w", str(back)], check=True, capture_output=True)
        best = min(best, time.perf_counter() - started)
    ws = open_workspace(path)
    matches = ws.store.count_matches()
    ws.close()
    db, out = size(path / "arena.db"), size(full)
    print(f"{name:>6} {matches:>7,}  export {export_s:5.2f} s, --public {public_s:5.2f} s, import back {best:5.2f} s"
          f"   (`arena entry list` {floor:4.2f} s)")
    print(f"{'':>6} {'':>7}  export {out / 1e6:6.2f} MB in {sum(1 for p in full.rglob('*') if p.is_file())} files"
          f"   (arena.db {db / 1e6:6.2f} MB: the export is {100 * out / db:.1f}% of it)")
    for table in sorted(full.glob("*/*.parquet"), key=lambda p: -p.stat().st_size)[:3]:
        print(f"{'':>6} {'':>7}    {table.parent.name:<9} {table.stat().st_size / 1e6:6.2f} MB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--keep", type=Path, default=None, help="build the workspaces here and keep them")
    args = parser.parse_args()
    root = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="arena-export-"))
    try:
        demo, large = root / "demo", root / "large"
        started = time.perf_counter()
        subprocess.run([ARENA, "demo", "-w", str(demo)], check=True, capture_output=True)
        demo_s = time.perf_counter() - started
        started = time.perf_counter()
        grow(demo, large, args.matches)
        print(f"built: the demo in {demo_s:.0f} s, {args.matches:,} matches from it in "
              f"{time.perf_counter() - started:.0f} s; best of {args.repeat} runs")
        print(f"{'':>6} {'matches':>7}")
        measure("demo", demo, root, args.repeat)
        measure("large", large, root, args.repeat)
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
