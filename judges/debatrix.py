"""The `debatrix` judge: iterative chronological analysis along several dimensions, then a weighted summary.

Speech by speech, each dimension (argument, source, language by default) updates its own
notes from its previous notes and the new speech only — never from the raw earlier speeches —
with the dimensions working in parallel. Each dimension then gives a verdict with 1–10 scores
by its own rule, and a weighted summary gives the overall result: by an LLM chair (default) or
by the weighted vote itself (`summary = "rule"`, see weighted_vote).

The built-in dimensions and their rules carry the substance of the reference implementation's
configuration (ljcleo/debatrix, preset/example/config), in our own words: source and language
may be ties (source: unless one side has a clear lead in the quality of its outside sources;
language: unless exactly one side earned a penalty), argument always has a winner, and the
summary names one winner unless `overall_ties` is on. That code calls its model at temperature 0,
and so does this judge by default.
"""
from __future__ import annotations

import asyncio
import math
import re
from pathlib import Path
from typing import Any, Mapping, Sequence, TypedDict

from arena.domain import transcript
from arena.base.errors import UserError
from arena.base.params import Param, between
from arena.base.prompts import render
from arena.gateway.llm import Check
from arena.match.protocol import LLMHandle
from arena.domain.records import CATEGORIES, JudgeSpec, Outcome, points
from arena.match.judging import BaseJudge, Decision, JudgeView, paper_temperature, scores_check
from judges.guard import guard_rule

