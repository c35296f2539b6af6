"""The importer contract: read a folder of debates held elsewhere, return them as the arena's plain records.

An importer is a kind, like a debater or a judge: built-ins in importers.registry, plug-ins by the entry-point
group `arena.importers` (a class taking `options`, with OPTIONS and `read`). It imports only the kernel, reads
files and writes nothing; the app (`arena import KIND DIR`) checks the result against the workspace and
writes it: entries and judges into arena.toml, motions and matches into the database. So an importer
never sees a workspace, and a third source is one file.

What `read` returns, and how the app writes it:
- entries: usually of debater kind IMPORTED (never scheduled, never plays), model = the source's model id,
  params = what the source says of it (e.g. {"display": "...", "source": "..."}).
- judges: usually of kind IMPORTED (never run by the arena), options naming the source (and its panelists);
  runs = the most verdicts it gave one match.
- motions: every motion a match names.
- matches: done matches, ids as the source gives them (stable, so that a second import adds nothing), with
  their speeches in their debate format (Match.format, arena.formats) and the imported judges' verdicts
  (Verdict.extra keeps what the source said beyond winner, dimensions and rationale).
- skipped: each file or row left out, with why; a folder that is not the source's layout at all is a
  UserError naming the path and what is missing instead.
New fields of Imported have defaults, so an importer written against this contract keeps working.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from arena.params import Param, resolve
from arena.records import Entry, JudgeSpec, Match, Motion


@dataclass(frozen=True)
class Skipped:
    """A file (or a row of one) the importer left out, and why."""

    path: str  # relative to the folder read; "file.md:12" for a row
    reason: str


@dataclass(frozen=True)
class Imported:
    """What an importer read from a folder."""

    source: str  # where it came from, for people: "lechmazur/debate at /tmp/lech"
    entries: tuple[Entry, ...] = ()
    judges: tuple[JudgeSpec, ...] = ()
    motions: tuple[Motion, ...] = ()
    matches: tuple[Match, ...] = ()
    skipped: tuple[Skipped, ...] = ()
    created_at: Mapping[str, str] = field(default_factory=dict)  # match id → when it was made, if the source says
    # (match id, judge, run) → whether that verdict is simulated, where it is not as its match is (an offline
    # judge's verdicts on real debates): Store.import_matches' `simulated`
    simulated: Mapping[tuple[str, str, int], bool] = field(default_factory=dict)

    @property
    def runs(self) -> int:
        """Verdicts (judge runs) over all matches."""
        return sum(len(m.verdicts) for m in self.matches)


class Importer:
    """Base of an importer kind: validated options in, `read(folder)` → Imported.

    Built as `Importer(kind, options)`: kind is the name the registry knows it by (its only spelling, as for
    debaters and judges); OPTIONS declares what it accepts (arena.params), e.g. `judge`, the name of the
    imported judge. Unknown or ill-typed options are a UserError naming the importer.
    """

    OPTIONS: dict[str, Param] = {}

    def __init__(self, kind: str, options: Mapping[str, Any] | None = None):
        self.kind = kind
        self.options = resolve(dict(options or {}), self.OPTIONS, f"the {kind} importer", "option")

    def read(self, folder: Path) -> Imported:
        """The folder's debates as records; UserError (naming the path and what is missing) if it is not the
        source's layout. Never writes."""
        raise NotImplementedError
