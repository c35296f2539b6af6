"""The devils_advocate judge against the loopback LLM: who is asked, in what order, and what each agent saw."""
from __future__ import annotations

import asyncio
import json
import re

import pytest

from arena import offline, transcript
from arena.config import LLMSettings
from arena.errors import UserError
from arena.llm import LLMGateway, ModelRef
from arena.protocol import AgentLog, LLMHandle
from arena.records import JudgeSpec, Motion, Speech
from arena.judging import JudgeView, run_judge
from judges.devils_advocate import DevilsAdvocateJudge
from judges.registry import JUDGES

MOTION = Motion("m1", "Cities should ban private cars from their centres", "policy")
ORDER = (("constructive", "pro"), ("constructive", "con"), ("rebuttal", "pro"), ("rebuttal", "con"),
         ("summary", "con"), ("summary", "pro"))
VIEW = JudgeView(MOTION, tuple(Speech(stage, side, f"SPEECH<{side}|{stage}> Our case stands.") for stage, side in ORDER))
AGENTS = {"scorer": "scorer", "tie-breaker": "tiebreaker", "devil's advocate": "critic",
          "critical reviewer": "critic", "neutral reviewer": "critic"}


def agent_of(prompt: str) -> str:
    """Which panel member a request is for, read off its profile."""
    return AGENTS[re.search(r"^You are (?:the|a) (.+?) on a debate adjudication panel", prompt, re.MULTILINE).group(1)]


def verdict(tag: str, overall: str) -> dict:
    return {"rationale": f"{tag}-RATIONALE", "scores": {"argument": {"pro": 8, "con": 3}, "source": {"pro": 5, "con": 5},
                                                        "language": {"pro": 4, "con": 6}},
            "argument": overall, "source": "tie", "language": "con", "overall": overall}


class Panel:
    """Scripted agents: the n-th scorer answer is SCORER<n> (PRO, then CON on revisions); the critic's
    statuses come from a script whose last entry repeats. Keeps each agent's prompts in order."""

    def __init__(self, statuses=("ISSUES",), *, critic_reply: str | None = None):
        self.statuses = statuses
        self.critic_reply = critic_reply
        self.prompts: dict[str, list[str]] = {"scorer": [], "critic": [], "tiebreaker": []}
        self.agents: list[str] = []

    def __call__(self, body: dict) -> str:
        prompt = body["messages"][0]["content"]
        agent = agent_of(prompt)
        self.agents.append(agent)
        self.prompts[agent].append(prompt)
        n = len(self.prompts[agent])
        if agent == "scorer":
            return json.dumps(verdict(f"SCORER{n}", "pro" if n == 1 else "con"))
        if agent == "tiebreaker":
            return json.dumps(verdict("TIEBREAKER", "pro"))
        if self.critic_reply is not None:
            return self.critic_reply
        status = self.statuses[min(n, len(self.statuses)) - 1]
        return json.dumps({"assessment": f"CRITIC{n}-ASSESSMENT",
                           "issues": [] if status == "NO_ISSUE" else [f"CRITIC{n}-ISSUE"], "status": status})


def judge(**options) -> DevilsAdvocateJudge:
    return DevilsAdvocateJudge(JudgeSpec("da", "devils_advocate", "openai/x", options=options))


def judge_once(fake_llm, panel: Panel, view: JudgeView = VIEW, run: int = 0, **options):
    fake_llm.responder = panel
    log = AgentLog()
    llm = LLMHandle(LLMGateway(LLMSettings(backoff_s=0.01, cache=False), None), ModelRef("openai/x", fake_llm.api_base),
                    log, match_id=None, sample=run)
    result = asyncio.run(run_judge(judge(**options), view, llm, run))
    if not result.failed:  # failed calls are not logged; the rest are tagged with the agent their prompt addressed
        assert [m["role"] for m in log.messages] == panel.agents
    return result


def test_the_kind_is_registered():
    assert JUDGES.get("devils_advocate") is DevilsAdvocateJudge


