"""Agent4Debate against the loopback LLM and Tavily servers: who is called, with what, and when."""
from __future__ import annotations

import asyncio
import json
import re

import pytest

from arena.app.runner.engine import MatchRunner
from tests.support.fakes.tavily_server import default_results
from tests.support.helpers import invoke
from tests.support.teams import STAGES, ChineseScript, Script, make_workspace, play, properties, role_stage_side

def calls_of(script: Script, side: str = "pro") -> dict[str, list[str]]:
    """Per stage, the roles called for one side, in order."""
    out: dict[str, list[str]] = {s: [] for s in STAGES}
    for role, stage, s in script.calls:
        if s == side and stage:
            out[stage].append(role)
    return out


def requests_of(fake_llm, role: str, stage: str, side: str = "pro") -> list[dict]:
    return [r.body for r in fake_llm.requests if role_stage_side(r.body) == (role, stage, side)]


def prompts_of(fake_llm, role: str, stage: str, side: str = "pro") -> list[str]:
    return [body["messages"][0]["content"] for body in requests_of(fake_llm, role, stage, side)]


ROUND = ["searcher", "searcher"]  # a research round: the Searcher plans queries, then compiles what they found


def test_role_sequence_per_stage(tmp_path, fake_llm, fake_tavily, monkeypatch):
    script = Script(approve_after=0)
    fake_llm.responder = script
    match = play(make_workspace(tmp_path, fake_llm, fake_tavily, monkeypatch))
    assert calls_of(script) == {
        "constructive": [*ROUND, "analyzer", "writer", "reviewer"],
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
    assert pro[0].agents["searcher"].calls == 2 and pro[0].agents["writer"].completion_tokens > 0


def test_the_searcher_compiles_each_round_into_findings_every_agent_reads_later(tmp_path, fake_llm, fake_tavily,
                                                                                 monkeypatch):
    fake_llm.responder = Script()
    play(make_workspace(tmp_path, fake_llm, fake_tavily, monkeypatch))
    plan, compile_ = prompts_of(fake_llm, "searcher", "constructive")
    # The compilation read the whole of what the searches returned, each result under its number for the match.
    assert "The searches you just ran" not in plan
    for k, query in enumerate(["pro constructive evidence one", "pro constructive evidence two"]):
        for i, result in enumerate(default_results(query, {}), start=1):
            assert f"[{3 * k + i}] {result['title']} ({result['url']})\n{result['content']}" in compile_
    enum = properties(requests_of(fake_llm, "searcher", "constructive")[1])["findings"]["items"]["properties"]
    assert enum["sources"]["items"]["enum"] == [1, 2, 3, 4, 5, 6]  # a finding rests on sources of this round
    # The findings, with their source numbers, and the gaps reach the other three agents in every later stage.
    for stage in STAGES:
        for role in ("analyzer", "writer", "reviewer"):
            (prompt,) = prompts_of(fake_llm, role, stage)
            assert "- (for us) FINDING<pro|constructive> #1 [1]" in prompt, (role, stage)
            assert "FINDING<pro|constructive> #6 [6]" in prompt and "GAP<pro|constructive>" in prompt


def test_the_writer_may_ask_for_material_in_stage_1_and_each_request_is_a_compiled_round(tmp_path, fake_llm,
                                                                                        fake_tavily, monkeypatch):
    script = Script(requests={("constructive", "pro", "draft"): 1})
    fake_llm.responder = script
    play(make_workspace(tmp_path, fake_llm, fake_tavily, monkeypatch, params="request_queries = 1"))
    assert calls_of(script)["constructive"] == [*ROUND, "analyzer", "writer", *ROUND, "writer", "reviewer"]
    # Stage 1 offers requests too: two by default, so one is left after the first.
    assert ["material_request" in properties(b) for b in requests_of(fake_llm, "writer", "constructive")] == \
        [True, True]
    plan = prompts_of(fake_llm, "searcher", "constructive")[2]
    assert "a cost figure" in plan and "pro cost figure" in plan and "At most 1 queries" in plan
    assert [properties(b)["queries"]["maxItems"] for b in requests_of(fake_llm, "searcher", "constructive")[::2]] \
        == [6, 1]  # max_queries on the motion, request_queries on a request
    # The request's one query ran; its results are numbered after stage 1's.
    assert [r.body["query"] for r in fake_tavily.requests][2:] == ["pro constructive evidence one #2"]
    compile_ = prompts_of(fake_llm, "searcher", "constructive")[3]
    assert properties(requests_of(fake_llm, "searcher", "constructive")[3])["findings"]["items"]["properties"][
        "sources"]["items"]["enum"] == [7, 8, 9]
    assert "FINDING<pro|constructive> #1 [1]" in compile_  # the Searcher reads the base it adds to
    # The draft written after the round reads the round's findings.
    assert "FINDING<pro|constructive> #9 [9]" in prompts_of(fake_llm, "writer", "constructive")[1]


def test_the_writer_may_ask_for_material_while_revising(tmp_path, fake_llm, fake_tavily, monkeypatch):
    script = Script(approve_after=1, requests={("rebuttal", "pro", "revise"): 1})
    fake_llm.responder = script
    play(make_workspace(tmp_path, fake_llm, fake_tavily, monkeypatch))
    assert calls_of(script)["rebuttal"] == ["analyzer", "writer", "reviewer", "writer", *ROUND, "writer", "reviewer"]
    asking, revising = prompts_of(fake_llm, "writer", "rebuttal")[1:]
    assert "SPEECH<pro|rebuttal> Draft 1" in asking and "Cite [2] for the cost." in asking
    # The revision that follows still has the draft and the feedback, and now the new findings too.
    assert "Cite [2] for the cost." in revising and "FINDING<pro|rebuttal> #7 [7]" in revising
    assert "FINDING<pro|rebuttal>" not in asking


def test_max_requests_caps_a_speechs_requests_drafting_and_revising_together(tmp_path, fake_llm, fake_tavily,
                                                                              monkeypatch):
    script = Script(approve_after=1, requests={("rebuttal", "pro", "draft"): 1, ("rebuttal", "pro", "revise"): 5,
                                               ("summary", "pro", "draft"): 1})
    fake_llm.responder = script
    play(make_workspace(tmp_path, fake_llm, fake_tavily, monkeypatch, params="max_requests = 2"))
    assert calls_of(script)["rebuttal"] == ["analyzer", "writer", *ROUND, "writer", "reviewer", "writer", *ROUND,
                                            "writer", "reviewer"]
    assert ["material_request" in properties(b) for b in requests_of(fake_llm, "writer", "rebuttal")] == \
        [True, True, True, False]
    # The budget is per speech: the summary has its own.
    assert calls_of(script)["summary"] == ["analyzer", "writer", *ROUND, "writer", "reviewer", "writer", "reviewer"]


def test_the_checklists_grow_stage_by_stage_and_the_last_review_reads_the_state_of_the_debate(
        tmp_path, fake_llm, fake_tavily, monkeypatch):
    fake_llm.responder = Script(approve_after=1)
    play(make_workspace(tmp_path, fake_llm, fake_tavily, monkeypatch, params="max_reviews = 2"))
    items = {}
    for stage in STAGES:
        body = requests_of(fake_llm, "reviewer", stage)[0]
        items[stage] = properties(body)["checks"]["items"]["properties"]["item"]["enum"]
        prompt = body["messages"][0]["content"]
        assert all(f"- {item}: " in prompt for item in items[stage])
        assert properties(body)["checks"]["maxItems"] == len(items[stage])  # one check per item, no runaway list
        assert ("debate_state" in properties(body)) == (stage == "summary")
        assert ("state of the debate" in prompt) == (stage == "summary")
    assert items["constructive"] == ["structure", "content", "evidence", "fluency"]
    assert items["rebuttal"] == items["constructive"] + ["rebuttal_technique", "consistency"]
    assert items["summary"] == items["rebuttal"] + ["depth", "no_new_arguments"]
    summary = prompts_of(fake_llm, "reviewer", "summary")[0]
    assert "fluently" in summary and "self-contradiction" in summary and "reasons" in summary
    # The coach's reading of the debate, with its reasons, goes to the Writer with the feedback.
    revision = prompts_of(fake_llm, "writer", "summary")[1]
    assert "the other team is ahead" in revision and "STATE-REASON: their harm is unanswered" in revision


@pytest.mark.parametrize("reviews, expected, stands", [
    (0, ["analyzer", "writer"], 1),
    (1, ["analyzer", "writer", "reviewer"], 1),  # one review and no revision: the reviewed draft stands
    (3, ["analyzer", "writer", "reviewer", "writer", "reviewer", "writer", "reviewer"], 3),
])
def test_every_revision_is_reviewed_up_to_max_reviews(tmp_path, fake_llm, fake_tavily, monkeypatch, reviews,
                                                      expected, stands):
    script = Script(approve_after=100)  # never approves
    fake_llm.responder = script
    match = play(make_workspace(tmp_path, fake_llm, fake_tavily, monkeypatch, params=f"max_reviews = {reviews}"))
    assert calls_of(script)["summary"] == expected
    summary = next(s for s in match.speeches if (s.side, s.stage) == ("pro", "summary"))
    assert f"Draft {stands}:" in summary.text
    if reviews:  # the draft that stands is the one the last review saw
        assert f"SPEECH<pro|summary> Draft {stands}:" in prompts_of(fake_llm, "reviewer", "summary")[-1]
    if reviews == 3:
        revision = prompts_of(fake_llm, "writer", "summary")[1]
        assert "Cite [2] for the cost." in revision and "SPEECH<pro|summary> Draft 1" in revision


def test_a_review_that_approves_ends_the_loop(tmp_path, fake_llm, fake_tavily, monkeypatch):
    script = Script(approve_after=1)
    fake_llm.responder = script
    play(make_workspace(tmp_path, fake_llm, fake_tavily, monkeypatch))
    assert calls_of(script)["constructive"] == [*ROUND, "analyzer", "writer", "reviewer", "writer", "reviewer"]


def test_citation_numbers_hold_for_the_whole_match_and_references_are_the_cited_sources(tmp_path, fake_llm,
                                                                                         fake_tavily, monkeypatch):
    script = Script(cite={"constructive": (4, 2, 99, 4), "rebuttal": (2, 8), "summary": (8, 4)},
                    requests={("rebuttal", "pro", "draft"): 1})
    fake_llm.responder = script
    match = play(make_workspace(tmp_path, fake_llm, fake_tavily, monkeypatch))
    returned = {res["url"]: res for r in fake_tavily.requests for res in default_results(r.body["query"], r.body)}
    pro = [s for s in match.speeches if s.side == "pro"]
    # The base numbers results in the order found: [1]-[3] from stage 1's query one, [4]-[6] from two,
    # [7]-[9] from the rebuttal request's first query. [99] does not exist and is dropped.
    assert "stands [4] [2] [4]." in pro[0].text and "[99]" not in pro[0].text
    assert "stands [2] [8]." in pro[1].text and "stands [8] [4]." in pro[2].text
    assert [[r.number for r in s.references] for s in pro] == [[2, 4], [2, 8], [4, 8]]
    by_number: dict[int, str] = {}
    for speech in pro:
        for ref in speech.references:
            assert by_number.setdefault(ref.number, ref.url) == ref.url  # one source per number, match-wide
            assert (ref.title, ref.text) == (returned[ref.url]["title"], returned[ref.url]["content"])
    assert re.search(r"/pro-constructive-evidence-one/\w+/2$", by_number[2])
    assert re.search(r"/pro-constructive-evidence-two/\w+/1$", by_number[4])
    assert re.search(r"/pro-rebuttal-evidence-one/\w+/2$", by_number[8])
    # Every agent saw the same numbering: the summary writer's base lists [8] as the rebuttal found it.
    assert f"[8] {returned[by_number[8]]['title']} ({by_number[8]})" in prompts_of(fake_llm, "writer", "summary")[0]
    # And so does the judge: each [n] of the transcript is listed under that number, with the source's text.
    (judge,) = [r.body["messages"][0]["content"] for r in fake_llm.requests if role_stage_side(r.body)[0] == "judge"]
    for n, url in by_number.items():
        assert f"[{n}] {returned[url]['title']} ({url})" in judge and returned[url]["content"] in judge


def test_the_summary_only_reinforces_points_already_made(tmp_path, fake_llm, fake_tavily, monkeypatch):
    script = Script(requests={("summary", "pro", "draft"): 1})
    fake_llm.responder = script
    play(make_workspace(tmp_path, fake_llm, fake_tavily, monkeypatch))
    assert calls_of(script)["summary"] == ["analyzer", "writer", *ROUND, "writer", "reviewer"]
    request = properties(requests_of(fake_llm, "writer", "summary")[0])["material_request"]
    assert request["required"] == ["point", "need", "query"]  # a summary request names the point it reinforces
    assert "point" not in properties(requests_of(fake_llm, "writer", "rebuttal")[0])["material_request"]["properties"]
    writer = prompts_of(fake_llm, "writer", "summary")[0]
    assert "No new arguments" in writer and "only to reinforce a point your team already made" in writer
    plan, compile_ = prompts_of(fake_llm, "searcher", "summary")
    for prompt in (plan, compile_):
        assert "OUR-EARLIER-POINT" in prompt and "no new argument may be made" in prompt
        assert "one more piece of material" not in prompt
    assert "never for a new line of argument" in plan
    assert "Keep only what reinforces the point named in the request" in compile_
    analyzer = prompts_of(fake_llm, "analyzer", "summary")[0]
    assert "No new arguments" in analyzer


def test_ablations_skip_the_right_agents(tmp_path, fake_llm, fake_tavily, monkeypatch):
    expected = {
        '["analyzer", "writer", "reviewer"]': ["analyzer", "writer", "reviewer"],
        '["searcher", "writer", "reviewer"]': [*ROUND, "writer", "reviewer"],
        '["searcher", "analyzer", "writer"]': [*ROUND, "analyzer", "writer"],
        '["writer"]': ["writer"],
    }
    for k, (agents, roles) in enumerate(expected.items()):
        script = Script(requests={("constructive", "pro", "draft"): 1})
        fake_llm.responder = script
        before = len(fake_tavily.requests)
        match = play(make_workspace(tmp_path / str(k), fake_llm, fake_tavily, monkeypatch,
                                    params=f"agents = {agents}\nmax_requests = 0"))
        assert calls_of(script)["constructive"] == roles, agents
        assert (len(fake_tavily.requests) > before) == ("searcher" in roles)
        if "searcher" not in roles:
            assert match.speeches[0].references == ()  # nothing to cite without research
    # Without a Searcher the Writer is never offered a request, whatever max_requests says.
    script = Script(requests={("constructive", "pro", "draft"): 1})
    fake_llm.responder = script
    play(make_workspace(tmp_path / "nosearch", fake_llm, fake_tavily, monkeypatch,
                        params='agents = ["analyzer", "writer", "reviewer"]'))
    assert calls_of(script)["constructive"] == ["analyzer", "writer", "reviewer"]


def test_a_side_never_sees_the_other_sides_research(tmp_path, fake_llm, fake_tavily, monkeypatch):
    script = Script(cite=())  # nobody cites, so no source becomes public through a speech
    fake_llm.responder = script
    ws = make_workspace(tmp_path, fake_llm, fake_tavily, monkeypatch)
    (match_id,) = ws.store.add_tournament("single", 0, {}, [("en-policy-001", "a4d", "a4d")])
    asyncio.run(MatchRunner.of(ws).play_match(ws.store.match(match_id), []))
    for r in fake_llm.requests:
        role, stage, side = role_stage_side(r.body)
        other = "con" if side == "pro" else "pro"
        text = r.body["messages"][0]["content"]
        assert f"{other} constructive evidence" not in text, (role, stage, side)
        assert f"PLAN<{other}" not in text and f"FINDING<{other}" not in text  # analysis and findings are private
        if stage == "constructive":
            assert f"SPEECH<{other}" not in text
    # Each side's own base persists into later stages.
    pro_summary = prompts_of(fake_llm, "writer", "summary")[0]
    assert "pro constructive evidence one" in pro_summary and "FINDING<pro|constructive>" in pro_summary


def test_a_chinese_motion_is_debated_from_the_chinese_prompts(tmp_path, fake_llm, fake_tavily, monkeypatch):
    """In depth: tests/debaters/test_prompts_zh.py. Here: a built-in Chinese motion's prompts are the Chinese templates."""
    fake_llm.responder = ChineseScript()  # Script reads the English prompts only
    ws = make_workspace(tmp_path, fake_llm, fake_tavily, monkeypatch, language="zh")
    motion = ws.store.motion("zh-policy-001")
    play(ws, motion_id=motion.id)
    prompts = [r.body["messages"][0]["content"] for r in fake_llm.requests if r.body["model"] != "judge"]
    assert prompts and all(f"辩题：{motion.text}" in p and "使用简体中文" in p for p in prompts)
    assert not any("Write in Simplified Chinese" in p or "# Profile" in p for p in prompts)


@pytest.mark.parametrize("params, fragment", [
    ('agents = ["searcher", "analyzer"]', "agents = ['searcher', 'analyzer']: expected a list of distinct roles"),
    ("max_reviews = -1", "max_reviews = -1: expected from 0 to 10"),
    ("max_requests = 11", "max_requests = 11: expected from 0 to 10"),
    ("request_queries = 0", "request_queries = 0: expected from 1 to 10"),
    ('search_depth = "deep"', "search_depth = 'deep': expected 'basic' or 'advanced'"),
    ("top_p = 2", "top_p = 2: expected from 0 to 1"),
])
def test_bad_params_are_rejected_before_anything_runs(tmp_path, fake_llm, fake_tavily, monkeypatch, params, fragment):
    from arena.base.errors import UserError

    with pytest.raises(UserError, match=re.escape(fragment)):
        make_workspace(tmp_path, fake_llm, fake_tavily, monkeypatch, params=params)
    assert fake_llm.requests == []


@pytest.mark.parametrize("baseline", ["base", "sb"])
def test_match_play_runs_agent4debate_against_a_baseline_end_to_end(tmp_path, fake_llm, fake_tavily, monkeypatch,
                                                                    baseline):
    fake_llm.responder = Script(cite=(1, 5))
    ws = make_workspace(tmp_path, fake_llm, fake_tavily, monkeypatch)
    ws.close()
    result = invoke("match", "play", "--motion", "en-policy-001", "--pro", "a4d", "--con", baseline, "-w", ws.path)
    assert result.exit_code == 0, result.output
    assert "constructive · pro · searcher" in result.output and "summary · pro · reviewer" in result.output
    shown = json.loads(invoke("match", "show", "m00001", "-w", ws.path, "--format", "json").output)
    assert shown["status"] == "done" and shown["simulated"] is False and shown["score"] == {"pro": 1.0, "con": 0.0}
    pro = [s for s in shown["speeches"] if s["side"] == "pro"]
    assert set(pro[0]["agents"]) == {"searcher", "analyzer", "writer", "reviewer"}
    assert all(u["calls"] >= 1 and u["prompt_tokens"] > 0 for u in pro[0]["agents"].values())
    assert [r["number"] for r in pro[0]["references"]] == [1, 5]
    assert all(r["url"].startswith("https://example.org/") and r["text"] for r in pro[0]["references"])
    con = [s for s in shown["speeches"] if s["side"] == "con"]
    assert all(set(s["agents"]) == {"writer"} for s in con)
    # The search baseline searched once, on the motion, and cites from that; the direct one never searches.
    motion_searches = [r for r in fake_tavily.requests if r.body["query"] == shown["motion"]["text"]]
    assert len(motion_searches) == (1 if baseline == "sb" else 0)
    if baseline == "sb":
        assert [[r["number"] for r in s["references"]] for s in con] == [[1]] * 3  # [5] does not exist (3 results)
