"""Same-outputs check: what every read-only command prints, and what export and publish write, from this checkout
and from a reference commit, on copies of one demo workspace, compared byte for byte.

A refactor that changes no behaviour (issue 39: the store split into a package, typed results for the facade, the
site writer moved) must leave every output as it was. The reference's code (a `git archive` of --reference, run
with PYTHONPATH pointing at it) builds the demo's workspace once; each tree then runs the same commands on a copy
of its own, so a newer schema's migration is part of what is checked. Compared: stdout and exit status of each
command (JSON, table or text, and CSV), the files of a full and a public export, and the files of a publish,
with the times a publish writes ("generated ...", "last update ...") masked; the publish manifest is left out,
since its state digest covers the code, which differs by design.

Prints a row per output (its size, and whether it is the same) and the count of outputs that are the same.

Run: .venv/bin/python benchmarks/same_outputs.py [--reference REV] [--keep DIR]
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = "f7a4004"  # the last commit before issue 39's refactor
TIMES = re.compile(rb"20\d\d-\d\d-\d\d[T ][0-9:.]+(\+00:00| UTC)")
# (name, arguments): run once per tree, the workspace given by -w; a match and a motion of the demo's.
COMMANDS = [
    *[(f"{what}-{fmt}", args + ["--format", fmt]) for fmt in ("json", "table") for what, args in (
        ("entry-list", ["entry", "list"]), ("motion-list", ["motion", "list"]), ("match-list", ["match", "list"]),
        ("rate", ["rate"]), ("rate-by-category", ["rate", "--by", "category"]),
        ("rate-by-dimension", ["rate", "--by", "dimension"]), ("ballots-status", ["ballots", "status"]),
        ("stats-agents", ["stats", "agents"]), ("stats-judges", ["stats", "judges"]),
        ("stats-sides", ["stats", "sides"]), ("stats-bias", ["stats", "bias"]), ("stats-paper", ["stats", "paper"]),
        ("kinds", ["kinds"]))],
    *[(f"{what}-{fmt}", args + ["--format", fmt]) for fmt in ("json", "text") for what, args in (
        ("entry-show", ["entry", "show", "sim-ace"]), ("match-show", ["match", "show", "m00001"]),
        ("match-show-late", ["match", "show", "m00031"]))],
    ("rate-csv", ["rate", "--format", "csv"]),
    ("rate-history", ["rate", "--history", "--format", "json"]),
    ("match-messages", ["match", "messages", "m00001", "--format", "json"]),
    ("motion-show", ["motion", "show", "en-fact-015", "--format", "json"]),
    ("schedule-show", ["schedule", "--show"]),
    ("dry-run", ["run", "--dry-run"]),
]
# (name, arguments, the folder it writes): compared file by file.
WRITERS = [("export", ["export", "--out"], "export"), ("export-public", ["export", "--public", "--out"], "public"),
           ("publish", ["publish", "--out"], "site")]


def arena(tree: Path, *args: object) -> subprocess.CompletedProcess[bytes]:
    """`python -m arena ARGS` with tree's code."""
    env = {**os.environ, "PYTHONPATH": str(tree), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    return subprocess.run([sys.executable, "-m", "arena", *map(str, args)], cwd=tree, env=env, capture_output=True)


def outputs(tree: Path, workspace: Path, out: Path) -> dict[str, bytes]:
    """name → bytes of every output of tree's code on its copy of workspace (written under out)."""
    ws = out / "ws"
    shutil.copytree(workspace, ws)
    found: dict[str, bytes] = {}
    for name, args in COMMANDS:
        done = arena(tree, *args, *(["-w", ws] if args[0] != "kinds" else []))  # kinds reads no workspace
        found[name] = done.stdout.replace(str(out).encode(), b"OUT") + f"\n[exit {done.returncode}]".encode()
    for name, args, folder in WRITERS:
        done = arena(tree, *args, out / folder, "-w", ws)
        found[name] = done.stdout.replace(str(out).encode(), b"OUT") + f"\n[exit {done.returncode}]".encode()
        for path in sorted((out / folder).rglob("*")):
            if path.is_file() and path.name != ".arena-publish.json":
                data = path.read_bytes()
                found[f"{folder}/{path.relative_to(out / folder)}"] = TIMES.sub(b"TIME", data) if folder == "site" \
                    else data
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference", default=REFERENCE)
    parser.add_argument("--keep", type=Path, help="Leave the workspaces and outputs in this folder.")
    args = parser.parse_args()
    root = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="arena-same-"))
    try:
        reference = root / "reference"
        reference.mkdir(parents=True)
        archive = subprocess.run(["git", "-C", ROOT, "archive", args.reference], check=True, capture_output=True)
        subprocess.run(["tar", "-x", "-C", reference], input=archive.stdout, check=True)
        demo = root / "demo"
        for step in (["demo", "-w", demo], ["export", "--public", "--out", root / "secret", "-w", demo]):
            done = arena(reference, *step)  # the public export makes the ballot secret once, for both trees
            if done.returncode:
                sys.exit(f"the reference's `arena {step[0]}` failed:\n{done.stderr.decode()}")
        before = outputs(reference, demo, root / "before")
        after = outputs(ROOT, demo, root / "after")
        same = 0
        print(f"{'output':52} {'bytes (' + args.reference + ')':>16} {'bytes (this)':>14}  same")
        for name in sorted(before.keys() | after.keys()):
            old, new = before.get(name), after.get(name)
            same += old == new
            size = lambda data: "missing" if data is None else f"{len(data):,}"  # noqa: E731
            if old != new or not name.startswith(("site/", "export/", "public/")):
                print(f"{name:52} {size(old):>16} {size(new):>14}  {'yes' if old == new else 'NO'}")
        files = sum(name.startswith(("site/", "export/", "public/")) for name in before)
        print(f"{same} of {len(before.keys() | after.keys())} outputs the same ({files} of them files of the exports "
              f"and the site, listed above only where they differ)")
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
