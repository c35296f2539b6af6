"""The `direct` baseline: one LLM call per speech from a stage-specific prompt, no research."""
from __future__ import annotations

from pathlib import Path

from arena import transcript
from arena.errors import UserError
from arena.prompts import render
from arena.protocol import DebateContext, Draft
from arena.records import Entry

PROMPTS = Path(__file__).parent / "prompts" / "direct"
SAMPLING = {"temperature": 0.2, "top_p": 0.75}
SAMPLING_KEYS = {"temperature", "top_p", "max_tokens", "seed", "presence_penalty", "frequency_penalty"}
WORDS = {"constructive": 450, "rebuttal": 400, "summary": 300}


class DirectDebater:
    """Writes each speech in one call from the motion and the speeches it may see."""

    def __init__(self, entry: Entry):
        params = dict(entry.params)
        unknown = set(params) - SAMPLING_KEYS - {f"words_{stage}" for stage in WORDS}
        if unknown:
            raise UserError(f"entry {entry.name!r}: unknown param(s) {', '.join(sorted(unknown))} for the direct "
                            f"debater (known: {', '.join(sorted(SAMPLING_KEYS))}, words_<stage>)")
        self.sampling = {**SAMPLING, **{k: v for k, v in params.items() if k in SAMPLING_KEYS}}
        self.words = {stage: params.get(f"words_{stage}", n) for stage, n in WORDS.items()}

    async def speak(self, ctx: DebateContext) -> Draft:
        prompt = render(PROMPTS, f"{ctx.stage}.j2", motion=ctx.motion, side=ctx.side, language=ctx.language,
                        transcript=transcript.render(ctx.visible) if ctx.visible else "",
                        words=self.words[ctx.stage])
        answer = await ctx.llm.complete("writer", [{"role": "user", "content": prompt}], params=self.sampling)
        return Draft(answer.text.strip())