@pytest.mark.parametrize("statuses, options, agents, note", [
    (("NO_ISSUE",), {"tiebreaker": True}, ["scorer", "critic"], "Accepted by the critic after 1 review."),
    (("ISSUES", "NO_ISSUE"), {}, ["scorer", "critic"] * 2, "Accepted by the critic after 2 reviews."),
    (("ISSUES",), {"iterations": 2}, ["scorer", "critic"] * 2,
     "The critic still objected after 2 reviews; the scorer's last verdict stands."),
    (("ISSUES",), {"iterations": 1}, ["scorer", "critic"],
     "The critic still objected after 1 review; the scorer's last verdict stands."),
])
def test_the_loop_stops_at_no_issue_or_after_the_iterations(fake_llm, statuses, options, agents, note):
    panel = Panel(statuses)
    result = judge_once(fake_llm, panel, temperature=0.3, **options)
    assert panel.agents == agents
    last = len(panel.prompts["scorer"])  # the scorer's last verdict is the decision
    assert (result.overall, result.dimensions) == ("pro" if last == 1 else "con",
                                                   {"argument": result.overall, "source": "tie", "language": "con"})
    assert result.rationale == f"SCORER{last}-RATIONALE\n\n({note})"
    assert all(body["temperature"] == 0.3 for body in fake_llm.bodies)


def test_a_tiebreaker_decides_when_the_critic_never_accepts(fake_llm):
    panel = Panel(("ISSUES",))
    result = judge_once(fake_llm, panel, iterations=2, tiebreaker=True)
    assert panel.agents == ["scorer", "critic", "scorer", "critic", "tiebreaker"]
    assert (result.overall, result.dimensions["argument"]) == ("pro", "pro")  # the tie-breaker's, not SCORER2's con
    assert result.rationale == ("TIEBREAKER-RATIONALE\n\n"
                                "(The critic still objected after 2 reviews; a tie-breaker decided.)")
    [prompt] = panel.prompts["tiebreaker"]
    assert transcript.render(VIEW.speeches) in prompt
    assert "Rationale: SCORER2-RATIONALE" in prompt and "Overall winner: CON" in prompt
    assert "CRITIC2-ISSUE" in prompt and "CRITIC2-ASSESSMENT" in prompt
    assert "SCORER1" not in prompt and "CRITIC1" not in prompt  # only the standoff, not the whole history


def test_the_revising_scorer_sees_its_previous_verdict_and_the_critique(fake_llm):
    panel = Panel(("ISSUES",))
    judge_once(fake_llm, panel, iterations=2)
    first, revision = panel.prompts["scorer"]
    assert transcript.render(VIEW.speeches) in first and transcript.render(VIEW.speeches) in revision
    assert "Rationale: SCORER1-RATIONALE" in revision
    assert "argument PRO 8, CON 3; source PRO 5, CON 5; language PRO 4, CON 6" in revision
    assert "Overall winner: PRO" in revision
    assert "- CRITIC1-ISSUE" in revision and "CRITIC1-ASSESSMENT" in revision
    assert "SCORER1" not in first and "CRITIC" not in first


def test_the_critic_reviews_the_current_verdict_against_the_transcript(fake_llm):
    panel = Panel(("ISSUES",))
    judge_once(fake_llm, panel, iterations=2)
    first, second = panel.prompts["critic"]
    for prompt, current in ((first, "SCORER1"), (second, "SCORER2")):
        assert transcript.render(VIEW.speeches) in prompt
        assert f"Rationale: {current}-RATIONALE" in prompt
    assert "Overall winner: PRO" in first and "Overall winner: CON" in second
    # A re-review sees its own earlier objections, so it can tell whether they were answered.
    assert "CRITIC1-ISSUE" in second and "previous review" not in first and "SCORER1" not in second


WORDING = {"strict": "find every flaw in it, however small, and argue for the opposite verdict as hard as you can",
           "moderate": "challenge the main weaknesses",
           "weak": "raise only serious issues",
           "plain": "taking neither side's part and arguing for no particular outcome"}


