"""`arena schedule`, `arena run` and `arena run --dry-run`: a tournament's plan drawn and stored, shown, played
and costed."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from arena.app.commands.names import active_entry, first_judge
from arena.app.runner.dryrun import EVERY as DRY_RUN_EVERY, dry_run as project
from arena.app.runner.runs import run as run_pending
from arena.app.runner.runs import run_waiting
from arena.app.runner.standings import current_standings
from arena.app.setup.wiring import editing
from arena.app.shapes import records as shapes
from arena.app.shapes.reports import DryRun, RunResult
from arena.base.errors import UserError
from arena.domain import scheduler
from arena.workspace.folder import Workspace


@dataclass(frozen=True)
class Scheduled:
    """A stored plan: its format, match ids in plan order, and the flags that explain its anomalies."""

    format: str
    match_ids: list[str]
    flags: list[str]


def schedule(ws: Workspace, fmt: str, *, rounds: int | None = None, matches: int | None = None,
             entry: str | None = None, seed: int | None = None) -> Scheduled:
    """Draw a tournament plan (arena.domain.scheduler) and store it, flags included, before anything runs.

    swiss, active and onboard draw on current standings (arena.app.runner.standings). The history every
    format respects is every stored match, played or not. Everything is checked before anything is written.
    """
    scheduler.check_options(fmt, rounds=rounds, matches=matches, entry=entry)
    with editing(ws):  # drawn from the entries as they are now, and stored before any of them can be removed
        return _schedule(ws, fmt, rounds=rounds, matches=matches, entry=entry, seed=seed)


def _schedule(ws: Workspace, fmt: str, *, rounds: int | None, matches: int | None, entry: str | None,
              seed: int | None) -> Scheduled:
    if entry is not None:
        active_entry(ws, "--entry", entry)
    active = [e.name for e in ws.config.entries if not e.retired and not e.imported]
    imported = sum(e.imported and not e.retired for e in ws.config.entries)
    if len(active) < 2 and imported:
        raise UserError(f"scheduling needs at least 2 active entries, found {len(active)}: the {imported} imported "
                        "entries ('arena import') debated elsewhere and play none here; register entries to play "
                        "with 'arena entry add'")
    seed = ws.config.arena.seed if seed is None else seed
    language = ws.config.arena.language
    stored = ws.store.match_states()
    judge = first_judge(ws)
    standings, flags = (current_standings(ws, judge, active, seed) if fmt in ("swiss", "active", "onboard")
                        else ({}, []))
    byes = [b["entry"] for t in ws.store.tournaments() if t.format == "swiss" for b in t.params.get("byes", [])]
    request = scheduler.DrawRequest(
        entries=active, motions=[m for m, _ in ws.motions.values() if m.language == language], seed=seed,
        rounds=rounds, matches=matches, entry=entry, standings=standings,
        history=[scheduler.Pairing(m.motion_id, m.pro, m.con) for m in stored], byes=byes)
    plan = scheduler.draw(fmt, request)
    flags += plan.flags
    params: dict[str, Any] = {k: v for k, v in (("rounds", rounds), ("matches", matches), ("entry", entry))
                              if v is not None}
    params |= {"flags": flags, "byes": [{"round": r, "entry": e} for r, e in plan.byes],
               # Per match in plan order (= match id order): its round, and for active its selection probability.
               "pairings": [{k: v for k, v in (("round", p.round), ("probability", p.probability)) if v is not None}
                            for p in plan.pairings]}
    ids = ws.store.add_tournament(fmt, seed, params, [(p.motion_id, p.pro, p.con) for p in plan.pairings],
                                  debate_format=ws.config.arena.format)
    return Scheduled(fmt, ids, flags)


def schedule_show(ws: Workspace) -> shapes.Schedule:
    """The stored plan: every tournament with its flags, and every match with its tournament, format, round
    and (active) selection probability. Imported matches were debated elsewhere, in no tournament: not listed."""
    tournaments = {t.id: t for t in ws.store.tournaments()}
    position: dict[int, int] = {}
    rows: list[shapes.PlannedMatch] = []
    for m in ws.store.match_states():
        if m.tournament_id is None:
            continue
        t = tournaments[m.tournament_id]
        k = position[t.id] = position.get(t.id, -1) + 1
        notes = t.params.get("pairings", [])
        note = notes[k] if k < len(notes) else {}
        rows.append({"id": m.id, "tournament": t.id, "format": t.format, "round": note.get("round"),
                     "status": m.status, "motion": m.motion_id, "pro": m.pro, "con": m.con,
                     "probability": note.get("probability")})
    return {"tournaments": [{"id": t.id, "format": t.format, "seed": t.seed, "created_at": t.created_at,
                             "flags": t.params.get("flags", [])} for t in tournaments.values()],
            "matches": rows}


def run(ws: Workspace, *, concurrency: int | None = None, workers: int = 1, retry_failed: bool = False,
        budget: float | None = None, progress: Callable[[str], None] | None = None,
        wait_s: float | None = None) -> RunResult:
    """Play and judge every pending match (arena.app.runner.runs.run), in `workers` processes: {done, failed, total,
    not_started, elsewhere, stopped, ...}; run_summary(result, budget) says it in a line. wait_s: while matches
    await people's speeches on the web, look for them every wait_s seconds and continue each (runs.run_waiting).
    concurrency None: 4 matches at once, each model sent at most its measured slots at once; given: that many
    matches, each model sent up to [llm] max_concurrency."""
    options: dict[str, Any] = {"concurrency": concurrency, "workers": workers, "retry_failed": retry_failed,
                               "budget": budget, "progress": progress}
    return run_pending(ws, **options) if wait_s is None else run_waiting(ws, wait_s, **options)


def dry_run(ws: Workspace, *, retry_failed: bool = False, every: int = DRY_RUN_EVERY,
            concurrency: int | None = None) -> DryRun:
    """What `run` would cost, projected from one match in `every` of each class played on the simulator (1: every
    match), with nothing written (arena.app.runner.dryrun); and how long it would take, at `concurrency` matches at once
    (None: the run's default), from what `arena check` measured of each model (time_s)."""
    return project(ws, retry_failed=retry_failed, every=every, concurrency=concurrency)
