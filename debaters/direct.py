"""The `direct` baseline: one LLM call per speech from a stage-specific prompt, no research.

It plays any format: the agent4debate format's stages have prompts written for them; any other turn gets the
generic turn prompt, told the turn's title, its place in the debate and what it is for (arena.domain.formats).
"""
from __future__ import annotations

from pathlib import Path
from typing import TypedDict

from arena.domain import transcript
from arena.gateway.fitting import Cut, Material
from arena.domain.formats import AGENT4DEBATE
from arena.base.prompts import render
from arena.match.protocol import DebateContext, Draft
from arena.domain.records import Entry
from debaters.params import LENGTHS, SAMPLING, SIMULATOR, length, resolve, sampling, speech_tokens

PROMPTS = Path(__file__).parent / "prompts"


class TurnVariables(TypedDict, total=False):
    """A turn's variables for turn.j2, in a format other than agent4debate's (whose stages have templates of their
    own, and none)."""

    title: str
    brief: str
    number: int
    turns: int
    place: str


def turn_prompt(kind: str, ctx: DebateContext) -> tuple[str, TurnVariables]:
    """The template of the kind (direct, search_baseline) for this turn, and the turn's variables for it."""
    if ctx.turn in AGENT4DEBATE.turns:  # not another format's stage that happens to share a key
        return f"{kind}/{ctx.stage}.j2", {}
    fmt, turn = ctx.format, ctx.turn
    return f"{kind}/turn.j2", {"title": turn.title_in(ctx.language), "brief": turn.brief_in(ctx.language),
                               "number": fmt.number(turn.stage, turn.side), "turns": len(fmt.turns),
                               "place": fmt.place(turn.stage, ctx.language)}


class DirectDebater:
    """Writes each speech in one call from the motion and the speeches it may see."""

    PARAMS = {**SAMPLING, **LENGTHS, **SIMULATOR}
    uses_json = False  # the run's probe asks its model for no structured answer

    def __init__(self, entry: Entry):
        self.params = resolve(entry, self.PARAMS)
        self.sampling = sampling(self.params)

    async def speak(self, ctx: DebateContext) -> Draft:
        budget = length(self.params, ctx.turn, ctx.language)
        template, turn = turn_prompt("direct", ctx)

        def prompt(cut: Cut) -> str:
            return render(PROMPTS, template, motion=ctx.motion, side=ctx.side, language=ctx.language,
                          transcript=ctx.transcript(cut) if ctx.visible else "",
                          length=budget.amount, unit=budget.unit, **turn)

        answer = await ctx.llm.complete("writer", Material(prompt, speeches=transcript.words(ctx.visible)),
                                        params=self.sampling, max_tokens=speech_tokens(budget),
                                        check=lambda text, _: ctx.speech_problem(text.strip(), budget.amount))
        return Draft(answer.text.strip(), cut=answer.cut, budget=budget.amount)
