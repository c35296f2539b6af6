"""The Debatrix-style judge on recorded requests: chronological notes per dimension, verdicts, summary."""
from __future__ import annotations

import asyncio
import json
import re

import pytest

from arena.workspace.config import LLMSettings
from arena.base.errors import UserError
from arena.gateway.llm import LLMGateway
from arena.gateway.catalog import ModelRef
from arena.match.protocol import AgentLog, LLMHandle
from arena.domain.records import JudgeSpec, Motion, Speech
from arena.store import Store
from arena.match.judging import JudgeView, run_judge
from judges.debatrix import DIMENSIONS, NOTE_TOKENS, DebatrixJudge, weighted_vote

ORDER = [("constructive", "pro"), ("constructive", "con"), ("rebuttal", "pro"), ("rebuttal", "con"),
         ("summary", "con"), ("summary", "pro")]
VIEW = JudgeView(Motion("m", "Cities should ban cars", "policy"),
                 tuple(Speech(stage, side, f"SPEECH-{k} by {side}") for k, (stage, side) in enumerate(ORDER, 1)))


def dimension_of(text: str) -> str:
    return re.search(r"one dimension of judging: (\w+)", text).group(1)


def responder(winners: dict | None = None, overall: str = "pro", scores: tuple[int, int] = (7, 5)):
    """Notes, dimension verdicts and the chair's summary; a dimension's winner gets the higher of scores (a tie
    takes them as given), since a winner its own scores put behind is a contradiction, asked again."""
    winners = winners or {"argument": "pro", "source": "tie", "language": "con"}

    def answer(body: dict) -> str:
        text = body["messages"][0]["content"]
        if "chair of a panel" in text:
            return json.dumps({"rationale": "PRO took the heavier dimension.", "overall": overall})
        dimension = dimension_of(text)
        if body.get("response_format"):
            winner = winners.get(dimension, "pro")
            high, low = max(scores), min(scores)
            pro, con = {"pro": (high, low), "con": (low, high)}.get(winner, scores)
            return json.dumps({"rationale": f"{dimension} decided", "pro_score": pro, "con_score": con,
                               "winner": winner})
        number = re.search(r"This is speech (\d) of 6", text).group(1)
        return f"NOTE<{dimension}|{number}> Standing: even."

    return answer


def winner_enum(body: dict) -> list[str]:
    return body["response_format"]["json_schema"]["schema"]["properties"]["winner"]["enum"]


def overall_enum(body: dict) -> list[str]:
    return body["response_format"]["json_schema"]["schema"]["properties"]["overall"]["enum"]


def judge(fake_llm, options=None, run=0, store=None):
    spec = JudgeSpec("dx", "debatrix", "openai/dx", fake_llm.api_base, 3, options or {})
    gateway = LLMGateway(LLMSettings(backoff_s=0.01, cache=store is not None), store)
    handle = LLMHandle(gateway, ModelRef("openai/dx", fake_llm.api_base), AgentLog(), match_id=None, sample=run)
    return asyncio.run(run_judge(DebatrixJudge(spec), VIEW, handle, run))


def test_each_update_sees_its_own_notes_and_only_the_new_speech(fake_llm):
    fake_llm.responder = responder()
    judge(fake_llm)
    updates = [r.body["messages"][0]["content"] for r in fake_llm.requests if not r.body.get("response_format")]
    assert len(updates) == 18  # six speeches, three dimensions
    for text in updates:
        dimension = dimension_of(text)
        k = int(re.search(r"This is speech (\d) of 6", text).group(1))
        assert f"SPEECH-{k} by" in text
        assert [j for j in range(1, 7) if f"SPEECH-{j} by" in text] == [k]  # never the raw earlier speeches
        assert re.findall(r"NOTE<(\w+)\|(\d)>", text) == [(dimension, str(j)) for j in range(1, k)]


