"""The `agent4debate` debater: Searcher, Analyzer, Writer and Reviewer cooperating in every stage.

Stage 1: the Searcher decomposes the motion into queries and builds the side's knowledge base
(kept for the whole match); the Analyzer plans the case; the Writer drafts; the Reviewer
approves or asks for a revision, up to max_reviews times. Stages 2 and 3: the Searcher works
only when the Writer asks for material, at most max_requests times per stage. Ablations
leave agents out through the `agents` param; the writer is always there.
"""
from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from arena import transcript
from arena.fitting import Cut, Material
from arena.prompts import render
from arena.protocol import DebateContext, Draft
from arena.records import Entry
from debaters.knowledge import KnowledgeBase
from debaters.params import LENGTHS, SAMPLING, Param, resolve, sampling, speech_tokens

PROMPTS = Path(__file__).parent / "prompts" / "agent4debate"
ROLES = ("searcher", "analyzer", "writer", "reviewer")
STAGE_ORDER = {
    "constructive": "stage 1 of 3: both teams open independently",
    "rebuttal": "stage 2 of 3: PRO speaks first, then CON",
    "summary": "stage 3 of 3: CON speaks first, then PRO",
}
CHECKLISTS = {
    "constructive": {
        "structure": "Is there a clear frame, signposted arguments and a conclusion?",
        "definitions": "Are the key terms defined fairly, and is a judging criterion stated?",
        "evidence": "Is every factual claim supported by a cited knowledge-base source or clear reasoning?",
        "logic": "Does each argument actually lead to the team's side of the motion?",
        "depth": "Are the arguments developed (mechanism, impact) rather than asserted?",
    },
    "rebuttal": {
        "structure": "Can a judge follow which opposing argument is being answered where?",
        "rebuttal_technique": "Are the other team's main arguments each stated faithfully and then answered?",
        "evidence": "Are the answers supported by cited sources or clear reasoning?",
        "logic": "Are fallacies in the other team's case exposed, and none committed?",
        "consistency": "Is the speech consistent with the team's earlier speech and framework?",
        "depth": "Are the team's own attacked arguments rebuilt?",
    },
    "summary": {
        "structure": "Are the battlegrounds named and taken in turn?",
        "logic": "Is the weighing explicit: why do the battlegrounds won matter most?",
        "consistency": "Is it consistent with the team's earlier speeches, with no new arguments?",
        "evidence": "Are references to earlier evidence accurate?",
        "depth": "Does it close with a value-level appeal rather than a list?",
    },
}
QUERIES = {"type": "object", "properties": {"queries": {"type": "array", "items": {"type": "string", "minLength": 1},
                                                        "minItems": 1}},
           "required": ["queries"], "additionalProperties": False}
REQUEST = {"type": ["object", "null"], "properties": {"need": {"type": "string", "minLength": 1},
                                                     "query": {"type": "string", "minLength": 1}},
           "required": ["need", "query"], "additionalProperties": False}


def _writer_schema(can_request: bool) -> dict:
    # With a request, the speech waits for the material and may be empty; otherwise it must be there.
    properties: dict[str, Any] = {"speech": {"type": "string"} if can_request else {"type": "string", "minLength": 1}}
    if can_request:
        properties = {"material_request": REQUEST, **properties}
    return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}


def _review_schema(stage: str) -> dict:
    check = {"type": "object", "properties": {"item": {"type": "string", "enum": list(CHECKLISTS[stage])},
                                              "ok": {"type": "boolean"}, "note": {"type": "string"}},
             "required": ["item", "ok", "note"], "additionalProperties": False}
    return {"type": "object", "properties": {"checks": {"type": "array", "items": check},
                                             "approve": {"type": "boolean"},
                                             "feedback": {"type": "array", "items": {"type": "string"}}},
            "required": ["checks", "approve", "feedback"], "additionalProperties": False}


def _agents(value: Any) -> bool:
    return isinstance(value, list) and "writer" in value and set(value) <= set(ROLES) and len(set(value)) == len(value)


