"""Prompt-cache benchmark (issue 52): how much of a tournament's prompt tokens fall in a prefix already sent to the
same model, counted as OpenAI counts it, before and after, in the same run.

A round robin of three entries — two `agent4debate` entries and one `direct` entry — judged by `debatrix` (R = 3,
the default `[arena] judge_runs`) and a `panel` judge, each entry and judge on its own model name at a fake OpenAI
server (tests/support/fakes: real HTTP on loopback; it records every request), search through a fake Tavily, the
response cache off and speech checks off (a forfeit would end a match early, and the fake's texts are no debate).
The arena is driven as a user drives it, `arena init`/`schedule`/`run` in subprocesses, so the same driver plays
an earlier checkout: with `--baseline REV` (default cdc6ad7, the commit before issue 52's work) the tree of REV
(`git archive`, into a temporary folder; or REV a folder that holds a checkout) plays the same plan with the same
seed and config, against the same fakes, and the two are printed side by side with after / before. The models are
recorded as working and measured, as `arena check` leaves them, so `arena run` sends no probe (the driver checks
that the server received exactly the calls the ledger's matches made).

What is measured, from the requests the fake recorded during `arena run`: per model, in the order the server
received them, each request's text (its messages' contents joined by newlines, as the fake's messages_text joins
them) is fed to arena.gateway.caching.PrefixCache, which finds the longest prefix it shares with any earlier prompt
to that model and counts the tokens OpenAI would read from its cache: none below 1,024 tokens, else that prefix
rounded down to a step of 128 (tokens counted by rough_tokens: a token per 4 characters). Printed per model:
requests, prompt tokens, cacheable tokens, of those the ones of prompts sent whole before ("repeats": a provider
may not hold the earlier one yet when both are sent at once), and the share; the target is at least 50% of all
prompt tokens cacheable. Then, from the ledger (the calls table of each run's arena.db; the fake reports the same
rough token counts as usage), the calls, prompt and completion tokens per match of each debater kind (per side it
played) and judge kind (all R runs), and the timings.

The fake answers every structured request with a small valid instance of its JSON schema (a ~380-word speech for
a `speech` field, ~40 words for any other text) and free text with a ~380-word text, each drawn from a count of
the answers so far, so texts differ from call to call, as a model's would (drawn from the prompt, two matches whose
prompts are alike would be one debate twice, and their judges' prompts would repeat whole), and are the same size
before and after. Its reviewers approve every first draft and it asks for no extra material, so agent4debate makes
11 calls a side at cdc6ad7.

Run: LITELLM_LOCAL_MODEL_COST_MAP=True .venv/bin/python benchmarks/prompt_cache.py [--quick] [--rounds N]
     [--matches N] [--seed S] [--baseline REV | --no-baseline] [--keep DIR] [--json]
"""
from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from arena.gateway.caching import PrefixCache  # noqa: E402
from arena.gateway.caching import rough_tokens  # noqa: E402
from tests.support.fakes.openai_server import FakeOpenAI, Reply, messages_text  # noqa: E402
from tests.support.fakes.tavily_server import FakeTavily  # noqa: E402
from tests.support.helpers import requested_schema, schema_instance  # noqa: E402

BASELINE = "cdc6ad7"  # the commit before issue 52's work
TARGET = 0.50  # share of all prompt tokens in a prefix already sent to the same model
# (name, kind, model): each entry and judge on a model of its own, so the server's requests tell whose each is.
ENTRIES = (("a4d-1", "agent4debate", "openai/a4d-1"), ("a4d-2", "agent4debate", "openai/a4d-2"),
           ("direct-1", "direct", "openai/direct-1"))
JUDGES = (("debatrix", "debatrix", "openai/debatrix-1"), ("panel", "panel", "openai/panel-1"))
KIND = {model.split("/", 1)[1]: kind for _, kind, model in ENTRIES + JUDGES}
REMEMBER = ("import sys\nfrom arena.app.commands import open_workspace\nws = open_workspace(sys.argv[1])\n"
            "for model in sys.argv[3:]:\n    ws.store.remember_model(model, sys.argv[2], ok=True, "
            "structured='json_schema', latency_s=0.01, measured_at=0.0)\nws.close()\n")
