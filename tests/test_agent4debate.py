"""Agent4Debate against the loopback LLM and Tavily servers: who is called, with what, and when."""
from __future__ import annotations

import asyncio
import json
import re

import pytest

from arena.app import runner

from arena.app.commands import open_workspace
from arena.workspace import init_workspace
from tests.fakes.tavily_server import default_results

STAGES = ("constructive", "rebuttal", "summary")
ROLE_OF = {"research lead": "searcher", "strategist": "analyzer", "speaker of a competitive debate team": "writer",
           "coach of a competitive debate team": "reviewer"}


def role_stage_side(body: dict) -> tuple[str, str, str]:
    """Read an agent request's role, stage and side off the prompt the debater rendered."""
    text = body["messages"][0]["content"]
    profile = text.split("# Knowledge")[0]
    role = next((r for phrase, r in ROLE_OF.items() if phrase in profile), "other")
    stage = re.search(r"^Current stage: (\w+)", text, re.MULTILINE)
    side = re.search(r"^Your team: (PRO|CON)", text, re.MULTILINE)
    if stage is None:  # the direct baseline's prompt
        stage = re.search(r"This is your (\w+) speech", text)
        side = re.search(r"speaking for the (PRO|CON) side", text)
        role = "direct" if stage else ("judge" if body.get("response_format") else "other")
    return role, stage.group(1) if stage else "", side.group(1).lower() if side else ""


class Script:
    """A scripted team: what each agent answers, and a log of who was asked what."""

    def __init__(self, *, approve_after: int = 0, requests: dict | None = None, cite=(1, 2, 99)):
        self.approve_after = approve_after  # reviews that reject before one approves
        self.requests = requests or {}  # (stage, side) -> number of material requests the writer makes
        self.cite = cite
        self.calls: list[tuple[str, str, str]] = []
        self.reviews: dict[tuple[str, str], int] = {}
        self.asked: dict[tuple[str, str], int] = {}
        self.searches: dict[tuple[str, str], int] = {}
        self.drafts: dict[tuple[str, str], int] = {}

    def __call__(self, body: dict) -> str:
        role, stage, side = key = role_stage_side(body)
        self.calls.append(key)
        if role == "searcher":
            n = self.searches[(stage, side)] = self.searches.get((stage, side), 0) + 1
            suffix = f" #{n}" if n > 1 else ""  # distinct queries, so a second request is not a cache hit
            return json.dumps({"queries": [f"{side} {stage} evidence one{suffix}",
                                           f"{side} {stage} evidence two{suffix}"]})
        if role == "analyzer":
            return f"PLAN<{side}|{stage}> Definitions, criterion, arguments."
        if role == "writer":
            properties = body["response_format"]["json_schema"]["schema"]["properties"]
            if "material_request" in properties and self.asked.get((stage, side), 0) < self.requests.get(
                    (stage, side), 0):
                self.asked[(stage, side)] = self.asked.get((stage, side), 0) + 1
                return json.dumps({"material_request": {"need": "a cost figure", "query": f"{side} cost figure"},
                                   "speech": ""})
            citations = " ".join(f"[{n}]" for n in self.cite)
            n = self.drafts[(stage, side)] = self.drafts.get((stage, side), 0) + 1
            speech = f"SPEECH<{side}|{stage}> Draft {n}: our case stands {citations}."
            return json.dumps({"material_request": None, "speech": speech} if "material_request" in properties
                              else {"speech": speech})
        if role == "reviewer":
            done = self.reviews.get((stage, side), 0)
            self.reviews[(stage, side)] = done + 1
            approve = done >= self.approve_after
            return json.dumps({"checks": [{"item": "structure", "ok": approve, "note": "checked"}],
                               "approve": approve, "feedback": [] if approve else ["Cite [2] for the cost."]})
        if role == "judge":
            return json.dumps({"rationale": "close", "argument": "pro", "source": "pro", "language": "tie",
                               "overall": "pro"})
        citations = " ".join(f"[{n}]" for n in self.cite)
        return f"DIRECT<{side}|{stage}> A plain speech {citations}."


