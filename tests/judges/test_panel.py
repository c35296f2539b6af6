"""The panel judge (ChatEval), checked on what each referee and the summarizer received over HTTP."""
from __future__ import annotations

import asyncio
import json
import re
import threading

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
from judges.panel import PERSONAS
from judges.registry import JUDGES
from tests.support.helpers import VERDICT

STRATEGIES = ("one_by_one", "simultaneous_talk", "simultaneous_talk_with_summarizer")
MOTION = Motion("m-1", "Lighthouses should be fully automated", "policy")
VIEW = JudgeView(MOTION, (
    Speech("constructive", "pro", "PRO-OPENING-KESTREL: automation saves keepers' lives."),
    Speech("constructive", "con", "CON-OPENING-MARMOT: keepers do more than tend the lamp."),
    Speech("rebuttal", "pro", "PRO-REBUTTAL-HERON: the extra duties are done better by coastguards."),
    Speech("rebuttal", "con", "CON-REBUTTAL-BADGER: coastguards are hours away."),
    Speech("summary", "con", "CON-SUMMARY-OTTER: presence matters in emergencies."),
    Speech("summary", "pro", "PRO-SUMMARY-FALCON: lives saved outweigh rare rescues."),
))
MODEL = "openai/zebra-judge-model"  # a name no prompt may contain


class FakePanel:
    """Answers each referee as itself (found by the number its profile gives it) and keeps every prompt it got.

    Discussion messages are "MSG<r{referee},t{turn}>", summaries "SUMMARY<t{turn}>", so a prompt's
    MSG/SUMMARY marks say exactly which earlier messages its caller was shown.
    """

    def __init__(self, votes=None, malformed=False):
        self.votes, self.malformed = votes or {}, malformed
        self.said: dict[tuple[int, int], str] = {}  # (referee, turn) -> discussion prompt
        self.voted: dict[int, str] = {}  # referee -> verdict prompt
        self.summarized: dict[int, str] = {}  # turn -> summarizer prompt
        self.lock = threading.Lock()

    def __call__(self, body: dict) -> str:
        prompt = body["messages"][0]["content"]
        caller = re.search(r"^You are Referee (\d+)", prompt, re.MULTILINE)
        with self.lock:
            if caller is None:  # the summarizer is the one caller that is not a referee
                turn = int(re.search(r"turn (\d+) of \d+ has just ended", prompt).group(1))
                self.summarized[turn] = prompt
                return f"SUMMARY<t{turn}> The referees disagree about the coastguard clash."
            referee = int(caller.group(1))
            if body.get("response_format"):
                self.voted[referee] = prompt
                return "{not json" if self.malformed else json.dumps(self.votes.get(referee, VERDICT))
            turn = int(re.search(r"discussion turn (\d+) of", prompt).group(1))
            self.said[referee, turn] = prompt
            return f"MSG<r{referee},t{turn}> Referee {referee} weighs the rescue evidence."


def heard(prompt: str) -> set[tuple[int, int]]:
    """The (referee, turn) of every discussion message shown in a prompt."""
    return {(int(r), int(t)) for r, t in re.findall(r"MSG<r(\d+),t(\d+)>", prompt)}


def judge_once(fake_llm, panel, *, view=VIEW, model=MODEL, run=0, **options):
    fake_llm.responder = panel
    judge = JUDGES.get("panel")(JudgeSpec("p1", "panel", model, options=options))
    gateway = LLMGateway(LLMSettings(backoff_s=0.01, cache=False, schema_retries=1), store=None)
    log = AgentLog()
    llm = LLMHandle(gateway, ModelRef(model, fake_llm.api_base), log, match_id=None, sample=run)
    return asyncio.run(run_judge(judge, view, llm, run)), log


ALL = {(r, t) for r in (1, 2, 3) for t in (1, 2)}
# Where a referee is told which messages of the discussion are its own (after the discussion, which all share).
OWN = re.compile(r"^Your own messages in the discussion above are those labelled (.+)\.$", re.MULTILINE)