SPEECH_WORDS, NOTE_WORDS = 380, 40
VOCABULARY = ("the policy evidence shows a clear mechanism that lowers cost and raises access for families while "
              "critics overstate risk because their data ignore the long run and the weighed impact of reform on "
              "schools hospitals markets workers cities rural regions public trust and future budgets").split()


def prose(seed: str, words: int) -> str:
    """words words of sentence-like text, drawn from seed (the same seed, the same text)."""
    rng = random.Random(hashlib.sha256(seed.encode()).digest())
    out: list[str] = []
    while len(out) < words:
        sentence = rng.choices(VOCABULARY, k=rng.randint(9, 18))
        out += [sentence[0].capitalize(), *sentence[1:-1], sentence[-1] + "."]
    return " ".join(out[:words])


ANSWERS = itertools.count()


def answer(body: dict) -> Reply:
    """A valid answer to any request the arena sends, with usage in rough_tokens (the analysis's count). Each answer's
    text is drawn afresh (from a count of the answers), as a model's would be: answers drawn from the prompt would
    make two matches whose prompts are alike (two entries of one kind on one motion, where the prompts name no match)
    the same debate, whose judges' prompts would then repeat whole."""
    prompt = messages_text(body)
    seed = f"{body.get('model')}:{next(ANSWERS)}"
    schema = requested_schema(body)
    if schema:
        content = json.dumps(schema_instance(schema, text=lambda key: prose(
            seed + key, SPEECH_WORDS if key == "speech" else NOTE_WORDS)))
    else:
        content = prose(seed, SPEECH_WORDS)
    return Reply(content=content, prompt_tokens=rough_tokens(prompt), completion_tokens=rough_tokens(content))


def config(api_base: str, search_base: str, seed: int) -> str:
    toml = ["[arena]", f"seed = {seed}", "speech_checks = false", "[llm]", "cache = false",
            "[search]", 'provider = "tavily"', f'api_base_url = "{search_base}"']
    for name, kind, model in ENTRIES:
        toml += ["[[entries]]", f'name = "{name}"', f'debater = "{kind}"', f'model = "{model}"',
                 f'api_base = "{api_base}"']
    for name, kind, model in JUDGES:
        toml += ["[[judges]]", f'name = "{name}"', f'kind = "{kind}"', f'model = "{model}"',
                 f'api_base = "{api_base}"']
    return "\n".join(toml) + "\n"


