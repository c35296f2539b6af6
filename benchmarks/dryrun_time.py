"""How good is the dry run's time? `arena run --dry-run`'s estimate beside the real wall time, on a REAL local model.

SmolLM2-135M-Instruct on the stock llama-cpp-python server (tests/local_llm.py starts it; it serves one request
at a time). The plan: two `direct` entries and a `single` judge (R = 1), all on that server, a round robin of
4 matches (two motions, each played with sides swapped). First the model's facts: what `arena check` measured
(slots, tokens_per_s, prompt_tokens_per_s, latency_s) when it measures them, else measured here the same simple
way (a short call's round trip; a long answer's completion tokens over its time less that round trip; a long
prompt's tokens over its time likewise; slots from two long answers at once against one alone) and remembered as
`arena check` would. Then `arena run --dry-run` (every match played on the simulator) and the real `arena run`,
both at --concurrency 1 unless told otherwise. It prints the estimate, the real time and their ratio, and the
projected tokens beside those the ledger counted.

Speech checks are off (a 135M model often echoes its instructions, and a forfeit ends a match early, which no
projection can foresee) and the call timeout is long, so that what is timed is the plan as projected. The server
runs on one thread by default: on a shared machine llama.cpp's threads wait for one another at every step, so two
of them slow down by more than one when another process takes a core. The facts are measured again after the run
(the machine's load may have changed meanwhile), and the estimate from those is printed too.

Run: LITELLM_LOCAL_MODEL_COST_MAP=True .venv/bin/python benchmarks/dryrun_time.py [--words N] [--concurrency N]
     [--threads N]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from arena.app import commands as app  # noqa: E402
from arena.clock import span  # noqa: E402
from tests.helpers import entry, judge, new_workspace  # noqa: E402
from tests.local_llm import LocalLLM  # noqa: E402


def workspace(path: Path, llm: LocalLLM, words: int) -> Path:
    """Two direct entries and a single judge on the local model, speeches of `words` words: a 4-match round robin."""
    model = {"model": llm.model, "api_base": llm.api_base}
    budgets = {f"words_{stage}": words for stage in ("constructive", "rebuttal", "summary")}
    path = new_workspace(path, arena={"judge_runs": 1, "speech_checks": False},
                         llm={"retries": 1, "backoff_s": 0.1, "timeout_s": 1800},
                         entries=[entry("plain-a", **model, params=budgets),
                                  entry("plain-b", **model, params={"temperature": 0.7, **budgets})],
                         judges=[judge("single", runs=1, **model)])
    ws = app.open_workspace(path)
    try:
        app.schedule(ws, "round-robin", rounds=2)
    finally:
        ws.close()
    return path


def _call(llm: LocalLLM, content: str, max_tokens: int) -> tuple[float, dict]:
    """(seconds, usage) of one chat call through litellm, as the arena makes them."""
    from arena.lazy import litellm

    started = time.perf_counter()
    response = litellm().completion(model=llm.model, api_base=llm.api_base, api_key="no-key-needed",
                                    messages=[{"role": "user", "content": content}], max_tokens=max_tokens,
                                    temperature=0.7)
    return time.perf_counter() - started, dict(response.usage)


def measure(llm: LocalLLM) -> dict:
    """The facts `arena check` measures, measured here simply: {slots, tokens_per_s, prompt_tokens_per_s, latency_s}."""
    latency, _ = _call(llm, "Reply with one word: ready", 16)
    story = "Write a long story about a lighthouse keeper and the sea, in many paragraphs."
    spent, usage = _call(llm, story, 256)
    tokens_per_s = usage["completion_tokens"] / max(0.01, spent - latency)
    filler = " ".join(f"item {k} of a long list that the model reads and need not answer" for k in range(120))
    spent, usage = _call(llm, f"{time.time()} {filler}\nReply with one word.", 1)  # a fresh prefix: no cache reuse
    prompt_tokens_per_s = usage["prompt_tokens"] / max(0.01, spent - latency)
    alone, _ = _call(llm, story + " Another one.", 128)
    threads = [threading.Thread(target=_call, args=(llm, story + f" Version {k}.", 128)) for k in range(2)]
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    together = time.perf_counter() - started
    slots = 1 if together > 1.5 * alone else 2  # two at once in about the time of one: more than one slot
    return {"slots": slots, "tokens_per_s": round(tokens_per_s, 1),
            "prompt_tokens_per_s": round(prompt_tokens_per_s, 1), "latency_s": round(latency, 3)}


def facts(path: Path, llm: LocalLLM) -> tuple[dict, str]:
    """The model's facts as `arena check` leaves them, or measured here when it measures no throughput."""
    ws = app.open_workspace(path)
    try:
        app.check(ws)
        known = ws.store.model_facts(llm.model, llm.api_base) or {}
        if known.get("tokens_per_s"):
            return known, "arena check"
        measured = measure(llm)
        ws.store.remember_model(llm.model, llm.api_base, **measured)
        return measured, "measured by this script"
    finally:
        ws.close()


