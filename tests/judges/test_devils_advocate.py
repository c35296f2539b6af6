"""The devils_advocate judge against the loopback LLM: who is asked, in what order, and what each agent saw."""
from __future__ import annotations

import asyncio
import json
import re

import pytest

from arena.gateway import offline
from arena.domain import transcript
from arena.workspace.config import LLMSettings
from arena.base.errors import UserError
from arena.gateway.llm import LLMGateway
from arena.gateway.catalog import ModelRef
from arena.match.protocol import AgentLog, LLMHandle
from arena.domain.records import JudgeSpec, Motion, Speech
from arena.match.judging import JudgeView, run_judge
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
    """A scored verdict whose winners agree with its scores: argument goes to the overall winner, 8 to 3."""
    argument = {"pro": 8, "con": 3} if overall == "pro" else {"pro": 3, "con": 8}
    return {"rationale": f"{tag}-RATIONALE", "scores": {"argument": argument, "source": {"pro": 5, "con": 5},
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
    (("ISSUES", "NO_ISSUE"), {}, ["scorer", "critic", "scorer", "critic"], "Accepted by the critic after 2 reviews."),
    (("ISSUES", "ISSUES", "NO_ISSUE"), {"iterations": 3}, ["scorer"] + ["critic", "scorer"] * 2 + ["critic"],
     "Accepted by the critic after 3 reviews."),
    # The last objection is acted on too: n reviews, each answered by a revision (Algorithm 1).
    (("ISSUES",), {"iterations": 2}, ["scorer"] + ["critic", "scorer"] * 2,
     "The critic still objected after 2 reviews; the scorer's revision after the last review stands."),
    (("ISSUES",), {"iterations": 1}, ["scorer", "critic", "scorer"],
     "The critic still objected after 1 review; the scorer's revision after the last review stands."),
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


@pytest.mark.parametrize("iterations", [1, 3, 10])
def test_n_iterations_of_objections_cost_one_plus_two_n_calls(fake_llm, iterations):
    panel = Panel(("ISSUES",))
    judge_once(fake_llm, panel, iterations=iterations)
    assert len(fake_llm.requests) == 1 + 2 * iterations
    assert panel.agents == ["scorer"] + ["critic", "scorer"] * iterations


def test_every_objection_including_the_last_is_answered_by_a_revision(fake_llm):
    panel = Panel(("ISSUES",))
    judge_once(fake_llm, panel, iterations=3)
    first, *revisions = panel.prompts["scorer"]
    assert "CRITIC" not in first
    for k, revision in enumerate(revisions, 1):  # revision k answers critique k, of verdict k
        assert f"- CRITIC{k}-ISSUE" in revision and f"CRITIC{k}-ASSESSMENT" in revision
        assert f"Rationale: SCORER{k}-RATIONALE" in revision
    assert len(revisions) == 3


def test_a_tiebreaker_decides_when_the_critic_never_accepts(fake_llm):
    panel = Panel(("ISSUES",))
    result = judge_once(fake_llm, panel, iterations=2, tiebreaker=True)
    assert panel.agents == ["scorer", "critic", "scorer", "critic", "scorer", "tiebreaker"]
    assert (result.overall, result.dimensions["argument"]) == ("pro", "pro")  # the tie-breaker's, not SCORER3's con
    assert result.rationale == ("TIEBREAKER-RATIONALE\n\n"
                                "(The critic still objected after 2 reviews; a tie-breaker read the whole dialogue "
                                "and decided.)")


def test_the_tiebreaker_reads_every_verdict_and_critique_in_order(fake_llm):
    panel = Panel(("ISSUES",))
    judge_once(fake_llm, panel, iterations=3, tiebreaker=True)
    [prompt] = panel.prompts["tiebreaker"]
    assert transcript.render(VIEW.speeches) in prompt
    dialogue = ["SCORER1-RATIONALE", "CRITIC1-ASSESSMENT", "CRITIC1-ISSUE", "SCORER2-RATIONALE", "CRITIC2-ASSESSMENT",
                "CRITIC2-ISSUE", "SCORER3-RATIONALE", "CRITIC3-ASSESSMENT", "CRITIC3-ISSUE", "SCORER4-RATIONALE"]
    positions = [prompt.find(mark) for mark in dialogue]
    assert -1 not in positions and positions == sorted(positions), dict(zip(dialogue, positions))
    assert prompt.count("Overall winner: PRO") == 1 and prompt.count("Overall winner: CON") == 3
    labels = re.findall(r"^\[((?:Scorer|Critic): .+)\]$", prompt, re.MULTILINE)
    assert labels == ["Scorer: verdict 1", "Critic: review 1, of verdict 1",
                      "Scorer: verdict 2, revised after review 1", "Critic: review 2, of verdict 2",
                      "Scorer: verdict 3, revised after review 2", "Critic: review 3, of verdict 3",
                      "Scorer: verdict 4, revised after review 3"]


def test_the_revising_scorer_sees_its_previous_verdict_and_the_critique(fake_llm):
    panel = Panel(("ISSUES",))
    judge_once(fake_llm, panel, iterations=1)
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
    assert prompts.pop(None) == prompts["strict"]  # the default: DEBATE's critic criticises as much as it can
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
    read = transcript.render((VIEW.swapped() if run else VIEW).speeches)  # odd runs read the labels exchanged
    assert read in panel.prompts["scorer"][0] and read in panel.prompts["critic"][0]
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
        accepted = critiques[-1]["status"] == "NO_ISSUE"
        # Every objection is followed by a revision; only a standoff after the last review goes to the tie-breaker.
        expected = ["scorer"]
        for critique in critiques:
            expected += ["critic"] if critique["status"] == "NO_ISSUE" else ["critic", "scorer"]
        assert roles == expected + ([] if accepted else ["tiebreaker"])
        assert accepted or len(critiques) == 3
        wins += result.overall == "pro"
        reviews.append(len(critiques))
    assert wins >= 24
    assert len(set(reviews)) > 1  # some runs stopped at NO_ISSUE, others ran to the cap
