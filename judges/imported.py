"""The `imported` judge: verdicts an importer brought in (`arena import`), such as another arena's judge panel.

R is at most the number of verdicts it gave one match (a match may have fewer runs); the arena never runs
it, so `decide` exists only to say so, should a plug-in runner call it.
"""
from __future__ import annotations

from arena.base.errors import ArenaError
from arena.match.judging import BaseJudge, Decision, JudgeView
from arena.base.params import Param
from arena.match.protocol import LLMHandle


class ImportedJudge(BaseJudge):
    uses_model = False  # arena check probes nothing for it
    OPTIONS = {
        "source": Param("", (str,), "where its verdicts were imported from (e.g. 'lechmazur/debate')"),
        "panelists": Param([], (list,), "the source's judges whose rows are its runs, by the source's names"),
        "kind": Param("", (str,), "the judge kind it was where its verdicts were given (an arena export's judges)"),
    }

    @classmethod
    def accepted(cls) -> dict[str, Param]:
        return dict(cls.OPTIONS)  # no sampling options: nothing is sampled

    async def decide(self, view: JudgeView, llm: LLMHandle) -> Decision:
        raise ArenaError(f"{self.owner}: its verdicts were imported from {self.options['source'] or 'elsewhere'} "
                         "('arena import'); the arena does not run it")
