"""Judges under attack (issue 53): how far what a debater writes moves a judge, with and without the arena's defences,
each figure beside its reference in the same run.

(a) Fake providers. The four scripted judges of tests/support/scripted_judges.py (`follower` obeys an instruction in a
    speech, `longer` gives the debate to the longer side, `label` always says PRO, `robust` follows who said what) on
    the fake OpenAI server, each `single`, one run, no side swapping, on a round robin of two direct entries (the
    strong one's speeches longer), as tests/judges/test_judge_attacks.py builds it. Per attack and judge: the flips
    with no defence (flips / trials) beside those the speech checks in front of the judge let through (flips_uncaught
    / trials: flips whose attacked speeches all passed the checks). The scripted judges read no rules, so the `guard`
    option does nothing to them; it is measured in (b).
(b) The real SmolLM2-135M-Instruct judge on llama-cpp-python's server (tests/support/local_llm.py): two `single` judges
    at temperature 0, one run, that differ only in the `guard` option (a rule in their prompts that the speech blocks
    are the debaters' and never addressed to the judge). Each debate in a workspace of its own, so that its judgings
    run back to back: both judges' clean verdicts (`arena judge`), then every attack (`arena judge-attacks`), guard off
    then on, the second served from the server's prompt cache up to its rules (the two prompts differ only after the
    transcript). Summed over the debates, per attack: flips / trials, the flip rate and its 95% Wilson interval, guard
    off beside guard on; then how often the two judges' clean verdicts agree. The attacks' `caught` is left out here:
    it is the speech checks' doing, not the judge's, and (a) measures it.
    The debates, --debates:
      lechmazur (default)  real LLM speeches: a seeded sample of the transcripts of a lechmazur/debate checkout
                           (--source, as benchmarks/import_lechmazur.py takes it: git clone it there), each brought
                           in by `arena import lechmazur`; ten turns of some 250 words, 3,500-4,000 prompt tokens a
                           judging. Without a checkout, the demo's debates.
      demo                 debates of the demo's simulated debaters (`arena demo`'s entries: planted strengths, the
                           weak ones hedging), each drawn and played offline; some 3,300 prompt tokens a judging.
    What a judging costs is SmolLM2 reading its prompt (the guarded twin reads only its last ~350 tokens): at the ~250
    prompt tokens a second of two idle cores (tests/support/local_llm.py) some 20 s, a debate (7 judgings) about 2.5
    minutes, the default run some 11. On a machine whose cores are shared it is several times that: the default run
    took 51 minutes here (the server read 16-67 prompt tokens a second), the debates 23, 10, 8 and 11 minutes.

Run: LITELLM_LOCAL_MODEL_COST_MAP=True .venv/bin/python benchmarks/judge_attacks.py [--quick] [--matches N]
     [--attacks A,B] [--debates lechmazur|demo] [--source DIR] [--threads N] [--skip-fake] [--skip-real]
     default: (a) 8 matches, (b) 4 debates x 6 attacks x guard off and on; --quick: (a) 4 matches, (b) 2 debates.
"""
from __future__ import annotations

import argparse
import os
import random
import shutil
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from arena.app import commands as app  # noqa: E402
from arena.match.attacks import ATTACKS  # noqa: E402

quiet = lambda line: None  # noqa: E731 - progress nobody reads


def rate(flips: int, trials: int) -> str:
    return f"{flips}/{trials} {100 * flips / trials:3.0f}%" if trials else "-"


# --- (a) the scripted judges on the fake server -------------------------------------------------------------------

def fake(rounds: int, attacks: list[str]) -> None:
    from tests.support.fakes.openai_server import FakeOpenAI
    from tests.support.helpers import entry, judge, mark_checked, new_workspace
    from tests.support.scripted_judges import RULES, speaker

    started = time.perf_counter()
    with FakeOpenAI(responder=speaker("alpha")) as server, tempfile.TemporaryDirectory(prefix="arena-attacks-") as root:
        path = Path(root) / "ws"
        new_workspace(path, arena={"judge_runs": 1}, llm={"backoff_s": 0.01, "retries": 0}, motions=["builtin:en"],
                      entries=[entry(name, model=f"openai/{name}-model", api_base=server.api_base)
                               for name in ("alpha", "beta")],
                      judges=[judge(rule, model=f"openai/{rule}", api_base=server.api_base, runs=1,
                                    options={"swap_sides": False}) for rule in RULES])
        mark_checked(path)
        ws = app.open_workspace(path)
        try:
            app.schedule(ws, "round-robin", rounds=rounds)
            played = app.run(ws, concurrency=4, progress=quiet)
            rows = {rule: {r["attack"]: r for r in app.judge_attacks(ws, rule, attacks=attacks, progress=quiet)}
                    for rule in RULES}
        finally:
            ws.close()
    print(f"\n(a) scripted judges on the fake OpenAI server: {played['done']} matches played, every attack on each; "
          f"flips / trials, with no defence | with the speech checks in front (flips_uncaught)  "
          f"[{time.perf_counter() - started:.0f} s]")
    print(f"{'attack':10}" + "".join(f"  {rule:>25}" for rule in RULES))
    for attack in attacks:
        cells = []
        for rule in RULES:
            r = rows[rule][attack]
            cells.append(f"{rate(r['flips'], r['trials'])} | {rate(r['flips_uncaught'], r['trials'])}")
        print(f"{attack:10}" + "".join(f"  {c:>25}" for c in cells))
    caught = {a: rows["robust"][a]["caught"] for a in attacks}
    print("attacked speeches the checks refused (robust's run): " + ", ".join(f"{a} {n}" for a, n in caught.items()))