def test_each_intensity_words_the_critic_differently(fake_llm):
    prompts = {}
    for intensity in [*WORDING, None]:
        panel = Panel(("NO_ISSUE",))
        judge_once(fake_llm, panel, **({"intensity": intensity} if intensity else {}))
        prompts[intensity] = panel.prompts["critic"][0]
    assert prompts.pop(None) == prompts["moderate"]  # the default
    assert len(set(prompts.values())) == 4
    for intensity, prompt in prompts.items():
        assert [phrase in prompt for phrase in WORDING.values()] == [i == intensity for i in WORDING]


@pytest.mark.parametrize("options, named", [
    ({"intensity": "brutal"}, "intensity = 'brutal': expected one of strict, moderate, weak, plain"),
    ({"iterations": 0}, "iterations = 0"),
    ({"iterations": 2.5}, "iterations = 2.5"),
    ({"iterations": True}, "iterations = True"),
    ({"tiebreaker": "yes"}, "tiebreaker = 'yes'"),
    ({"rounds": 3}, "unknown option(s) rounds"),
])
def test_bad_options_are_user_errors_naming_the_judge_and_the_option(options, named):
    with pytest.raises(UserError) as error:
        judge(**options)
    assert str(error.value).startswith("judge 'da' (devils_advocate judge): ")
    assert named in str(error.value)


def test_a_malformed_critique_becomes_a_failed_verdict(fake_llm):
    panel = Panel(critic_reply='{"status": "FINE"}')
    result = judge_once(fake_llm, panel, tiebreaker=True)
    assert result.failed and result.overall is None and result.dimensions == {}
    assert "no valid structured answer after 3 tries" in result.error
    assert panel.agents == ["scorer", "critic", "critic", "critic"]  # re-asked, then given up: nothing guessed


@pytest.mark.parametrize("run, overall", [(0, "pro"), (1, "con")])
def test_swapped_runs_are_mapped_back(fake_llm, run, overall):
    panel = Panel(("NO_ISSUE",))
    result = judge_once(fake_llm, panel, run=run, swap_sides=True)
    shown = "CON" if run else "PRO"  # the label the original pro side's speech was read under
    assert f"[{shown} · constructive]\nSPEECH<pro|constructive>" in panel.prompts["scorer"][0]
    assert f"[{shown} · constructive]\nSPEECH<pro|constructive>" in panel.prompts["critic"][0]
    # The scorer said PRO/tie/CON for the labels it saw.
    assert (result.overall, result.dimensions) == (overall, {"argument": overall, "source": "tie",
                                                             "language": "pro" if run else "con"})


def test_offline_the_much_stronger_side_wins_and_every_run_ends_within_the_cap():
    prompt = [{"role": "user", "content": f"Motion: {MOTION.text}\nWrite."}]
    strengths = {"pro": 1.5, "con": -1.5}
    speeches = tuple(Speech(stage, side, offline.respond(f"offline/{side}", strengths[side], prompt, role="writer",
                                                         stage=stage)[0]) for stage, side in ORDER)
    gateway = LLMGateway(LLMSettings(cache=False), None)
    da = judge(iterations=3, tiebreaker=True)
    wins, reviews = 0, []
    for run in range(30):
        log = AgentLog()
        result = asyncio.run(run_judge(da, JudgeView(MOTION, speeches), LLMHandle(
            gateway, ModelRef("offline/d"), log, match_id=None, sample=run), run))
        roles = [m["role"] for m in log.messages]
        critiques = [json.loads(m["response"]) for m in log.messages if m["role"] == "critic"]
        assert not result.failed and 1 <= len(critiques) <= 3
        assert roles[:2 * len(critiques)] == ["scorer", "critic"] * len(critiques)
        accepted = critiques[-1]["status"] == "NO_ISSUE"
        assert roles[2 * len(critiques):] == ([] if accepted else ["tiebreaker"])
        wins += result.overall == "pro"
        reviews.append(len(critiques))
    assert wins >= 24
    assert len(set(reviews)) > 1  # some runs stopped at NO_ISSUE, others ran to the cap