PROMPTS = Path(__file__).parent / "prompts" / "debatrix"
# What each built-in dimension judges (one clause, no capitals: the ballot page shows it as a hint too) and
# the rule that decides it, which says when it is a tie.
DIMENSIONS: dict[str, dict[str, Any]] = {
    "argument": {
        "definition": "the arguments each side makes and how they fare against the other side's: whether each "
                      "argument bears on the motion and is sound, whether its premises and reasoning are clear and "
                      "plausible, whether credible evidence backs it and whether it is put in fitting language; "
                      "whether each rebuttal actually defeats what it answers, and which of the opponent's "
                      "arguments go unanswered; and, clash by clash, which side's line of argument comes out "
                      "stronger",
        "rule": "Set the two cases against each other: weigh every clash, and what the arguments each side has "
                "left standing do to the other side's. The side that, within this debate, did more to establish "
                "its own side of the motion wins.",
        "weight": 3, "ties": False},
    "source": {
        "definition": "the outside evidence each side brings and how it is used: which external sources are cited, "
                      "whether they are credible, and how well they support the arguments they are attached to; "
                      "common knowledge and the subject of the debate itself are not outside sources; missing "
                      "evidence, unreliable sources and sources piled up without analysis are weaknesses, but an "
                      "argument that rests soundly on common knowledge needs no source and is not weakened by "
                      "having none; a source quoted again from an earlier speech, by either side, is a reference "
                      "back to it, not a new source",
        "rule": "A side wins only with a clear lead in the quality of its outside sources, backing its case with "
                "them better than the other side does. It is a tie when both sides did their research with due "
                "diligence, or when the numbers of outside sources they brought differ little (one source "
                "against none still differs little). Unreliable sources bad enough to weaken a side's own case "
                "count against that side.",
        "weight": 2, "ties": True},
    "language": {
        "definition": "how each side's language bears on clarity and conduct: informal wording and a combative "
                      "tone are fair ways to reach an audience and are no fault; only passages too garbled to "
                      "follow, and grossly unsporting or toxic conduct such as repeated personal insults, deserve a "
                      "penalty; words a speaker quotes from the other side, to criticise them for instance, are not "
                      "the speaker's own language",
        "rule": "A side wins only when the other side deserves a penalty and it does not; when neither side "
                "deserves one, or both do, language is a tie.",
        "weight": 2, "ties": True},
}
# The built-in definitions and rules in the languages with prompts of their own; those set in arena.toml are
# shown as written.
TRANSLATIONS = {"zh": {
    "argument": {
        "definition": "双方各自提出的论点，以及这些论点在与对方的交锋中表现如何：每个论点是否切题、是否站得住，前提和推理是否"
                      "清楚合理，是否有可信的证据支撑，措辞是否得当；每一次反驳是否真正驳倒了所回应的内容，对方有哪些论点始终"
                      "无人回应；以及逐个交锋来看，哪一方的论证更有力",
        "rule": "把双方的论证放在一起比较：权衡每一处交锋，以及各方仍然站得住的论点对另一方造成了什么影响。在本场辩论的范围内，"
                "为确立己方立场做得更多的一方获胜。"},
    "source": {
        "definition": "双方引入的外部证据及其用法：引用了哪些外部来源，这些来源是否可信，对所支撑的论点起了多大作用；常识以及"
                      "辩题本身不算外部来源；缺乏证据、来源不可靠、堆砌来源而不加分析都是缺陷，但稳妥地建立在常识之上的论点"
                      "无需来源，不因没有来源而被削弱；发言中再次引述此前发言（无论哪一方）用过的来源，是对原有来源的援引，"
                      "不算新的来源",
        "rule": "只有在外部来源的质量上明显领先、用来源比对方更好地支撑了己方论证的一方才能获胜。如果双方都尽到了查证的本分，"
                "或者双方引入的外部来源数量相差不大（即使一方用了一个来源而另一方一个也没有，也算相差不大），判平局。"
                "来源不可靠到足以削弱己方论证的，这一点算作该方的失分。"},
    "language": {
        "definition": "双方的语言在清晰程度和赛场风度上的表现：口语化的措辞和咄咄逼人的语气都是打动听众的正当手段，不算缺点；"
                      "只有混乱到无法看懂的段落，以及严重违背体育精神乃至恶意攻击的行为（例如反复进行人身攻击）才应扣分；"
                      "发言者引述的对方原话（例如为了批评对方）不算发言者自己的语言",
        "rule": "只有当对方应被扣分而己方不应被扣分时，己方才获胜；双方都不应扣分或都应扣分时，语言表达判平局。"},
}}
# A dimension of one's own has no rule unless given one: its verdict prompt then states the plain one.
DEFAULTS = {"weight": 1, "ties": True, "rule": ""}
# Room for a note on a speech: well above what one takes when the prompt sets no length (the reference sets
# none); with a set length, twice it (a word or a Chinese character is under two tokens), so that a note that runs on
# (a small model copying its prompt round and round) is cut there rather than carried into every later prompt.
NOTE_TOKENS = 1024
# A dimension's name becomes a results-CSV dimension and a site tab: "overall" and the category names
# already name rating views, and the name must be one word to serve as a page anchor.
RESERVED = ("overall", *CATEGORIES)
NAME = re.compile(r"[\w-]+")
# A dimension verdict's line of the rationale, in the language of the rationales: its winner and both scores, each
# named by its side, so that the line stays true when the sides' names are exchanged (a swapped run, mapped back).
LINES = {"en": {"pro": "PRO wins", "con": "CON wins", "tie": "tie",
                "line": "{dimension}: {outcome} (PRO {pro}, CON {con})."},
         "zh": {"pro": "正方胜", "con": "反方胜", "tie": "平局",
                "line": "{dimension}：{outcome}（正方 {pro} 分，反方 {con} 分）。"}}


def _dimensions_ok(value: Any) -> bool:
    """A table of dimension name → {definition, weight, ties, rule}, each key optional for the built-in names."""
    if not isinstance(value, dict) or not value:
        return False
    for name, spec in value.items():
        if not NAME.fullmatch(name) or name in RESERVED:
            return False
        known = {**DEFAULTS, **DIMENSIONS.get(name, {})}
        if not isinstance(spec, dict) or set(spec) - {"definition", "weight", "ties", "rule"}:
            return False
        if not isinstance(spec.get("rule", ""), str):
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


class DimensionSpec(TypedDict):
    """A dimension as judged (_spec): what it judges, its weight in the summary, whether it may be a tie, and the
    rule that decides it ("" for the plain one)."""

    definition: str
    weight: float
    ties: bool
    rule: str


class DimensionVerdict(TypedDict):
    """A dimension's verdict as the summary weighs it: the dimension's name and weight, and its judge's answer
    (_verdict_schema)."""

    dimension: str
    weight: float
    rationale: str
    pro_score: int
    con_score: int
    winner: Outcome


def _outcomes(ties: bool) -> list[str]:
    return ["pro", "con", "tie"] if ties else ["pro", "con"]


