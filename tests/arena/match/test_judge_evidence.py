"""Runs that are evidence: swapped sides by default (mapped back, rationale included), verdicts that contradict
their own scores re-asked and then failed, the statistics that count both, and the warning of runs that can only
repeat one another. Checked on what the judges were sent (the fake OpenAI server's recorded requests)."""
from __future__ import annotations

import asyncio
import json
import random
import re

import pytest

from arena.gateway import offline
from arena.domain import transcript
from arena.workspace.config import LLMSettings
from arena.domain.contradictions import contradiction, contradicts
from arena.match.judging import COMMON_OPTIONS, JudgeView, exchange_sides, run_judge
from arena.gateway.llm import LLMGateway
from arena.gateway.catalog import ModelRef
from arena.match.protocol import AgentLog, LLMHandle
from arena.domain.records import DIMENSIONS, JudgeSpec, Motion, Speech
from arena.analysis.stats import identical_runs, judge_stats, self_contradictory
from judges.debatrix import DebatrixJudge, _verdict_schema, dimension_line
from judges.devils_advocate import DevilsAdvocateJudge, scored_verdict_schema
from tests.support.helpers import invoke, write_workspace
from tests.support.verdicts import judged

ORDER = [("constructive", "pro"), ("constructive", "con"), ("rebuttal", "pro"), ("rebuttal", "con"),
         ("summary", "con"), ("summary", "pro")]
VIEW = JudgeView(Motion("m", "Cities should ban cars", "policy"),
                 tuple(Speech(stage, side, f"SPEECH-{k} by {side}") for k, (stage, side) in enumerate(ORDER, 1)))


# --- the rule, and the sides' names exchanged -------------------------------------------------------------------

def test_a_winner_contradicts_its_scores_only_when_it_scored_strictly_lower():
    assert contradicts("pro", 7, 10) and contradicts("con", 9, 2)
    assert not contradicts("pro", 10, 7) and not contradicts("con", 2, 9)
    assert not contradicts("pro", 6, 6) and not contradicts("con", 6, 6)  # equal scores: either may win
    assert not contradicts("tie", 7, 5)  # the rules allow a tie on a small lead
    assert not contradicts(None, 1, 10)
    assert contradiction({"argument": "pro", "source": "tie"}, {"argument": (5, 5), "source": {"pro": 9, "con": 2}}) == ""
    problem = contradiction({"argument": "pro", "source": "con"}, {"argument": (8, 3), "source": {"pro": 6, "con": 4}})
    assert problem.startswith("self-contradiction: on source the winner is CON, yet CON scored 4 and PRO 6;")


def test_exchanging_the_sides_names_takes_whole_words_in_every_case_and_chinese():
    assert exchange_sides("PRO wins (PRO 7, CON 5). Pro's case; the con side; pro/constructive 3/1") == \
        "CON wins (CON 7, PRO 5). Con's case; the pro side; con/constructive 3/1"
    # Words that only contain the names, hyphenated words and model names stay as they are.
    text = "constructive professional contested pro-choice gemini-1.5-pro pros and cons"
    assert exchange_sides(text) == text
    assert exchange_sides("正方的论证更扎实，反方没有回应。") == "反方的论证更扎实，正方没有回应。"
    assert exchange_sides(exchange_sides("PRO and CON, 正方 and 反方")) == "PRO and CON, 正方 and 反方"


@pytest.mark.parametrize("language, line", [("en", "argument: PRO wins (PRO 7, CON 5)."),
                                            ("zh", "argument：正方胜（正方 7 分，反方 5 分）。")])
def test_a_debatrix_dimension_line_names_each_score_by_its_side_so_an_exchange_keeps_it_true(language, line):
    assert dimension_line({"dimension": "argument", "winner": "pro", "pro_score": 7, "con_score": 5}, language) == line
    exchanged = exchange_sides(line)  # what a swapped run's line says of the real sides
    assert ("CON wins" in exchanged or "反方胜" in exchanged) and ("CON 7" in exchanged or "反方 7 分" in exchanged)


