"""Open-workspace benchmark: `arena entry list` on a workspace whose motion sets hold 10,073 motions (the
built-in English set and a 10,000-motion file, the most one file may hold), against references.

Each figure is printed beside its reference:
  1. `arena entry list`, the file unchanged since the database stored it (every command but the first after
     a change), vs the same command on a workspace with only the built-in set (the floor: start-up and
     arena.toml), and vs the figure measured before this change: every command parsed every motion file,
     twice (yaml.compose, then yaml.safe_load);
  2. the first command after the file changed (it reads the sets once, with arena.base.datafiles' loader, and
     stores them), vs the old reading measured here: compose + safe_load of the file, as every open did;
  3. `arena motion list` (the motions from the database) vs the same old reading.

Run: .venv/bin/python benchmarks/open_workspace.py [--motions 10000] [--keep DIR]
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import yaml  # noqa: E402

from arena.app.setup.wiring import init  # noqa: E402
from tests.support.helpers import entry, workspace_toml  # noqa: E402

ARENA = str(Path(sys.executable).with_name("arena"))
# `arena entry list` on this benchmark's workspace (builtin:en and its 10,000-motion file) with the code of
# commit 56fe170, before opening took motions from the database: best of 2 on the 2-core development machine.
BEFORE_S = 18.2
CATEGORIES = ("fact", "value", "policy")


def toml(sets: list[str]) -> str:
    """Two offline entries on these motion sets."""
    return workspace_toml(arena={"seed": 0}, motions=sets, entries=[entry("a"), entry("b")])


def motion_file(n: int) -> str:
    """n motions with an info slide each, about 230 bytes apiece: a large set, within every limit."""
    return yaml.safe_dump([{"id": f"bench-{k:05d}", "text": f"This house would adopt policy number {k} in every "
                            "region of the world", "category": CATEGORIES[k % 3],
                            "info_slide": "Context for the motion: a sentence or two, as a real slide has."}
                           for k in range(n)], allow_unicode=True, sort_keys=False)


def wall(args: list[str], repeat: int = 3) -> float:
    """Best-of-repeat wall time of `arena ARGS`, in seconds."""
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        subprocess.run([ARENA, *args], check=True, capture_output=True)
        best = min(best, time.perf_counter() - started)
    return best


def old_reading(path: Path) -> float:
    """Seconds to read the file as every open did before: composed for line numbers, then loaded."""
    text = path.read_text(encoding="utf-8")
    started = time.perf_counter()
    yaml.compose(text, Loader=yaml.SafeLoader)
    yaml.safe_load(text)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--motions", type=int, default=10_000)
    parser.add_argument("--keep", type=Path, default=None, help="build the workspaces here and keep them")
    args = parser.parse_args()
    root = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="arena-open-"))
    try:
        large, small = root / "large", root / "small"
        large.mkdir(parents=True)
        big = large / "big.yaml"
        big.write_text(motion_file(args.motions), encoding="utf-8")
        init(large, toml(["builtin:en", "file:big.yaml"]))
        init(small, toml(["builtin:en"]))
        print(f"motion file: {args.motions:,} motions, {big.stat().st_size / 1e6:.1f} MB")

        unchanged, floor = wall(["entry", "list", "-w", str(large)]), wall(["entry", "list", "-w", str(small)])
        reading = old_reading(big)
        listing = wall(["motion", "list", "-w", str(large)])
        changed = []
        for k in range(2):  # each time a change of one byte's worth: the file is read once, then stored
            big.write_text(big.read_text(encoding="utf-8") + f"# edit {k}\n", encoding="utf-8")
            changed.append(wall(["entry", "list", "-w", str(large)], repeat=1))

        rows = [("`arena entry list`, file unchanged", unchanged, "builtin:en alone", floor),
                ("`arena entry list`, file unchanged", unchanged, "before this change (recorded)", BEFORE_S),
                ("first `arena entry list` after a change", min(changed), "old reading of the file", reading),
                ("`arena motion list` (from the database)", listing, "old reading of the file", reading)]
        print(f"{'figure':<48} {'value':>8}   {'reference':<32} {'value':>8}  ratio")
        for name, value, reference, ref_value in rows:
            print(f"{name:<48} {value:>7.2f}s   {reference:<32} {ref_value:>7.2f}s  {ref_value / value:5.1f}x")
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
