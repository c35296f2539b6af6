"""The `devils_advocate` judge (DEBATE): a Scorer's verdict is reviewed by a Critic playing devil's advocate.

The Scorer reads the transcript and gives a scored verdict; the Critic checks it against the
transcript and answers NO_ISSUE or lists issues; the Scorer revises given the critique; and so on,
until the Critic answers NO_ISSUE or has reviewed `iterations` times. The Scorer's last verdict
stands, unless `tiebreaker` is on and the Critic never accepted: then a tie-breaker reads the
standoff and gives the final verdict.

DEBATE's Commander is this module's code, not a model: agents keep no memory between calls, so
the Commander composes each prompt from what the panel has said so far (the verdict under review,
the last critique) and decides when the loop stops.
"""
from __future__ import annotations

from pathlib import Path

from arena.params import Param, between
from arena.prompts import render
from arena.protocol import LLMHandle
from arena.records import DIMENSIONS
from arena.judging import BaseJudge, Decision, JudgeView, verdict_schema

PROMPTS = Path(__file__).parent / "prompts" / "devils_advocate"
INTENSITIES = ("strict", "moderate", "weak", "plain")
NO_ISSUE = "NO_ISSUE"
LABELS = {"pro": "PRO", "con": "CON", "tie": "tie"}

CRITIQUE_SCHEMA = {
    "title": "critique", "type": "object",
    "properties": {"assessment": {"type": "string", "minLength": 1},
                   "issues": {"type": "array", "items": {"type": "string", "minLength": 1}},
                   "status": {"type": "string", "enum": [NO_ISSUE, "ISSUES"]}},
    "required": ["assessment", "issues", "status"], "additionalProperties": False,
}


def scored_verdict_schema(overall_ties: bool) -> dict:
    """The common verdict with a 1–10 score per side and dimension, placed before the winners they justify."""
    base = verdict_schema(overall_ties=overall_ties)
    score = {"type": "integer", "minimum": 1, "maximum": 10}
    pair = {"type": "object", "properties": {"pro": score, "con": score}, "required": ["pro", "con"],
            "additionalProperties": False}
    scores = {"type": "object", "properties": {d: pair for d in DIMENSIONS}, "required": list(DIMENSIONS),
              "additionalProperties": False}
    rationale, *decisions = base["properties"].items()
    properties = dict([rationale, ("scores", scores), *decisions])
    return {**base, "title": "scored_verdict", "properties": properties, "required": list(properties)}


class DevilsAdvocateJudge(BaseJudge):
    OPTIONS = {
        "overall_ties": Param(False, (bool,), "may the overall verdict be a tie"),
        "intensity": Param("moderate", (str,), "how hard the critic argues against the verdict",
                           lambda v: v in INTENSITIES, "one of " + ", ".join(INTENSITIES)),
        "iterations": Param(3, (int,), "most critic reviews before the scorer's last verdict stands",
                            between(1, 10), "an integer from 1 to 10"),
        "tiebreaker": Param(False, (bool,), "a tie-breaker decides when the critic never accepts the verdict"),
    }

    async def decide(self, view: JudgeView, llm: LLMHandle) -> Decision:
        ties = self.options["overall_ties"]
        schema = scored_verdict_schema(ties)
        shared = {"motion": view.motion, "overall_ties": ties, "language": self.language(view)}

        async def ask(role: str, answer_schema: dict, **variables) -> dict:
            prompt = view.material(lambda text: render(PROMPTS, f"{role}.j2", transcript=text, **shared, **variables))
            answer = await llm.complete(role, prompt, schema=answer_schema,
                                        params={"temperature": self.options["temperature"]})
            return answer.data

        async def review(verdict: dict, previous: dict | None) -> dict:
            return await ask("critic", CRITIQUE_SCHEMA, intensity=self.options["intensity"],
                             verdict=describe_verdict(verdict),
                             previous_critique=describe_critique(previous) if previous else "")

        verdict = await ask("scorer", schema, previous="", critique="")
        critique = await review(verdict, None)
        reviews = 1
        while critique["status"] != NO_ISSUE and reviews < self.options["iterations"]:
            verdict = await ask("scorer", schema, previous=describe_verdict(verdict),
                                critique=describe_critique(critique))
            critique = await review(verdict, critique)
            reviews += 1

        count = f"{reviews} review{'s' if reviews > 1 else ''}"
        if critique["status"] == NO_ISSUE:
            note = f"Accepted by the critic after {count}."
        elif self.options["tiebreaker"]:
            verdict = await ask("tiebreaker", schema, verdict=describe_verdict(verdict),
                                critique=describe_critique(critique))
            note = f"The critic still objected after {count}; a tie-breaker decided."
        else:
            note = f"The critic still objected after {count}; the scorer's last verdict stands."
        return Decision(verdict["overall"], {d: verdict[d] for d in DIMENSIONS}, f"{verdict['rationale']}\n\n({note})")


def describe_verdict(verdict: dict) -> str:
    """A verdict as the next agent reads it: plain lines rather than JSON."""
    scores = "; ".join(f"{d} PRO {verdict['scores'][d]['pro']}, CON {verdict['scores'][d]['con']}" for d in DIMENSIONS)
    winners = ", ".join(f"{d} {LABELS[verdict[d]]}" for d in DIMENSIONS)
    return (f"Rationale: {verdict['rationale']}\nScores (1-10): {scores}\nDimension winners: {winners}\n"
            f"Overall winner: {LABELS[verdict['overall']]}")


def describe_critique(critique: dict) -> str:
    issues = "\n".join(f"- {issue}" for issue in critique["issues"]) or "- (none listed)"
    return f"Assessment: {critique['assessment']}\nIssues:\n{issues}"