def test_llm_judges_swap_sides_by_default():
    assert COMMON_OPTIONS["swap_sides"].default is True


# --- debatrix on the fake server ------------------------------------------------------------------------------

def dimension_of(text: str) -> str:
    return re.search(r"one dimension of judging: (\w+)", text).group(1)


def debatrix(fake_llm, answers, *, run: int = 0, options=None):
    """Run debatrix once; answers(dimension, n) is the n-th (from 1) verdict answer on that dimension."""
    asked: dict[str, int] = {}

    def respond(body: dict) -> str:
        text = body["messages"][0]["content"]
        if "chair of a panel" in text:
            return json.dumps({"rationale": "PRO took the heavier dimensions; CON's case fell short.", "overall": "pro"})
        dimension = dimension_of(text)
        if body.get("response_format"):
            asked[dimension] = asked.get(dimension, 0) + 1
            return json.dumps(answers(dimension, asked[dimension]))
        return f"NOTE<{dimension}> Standing: even."

    fake_llm.responder = respond
    spec = JudgeSpec("dx", "debatrix", "openai/dx", fake_llm.api_base, 3, options or {})
    handle = LLMHandle(LLMGateway(LLMSettings(backoff_s=0.01, cache=False), None),
                       ModelRef("openai/dx", fake_llm.api_base), AgentLog(), match_id=None, sample=run)
    return asyncio.run(run_judge(DebatrixJudge(spec), VIEW, handle, run))


def consistent(dimension: str, n: int = 1) -> dict:
    return {"rationale": f"On {dimension}, PRO did better than CON.", "pro_score": 7, "con_score": 5, "winner": "pro"}


def verdict_requests(fake_llm, dimension: str) -> list[dict]:
    return [r.body for r in fake_llm.requests if r.body.get("response_format")
            and "chair of a panel" not in r.body["messages"][0]["content"]
            and dimension_of(r.body["messages"][0]["content"]) == dimension]


def test_a_self_contradicting_dimension_verdict_is_asked_again_with_the_problem_named(fake_llm):
    def answers(dimension, n):
        if dimension == "argument" and n == 1:  # PRO named the winner with the lower score
            return {"rationale": "PRO wins the clash.", "pro_score": 4, "con_score": 9, "winner": "pro"}
        return consistent(dimension)

    verdict = debatrix(fake_llm, answers)
    first, again = verdict_requests(fake_llm, "argument")  # asked once more, and only on argument
    assert all(len(verdict_requests(fake_llm, d)) == 1 for d in ("source", "language"))
    said = again["messages"]
    assert said[1] == {"role": "assistant", "content": json.dumps(answers("argument", 1))}  # its own answer shown
    assert said[2]["role"] == "user" and said[2]["content"].startswith(
        "That answer cannot be used: self-contradiction: on argument the winner is PRO, yet PRO scored 4 and CON 9;")
    assert not verdict.failed and verdict.dimensions["argument"] == "pro"
    assert verdict.extra == {"scores": {"argument": [7, 5], "source": [7, 5], "language": [7, 5]}}
    assert "argument: PRO wins (PRO 7, CON 5)." in verdict.rationale


def test_a_tie_on_unequal_scores_is_not_a_contradiction(fake_llm):
    def answers(dimension, n):
        if dimension == "source":
            return {"rationale": "Close on sources.", "pro_score": 6, "con_score": 5, "winner": "tie"}
        return consistent(dimension)

    verdict = debatrix(fake_llm, answers)
    assert len(verdict_requests(fake_llm, "source")) == 1 and not verdict.failed
    assert verdict.dimensions["source"] == "tie" and "source: tie (PRO 6, CON 5)." in verdict.rationale


