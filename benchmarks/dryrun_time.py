"""How good is the dry run's time? `arena run --dry-run`'s estimate beside the real wall time, on a REAL local model.

SmolLM2-135M-Instruct on the stock llama-cpp-python server (tests/support/local_llm.py starts it; it serves one request
at a time). The plan: two `direct` entries and a `single` judge (R = 1), all on that server, a round robin of
4 matches (two motions, each played with sides swapped). First `arena check` measures the model (slots,
tokens_per_s, prompt_tokens_per_s, latency_s); then `arena run --dry-run` (every match played on the simulator)
and the real `arena run`, both with the run's defaults (4 matches at once, each model sent at most its measured
slots; [llm] timeout_s 120 s and retries as arena.toml's defaults) unless told otherwise. It prints whether every
match was done, the timeouts in the ledger, the estimate, the real time and their ratio, and the projected
tokens beside those the ledger counted.

Speech checks are off (a 135M model often echoes its instructions, and a forfeit ends a match early, which no
projection can foresee), so that what is timed is the plan as projected. The server
runs on one thread by default: on a shared machine llama.cpp's threads wait for one another at every step, so two
of them slow down by more than one when another process takes a core. `arena check` measures again after the run
(the machine's load may have changed meanwhile), and the estimate from those facts is printed too.

Run: LITELLM_LOCAL_MODEL_COST_MAP=True .venv/bin/python benchmarks/dryrun_time.py [--words N] [--concurrency N]
     [--threads N]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from arena.app import commands as app  # noqa: E402
from arena.base.clock import span  # noqa: E402
from tests.support.helpers import entry, judge, new_workspace  # noqa: E402
from tests.support.local_llm import LocalLLM  # noqa: E402
from tests.support.running import round_robin  # noqa: E402


def workspace(path: Path, llm: LocalLLM, words: int) -> Path:
    """Two direct entries and a single judge on the local model, speeches of `words` words: a 4-match round robin."""
    model = {"model": llm.model, "api_base": llm.api_base}
    budgets = {f"words_{stage}": words for stage in ("constructive", "rebuttal", "summary")}
    path = new_workspace(path, arena={"judge_runs": 1, "speech_checks": False},
                         entries=[entry("plain-a", **model, params=budgets),
                                  entry("plain-b", **model, params={"temperature": 0.7, **budgets})],
                         judges=[judge("single", runs=1, **model)])
    return round_robin(path, rounds=2)


def facts(path: Path, llm: LocalLLM) -> dict:
    """The model's facts as `arena check` measures and stores them."""
    ws = app.open_workspace(path)
    try:
        [row] = app.check(ws, ["single"])
        if not row["ok"] or not row["tokens_per_s"]:
            raise SystemExit(f"arena check could not measure the model: {row}")
        return ws.store.model_facts(llm.model, llm.api_base) or {}
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
    parser.add_argument("--concurrency", type=int, default=None,
                        help="matches at once, dry run and run (default: the run's own, slot-respecting)")
    parser.add_argument("--threads", type=int, default=1, help="the server's threads (default 1)")
    args = parser.parse_args()
    with LocalLLM(n_threads=args.threads) as llm, tempfile.TemporaryDirectory(prefix="arena-dryrun-time-") as scratch:
        path = workspace(Path(scratch) / "ws", llm, args.words)
        known = facts(path, llm)
        print("model facts (arena check): " + json.dumps({k: known.get(k) for k in
                                                          ("slots", "tokens_per_s", "prompt_tokens_per_s",
                                                           "latency_s")}))
        ws = app.open_workspace(path)
        try:
            projected = app.dry_run(ws, every=1, concurrency=args.concurrency)
            started = time.perf_counter()
            lines: list[str] = []
            result = app.run(ws, concurrency=args.concurrency, progress=lines.append)
            real = time.perf_counter() - started
        finally:
            ws.close()
        after = facts(path, llm)
        print("model facts measured again after the run: " + json.dumps(
            {k: after.get(k) for k in ("slots", "tokens_per_s", "prompt_tokens_per_s", "latency_s")}))
        estimate = projected["time_s"]["estimate"]
        at_once = args.concurrency or "default"
        print(f"plan: {projected['matches']} matches, {args.words}-word speeches, --concurrency {at_once}; "
              f"run: {result['done']} done, {result['failed']} failed")
        [row] = projected["models"]
        spent = ledger(path)
        print(f"{'':22}{'calls':>8}{'prompt_tokens':>15}{'completion_tokens':>19}")
        print(f"{'projected':22}{row['calls']:>8}{row['prompt_tokens']:>15,}{row['completion_tokens']:>19,}")
        print(f"{'real (ledger)':22}{spent['calls']:>8}{spent['prompt_tokens']:>15,}{spent['completion_tokens']:>19,}")
        print(f"timeouts in the ledger: {spent['timeouts']}")
        print(f"the run's last progress line: {lines[-1] if lines else '-'}")
        print(f"estimate {estimate:.0f} s ({span(estimate)})   real {real:.0f} s ({span(real)})   "
              f"ratio estimate/real {estimate / real:.2f}")
        print(f"(from the facts measured after the run: {rescaled(projected, known, after):.0f} s)")


if __name__ == "__main__":
    main()
