"""Debater cost benchmark: what each framework spends per speech, beside the direct baseline and the paper.

Plays the same two matches (one motion, sides swapped) with every debater configuration — direct, search-baseline,
agent4debate and its three ablations — on a loopback OpenAI-compatible server (30 ms
latency per call) and a loopback Tavily, then prints:
1. per configuration: LLM calls and completion tokens per speech, searches per match, wall time
   per match, and each figure's ratio to the direct baseline in the same run;
2. for agent4debate, per role and stage: calls per speech beside the Agent4Debate paper's Table 8,
   completion tokens per call beside its Table 9, and tokens per speech beside the two multiplied,
   each with its ratio.

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
from collections import defaultdict
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from arena.app.runner.engine import MatchRunner  # noqa: E402
from arena.app.commands import open_workspace  # noqa: E402
from arena.workspace.folder import init_workspace  # noqa: E402
from tests.support.fakes.openai_server import FakeOpenAI, Reply  # noqa: E402
from tests.support.fakes.tavily_server import FakeTavily  # noqa: E402

CONFIGS = {
    "direct": ("direct", ""),
    "search-baseline": ("search-baseline", ""),
    "agent4debate": ("agent4debate", ""),
    "a4d w/o searcher": ("agent4debate", 'agents = ["analyzer", "writer", "reviewer"]'),
    "a4d w/o analyzer": ("agent4debate", 'agents = ["searcher", "writer", "reviewer"]'),
    "a4d w/o reviewer": ("agent4debate", 'agents = ["searcher", "analyzer", "writer"]'),
}
MATCHES = 2  # per configuration: one motion, sides swapped, against a direct sparring partner
STAGES = ("constructive", "rebuttal", "summary")
ROLES = ("searcher", "analyzer", "writer", "reviewer")
# The Agent4Debate paper, appendix: Table 8, interactions (calls) per speech by stage; Table 9, completion tokens
# per utterance (call), over all stages.
PAPER_CALLS = {
    "searcher": {"constructive": 3.4431, "rebuttal": 1.3435, "summary": 1.2559, "overall": 2.1862},
    "analyzer": {"constructive": 1.0036, "rebuttal": 1.0, "summary": 1.0, "overall": 1.0015},
    "writer": {"constructive": 2.4313, "rebuttal": 2.7939, "summary": 3.0932, "overall": 2.7243},
    "reviewer": {"constructive": 2.1682, "rebuttal": 2.5817, "summary": 2.8720, "overall": 2.4888},
}
PAPER_TOKENS = {"searcher": 2182.90, "analyzer": 795.06, "writer": 811.94, "reviewer": 415.57}
# The agents' answers are scripted (see answer), so the figures measure the frameworks' call
# structure and overhead, not any model's verbosity.


def answer(body: dict) -> Reply:
    """Scripted agents: 4 queries per plan (or as many as allowed); a compilation with a 40-word finding per new source; one material
    request whenever allowed (the cap is 1 per speech); a 300-word analysis; a reviewer that notes each checklist
    item, rejects a first draft and approves a revision; a 440-token speech."""
    text = body["messages"][0]["content"]
    schema = (body.get("response_format") or {}).get("json_schema", {}).get("schema", {})
    props = schema.get("properties", {})
    speech = "The evidence shows a clear mechanism and a weighed impact [1]. " * 40
    if "queries" in props:
        content = json.dumps({"queries": [f"query {k} {hash(text) % 997}"
                                           for k in range(min(4, props["queries"]["maxItems"]))]})
    elif "findings" in props:
        numbers = props["findings"]["items"]["properties"]["sources"]["items"]["enum"]
        finding = "The source reports a measured effect of the policy on the population it covers. " * 3
        content = json.dumps({"findings": [{"topic": "Effects", "finding": finding, "bearing": "for us",
                                            "sources": [n]} for n in numbers], "gaps": ["a cost figure"]})
    elif "approve" in props:
        draft = text.split("speech to review:", 1)[1]  # not the transcript, which holds earlier revisions
        items = props["checks"]["items"]["properties"]["item"]["enum"]
        review = {"checks": [{"item": item, "ok": True, "note": "Sound, though the second point could cite "
                                                                 "its figure more precisely."} for item in items],
                  "approve": "Revised." in draft,
                  "feedback": ["Cite the source for the figure in the second paragraph and weigh it explicitly."]}
        if "debate_state" in props:
            review["debate_state"] = {"leading": "even", "reasons": ["Both sides left one main argument unanswered."]}
        content = json.dumps({k: review[k] for k in props})
    elif "material_request" in props:
        request = {"need": "a figure", "query": "a figure"}
        if "point" in props["material_request"]["properties"]:
            request = {"point": "our first argument", **request}
        content = json.dumps({"material_request": request, "speech": ""})
    elif "speech" in props:
        revised = "coach's feedback" in text
        content = json.dumps({"speech": speech + ("Revised." if revised else "")})
    elif "strategist" in text.split("# Knowledge")[0]:
        content = "Definitions, criterion and arguments, each with the evidence it needs. " * 30
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
{"max_requests = 1" if kind == "agent4debate" else ""}
{params}
[[entries]]
name = "sparring"
debater = "direct"
model = "openai/sparring"
api_base = "{llm.api_base}"
''')
    ws = open_workspace(ws_dir)
    ids = ws.store.add_tournament("bench", 0, {}, [("en-policy-001", "subject", "sparring"),
                                                   ("en-policy-001", "sparring", "subject")])
    searches_before = len(tavily.requests)
    started = time.perf_counter()
    for match_id in ids:
        asyncio.run(MatchRunner.of(ws).play_match(ws.store.match(match_id), []))
    elapsed = time.perf_counter() - started
    db = sqlite3.connect(ws_dir / "arena.db")
    speeches: dict[str, int] = defaultdict(int)
    roles: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])  # (role, stage) -> [calls, tokens]
    for stage, agents in db.execute("SELECT s.stage, s.agents FROM speeches s JOIN matches m ON m.id = s.match_id "
                                    "WHERE (s.side = 'pro' AND m.pro = 'subject') "
                                    "OR (s.side = 'con' AND m.con = 'subject')"):
        speeches[stage] += 1
        for role, usage in json.loads(agents).items():
            roles[(role, stage)][0] += usage["calls"]
            roles[(role, stage)][1] += usage["completion_tokens"]
    db.close()
    ws.close()
    total = sum(speeches.values())
    return {"calls": sum(c for c, _ in roles.values()) / total, "tokens": sum(t for _, t in roles.values()) / total,
            "searches": (len(tavily.requests) - searches_before) / MATCHES, "seconds": elapsed / MATCHES,
            "speeches": dict(speeches), "roles": dict(roles)}


def per_role(row: dict) -> list[tuple]:
    """(role, stage, calls/speech, tokens/call, tokens/speech) for each role, by stage and overall."""
    out = []
    for role in ROLES:
        for stage in (*STAGES, "overall"):
            stages = STAGES if stage == "overall" else (stage,)
            calls = sum(row["roles"].get((role, s), (0, 0))[0] for s in stages)
            tokens = sum(row["roles"].get((role, s), (0, 0))[1] for s in stages)
            speeches = sum(row["speeches"][s] for s in stages)
            out.append((role, stage, calls / speeches, tokens / calls if calls else 0.0, tokens / speeches))
    return out


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
    print("\nagent4debate per role and stage, beside the paper (Table 8: calls per speech; Table 9: completion tokens "
          "per call, all stages; per speech: the two multiplied)")
    print(f"{'role':9} {'stage':12} {'calls/speech':>12} {'paper':>6} {'ratio':>6} {'out tok/call':>12} {'paper':>7} "
          f"{'ratio':>6} {'out tok/speech':>14} {'paper':>7} {'ratio':>6}")
    for role, stage, calls, per_call, per_speech in per_role(rows["agent4debate"]):
        paper_calls = PAPER_CALLS[role][stage]
        paper_speech = paper_calls * PAPER_TOKENS[role]
        tokens = (f"{per_call:12.0f} {PAPER_TOKENS[role]:7.0f} {per_call / PAPER_TOKENS[role]:6.2f}"
                  if stage == "overall" else f"{per_call:12.0f} {'':7} {'':6}")
        print(f"{role:9} {stage:12} {calls:12.2f} {paper_calls:6.2f} {calls / paper_calls:6.2f} {tokens} "
              f"{per_speech:14.0f} {paper_speech:7.0f} {per_speech / paper_speech:6.2f}")


if __name__ == "__main__":
    main()
