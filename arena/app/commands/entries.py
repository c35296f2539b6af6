"""`arena entry list | add | show | retire | remove`: the debater entries of arena.toml."""
from __future__ import annotations

from typing import Any, Mapping

from arena.app.runner.check import keyless
from arena.app.runner.juries import family_note, relying_juries
from arena.app.setup.wiring import editing, reload
from arena.app.shapes import records as shapes
from arena.base.errors import UserError
from arena.domain.records import Entry
from arena.gateway.credentials import SEARCH_KEY
from arena.workspace import registration
from arena.workspace.folder import Workspace
from debaters.registry import DEBATERS


def entry_list(ws: Workspace) -> list[shapes.EntryRow]:
    """Every configured entry (shapes.entry_row), with what is wrong with its family (arena.app.runner.juries)."""
    counts, forfeits, simulated = ws.store.match_counts(), ws.store.forfeit_counts(), ws.store.simulated_entries()
    juries = bool(relying_juries(ws))
    return [shapes.entry_row(e, counts.get(e.name, 0), forfeits.get(e.name, 0),
                             e.simulated or e.name in simulated, family_warning=family_note(e, juries))
            for e in ws.config.entries]


def entry_add(ws: Workspace, name: str, *, debater: str, model: str, api_base: str | None = None,
              params: Mapping[str, Any] | None = None, strength: float | None = None,
              family: str | None = None) -> Entry:
    """Register an entry: check it, then append it to arena.toml (every existing byte kept). family: its own,
    else derived from the model (arena.domain.families)."""
    with editing(ws):
        reload(ws, registration.add_entry(ws.config, ws.store.entry_names(), DEBATERS, name=name, debater=debater,
                                           model=model, api_base=api_base, params=params, strength=strength,
                                           family=family))
        return ws.config.entry(name)


def entry_key_warnings(ws: Workspace, name: str) -> list[str]:
    """What `arena entry add` warns of, once the entry is in: each key the environment lacks that its model (or its
    web search) needs, since 'arena run' skips its matches until the key is there; or why its model cannot be
    checked."""
    try:
        needs = keyless(ws, [name])
    except UserError as exc:  # a model litellm cannot place: 'arena run' would refuse it, so say so now
        return [str(exc)]
    entry = ws.config.entry(name)
    return [f"{variable} is not set, and entry {name!r} needs it "
            f"({'its web search' if variable == SEARCH_KEY else entry.model}): 'arena run' skips its matches until "
            "it is exported (keys are read only from the environment)" for variable in needs]


def entry_show(ws: Workspace, name: str) -> shapes.EntryDetail:
    """One entry's configuration, status and completed-match count (shapes.entry_detail)."""
    entry = ws.config.entry(name)
    return shapes.entry_detail(entry, ws.store.match_counts().get(name, 0), ws.store.forfeit_counts().get(name, 0),
                               entry.simulated or name in ws.store.simulated_entries())


def entry_retire(ws: Workspace, name: str) -> None:
    """Mark an entry retired in arena.toml: it keeps its matches and rating, and is no longer scheduled."""
    with editing(ws):
        reload(ws, registration.retire_entry(ws.config, name))


def entry_remove(ws: Workspace, name: str) -> None:
    """Take an entry in no match, played or scheduled, out of arena.toml and the database (retire one that is)."""
    with editing(ws):  # counted and removed with no schedule between
        reload(ws, registration.remove_entry(ws.config, name, ws.store.entry_matches(name)))
        ws.store.forget_entry(name)