def arena(tree: Path, workspace: Path, *args: str) -> str:
    """`arena ARGS -w WORKSPACE` (`arena init WORKSPACE`) of the checkout at tree, in a process of its own; its
    stdout."""
    env = {**os.environ, "PYTHONPATH": str(tree), "OPENAI_API_KEY": "sk-fake", "TAVILY_API_KEY": "tvly-fake",
           "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    where = [str(workspace)] if args[0] == "init" else ["-w", str(workspace)]
    done = subprocess.run([sys.executable, "-m", "arena", *args, *where], cwd=workspace, env=env,
                          capture_output=True, text=True, timeout=1800)
    if done.returncode:
        raise SystemExit(f"arena {' '.join(args)} ({tree}) exited {done.returncode}:\n{done.stderr[-3000:]}")
    return done.stdout


def play(tree: Path, workspace: Path, llm: FakeOpenAI, tavily: FakeTavily, args: argparse.Namespace) -> dict:
    """Set up the workspace, play the plan with the checkout at tree, and measure the requests of its run."""
    workspace.mkdir(parents=True)
    timings = {}
    started = time.perf_counter()
    arena(tree, workspace, "init")
    (workspace / "arena.toml").write_text(config(llm.api_base, tavily.base_url, args.seed))
    # As after `arena check` (which takes half a minute here, measuring each model's speed): each model known to
    # work with json_schema and measured (no slots found), so `arena run` sends no probe; checked below.
    subprocess.run([sys.executable, "-c", REMEMBER, str(workspace), llm.api_base,
                    *(model for _, _, model in ENTRIES + JUDGES)], cwd=workspace, check=True,
                   env={**os.environ, "PYTHONPATH": str(tree)})
    timings["set_up_s"] = time.perf_counter() - started
    if args.matches:
        arena(tree, workspace, "schedule", "--format", "random", "--matches", str(args.matches),
              "--seed", str(args.seed))
    else:
        arena(tree, workspace, "schedule", "--format", "round-robin", "--rounds", str(args.rounds),
              "--seed", str(args.seed))
    llm.clear()
    tavily.clear()
    started = time.perf_counter()
    arena(tree, workspace, "run", *(["--concurrency", str(args.concurrency)] if args.concurrency else []))
    timings["run_s"] = time.perf_counter() - started
    bodies = [r.body for r in llm.requests if r.path.endswith("/chat/completions")]
    played = sum(k["calls"] for k in ledger(workspace / "arena.db")["kinds"].values())
    if len(bodies) != played:
        raise SystemExit(f"{tree}: the server received {len(bodies)} chat requests, the ledger's matches made "
                         f"{played} calls: did `arena run` probe the models?")
    searches = len(tavily.requests)
    if args.keep:  # what the server received, for a closer look: one request body a line, in arrival order
        with open(workspace / "requests.jsonl", "w") as out:
            out.writelines(json.dumps(body) + "\n" for body in bodies)
    started = time.perf_counter()
    models = measure(bodies)
    timings["analysis_s"] = time.perf_counter() - started
    return {"tree": str(tree), "models": models, "total": total(models), "kinds": ledger(workspace / "arena.db"),
            "searches": searches, "timings": timings}


def measure(bodies: list[dict]) -> dict[str, dict]:
    """Per model, in request order: requests, prompt tokens, those an OpenAI-style cache would have read."""
    cache = PrefixCache()
    seen: set[tuple[str, str]] = set()
    models: dict[str, dict] = {}
    for body in bodies:
        model, text = body.get("model", "?"), messages_text(body)
        tokens, cached = cache.send(model, text)
        row = models.setdefault(model, {"kind": KIND.get(model, "?"), "requests": 0, "prompt_tokens": 0,
                                        "cacheable_tokens": 0, "repeat_tokens": 0})
        row["requests"] += 1
        row["prompt_tokens"] += tokens
        row["cacheable_tokens"] += cached
        digest = hashlib.sha256(text.encode()).hexdigest()
        if (model, digest) in seen:  # the whole prompt sent before (a judge's run that reads as an earlier one did)
            row["repeat_tokens"] += cached
        seen.add((model, digest))
    for row in models.values():
        row["share"] = row["cacheable_tokens"] / row["prompt_tokens"] if row["prompt_tokens"] else 0.0
    return dict(sorted(models.items()))


def total(models: dict[str, dict]) -> dict:
    prompt = sum(r["prompt_tokens"] for r in models.values())
    cached = sum(r["cacheable_tokens"] for r in models.values())
    return {"requests": sum(r["requests"] for r in models.values()), "prompt_tokens": prompt,
            "cacheable_tokens": cached, "repeat_tokens": sum(r["repeat_tokens"] for r in models.values()),
            "share": cached / prompt if prompt else 0.0}


def ledger(db: Path) -> dict:
    """From the ledger's LLM calls: per debater kind, tokens per side played; per judge kind, tokens per match; and
    the matches done and failed."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        status = dict(conn.execute("SELECT status, COUNT(*) FROM matches GROUP BY status").fetchall())
        rows = conn.execute("SELECT match_id, side, judge, model, COUNT(*), SUM(prompt_tokens), "
                            "SUM(completion_tokens), COUNT(error) FROM calls WHERE kind = 'llm' AND match_id IS NOT NULL "
                            "GROUP BY match_id, side, judge, model").fetchall()
    finally:
        conn.close()
    kinds: dict[str, dict] = defaultdict(lambda: {"plays": set(), "calls": 0, "prompt_tokens": 0,
                                                  "completion_tokens": 0, "errors": 0})
    per_match: dict[str, dict] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    for match_id, side, judge, model, calls, prompt, completion, errors in rows:
        kind = KIND.get(model.split("/", 1)[-1], model)
        role = f"judge {kind}" if judge else f"debater {kind}"
        k = kinds[role]
        k["plays"].add((match_id, None if judge else side))
        k["calls"] += calls
        k["prompt_tokens"] += prompt or 0
        k["completion_tokens"] += completion or 0
        k["errors"] += errors
        per_match[match_id][role][0] += prompt or 0
        per_match[match_id][role][1] += completion or 0
    out = {}
    for role, k in sorted(kinds.items()):
        plays = len(k.pop("plays"))
        out[role] = {**k, "plays": plays, "prompt_per_play": k["prompt_tokens"] / plays,
                     "completion_per_play": k["completion_tokens"] / plays, "calls_per_play": k["calls"] / plays}
    return {"matches": status, "kinds": out,
            "per_match": {m: {role: {"prompt_tokens": p, "completion_tokens": c} for role, (p, c) in roles.items()}
                          for m, roles in sorted(per_match.items())}}


def baseline_tree(rev: str, scratch: Path) -> Path:
    """A folder holding REV: REV itself when it is a folder, else `git archive REV` of this repository."""
    if Path(rev).is_dir():
        return Path(rev).resolve()
    tree = scratch / f"tree-{rev}"
    tree.mkdir()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    return tree


def revision(tree: Path) -> str:
    if tree == ROOT:
        done = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
        dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True).stdout.strip()
        return done.stdout.strip() + (" (with uncommitted changes)" if dirty else "")
    return tree.name


def report(results: dict[str, dict], args: argparse.Namespace) -> None:
    names = list(results)
    plan = (f"{args.matches} random matches" if args.matches else
            f"a round robin, {args.rounds} motion(s) per pair ({6 * args.rounds} matches)")
    print("Prompt caching: the share of prompt tokens in a prefix already sent to the same model, as OpenAI caches it "
          "(from 1,024 tokens, in steps of 128; tokens = characters / 4)")
    print(f"Plan: {plan}, seed {args.seed}: entries a4d-1, a4d-2 (agent4debate), direct-1 (direct); judges debatrix "
          "(R = 3) and panel (R = 3); each on its own model at a fake OpenAI server; search by a fake Tavily")
    for name in names:
        print(f"  {name}: {results[name]['label']}")
    reference = names[0] if len(names) == 2 else "none (--no-baseline)"
    print(f"Reference: {reference}. Target: at least {TARGET:.0%} of all prompt tokens cacheable.")
    print()
    models = sorted({m for r in results.values() for m in r["models"]})
    head = f"{'model':<12} {'kind':<13}"
    for name in names:
        head += f" | {name + ': requests':>18} {'prompt tok':>11} {'cacheable':>10} {'repeats':>9} {'share':>6}"
    if len(names) == 2:
        head += f" | {'share after/before':>18}"
    print(head)
    print("-" * len(head))

    def cells(row: dict | None) -> str:
        if row is None:
            return f" | {'-':>18} {'-':>11} {'-':>10} {'-':>9} {'-':>6}"
        return (f" | {row['requests']:>18,} {row['prompt_tokens']:>11,} {row['cacheable_tokens']:>10,} "
                f"{row['repeat_tokens']:>9,} {row['share']:>6.1%}")

    def ratio(*rows: dict | None, key: str = "share") -> str:
        if len(rows) != 2:
            return ""
        a, b = rows
        if not a or not b or not a[key]:
            return f" | {'-':>18}"
        return f" | {b[key] / a[key]:>17.2f}x"

    for model in models:
        rows = [results[n]["models"].get(model) for n in names]
        print(f"{model:<12} {KIND.get(model, '?'):<13}" + "".join(cells(r) for r in rows) + ratio(*rows))
    totals = [results[n]["total"] for n in names]
    print(f"{'all':<12} {'':<13}" + "".join(cells(t) for t in totals) + ratio(*totals))
    print("(repeats: the cacheable tokens of prompts that are an earlier prompt to the model whole, such as a judge's "
          "run reading as an earlier run did; sent at once, a provider may not yet hold the earlier one)")
    for name, t in zip(names, totals):
        verdict = "met" if t["share"] >= TARGET else "not met"
        print(f"{name}: {t['share']:.1%} of {t['prompt_tokens']:,} prompt tokens cacheable (target {TARGET:.0%}: "
              f"{verdict})")
    if len(names) == 2 and totals[0]["prompt_tokens"]:
        print(f"prompt tokens after/before: {totals[1]['prompt_tokens'] / totals[0]['prompt_tokens']:.2f}x; "
              f"tokens not cacheable after/before: "
              f"{(totals[1]['prompt_tokens'] - totals[1]['cacheable_tokens']) / max(1, totals[0]['prompt_tokens'] - totals[0]['cacheable_tokens']):.2f}x")
    print()
    print("Per match, from the ledger (debaters: per side played; judges: per match judged, all R runs)")
    roles = sorted({r for res in results.values() for r in res["kinds"]["kinds"]})
    head = f"{'who':<22}"
    for name in names:
        head += f" | {name + ': calls':>14} {'prompt tok':>11} {'completion':>10}"
    if len(names) == 2:
        head += f" | {'prompt after/before':>19}"
    print(head)
    print("-" * len(head))
    for role in roles:
        line = f"{role:<22}"
        rows = [results[n]["kinds"]["kinds"].get(role) for n in names]
        for row in rows:
            line += (f" | {row['calls_per_play']:>14.1f} {row['prompt_per_play']:>11,.0f} "
                     f"{row['completion_per_play']:>10,.0f}" if row else f" | {'-':>14} {'-':>11} {'-':>10}")
        if len(names) == 2:
            line += (f" | {rows[1]['prompt_per_play'] / rows[0]['prompt_per_play']:>18.2f}x"
                     if all(rows) and rows[0]["prompt_per_play"] else f" | {'-':>19}")
        print(line)
    print()
    for name in names:
        r = results[name]
        t = r["timings"]
        errors = sum(k["errors"] for k in r["kinds"]["kinds"].values())
        print(f"{name}: matches {r['kinds']['matches']}, {r['total']['requests']:,} LLM requests, {errors} with an "
              f"error, {r['searches']} searches; set-up {t['set_up_s']:.1f}s, arena run "
              f"{t['run_s']:.1f}s, analysis {t['analysis_s']:.1f}s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=1, help="round robin: motions per pair (6 matches each)")
    parser.add_argument("--matches", type=int, help="instead of the round robin: this many random matches")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--concurrency", type=int, help="arena run --concurrency (default: arena run's)")
    parser.add_argument("--baseline", default=BASELINE, metavar="REV",
                        help=f"the commit (or a folder holding a checkout) to compare with; default {BASELINE}")
    parser.add_argument("--no-baseline", action="store_true", help="measure this checkout only")
    parser.add_argument("--keep", type=Path, metavar="DIR", help="keep the workspaces, each with the requests its run sent (requests.jsonl), and the baseline tree here")
    parser.add_argument("--quick", action="store_true", help="the smallest run: 2 random matches")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    args = parser.parse_args()
    if args.quick:
        args.matches = args.matches or 2
    if args.keep and args.keep.exists() and any(args.keep.iterdir()):
        parser.error(f"--keep: {args.keep} is not empty")
    scratch = args.keep.resolve() if args.keep else Path(tempfile.mkdtemp(prefix="prompt-cache-"))
    scratch.mkdir(parents=True, exist_ok=True)
    results: dict[str, dict] = {}
    try:
        trees = [] if args.no_baseline else [("before", baseline_tree(args.baseline, scratch))]
        trees.append(("after", ROOT))
        with FakeOpenAI(answer) as llm, FakeTavily() as tavily:
            for name, tree in trees:
                results[name] = play(tree, scratch / f"ws-{name}", llm, tavily, args)
                results[name]["label"] = (f"{revision(tree)}" if tree == ROOT else
                                          f"{args.baseline} ({tree})" if Path(args.baseline).is_dir() else
                                          args.baseline)
                if llm.errors:
                    raise SystemExit(f"the fake's responder failed: {llm.errors[0]!r}")
    finally:
        if not args.keep:
            shutil.rmtree(scratch, ignore_errors=True)
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        report(results, args)


if __name__ == "__main__":
    main()