def make_workspace(tmp_path, fake_llm, fake_tavily, monkeypatch, *, params: str = "", language: str = "en"):
    monkeypatch.setenv("TAVILY_API_KEY", "tvly-test")
    base = fake_llm.api_base
    init_workspace(tmp_path / "ws", f'''
[arena]
language = "{language}"
judge_runs = 1
[llm]
backoff_s = 0.01
[search]
provider = "tavily"
api_base_url = "{fake_tavily.base_url}"
max_results = 3
[motions]
sets = ["builtin:{language}"]
[[entries]]
name = "a4d"
debater = "agent4debate"
model = "openai/a4d"
api_base = "{base}"
[entries.params]
{params}
[[entries]]
name = "base"
debater = "direct"
model = "openai/base"
api_base = "{base}"
[[entries]]
name = "sb"
debater = "search-baseline"
model = "openai/sb"
api_base = "{base}"
[[judges]]
name = "j"
kind = "single"
model = "openai/judge"
api_base = "{base}"
''')
    return open_workspace(tmp_path / "ws")


def play(ws, motion_id: str = "en-policy-001", pro: str = "a4d", con: str = "base"):
    (match_id,) = ws.store.add_tournament("single", 0, {}, [(motion_id, pro, con)])
    arena = runner.Arena.of(ws)
    asyncio.run(arena.play_match(ws.store.match(match_id), list(ws.config.judges)))
    return ws.store.match(match_id)


def calls_of(script: Script, side: str = "pro") -> dict[str, list[str]]:
    """Per stage, the roles called for one side, in order."""
    out: dict[str, list[str]] = {s: [] for s in STAGES}
    for role, stage, s in script.calls:
        if s == side and stage:
            out[stage].append(role)
    return out


def test_role_sequence_per_stage(tmp_path, fake_llm, fake_tavily, monkeypatch):
    script = Script(approve_after=0)
    fake_llm.responder = script
    match = play(make_workspace(tmp_path, fake_llm, fake_tavily, monkeypatch))
    assert calls_of(script) == {
        "constructive": ["searcher", "analyzer", "writer", "reviewer"],
        "rebuttal": ["analyzer", "writer", "reviewer"],  # no search unless the writer asks
        "summary": ["analyzer", "writer", "reviewer"],
    }
    assert calls_of(script, "con") == {s: ["direct"] for s in STAGES}
    # Stage 1 research ran the Searcher's two planned queries through Tavily, once each.
    assert sorted(r.body["query"] for r in fake_tavily.requests) == ["pro constructive evidence one",
                                                                    "pro constructive evidence two"]
    assert all(r.body["max_results"] == 3 for r in fake_tavily.requests)
    pro = [s for s in match.speeches if s.side == "pro"]
    assert [sorted(s.agents) for s in pro] == [["analyzer", "reviewer", "searcher", "writer"],
                                              ["analyzer", "reviewer", "writer"], ["analyzer", "reviewer", "writer"]]
    assert pro[0].agents["searcher"].calls == 1 and pro[0].agents["writer"].completion_tokens > 0


def test_the_searcher_works_in_later_stages_only_when_the_writer_asks(tmp_path, fake_llm, fake_tavily, monkeypatch):
    script = Script(requests={("rebuttal", "pro"): 5})  # asks more than the cap allows
    fake_llm.responder = script
    play(make_workspace(tmp_path, fake_llm, fake_tavily, monkeypatch, params="max_requests = 2"))
    assert calls_of(script)["rebuttal"] == ["analyzer", "writer", "searcher", "writer", "searcher", "writer",
                                            "reviewer"]
    assert calls_of(script)["summary"] == ["analyzer", "writer", "reviewer"]
    searched = [r.body["query"] for r in fake_tavily.requests]
    # Each request's queries run concurrently, so only the pairs are ordered.
    assert sorted(searched[2:4]) == ["pro rebuttal evidence one", "pro rebuttal evidence two"]
    assert sorted(searched[4:]) == ["pro rebuttal evidence one #2", "pro rebuttal evidence two #2"]
    # The passive searcher was told what the writer needs; the third writer call had no way to ask again.
    searcher_prompts = [r.body["messages"][0]["content"] for r in fake_llm.requests
                        if role_stage_side(r.body) == ("searcher", "rebuttal", "pro")]
    assert all("a cost figure" in p and "pro cost figure" in p for p in searcher_prompts)
    writer_schemas = [r.body["response_format"]["json_schema"]["schema"]["properties"] for r in fake_llm.requests
                      if role_stage_side(r.body)[:3] == ("writer", "rebuttal", "pro")]
    assert ["material_request" in p for p in writer_schemas] == [True, True, False]