def test_one_by_one_referees_see_everything_said_before_them_this_turn_included(fake_llm):
    panel = FakePanel()
    judge_once(fake_llm, panel, strategy="one_by_one")
    assert heard(panel.said[1, 1]) == set()
    assert heard(panel.said[2, 1]) == {(1, 1)}
    assert heard(panel.said[3, 1]) == {(1, 1), (2, 1)}
    assert heard(panel.said[1, 2]) == {(1, 1), (2, 1), (3, 1)}
    assert heard(panel.said[3, 2]) == {(1, 1), (2, 1), (3, 1), (1, 2), (2, 2)}
    assert all(heard(prompt) == ALL for prompt in panel.voted.values()) and len(panel.voted) == 3


def test_simultaneous_talk_shows_only_earlier_turns(fake_llm):
    panel = FakePanel()
    judge_once(fake_llm, panel, strategy="simultaneous_talk")
    for (referee, turn), prompt in panel.said.items():
        assert heard(prompt) == {(r, t) for r, t in ALL if t < turn}, (referee, turn)
    assert all(heard(prompt) == ALL for prompt in panel.voted.values()) and len(panel.voted) == 3


def test_the_summarizer_condenses_the_whole_discussion_so_far_and_replaces_its_messages(fake_llm):
    panel = FakePanel()
    judge_once(fake_llm, panel, strategy="simultaneous_talk_with_summarizer", turns=3)
    assert sorted(panel.summarized) == [1, 2, 3]
    for turn, prompt in panel.summarized.items():  # ChatEval's buffer keeps every turn's messages
        assert heard(prompt) == {(r, t) for r in (1, 2, 3) for t in range(1, turn + 1)}, turn
        assert "SUMMARY<" not in prompt
    third = panel.summarized[3]
    marks = [third.index(f"MSG<r{r},t{t}>") for t in (1, 2, 3) for r in (1, 2, 3)]
    assert marks == sorted(marks)  # oldest first
    for r, name in enumerate(("debate adjudicator", "research librarian", "communication coach"), 1):
        assert f"[Referee {r} ({name}) · turn 1]\nMSG<r{r},t1>" in third
    for referee in (1, 2, 3):
        assert "SUMMARY<" not in panel.said[referee, 1]
        assert "SUMMARY<t1>" in panel.said[referee, 2] and heard(panel.said[referee, 2]) == set()
        third_turn = panel.said[referee, 3]
        assert "SUMMARY<t1>" in third_turn and "SUMMARY<t2>" in third_turn and heard(third_turn) == set()
        assert "[Clerk's summary of the whole discussion up to the end of turn 2]\nSUMMARY<t2>" in third_turn
        vote = panel.voted[referee]
        assert all(f"SUMMARY<t{t}>" in vote for t in (1, 2, 3)) and heard(vote) == set()


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_calls_roles_and_temperature(fake_llm, strategy):
    personas = [f"You are panellist number {k}, a careful reader." for k in range(1, 5)]
    panel = FakePanel()
    verdict, log = judge_once(fake_llm, panel, strategy=strategy, turns=3, personas=personas, temperature=0.3)
    summaries = 3 if strategy.endswith("summarizer") else 0
    assert verdict.overall == "pro" and not verdict.failed
    assert len(fake_llm.requests) == 4 * 3 + 4 + summaries
    assert all(r.body["temperature"] == 0.3 for r in fake_llm.requests)
    calls = {role: usage.calls for (_, _, role), usage in log.usage.items()}
    expected = {f"referee-{k}": 3 + 1 for k in range(1, 5)} | ({"summarizer": 3} if summaries else {})
    assert calls == expected


def vote(rationale, argument, source, language, overall):
    return {"rationale": rationale, "argument": argument, "source": source, "language": language, "overall": overall}


