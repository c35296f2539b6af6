"""The `panel` judge (ChatEval): referees with personas discuss, then each votes; the majority decides.

Personas are distinct by default; identical ones are allowed (ChatEval's same-role ablation, its
Table 3), so a referee is always known by number, e.g. "Referee 2 (research librarian)".
A run has T discussion turns. How the referees talk within a turn is the strategy:
- one_by_one: in order, each seeing everything said before it, this turn included;
- simultaneous_talk: all at once, seeing only earlier turns; the turn is then shared with all;
- simultaneous_talk_with_summarizer: as simultaneous, but what is shared is a summary, written at the
  end of each turn, of every message said so far (ChatEval's Algorithm 3: its buffer is never emptied).
After the last turn every referee gives a structured verdict with the whole discussion in view;
the panel's decision, overall and per dimension, is a strict majority of those votes, else a tie.
"""
from __future__ import annotations

import asyncio
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.base.errors import UserError
from arena.base.params import Param, between
from arena.base.prompts import render
from arena.match.protocol import LLMHandle
from arena.domain.records import DIMENSIONS, JudgeSpec, Outcome
from arena.match.judging import BaseJudge, Decision, JudgeView, paper_temperature, verdict_schema
from judges.guard import guard_rule

PROMPTS = Path(__file__).parent / "prompts" / "panel"
STRATEGIES = ("one_by_one", "simultaneous_talk", "simultaneous_talk_with_summarizer")


@dataclass(frozen=True)
class Persona:
    """A referee's brief; the name, when given, labels the referee in the discussion: "Referee 2 (name)"."""

    text: str
    name: str = ""


# Ordered so that the default panel of three covers the three dimensions (argument, source, language).
PERSONAS = (
    Persona("You are a former championship debate adjudicator who has chaired elimination rounds for years. You "
            "judge the clash: which arguments actually met, who answered whom, what was dropped, and whose weighing "
            "told you why their side's points matter more. You have little patience for material that never engages "
            "the other side.", "debate adjudicator"),
    Persona("You are a research librarian who spends her days checking claims against the record. You care about "
            "evidence: whether a claim is supported at all, whether the cited sources are real, relevant and fairly "
            "represented, and whether a statistic says what the speaker says it does. An unsupported assertion "
            "counts for little with you.", "research librarian"),
    Persona("You are a communication coach who trains public speakers. You listen for clarity and structure: "
            "whether a listener could follow each speech, whether the framing was memorable, and whether the "
            "rhetoric served the argument or replaced it. You notice jargon, padding and evasive answers.",
            "communication coach"),
    Persona("You are a logician who teaches critical reasoning. You test every argument's steps: whether conclusions "
            "follow from premises, whether causal claims are earned, and whether a side relied on fallacies such as "
            "straw men, false dilemmas, slippery slopes or appeals to popularity. A valid rebuttal of a key premise "
            "weighs heavily.", "logician"),
    Persona("You are an ordinary, well-informed citizen who reads the news and votes, with no debate training. You "
            "ask which side left you better convinced, and why; you are wary of tricks you can see through, and you "
            "give credit for explanations that make a hard issue understandable.", "ordinary citizen"),
    Persona("You are a policy analyst who advises governments. You look at consequences: how likely each claimed "
            "benefit or harm is, how large it is, whom it affects, and whether the side compared its world with the "
            "other side's rather than describing its own in isolation.", "policy analyst"),
)


# A referee's vote as the model answered it: JSON in the shape of verdict_schema (its keys include each of
# DIMENSIONS, read by a variable name, so it is no TypedDict).
Vote = dict[str, Any]


def _filled(value: object) -> bool:
    return isinstance(value, str) and bool(value.strip())


def _personas(value: list[object]) -> bool:  # the option's Param lets only a list through
    """1 to 10 personas, each a non-empty string or a table {text, name?}; repeats are allowed."""
    return 1 <= len(value) <= 10 and all(
        _filled(p) or (isinstance(p, dict) and _filled(p.get("text")) and set(p) <= {"text", "name"}
                       and ("name" not in p or _filled(p["name"])))
        for p in value)


def _persona(value: str | dict[str, str]) -> Persona:
    if isinstance(value, str):
        return Persona(value.strip())
    return Persona(value["text"].strip(), value.get("name", "").strip())


@dataclass(frozen=True)
class Said:
    """One item of the panel's shared discussion: a referee's message, or the summary of all said up to a turn."""

    turn: int
    text: str
    referee: int | None = None  # None for a summary


