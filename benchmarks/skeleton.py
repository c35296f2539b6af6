"""Skeleton benchmark: start-up cost, demo wall time, and what the response cache saves.

Each figure is printed beside a reference measured in the same run:
  1. `arena --help` vs `python -c "import litellm"` — the lazy import keeps commands fast;
  2. `arena demo` (60 simulated matches, end to end) vs the one-minute budget;
  3. N gateway calls to a loopback OpenAI-compatible server with 20 ms latency, cold vs
     answered from the workspace cache (a resumed run), and cold on [llm] litellm_path
     "direct" (the default) vs "acompletion".

Run: .venv/bin/python benchmarks/skeleton.py
"""
from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from arena.workspace.config import LLMSettings  # noqa: E402
from arena.gateway.llm import CallTag, LLMGateway  # noqa: E402
from arena.gateway.catalog import ModelRef  # noqa: E402
from arena.store import Store  # noqa: E402
from tests.support.fakes.openai_server import FakeOpenAI, Reply  # noqa: E402

CALLS = 200


def wall(cmd: list[str], repeat: int = 3) -> float:
    """Best-of-repeat wall time of a command, in seconds."""
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True)
        best = min(best, time.perf_counter() - started)
    return best


def gateway_calls(store: Store, api_base: str, path: str = "direct") -> float:
    gateway = LLMGateway(LLMSettings(max_concurrency=16, litellm_path=path), store)
    ref = ModelRef("openai/bench", api_base)

    async def main():
        await asyncio.gather(*(gateway.complete(ref, [{"role": "user", "content": f"prompt {i}"}],
                                                tag=CallTag("writer")) for i in range(CALLS)))

    started = time.perf_counter()
    asyncio.run(main())
    return time.perf_counter() - started


def main() -> None:
    py = sys.executable
    help_s = wall([py, "-m", "arena", "--help"])
    litellm_s = wall([py, "-c", "import litellm"], repeat=2)
    print(f"arena --help          {help_s:6.2f} s   import litellm  {litellm_s:6.2f} s   ratio {litellm_s / help_s:5.1f}x")

    with tempfile.TemporaryDirectory() as tmp:
        demo_s = wall([py, "-m", "arena", "demo", "-w", str(Path(tmp) / "demo")], repeat=1)
    print(f"arena demo (60 games) {demo_s:6.2f} s   budget          {60:6.2f} s   share {demo_s / 60:6.1%}")

    import litellm  # noqa: F401  (imported before timing: the cold figure is the calls alone)

    with tempfile.TemporaryDirectory() as tmp, FakeOpenAI() as server:
        server.responder = lambda body: Reply(content="A speech. " * 50, delay=0.02)
        store = Store(Path(tmp) / "arena.db")
        cold = gateway_calls(store, server.api_base)
        warm = gateway_calls(store, server.api_base)
        assert len(server.requests) == CALLS, "the second pass must come entirely from the cache"
        print(f"{CALLS} calls, cold      {cold:6.2f} s   from cache      {warm:6.2f} s   ratio {cold / warm:5.1f}x"
              f"   (server saw {len(server.requests)} requests)")
        other = gateway_calls(Store(Path(tmp) / "acompletion.db"), server.api_base, "acompletion")
        print(f"{CALLS} calls, cold      {cold:6.2f} s   acompletion     {other:6.2f} s   ratio {other / cold:5.1f}x"
              f"   ([llm] litellm_path direct vs acompletion)")


if __name__ == "__main__":
    main()