def test_majority_vote_per_dimension_and_overall(fake_llm):
    panel = FakePanel(votes={1: vote("R1-REASON", "pro", "tie", "con", "pro"),
                             2: vote("R2-REASON", "pro", "con", "con", "pro"),
                             3: vote("R3-REASON", "con", "pro", "tie", "con")})
    verdict, _ = judge_once(fake_llm, panel)
    assert verdict.overall == "pro"
    assert dict(verdict.dimensions) == {"argument": "pro", "source": "tie", "language": "con"}
    assert verdict.rationale.startswith("2-1 for PRO")
    assert [verdict.rationale.index(f"R{k}-REASON") for k in (1, 2, 3)] == sorted(
        verdict.rationale.index(f"R{k}-REASON") for k in (1, 2, 3))


def test_no_strict_majority_or_a_majority_for_tie_is_a_tie(fake_llm):
    panel = FakePanel(votes={1: vote("a", "tie", "con", "pro", "pro"),
                             2: vote("b", "tie", "con", "tie", "con"),
                             3: vote("c", "pro", "con", "pro", "tie")})
    verdict, _ = judge_once(fake_llm, panel, overall_ties=True)
    assert verdict.overall == "tie"
    assert dict(verdict.dimensions) == {"argument": "tie", "source": "con", "language": "pro"}
    assert verdict.rationale.startswith("no majority")


def test_built_in_personas_are_distinct_and_each_referee_gets_its_own(fake_llm):
    assert len(PERSONAS) >= 5 and len({p.text for p in PERSONAS}) == len({p.name for p in PERSONAS}) == len(PERSONAS)
    panel = FakePanel()
    judge_once(fake_llm, panel, referees=len(PERSONAS), turns=1)
    assert sorted(panel.voted) == list(range(1, len(PERSONAS) + 1))
    for referee, persona in enumerate(PERSONAS, 1):
        for prompt in (panel.said[referee, 1], panel.voted[referee]):
            assert f"You are Referee {referee} ({persona.name}) on a panel of {len(PERSONAS)}" in prompt
            assert [p for p in PERSONAS if p.text in prompt] == [persona]


def test_custom_personas_set_the_panel_size(fake_llm):
    personas = [f"You are judge-persona-{k}." for k in range(7)]
    panel = FakePanel()
    judge_once(fake_llm, panel, personas=personas, turns=1)
    assert sorted(panel.voted) == list(range(1, 8))
    for referee, persona in enumerate(personas, 1):
        assert [p for p in personas if p in panel.voted[referee]] == [persona]
        assert f"You are Referee {referee} on a panel of 7" in panel.voted[referee]


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_identical_personas_are_allowed_and_the_discussion_tells_the_referees_apart(fake_llm, strategy):
    # ChatEval's same-role ablation (its Table 3): every referee gets one brief, and only its number differs.
    same = "You are an annotator, one of the referees of this debate."
    panel = FakePanel()
    verdict, _ = judge_once(fake_llm, panel, strategy=strategy, personas=[same] * 3)
    assert not verdict.failed and sorted(panel.voted) == [1, 2, 3]
    for referee in (1, 2, 3):
        prompt = panel.voted[referee]
        assert f"You are Referee {referee} on a panel of 3 judging a competitive debate. {same}" in prompt
        assert prompt.count(same) == 1
        assert "- Referee 1\n- Referee 2\n- Referee 3\n" in prompt and "(you)" not in prompt
    if strategy == "simultaneous_talk_with_summarizer":
        assert "[Referee 2 · turn 2]\nMSG<r2,t2>" in panel.summarized[2]
        assert not any(OWN.search(prompt) for prompt in panel.voted.values())  # its history holds summaries only
        return
    # Each message is labelled with its speaker's number, the same for every reader (so the discussion is a prefix
    # that all the panel's later prompts share), and after it each reader is told which messages are its own.
    later = panel.said[3, 2]
    for r in (1, 2, 3):
        assert f"[Referee {r} · turn 1]\nMSG<r{r},t1>" in later
    assert OWN.findall(later) == ["Referee 3"]
    assert all(OWN.findall(panel.voted[referee]) == [f"Referee {referee}"] for referee in (1, 2, 3))
    assert not OWN.search(panel.said[1, 1])  # nobody had spoken: nothing is its own yet


