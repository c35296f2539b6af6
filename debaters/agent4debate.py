"""The `agent4debate` debater: Searcher, Analyzer, Writer and Reviewer cooperating in every stage.

A research round is the Searcher's: it plans web queries (from the motion in stage 1, from the
Writer's request otherwise), runs them, and compiles what is new into findings (claims and facts,
each with the numbers of the sources it rests on). Sources and findings make the side's knowledge
base, kept for the whole match and shown to all four agents; its numbering is the citations'.

Each speech: in stage 1 one round on the motion; the Analyzer plans; the Writer drafts, first asking
for material (a round each) while it has requests left (max_requests per speech, drafting and
revising together); the Reviewer checks a checklist that grows stage by stage and approves or asks
for a revision, and every revision is reviewed again, up to max_reviews reviews. Ablations leave
agents out through the `agents` param; the writer is always there.

Formats: each turn is played by the workflow its format maps it onto (arena.domain.formats: Turn.workflow, one of
constructive, rebuttal, summary); a format with a turn mapped onto none is refused (check_format).

Only the speech is essential. A step whose model gives no usable answer after the gateway's re-asks
(arena.gateway.llm.AnswerError) goes on with its neutral value, ledgered as degraded: no new queries, the raw
results without findings, no material request, the draft accepted, no analysis. The Writer falls back
from JSON to plain text; only a Writer that cannot produce text at all fails the speech.
"""
from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, TypedDict

from arena.domain import transcript
from arena.base.errors import UserError
from arena.gateway.fitting import Cut, Material
from arena.domain.formats import WORKFLOWS, Format
from arena.gateway.llm import AnswerError
from arena.base.prompts import render
from arena.match.protocol import DebateContext, Draft
from arena.domain.records import Entry
from debaters.knowledge import Finding, KnowledgeBase
from debaters.params import LENGTHS, SAMPLING, SIMULATOR, Param, length, resolve, sampling, speech_tokens

PROMPTS = Path(__file__).parent / "prompts" / "agent4debate"
ROLES = ("searcher", "analyzer", "writer", "reviewer")
# What each workflow adds to the Reviewer's checklist; a workflow checks its own items and every earlier one's.
CHECKS_ADDED = {
    "constructive": {
        "structure": "Is the argument structure complete: a frame, signposted points taken in turn, a conclusion?",
        "content": "Are the team's definitions, judging criterion and main points all there (set out, or upheld "
                   "in later stages), and fair?",
        "evidence": "Is every factual claim backed by a cited knowledge-base source that says it, or by clear "
                    "reasoning?",
        "fluency": "Does it read fluently aloud: clear sentences, natural transitions, no repetition, filler or "
                   "notes to self?",
    },
    "rebuttal": {
        "rebuttal_technique": "Is each of the other team's main arguments stated faithfully, then answered with a "
                              "fitting technique (deny, mitigate, turn or outweigh)?",
        "consistency": "Do the answers keep to the team's own stance and earlier speeches, with no "
                       "self-contradiction?",
    },
    "summary": {
        "depth": "Does it go deep: the battlegrounds weighed explicitly, and a close on the values at stake "
                 "rather than a list?",
        "no_new_arguments": "Does it bring no new argument, using any fresh evidence only to reinforce points the "
                            "team already made?",
    },
}
CHECKLISTS = {workflow: {item: question for earlier in WORKFLOWS[:i + 1]
                          for item, question in CHECKS_ADDED[earlier].items()}
              for i, workflow in enumerate(WORKFLOWS)}
BEARINGS = ("for us", "against us", "background")
STANDINGS = ("us", "them", "even")
# A JSON Schema for an answer: a JSON object as the model's structured output takes it, untyped by nature.
Schema = dict[str, Any]


class MaterialRequest(TypedDict, total=False):
    """The Writer's request for material (_request_schema): what is missing and a query; in the summary, the point
    it is to reinforce."""

    point: str
    need: str
    query: str


class DebateState(TypedDict):
    """The last stage's Reviewer's reading of the debate (_review_schema): who leads, and why."""

    leading: str
    reasons: list[str]
TEXT = {"type": "string", "minLength": 1}
# Every list in an answer has a bound: it keeps answer caps honest, and a grammar-constrained small model, which
# may otherwise add items until it is cut off, has to close the list.
MAX_GAPS, MAX_FEEDBACK, MAX_REASONS = 5, 6, 4


def _queries_schema(limit: int) -> Schema:
    return {"type": "object", "properties": {"queries": {"type": "array", "items": TEXT, "minItems": 1,
                                                         "maxItems": limit}},
            "required": ["queries"], "additionalProperties": False}


