"""Runner benchmark: do matches played at once take no longer than one match alone?

A loopback OpenAI-compatible server, in its own process so that it takes no CPU time from the
runner's event loop, answers every LLM call after a fixed latency. Entries are `direct`
debaters and the judge a `single` judge with R = 1, all on `openai/gpt-4o-mini` (litellm
prices it, so the ledger has a cost) reached over real HTTP; the cache is off and every match
has its own motion, so every call goes to the server. For each latency, printed: the wall time
of 1 match at --concurrency 1 and of 12 matches at --concurrency 12 (best of 3 each, as other
work on the machine only ever adds time), their ratio (target: at most 1.5), calls per second,
and the runner process's CPU time per call; beside them, as the reference, the same ratio for
bare litellm calls in a match's shape (2 in parallel, then 5 in a row) with no arena code at
all; then the ledger's totals (calls, tokens, cost) of a 12-match run.

Run: .venv/bin/python benchmarks/runner.py [LATENCY_S ...]   (default: 0.1 0.5)
"""
from __future__ import annotations

import asyncio
import multiprocessing
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from arena.app import runner  # noqa: E402

from arena.app.commands import open_workspace  # noqa: E402
from arena.workspace import init_workspace  # noqa: E402

MATCHES = 12
ENTRIES = ("ash", "birch", "cedar", "daisy")  # 6 pairs, each with sides swapped: 12 matches


def serve(latency, ports, stop) -> None:
    """The fake server's process: answer with a speech or a verdict after latency.value seconds."""
    from tests.fakes.openai_server import FakeOpenAI, Reply
    from tests.helpers import debate_responder

    answer = debate_responder()
    with FakeOpenAI(lambda body: Reply(content=answer(body), delay=latency.value)) as server:
        ports.put(server.api_base)
        stop.wait()


def workspace(path: Path, api_base: str, matches: list[tuple[str, str]]):
    """A workspace with ENTRIES on the fake server, the cache off, and `matches` (pro, con) each on its own motion."""
    toml = ["[arena]", "judge_runs = 1", "[llm]", "cache = false", "max_concurrency = 64",
            "[search]", 'provider = "offline"']
    for k, name in enumerate(ENTRIES):
        toml += ["[[entries]]", f'name = "{name}"', 'debater = "direct"', 'model = "openai/gpt-4o-mini"',
                 f'api_base = "{api_base}"', "[entries.params]", f"temperature = {0.1 * (k + 1):.1f}"]
    toml += ["[[judges]]", 'name = "judge"', 'kind = "single"', 'model = "openai/gpt-4o-mini"',
             f'api_base = "{api_base}"']
    init_workspace(path, "\n".join(toml) + "\n")
    ws = open_workspace(path)
    motions = ws.store.motion_ids()
    ws.store.add_tournament("bench", 0, {}, [(motions[k], pro, con) for k, (pro, con) in enumerate(matches)])
    return ws


def timed(path: Path, api_base: str, matches: list[tuple[str, str]], concurrency: int) -> tuple[float, float, dict]:
    """(wall seconds, CPU seconds of this process, ledger totals) of one `arena run` of `matches`."""
    ws = workspace(path, api_base, matches)
    try:
        wall, cpu = time.perf_counter(), time.process_time()
        result = runner.run(ws, concurrency=concurrency, progress=lambda line: None)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        assert result["done"] == len(matches), result
        row = ws.store.conn.execute("SELECT COUNT(*), SUM(prompt_tokens), SUM(completion_tokens), SUM(cost), "
                                    "COUNT(error) FROM calls WHERE kind = 'llm'").fetchone()
        return wall, cpu, dict(zip(("calls", "prompt_tokens", "completion_tokens", "cost", "errors"), row))
    finally:
        ws.close()


def bare(api_base: str, matches: int) -> float:
    """Wall time of litellm alone making `matches` matches' worth of calls: 2 in parallel, then 5 in a row."""
    import litellm

    async def call(match: int, k: int):
        return await litellm.acompletion(model="openai/gpt-4o-mini", api_base=api_base, api_key="no-key-needed",
                                         messages=[{"role": "user", "content": f"Match {match}, call {k}: you are speaking for the "
                                                                                f"PRO side. This is your constructive speech."}],
                                         num_retries=0, max_retries=0)

    async def match(m: int):
        await asyncio.gather(call(m, 0), call(m, 1))
        for k in range(2, 7):
            await call(m, k)

    async def all_matches():
        await asyncio.gather(*(match(m) for m in range(matches)))

    started = time.perf_counter()
    asyncio.run(all_matches())
    return time.perf_counter() - started


def main() -> None:
    latencies = [float(a) for a in sys.argv[1:]] or [0.1, 0.5]
    pairs = [(a, b) for i, a in enumerate(ENTRIES) for b in ENTRIES[i + 1:]]
    plan = [m for a, b in pairs for m in ((a, b), (b, a))][:MATCHES]
    latency, ports, stop = multiprocessing.Value("d", 0.0), multiprocessing.Queue(), multiprocessing.Event()
    server = multiprocessing.Process(target=serve, args=(latency, ports, stop), daemon=True)
    server.start()
    rows = []
    try:
        api_base = ports.get(timeout=60)
        with tempfile.TemporaryDirectory() as scratch:
            root = Path(scratch)
            timed(root / "warm-up", api_base, plan[:1], 1)  # litellm's import and first-call set-up
            for k, seconds in enumerate(latencies):
                latency.value = seconds
                one = min(timed(root / f"one-{k}-{r}", api_base, plan[:1], 1)[0] for r in range(3))
                many = [timed(root / f"many-{k}-{r}", api_base, plan, MATCHES) for r in range(3)]
                wall, cpu, ledger = min(many, key=lambda m: m[0])
                reference = min(bare(api_base, MATCHES) for _ in range(3)) / min(bare(api_base, 1) for _ in range(3))
                rows.append((seconds, one, wall, cpu, ledger, reference))
    finally:
        stop.set()
        server.join(timeout=10)
    print(f"{'latency':>8} {'1 match':>8} {MATCHES:>3} matches {'ratio':>6} {'calls/s':>8} {'CPU ms/call':>11} "
          f"{'bare litellm ratio':>18}")
    for seconds, one, wall, cpu, ledger, reference in rows:
        print(f"{seconds * 1000:6.0f}ms {one:7.2f}s {wall:10.2f}s {wall / one:5.2f}x {ledger['calls'] / wall:8.1f} "
              f"{cpu / ledger['calls'] * 1000:11.1f} {reference:17.2f}x")
    print(f"(1 match at --concurrency 1, {MATCHES} at --concurrency {MATCHES}; target ratio at most 1.5x)")
    print(f"ledger of a {MATCHES}-match run: {ledger['calls']} calls ({ledger['errors']} errors), "
          f"{ledger['prompt_tokens']} prompt + {ledger['completion_tokens']} completion tokens, ${ledger['cost']:.6f}")


if __name__ == "__main__":
    main()
