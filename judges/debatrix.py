"""The `debatrix` judge: iterative chronological analysis along several dimensions, then a weighted summary.

Speech by speech, each dimension (argument, source, language by default) updates its own
notes from its previous notes and the new speech only — never from the raw earlier speeches —
with the dimensions working in parallel. Each dimension then gives a verdict (pro, con or tie,
ties configurable per dimension) with 1–10 scores, and a weighted summary gives the overall
result (pro, con or tie unless `overall_ties` is off): by an LLM chair (default) or by the
weighted vote itself (`summary = "rule"`, see weighted_vote).
"""
from __future__ import annotations

import asyncio
import math
import re
from pathlib import Path
from typing import Any

from arena import transcript
from arena.errors import UserError
from arena.params import Param
from arena.prompts import render
from arena.protocol import LLMHandle
from arena.records import CATEGORIES, points
from arena.judging import BaseJudge, Decision, JudgeView

PROMPTS = Path(__file__).parent / "prompts" / "debatrix"
DIMENSIONS: dict[str, dict[str, Any]] = {
    "argument": {
        "definition": "the quality of reasoning and clash — whether claims follow from sound reasoning, whether each "
                      "side engages and defeats the other's arguments, and who wins the points the debate turns on",
        "weight": 3},
    "source": {
        "definition": "the use of evidence — whether factual claims rest on credible, relevant sources and examples, "
                      "represented accurately, and whether cited references support what they are cited for",
        "weight": 2},
    "language": {
        "definition": "the quality of expression — clarity, structure, signposting, concision and persuasive "
                      "delivery suited to competitive debate",
        "weight": 2},
}
# The built-in definitions in the languages with prompts of their own; a definition set in arena.toml is
# shown as written.
DEFINITIONS = {"zh": {
    "argument": "推理与交锋的质量——主张是否由严密的推理得出，双方是否正面回应并驳倒对方的论点，以及决定胜负的关键争点由谁拿下",
    "source": "论据的运用——事实性主张是否建立在可信、相关的来源和事例之上，引述是否准确，所列参考资料是否真能支撑其被引用来证明的内容",
    "language": "表达的质量——是否清晰、层次分明、路标清楚、简洁有力，是否具备适合竞技辩论的说服力",
}}
DEFAULTS = {"weight": 1, "ties": True}
# A dimension's name becomes a results-CSV dimension and a site tab: "overall" and the category names
# already name rating views, and the name must be one word to serve as a page anchor.
RESERVED = ("overall", *CATEGORIES)
NAME = re.compile(r"[\w-]+")


def _dimensions_ok(value: Any) -> bool:
    """A table of dimension name → {definition, weight, ties}, each key optional for the built-in names."""
    if not isinstance(value, dict) or not value:
        return False
    for name, spec in value.items():
        if not NAME.fullmatch(name) or name in RESERVED:
            return False
        known = {**DEFAULTS, **DIMENSIONS.get(name, {})}
        if not isinstance(spec, dict) or set(spec) - {"definition", "weight", "ties"}:
            return False
        definition = spec.get("definition", known.get("definition"))
        weight = spec.get("weight", known["weight"])
        if not isinstance(definition, str) or not definition.strip():
            return False
        if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not math.isfinite(weight) or weight < 0:
            return False
        if not isinstance(spec.get("ties", known["ties"]), bool):
            return False
    return True


def _outcomes(ties: bool) -> list[str]:
    return ["pro", "con", "tie"] if ties else ["pro", "con"]


def _verdict_schema(ties: bool) -> dict:
    score = {"type": "integer", "minimum": 1, "maximum": 10}
    return {"type": "object", "properties": {
        "rationale": {"type": "string", "minLength": 1}, "pro_score": score, "con_score": score,
        "winner": {"type": "string", "enum": _outcomes(ties)}},
        "required": ["rationale", "pro_score", "con_score", "winner"], "additionalProperties": False}


def _summary_schema(ties: bool) -> dict:
    return {"type": "object", "properties": {"rationale": {"type": "string", "minLength": 1},
                                             "overall": {"type": "string", "enum": _outcomes(ties)}},
            "required": ["rationale", "overall"], "additionalProperties": False}