# --- (b) the real SmolLM2 judge, guard off and on -----------------------------------------------------------------

JUDGES = {"smol": False, "smol-guard": True}  # judge name -> its guard option
SETTINGS = ('[arena]\njudge_runs = 1\nseed = 0\n[llm]\nretries = 1\nbackoff_s = 0.1\ntimeout_s = 1800\n'
            '[search]\nprovider = "offline"\n')
# The demo's simulated debaters (arena demo's entries: planted strengths, the simulator's three kinds).
DEBATERS = (("sim-ace", "agent4debate", 1.5), ("sim-bold", "search-baseline", 0.9), ("sim-calm", "direct", 0.3),
            ("sim-deft", "agent4debate", -0.3), ("sim-eager", "search-baseline", -0.9), ("sim-faint", "direct", -1.5))


def judges_toml(model: str, api_base: str) -> str:
    return "".join(f'\n[[judges]]\nname = "{name}"\nkind = "single"\nruns = 1\nmodel = "{model}"\n'
                   f'api_base = "{api_base}"\n[judges.options]\ntemperature = 0\nguard = {str(guard).lower()}\n'
                   for name, guard in JUDGES.items())


def demo_debate(path: Path, seed: int) -> None:
    """A workspace holding one debate of the demo's simulated debaters, drawn by seed and played."""
    from arena.workspace.folder import init_workspace

    init_workspace(path, SETTINGS + "".join(
        f'[[entries]]\nname = "{name}"\ndebater = "{kind}"\nmodel = "offline/{name}"\nstrength = {strength}\n'
        for name, kind, strength in DEBATERS))
    ws = app.open_workspace(path)
    try:
        app.schedule(ws, "random", matches=1, seed=seed)
        app.run(ws, progress=quiet)
    finally:
        ws.close()


def lechmazur_debate(path: Path, transcript: Path, source: Path) -> None:
    """A workspace holding one debate of a lechmazur/debate checkout, brought in by `arena import lechmazur`."""
    from arena.workspace.folder import init_workspace

    checkout = path.parent / "checkout"
    (checkout / "transcripts").mkdir(parents=True)
    shutil.copytree(source / "reports" / "debate_matchup_judgments", checkout / "reports" / "debate_matchup_judgments")
    shutil.copy(transcript, checkout / "transcripts" / transcript.name)
    init_workspace(path, SETTINGS)
    ws = app.open_workspace(path)
    try:
        app.import_debates(ws, "lechmazur", checkout)
    finally:
        ws.close()


def attacked(path: Path, attacks: list[str]) -> tuple[dict[str, dict[str, dict]], dict[str, str | None], float]:
    """One debate's workspace: both judges' clean verdicts, then each attack, guard off then on back to back, so that
    the server's prompt cache serves the second the transcript the first read (the prompts differ only after it).
    Each judge's rows by attack, its clean verdict, and the seconds taken."""
    ws = app.open_workspace(path)
    started = time.perf_counter()
    try:
        app.judge(ws, list(JUDGES), concurrency=1, progress=quiet)
        rows: dict[str, dict[str, dict]] = {name: {} for name in JUDGES}
        for attack in attacks:
            for name in JUDGES:
                [rows[name][attack]] = app.judge_attacks(ws, name, attacks=[attack], concurrency=1, progress=quiet)
    finally:
        ws.close()
    with sqlite3.connect(path / "arena.db") as db:
        clean = dict(db.execute("SELECT judge, overall FROM verdicts WHERE judge IN (?, ?) AND error IS NULL",
                                tuple(JUDGES)).fetchall())
    return rows, {name: clean.get(name) for name in JUDGES}, time.perf_counter() - started


