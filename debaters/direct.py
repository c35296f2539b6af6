"""The `direct` baseline: one LLM call per speech from a stage-specific prompt, no research."""
from __future__ import annotations

from pathlib import Path

from arena import transcript
from arena.fitting import Cut, Material
from arena.prompts import render
from arena.protocol import DebateContext, Draft
from arena.records import Entry
from debaters.params import LENGTHS, SAMPLING, length, resolve, sampling, speech_tokens

PROMPTS = Path(__file__).parent / "prompts"


class DirectDebater:
    """Writes each speech in one call from the motion and the speeches it may see."""

    PARAMS = {**SAMPLING, **LENGTHS}
    uses_json = False  # the run's probe asks its model for no structured answer

    def __init__(self, entry: Entry):
        self.params = resolve(entry, self.PARAMS)
        self.sampling = sampling(self.params)

    async def speak(self, ctx: DebateContext) -> Draft:
        budget = length(self.params, ctx.stage, ctx.language)

        def prompt(cut: Cut) -> str:
            return render(PROMPTS, f"direct/{ctx.stage}.j2", motion=ctx.motion, side=ctx.side, language=ctx.language,
                          transcript=transcript.render(ctx.visible, cut=cut, language=ctx.language)
                          if ctx.visible else "",
                          length=budget.amount, unit=budget.unit)

        answer = await ctx.llm.complete("writer", Material(prompt, speeches=transcript.words(ctx.visible)),
                                        params=self.sampling, max_tokens=speech_tokens(budget))
        return Draft(answer.text.strip(), cut=answer.cut)
