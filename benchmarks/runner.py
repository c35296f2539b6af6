"""Runner benchmark: CPU per LLM call, calls per second, and whether 12 matches at once take little longer
than one, at 0.1 and 0.25 s per call, with 1 and 2 worker processes.

A loopback OpenAI-compatible server, in its own process so that it takes no CPU time from the
arena, answers every call after a fixed latency, with a minimal valid instance of the request's
JSON schema (or a ~150-word speech for free text). Four `agent4debate` entries (max_reviews 1)
play round-robin matches, each on its own motion, judged by a `debatrix` judge with R = 3, all on
`openai/gpt-4o-mini` (litellm prices it, so every call is costed) over real HTTP; search is the
offline simulator's, the cache is off, max_concurrency is 256 (so no call waits for a slot), and the
models count as checked, so no probe is sent.

For each latency, printed side by side:
- wall time of 1 match alone (--concurrency 1);
- for 12 matches at --concurrency 12 with 1 and with 2 workers: wall time, its ratio to the one
  match (target: at most 1.3 with 2 workers at 0.25 s), LLM calls per second, and CPU ms per
  call spent playing (every process; start-up, i.e. imports, not included: printed apart);
  with `[llm] litellm_path = "direct"` (the default) and, for comparison, "acompletion";
- the references, in the same run: bare `litellm.acompletion`, and bare `arena.gateway.wire.send` on the
  direct path, each replaying the very requests of the 12-match run (same bodies, same count) with
  as many in flight as the arena had on average: CPU ms per call, and the arena's CPU per call as
  a multiple of bare acompletion's.

Run: .venv/bin/python benchmarks/runner.py [LATENCY_S ...]   (default: 0.1 0.25)
"""
from __future__ import annotations

import asyncio
import json
import multiprocessing
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from arena.app.runner import runs  # noqa: E402
from arena.app.commands import open_workspace  # noqa: E402
from arena.workspace.folder import init_workspace  # noqa: E402
from tests.support.helpers import requested_schema, schema_instance  # noqa: E402

MATCHES = 12
ENTRIES = ("ash", "birch", "cedar", "daisy")  # 6 pairs, each with sides swapped: 12 matches
MODEL = "openai/gpt-4o-mini"
SPEECH = ("We hold that the motion stands: the mechanism we describe delivers the benefit at the lowest cost, "
          "and the other side has offered no credible alternative. ") * 6


def text(key: str) -> str:
    return SPEECH if key == "speech" else f"{key or 'text'}: PRO was clearer on the main clash."


def answer(body: dict) -> str:
    """A minimal valid instance of the request's schema, speeches in full; free text: a speech."""
    schema = requested_schema(body)
    return json.dumps(schema_instance(schema, text=text)) if schema else SPEECH


def serve(latency, ports, commands, bodies) -> None:
    """The server's process: answer after latency.value seconds; on "bodies", hand over the bodies so far."""
    from tests.support.fakes.openai_server import FakeOpenAI, Reply

    with FakeOpenAI(lambda body: Reply(content=answer(body), delay=latency.value)) as server:
        ports.put(server.api_base)
        while commands.get() != "stop":
            bodies.put(server.bodies)
            server.clear()


def workspace(path: Path, api_base: str, matches: int, litellm_path: str):
    toml = ["[arena]", "judge_runs = 3", "[llm]", "cache = false", "max_concurrency = 256",
            f'litellm_path = "{litellm_path}"',
            "[search]", 'provider = "offline"']
    for k, name in enumerate(ENTRIES):
        toml += ["[[entries]]", f'name = "{name}"', 'debater = "agent4debate"', f'model = "{MODEL}"',
                 f'api_base = "{api_base}"', "[entries.params]", f"temperature = {0.1 * (k + 1):.1f}",
                 "max_reviews = 1"]
    toml += ["[[judges]]", 'name = "debatrix"', 'kind = "debatrix"', f'model = "{MODEL}"', f'api_base = "{api_base}"']
    init_workspace(path, "\n".join(toml) + "\n")
    ws = open_workspace(path)
    for name in {MODEL}:  # as after `arena check`: the measured run sends no probe
        ws.store.remember_model(name, api_base, ok=True, structured="json_schema")
    pairs = [(a, b) for i, a in enumerate(ENTRIES) for b in ENTRIES[i + 1:]]
    plan = [m for a, b in pairs for m in ((a, b), (b, a))][:matches]
    motions = ws.store.motion_ids()
    ws.store.add_tournament("bench", 0, {}, [(motions[k], pro, con) for k, (pro, con) in enumerate(plan)])
    return ws


def timed(path: Path, api_base: str, matches: int, concurrency: int, workers: int,
          litellm_path: str = "direct") -> dict:
    """One run: wall seconds, CPU seconds playing, LLM calls; every match must be done."""
    ws = workspace(path, api_base, matches, litellm_path)
    try:
        wall = time.perf_counter()
        result = runs.run(ws, concurrency=concurrency, workers=workers, progress=lambda line: None)
        wall = time.perf_counter() - wall
        assert result["done"] == matches, result
        calls, errors = ws.store.conn.execute("SELECT COUNT(*), COUNT(error) FROM calls WHERE kind = 'llm'").fetchone()
        assert errors == 0, errors
        return {"wall": wall, "cpu": result["cpu_s"], "calls": calls}
    finally:
        ws.close()