def ledger(path: Path) -> dict:
    """What the real run's calls were: calls, prompt and completion tokens (answered calls only)."""
    import sqlite3

    conn = sqlite3.connect(path / "arena.db")
    try:
        calls, prompt, completion, timeouts = conn.execute(
            "SELECT SUM(error IS NULL), SUM(prompt_tokens), SUM(completion_tokens), SUM(error LIKE '%imeout%') "
            "FROM calls WHERE match_id IS NOT NULL AND kind = 'llm'").fetchone()
    finally:
        conn.close()
    return {"calls": calls or 0, "prompt_tokens": prompt or 0, "completion_tokens": completion or 0,
            "timeouts": timeouts or 0}


def rescaled(projected: dict, before: dict, after: dict) -> float:
    """The estimate at the rates measured after the run: the plan's one model and server, its work at the new rates
    (the plan is done by then, so a dry run would have nothing left to time)."""
    [row] = projected["models"]

    def seconds(f: dict) -> float:
        prompt = row["prompt_tokens"] / f["prompt_tokens_per_s"] if f.get("prompt_tokens_per_s") else 0.0
        return row["calls"] * f["latency_s"] + prompt + row["completion_tokens"] / f["tokens_per_s"]
    return projected["time_s"]["estimate"] * seconds(after) / seconds(before)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--words", type=int, default=100, help="each speech's budget in words (default 100)")
    parser.add_argument("--concurrency", type=int, default=1, help="matches at once, dry run and run (default 1)")
    parser.add_argument("--threads", type=int, default=1, help="the server's threads (default 1)")
    args = parser.parse_args()
    with LocalLLM(n_threads=args.threads) as llm, tempfile.TemporaryDirectory(prefix="arena-dryrun-time-") as scratch:
        path = workspace(Path(scratch) / "ws", llm, args.words)
        known, source = facts(path, llm)
        print(f"model facts ({source}): " + json.dumps({k: known.get(k) for k in
                                                          ("slots", "tokens_per_s", "prompt_tokens_per_s",
                                                           "latency_s")}))
        ws = app.open_workspace(path)
        try:
            projected = app.dry_run(ws, every=1, concurrency=args.concurrency)
            started = time.perf_counter()
            result = app.run(ws, concurrency=args.concurrency, progress=lambda line: None)
            real = time.perf_counter() - started
            after = measure(llm)
            ws.store.remember_model(llm.model, llm.api_base, **after)
            print(f"model facts measured again after the run: {json.dumps(after)}")
        finally:
            ws.close()
        estimate = projected["time_s"]["estimate"]
        print(f"plan: {projected['matches']} matches, {args.words}-word speeches, --concurrency {args.concurrency}; "
              f"run: {result['done']} done, {result['failed']} failed")
        [row] = projected["models"]
        spent = ledger(path)
        print(f"{'':22}{'calls':>8}{'prompt_tokens':>15}{'completion_tokens':>19}")
        print(f"{'projected':22}{row['calls']:>8}{row['prompt_tokens']:>15,}{row['completion_tokens']:>19,}")
        print(f"{'real (ledger)':22}{spent['calls']:>8}{spent['prompt_tokens']:>15,}{spent['completion_tokens']:>19,}")
        print(f"timeouts in the ledger: {spent['timeouts']}")
        print(f"estimate {estimate:.0f} s ({span(estimate)})   real {real:.0f} s ({span(real)})   "
              f"ratio estimate/real {estimate / real:.2f}")
        print(f"(from the facts measured after the run: {rescaled(projected, known, after):.0f} s)")


if __name__ == "__main__":
    main()
