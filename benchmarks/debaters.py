"""Debater cost benchmark: what each framework spends per speech, beside the direct baseline.

Plays the same two matches (one motion, sides swapped) with every debater configuration — direct, search-baseline,
agent4debate and its three ablations — on a loopback OpenAI-compatible server (30 ms
latency per call) and a loopback Tavily, then prints per configuration: LLM calls and
completion tokens per speech (the shape of the Agent4Debate paper's Tables 8-9), searches
per match, wall time per match, and each figure's ratio to the direct baseline in the same run.

Run: .venv/bin/python benchmarks/debaters.py
"""
from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from arena.app import runner  # noqa: E402

from arena.app.commands import open_workspace  # noqa: E402
from arena.workspace import init_workspace  # noqa: E402
from tests.fakes.openai_server import FakeOpenAI, Reply  # noqa: E402
from tests.fakes.tavily_server import FakeTavily  # noqa: E402

CONFIGS = {
    "direct": ("direct", ""),
    "search-baseline": ("search-baseline", ""),
    "agent4debate": ("agent4debate", ""),
    "a4d w/o searcher": ("agent4debate", 'agents = ["analyzer", "writer", "reviewer"]'),
    "a4d w/o analyzer": ("agent4debate", 'agents = ["searcher", "writer", "reviewer"]'),
    "a4d w/o reviewer": ("agent4debate", 'agents = ["searcher", "analyzer", "writer"]'),
}
MATCHES = 2  # per configuration: one motion, sides swapped, against a direct sparring partner
# The agents' answers are scripted (see answer), so the figures measure the frameworks' call
# structure and overhead, not any model's verbosity.


def answer(body: dict) -> Reply:
    """Scripted agents: 4 queries per plan, one material request whenever allowed (the cap is 1 per
    stage), a reviewer that rejects a first draft and approves a revision, a 440-token speech."""
    text = body["messages"][0]["content"]
    schema = (body.get("response_format") or {}).get("json_schema", {}).get("schema", {})
    props = schema.get("properties", {})
    speech = "The evidence shows a clear mechanism and a weighed impact [1]. " * 40
    if "queries" in props:
        content = json.dumps({"queries": [f"query {k} {hash(text) % 997}" for k in range(4)]})
    elif "approve" in props:
        draft = text.split("speech to review:", 1)[1]  # not the transcript, which holds earlier revisions
        content = json.dumps({"checks": [], "approve": "Revised." in draft, "feedback": ["Cite the second claim."]})
    elif "material_request" in props:
        content = json.dumps({"material_request": {"need": "a figure", "query": "a figure"}, "speech": ""})
    elif "speech" in props:
        revised = "reviewer's feedback" in text
        content = json.dumps({"speech": speech + ("Revised." if revised else "")})
    else:
        content = speech
    return Reply(content=content, delay=0.03)


def play(config: str, kind: str, params: str, llm: FakeOpenAI, tavily: FakeTavily, root: Path) -> dict:
    ws_dir = root / config.replace(" ", "-").replace("/", "")
    init_workspace(ws_dir, f'''
[llm]
cache = false
[search]
api_base_url = "{tavily.base_url}"
[[entries]]
name = "subject"
debater = "{kind}"
model = "openai/subject"
api_base = "{llm.api_base}"
[entries.params]
max_requests = 1
{params}
[[entries]]
name = "sparring"
debater = "direct"
model = "openai/sparring"
api_base = "{llm.api_base}"
'''.replace("max_requests = 1\n", "max_requests = 1\n" if kind == "agent4debate" else ""))
    ws = open_workspace(ws_dir)
    ids = ws.store.add_tournament("bench", 0, {}, [("en-policy-001", "subject", "sparring"),
                                                   ("en-policy-001", "sparring", "subject")])
    searches_before = len(tavily.requests)
    started = time.perf_counter()
    for match_id in ids:
        asyncio.run(runner.Arena.of(ws).play_match(ws.store.match(match_id), []))
    elapsed = time.perf_counter() - started
    db = sqlite3.connect(ws_dir / "arena.db")
    calls = completion = 0
    speeches = 0
    for (agents,) in db.execute("SELECT s.agents FROM speeches s JOIN matches m ON m.id = s.match_id WHERE "
                                "(s.side = 'pro' AND m.pro = 'subject') OR (s.side = 'con' AND m.con = 'subject')"):
        speeches += 1
        for usage in json.loads(agents).values():
            calls += usage["calls"]
            completion += usage["completion_tokens"]
    ws.close()
    return {"calls": calls / speeches, "tokens": completion / speeches,
            "searches": (len(tavily.requests) - searches_before) / MATCHES, "seconds": elapsed / MATCHES}


def main() -> None:
    os.environ["TAVILY_API_KEY"] = "tvly-bench"
    import litellm  # noqa: F401  (imported before timing)

    with tempfile.TemporaryDirectory() as tmp, FakeOpenAI(answer) as llm, FakeTavily() as tavily:
        play("warm-up", "direct", "", llm, tavily, Path(tmp))  # first connections and imports, not measured
        rows = {name: play(name, kind, params, llm, tavily, Path(tmp)) for name, (kind, params) in CONFIGS.items()}
    ref = rows["direct"]
    print(f"{'configuration':18} {'calls/speech':>12} {'x direct':>8} {'out tokens/speech':>17} {'x direct':>8} "
          f"{'searches/match':>14} {'s/match':>8} {'x direct':>8}")
    for name, r in rows.items():
        print(f"{name:18} {r['calls']:12.2f} {r['calls'] / ref['calls']:8.1f} {r['tokens']:17.0f} "
              f"{r['tokens'] / ref['tokens']:8.1f} {r['searches']:14.1f} {r['seconds']:8.2f} "
              f"{r['seconds'] / ref['seconds']:8.1f}")


if __name__ == "__main__":
    main()
