"""The walk of the four main paths through the code: for each (play a match, publish, a web speech, `arena rate
--control length`), how many of the project's modules a cold process imports, and how many it enters (runs a line
of a function or of the module's body in), in this checkout and in a reference commit, side by side.

A reader following a path opens the modules it enters; a layout that shows its layers should not make that walk
longer. Each path runs in a fresh process with its tree's code (PYTHONPATH; the reference is a `git archive` of
--reference) on a workspace built for it beforehand by that tree: four offline entries and a single judge, a round
robin played; for the web speech, a web human's match parked at her turn and her link issued. The path itself is
driven through what both trees share: the CLI's `main`, and the web app's `create_app` under Starlette's TestClient.
Entered modules are counted with sys.setprofile (a function called, or a module body run, in a project file).

Run: .venv/bin/python benchmarks/walk.py [--reference REV]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = "e7a2d3a"  # the last commit before issue 48's move
PACKAGES = ("arena", "debaters", "judges", "motions", "leaderboard", "website", "importers")

SETUP = r'''
import sys
from pathlib import Path
from arena.app.cli import main

ws, web = sys.argv[1], sys.argv[2]
toml = """[arena]
seed = 0
judge_runs = 1
[motions]
sets = ["builtin:en"]
""" + "".join(f"""
[[entries]]
name = "e{k}"
debater = "direct"
model = "offline/e{k}"
strength = {k / 2}
""" for k in range(4)) + """
[[judges]]
name = "j"
kind = "single"
model = "offline/j"
runs = 1
"""
def cli(*args):
    try:
        main(list(args), standalone_mode=False)
    except SystemExit as stop:
        assert not stop.code, (args, stop.code)

Path(ws).mkdir()
(Path(ws) / "arena.toml").write_text(toml)
cli("schedule", "-w", ws, "--format", "round-robin")
cli("run", "-w", ws)
Path(web).mkdir()
# the web workspace: e0 replaced by ann, a person who writes her speeches on the web
(Path(web) / "arena.toml").write_text(toml.replace(
    'name = "e0"\ndebater = "direct"\nmodel = "offline/e0"\nstrength = 0.0\n',
    'name = "ann"\ndebater = "human"\nmodel = "human/ann"\n[entries.params]\nvia = "web"\n'))
cli("match", "play", "-w", web, "--motion", "en-fact-001", "--pro", "ann", "--con", "e1")
cli("debaters", "issue", "-w", web, "--base-url", "http://testserver", "--format", "json")
'''

PATH = r'''
import json, os, re, sys, threading
roots = tuple(os.path.join(sys.argv[1], p) + os.sep for p in %(packages)r)
entered = set()
def profile(frame, event, arg):
    if event == "call":
        name = frame.f_code.co_filename
        if name.startswith(roots):
            entered.add(name)
sys.setprofile(profile)
threading.setprofile(profile)
what, ws = sys.argv[2], sys.argv[3]
from arena.app.cli import main
def cli(*args):
    try:
        main(list(args), standalone_mode=False)
    except SystemExit as stop:
        assert not stop.code, (args, stop.code)
if what == "play":
    cli("match", "play", "-w", ws, "--motion", "en-value-002", "--pro", "e1", "--con", "e2")
elif what == "publish":
    cli("publish", "-w", ws, "--out", sys.argv[4])
elif what == "rate-control":
    cli("rate", "-w", ws, "--control", "length", "--format", "json")
elif what == "web-speech":
    try:
        from arena.app.people.web import create_app
    except ImportError:
        from arena.app.web import create_app
    from starlette.testclient import TestClient
    url = sys.argv[4]
    path = url.removeprefix("http://testserver")
    with TestClient(create_app(__import__("pathlib").Path(ws))) as client:
        listing = client.get(path).text
        turn = re.search(r'href="(/d/[^"]+/[^"]+)"', listing).group(1)
        page = client.get(turn).text
        csrf = re.search(r'name="csrf" value="([^"]+)"', page).group(1)
        words = ("evidence shows that the policy reduces harm because people respond to incentives and "
                 "the record of similar reforms is strong ").split()
        speech = " ".join(words[k %% len(words)] for k in range(120)) + "."
        done = client.post(turn, data={"csrf": csrf, "speech": speech, "action": "submit"}, follow_redirects=False)
        assert done.status_code in (200, 303), (done.status_code, done.text[:300])
sys.setprofile(None)
imported = {m.__file__ for m in list(sys.modules.values())
            if getattr(m, "__file__", None) and m.__file__.startswith(roots)}
print(json.dumps({"imported": len(imported), "entered": len(entered),
                  "entered_files": sorted(os.path.relpath(f, sys.argv[1]) for f in entered)}))
'''


def run(tree: Path, code: str, *args: object) -> str:
    env = {**os.environ, "PYTHONPATH": str(tree), "LITELLM_LOCAL_MODEL_COST_MAP": "True", "COLUMNS": "200"}
    done = subprocess.run([sys.executable, "-c", code, *map(str, args)], cwd=tree, env=env, capture_output=True,
                          text=True)
    if done.returncode:
        sys.exit(f"{tree}: {done.stderr[-3000:]}")
    return done.stdout


def walk(tree: Path, scratch: Path) -> dict[str, dict]:
    ws, web = scratch / "ws", scratch / "web"
    issued = run(tree, SETUP, ws, web)
    url = json.loads(issued[issued.index("["):])[0]["url"]
    out: dict[str, dict] = {}
    for what, extra in (("play", ()), ("publish", (scratch / "site",)), ("rate-control", ()),
                        ("web-speech", (url,))):
        target = web if what == "web-speech" else ws
        out[what] = json.loads(run(tree, PATH % {"packages": PACKAGES}, tree, what, target, *extra).splitlines()[-1])
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference", default=REFERENCE)
    parser.add_argument("--list", action="store_true", help="Also list the modules each path enters, in each tree.")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="arena-walk-"))
    try:
        reference = scratch / "reference"
        reference.mkdir()
        archive = subprocess.run(["git", "-C", ROOT, "archive", args.reference], check=True, capture_output=True)
        subprocess.run(["tar", "-x", "-C", reference], input=archive.stdout, check=True)
        (scratch / "a").mkdir()
        (scratch / "b").mkdir()
        before, after = walk(reference, scratch / "a"), walk(ROOT, scratch / "b")
        print(f"{'path':14} {'imported (' + args.reference + ')':>18} {'imported (this)':>16} {'ratio':>6}   "
              f"{'entered (' + args.reference + ')':>17} {'entered (this)':>15} {'ratio':>6}")
        for what in before:
            b, a = before[what], after[what]
            print(f"{what:14} {b['imported']:>18} {a['imported']:>16} {a['imported'] / b['imported']:>6.2f}   "
                  f"{b['entered']:>17} {a['entered']:>15} {a['entered'] / b['entered']:>6.2f}")
        if args.list:
            for what in before:
                print(f"\n{what}: {args.reference}: {' '.join(before[what]['entered_files'])}")
                print(f"{what}: this: {' '.join(after[what]['entered_files'])}")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
