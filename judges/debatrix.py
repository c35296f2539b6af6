"""The `debatrix` judge: iterative chronological analysis along several dimensions, then a weighted summary.

Speech by speech, each dimension (argument, source, language by default) updates its own
notes from its previous notes and the new speech only — never from the raw earlier speeches —
with the dimensions working in parallel. Each dimension then gives a verdict (a tie allowed
where configured) with 1–10 scores, and a weighted summary picks the overall winner: by an
LLM chair (default) or by the weighted vote itself (`summary = "rule"`).
"""
from __future__ import annotations

import asyncio
import math
from pathlib import Path
from typing import Any

from arena import transcript
from arena.errors import UserError
from arena.params import Param
from arena.prompts import render
from arena.protocol import LLMHandle
from arena.judging import BaseJudge, Decision, JudgeView

PROMPTS = Path(__file__).parent / "prompts" / "debatrix"
DIMENSIONS: dict[str, dict[str, Any]] = {
    "argument": {
        "definition": "the quality of reasoning and clash — whether claims follow from sound reasoning, whether each "
                      "side engages and defeats the other's arguments, and who wins the points the debate turns on",
        "weight": 3, "ties": False},
    "source": {
        "definition": "the use of evidence — whether factual claims rest on credible, relevant sources and examples, "
                      "represented accurately, and whether cited references support what they are cited for",
        "weight": 2, "ties": True},
    "language": {
        "definition": "the quality of expression — clarity, structure, signposting, concision and persuasive "
                      "delivery suited to competitive debate",
        "weight": 2, "ties": True},
}
SUMMARY = {"type": "object", "properties": {"rationale": {"type": "string", "minLength": 1},
                                            "overall": {"type": "string", "enum": ["pro", "con"]}},
           "required": ["rationale", "overall"], "additionalProperties": False}


def _dimensions_ok(value: Any) -> bool:
    """A table of dimension name → {definition, weight, ties}, each key optional for the built-in names."""
    if not isinstance(value, dict) or not value:
        return False
    for name, spec in value.items():
        known = DIMENSIONS.get(name, {})
        if not isinstance(spec, dict) or set(spec) - {"definition", "weight", "ties"}:
            return False
        definition = spec.get("definition", known.get("definition"))
        weight = spec.get("weight", known.get("weight", 1))
        if not isinstance(definition, str) or not definition.strip():
            return False
        if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not math.isfinite(weight) or weight < 0:
            return False
        if not isinstance(spec.get("ties", known.get("ties", True)), bool):
            return False
    return True


def _verdict_schema(ties: bool) -> dict:
    score = {"type": "integer", "minimum": 1, "maximum": 10}
    return {"type": "object", "properties": {
        "rationale": {"type": "string", "minLength": 1}, "pro_score": score, "con_score": score,
        "winner": {"type": "string", "enum": ["pro", "con", "tie"] if ties else ["pro", "con"]}},
        "required": ["rationale", "pro_score", "con_score", "winner"], "additionalProperties": False}


class DebatrixJudge(BaseJudge):
    OPTIONS = {
        "dimensions": Param(None, (dict,), "dimension name → {definition, weight, ties}; default argument (weight 3, "
                                           "no ties), source (2) and language (2)", _dimensions_ok,
                            "a table of dimensions, each with a non-empty definition (built-in names have one), a "
                            "weight of at least 0 and ties true or false"),
        "summary": Param("llm", (str,), "who combines the dimension verdicts: an LLM chair or the weighted vote",
                         lambda v: v in ("llm", "rule"), "'llm' or 'rule'"),
        "prompts": Param("", (str,), "a folder whose analyze.j2, verdict.j2 or summary.j2 replace the built-in ones",
                         lambda v: v == "" or Path(v).is_dir(), "an existing folder"),
    }

    def __init__(self, spec):
        super().__init__(spec)
        chosen = self.options["dimensions"] or {name: {} for name in DIMENSIONS}
        self.dimensions = {name: {**{"weight": 1, "ties": True}, **DIMENSIONS.get(name, {}), **custom}
                           for name, custom in chosen.items()}
        if not any(d["weight"] > 0 for d in self.dimensions.values()):
            raise UserError(f"judge {spec.name!r} (debatrix judge): option dimensions: at least one weight must be "
                            "above 0")

    async def decide(self, view: JudgeView, llm: LLMHandle) -> Decision:
        language = self.language(view)
        params = {"temperature": self.options["temperature"]}
        notes: dict[str, list[str]] = {name: [] for name in self.dimensions}
        for number, speech in enumerate(view.speeches, start=1):
            block = transcript.render([speech])
            updates = await asyncio.gather(*(
                llm.complete(f"{name}-analyst", self._prompt(
                    "analyze.j2", motion=view.motion, dimension=name, definition=spec["definition"], notes=notes[name],
                    speech=block, number=number, total=len(view.speeches), language=language), params=params)
                for name, spec in self.dimensions.items()))
            for name, update in zip(self.dimensions, updates):
                notes[name].append(update.text.strip())
        verdicts = await asyncio.gather(*(
            llm.complete(f"{name}-judge", self._prompt(
                "verdict.j2", motion=view.motion, dimension=name, definition=spec["definition"], notes=notes[name],
                ties=spec["ties"], language=language), schema=_verdict_schema(spec["ties"]), params=params)
            for name, spec in self.dimensions.items()))
        decisions = [{"dimension": name, "weight": spec["weight"], **v.data}
                     for (name, spec), v in zip(self.dimensions.items(), verdicts)]
        overall, why = await self._summarise(view, llm, decisions, language, params)
        rationale = why + "\n" + "\n".join(f"{d['dimension']}: {d['winner']} ({d['pro_score']}–{d['con_score']}). "
                                          f"{d['rationale']}" for d in decisions)
        return Decision(overall, {d["dimension"]: d["winner"] for d in decisions}, rationale)

    async def _summarise(self, view, llm, decisions, language, params) -> tuple[str, str]:
        if self.options["summary"] == "rule":
            return weighted_vote(decisions), "Weighted vote of the dimension verdicts."
        answer = await llm.complete("summary", self._prompt(
            "summary.j2", motion=view.motion, decisions=decisions, language=language), schema=SUMMARY, params=params)
        return answer.data["overall"], answer.data["rationale"]

    def _prompt(self, template: str, **variables) -> str:
        """A built-in template, or the user's of the same name from the `prompts` option's folder."""
        return render(PROMPTS, template, override=self.options["prompts"], **variables)


def weighted_vote(decisions: list[dict]) -> str:
    """Sign of Σ weight·(+1 pro, −1 con, 0 tie); level votes go by Σ weight·(pro_score − con_score), else 'tie'."""
    sign = {"pro": 1, "con": -1, "tie": 0}
    vote = sum(d["weight"] * sign[d["winner"]] for d in decisions)
    if vote == 0:
        vote = sum(d["weight"] * (d["pro_score"] - d["con_score"]) for d in decisions)
    return "pro" if vote > 0 else "con" if vote < 0 else "tie"