def _verdict_schema(ties: bool) -> dict[str, Any]:  # a JSON Schema
    score = {"type": "integer", "minimum": 1, "maximum": 10}
    return {"type": "object", "properties": {
        "rationale": {"type": "string", "minLength": 1}, "pro_score": score, "con_score": score,
        "winner": {"type": "string", "enum": _outcomes(ties)}},
        "required": ["rationale", "pro_score", "con_score", "winner"], "additionalProperties": False}


def _summary_schema(ties: bool) -> dict[str, Any]:  # a JSON Schema
    return {"type": "object", "properties": {"rationale": {"type": "string", "minLength": 1},
                                             "overall": {"type": "string", "enum": _outcomes(ties)}},
            "required": ["rationale", "overall"], "additionalProperties": False}


def _check(dimension: str) -> Check:
    """A dimension verdict whose winner has the lower of its two scores contradicts itself: re-asked, then a
    failed run (arena.match.judging.scores_check)."""
    return scores_check(lambda data: {dimension: data["winner"]},
                        lambda data: {dimension: (data["pro_score"], data["con_score"])})


def _spec(name: str, custom: Mapping[str, Any]) -> DimensionSpec:
    """A dimension as judged: the built-in one, if any, with what arena.toml sets over it (_dimensions_ok checked
    it has each key, a definition from the built-in one or its own)."""
    built_in = DIMENSIONS.get(name, {})
    merged = {**DEFAULTS, **built_in, **custom}
    spec = DimensionSpec(definition=merged["definition"], weight=merged["weight"], ties=merged["ties"],
                         rule=merged["rule"])
    if built_in and "rule" not in custom and (spec["definition"], spec["ties"]) != (built_in["definition"],
                                                                                     built_in["ties"]):
        spec["rule"] = ""  # the built-in rule is written for the built-in definition and tie setting
    return spec


