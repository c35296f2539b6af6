"""Import benchmark: `arena import lechmazur DIR` of a full checkout of lechmazur/debate into a fresh workspace, and
how far `arena rate --judge lechmazur-panel` orders its models as the source's published leaderboard does.

Each figure is printed beside its reference:
  1. the first import (every transcript, the panel's rows, arena.toml and the database written) and the second,
     which adds nothing, against the target of well under a minute;
  2. Spearman's rank correlation between our ratings from the imported panel (`arena rate --format json`, the
     workspace's default side model, and with --side ignore) and the BT column of the README's "Current full
     leaderboard" table, over the models in both (display names mapped to model ids by the reports' roles
     lines), against the target of 0.97; then each model's two ranks side by side.

Run: .venv/bin/python benchmarks/import_lechmazur.py [DIR] [--keep WS]   (DIR defaults to /tmp/lech)
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from scipy.stats import spearmanr  # noqa: E402

ARENA = str(Path(sys.executable).with_name("arena"))
TARGET_SPEARMAN = 0.97
TARGET_SECONDS = 60.0
_ROW = re.compile(r"^\| (\d+) \| (.+?) \| ([\d.]+) \| (\d+) \|\s*$", re.M)
_SECTION = re.compile(r"- debate_id: `([^`]+)`.*?- roles: PRO = \*\*(.+?)\*\*, CON = \*\*(.+?)\*\*", re.S)


def arena(*args: str) -> tuple[float, str]:
    """(wall seconds, stdout) of `arena ARGS`."""
    started = time.perf_counter()
    done = subprocess.run([ARENA, *args], check=True, capture_output=True, text=True)
    return time.perf_counter() - started, done.stdout


def published(folder: Path) -> dict[str, float]:
    """Display name → BT rating, from the README's "Current full leaderboard" table."""
    text = (folder / "README.md").read_text(encoding="utf-8")
    table = text[text.index("### Current full leaderboard"):]
    table = table[:table.index("\n\n", table.index("| Rank"))]
    return {name: float(bt) for _, name, bt, _ in _ROW.findall(table)}


def model_ids(folder: Path) -> dict[str, str]:
    """Display name → model id, from the matchup reports: a debate id names PRO's and CON's model ids
    (topic__pro__con__...), its roles line their display names."""
    out: dict[str, str] = {}
    for path in (folder / "reports" / "debate_matchup_judgments").glob("*/*.md"):
        for debate_id, pro, con in _SECTION.findall(path.read_text(encoding="utf-8")):
            parts = debate_id.split("__")
            out.setdefault(pro, parts[1])
            out.setdefault(con, parts[2])
    return out


def ranks(values: dict[str, float]) -> dict[str, int]:
    return {name: k for k, name in enumerate(sorted(values, key=values.get, reverse=True), start=1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path, nargs="?", default=Path("/tmp/lech"))
    parser.add_argument("--keep", type=Path, default=None, help="build the workspace here and keep it")
    args = parser.parse_args()
    root = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="arena-import-"))
    ws = root / "ws"
    try:
        arena("init", str(ws))
        first, said = arena("import", "lechmazur", str(args.folder), "-w", str(ws), "--format", "json")
        second, again = arena("import", "lechmazur", str(args.folder), "-w", str(ws), "--format", "json")
        done, repeat = json.loads(said), json.loads(again)
        print(f"{'':38}{'measured':>12}{'reference':>14}")
        print(f"{'first import (s)':38}{first:12.1f}{'< ' + format(TARGET_SECONDS, '.0f'):>14}")
        print(f"{'second import, adds nothing (s)':38}{second:12.1f}{'< ' + format(TARGET_SECONDS, '.0f'):>14}")
        print(f"  first: {done['matches']} matches, {done['entries']} entries, {done['runs']} judge runs, "
              f"{done['motions']} motions, {len(done['skipped'])} skipped; second: {repeat['matches']} matches added")

        names = model_ids(args.folder)
        board = {names[d]: bt for d, bt in published(args.folder).items() if d in names}
        for side in ("fit", "ignore"):
            _, out = arena("rate", "--judge", "lechmazur-panel", "--format", "json", "--bootstrap", "0", "--side",
                           side, "-w", str(ws))
            ours = {r["entry"]: r["rating"] for r in json.loads(out)["ratings"]}
            common = [m for m in board if m in ours]
            rho = spearmanr([board[m] for m in common], [ours[m] for m in common]).statistic
            label = f"Spearman, --side {side} ({len(common)} models)"
            print(f"{label:38}{rho:12.3f}{'>= ' + str(TARGET_SPEARMAN):>14}")
            if side == "fit":
                theirs_rank, ours_rank = ranks({m: board[m] for m in common}), ranks({m: ours[m] for m in common})
                print(f"\n{'model':36}{'published BT':>13}{'rank':>6}{'our rating':>12}{'rank':>6}")
                for m in sorted(common, key=theirs_rank.get):
                    print(f"{m:36}{board[m]:13.1f}{theirs_rank[m]:6}{ours[m]:12.0f}{ours_rank[m]:6}")
                print()
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
