"""The contracts for plug-in authors, in one documented module: what a debater, judge or importer kind written
outside this repository imports (docs/guides/plugins.md). Kinds register through the entry-point groups
`arena.debaters`, `arena.judges` and `arena.importers`; their classes take an `Entry`, a `JudgeSpec` or nothing.

The names below live in the kernel's rooms (arena.match, arena.domain, arena.base, arena.opendata); this module
re-exports them so that a plug-in depends on one path that stays, whatever room a name moves to."""
from arena.base.errors import ArenaError, UserError
from arena.base.params import Param, between, resolve
from arena.base.prompts import render
from arena.domain.records import (DIMENSIONS, SIDES, STAGES, Entry, JudgeSpec, Match, Motion, Reference, Side, Speech,
                                  Stage, Verdict)
from arena.match.judging import (COMMON_OPTIONS, SWAP, BaseJudge, Decision, JudgeView, Seat, Sitting, Unseated,
                                 paper_temperature, run_judge, verdict_schema)
from arena.match.protocol import DebateContext, Draft, LLMHandle
from arena.opendata.importers import Imported, Importer, Skipped, SourceRefused

__all__ = [
    # debaters: a class taking an Entry, with PARAMS and `async speak(ctx: DebateContext) -> Draft`
    "DebateContext", "Draft", "LLMHandle",
    # judges: a BaseJudge subclass taking a JudgeSpec
    "BaseJudge", "COMMON_OPTIONS", "Decision", "JudgeView", "SWAP", "Seat", "Sitting", "Unseated", "paper_temperature",
    "run_judge", "verdict_schema",
    # importers: an Importer subclass
    "Imported", "Importer", "Skipped", "SourceRefused",
    # the records and options every kind reads
    "DIMENSIONS", "SIDES", "STAGES", "Entry", "JudgeSpec", "Match", "Motion", "Reference", "Side", "Speech", "Stage",
    "Verdict", "Param", "between", "resolve", "render", "ArenaError", "UserError",
]
