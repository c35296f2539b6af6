"""The `devils_advocate` judge (DEBATE): a Scorer's verdict is reviewed by a Critic playing devil's advocate.

DEBATE's Algorithm 1: the Scorer reads the transcript and gives a scored verdict; then, up to
`iterations` times, the Critic reviews the current verdict and answers NO_ISSUE or lists issues,
and every critique that is not NO_ISSUE is answered by a Scorer revision. So the loop makes at most
1 + 2 × iterations calls, and the last objection is always acted on. If the Critic accepted, that
verdict stands; otherwise the Scorer's last revision stands, or, with `tiebreaker` on, a
tie-breaker reads the whole dialogue (every verdict and critique, in order) and decides.

DEBATE's Commander is this module's code, not a model: agents keep no memory between calls, so
the Commander composes each prompt from what the panel has said so far and decides when the
loop stops.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from arena.base.params import Param, between
from arena.base.prompts import render
from arena.match.protocol import LLMHandle
from arena.domain.records import DIMENSIONS
from arena.match.judging import BaseJudge, Decision, JudgeView, paper_temperature, scores_check, verdict_schema
from judges.guard import guard_rule

PROMPTS = Path(__file__).parent / "prompts" / "devils_advocate"
INTENSITIES = ("strict", "moderate", "weak", "plain")
NO_ISSUE = "NO_ISSUE"
LABELS = {"pro": "PRO", "con": "CON", "tie": "tie"}

# A scored verdict whose dimension winner has the lower of that dimension's two scores contradicts itself: the
# scorer (or tie-breaker) is asked again, and a run whose verdict keeps contradicting itself fails.
SCORES_CHECK = scores_check(lambda data: {d: data[d] for d in DIMENSIONS}, lambda data: data["scores"])

CRITIQUE_SCHEMA = {
    "title": "critique", "type": "object",
    "properties": {"assessment": {"type": "string", "minLength": 1},
                   "issues": {"type": "array", "items": {"type": "string", "minLength": 1}},
                   "status": {"type": "string", "enum": [NO_ISSUE, "ISSUES"]}},
    "required": ["assessment", "issues", "status"], "additionalProperties": False,
}


# A verdict or critique as the model answered it: JSON in the shape of its schema (a verdict's keys include each
# of DIMENSIONS, read by a variable name, so it is no TypedDict).
Answer = dict[str, Any]


def scored_verdict_schema(overall_ties: bool) -> dict[str, Any]:
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
        "temperature": paper_temperature("DEBATE (its paper, appendix C.1)"),
        "overall_ties": Param(False, (bool,), "may the overall verdict be a tie"),
        # DEBATE's critic criticises as much as it can; the milder ones are the paper's persona ablation.
        "intensity": Param("strict", (str,), "how hard the critic argues against the verdict",
                           lambda v: v in INTENSITIES, "one of " + ", ".join(INTENSITIES)),
        "iterations": Param(3, (int,), "most critic reviews n; each objection, the last included, is answered by "
                                       "a scorer revision (at most 1 + 2n calls)", between(1, 10),
                            "an integer from 1 to 10"),
        "tiebreaker": Param(False, (bool,), "a tie-breaker reads the whole dialogue and decides when the critic "
                                            "never accepts a verdict"),
    }

    async def decide(self, view: JudgeView, llm: LLMHandle) -> Decision:
        ties = self.options["overall_ties"]
        schema = scored_verdict_schema(ties)
        language = self.language(view)
        shared = {"motion": view.motion, "overall_ties": ties, "language": language,
                  "guard": guard_rule(self.options["guard"], language)}

        async def ask(role: str, answer_schema: dict[str, Any], **variables: Any) -> Answer:
            prompt = view.material(lambda text: render(PROMPTS, f"{role}.j2", transcript=text, **shared, **variables))
            answer = await llm.complete(role, prompt, schema=answer_schema,
                                        params={"temperature": self.options["temperature"]},
                                        check=SCORES_CHECK if answer_schema is schema else None)
            data: Answer = answer.data  # what the schema allows
            return data

        verdict = await ask("scorer", schema, previous="", critique="")
        dialogue = [("Scorer: verdict 1", describe_verdict(verdict))]  # what the tie-breaker reads
        critique: Answer | None = None
        for review in range(1, self.options["iterations"] + 1):
            critique = await ask("critic", CRITIQUE_SCHEMA, intensity=self.options["intensity"],
                                 verdict=describe_verdict(verdict),
                                 previous_critique=describe_critique(critique) if critique else "")
            dialogue.append((f"Critic: review {review}, of verdict {review}", describe_critique(critique)))
            if critique["status"] == NO_ISSUE:
                break
            verdict = await ask("scorer", schema, previous=describe_verdict(verdict),
                                critique=describe_critique(critique))
            dialogue.append((f"Scorer: verdict {review + 1}, revised after review {review}", describe_verdict(verdict)))

        count = f"{review} review{'s' if review > 1 else ''}"
        if critique is not None and critique["status"] == NO_ISSUE:  # not None: the loop ran, iterations >= 1
            note = f"Accepted by the critic after {count}."
        elif self.options["tiebreaker"]:
            verdict = await ask("tiebreaker", schema, dialogue=dialogue)
            note = f"The critic still objected after {count}; a tie-breaker read the whole dialogue and decided."
        else:
            note = f"The critic still objected after {count}; the scorer's revision after the last review stands."
        return Decision(verdict["overall"], {d: verdict[d] for d in DIMENSIONS}, f"{verdict['rationale']}\n\n({note})",
                        {d: (verdict["scores"][d]["pro"], verdict["scores"][d]["con"]) for d in DIMENSIONS})


def describe_verdict(verdict: Answer) -> str:
    """A verdict as the next agent reads it: plain lines rather than JSON."""
    scores = "; ".join(f"{d} PRO {verdict['scores'][d]['pro']}, CON {verdict['scores'][d]['con']}" for d in DIMENSIONS)
    winners = ", ".join(f"{d} {LABELS[verdict[d]]}" for d in DIMENSIONS)
    return (f"Rationale: {verdict['rationale']}\nScores (1-10): {scores}\nDimension winners: {winners}\n"
            f"Overall winner: {LABELS[verdict['overall']]}")


def describe_critique(critique: Answer) -> str:
    issues = "\n".join(f"- {issue}" for issue in critique["issues"]) or "- (none listed)"
    return f"Assessment: {critique['assessment']}\nIssues:\n{issues}"
