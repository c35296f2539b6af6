"""`arena import KIND DIR`: an importer (arena/opendata/) reads a folder of debates held elsewhere; this writes what it
read into the workspace: entries and judges into arena.toml (comments kept), motions and matches into the
database. Importing again adds nothing: what is there already is left as it is.

Everything is checked before anything is written: the folder (by the importer), names that clash with the
workspace's own entries and judges, the kinds of what would be registered, and each match's speeches against
its debate format.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Mapping, Sequence, TypeVar

from arena.workspace import registration
from arena.domain import speechchecks
from arena.app.shapes.reports import FlaggedSpeech, ImportReport, SpeechChecks
from arena.app.setup.wiring import editing, reload
from arena.workspace.config import check_entry_value, load_config
from arena.base.errors import UserError
from arena.base.registry import Registry
from arena.base.files import atomic_write_bytes
from arena.domain.formats import format_names, get_format, known, shown
from arena.domain.records import Entry, JudgeSpec, Match
from arena.workspace.folder import Workspace
from debaters.registry import DEBATERS
from arena.opendata.importers import Imported, Skipped
from arena.opendata.registry import IMPORTERS
from judges.registry import JUDGES


def import_folder(ws: Workspace, kind: str, folder: Path, options: Mapping[str, Any] | None = None) -> ImportReport:
    """Read folder with the importer kind (options: its OPTIONS, e.g. judge) and add what is new; return the
    counts added ({matches, entries, judges, runs, motions}), what was there already, and what was skipped."""
    importer = IMPORTERS.get(kind)(kind, options or {})
    found = importer.read(Path(folder))
    with editing(ws):  # what is new is decided against arena.toml as it is now, and written before another edit
        return _add(ws, kind, found)


def _add(ws: Workspace, kind: str, found: Imported) -> ImportReport:
    # A source id this workspace gives another match is named and left out, never taken for the same match; an
    # entry none of whose matches is left is not registered.
    taken = {m.id: pairing for m in found.matches
             if (pairing := ws.store.pairing(m.id)) not in (None, (m.motion.id, m.pro, m.con))}
    kept_names = {n for m in found.matches if m.id not in taken for n in (m.pro, m.con)}
    only_taken = {n for m in found.matches if m.id in taken for n in (m.pro, m.con)} - kept_names
    offered = [e for e in found.entries if e.name not in only_taken]
    entries = _new(offered, ws.config.entries, "entry", _same_entry, ws.store.entry_names())
    judges = _new(found.judges, ws.config.judges, "judge", _same_judge, set())
    for e in entries:
        check_entry_value("name", e.name, f"entry name {e.name!r}")
        _built(DEBATERS, e.debater, e, f"entry {e.name!r}")
    for j in judges:
        check_entry_value("name", j.name, f"judge name {j.name!r}")  # judges' names follow the same rule
        _built(JUDGES, j.kind, j, f"judge {j.name!r}")
    stored = ws.store.motions()
    skipped = list(found.skipped)
    matches = []
    for m in found.matches:
        kept = stored.get(m.motion.id)
        if m.id in taken:
            motion, pro, con = taken[m.id]
            skipped.append(Skipped(m.id, f"this workspace has a match of that id already, another one ({motion}: "
                                         f"PRO {pro} vs CON {con}): not imported"))
        elif kept is not None and kept != m.motion:
            skipped.append(Skipped(m.id, f"its motion {m.motion.id!r} is another motion in this workspace "
                                         f"({kept.text!r})"))
        else:
            matches.append(m)
    motions = [m for m in found.motions if m.id not in stored]
    _check_turns(ws, found.source, matches)

    before = ws.config.path.read_bytes() if entries or judges else b""
    if entries or judges:
        reload(ws, registration.add_records(ws.config, entries, judges,
                                            f"Imported from {found.source} ('arena import {kind}')"))
    try:
        ws.store.add_motions(motions)
        added = set(ws.store.import_matches(matches, created_at=found.created_at, simulated=found.simulated))
    except BaseException:
        if entries or judges:  # arena.toml and the database change together or not at all (the edit lock held)
            atomic_write_bytes(ws.config.path, before)
            reload(ws, load_config(ws.path))
        raise
    new = [m for m in matches if m.id in added]
    return {"kind": kind, "source": found.source, "matches": len(new), "entries": len(entries),
            "speech_checks": _speech_checks(ws, new),
            "judges": [j.name for j in judges], "runs": sum(len(m.verdicts) for m in new),
            "motions": len(motions),
            "known": {"matches": len(matches) - len(new), "entries": len(offered) - len(entries),
                      "judges": len(found.judges) - len(judges)},
            "skipped": [{"path": s.path, "reason": s.reason} for s in skipped]}


def _check_turns(ws: Workspace, source: str, matches: Sequence[Match]) -> None:
    """Every match to import in a debate format this workspace knows (built in, a plug-in's, declared in arena.toml),
    its speeches turns of it in its speaking order (Format.out_of_turn): a UserError naming the match otherwise,
    before anything is written. (An importer names the file and row where it can: arena.opendata.from_arena.)"""
    for m in matches:
        if not known(m.format, ws.config.formats):
            raise UserError(f"{source}: match {m.id!r} is in debate format {m.format!r}, which this workspace does "
                            f"not know (known: {', '.join(format_names(ws.config.formats))}); declare it in "
                            "arena.toml ([[formats]]) or install its plug-in, and import again; nothing was imported")
        wrong = get_format(m.format, ws.config.formats).out_of_turn((s.stage, s.side) for s in m.speeches)
        if wrong is not None:
            raise UserError(f"{source}: match {m.id!r}, speech {wrong[0] + 1}: {wrong[1]}; nothing was imported")


def _speech_checks(ws: Workspace, matches: Sequence[Match]) -> SpeechChecks | None:
    """What the speech checks (arena.domain.speechchecks) find in imported speeches: reported, never forfeited, since
    the source's judges read them as they were. None when the workspace does not check speeches."""
    settings = ws.config.arena
    if not settings.speech_checks:
        return None
    flagged: list[FlaggedSpeech] = [
        {"match": m.id, "stage": s.stage, "side": s.side, "problem": str(p)}
        for m in matches for s, p in speechchecks.match_problems(m, shown(m.format, ws.config.formats),
                                                                 settings.min_speech_share)]
    return {"speeches": sum(len(m.speeches) for m in matches), "flagged": flagged}


Record = TypeVar("Record", Entry, JudgeSpec)


def _new(records: Sequence[Record], configured: Sequence[Record], noun: str, same: Callable[[Record, Record], bool],
         remembered: set[str]) -> list[Record]:
    """The records not registered yet; UserError for one whose name the workspace gives to something else."""
    mine = {r.name: r for r in configured}
    out: list[Record] = []
    for r in records:
        there = mine.get(r.name)
        if there is None and r.name in remembered:
            raise UserError(f"the import would register {noun} {r.name!r}, but the workspace database remembers a "
                            f"removed {noun} of that name, whose matches keep it; nothing was imported")
        if there is None:
            out.append(r)
        elif not same(there, r):
            raise UserError(f"the import would register {noun} {r.name!r}, but arena.toml registers "
                            f"{_described(there)} under that name; nothing was imported"
                            + ("; choose another name with --judge" if noun == "judge" else ""))
    return out


def _same_entry(a: Entry, b: Entry) -> bool:
    return (a.debater, a.model) == (b.debater, b.model)


def _same_judge(a: JudgeSpec, b: JudgeSpec) -> bool:
    return (a.kind, a.model, a.options.get("source")) == (b.kind, b.model, b.options.get("source"))


def _described(r: Entry | JudgeSpec) -> str:
    return f"a {r.debater} entry on {r.model}" if isinstance(r, Entry) else f"a {r.kind} judge"


def _built(registry: Registry, kind: str, spec: Entry | JudgeSpec, owner: str) -> None:
    """Build the kind of an entry or judge about to be registered, so that what it refuses is refused before
    anything is written."""
    if not registry.has(kind):
        raise UserError(f"the import would register {owner} of unknown {registry.family} kind {kind!r} (known: "
                        f"{', '.join(registry.names())}); nothing was imported")
    registry.get(kind)(spec)