def test_speeches_are_read_in_order_with_the_dimensions_in_parallel(fake_llm):
    fake_llm.responder = responder()
    judge(fake_llm)
    numbers = [int(re.search(r"This is speech (\d) of 6", r.body["messages"][0]["content"]).group(1))
               for r in fake_llm.requests if not r.body.get("response_format")]
    assert numbers == sorted(numbers)
    assert all(numbers.count(k) == 3 for k in range(1, 7))


def test_dimension_verdicts_read_notes_not_speeches_and_the_summary_weighs_them(fake_llm):
    fake_llm.responder = responder(overall="pro")
    verdict = judge(fake_llm)
    structured = [r.body for r in fake_llm.requests if r.body.get("response_format")]
    assert len(structured) == 4  # three dimension verdicts and the chair
    for body in structured[:3]:
        text = body["messages"][0]["content"]
        dimension = dimension_of(text)
        assert "SPEECH-" not in text
        assert re.findall(r"NOTE<(\w+)\|(\d)>", text) == [(dimension, str(j)) for j in range(1, 7)]
    chair = structured[3]["messages"][0]["content"]
    assert "SPEECH-" not in chair and "NOTE<" not in chair
    assert overall_enum(structured[3]) == ["pro", "con"] and '"overall": "pro" or "con"' in chair  # one winner
    assert "source (weight 2): a TIE" in chair
    assert "argument (weight 3): winner PRO" in chair and "language (weight 2): winner CON" in chair
    assert verdict.overall == "pro" and dict(verdict.dimensions) == {"argument": "pro", "source": "tie",
                                                                    "language": "con"}
    assert "argument: PRO wins (PRO 7, CON 5). argument decided" in verdict.rationale
    assert "language: CON wins (PRO 5, CON 7). language decided" in verdict.rationale
    assert verdict.extra["scores"] == {"argument": [7, 5], "source": [7, 5], "language": [5, 7]}


def test_rule_summary_needs_no_chair_and_weighs_the_votes(fake_llm):
    fake_llm.responder = responder({"argument": "con", "source": "pro", "language": "pro"})
    verdict = judge(fake_llm, {"summary": "rule"})
    assert not any("chair of a panel" in r.body["messages"][0]["content"] for r in fake_llm.requests)
    assert verdict.overall == "pro"  # source 2 + language 2 outweigh argument 3


def d(dim, w, winner, p=5, c=5):
    return {"dimension": dim, "weight": w, "winner": winner, "pro_score": p, "con_score": c}


def test_weighted_vote_ties_on_equal_weighted_points():
    assert weighted_vote([d("a", 3, "con"), d("s", 2, "pro"), d("l", 2, "pro")]) == "pro"
    assert weighted_vote([d("a", 3, "con", 9, 1), d("s", 2, "pro"), d("l", 1, "pro")]) == "tie"  # 3 = 2 + 1
    assert weighted_vote([d("a", 3, "tie"), d("s", 2, "pro"), d("l", 2, "con")]) == "tie"  # 4.5 = 4.5
    assert weighted_vote([d("a", 2, "tie", 4, 6)]) == "tie"  # margins never overturn equal points
    assert weighted_vote([d("a", 0.3, "con"), d("s", 0.1, "pro"), d("l", 0.2, "pro")]) == "tie"  # float weights
    assert weighted_vote([d("a", 3, "tie"), d("s", 2, "con")]) == "con"


def test_weighted_vote_without_ties_goes_by_score_margins_then_to_nobody():
    assert weighted_vote([d("a", 3, "con", 6, 5), d("s", 2, "pro", 5, 5), d("l", 1, "pro")], ties=False) == "pro"
    assert weighted_vote([d("a", 2, "tie", 4, 6)], ties=False) == "con"
    assert weighted_vote([d("a", 2, "tie", 6, 6), d("s", 1, "tie", 3, 3)], ties=False) is None
    assert weighted_vote([d("a", 3, "pro", 2, 9)], ties=False) == "pro"  # margins only break a level vote


