"""Debater prompts in cache order (issue 52), on the requests the fake provider recorded.

The debaters' models are named like Anthropic's (openai/claude-...), so the gateway marks where each prompt's shared
part ends (arena.gateway.caching.marked: the first content part, with cache_control) and the test reads the break
off the wire. What is asserted, for agent4debate, direct and search-baseline, in English and Chinese:
(a) every prompt holds exactly one break, inside its knowledge part; within a stage, the part before it is the same
    for the Strategist, the Speaker and the Coach of a side while the knowledge base stays as it is, and after a
    research round it still begins as before up to the end of the old sources (they only grow at their end); the
    Researcher's shares the motion and team part with them, and its plan and compilation share theirs;
(b) a side's first call of the rebuttal begins with its constructive's motion and team part, and each call of its
    summary begins with the whole of the rebuttal's shared part up to the transcript's last line (the speaking
    order, which a later transcript extends);
(c) a side's prompts carry its own key of the match and never the other side's or the judges'.
"""
from __future__ import annotations

import asyncio
import pytest

from arena.app.commands import open_workspace
from arena.app.runner.engine import MatchRunner
from arena.base.prompts import CACHE_BREAK
from arena.domain.transcript import marker_key
from tests.support.helpers import entry, judge, new_workspace, requested_schema
from tests.support.teams import ChineseScript, Script, role_stage_side, stage_and_side_zh

STAGES = ("constructive", "rebuttal", "summary")
# Per language: the knowledge heading, the findings' lead-in (the knowledge base's part after its sources), and the
# transcript's last line's start.
WORDS = {"en": {"knowledge": "# Knowledge", "findings": "\n\nFindings your researcher compiled",
                "order": "\nSpeaking order: ", "profile": "# Profile"},
         "zh": {"knowledge": "# 背景知识", "findings": "\n\n资料组长整理的研究发现", "order": "\n发言顺序：",
                "profile": "# 角色设定"}}
MOTIONS = {"en": "en-policy-001", "zh": "zh-policy-001"}


def _flat(body: dict) -> dict:
    """body with each message's content parts joined into one text, as the scripts read prompts."""
    def text(content):
        return content if isinstance(content, str) else "".join(part["text"] for part in content)
    return dict(body, messages=[dict(m, content=text(m["content"])) for m in body["messages"]])


def _role(body: dict, language: str) -> tuple[str, str]:
    """(role, stage) of a debater's request: agent4debate's role by the schema it asks for, a baseline's "speaker"."""
    flat = _flat(body)
    if language == "en":
        role, stage, _ = role_stage_side(flat)
        return ("speaker" if role == "direct" else role), stage
    stage, _ = stage_and_side_zh(flat["messages"][0]["content"])
    if body["model"] != "claude-a4d":
        return "speaker", stage
    properties = (requested_schema(body) or {}).get("properties", {})
    return next((role for key, role in (("queries", "searcher"), ("findings", "searcher"), ("speech", "writer"),
                                        ("checks", "reviewer")) if key in properties), "analyzer"), stage


class Call:
    """One recorded request of a debater: its role and stage, its prompt's shared part and the rest."""

    def __init__(self, body: dict, language: str):
        self.role, self.stage = _role(body, language)
        parts = body["messages"][0]["content"]
        assert isinstance(parts, list) and len(body["messages"]) == 1, parts
        marked = [p for p in parts if "cache_control" in p]
        assert len(marked) == 1 and parts[0] is marked[0] and len(parts) == 2, parts  # exactly one break
        self.shared, self.rest = parts[0]["text"], parts[1]["text"]
        self.schema = (requested_schema(body) or {}).get("properties", {})
        self.text = self.shared + self.rest
        assert CACHE_BREAK not in self.text


@pytest.fixture(scope="module", params=["en", "zh"])
def recorded(request, tmp_path_factory):
    """Two matches, agent4debate against the search baseline and the direct baseline against agent4debate, so each
    kind speaks, agent4debate on both sides: (language, workspace secret, [(match id, {side: model}, [body])])."""
    from tests.support.fakes.openai_server import FakeOpenAI
    from tests.support.fakes.tavily_server import FakeTavily

    language = request.param
    monkeypatch = pytest.MonkeyPatch()
    monkeypatch.setenv("TAVILY_API_KEY", "tvly-test")
    played = []
    try:
        with FakeOpenAI() as fake_llm, FakeTavily() as fake_tavily:
            # A window that holds every prompt whole: fitting one to a smaller window leaves sources out, which
            # changes a prompt where the first one is left out (arena.gateway.fitting), and is no concern here.
            room = {"api_base": fake_llm.api_base, "context_window": 131072}
            path = tmp_path_factory.mktemp(f"cache-{language}") / "ws"
            new_workspace(path, arena={"language": language, "judge_runs": 1}, llm={"backoff_s": 0.01},
                          search={"provider": "tavily", "api_base_url": fake_tavily.base_url, "max_results": 3},
                          motions=[f"builtin:{language}"],
                          entries=[entry("a4d", "agent4debate", "openai/claude-a4d", **room),
                                   entry("base", model="openai/claude-base", **room),
                                   entry("sb", "search-baseline", "openai/claude-sb", **room)],
                          judges=[judge("j", model="openai/judge", api_base=room["api_base"])])
            ws = open_workspace(path)
            for pro, con in (("a4d", "sb"), ("base", "a4d")):
                # English: every Writer asks for material once in the rebuttal and the Coach rejects a first draft,
                # so the knowledge base grows mid-stage and a revision is written; the Chinese script does the like.
                script = ChineseScript() if language == "zh" else Script(
                    approve_after=1, requests={("rebuttal", side, "draft"): 1 for side in ("pro", "con")})
                fake_llm.clear()
                fake_llm.responder = lambda body, script=script: script(_flat(body))
                (match_id,) = ws.store.add_tournament("single", 0, {}, [(MOTIONS[language], pro, con)])
                asyncio.run(MatchRunner.of(ws).play_match(ws.store.match(match_id), list(ws.config.judges)))
                assert ws.store.match(match_id).status == "done"
                played.append((match_id, {"pro": f"claude-{pro}", "con": f"claude-{con}"}, fake_llm.bodies))
            secret = ws.store.ballot_secret()
            ws.close()
    finally:
        monkeypatch.undo()
    return language, secret, played


