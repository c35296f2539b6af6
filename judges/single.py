"""The `single` judge: one structured LLM call per run — the LLM-as-a-judge baseline."""
from __future__ import annotations

from pathlib import Path

from arena import transcript
from arena.errors import UserError
from arena.llm import LLMCallError
from arena.prompts import render
from arena.protocol import LLMHandle
from arena.records import DIMENSIONS, JudgeSpec, Verdict
from judges.base import JudgeView, unswap, verdict_schema

PROMPTS = Path(__file__).parent / "prompts" / "single"
OPTIONS = {"temperature", "swap_sides", "overall_ties", "language"}


class SingleJudge:
    def __init__(self, spec: JudgeSpec):
        unknown = set(spec.options) - OPTIONS
        if unknown:
            raise UserError(f"judge {spec.name!r}: unknown option(s) {', '.join(sorted(unknown))} "
                            f"(known: {', '.join(sorted(OPTIONS))})")
        self.spec = spec
        self.temperature = spec.options.get("temperature", 0.7)  # above 0 so that R runs are R samples
        self.swap = bool(spec.options.get("swap_sides", False))
        self.overall_ties = bool(spec.options.get("overall_ties", False))
        self.schema = verdict_schema(overall_ties=self.overall_ties)

    async def judge(self, view: JudgeView, llm: LLMHandle, run: int) -> Verdict:
        # With swap_sides, odd runs read the transcript with Pro and Con relabelled, to cancel label bias.
        swapped = self.swap and run % 2 == 1
        prompt = transcript.render(view.speeches, swap=swapped)
        text = render(PROMPTS, "verdict.j2", motion=view.motion, transcript=prompt, overall_ties=self.overall_ties,
                      language=self.spec.options.get("language", view.motion.language))
        try:
            answer = await llm.complete("judge", [{"role": "user", "content": text}], schema=self.schema,
                                        sample=run, params={"temperature": self.temperature})
        except LLMCallError as exc:
            return Verdict(self.spec.name, run, None, {}, "", error=str(exc))
        data = answer.data
        verdict = Verdict(self.spec.name, run, data["overall"], {d: data[d] for d in DIMENSIONS}, data["rationale"])
        return unswap(verdict) if swapped else verdict