def verdict_prompts(fake_llm) -> dict[str, dict]:
    """The dimension verdict requests, by dimension."""
    return {dimension_of(r.body["messages"][0]["content"]): r.body for r in fake_llm.requests
            if r.body.get("response_format") and "chair of a panel" not in r.body["messages"][0]["content"]}


def test_ties_follow_the_reference_by_default(fake_llm):
    """Source and language may be ties, argument never, and the chair names one winner."""
    fake_llm.responder = responder({"argument": "con", "source": "tie", "language": "tie"}, overall="con")
    verdict = judge(fake_llm)
    prompts = verdict_prompts(fake_llm)
    assert {d: winner_enum(b) for d, b in prompts.items()} == {
        "argument": ["pro", "con"], "source": ["pro", "con", "tie"], "language": ["pro", "con", "tie"]}
    argument = prompts["argument"]["messages"][0]["content"]
    assert "A tie is not allowed on argument" in argument and '"winner": "pro" or "con"' in argument
    for dimension in ("source", "language"):
        text = prompts[dimension]["messages"][0]["content"]
        assert f"Give a tie exactly when the rule above makes {dimension} a tie" in text
        assert '"winner": "pro", "con" or "tie"' in text
    chair = next(r.body for r in fake_llm.requests if "chair of a panel" in r.body["messages"][0]["content"])
    assert overall_enum(chair) == ["pro", "con"] and "a tie is not allowed" in chair["messages"][0]["content"]
    assert (verdict.overall, dict(verdict.dimensions)) == ("con", {"argument": "con", "source": "tie",
                                                                   "language": "tie"})


def test_ties_are_configuration(fake_llm):
    fake_llm.responder = responder({"argument": "tie", "source": "pro", "language": "tie"}, overall="tie")
    options = {"dimensions": {"argument": {"ties": True}, "source": {"ties": False}, "language": {}},
               "overall_ties": True}
    verdict = judge(fake_llm, options)
    prompts = verdict_prompts(fake_llm)
    assert {d: winner_enum(b) for d, b in prompts.items()} == {
        "argument": ["pro", "con", "tie"], "source": ["pro", "con"], "language": ["pro", "con", "tie"]}
    # A built-in rule is written for the built-in tie setting: with that changed, the plain rule is stated.
    for dimension in ("argument", "source"):
        text = prompts[dimension]["messages"][0]["content"]
        assert DIMENSIONS[dimension]["rule"] not in text and "How %s is decided" % dimension not in text
    assert "Give a tie when the two sides did equally well on argument" in prompts["argument"]["messages"][0]["content"]
    assert DIMENSIONS["language"]["rule"] in prompts["language"]["messages"][0]["content"]
    chair = next(r.body for r in fake_llm.requests if "chair of a panel" in r.body["messages"][0]["content"])
    assert overall_enum(chair) == ["pro", "con", "tie"]
    assert (verdict.overall, dict(verdict.dimensions)) == ("tie", {"argument": "tie", "source": "pro",
                                                                   "language": "tie"})


def test_each_prompt_carries_its_dimension_s_definition_and_rule(fake_llm):
    fake_llm.responder = responder()
    judge(fake_llm)
    prompts = [r.body["messages"][0]["content"] for r in fake_llm.requests
               if "chair of a panel" not in r.body["messages"][0]["content"]]
    assert len(prompts) == 21  # 18 notes, 3 verdicts
    for text in prompts:
        dimension = dimension_of(text)
        assert f"The dimension you judge, {dimension}: {DIMENSIONS[dimension]['definition']}\n" in text
        assert DIMENSIONS[dimension]["rule"] in text
        assert [other for other in DIMENSIONS if DIMENSIONS[other]["rule"] in text] == [dimension]
    source = next(p for p in prompts if dimension_of(p) == "source")
    assert "common knowledge and the subject of the debate itself are not outside sources" in source
    assert "differ little" in source and "clear lead in the quality" in source
    language = next(p for p in prompts if dimension_of(p) == "language")
    assert "deserves a penalty and it does not" in language and "informal wording" in language