def sides(recorded):
    """(kind's model, side, match id, its calls in order) for every side of every match."""
    language, _, played = recorded
    for match_id, models, bodies in played:
        for side, model in models.items():
            yield model, side, match_id, [Call(b, language) for b in bodies if b["model"] == model]


def head(call: Call, language: str) -> str:
    """The opening and the motion and team part: the prompt up to the first blank line of its knowledge."""
    return call.text[:call.text.index("\n\n", call.text.index(WORDS[language]["knowledge"]))]


def test_each_prompt_has_one_break_inside_its_knowledge_and_the_roles_of_a_stage_share_what_is_before_it(recorded):
    language = recorded[0]
    words = WORDS[language]
    roles = set()
    for model, side, _, calls in sides(recorded):
        assert calls and {c.stage for c in calls} == set(STAGES), (model, side)
        for call in calls:  # the break lies between the knowledge's heading and the profile's
            assert call.shared.count(f"\n{words['knowledge']}\n") == 1 and f"\n{words['profile']}\n" in call.rest
        if model != "claude-a4d":
            assert [c.role for c in calls] == ["speaker"] * 3  # a baseline: one call per stage
            continue
        for stage in STAGES:
            staged = [c for c in calls if c.stage == stage]
            roles.update(c.role for c in staged)
            motion_and_team = head(staged[0], language)
            assert all(c.shared.startswith(motion_and_team) for c in staged), (side, stage)
            before = None  # the last shared part of the Strategist, the Speaker or the Coach
            compiled = False  # whether a research round added to the knowledge base since
            for k, call in enumerate(staged):
                if call.role == "searcher":
                    if "findings" in call.schema:  # a compilation: its plan, just before, read the same findings
                        assert staged[k - 1].role == "searcher" and staged[k - 1].shared == call.shared
                        compiled = True
                    continue
                if before is not None and not compiled:
                    assert call.shared == before, (side, stage, call.role)
                elif before is not None:  # new sources came after the old ones, then the findings and gaps
                    assert call.shared.startswith(before[:before.index(words["findings"])]), (side, stage)
                    assert call.shared != before
                before, compiled = call.shared, False
    assert roles == {"searcher", "analyzer", "writer", "reviewer"}


def test_a_later_stage_begins_as_the_earlier_one_did(recorded):
    language = recorded[0]
    order = WORDS[language]["order"]
    for model, side, _, calls in sides(recorded):
        first = {stage: next(c for c in calls if c.stage == stage and c.role != "searcher") for stage in STAGES}
        constructive = next(c for c in calls if c.stage == "constructive")
        # The rebuttal's first call begins with the constructive's motion and team part (its transcript comes next).
        assert next(c for c in calls if c.stage == "rebuttal").text.startswith(head(constructive, language))
        # Every call of the summary (but the Researcher's, which reads no transcript) begins with the rebuttal's
        # shared part up to the transcript's last line, the speaking order.
        rebuttal = first["rebuttal"].shared
        assert rebuttal.count(order) == 1
        upto = rebuttal[:rebuttal.index(order) + 1]
        summary = [c for c in calls if c.stage == "summary" and c.role != "searcher"]
        assert summary and all(c.text.startswith(upto) for c in summary), (model, side)
        assert len(upto) > len(head(constructive, language)) + 200  # the debate so far, not only the motion


def test_a_sides_prompts_hold_its_own_key_and_never_the_other_sides_or_the_judges(recorded):
    _, secret, _ = recorded
    seen = 0
    for model, side, match_id, calls in sides(recorded):
        own = marker_key(secret, match_id, side)
        others = {marker_key(secret, match_id, "con" if side == "pro" else "pro"), marker_key(secret, match_id, "judges")}
        for call in calls:
            assert not [k for k in others if k in call.text], (model, side, call.stage, call.role)
            if call.stage != "constructive" and call.role != "searcher":
                assert f"key {own} ===" in call.shared  # its transcript, in the shared part
                seen += 1
    assert seen > 0
