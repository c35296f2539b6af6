"""The `direct` baseline: one LLM call per speech from a stage-specific prompt, no research."""
from __future__ import annotations

from pathlib import Path

from arena import transcript
from arena.prompts import render
from arena.protocol import DebateContext, Draft
from arena.records import Entry
from debaters.params import LENGTHS, SAMPLING, resolve, sampling

PROMPTS = Path(__file__).parent / "prompts"


class DirectDebater:
    """Writes each speech in one call from the motion and the speeches it may see."""

    PARAMS = {**SAMPLING, **LENGTHS}

    def __init__(self, entry: Entry):
        self.params = resolve(entry, self.PARAMS)
        self.sampling = sampling(self.params)

    async def speak(self, ctx: DebateContext) -> Draft:
        prompt = render(PROMPTS, f"direct/{ctx.stage}.j2", motion=ctx.motion, side=ctx.side, language=ctx.language,
                        transcript=transcript.render(ctx.visible) if ctx.visible else "",
                        words=self.params[f"words_{ctx.stage}"])
        answer = await ctx.llm.complete("writer", prompt, params=self.sampling)
        return Draft(answer.text.strip())