def test_named_personas_label_the_referees(fake_llm):
    critic = {"name": "critic", "text": "You question every reading until it is justified."}
    panel = FakePanel()
    judge_once(fake_llm, panel, personas=[critic, critic, "You are a plain reader."], turns=2)
    later = panel.said[1, 2]
    assert "You are Referee 1 (critic) on a panel of 3 judging a competitive debate. " + critic["text"] in later
    assert "[Referee 1 (critic) · turn 1]\nMSG<r1,t1>" in later
    assert OWN.findall(later) == ["Referee 1 (critic)"]
    assert "[Referee 2 (critic) · turn 1]\nMSG<r2,t1>" in later
    assert "[Referee 3 · turn 1]\nMSG<r3,t1>" in later


@pytest.mark.parametrize("options, named", [
    ({"strategy": "round_robin"}, "strategy"),
    ({"referees": 0}, "referees"),
    ({"referees": 11}, "referees"),
    ({"referees": len(PERSONAS) + 1}, "referees"),  # more referees than built-in personas
    ({"turns": 0}, "turns"),
    ({"turns": 11}, "turns"),
    ({"personas": []}, "personas"),
    ({"personas": ["You are A."] * 11}, "personas"),
    ({"personas": ["You are A.", " "]}, "personas"),
    ({"personas": ["You are A.", 3]}, "personas"),
    ({"personas": [{"name": "critic"}]}, "personas"),  # a table needs its text
    ({"personas": [{"text": "You are A.", "name": ""}]}, "personas"),
    ({"personas": [{"text": "You are A.", "role": "critic"}]}, "personas"),
    ({"personas": ["You are A.", "You are B."], "referees": 3}, "referees"),
])
def test_invalid_options_are_user_errors(options, named):
    with pytest.raises(UserError, match=rf"'p1' \(panel judge\): option {named} ="):
        JUDGES.get("panel")(JudgeSpec("p1", "panel", MODEL, options=options))


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_referees_see_the_transcript_and_never_a_name(fake_llm, strategy):
    panel = FakePanel()
    judge_once(fake_llm, panel, strategy=strategy)
    for prompt in [*panel.said.values(), *panel.voted.values()]:
        assert MOTION.text in prompt and transcript.render(VIEW.speeches) in prompt
    for request in fake_llm.requests:
        assert "zebra" not in json.dumps(request.body["messages"])


def test_malformed_structured_verdicts_make_a_failed_verdict(fake_llm):
    verdict, _ = judge_once(fake_llm, FakePanel(malformed=True))
    assert verdict.failed and "no valid structured answer" in verdict.error
    assert verdict.overall is None and dict(verdict.dimensions) == {}


def offline_view(pro: float, con: float) -> JudgeView:
    prompt = [{"role": "user", "content": f"Motion: {MOTION.text}\nWrite."}]
    speeches = [Speech(s.stage, s.side, offline.respond(f"offline/{s.side}", pro if s.side == "pro" else con, prompt,
                                                        role="writer", stage=s.stage)[0]) for s in VIEW.speeches]
    return JudgeView(MOTION, tuple(speeches))


def test_an_offline_panel_favours_the_much_stronger_side():
    view = offline_view(1.5, -1.5)
    gateway = LLMGateway(LLMSettings(cache=False), store=None)
    judge = JUDGES.get("panel")(JudgeSpec("p1", "panel", "offline/p", options={}))

    def wins(view: JudgeView) -> int:
        verdicts = [asyncio.run(run_judge(judge, view, LLMHandle(gateway, ModelRef("offline/p"), AgentLog(),
                                                                 match_id=None, sample=run), run))
                    for run in range(30)]
        assert not any(v.failed for v in verdicts)
        return sum(v.overall == "pro" for v in verdicts)

    assert wins(view) >= 25
    assert wins(view.swapped()) <= 5  # the panel follows the stronger speeches, not the PRO label
