"""What a command's options name, checked: the entries that play (--pro, --con, --entry), the judges that judge
(--judge) and the judge whose verdicts rate by default."""
from __future__ import annotations

from typing import Iterable

from arena.base.errors import UserError
from arena.domain.records import Entry, JudgeSpec
from arena.workspace.folder import Workspace


def first_judge(ws: Workspace) -> str | None:
    """The judge whose verdicts rate by default: the first configured; None when no judge is configured."""
    return ws.config.judges[0].name if ws.config.judges else None


def judge_or_first(ws: Workspace, judge: str | None) -> str:
    """The named judge, else the first configured; a UserError when there is none to rate with."""
    if judge is not None:
        return ws.config.judge(judge).name
    first = first_judge(ws)
    if first is None:
        raise UserError(f"{ws.config.path.name}: no [[judges]] configured, so there are no verdicts to rate")
    return first


def judge_specs(ws: Workspace, names: Iterable[str]) -> list[JudgeSpec]:
    """The named judges, each once; every judge the arena runs (all but people) when none is named."""
    try:
        specs = [ws.config.judge(name) for name in dict.fromkeys(names)] or list(ws.config.automatic_judges)
    except UserError as exc:
        raise UserError(f"--judge: {exc}") from None
    for spec in specs:
        if spec.casts_ballots:
            raise UserError(f"--judge: {spec.name!r} is a judge of people, whose verdicts are their ballots: "
                            "hand out links with 'arena ballots issue', or 'arena ballots import' a CSV")
        if spec.imported:
            raise UserError(f"--judge: {spec.name!r} is an imported judge ('arena import'): its verdicts came from "
                            f"{spec.options.get('source') or 'elsewhere'}, and the arena does not run it")
    return specs


def sides(ws: Workspace, pro: str, con: str) -> None:
    """A UserError unless --pro and --con name two different active entries."""
    for option, name in (("--pro", pro), ("--con", con)):
        active_entry(ws, option, name)
    if pro == con:
        raise UserError(f"--pro and --con both name {pro!r}; a match needs two different entries")


def active_entry(ws: Workspace, option: str, name: str) -> Entry:
    """The registered, non-retired entry an option names; UserError naming the option otherwise."""
    try:
        entry = ws.config.entry(name)
    except UserError as exc:
        raise UserError(f"{option}: {exc}") from None
    if entry.retired:
        raise UserError(f"{option}: entry {name!r} is retired and plays no more matches")
    if entry.imported:
        raise UserError(f"{option}: entry {name!r} was imported ('arena import'): its debates were held elsewhere, "
                        "and it plays none here")
    return entry
