"""The `search-baseline` debater: one web search on the motion, a small knowledge base, one call per speech.

It plays any format, with the `direct` baseline's prompts (debaters.direct.turn_prompt) and sources added."""
from __future__ import annotations

from arena.domain import transcript
from arena.gateway.fitting import Cut, Material
from arena.base.prompts import render
from arena.match.protocol import DebateContext, Draft
from arena.domain.records import Entry
from debaters.direct import PROMPTS, turn_prompt
from debaters.knowledge import KnowledgeBase
from debaters.params import LENGTHS, SAMPLING, SIMULATOR, Param, length, resolve, sampling, speech_tokens


class SearchBaseline:
    uses_json = False  # the run's probe asks its model for no structured answer
    uses_search = True  # the key of [search] provider is needed before a run
    PARAMS = {
        **SAMPLING,
        **LENGTHS,
        **SIMULATOR,
        "max_results": Param(5, (int,), "results of the one search", lambda v: 1 <= v <= 20, "from 1 to 20"),
        "search_depth": Param("basic", (str,), "Tavily search depth", lambda v: v in ("basic", "advanced"),
                              "'basic' or 'advanced'"),
    }

    def __init__(self, entry: Entry):
        self.params = resolve(entry, self.PARAMS)
        self.sampling = sampling(self.params)

    async def speak(self, ctx: DebateContext) -> Draft:
        kb: KnowledgeBase | None = ctx.memory.get("knowledge")
        if kb is None:  # the first speech of this side searches once; the base then serves the whole match
            kb = ctx.memory["knowledge"] = KnowledgeBase()
            kb.add(await ctx.search.search(ctx.motion.proposition(ctx.side), max_results=self.params["max_results"],
                                           search_depth=self.params["search_depth"]))
        budget = length(self.params, ctx.turn, ctx.language)
        template, turn = turn_prompt("search_baseline", ctx)

        def prompt(cut: Cut) -> str:
            return render(PROMPTS, template, motion=ctx.motion, side=ctx.side,
                          language=ctx.language, sources=kb.render(drop=cut.sources), length=budget.amount,
                          unit=budget.unit,
                          transcript=ctx.transcript(cut) if ctx.visible else "", **turn)

        material = Material(prompt, sources=len(kb.sources), speeches=transcript.words(ctx.visible))
        answer = await ctx.llm.complete("writer", material, params=self.sampling, max_tokens=speech_tokens(budget),
                                        check=lambda text, _: ctx.speech_problem(text.strip(), budget.amount))
        return Draft(*kb.cite(answer.text.strip()), cut=answer.cut, budget=budget.amount)
