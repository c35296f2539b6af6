"""Judge benchmark: what each judge kind costs per match and how often it finds the stronger side.

On the offline simulator, debaters of planted strengths write the transcripts and each judge
kind (default options) judges the same 40 matches, R = 1. Printed per kind, beside the
`single` judge in the same run: LLM calls and prompt tokens per match, accuracy at naming the
planted-stronger side, and wall time per match on a loopback server with 30 ms latency per
call (scripted verdicts there, so that figure is the kind's call structure, not a model's speed).

Run: .venv/bin/python benchmarks/judges.py
"""
from __future__ import annotations

import asyncio
import os
import random
import sys
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from arena.gateway import offline  # noqa: E402
from arena.workspace.config import LLMSettings  # noqa: E402
from arena.gateway.llm import LLMGateway  # noqa: E402
from arena.gateway.catalog import ModelRef  # noqa: E402
from arena.match.protocol import AgentLog, LLMHandle  # noqa: E402
from arena.domain.records import JudgeSpec, Motion, Speech  # noqa: E402
from arena.match.judging import JudgeView, run_judge  # noqa: E402
from judges.registry import JUDGES  # noqa: E402
from tests.support.fakes.openai_server import FakeOpenAI, Reply  # noqa: E402

KINDS = ("single", "debatrix", "panel", "devils_advocate")
MATCHES = 40
TIMED = 3
ORDER = [("constructive", "pro"), ("constructive", "con"), ("rebuttal", "pro"), ("rebuttal", "con"),
         ("summary", "con"), ("summary", "pro")]
MOTION = Motion("bench", "Cities should ban private cars from their centres", "policy")


def debate(k: int) -> tuple[JudgeView, str]:
    """A simulated debate between strengths a and b; returns the view and the stronger side."""
    rng = random.Random(k)
    pro, con = rng.uniform(-1.5, 1.5), rng.uniform(-1.5, 1.5)
    speeches = tuple(Speech(stage, side, offline.prose(f"Motion: {MOTION.text}\n{k}{stage}{side}",
                                                       pro if side == "pro" else con, rng, 14))
                     for stage, side in ORDER)
    return JudgeView(MOTION, speeches), "pro" if pro > con else "con"


def judge_all(kind: str, gateway: LLMGateway, ref: ModelRef, views) -> tuple[list, AgentLog, float]:
    judge = JUDGES.get(kind)(JudgeSpec(kind, kind, ref.model, ref.api_base, 1, {}))
    log = AgentLog()

    async def each():  # one event loop for all, as `arena run` has
        return [await run_judge(judge, view, LLMHandle(gateway, ref, log, match_id=None), 0) for view in views]

    started = time.perf_counter()
    verdicts = asyncio.run(each())
    return verdicts, log, time.perf_counter() - started


def scripted(body: dict) -> Reply:
    """Any schema's answer, from the simulator's schema filler; prose for free text."""
    schema = (body.get("response_format") or {}).get("json_schema", {}).get("schema")
    text = offline.respond("offline/bench", 0.0, body["messages"], schema=schema, judging=True)[0]
    return Reply(content=text, delay=0.03)


def main() -> None:
    import litellm  # noqa: F401  (imported before timing)

    views = [debate(k) for k in range(MATCHES)]
    offline_gateway = LLMGateway(LLMSettings(cache=False), None)
    rows = {}
    with FakeOpenAI(scripted) as server:
        http_gateway = LLMGateway(LLMSettings(cache=False), None)
        judge_all("single", http_gateway, ModelRef("openai/judge", server.api_base), [views[0][0]])  # warm-up
        for kind in KINDS:
            verdicts, log, _ = judge_all(kind, offline_gateway, ModelRef("offline/judge"), [v for v, _ in views])
            correct = sum(v.overall == truth for v, (_, truth) in zip(verdicts, views))
            calls = sum(u.calls for u in log.usage.values()) / MATCHES
            prompt = sum(u.prompt_tokens for u in log.usage.values()) / MATCHES
            _, _, seconds = judge_all(kind, http_gateway, ModelRef("openai/judge", server.api_base),
                                      [v for v, _ in views[:TIMED]])
            rows[kind] = {"calls": calls, "prompt": prompt, "accuracy": correct / MATCHES,
                          "seconds": seconds / TIMED}
    ref = rows["single"]
    print(f"{'judge kind':16} {'calls/match':>11} {'x single':>8} {'prompt tok/match':>16} {'x single':>8} "
          f"{'accuracy':>8} {'s/match':>8} {'x single':>8}")
    for kind, r in rows.items():
        print(f"{kind:16} {r['calls']:11.1f} {r['calls'] / ref['calls']:8.1f} {r['prompt']:16.0f} "
              f"{r['prompt'] / ref['prompt']:8.1f} {r['accuracy']:8.0%} {r['seconds']:8.2f} "
              f"{r['seconds'] / ref['seconds']:8.1f}")
    print(f"({MATCHES} simulated matches for calls, tokens and accuracy; {TIMED} timed over HTTP)")


if __name__ == "__main__":
    main()