class DebatrixJudge(BaseJudge):
    OPTIONS = {
        "dimensions": Param(None, (dict,), "dimension name → {definition, weight, ties}; default argument (weight 3), "
                                           "source (2) and language (2); ties are allowed unless ties = false",
                            _dimensions_ok,
                            "a table of dimensions named by one word (letters, digits, _ or -; not overall, fact, "
                            "value or policy), each with a non-empty definition (built-in names have one), a weight "
                            "of at least 0 and ties true or false"),
        "overall_ties": Param(True, (bool,), "may the overall verdict be a tie"),
        "summary": Param("llm", (str,), "who combines the dimension verdicts: an LLM chair or the weighted vote",
                         lambda v: v in ("llm", "rule"), "'llm' or 'rule'"),
        "prompts": Param("", (str,), "a folder whose analyze.j2, verdict.j2 or summary.j2 replace the built-in ones",
                         lambda v: v == "" or Path(v).is_dir(), "an existing folder"),
    }

    def __init__(self, spec):
        super().__init__(spec)
        chosen = self.options["dimensions"] or {name: {} for name in DIMENSIONS}
        self.dimensions = {name: {**DEFAULTS, **DIMENSIONS.get(name, {}), **custom}
                           for name, custom in chosen.items()}
        if not any(d["weight"] > 0 for d in self.dimensions.values()):
            raise UserError(f"judge {spec.name!r} (debatrix judge): option dimensions: at least one weight must be "
                            "above 0")

    async def decide(self, view: JudgeView, llm: LLMHandle) -> Decision:
        language = self.language(view)
        params = {"temperature": self.options["temperature"]}
        notes: dict[str, list[str]] = {name: [] for name in self.dimensions}
        # Swapped with the view's labels, and in the transcript's language, as the blocks it describes.
        order = transcript.order(view.speeches, [s.side for s in view.speeches], language=view.motion.language)
        definitions = {name: self._definition(name, spec, language) for name, spec in self.dimensions.items()}
        for number in range(1, len(view.speeches) + 1):
            block = view.transcript(only=number - 1)
            updates = await asyncio.gather(*(
                llm.complete(f"{name}-analyst", self._prompt(
                    "analyze.j2", motion=view.motion, dimension=name, definition=definitions[name], notes=notes[name],
                    speech=block, number=number, total=len(view.speeches), order=order, language=language),
                    params=params)
                for name, spec in self.dimensions.items()))
            for name, update in zip(self.dimensions, updates):
                notes[name].append(update.text.strip())
        verdicts = await asyncio.gather(*(
            llm.complete(f"{name}-judge", self._prompt(
                "verdict.j2", motion=view.motion, dimension=name, definition=definitions[name], notes=notes[name],
                ties=spec["ties"], language=language), schema=_verdict_schema(spec["ties"]), params=params)
            for name, spec in self.dimensions.items()))
        decisions = [{"dimension": name, "weight": spec["weight"], **v.data}
                     for (name, spec), v in zip(self.dimensions.items(), verdicts)]
        overall, why = await self._summarise(view, llm, decisions, language, params)
        rationale = why + "\n" + "\n".join(f"{d['dimension']}: {d['winner']} ({d['pro_score']}–{d['con_score']}). "
                                          f"{d['rationale']}" for d in decisions)
        return Decision(overall, {d["dimension"]: d["winner"] for d in decisions}, rationale)

    @staticmethod
    def _definition(name: str, spec: dict, language: str) -> str:
        """The dimension's definition in the prompt's language: the built-in one translated, else as configured."""
        built_in = spec["definition"] == DIMENSIONS.get(name, {}).get("definition")
        return DEFINITIONS.get(language, {}).get(name, spec["definition"]) if built_in else spec["definition"]

    async def _summarise(self, view, llm, decisions, language, params) -> tuple[str, str]:
        ties = self.options["overall_ties"]
        if self.options["summary"] == "rule":
            outcome = weighted_vote(decisions, ties=ties)
            pro, con = weighted_points(decisions)
            why = f"Weighted vote of the dimension verdicts: PRO {pro:g}, CON {con:g}."
            if outcome is not None:
                return outcome, why
            # Level on points and on score margins with ties off: no rule is left that is fair to both
            # sides, so the chair decides.
            chair, reason = await self._chair(view, llm, decisions, language, params, ties=False)
            return chair, f"{why} Level, and ties are off: the chair decided. {reason}"
        return await self._chair(view, llm, decisions, language, params, ties=ties)

    async def _chair(self, view, llm, decisions, language, params, *, ties: bool) -> tuple[str, str]:
        answer = await llm.complete("summary", self._prompt(
            "summary.j2", motion=view.motion, decisions=decisions, overall_ties=ties, language=language),
            schema=_summary_schema(ties), params=params)
        return answer.data["overall"], answer.data["rationale"]

    def _prompt(self, template: str, **variables) -> str:
        """A built-in template, or the user's of the same name from the `prompts` option's folder."""
        return render(PROMPTS, template, override=self.options["prompts"], **variables)


def weighted_points(decisions: list[dict]) -> tuple[float, float]:
    """(PRO, CON) weighted points: Σ weight × points, a dimension won is 1, a tie 0.5 to each side."""
    return tuple(sum(d["weight"] * points(d["winner"], side) for d in decisions) for side in ("pro", "con"))


def weighted_vote(decisions: list[dict], *, ties: bool = True) -> str | None:
    """The rule summary: the side with more weighted points wins; equal weighted points are a tie.

    With ties off, equal points go to the side ahead on the weighted score margin
    Σ weight × (pro_score − con_score); None when that is level too. Totals within a
    rounding error (float weights) count as equal.
    """
    pro, con = weighted_points(decisions)
    tolerance = 1e-9 * max(1.0, 10 * sum(d["weight"] for d in decisions))  # of the largest possible margin
    lead = pro - con
    if abs(lead) <= tolerance:
        if ties:
            return "tie"
        lead = sum(d["weight"] * (d["pro_score"] - d["con_score"]) for d in decisions)
        if abs(lead) <= tolerance:
            return None
    return "pro" if lead > 0 else "con"