def _request_schema(stage: str) -> Schema:
    # In the summary a request must name the point made earlier that the material is to reinforce.
    properties = {"point": TEXT} if stage == "summary" else {}
    properties |= {"need": TEXT, "query": TEXT}
    return {"type": ["object", "null"], "properties": properties, "required": list(properties),
            "additionalProperties": False}


def _writer_schema(stage: str, can_request: bool) -> Schema:
    # With a request, the speech waits for the material and may be empty; otherwise it must be there.
    properties: dict[str, Any] = {"speech": {"type": "string"} if can_request else TEXT}
    if can_request:
        properties = {"material_request": _request_schema(stage), **properties}
    return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}


def _findings_schema(numbers: list[int]) -> Schema:
    """A compilation of one round's new sources, numbered `numbers`: every finding rests on some of them."""
    finding = {"type": "object",
               "properties": {"topic": TEXT, "finding": TEXT, "bearing": {"type": "string", "enum": list(BEARINGS)},
                              "sources": {"type": "array", "items": {"type": "integer", "enum": numbers},
                                          "minItems": 1}},
               "required": ["topic", "finding", "bearing", "sources"], "additionalProperties": False}
    return {"type": "object",
            "properties": {"findings": {"type": "array", "items": finding, "minItems": 1,
                                        "maxItems": 2 * len(numbers) + 2},
                           "gaps": {"type": "array", "items": {"type": "string"}, "maxItems": MAX_GAPS}},
            "required": ["findings", "gaps"], "additionalProperties": False}


def _review_schema(stage: str) -> Schema:
    check = {"type": "object", "properties": {"item": {"type": "string", "enum": list(CHECKLISTS[stage])},
                                              "ok": {"type": "boolean"}, "note": {"type": "string"}},
             "required": ["item", "ok", "note"], "additionalProperties": False}
    properties: dict[str, Any] = {"checks": {"type": "array", "items": check, "maxItems": len(CHECKLISTS[stage])}}
    if stage == "summary":  # the last stage's review also reads the state of the debate, with its reasons
        properties["debate_state"] = {
            "type": "object", "properties": {"leading": {"type": "string", "enum": list(STANDINGS)},
                                             "reasons": {"type": "array", "items": TEXT, "minItems": 1,
                                                         "maxItems": MAX_REASONS}},
            "required": ["leading", "reasons"], "additionalProperties": False}
    properties |= {"approve": {"type": "boolean"},
                   "feedback": {"type": "array", "items": {"type": "string"}, "maxItems": MAX_FEEDBACK}}
    return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}


def _workflow(ctx: DebateContext) -> str:
    """The workflow that plays this turn (check_format has made sure there is one)."""
    workflow = ctx.turn.workflow
    if workflow is None:  # not reached: check_format refuses a format with a turn no workflow plays
        raise ValueError(f"no agent4debate workflow plays the turn {ctx.turn.stage} ({ctx.turn.side})")
    return workflow


def _max_findings(sources: int) -> int:
    return 2 * sources + 2


def _compile_tokens(sources: int) -> int:
    """The answer cap of a compilation: room for a few findings per new source."""
    return 256 + 160 * sources


def _agents(value: Any) -> bool:
    return isinstance(value, list) and "writer" in value and set(value) <= set(ROLES) and len(set(value)) == len(value)


