"""`arena schedule`, `arena run` and `arena run --dry-run`: a tournament's plan drawn and stored, shown, played
and costed."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from arena.app.commands.names import active_entry, first_judge, judge_or_first
from arena.app.commands.results import results_frame
from arena.app.runner.dryrun import EVERY as DRY_RUN_EVERY, dry_run as project
from arena.app.runner.runs import run as run_pending
from arena.app.runner.runs import run_waiting
from arena.app.runner.standings import current_standings
from arena.app.setup.wiring import editing
from arena.app.shapes import records as shapes
from arena.app.shapes.reports import DryRun, RunResult, UntilDryRun
from arena.app.commands.rating import rate
from arena.app.runner import until as until_rule
from arena.base import terminal
from arena.base.clock import now
from arena.base.errors import UserError, plural
from arena.domain import scheduler
from arena.domain.records import Match
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
              seed: int | None,
              until: tuple[until_rule.Criterion, until_rule.Board, list[tuple[str, str]]] | None = None) -> Scheduled:
    if entry is not None:
        active_entry(ws, "--entry", entry)
    active = _playing(ws)
    imported = sum(e.imported and not e.retired for e in ws.config.entries)
    if len(active) < 2 and imported:
        raise UserError(f"scheduling needs at least 2 active entries, found {len(active)}: the {imported} imported "
                        "entries ('arena import') debated elsewhere and play none here; register entries to play "
                        "with 'arena entry add'")
    seed = ws.config.arena.seed if seed is None else seed
    language = ws.config.arena.language
    stored = ws.store.match_states()
    judge = first_judge(ws)
    focus: list[tuple[str, str]] = []
    if until is not None:  # --until: the board as `arena rate` fitted it, and the pairs the criterion waits on
        criterion, board, focus = until
        standings, flags = until_rule.standings(board), [f"{criterion}: drawn among {plural(len(focus), 'pair')} "
                                                         "whose intervals still overlap"]
    else:
        standings, flags = (current_standings(ws, judge, active, seed) if fmt in ("swiss", "active", "onboard")
                            else ({}, []))
    byes = [b["entry"] for t in ws.store.tournaments() if t.format == "swiss" for b in t.params.get("byes", [])]
    request = scheduler.DrawRequest(
        entries=active, motions=[m for m, _ in ws.motions.values() if m.language == language], seed=seed,
        rounds=rounds, matches=matches, entry=entry, standings=standings,
        history=[scheduler.Pairing(m.motion_id, m.pro, m.con) for m in stored], byes=byes, focus=focus)
    plan = scheduler.draw(fmt, request)
    flags += plan.flags
    params: dict[str, Any] = {k: v for k, v in (("rounds", rounds), ("matches", matches), ("entry", entry))
                              if v is not None}
    if until is not None:
        params["until"] = str(until[0])
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
            concurrency: int | None = None, until: until_rule.Criterion | None = None, batch: int | None = None,
            max_matches: int | None = None) -> DryRun:
    """What `run` would cost, projected from one match in `every` of each class played on the simulator (1: every
    match), with nothing written (arena.app.runner.dryrun); and how long it would take, at `concurrency` matches at once
    (None: the run's default), from what `arena check` measured of each model (time_s).

    until: what `run_until` would cost. How many matches it would play past the plan is the median of
    UNTIL_SIMULATIONS runs of its loop on a rating-level simulator (arena.app.runner.until.simulate) that starts from
    the default judge's results, each entry's true rating drawn from its current interval; that many matches, drawn
    as its next batch would be, are projected with the pending ones. The result's `until` says so."""
    if until is None:
        return project(ws, retry_failed=retry_failed, every=every, concurrency=concurrency)
    active = _until_checked(ws, until)
    done = ws.store.status_counts().get("done", 0)
    board = until_rule.board(rate(ws)["ratings"], active)
    from leaderboard.results import main_rows

    results = results_frame(ws, judge_or_first(ws, None), features=False)  # the scores alone, not every speech read
    rows = main_rows(results) if len(results) else results
    played = [(str(pro), str(con), a / (a + b) if a + b else 0.5)
              for pro, con, a, b in zip(rows["entry_a"], rows["entry_b"], rows["score_a"].astype(float),
                                        rows["score_b"].astype(float))] if len(rows) else []
    pending = len(ws.store.pending_matches(now() if retry_failed else None))  # the run plays them before any batch
    cap = None if max_matches is None else max(0, max_matches - done - pending)
    projected = until_rule.project(board, until, played, batch=batch or len(active), max_matches=cap,
                                   seed=ws.config.arena.seed, simulations=UNTIL_SIMULATIONS)
    planned = _planned(ws, until, board, projected.matches, active)
    dry = project(ws, retry_failed=retry_failed, every=every, concurrency=concurrency, planned=planned)
    result: UntilDryRun = {**dry, "until": {"criterion": str(until), "matches": projected.matches,
                                            "low": projected.low, "high": projected.high,
                                            "met_share": projected.met_share, "simulations": projected.simulations,
                                            "cap": projected.cap,
                                            "done": done}}
    return result


UNTIL_SIMULATIONS = 5  # runs of the simulated loop a dry run's projection is the median of


def _planned(ws: Workspace, criterion: until_rule.Criterion, board: until_rule.Board, count: int,
             active: list[str]) -> list[Match]:
    """`count` matches drawn as run_until's next batch would be (not stored), for the dry run to cost."""
    if count == 0:
        return []
    motions = {m.id: m for m, _ in ws.motions.values()}
    language = ws.config.arena.language
    request = scheduler.DrawRequest(
        entries=active, motions=[m for m in motions.values() if m.language == language], seed=ws.config.arena.seed,
        matches=count, standings=until_rule.standings(board), focus=until_rule.focus(criterion, board),
        history=[scheduler.Pairing(m.motion_id, m.pro, m.con) for m in ws.store.match_states()])
    return [Match(id=f"until-{k + 1}", motion=motions[p.motion_id], pro=p.pro, con=p.con,
                  format=ws.config.arena.format)
            for k, p in enumerate(scheduler.draw(until_rule.UNTIL_FORMAT, request).pairings)]


def _until_checked(ws: Workspace, criterion: until_rule.Criterion) -> list[str]:
    """The active entries, once the workspace can be settled by the criterion: its default judge is automatic and the
    board has more than K entries; a UserError otherwise."""
    judge = first_judge(ws)
    if judge is None:
        raise UserError(f"--until {criterion}: {ws.config.path.name} has no [[judges]], so there are no verdicts to "
                        "settle a board with")
    if ws.config.judge(judge).casts_ballots:
        raise UserError(f"--until {criterion}: the default judge {judge!r} is a judge of people, whose ballots come "
                        "in on the web in their own time, so a run cannot refit after each batch; put an automatic "
                        "judge first in [[judges]] to settle the board by its verdicts")
    active = _playing(ws)
    until_rule.check_size(criterion, len(active))
    return active


def _playing(ws: Workspace) -> list[str]:
    """The entries a draw may pair: neither retired nor imported (those debated elsewhere)."""
    return [e.name for e in ws.config.entries if not e.retired and not e.imported]


def run_until(ws: Workspace, criterion: until_rule.Criterion, *, batch: int | None = None,
              max_matches: int | None = None, budget: float | None = None, concurrency: int | None = None,
              workers: int = 1, retry_failed: bool = False, progress: Callable[[str], None] | None = None,
              wait_s: float | None = None) -> RunResult:
    """Play what is scheduled, then active batches of `batch` matches (default: one per active entry) drawn among the
    pairs the criterion waits on (arena.app.runner.until), refitting the default judge's ratings as `arena rate` does
    after each, until the criterion holds, `max_matches` matches are done in the workspace, or the ledger's cost
    reaches `budget`. Each batch is a stored active tournament like any other, so a killed run resumes: the next
    --until run plays what is left of it and goes on. The result is run's, summed over the batches, with `until`:
    the criterion, met or not, why the run stopped and where the board stood. Entries whose matches await people's
    speeches on the web are left out of new batches until they are in (without wait_s the run does not wait)."""
    active = _until_checked(ws, criterion)
    say = progress or terminal.say
    size = batch or len(active)
    result = run(ws, concurrency=concurrency, workers=workers, retry_failed=retry_failed, budget=budget,
                 progress=progress, wait_s=wait_s)
    batches, told = 0, frozenset[str]()
    while True:
        board = until_rule.board(rate(ws)["ratings"], active)
        state = until_rule.settlement(criterion, board)
        done = ws.store.status_counts().get("done", 0)
        say(state.line(done))
        reason = _stop(ws, state, result, done, max_matches, budget)
        if reason is None:
            web = {e.name for e in ws.config.entries if e.on_the_web}  # an awaiting match's other side plays on
            waiting = frozenset(e for m in ws.store.awaiting_matches() if (p := ws.store.pairing(m)) for e in p[1:]
                                if e in web)
            # An entry whose matches a run skips for want of a key would be drawn again and again, never played.
            lacking = frozenset(name for skipped in result.get("skipped", ()) for names in skipped["missing"].values()
                                for name in names)
            if waiting and waiting != told:
                told = waiting
                say(f"waiting for people's speeches on the web from {', '.join(sorted(waiting))}: new batches leave "
                    f"{'it' if len(waiting) == 1 else 'them'} out until they are in ('arena debaters status')")
            focus = [p for p in until_rule.focus(criterion, board) if not (waiting | lacking) & set(p)]
            if not focus:
                # every pair left to settle has an entry a person speaks for, or one that lacks a key
                reason = "waiting" if waiting else "keys"
        if reason is None:
            with editing(ws):
                _schedule(ws, until_rule.UNTIL_FORMAT, rounds=None,
                          matches=size if max_matches is None else min(size, max_matches - done), entry=None,
                          seed=ws.config.arena.seed + len(ws.store.tournaments()), until=(criterion, board, focus))
            batches += 1
            later = run(ws, concurrency=concurrency, workers=workers, budget=budget, progress=progress, wait_s=wait_s)
            result = _added(result, later)
            if later["done"] or later["stopped"] is not None:
                continue
            reason = "failed" if later["failed"] else "stalled"  # a batch that played nothing: the next would not

        result["until"] = {"criterion": str(criterion), "met": state.met, "reason": reason, "matches": done,
                           "batches": batches, "settled": state.settled if criterion.kind == "top" else None,
                           "boundaries": state.boundaries if criterion.kind == "top" else None,
                           "separability": state.separability}
        return result


def _stop(ws: Workspace, state: until_rule.Settlement, result: RunResult, done: int, max_matches: int | None,
          budget: float | None) -> str | None:
    """Why an --until run stops now (None: it goes on)."""
    if state.met:
        return "met"
    if result["stopped"] is not None:
        return str(result["stopped"])
    if max_matches is not None and done >= max_matches:
        return "max matches"
    if budget is not None and ws.store.total_cost() >= budget:
        return "budget"
    return None


def _added(first: RunResult, later: RunResult) -> RunResult:
    """Two runs' results as one: counts and costs added, the later one's state kept."""
    return {**later, "done": first["done"] + later["done"], "failed": first["failed"] + later["failed"],
            "total": first["total"] + later["total"], "elsewhere": first["elsewhere"] + later["elsewhere"],
            "unpriced": first["unpriced"] + later["unpriced"], "cost": first["cost"] + later["cost"],
            "cpu_s": first["cpu_s"] + later["cpu_s"]}
