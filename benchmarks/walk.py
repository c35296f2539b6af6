"""The walk of the four main paths through the code: for each (play a match, publish, a web speech, `arena rate
--control length`), how many of the project's modules a cold process imports, how many it enters (calls a function
of, or renders a template of) and how many lines those entered modules hold, in this checkout and in a reference
commit, side by side.

A reader following a path opens the modules it enters; a layout that shows its layers should not make that walk
longer. Each path runs in a fresh process with its tree's code (PYTHONPATH; the reference is a `git archive` of
--reference) on a workspace built for it beforehand by that tree: four offline entries and a single judge, a round
robin played; for the web speech, a web human's match parked at her turn and her link issued. The path itself is
driven through what both trees share: the CLI's `main`, and the web app's `create_app` under Starlette's TestClient.
Entered modules are counted with sys.setprofile: a file of the project in which a function was called (a module's
or a class's body run on import does not count; a jinja2 template rendered counts as its file). "their lines" adds
up the lines of the modules entered: what a reader following the path has in front of them.

Run: .venv/bin/python benchmarks/walk.py [--reference REV] [--list]
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
from arena.app import commands
ws = commands.open_workspace(web)
print("URL", commands.debaters_issue(ws, None, "http://testserver")[0]["url"])
ws.close()
'''

PATH = r'''
import inspect, json, os, re, sys, threading
roots = tuple(os.path.join(sys.argv[1], p) + os.sep for p in %(packages)r)
entered = set()
def profile(frame, event, arg):
    if event == "call" and frame.f_code.co_flags & inspect.CO_NEWLOCALS:  # a function, not a module or class body
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
        token, turn_id = re.search(r'href="[^"]*d/([^"/]+)/([^"/]+)"', listing).groups()
        turn = f"/d/{token}/{turn_id}"
        page = client.get(turn).text
        csrf = re.search(r'name="csrf" value="([^"]+)"', page).group(1)
        import random
        rng = random.Random(7)  # ordinary varied English prose of about the turn's budget, which the checks pass
        nouns = ("policy", "evidence", "reform", "market", "school", "community", "budget", "court", "study",
                 "family", "worker", "city", "record", "trial", "history", "safety", "price", "country")
        forms = ("The {} shows that the {} matters more than the other side admits.",
                 "When a {} changes, the {} of ordinary people changes with it.",
                 "We have seen this in every {} where the {} was tried and measured.",
                 "Our opponents ignore the {} and ask you to trust a {} they cannot show.",
                 "This is why the {} should weigh heavily in your decision about the {}.")
        speech = " ".join(rng.choice(forms).format(rng.choice(nouns), rng.choice(nouns)) for _ in range(24))
        done = client.post(turn, data={"csrf": csrf, "speech": speech, "action": "submit"}, follow_redirects=False)
        assert done.status_code in (200, 303), (done.status_code, re.sub(r"<[^>]+>", " ", done.text)[:1500])
sys.setprofile(None)
imported = {m.__file__ for m in list(sys.modules.values())
            if getattr(m, "__file__", None) and m.__file__.startswith(roots)}
lines = sum(sum(1 for _ in open(f, encoding="utf-8")) for f in entered)
print(json.dumps({"imported": len(imported), "entered": len(entered), "lines": lines,
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
    url = next(line.split()[1] for line in issued.splitlines() if line.startswith("URL "))
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
        print(f"{'path':14} {'imported':>9} {'(this)':>7} {'ratio':>6}   {'entered':>8} {'(this)':>7} {'ratio':>6}   "
              f"{'their lines':>11} {'(this)':>7} {'ratio':>6}      ({args.reference} beside this checkout)")
        for what in before:
            b, a = before[what], after[what]
            print(f"{what:14} {b['imported']:>9} {a['imported']:>7} {a['imported'] / b['imported']:>6.2f}   "
                  f"{b['entered']:>8} {a['entered']:>7} {a['entered'] / b['entered']:>6.2f}   "
                  f"{b['lines']:>11,} {a['lines']:>7,} {a['lines'] / b['lines']:>6.2f}")
        if args.list:
            for what in before:
                print(f"\n{what}: {args.reference}: {' '.join(before[what]['entered_files'])}")
                print(f"{what}: this: {' '.join(after[what]['entered_files'])}")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