class PanelJudge(BaseJudge):
    OPTIONS = {
        "temperature": paper_temperature("ChatEval (its paper, §3.1)"),
        "referees": Param(3, (int,), f"number of referees N when personas is not given: the first N of the "
                                     f"{len(PERSONAS)} built-in personas", between(1, 10), "an integer from 1 to 10"),
        "turns": Param(2, (int,), "discussion turns T before the vote", between(1, 10), "an integer from 1 to 10"),
        "strategy": Param("one_by_one", (str,), "how referees talk within a turn: " + ", ".join(STRATEGIES),
                          lambda v: v in STRATEGIES, "one of " + ", ".join(STRATEGIES)),
        "personas": Param(None, (list,), "the referees' personas (default: built-in ones); its length sets N; "
                          "repeating one gives ChatEval's same-role panel",
                          _personas, "a list of 1 to 10 personas, each a non-empty string or a table "
                          "{text, name} of non-empty strings (name optional)"),
        "overall_ties": Param(False, (bool,), "may a referee's overall vote be a tie"),
    }

    def __init__(self, spec: JudgeSpec):
        super().__init__(spec)
        personas, count = self.options["personas"], self.options["referees"]
        if personas is None:
            if count > len(PERSONAS):
                raise UserError(f"{self.owner}: option referees = {count}: there are {len(PERSONAS)} built-in personas; "
                                f"give option personas for a larger panel")
            self.personas = PERSONAS[:count]
        elif "referees" in spec.options and count != len(personas):
            raise UserError(f"{self.owner}: option referees = {count} but option personas lists {len(personas)}")
        else:
            self.personas = tuple(_persona(p) for p in personas)
        # The number keeps referees with identical personas apart in the discussion and the summaries.
        self.labels = {k: f"Referee {k}" + (f" ({p.name})" if p.name else "") for k, p in enumerate(self.personas, 1)}

    async def decide(self, view: JudgeView, llm: LLMHandle) -> Decision:
        strategy, turns = self.options["strategy"], self.options["turns"]
        language = self.language(view)
        common = {"motion": view.motion, "count": len(self.personas), "turns": turns, "labels": self.labels,
                  "language": language, "guard": guard_rule(self.options["guard"], language)}
        params = {"temperature": self.options["temperature"]}

        async def speak(referee: int, turn: int, history: list[Said]) -> Said:
            prompt = view.material(lambda text: render(PROMPTS, "referee.j2", number=referee, turn=turn,
                                                       persona=self.personas[referee - 1].text, history=history,
                                                       transcript=text, **common))
            answer = await llm.complete(f"referee-{referee}", prompt, params=params)
            return Said(turn, answer.text.strip(), referee)

        history: list[Said] = []  # what every referee sees; all strategies share one record
        messages: list[Said] = []  # every message so far, which the summarizer condenses
        numbers = range(1, len(self.personas) + 1)
        for turn in range(1, turns + 1):
            if strategy == "one_by_one":
                for referee in numbers:
                    history.append(await speak(referee, turn, list(history)))
                continue
            said = await asyncio.gather(*(speak(referee, turn, list(history)) for referee in numbers))
            if strategy == "simultaneous_talk":
                history += said
            else:
                messages += said
                text = render(PROMPTS, "summarizer.j2", motion=view.motion, turn=turn, turns=turns, messages=messages,
                              labels=self.labels, language=self.language(view))
                summary = await llm.complete("summarizer", text, params=params)
                history.append(Said(turn, summary.text.strip()))

        ties = self.options["overall_ties"]

        async def vote(referee: int) -> Vote:
            prompt = view.material(lambda text: render(PROMPTS, "verdict.j2", number=referee,
                                                       persona=self.personas[referee - 1].text, history=history,
                                                       overall_ties=ties, transcript=text, **common))
            answer = await llm.complete(f"referee-{referee}", prompt,
                                        schema=verdict_schema(overall_ties=ties), params=params)
            data: Vote = answer.data  # what the schema allows
            return data

        votes = await asyncio.gather(*(vote(referee) for referee in numbers))
        overall = majority([v["overall"] for v in votes])
        return Decision(overall, {d: majority([v[d] for v in votes]) for d in DIMENSIONS}, _rationale(votes, overall))


def majority(votes: list[Outcome]) -> Outcome:
    """The side more than half the votes name; otherwise (a split, or a majority for tie) a tie."""
    for side in ("pro", "con"):
        if votes.count(side) * 2 > len(votes):
            return side
    return "tie"


def _rationale(votes: list[Vote], overall: Outcome) -> str:
    """The tally, then each referee's vote and reasons: e.g. "2-1 for PRO. referee 1 (pro): ...; ..."."""
    counts = Counter(v["overall"] for v in votes)
    if overall == "tie":
        head = f"no majority (pro {counts['pro']}, con {counts['con']}, tie {counts['tie']}): tie"
    else:
        other = "con" if overall == "pro" else "pro"
        head = f"{counts[overall]}-{counts[other]} for {overall.upper()}"
        head += f", {counts['tie']} for a tie" if counts["tie"] else ""
    reasons = "; ".join(f"referee {i} ({v['overall']}): {v['rationale'].strip()}" for i, v in enumerate(votes, 1))
    return f"{head}. {reasons}"
