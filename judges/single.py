"""The `single` judge: one structured LLM call per run — the LLM-as-a-judge baseline."""
from __future__ import annotations

from pathlib import Path

from arena.base.params import Param
from arena.base.prompts import render
from arena.match.protocol import LLMHandle
from arena.domain.records import DIMENSIONS
from arena.match.judging import BaseJudge, Decision, JudgeView, paper_temperature, verdict_schema
from judges.guard import guard_rule

PROMPTS = Path(__file__).parent / "prompts" / "single"


class SingleJudge(BaseJudge):
    OPTIONS = {
        "temperature": paper_temperature("the single-agent judges ChatEval (§3.1) and DEBATE (appendix C.1) "
                                         "compare with"),
        "overall_ties": Param(False, (bool,), "may the overall verdict be a tie"),
    }

    async def decide(self, view: JudgeView, llm: LLMHandle) -> Decision:
        ties, language = self.options["overall_ties"], self.language(view)
        prompt = view.material(lambda text: render(PROMPTS, "verdict.j2", motion=view.motion, transcript=text,
                                                   overall_ties=ties, language=language,
                                                   guard=guard_rule(self.options["guard"], language)))
        answer = await llm.complete("judge", prompt, schema=verdict_schema(overall_ties=ties),
                                    params={"temperature": self.options["temperature"]})
        data = answer.data
        return Decision(data["overall"], {d: data[d] for d in DIMENSIONS}, data["rationale"])