def test_a_verdict_that_keeps_contradicting_itself_is_a_failed_run_not_a_guess(fake_llm):
    def answers(dimension, n):
        if dimension == "language":
            return {"rationale": "CON spoke better.", "pro_score": 8, "con_score": 3, "winner": "con"}
        return consistent(dimension)

    verdict = debatrix(fake_llm, answers)
    assert len(verdict_requests(fake_llm, "language")) == LLMSettings().schema_retries + 1
    assert verdict.failed and verdict.overall is None and verdict.dimensions == {}
    assert "self-contradiction: on language the winner is CON, yet CON scored 3 and PRO 8" in verdict.error
    assert verdict.extra == {"self_contradiction": True}
    assert not any("chair of a panel" in r.body["messages"][0]["content"] for r in fake_llm.requests)
    assert self_contradictory(judged("m", "J", None, error=verdict.error, extra=verdict.extra))


def test_a_swapped_run_reads_the_sides_exchanged_and_its_verdict_and_rationale_are_mapped_back(fake_llm):
    """Run 1 with the default swap_sides: the judge reads Pro's speeches labelled CON, answers "pro" for the label it
    saw, and the stored verdict names the real sides throughout: outcomes, scores and rationale."""
    def answers(dimension, n):
        return {"rationale": "PRO's case held and CON dropped its main point.", "pro_score": 8, "con_score": 3,
                "winner": "pro"}

    verdict = debatrix(fake_llm, answers, run=1)
    analyses = [r.body["messages"][0]["content"] for r in fake_llm.requests if not r.body.get("response_format")]
    first = [transcript.split(text) for text in analyses if "This is speech 1 of 6" in text]
    assert first and all(blocks == [("con", "constructive", "SPEECH-1 by pro")] for blocks in first)
    assert verdict.overall == "con" and verdict.dimensions == {"argument": "con", "source": "con", "language": "con"}
    assert verdict.extra == {"scores": {d: [3, 8] for d in ("argument", "source", "language")}, "swapped": True}
    assert verdict.rationale.startswith("CON took the heavier dimensions; PRO's case fell short.")
    assert "argument: CON wins (CON 8, PRO 3). CON's case held and PRO dropped its main point." in verdict.rationale
    assert not re.search(r"\bPRO wins\b", verdict.rationale)


def test_a_swapped_run_that_fails_on_a_contradiction_names_the_real_sides(fake_llm):
    def answers(dimension, n):
        if dimension == "argument":
            return {"rationale": "PRO.", "pro_score": 2, "con_score": 9, "winner": "pro"}  # PRO as labelled: real CON
        return consistent(dimension)

    verdict = debatrix(fake_llm, answers, run=1)
    assert verdict.failed and verdict.extra == {"swapped": True, "self_contradiction": True}
    assert "on argument the winner is CON, yet CON scored 2 and PRO 9" in verdict.error


def test_without_swap_sides_odd_runs_read_the_debate_as_it_was_held(fake_llm):
    verdict = debatrix(fake_llm, consistent, run=1, options={"swap_sides": False})
    analyses = [r.body["messages"][0]["content"] for r in fake_llm.requests if not r.body.get("response_format")]
    assert all(transcript.split(t) == [("pro", "constructive", "SPEECH-1 by pro")]
               for t in analyses if "This is speech 1 of 6" in t)
    assert verdict.overall == "pro" and "swapped" not in verdict.extra


# --- the devil's advocate's scorer ----------------------------------------------------------------------------

def scored(overall: str, argument: tuple[int, int]) -> dict:
    return {"rationale": f"{overall.upper()} argued better.",
            "scores": {"argument": {"pro": argument[0], "con": argument[1]}, "source": {"pro": 5, "con": 5},
                       "language": {"pro": 5, "con": 5}},
            "argument": overall, "source": "tie", "language": "tie", "overall": overall}