def test_a_user_s_definition_or_rule_replaces_the_built_in_one(fake_llm):
    fake_llm.responder = responder()
    options = {"dimensions": {"argument": {}, "source": {"definition": "MY SOURCES"},
                              "language": {"rule": "MY LANGUAGE RULE"}}}
    judge(fake_llm, options)
    texts = {d: b["messages"][0]["content"] for d, b in verdict_prompts(fake_llm).items()}
    assert "The dimension you judge, source: MY SOURCES\n" in texts["source"]
    assert DIMENSIONS["source"]["rule"] not in texts["source"]  # written for the built-in definition
    assert "How language is decided when the debate ends: MY LANGUAGE RULE\n" in texts["language"]
    assert DIMENSIONS["language"]["definition"] in texts["language"]
    assert DIMENSIONS["argument"]["rule"] in texts["argument"]


def test_notes_have_no_length_unless_configured(fake_llm):
    fake_llm.responder = responder()
    judge(fake_llm)
    notes = [r.body for r in fake_llm.requests if not r.body.get("response_format")]
    assert len(notes) == 18
    for body in notes:
        text = body["messages"][0]["content"]
        assert "Plain-text notes: what this speech adds" in text and "at most" not in text
        assert body["max_tokens"] == NOTE_TOKENS
    fake_llm.clear()
    judge(fake_llm, {"note_length": 800})
    notes = [r.body for r in fake_llm.requests if not r.body.get("response_format")]
    assert all("Plain-text notes of at most 800 words:" in b["messages"][0]["content"] for b in notes)
    assert {b["max_tokens"] for b in notes} == {1600}
    fake_llm.clear()
    judge(fake_llm, {"note_length": 40})  # a short note's room is twice it, not the unset length's 1024 tokens
    assert {r.body["max_tokens"] for r in fake_llm.requests if not r.body.get("response_format")} == {80}


def test_a_tie_on_argument_is_refused_where_source_and_language_may_tie(fake_llm):
    fake_llm.responder = responder({"argument": "tie", "source": "tie", "language": "tie"})
    verdict = judge(fake_llm)
    assert verdict.failed and "no valid structured answer" in verdict.error
    argument = [r.body for r in fake_llm.requests if r.body.get("response_format")
                and dimension_of(r.body["messages"][0]["content"]) == "argument"]
    assert len(argument) > 1  # asked again after the tie, then given up
    assert all(len([r for r in fake_llm.requests if r.body.get("response_format")
                    and dimension_of(r.body["messages"][0]["content"]) == d]) == 1 for d in ("source", "language"))


@pytest.mark.parametrize("options, sent", [({}, 0.0), ({"temperature": 0.4}, 0.4)])
def test_the_temperature_is_the_reference_s_unless_configured(fake_llm, options, sent):
    fake_llm.responder = responder()
    judge(fake_llm, options)
    assert len(fake_llm.requests) == 22 and {r.body["temperature"] for r in fake_llm.requests} == {sent}


def test_a_tie_from_the_chair_and_the_dimensions_is_the_verdict(fake_llm):
    fake_llm.responder = responder({"argument": "pro", "source": "tie", "language": "tie"}, overall="tie")
    verdict = judge(fake_llm, {"overall_ties": True})
    assert not verdict.failed and verdict.overall == "tie"
    assert verdict.dimensions == {"argument": "pro", "source": "tie", "language": "tie"}
    assert "source: tie (PRO 7, CON 5)." in verdict.rationale  # a tie on a small lead: no contradiction


# Argument at weight 2 (never a tie) and PRO's points 2 + 1 level with CON's 1 + 2.
LEVEL = {"dimensions": {"argument": {"weight": 2}, "source": {}, "language": {}}, "summary": "rule"}
LEVEL_WINNERS = {"argument": "pro", "source": "tie", "language": "con"}


