"""The `human` judge: people vote, through private ballot links (`arena serve`) or an imported CSV.

R is the number of people; a ballot is stored as this judge's verdict with run = the person's index in
`people`. The arena never runs it: `decide` exists only to say so, should a plug-in runner call it.
"""
from __future__ import annotations

from arena.base.errors import ArenaError
from arena.match.judging import BaseJudge, Decision, JudgeView
from arena.base.params import Param
from arena.match.protocol import LLMHandle


class HumanJudge(BaseJudge):
    uses_model = False  # arena check probes nothing for it
    OPTIONS = {"people": Param([], (list,), "the people who vote, by name (checked with arena.toml); R = how many")}

    @classmethod
    def accepted(cls) -> dict[str, Param]:
        return dict(cls.OPTIONS)  # no sampling options: people are not sampled

    async def decide(self, view: JudgeView, llm: LLMHandle) -> Decision:
        raise ArenaError(f"{self.owner}: people cast its ballots ('arena serve', 'arena ballots import'); "
                         "the arena does not run it")