def devils_advocate(fake_llm, scorer_answers):
    told = {"scorer": 0}

    def respond(body: dict) -> str:
        prompt = body["messages"][0]["content"]
        if re.search(r"^You are the scorer", prompt, re.MULTILINE):
            told["scorer"] += 1
            return json.dumps(scorer_answers(told["scorer"]))
        return json.dumps({"assessment": "Fine.", "issues": [], "status": "NO_ISSUE"})

    fake_llm.responder = respond
    spec = JudgeSpec("da", "devils_advocate", "openai/x", fake_llm.api_base, 3, {})
    handle = LLMHandle(LLMGateway(LLMSettings(backoff_s=0.01, cache=False), None),
                       ModelRef("openai/x", fake_llm.api_base), AgentLog(), match_id=None, sample=0)
    return asyncio.run(run_judge(DevilsAdvocateJudge(spec), VIEW, handle, 0))


def test_the_scorer_is_asked_again_when_a_dimension_winner_contradicts_its_scores(fake_llm):
    verdict = devils_advocate(fake_llm, lambda n: scored("pro", (3, 8) if n == 1 else (8, 3)))
    again = next(r.body["messages"] for r in fake_llm.requests if len(r.body["messages"]) == 3)
    assert "self-contradiction: on argument the winner is PRO, yet PRO scored 3 and CON 8" in again[2]["content"]
    assert not verdict.failed and verdict.overall == "pro"
    assert verdict.extra == {"scores": {"argument": [8, 3], "source": [5, 5], "language": [5, 5]}}


def test_a_scorer_that_keeps_contradicting_itself_fails_the_run(fake_llm):
    verdict = devils_advocate(fake_llm, lambda n: scored("con", (9, 1)))
    assert verdict.failed and verdict.extra == {"self_contradiction": True}
    assert "on argument the winner is CON, yet CON scored 1 and PRO 9" in verdict.error


# --- the simulator's judges ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("motion", ["Motion: Cities should ban cars", "辩题：城市应当禁止私家车"])
def test_the_simulator_s_scored_verdicts_agree_with_their_winners_and_name_them(motion):
    speeches = "\n".join(f"=== {side.upper()} ===\n" + offline.prose(motion, 1.0 if side == "pro" else -1.0,
                                                                       random.Random(k), 6)
                         for k, (_, side) in enumerate(ORDER))
    prompt = f"{motion}\n{speeches}"
    for sample in range(60):
        for ties in (True, False):
            text, _, _ = offline.respond("offline/dx", 0.0, [{"role": "user", "content": prompt}],
                                         schema=_verdict_schema(ties), sample=sample, judging=True)
            data = json.loads(text)
            assert not contradicts(data["winner"], data["pro_score"], data["con_score"]), data
            names = {"pro": ("PRO", "正方"), "con": ("CON", "反方")}.get(data["winner"])
            assert names is None or any(name in data["rationale"] for name in names), data
        text, _, _ = offline.respond("offline/da", 0.0, [{"role": "user", "content": prompt}],
                                     schema=scored_verdict_schema(False), sample=sample, judging=True)
        data = json.loads(text)
        assert contradiction({d: data[d] for d in DIMENSIONS}, data["scores"]) == "", data


# --- the statistics -----------------------------------------------------------------------------------------------

def row(match_id, overall, *, run=0, rationale="r", dimensions=None, extra=None, error=None, judge="J"):
    return judged(match_id, judge, overall, run=run, error=error, dimensions=dimensions, rationale=rationale,
                  extra=extra)


def test_identical_runs_is_the_share_of_judged_matches_whose_runs_all_said_the_same():
    rows = [row("m1", "pro", run=0), row("m1", "pro", run=1), row("m1", "pro", run=2),           # identical
            row("m2", "pro", run=0), row("m2", "pro", run=1, rationale="other words"),           # rationale differs
            row("m3", "pro", run=0, dimensions={"argument": "pro"}),
            row("m3", "pro", run=1, dimensions={"argument": "tie"}),                             # a dimension differs
            row("m4", "pro", run=0), row("m4", None, run=1, error="timeout"),                    # failed: not judged
            row("m5", "con", run=0)]                                                             # R = 1: left out
    out = judge_stats(rows, [])["judges"][0]
    assert out["identical_runs"] == pytest.approx(1 / 3)
    assert identical_runs({"m5": [row("m5", "con")]}) is None