class Agent4Debate:
    PARAMS = {
        **SAMPLING,
        **LENGTHS,
        "agents": Param(list(ROLES), (list,), "the agents that take part (ablations leave some out)", _agents,
                        "a list of distinct roles from searcher, analyzer, writer, reviewer that includes writer"),
        "max_queries": Param(6, (int,), "searches the Searcher plans in stage 1", lambda v: 1 <= v <= 20,
                             "from 1 to 20"),
        "max_results": Param(None, (int,), "results per search (default: [search] max_results)",
                             lambda v: 1 <= v <= 20, "from 1 to 20"),
        "search_depth": Param("basic", (str,), "Tavily search depth", lambda v: v in ("basic", "advanced"),
                              "'basic' or 'advanced'"),
        "max_requests": Param(2, (int,), "material requests the Writer may make per stage (stages 2-3)",
                              lambda v: 0 <= v <= 10, "from 0 to 10"),
        "max_reviews": Param(3, (int,), "reviews per speech before the draft stands", lambda v: 0 <= v <= 10,
                             "from 0 to 10"),
    }

    def __init__(self, entry: Entry):
        self.params = resolve(entry, self.PARAMS)
        self.agents = set(self.params["agents"])
        self.sampling = sampling(self.params)

    async def speak(self, ctx: DebateContext) -> Draft:
        kb: KnowledgeBase = ctx.memory.setdefault("knowledge", KnowledgeBase())
        if ctx.stage == "constructive" and "searcher" in self.agents:
            await self._research(ctx, kb)
        analysis = await self._analyse(ctx, kb) if "analyzer" in self.agents else ""
        draft = await self._write(ctx, kb, analysis)
        if "reviewer" in self.agents:
            draft = await self._review_loop(ctx, kb, analysis, draft)
        return Draft(*kb.cite(draft))

    def _prompt(self, ctx: DebateContext, role: str, kb: KnowledgeBase, **extra) -> Material:
        """role's prompt for this stage, as material that fits itself to the model's window."""
        def text(cut: Cut) -> str:
            return render(PROMPTS, f"{role}/{ctx.stage}.j2", motion=ctx.motion, side=ctx.side, stage=ctx.stage,
                          stage_order=STAGE_ORDER[ctx.stage], language=ctx.language,
                          sources=kb.render(drop=cut.sources),
                          transcript=transcript.render(ctx.visible, cut=cut) if ctx.visible else "", **extra)

        return Material(text, sources=len(kb.sources), speeches=transcript.words(ctx.visible))

    def _speech_tokens(self, ctx: DebateContext) -> int:
        return speech_tokens(self.params[f"words_{ctx.stage}"]) + 64  # and the JSON around the speech

    async def _research(self, ctx: DebateContext, kb: KnowledgeBase, request: dict | None = None) -> None:
        """Plan queries (proactively in stage 1, from the Writer's request later), search, grow the base."""
        limit = 2 if request else self.params["max_queries"]
        prompt = self._prompt(ctx, "searcher", kb, max_queries=limit, request=request)
        planned = await ctx.llm.complete("searcher", prompt, schema=QUERIES, params=self.sampling)
        queries = list(dict.fromkeys(q.strip() for q in planned.data["queries"] if q.strip()))[:limit]
        found = await asyncio.gather(*(ctx.search.search(q, max_results=self.params["max_results"],
                                                         search_depth=self.params["search_depth"])
                                       for q in queries))
        for results in found:
            kb.add(results)

    async def _analyse(self, ctx: DebateContext, kb: KnowledgeBase) -> str:
        answer = await ctx.llm.complete("analyzer", self._prompt(ctx, "analyzer", kb), params=self.sampling,
                                        max_tokens=self._speech_tokens(ctx))
        return answer.text.strip()

    async def _write(self, ctx: DebateContext, kb: KnowledgeBase, analysis: str) -> str:
        """Draft the speech; in stages 2-3 the Writer may first ask the Searcher for material."""
        requests = 0
        while True:
            can_request = (ctx.stage != "constructive" and "searcher" in self.agents
                           and requests < self.params["max_requests"])
            prompt = self._prompt(ctx, "writer", kb, analysis=analysis, words=self.params[f"words_{ctx.stage}"],
                                  can_request=can_request, requests_left=self.params["max_requests"] - requests,
                                  draft="", feedback=[])
            answer = await ctx.llm.complete("writer", prompt, schema=_writer_schema(can_request),
                                            params=self.sampling, max_tokens=self._speech_tokens(ctx))
            request = answer.data.get("material_request") if can_request else None
            speech = answer.data["speech"].strip()
            if request is None and (speech or not can_request):
                return speech
            requests = self.params["max_requests"] if request is None else requests + 1
            if request is not None:
                await self._research(ctx, kb, request=request)

    async def _review_loop(self, ctx: DebateContext, kb: KnowledgeBase, analysis: str, draft: str) -> str:
        """Review, and revise on every rejection; at most max_reviews reviews."""
        for _ in range(self.params["max_reviews"]):
            review = await ctx.llm.complete(
                "reviewer", self._prompt(ctx, "reviewer", kb, draft=draft, checklist=CHECKLISTS[ctx.stage]),
                schema=_review_schema(ctx.stage), params=self.sampling)
            if review.data["approve"]:
                break
            feedback = review.data["feedback"] or [f"{c['item']}: {c['note']}" for c in review.data["checks"]
                                                   if not c["ok"]] or ["Strengthen the weakest part of the speech."]
            prompt = self._prompt(ctx, "writer", kb, analysis=analysis, words=self.params[f"words_{ctx.stage}"],
                                  can_request=False, requests_left=0, draft=draft, feedback=feedback)
            revised = await ctx.llm.complete("writer", prompt, schema=_writer_schema(False), params=self.sampling,
                                             max_tokens=self._speech_tokens(ctx))
            draft = revised.data["speech"].strip() or draft
        return draft
