"""What `arena check` and `arena entry list` warn of juries and families, before a run finds out: a judge that
cannot sit on the matches of two entries (a jury whose pool has too few models of other families than theirs), a
declared `family` that the family table says otherwise of, and a family only guessed from a model's name that a
jury seats by (arena.domain.families). Warnings, not refusals: a declared family may be right, a guess too."""
from __future__ import annotations

from itertools import combinations
from typing import Iterable

from arena.base.errors import plural
from arena.domain.families import family_of, guessed_note, override_note
from arena.domain.records import JURY, Entry, JudgeSpec
from arena.match.judging import Sitting, Unseated
from arena.workspace.folder import Workspace


def relying_juries(ws: Workspace) -> list[JudgeSpec]:
    """The judges `arena run` and `arena judge` run that seat by families: juries that avoid a debater's family."""
    return [j for j in ws.config.automatic_judges
            if j.kind == JURY and getattr(ws.judges.get(j.name), "options", j.options).get("avoid_same_family", True)]


def family_note(entry: Entry, juries: bool) -> str:
    """What `arena entry list` says of an entry's family, "" if nothing: a declared family the table contradicts,
    or, where a jury seats by it (juries), a family only guessed from the model's name."""
    if entry.family != family_of(entry.model):  # declared: arena.toml's family, other than the model's own
        return override_note(entry.model, entry.family)
    guess = guessed_note(entry.model) if juries else ""
    return guess and f'{guess}: declare who made the model with family = "..." in its [[entries]] table'


# A pool model has no family key of its own: what helps is a model string the table knows, or another model.
POOL_ADVICE = ("a pool model's family is its model string's alone, so name the model as its maker's (as the family "
               "table knows it), or take it out of the pool")


def family_warnings(ws: Workspace, names: Iterable[str] = ()) -> list[str]:
    """A line per named entry (default: all) whose family family_note warns of, naming the entry; and, per relying
    jury among the names, per pool model whose family is only guessed."""
    chosen = set(names)
    juries = relying_juries(ws)
    said = [f"entry {e.name!r} ({e.model}): {note}" for e in ws.config.entries
            if not chosen or e.name in chosen for note in [family_note(e, bool(juries))] if note]
    said += [f"judge {j.name!r} (jury judge), pool model {model}: {note}: {POOL_ADVICE}" for j in juries
             if not chosen or j.name in chosen for model in j.models for note in [guessed_note(model)] if note]
    return said


def unseatable(ws: Workspace, names: Iterable[str] = ()) -> list[str]:
    """A line per named judge (default: all that run) and pair of families it cannot sit between (Unseated): of
    the scheduled matches' debaters, or, with none scheduled, of every two active entries. Each names the judge,
    the matches or entries, both families and its pool's (the judge's own message)."""
    chosen = set(names)
    config = ws.config
    scheduled: list[tuple[str | None, Entry, Entry]] = [
        (m.id, config.entry(m.pro), config.entry(m.con)) for m in ws.store.match_states(status="scheduled")]
    meetings = scheduled or [(None, a, b) for a, b in combinations(
        [e for e in config.entries if not e.retired and not e.imported], 2)]
    said = []
    for spec in config.automatic_judges:
        judge = ws.judges.get(spec.name)
        if judge is None or (chosen and spec.name not in chosen):
            continue
        between: dict[frozenset[str], list[tuple[str | None, Entry, Entry]]] = {}
        for meeting in meetings:
            between.setdefault(frozenset((meeting[1].family, meeting[2].family)), []).append(meeting)
        for group in between.values():
            match_id, pro, con = group[0]
            try:
                judge.seats(Sitting(match_id, pro.family, con.family, config.arena.seed))
            except Unseated as exc:
                where = (f"{plural(len(group), 'scheduled match')} between entries of these families "
                         f"(e.g. {pro.name} and {con.name})" if match_id else f"entries {pro.name} and {con.name}")
                said.append(f"{where}: {exc}")
    return said


def jury_warnings(ws: Workspace, names: Iterable[str] = ()) -> list[str]:
    """Everything this module warns `arena check` of, for the named entries and judges (default: all)."""
    names = list(names)
    return unseatable(ws, names) + family_warnings(ws, names)