def test_self_contradictions_count_stored_scores_against_their_winners_and_failed_runs():
    rows = [row("m1", "pro", dimensions={"argument": "pro"}, extra={"scores": {"argument": [7, 5]}}),
            row("m2", "pro", dimensions={"argument": "pro", "source": "tie"},
                extra={"scores": {"argument": [4, 9], "source": [6, 5]}}),                       # argument contradicts
            row("m3", None, error="openai/x: no valid structured answer after 3 tries: self-contradiction: on "
                                  "argument the winner is PRO, yet PRO scored 4 and CON 9; ...",
                extra={"self_contradiction": True}),
            row("m4", None, error="openai/x: no valid structured answer after 3 tries: 'overall' is a required "
                                  "property"),
            row("m5", "con", dimensions={"argument": "con"}),                                    # no scores
            # An imported source's scores under names of its own, single numbers: no pair to hold a winner to.
            row("m6", "con", extra={"scores": {"argument_strength_pro": 9, "argument_strength_con": 2}})]
    assert [self_contradictory(r) for r in rows] == [False, True, True, False, False, False]
    assert judge_stats(rows, [])["judges"][0]["self_contradictions"] == 2


# --- runs that can only repeat one another --------------------------------------------------------------------

WARNING = "warning: judge 'j1' (single judge): its 3 runs can only repeat one another"


@pytest.mark.parametrize("options, warned", [({"swap_sides": False}, True), ({}, False),
                                             ({"swap_sides": False, "temperature": 0.7}, False)])
def test_check_warns_once_of_a_judge_whose_runs_can_only_repeat_one_another(tmp_path, fake_llm, options, warned):
    fake_llm.responder = lambda body: '{"word": "ready"}' if body.get("response_format") else "ready"
    path = write_workspace(tmp_path / "ws", fake_llm.api_base, options=options)
    result = invoke("check", "-w", path, "--format", "json")
    assert result.exit_code == 0, result.output
    assert [r["name"] for r in json.loads(result.stdout)] == ["alpha", "beta", "j1"]  # stdout: the rows alone
    assert result.stderr.count(WARNING) == (1 if warned else 0), result.stderr
    if warned:
        assert "set swap_sides = true in its [judges.options]" in result.stderr


def test_run_warns_once_at_its_start(tmp_path, fake_llm):
    from arena.app import commands as app
    from arena.app.runner import runs
    from arena.app.commands import open_workspace

    fake_llm.responder = lambda body: "x"  # the matches' fate does not matter: the warning comes first
    ws = open_workspace(write_workspace(tmp_path / "ws", fake_llm.api_base, options={"swap_sides": False},
                                        retries=0))
    try:
        app.schedule(ws, "round-robin", rounds=1)
        lines: list[str] = []
        runs.run(ws, concurrency=1, progress=lines.append)
        assert sum(WARNING in line for line in lines) == 1 and lines[0].startswith(WARNING)
    finally:
        ws.close()


def test_the_simulator_and_people_are_never_warned_of(tmp_path):
    from arena.app.runner.check import repeating_judges
    from arena.app.commands import open_workspace
    from tests.support.helpers import judge, new_workspace, people

    path = new_workspace(tmp_path / "ws", judges=[judge("sim", runs=3, options={"swap_sides": False}),
                                                  people("experts", "ann", "bo")], motions=["builtin:en"])
    ws = open_workspace(path)
    try:
        assert repeating_judges(ws) == []
    finally:
        ws.close()