class Agent4Debate:
    PARAMS = {
        **SAMPLING,
        **LENGTHS,
        **SIMULATOR,
        "agents": Param(list(ROLES), (list,), "the agents that take part (ablations leave some out)", _agents,
                        "a list of distinct roles from searcher, analyzer, writer, reviewer that includes writer"),
        "max_queries": Param(6, (int,), "searches the Searcher plans on the motion in stage 1", lambda v: 1 <= v <= 20,
                             "from 1 to 20"),
        "request_queries": Param(2, (int,), "searches the Searcher plans for each of the Writer's material requests",
                                 lambda v: 1 <= v <= 10, "from 1 to 10"),
        "max_results": Param(None, (int,), "results per search (default: [search] max_results)",
                             lambda v: 1 <= v <= 20, "from 1 to 20"),
        "search_depth": Param("basic", (str,), "Tavily search depth", lambda v: v in ("basic", "advanced"),
                              "'basic' or 'advanced'"),
        "max_requests": Param(2, (int,), "material requests the Writer may make per speech, in any stage, drafting "
                                         "and revising together", lambda v: 0 <= v <= 10, "from 0 to 10"),
        "max_reviews": Param(3, (int,), "Reviewer calls per speech: the first draft and each revision is reviewed, "
                                        "so at most max_reviews - 1 revisions", lambda v: 0 <= v <= 10,
                             "from 0 to 10"),
    }

    def __init__(self, entry: Entry):
        self.params = resolve(entry, self.PARAMS)
        self.agents = set(self.params["agents"])
        self.sampling = sampling(self.params)

    @property
    def uses_search(self) -> bool:
        """Whether it searches the web (the key of [search] provider is needed before a run): with a Searcher."""
        return "searcher" in self.agents

    @staticmethod
    def check_format(fmt: Format) -> None:
        """Refuse a format with a turn that maps onto none of the three workflows, naming the first such turn."""
        unmapped = fmt.unmapped()
        if unmapped:
            turn = unmapped[0]
            raise UserError(f"cannot play the {fmt.name!r} debate format: its turn {turn.title!r} (stage "
                            f"{turn.stage}, {turn.side.upper()}) maps onto none of the agent4debate workflows "
                            f"({', '.join(WORKFLOWS)})")

    async def speak(self, ctx: DebateContext) -> Draft:
        self.check_format(ctx.format)
        kb: KnowledgeBase = ctx.memory.setdefault("knowledge", KnowledgeBase())
        if _workflow(ctx) == "constructive" and "searcher" in self.agents:
            await self._research(ctx, kb)
        analysis = await self._analyse(ctx, kb) if "analyzer" in self.agents else ""
        requests = self.params["max_requests"] if "searcher" in self.agents else 0
        draft, requests = await self._write(ctx, kb, analysis, requests)
        if "reviewer" in self.agents:
            draft = await self._review_loop(ctx, kb, analysis, draft, requests)
        return Draft(*kb.cite(draft), budget=length(self.params, ctx.turn, ctx.language).amount)

    def _prompt(self, ctx: DebateContext, role: str, kb: KnowledgeBase, *, new: list[int] | None = None,
                **extra: Any) -> Material:
        """role's prompt for this stage, as material that fits itself to the model's window.

        new: the sources a research round just found, shown whole for the Searcher to compile; extra: the
        template's other variables, any values jinja renders.
        """
        def text(cut: Cut) -> str:
            # The stage as the prompt's language names it, and where it stands: "constructive", "stage 1 of 3: ...".
            return render(PROMPTS, f"{role}/{_workflow(ctx)}.j2", motion=ctx.motion, side=ctx.side,
                          stage=ctx.format.label(ctx.stage, ctx.language),
                          stage_order=ctx.format.place(ctx.stage, ctx.language), language=ctx.language,
                          sources=kb.render(drop=cut.sources), findings=kb.render_findings(drop=cut.sources),
                          gaps=kb.gaps, found=kb.render(drop=cut.sources, only=new, full=True) if new else "",
                          transcript=ctx.transcript(cut) if ctx.visible else "", **extra)

        return Material(text, sources=len(kb.sources), speeches=transcript.words(ctx.visible))

    def _speech_tokens(self, ctx: DebateContext) -> int:
        return speech_tokens(length(self.params, ctx.turn, ctx.language)) + 64  # and the JSON around the speech

    async def _research(self, ctx: DebateContext, kb: KnowledgeBase, request: MaterialRequest | None = None) -> None:
        """One round: plan queries (on the motion, or for the Writer's request), search, compile what is new."""
        limit = self.params["request_queries" if request else "max_queries"]
        prompt = self._prompt(ctx, "searcher", kb, step="plan", max_queries=limit, request=request)
        try:
            planned = await ctx.llm.complete("searcher", prompt, schema=_queries_schema(limit), params=self.sampling)
        except AnswerError as exc:
            ctx.llm.degraded("searcher", exc, "no new queries")
            return
        queries = list(dict.fromkeys(q.strip() for q in planned.data["queries"] if q.strip()))
        found = await asyncio.gather(*(ctx.search.search(q, max_results=self.params["max_results"],
                                                         search_depth=self.params["search_depth"])
                                       for q in queries))
        new = [s.number for results in found for s in kb.add(results)]
        if not new:
            return  # nothing found that the base does not hold already
        prompt = self._prompt(ctx, "searcher", kb, step="compile", request=request, queries=queries, new=new,
                              max_findings=_max_findings(len(new)), max_gaps=MAX_GAPS)
        try:
            compiled = await ctx.llm.complete("searcher", prompt, schema=_findings_schema(new), params=self.sampling,
                                              max_tokens=_compile_tokens(len(new)))
        except AnswerError as exc:  # the sources are in the base already; only the findings are missing
            ctx.llm.degraded("searcher", exc, "the raw results")
            return
        kb.record((Finding(f["topic"], f["finding"], f["bearing"], tuple(f["sources"]))
                   for f in compiled.data["findings"]), compiled.data["gaps"])

    async def _analyse(self, ctx: DebateContext, kb: KnowledgeBase) -> str:
        try:
            answer = await ctx.llm.complete("analyzer", self._prompt(ctx, "analyzer", kb), params=self.sampling,
                                            max_tokens=self._speech_tokens(ctx))
        except AnswerError as exc:
            ctx.llm.degraded("analyzer", exc, "no analysis")
            return ""
        return answer.text.strip()

    async def _write(self, ctx: DebateContext, kb: KnowledgeBase, analysis: str, requests: int, *,
                     draft: str = "", feedback: list[str] | None = None,
                     state: DebateState | None = None) -> tuple[str, int]:
        """The speech, drafted or (with feedback) revised, and the material requests still left for this speech.

        While requests are left the Writer may ask for material first; each request is a research round.
        An unusable answer costs the Writer its requests; one without any is asked for plain text instead.
        """
        while True:
            can_request = requests > 0
            budget = length(self.params, ctx.turn, ctx.language)

            def prompt(plain: bool = False) -> Material:
                return self._prompt(ctx, "writer", kb, analysis=analysis, length=budget.amount, unit=budget.unit,
                                    can_request=can_request, requests_left=requests, draft=draft,
                                    feedback=feedback or [], state=state, plain=plain)

            def speech_problem(text: str, data: Any) -> str:
                """A speech that is none (a placeholder, a loop, ...) is asked for again, before the protocol
                forfeits it; a material request carries no speech to check."""
                speech = data["speech"] if isinstance(data, dict) else text
                if isinstance(data, dict) and data.get("material_request") is not None:
                    return ""
                return ctx.speech_problem(speech.strip(), budget.amount)

            try:
                answer = await ctx.llm.complete("writer", prompt(), schema=_writer_schema(_workflow(ctx), can_request),
                                                params=self.sampling, max_tokens=self._speech_tokens(ctx),
                                                check=speech_problem)
            except AnswerError as exc:
                if can_request:
                    ctx.llm.degraded("writer", exc, "no material request")
                    requests = 0
                    continue
                ctx.llm.degraded("writer", exc, "a plain-text speech")
                # The speech is essential: an AnswerError here fails it, and the side forfeits.
                written = await ctx.llm.complete("writer", prompt(plain=True), params=self.sampling,
                                                 max_tokens=self._speech_tokens(ctx), check=speech_problem)
                return written.text.strip(), requests
            request = answer.data.get("material_request")
            speech = answer.data["speech"].strip()
            if request is not None:
                requests -= 1
                await self._research(ctx, kb, request=request)
            elif speech or not can_request:
                return speech or draft, requests
            else:
                requests = 0  # neither material nor a speech: ask again, for the speech only

    async def _review_loop(self, ctx: DebateContext, kb: KnowledgeBase, analysis: str, draft: str,
                           requests: int) -> str:
        """Review the draft and every revision, at most max_reviews reviews; the Writer revises after each
        rejection but the last, so the draft that stands is always one the Reviewer saw."""
        reviews = self.params["max_reviews"]
        for n in range(1, reviews + 1):
            try:
                review = await ctx.llm.complete(
                    "reviewer", self._prompt(ctx, "reviewer", kb, draft=draft, checklist=CHECKLISTS[_workflow(ctx)],
                                             max_feedback=MAX_FEEDBACK, max_reasons=MAX_REASONS),
                    schema=_review_schema(_workflow(ctx)), params=self.sampling)
            except AnswerError as exc:
                ctx.llm.degraded("reviewer", exc, "the draft accepted")
                break
            if review.data["approve"] or n == reviews:
                break
            feedback = review.data["feedback"] or [f"{c['item']}: {c['note']}" for c in review.data["checks"]
                                                   if not c["ok"]] or ["Strengthen the weakest part of the speech."]
            try:
                draft, requests = await self._write(ctx, kb, analysis, requests, draft=draft, feedback=feedback,
                                                    state=review.data.get("debate_state"))
            except AnswerError as exc:  # a revision that is no speech: the reviewed draft stands
                ctx.llm.degraded("writer", exc, "the draft before it")
                break
        return draft