class DebatrixJudge(BaseJudge):
    OPTIONS = {
        "temperature": paper_temperature("the reference implementation, ljcleo/debatrix"),
        "dimensions": Param(None, (dict,), "dimension name → {definition, weight, ties, rule}; default argument "
                                           "(weight 3, no ties), source (2) and language (2), each with its rule; "
                                           "a dimension of one's own allows ties unless ties = false",
                            _dimensions_ok,
                            "a table of dimensions named by one word (letters, digits, _ or -; not overall, fact, "
                            "value or policy), each with a non-empty definition (built-in names have one), a weight "
                            "of at least 0, ties true or false, and a rule given as a string"),
        "overall_ties": Param(False, (bool,), "may the overall verdict be a tie"),
        "note_length": Param(0, (int,), "most words of a dimension's note on a speech (characters in the Chinese "
                                        "prompts); 0: no limit, as in the reference", between(0, 5000),
                             "an integer from 0 to 5000"),
        "summary": Param("llm", (str,), "who combines the dimension verdicts: an LLM chair or the weighted vote",
                         lambda v: v in ("llm", "rule"), "'llm' or 'rule'"),
        "prompts": Param("", (str,), "a folder whose analyze.j2, verdict.j2 or summary.j2 replace the built-in ones",
                         lambda v: v == "" or Path(v).is_dir(), "an existing folder"),
    }

    def __init__(self, spec: JudgeSpec) -> None:
        super().__init__(spec)
        chosen = self.options["dimensions"] or {name: {} for name in DIMENSIONS}
        self.dimensions = {name: _spec(name, custom) for name, custom in chosen.items()}
        if not any(d["weight"] > 0 for d in self.dimensions.values()):
            raise UserError(f"judge {spec.name!r} (debatrix judge): option dimensions: at least one weight must be "
                            "above 0")

    async def decide(self, view: JudgeView, llm: LLMHandle) -> Decision:
        language = self.language(view)
        params = {"temperature": self.options["temperature"]}
        notes: dict[str, list[str]] = {name: [] for name in self.dimensions}
        # Swapped with the view's labels, and in the transcript's language, as the blocks it describes.
        order = transcript.order(view.speeches, [s.side for s in view.speeches], language=view.motion.language,
                                 fmt=view.format)
        texts = {name: {key: self._text(name, spec, key, language) for key in ("definition", "rule")}
                 for name, spec in self.dimensions.items()}
        length = self.options["note_length"]
        guard = guard_rule(self.options["guard"], language)  # the analysts read the speeches; the rest their notes
        for number in range(1, len(view.speeches) + 1):
            block = view.transcript(only=number - 1)
            updates = await asyncio.gather(*(
                llm.complete(f"{name}-analyst", self._prompt(
                    "analyze.j2", motion=view.motion, dimension=name, **texts[name], notes=notes[name],
                    speech=block, number=number, total=len(view.speeches), order=order, note_length=length,
                    ties=spec["ties"], language=language, guard=guard), params=params,
                    max_tokens=2 * length or NOTE_TOKENS)
                for name, spec in self.dimensions.items()))
            for name, update in zip(self.dimensions, updates):
                notes[name].append(update.text.strip())
        verdicts = await asyncio.gather(*(
            llm.complete(f"{name}-judge", self._prompt(
                "verdict.j2", motion=view.motion, dimension=name, **texts[name], notes=notes[name],
                ties=spec["ties"], language=language), schema=_verdict_schema(spec["ties"]), params=params,
                check=_check(name))
            for name, spec in self.dimensions.items()))
        decisions = [DimensionVerdict(dimension=name, weight=spec["weight"], rationale=v.data["rationale"],
                                      pro_score=v.data["pro_score"], con_score=v.data["con_score"],
                                      winner=v.data["winner"])
                     for (name, spec), v in zip(self.dimensions.items(), verdicts)]
        overall, why = await self._summarise(view, llm, decisions, language, params)
        rationale = why + "\n" + "\n".join(f"{dimension_line(d, language)} {d['rationale']}" for d in decisions)
        return Decision(overall, {d["dimension"]: d["winner"] for d in decisions}, rationale,
                        {d["dimension"]: (d["pro_score"], d["con_score"]) for d in decisions})

    @staticmethod
    def _text(name: str, spec: DimensionSpec, key: str, language: str) -> str:
        """The dimension's definition or rule (key) in the prompt's language: the built-in one translated, else as
        configured."""
        text: str = spec["definition"] if key == "definition" else spec["rule"]
        if text and text == DIMENSIONS.get(name, {}).get(key):
            return TRANSLATIONS.get(language, {}).get(name, {}).get(key, text)
        return text

    async def _summarise(self, view: JudgeView, llm: LLMHandle, decisions: list[DimensionVerdict], language: str,
                         params: dict[str, Any]) -> tuple[Outcome, str]:
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

    async def _chair(self, view: JudgeView, llm: LLMHandle, decisions: list[DimensionVerdict], language: str,
                     params: dict[str, Any], *, ties: bool) -> tuple[Outcome, str]:
        answer = await llm.complete("summary", self._prompt(
            "summary.j2", motion=view.motion, decisions=decisions, overall_ties=ties, language=language),
            schema=_summary_schema(ties), params=params)
        overall: Outcome = answer.data["overall"]  # the schema's enum
        rationale: str = answer.data["rationale"]
        return overall, rationale

    def _prompt(self, template: str, **variables: Any) -> str:  # any values jinja renders
        """A built-in template, or the user's of the same name from the `prompts` option's folder."""
        return render(PROMPTS, template, override=self.options["prompts"], **variables)


def dimension_line(decision: DimensionVerdict, language: str) -> str:
    """A dimension verdict as the rationale states it: "argument: PRO wins (PRO 7, CON 5)." (in Chinese
    "argument：正方胜（正方 7 分，反方 5 分）。"), true with the sides' names exchanged as with them as they are."""
    words = LINES.get(language, LINES["en"])
    return words["line"].format(dimension=decision["dimension"], outcome=words[decision["winner"]],
                                pro=decision["pro_score"], con=decision["con_score"])


def weighted_points(decisions: Sequence[DimensionVerdict]) -> tuple[float, float]:
    """(PRO, CON) weighted points: Σ weight × points, a dimension won is 1, a tie 0.5 to each side."""
    pro, con = (sum(d["weight"] * points(d["winner"], side) for d in decisions) for side in ("pro", "con"))
    return pro, con


def weighted_vote(decisions: Sequence[DimensionVerdict], *, ties: bool = True) -> Outcome | None:
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
