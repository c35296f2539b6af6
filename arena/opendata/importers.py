"""The importer contract: read a folder of debates held elsewhere, return them as the arena's plain records.

An importer is a kind, like a debater or a judge: built-ins in arena.opendata.registry, plug-ins by the entry-point
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
  their speeches in their debate format (Match.format, arena.domain.formats) and the imported judges' verdicts
  (Verdict.extra keeps what the source said beyond winner, dimensions and rationale).
- skipped: each file or row left out, with why; a folder that is not the source's layout at all is a
  UserError naming the path and what is missing instead.
New fields of Imported have defaults, so an importer written against this contract keeps working.
"""
from __future__ import annotations

import os
import stat
from io import BufferedReader
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from arena.base.limits import MAX_SOURCE_FILE_BYTES, MAX_SOURCE_LINE_BYTES
from arena.base.params import Param, resolve
from arena.domain.records import Entry, JudgeSpec, Match, Motion


class SourceRefused(ValueError):
    """A file of the source folder that is not read: not a regular file inside the folder, or past its size."""


def source_text(path: Path, folder: Path, limit: int | None = None) -> str:
    """The UTF-8 text of a source file, read only if it is a regular file inside folder (a link may point within
    the folder, not out of it; no FIFO or device, which opening does not wait on) of at most limit bytes
    (default MAX_SOURCE_FILE_BYTES), told before it is read; else SourceRefused says why (UnicodeDecodeError for
    text that is no UTF-8)."""
    with _source(path, folder, MAX_SOURCE_FILE_BYTES if limit is None else limit) as file:
        return file.read().decode("utf-8")


def source_lines(path: Path, folder: Path, limit: int = MAX_SOURCE_LINE_BYTES) -> Iterator[tuple[int, str | None]]:
    """(line number, text) of each line of a source file (checked as source_text checks it, whatever its size);
    a line past limit bytes is (number, None), never held whole."""
    with _source(path, folder, None) as file:
        number = 0
        while True:
            line = file.readline(limit + 1)
            if not line:
                return
            number += 1
            if len(line) > limit and not line.endswith(b"\n"):
                while (rest := file.readline(1 << 20)) and not rest.endswith(b"\n"):
                    pass  # the rest of the line, read a piece at a time and dropped
                yield number, None
                continue
            yield number, line.decode("utf-8")


class _source:
    """A source file opened for reading as source_text says (a context manager giving the binary file)."""

    def __init__(self, path: Path, folder: Path, limit: int | None):
        real, inside = os.path.realpath(path), os.path.realpath(folder)
        if os.path.commonpath([real, inside]) != inside:
            raise SourceRefused(f"a link to {real}, outside the folder read: not read")
        try:
            handle = os.open(real, os.O_RDONLY | os.O_NONBLOCK)
        except OSError as exc:
            raise SourceRefused(f"cannot read: {exc.strerror}") from None
        st = os.fstat(handle)
        if not stat.S_ISREG(st.st_mode):
            os.close(handle)
            raise SourceRefused("not a regular file (a FIFO, a device or a folder): not read")
        if limit is not None and st.st_size > limit:
            os.close(handle)
            raise SourceRefused(f"{st.st_size:,} bytes; a source file may hold at most {limit:,} bytes: not read")
        self.file = os.fdopen(handle, "rb")

    def __enter__(self) -> BufferedReader:
        return self.file

    def __exit__(self, *exc: object) -> None:
        self.file.close()


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
    debaters and judges); OPTIONS declares what it accepts (arena.base.params), e.g. `judge`, the name of the
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