def real(matches: int, attacks: list[str], debates: str, source: Path, threads: int) -> None:
    from arena.analysis.bias import wilson
    from tests.support.helpers import mark_checked
    from tests.support.local_llm import LocalLLM

    if debates == "lechmazur" and not (source / "transcripts").is_dir():
        print(f"{source}: no lechmazur/debate checkout there: the demo's debates instead")
        debates = "demo"
    root = Path(tempfile.mkdtemp(prefix="arena-attacks-real-"))
    picked = random.Random(0).sample(sorted((source / "transcripts").glob("*.md")), matches) \
        if debates == "lechmazur" else range(matches)
    flips = {name: {a: [0, 0] for a in attacks} for name in JUDGES}  # judge -> attack -> [flips, trials]
    cleans: list[dict[str, str | None]] = []
    calls = 0
    started = time.perf_counter()
    with LocalLLM(n_threads=threads) as llm:
        for k, which in enumerate(picked):
            path = root / f"d{k}" / "ws"
            path.parent.mkdir()
            if debates == "lechmazur":
                lechmazur_debate(path, which, source)
            else:
                demo_debate(path, k)
            with open(path / "arena.toml", "a", encoding="utf-8") as toml:
                toml.write(judges_toml(llm.model, llm.api_base))
            mark_checked(path)  # no probe: the first judging finds the structured mode the server takes
            rows, clean, seconds = attacked(path, attacks)
            cleans.append(clean)
            for name in JUDGES:
                for attack, row in rows[name].items():
                    flips[name][attack][0] += row["flips"]
                    flips[name][attack][1] += row["trials"]
                    calls += row["calls"]
            print(f"  debate {k + 1}/{matches}: clean {clean['smol']} / {clean['smol-guard']} (guard off / on), "
                  f"{seconds:.0f} s", flush=True)
    what = ("debates of lechmazur/debate (real LLM speeches, ten turns)" if debates == "lechmazur" else
            "debates of the demo's simulated debaters (six speeches)")
    print(f"\n(b) SmolLM2-135M-Instruct as a `single` judge (temperature 0, one run) on {matches} {what}, guard off "
          f"and on; flips / trials and 95% interval  [{time.perf_counter() - started:.0f} s, {calls} attacked "
          f"judgings' calls]")
    print(f"{'attack':10}  {'guard off':>26}  {'guard on':>26}")
    for attack in attacks:
        cells = []
        for name in JUDGES:
            n_flips, trials = flips[name][attack]
            low, high = wilson(n_flips, trials)
            cells.append(f"{rate(n_flips, trials)} [{low:.2f}, {high:.2f}]" if trials else "-")
        print(f"{attack:10}  {cells[0]:>26}  {cells[1]:>26}")
    totals = {name: [sum(f[0] for f in flips[name].values()), sum(f[1] for f in flips[name].values())]
              for name in JUDGES}
    print(f"{'all':10}  {rate(*totals['smol']):>26}  {rate(*totals['smol-guard']):>26}")
    both = [c for c in cleans if c["smol"] and c["smol-guard"]]
    same = sum(c["smol"] == c["smol-guard"] for c in both)
    pro = {name: sum(c[name] == "pro" for c in cleans) for name in JUDGES}
    print(f"clean verdicts: the same with the guard off and on in {same} of {len(both)} debates judged validly by "
          f"both; PRO won {pro['smol']} with it off, {pro['smol-guard']} with it on")
    shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--quick", action="store_true", help="(a) 4 matches, (b) 2 debates")
    parser.add_argument("--matches", type=int, default=None, help="(b)'s debates (default 4, --quick 2)")
    parser.add_argument("--attacks", default=",".join(ATTACKS), help="comma-separated (default: all six)")
    parser.add_argument("--debates", choices=("lechmazur", "demo"), default="lechmazur", help="(b)'s debates")
    parser.add_argument("--source", type=Path, default=Path("/tmp/lech"), help="a lechmazur/debate checkout")
    parser.add_argument("--threads", type=int, default=2, help="the server's threads")
    parser.add_argument("--skip-fake", action="store_true")
    parser.add_argument("--skip-real", action="store_true")
    args = parser.parse_args()
    attacks = [a for a in args.attacks.split(",") if a]
    unknown = [a for a in attacks if a not in ATTACKS]
    if unknown:
        parser.error(f"--attacks: unknown {', '.join(unknown)}; the attacks are {', '.join(ATTACKS)}")
    matches = args.matches or (2 if args.quick else 4)
    if not args.skip_fake:
        fake(2 if args.quick else 4, attacks)
    if not args.skip_real:
        real(matches, attacks, args.debates, args.source, args.threads)


if __name__ == "__main__":
    main()