def test_rule_summary_ties_on_level_points(fake_llm):
    fake_llm.responder = responder(LEVEL_WINNERS)
    verdict = judge(fake_llm, {**LEVEL, "overall_ties": True})
    assert not any("chair of a panel" in r.body["messages"][0]["content"] for r in fake_llm.requests)
    assert verdict.overall == "tie" and "PRO 3, CON 3" in verdict.rationale


def test_rule_summary_without_ties_breaks_level_points_by_score_margins(fake_llm):
    fake_llm.responder = responder(LEVEL_WINNERS, scores=(5, 7))
    verdict = judge(fake_llm, LEVEL)  # overall ties are off by default
    assert not any("chair of a panel" in r.body["messages"][0]["content"] for r in fake_llm.requests)
    assert verdict.overall == "con"  # 3 points each; CON ahead on the weighted score margin, 3×2 − 2×2 − 2×2


def test_rule_summary_without_ties_asks_the_chair_when_points_and_margins_are_level(fake_llm):
    fake_llm.responder = responder(LEVEL_WINNERS, overall="con", scores=(6, 6))
    verdict = judge(fake_llm, LEVEL)
    chair = [r.body for r in fake_llm.requests if "chair of a panel" in r.body["messages"][0]["content"]]
    assert len(chair) == 1 and overall_enum(chair[0]) == ["pro", "con"]
    assert verdict.overall == "con" and "Level, and ties are off: the chair decided." in verdict.rationale


def test_dimensions_are_configuration(fake_llm):
    fake_llm.responder = responder({"ethics": "con"})
    options = {"dimensions": {"argument": {}, "ethics": {"definition": "fairness to affected groups", "weight": 5,
                                                         "ties": False}}, "summary": "rule"}
    verdict = judge(fake_llm, options)
    updates = [r.body["messages"][0]["content"] for r in fake_llm.requests if not r.body.get("response_format")]
    assert len(updates) == 12 and sum("fairness to affected groups" in u for u in updates) == 6
    assert verdict.dimensions == {"argument": "pro", "ethics": "con"} and verdict.overall == "con"


def test_runs_are_distinct_samples_even_with_the_cache_on(fake_llm, tmp_path):
    fake_llm.responder = responder()
    store = Store(tmp_path / "arena.db")
    judge(fake_llm, run=0, store=store)
    judge(fake_llm, run=1, store=store)
    assert len(fake_llm.requests) == 2 * 22
    judge(fake_llm, run=1, store=store)  # the same run again is a cache hit
    assert len(fake_llm.requests) == 2 * 22


def test_a_malformed_dimension_verdict_fails_the_run(fake_llm):
    base = responder()
    fake_llm.responder = lambda body: "not json" if body.get("response_format") else base(body)
    verdict = judge(fake_llm)
    assert verdict.failed and verdict.overall is None and "no valid structured answer" in verdict.error


@pytest.mark.parametrize("options, fragment", [
    ({"summary": "vote"}, "'llm' or 'rule'"),
    ({"dimensions": {"novelty": {}}}, "non-empty definition"),
    ({"dimensions": {"argument": {"weight": -1}}}, "weight of at least 0"),
    ({"dimensions": {"argument": {"weight": 0}}}, "at least one weight must be above 0"),
    ({"speed": 1}, "unknown option(s) speed"),
    ({"prompts": "/no/such/folder"}, "an existing folder"),
    ({"dimensions": {"argument": {"rule": 3}}}, "a rule given as a string"),
    ({"note_length": -1}, "an integer from 0 to 5000"),
])
def test_bad_options_are_user_errors(options, fragment):
    with pytest.raises(UserError, match=re.escape(fragment)):
        DebatrixJudge(JudgeSpec("dx", "debatrix", "offline/dx", "", 3, options))