def bare(api_base: str, bodies: list[dict], in_flight: int, path: str) -> dict:
    """One path alone replaying bodies, in_flight at a time: wall and CPU seconds, calls.
    "acompletion": litellm.acompletion as a user would call it; "direct": arena.gateway.wire.send."""
    import litellm

    from arena.gateway.wire import send

    async def call(body: dict, gate: asyncio.Semaphore) -> None:
        extra = {k: body[k] for k in ("max_tokens", "temperature", "top_p", "response_format") if k in body}
        async with gate:
            if path == "direct":
                await send(f"openai/{body['model']}", body["messages"], extra, api_base=api_base, timeout_s=60)
            else:
                await litellm.acompletion(model=f"openai/{body['model']}", api_base=api_base,
                                          api_key="no-key-needed", messages=body["messages"], num_retries=0,
                                          max_retries=0, **extra)

    async def replay() -> None:
        gate = asyncio.Semaphore(in_flight)
        await asyncio.gather(*(call(body, gate) for body in bodies))

    wall, cpu = time.perf_counter(), time.process_time()
    asyncio.run(replay())
    return {"wall": time.perf_counter() - wall, "cpu": time.process_time() - cpu, "calls": len(bodies)}


def start_up_cpu() -> float:
    """CPU seconds a worker spends before it plays: a fresh interpreter importing arena and litellm."""
    import resource
    import subprocess

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-c", "import arena.app.runner.workers, arena.app.commands, litellm"], check=True,
                   env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])})
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def main() -> None:
    latencies = [float(a) for a in sys.argv[1:]] or [0.1, 0.25]
    latency, ports, commands, bodies = (multiprocessing.Value("d", 0.0), multiprocessing.Queue(),
                                        multiprocessing.Queue(), multiprocessing.Queue())
    server = multiprocessing.Process(target=serve, args=(latency, ports, commands, bodies), daemon=True)
    server.start()
    rows = []
    try:
        api_base = ports.get(timeout=60)

        def recorded() -> list[dict]:
            commands.put("bodies")
            return bodies.get(timeout=60)

        with tempfile.TemporaryDirectory() as scratch:
            root = Path(scratch)
            timed(root / "warm-up", api_base, 1, 1, 1)
            timed(root / "warm-up-acompletion", api_base, 1, 1, 1, "acompletion")  # litellm's import and first-call set-up
            for k, seconds in enumerate(latencies):
                latency.value = seconds
                one = min(timed(root / f"one-{k}-{r}", api_base, 1, 1, 1)["wall"] for r in range(2))
                runs = {}
                for path, workers in (("direct", 1), ("direct", 2), ("acompletion", 1), ("acompletion", 2)):
                    recorded()  # forget earlier requests
                    runs[path, workers] = timed(root / f"many-{k}-{path}-{workers}", api_base, MATCHES, MATCHES,
                                                workers, path)
                    sent = recorded()
                    assert len(sent) == runs[path, workers]["calls"], (len(sent), runs[path, workers]["calls"])
                first = runs["direct", 1]
                mean_in_flight = max(1, round(first["calls"] * seconds / first["wall"]))
                references = {path: bare(api_base, sent, mean_in_flight, path) for path in ("acompletion", "direct")}
                rows.append((seconds, one, runs, references, mean_in_flight))
    finally:
        commands.put("stop")
        server.join(timeout=10)
    start_up = start_up_cpu()

    print(f"{MATCHES} agent4debate matches (max_reviews 1), debatrix judge R = 3, {MODEL} on a loopback server")
    print(f"{'latency':>8} {'1 match':>8} {'litellm_path':>12} {'workers':>7} {MATCHES:>3} matches {'ratio':>6} "
          f"{'calls':>6} {'calls/s':>8} {'CPU ms/call':>11} {'bare acompletion':>16} {'arena/bare':>10}")
    for seconds, one, runs, references, in_flight in rows:
        bare_ms = references["acompletion"]["cpu"] / references["acompletion"]["calls"] * 1000
        for (path, workers), r in runs.items():
            ms = r["cpu"] / r["calls"] * 1000
            print(f"{seconds * 1000:6.0f}ms {one:7.2f}s {path:>12} {workers:7d} {r['wall']:10.2f}s "
                  f"{r['wall'] / one:5.2f}x {r['calls']:6d} {r['calls'] / r['wall']:8.1f} {ms:11.2f} "
                  f"{bare_ms:15.2f} {ms / bare_ms:9.2f}x")
        for path, reference in references.items():
            print(f"{'':>8} bare {path} replay: {reference['calls']} calls, {in_flight} in flight, "
                  f"{reference['wall']:.2f}s, {reference['calls'] / reference['wall']:.1f} calls/s, "
                  f"{reference['cpu'] / reference['calls'] * 1000:.2f} CPU ms/call")
    print(f"(1 match at --concurrency 1; {MATCHES} at --concurrency {MATCHES}; target: ratio at most 1.3x with 2 "
          f"workers at 250 ms, CPU at most 8 ms per call)")
    print(f"start-up CPU per worker process (imports; not in CPU ms/call above): {start_up:.2f}s")


if __name__ == "__main__":
    main()