def test_the_review_loop_stops_at_max_reviews(tmp_path, fake_llm, fake_tavily, monkeypatch):
    script = Script(approve_after=100)  # never approves
    fake_llm.responder = script
    play(make_workspace(tmp_path, fake_llm, fake_tavily, monkeypatch, params="max_reviews = 2"))
    assert calls_of(script)["summary"] == ["analyzer", "writer", "reviewer", "writer", "reviewer", "writer"]
    revision = [r.body["messages"][0]["content"] for r in fake_llm.requests
                if role_stage_side(r.body) == ("writer", "summary", "pro")][1]
    assert "Cite [2] for the cost." in revision and "SPEECH<pro|summary>" in revision  # feedback and the draft


def test_a_review_that_approves_ends_the_loop(tmp_path, fake_llm, fake_tavily, monkeypatch):
    script = Script(approve_after=1)
    fake_llm.responder = script
    play(make_workspace(tmp_path, fake_llm, fake_tavily, monkeypatch))
    assert calls_of(script)["constructive"] == ["searcher", "analyzer", "writer", "reviewer", "writer", "reviewer"]


def test_references_are_the_cited_sources_from_search_results(tmp_path, fake_llm, fake_tavily, monkeypatch):
    fake_llm.responder = Script(cite=(4, 2, 99, 4))
    match = play(make_workspace(tmp_path, fake_llm, fake_tavily, monkeypatch))
    constructive = match.speeches[0]
    returned = {res["url"]: res["title"] for r in fake_tavily.requests
                for res in default_results(r.body["query"], r.body)}
    # The base numbers results in the Searcher's query order: [1]-[3] from query one, [4]-[6] from two.
    # The speech cites [4] and [2]; [99] does not exist.
    urls = [ref.url for ref in constructive.references]
    assert re.search(r"/pro-constructive-evidence-two/\w+/1$", urls[0])
    assert re.search(r"/pro-constructive-evidence-one/\w+/2$", urls[1])
    assert len(urls) == 2
    assert all(returned[ref.url] == ref.title for ref in constructive.references)
    # Citations are renumbered to the speech's own reference list, and the unknown one is gone.
    assert "stands [1] [2] [1]." in constructive.text and "[99]" not in constructive.text
    assert "[4]" not in constructive.text


def test_ablations_skip_the_right_agents(tmp_path, fake_llm, fake_tavily, monkeypatch):
    expected = {
        '["analyzer", "writer", "reviewer"]': ["analyzer", "writer", "reviewer"],
        '["searcher", "writer", "reviewer"]': ["searcher", "writer", "reviewer"],
        '["searcher", "analyzer", "writer"]': ["searcher", "analyzer", "writer"],
        '["writer"]': ["writer"],
    }
    for k, (agents, roles) in enumerate(expected.items()):
        script = Script()
        fake_llm.responder = script
        before = len(fake_tavily.requests)
        match = play(make_workspace(tmp_path / str(k), fake_llm, fake_tavily, monkeypatch,
                                    params=f"agents = {agents}"))
        assert calls_of(script)["constructive"] == roles, agents
        assert (len(fake_tavily.requests) > before) == ("searcher" in roles)
        if "searcher" not in roles:
            assert match.speeches[0].references == ()  # nothing to cite without research