def test_offline_debatrix_finds_the_stronger_side():
    from arena.gateway import offline

    speeches = tuple(Speech(stage, side, offline.prose(f"Motion: Cities should ban cars\n{k}",
                                                       1.5 if side == "pro" else -1.5,
                                                       __import__("random").Random(k), 14))
                     for k, (stage, side) in enumerate(ORDER))
    view = JudgeView(VIEW.motion, speeches)
    spec = JudgeSpec("dx", "debatrix", "offline/dx", "", 3, {})
    gateway = LLMGateway(LLMSettings(), None)
    wins = 0
    for run in range(20):
        handle = LLMHandle(gateway, ModelRef("offline/dx"), AgentLog(), match_id=None, sample=run)
        wins += asyncio.run(run_judge(DebatrixJudge(spec), view, handle, run)).overall == "pro"
    assert wins >= 16


def test_prompts_are_configuration(fake_llm, tmp_path):
    """A user's template replaces the built-in one of the same name; the others stay built in."""
    (tmp_path / "verdict.j2").write_text("MY VERDICT PROMPT for {{ dimension }}: {% for n in notes %}{{ n }} "
                                         "{% endfor %}")
    fake_llm.responder = lambda body: (json.dumps({"rationale": "r", "pro_score": 5, "con_score": 4, "winner": "pro"})
                                       if body.get("response_format") else "NOTE")
    verdict = judge(fake_llm, {"prompts": str(tmp_path), "summary": "rule"})
    prompts = [r.body["messages"][0]["content"] for r in fake_llm.requests]
    assert sorted(p for p in prompts if p.startswith("MY VERDICT")) == [
        f"MY VERDICT PROMPT for {d}: {'NOTE ' * 6}".strip() for d in ("argument", "language", "source")]
    assert sum("one dimension of judging" in p for p in prompts) == 18  # the built-in analysis prompt
    assert verdict.overall == "pro"


def test_bad_dimension_names_are_user_errors():
    for name, fragment in (("overall", "not overall, fact, value or policy"), ("policy", "one word"),
                           ("two words", "letters, digits, _ or -")):
        with pytest.raises(UserError, match=re.escape(fragment)):
            DebatrixJudge(JudgeSpec("dx", "debatrix", "offline/dx", "", 3,
                                    {"dimensions": {name: {"definition": "d"}}}))


def test_a_tie_verdict_is_stored_and_scored_half_to_each_side(tmp_path, fake_llm):
    """`arena run` with the judge on recorded requests: ties everywhere are stored, shown and scored 0.5/0.5."""
    from tests.support.helpers import TWO_OFFLINE, invoke, judge, mark_checked, new_workspace

    fake_llm.responder = responder({"argument": "tie", "source": "tie", "language": "tie"}, overall="tie")
    ties = {"dimensions": {"argument": {"ties": True}, "source": {}, "language": {}}, "overall_ties": True}
    path = mark_checked(new_workspace(tmp_path / "ws", entries=TWO_OFFLINE, judges=[
        judge("dx", "debatrix", "openai/dx", api_base=fake_llm.api_base, runs=3, options=ties)]))
    assert invoke("schedule", "--format", "round-robin", "-w", path).exit_code == 0
    ran = invoke("run", "-w", path)
    assert ran.exit_code == 0, ran.output
    summaries = [r.body for r in fake_llm.requests if "chair of a panel" in r.body["messages"][0]["content"]]
    assert summaries and all(overall_enum(b) == ["pro", "con", "tie"] for b in summaries)
    shown = json.loads(invoke("match", "show", "m00001", "--format", "json", "-w", path).output)
    assert [(v["overall"], v["dimensions"]) for v in shown["verdicts"]] == [
        ("tie", {"argument": "tie", "source": "tie", "language": "tie"})] * 3
    assert shown["score"] == {"pro": 1.5, "con": 1.5}
    exported = invoke("rate", "--format", "csv", "-w", path)
    assert exported.exit_code == 0, exported.output
    rows = [line.split(",") for line in exported.output.splitlines()[1:]]
    assert {(r[6], r[3], r[4]) for r in rows} == {(d, "1.5", "1.5") for d in ("overall", "argument", "source", "language")}