def test_a_side_never_sees_the_other_sides_research(tmp_path, fake_llm, fake_tavily, monkeypatch):
    script = Script(cite=())  # nobody cites, so no source becomes public through a speech
    fake_llm.responder = script
    ws = make_workspace(tmp_path, fake_llm, fake_tavily, monkeypatch)
    (match_id,) = ws.store.add_tournament("single", 0, {}, [("en-policy-001", "a4d", "a4d")])
    asyncio.run(runner.Arena.of(ws).play_match(ws.store.match(match_id), []))
    for r in fake_llm.requests:
        role, stage, side = role_stage_side(r.body)
        other = "con" if side == "pro" else "pro"
        text = r.body["messages"][0]["content"]
        assert f"{other} constructive evidence" not in text, (role, stage, side)
        assert f"PLAN<{other}" not in text  # the other side's analysis is private too
        if stage == "constructive":
            assert f"SPEECH<{other}" not in text
    # Each side's own base persists into later stages.
    pro_summary = next(r.body["messages"][0]["content"] for r in fake_llm.requests
                       if role_stage_side(r.body) == ("writer", "summary", "pro"))
    assert "pro constructive evidence one" in pro_summary


def test_a_chinese_motion_is_debated_in_chinese(tmp_path, fake_llm, fake_tavily, monkeypatch):
    fake_llm.responder = Script()
    ws = make_workspace(tmp_path, fake_llm, fake_tavily, monkeypatch, language="zh")
    motion = ws.store.motion("zh-policy-001")
    play(ws, motion_id=motion.id)
    prompts = [r.body["messages"][0]["content"] for r in fake_llm.requests if role_stage_side(r.body)[0] != "judge"]
    assert prompts and all(f"Motion: {motion.text}" in p for p in prompts)
    assert all("Write in Simplified Chinese" in p for p in prompts)


@pytest.mark.parametrize("params, fragment", [
    ('agents = ["searcher", "analyzer"]', "includes writer"),
    ("max_reviews = -1", "from 0 to 10"),
    ('search_depth = "deep"', "'basic' or 'advanced'"),
    ("top_p = 2", "from 0 to 1"),
])
def test_bad_params_are_rejected_before_anything_runs(tmp_path, fake_llm, fake_tavily, monkeypatch, params, fragment):
    from arena.errors import UserError

    with pytest.raises(UserError, match=re.escape(fragment)):
        make_workspace(tmp_path, fake_llm, fake_tavily, monkeypatch, params=params)
    assert fake_llm.requests == []


@pytest.mark.parametrize("baseline", ["base", "sb"])
def test_match_play_runs_agent4debate_against_a_baseline_end_to_end(tmp_path, fake_llm, fake_tavily, monkeypatch,
                                                                    baseline):
    from click.testing import CliRunner

    from arena.app.cli import main

    fake_llm.responder = Script(cite=(1, 5))
    ws = make_workspace(tmp_path, fake_llm, fake_tavily, monkeypatch)
    ws.close()
    args = ["match", "play", "--motion", "en-policy-001", "--pro", "a4d", "--con", baseline, "-w", str(ws.path)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "constructive · pro · searcher" in result.output and "summary · pro · reviewer" in result.output
    shown = json.loads(CliRunner().invoke(main, ["match", "show", "m00001", "-w", str(ws.path),
                                                 "--format", "json"]).output)
    assert shown["status"] == "done" and shown["simulated"] is False and shown["score"] == {"pro": 1.0, "con": 0.0}
    pro = [s for s in shown["speeches"] if s["side"] == "pro"]
    assert set(pro[0]["agents"]) == {"searcher", "analyzer", "writer", "reviewer"}
    assert all(u["calls"] >= 1 and u["prompt_tokens"] > 0 for u in pro[0]["agents"].values())
    assert len(pro[0]["references"]) == 2 and all(r["url"].startswith("https://example.org/")
                                                  for r in pro[0]["references"])
    con = [s for s in shown["speeches"] if s["side"] == "con"]
    assert all(set(s["agents"]) == {"writer"} for s in con)
    # The search baseline searched once, on the motion, and cites from that; the direct one never searches.
    motion_searches = [r for r in fake_tavily.requests if r.body["query"] == shown["motion"]["text"]]
    assert len(motion_searches) == (1 if baseline == "sb" else 0)
    if baseline == "sb":
        assert [len(s["references"]) for s in con] == [1, 1, 1]  # [1] exists, [5] does not (3 results)
