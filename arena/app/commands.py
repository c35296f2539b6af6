"""The command facade: one function per command, each returning data to print. The CLI is a thin shell
over these and calls nothing else of the app, and they are the Python API: open a workspace
(open_workspace, from arena.app.setup.wiring), then call what a command would.

The top of the app layer but for the CLI: it hands the kernel (arena.*) the kinds (debaters, judges), the
motion library and the rating code, through the modules below it (tests/test_layers.py keeps their order).
"""
from __future__ import annotations

import asyncio
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import (TYPE_CHECKING, Any, Callable, Collection, Hashable, Iterable, Literal, Mapping, Sequence, TypedDict,
                    Unpack, cast)

from arena.workspace import registration
from arena.domain import scheduler
from arena.app.setup import demo as demo_workspace
from arena.app.people import debater_links as debating
from arena.app.people import ballot_links as people
from arena.app.shapes import records as shapes
from arena.app.runner.check import check as check_models
from arena.app.runner.check import notes as check_figures
from arena.app.runner.check import repeating_judges, require_keys
from arena.app.runner.dryrun import EVERY as DRY_RUN_EVERY, dry_run as project
from arena.app.runner.engine import MatchRunner, run_bounded, stop_on_sigterm
from arena.app.shapes.figures import (AgentStats, BenchReport, BenchResult, BenchScore, BiasRow, Coefficient,
                               DimensionOutcome, DimensionScore, JudgeBench, Ratings, Snapshot, StatsJudges,
                               StatsPaper, StatsSides)
from arena.app.setup.importing import import_folder
from arena.app.setup.presets import PRESETS
from arena.app.runner.progress import retry_line
from arena.app.shapes.reports import (BallotLink, BallotsClosed, BallotsImported, BallotStatus, CheckRow, DebaterExtended,
                               DebaterLink, DebaterStatus, DryRun, ExportResult, ImportReport, JudgeTotals,
                               MotionImport, RunResult)
from arena.app.runner.runs import run as run_pending
from arena.app.runner.runs import run_waiting
from arena.app.runner.runs import summary as run_summary  # noqa: F401 (the CLI prints a run's summary)
from arena.app.runner.standings import current_standings
from arena.app.setup.wiring import init, kinds_of, open_workspace, reload  # noqa: F401 (the Python API's too)
from arena.app.setup.wiring import editing, remember_sets
from arena.domain.ballots import DEFAULT_BASE_URL
from arena.base.clock import now
from arena.workspace.config import RatingSettings
from arena.base.errors import ArenaError, UserError, check_size, plural
from arena.base.files import replace_folder, tidy_beside
from arena.base.limits import MAX_DATA_FILE_BYTES
from arena.domain.records import CATEGORIES, Entry, JudgeSpec, Match, score
from arena.analysis.stats import (PAPER_COLUMNS, SCOPES, agent_stats, bias_stats, bias_votes, consistency_split, judge_stats,
                         match_outcome, paper_points, points_of_three, side_stats)
from arena.analysis.tally import match_features, results_rows
from arena.match.turns import AwaitingPerson
from arena.workspace.folder import Workspace
from debaters.registry import DEBATERS
from arena.opendata.registry import IMPORTERS
from judges import bench
from judges.registry import JUDGES
from motions.library import load_motion_file

if TYPE_CHECKING:  # for annotations alone
    import pandas as pd

    from arena.gateway.llm import CallTag, Completion
    from arena.domain.records import Verdict
    from arena.base.registry import Registry


def init_preset(path: Path, name: str) -> tuple[Path, Scheduled]:
    """`arena init --preset NAME`: the preset's arena.toml, then its schedule drawn into the new workspace, which
    remembers the preset (`arena stats paper` shows the published figures beside its own)."""
    if name not in PRESETS:
        raise UserError(f"--preset: unknown preset {name!r} (known: {', '.join(sorted(PRESETS))})")
    preset = PRESETS[name]
    config_path = init(path, preset.config)
    ws = open_workspace(Path(path))
    try:
        ws.store.set_preset(name)
        return config_path, schedule(ws, **preset.schedule)
    finally:
        ws.close()


def kinds() -> list[shapes.Kind]:
    """Every debater, judge and importer kind, built-in or plug-in: [{family, kind, source, params: [{name,
    default, type, accepts, help}]}]: a debater's params go in [entries.params], a judge's in [judges.options],
    an importer's are `arena import` options."""
    from arena.match.judging import BaseJudge
    from arena.base.params import describe

    out: list[shapes.Kind] = []
    families: tuple[tuple[Literal["debater", "judge", "importer"], Registry], ...] = (
        ("debater", DEBATERS), ("judge", JUDGES), ("importer", IMPORTERS))
    for family, registry in families:
        for name in registry.names():
            cls = registry.get(name)
            # A plug-in that declares no table takes whatever it is given.
            judge = isinstance(cls, type) and issubclass(cls, BaseJudge)
            table = cls.accepted() if judge else getattr(cls, "OPTIONS" if family == "importer" else "PARAMS", {})
            params = cast(list[shapes.KindParam], describe(table))  # arena.base.params builds the rows as plain dicts
            out.append({"family": family, "kind": name, "source": registry.source(name), "params": params})
    return out


def entry_list(ws: Workspace) -> list[shapes.EntryRow]:
    """Every configured entry (shapes.entry_row)."""
    counts, forfeits, simulated = ws.store.match_counts(), ws.store.forfeit_counts(), ws.store.simulated_entries()
    return [shapes.entry_row(e, counts.get(e.name, 0), forfeits.get(e.name, 0),
                             e.simulated or e.name in simulated)
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


def judge_add(ws: Workspace, name: str, *, kind: str, model: str | None = None, api_base: str | None = None,
              runs: int | None = None, options: Mapping[str, Any] | None = None,
              people: list[str] | None = None, family: str | None = None) -> JudgeSpec:
    """Register a judge: check it as arena.toml's are checked, then append it to arena.toml (every byte kept)."""
    with editing(ws):
        reload(ws, registration.add_judge(ws.config, ws.store.judge_records, JUDGES, name=name, kind=kind,
                                          model=model, api_base=api_base, runs=runs, options=options, people=people,
                                          family=family))
        return ws.config.judge(name)


def judge_remove(ws: Workspace, name: str) -> None:
    """Take a judge with no verdicts or ballot links out of arena.toml."""
    with editing(ws):
        under_way = ws.store.runs_under_way()
        if under_way:  # a run judges its matches with the judges configured when it started
            pid, host = under_way[0]
            raise ArenaError(f"judge {name!r} is not removed: a run is under way in this workspace (process {pid} "
                             f"on {host}) and judges with every judge configured when it started; remove the judge "
                             "once the run has stopped")
        reload(ws, registration.remove_judge(ws.config, name, ws.store.judge_records(name)))


def match_list(ws: Workspace) -> list[shapes.MatchRow]:
    """Every match in schedule order (shapes.match_row)."""
    return [shapes.match_row(m) for m in ws.store.match_states()]


def match_get(ws: Workspace, match_id: str) -> Match:
    match = ws.store.match(match_id)
    if match is None:
        raise UserError(f"no match {match_id!r} (see 'arena match list')")
    return match


def match_show(ws: Workspace, match_id: str) -> shapes.MatchJson:
    """One match as JSON (shapes.match_json), with the person's turn it awaits while it is parked at one, and what it
    is doing while it runs (Store.match_progress: the ledger, whichever process plays it)."""
    match = match_get(ws, match_id)
    progress = ws.store.match_progress(match.id) if match.status == "running" else None
    return shapes.match_json(match, declared=ws.config.formats, turn=debating.awaited_turn(ws, match),
                             progress=progress)


def match_messages(ws: Workspace, match_id: str) -> list[shapes.AgentMessage]:
    """What each agent of a match was sent and answered, in order, byte for byte as stored: {stage, side, role,
    prompt, response, created_at} (stage and side null for a judge's call)."""
    return [cast(shapes.AgentMessage, asdict(m)) for m in ws.store.agent_messages(match_get(ws, match_id).id)]


def match_play(ws: Workspace, motion_id: str, pro: str, con: str, judges: Iterable[str] = (),
               progress: Callable[[str], None] | None = None) -> shapes.MatchJson:
    """`arena match play`: play_one, the match as match_show gives it (parked, with the person's turn it awaits)."""
    match = play_one(ws, motion_id, pro, con, judges, progress)
    return shapes.match_json(match, declared=ws.config.formats, turn=debating.awaited_turn(ws, match))


def motion_list(ws: Workspace, category: str | None = None) -> list[shapes.MotionRow]:
    """The motions of the configured sets, in set order: {id, text, category, language, info_slide, set}."""
    if category is not None and category not in CATEGORIES:
        raise UserError(f"--category {category!r}: unknown category (expected {', '.join(CATEGORIES)})")
    return [shapes.motion_row(m, spec) for m, spec in ws.motions.values() if category in (None, m.category)]


def motion_show(ws: Workspace, motion_id: str) -> shapes.MotionDetail:
    """One motion, from the configured sets or else from the stored matches (set None), with its stored matches."""
    found = ws.motions.get(motion_id)
    motion, spec = found if found else (ws.store.motion(motion_id), None)
    if motion is None:
        raise UserError(f"no motion {motion_id!r} (see 'arena motion list')")
    return {**shapes.motion_row(motion, spec),
            "matches": ws.store.count_matches(motion_id=motion_id)}


def import_debates(ws: Workspace, kind: str, folder: Path, *, judge: str | None = None) -> ImportReport:
    """`arena import KIND DIR`: the debates an importer kind reads from folder, added to the workspace
    (arena.app.setup.importing.import_folder); judge names the imported judge, for importers that take that option."""
    return import_folder(ws, kind, folder, {} if judge is None else {"judge": judge})


def motion_import(ws: Workspace, path: Path) -> MotionImport:
    """Copy a YAML or JSONL motion file into the workspace's motions/ folder and add it to [motions] sets in
    arena.toml (comments kept), so the workspace holds every motion it schedules even if the original
    moves or changes. Returns {set, path, motions, notes}.

    Checked before anything is written: the file (motions.library rules), a free name in motions/, and
    ids new to every configured set.
    """
    path = Path(path)
    motions = load_motion_file(path)  # as load_sets will read the copy: a missing language is "en"
    with editing(ws):
        known = {motion_id: spec for motion_id, (_, spec) in ws.motions.items()}
        ws.config, spec, copy = registration.add_motion_file(ws.config, path, motions, known, ws.store.motion)
        ws.motions = {**ws.motions, **{m.id: (m, spec) for m in motions}}
        ws.store.add_motions(motions)
        remember_sets(ws)
    others = sorted({m.language for m in motions} - {ws.config.arena.language})
    notes = [(f"{plural(sum(m.language in others for m in motions), 'motion')} in {', '.join(others)}, not the "
              f"workspace's language {ws.config.arena.language!r}: schedules leave them out")] if others else []
    return {"set": spec, "path": str(copy), "motions": len(motions), "notes": notes}


@dataclass(frozen=True)
class Scheduled:
    """A stored plan: its format, match ids in plan order, and the flags that explain its anomalies."""

    format: str
    match_ids: list[str]
    flags: list[str]


def _sides(ws: Workspace, pro: str, con: str) -> None:
    """A UserError unless --pro and --con name two different active entries."""
    for option, name in (("--pro", pro), ("--con", con)):
        _active_entry(ws, option, name)
    if pro == con:
        raise UserError(f"--pro and --con both name {pro!r}; a match needs two different entries")


def _active_entry(ws: Workspace, option: str, name: str) -> Entry:
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
        _active_entry(ws, "--entry", entry)
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


def play_one(ws: Workspace, motion_id: str, pro: str, con: str, judges: Iterable[str] = (),
             progress: Callable[[str], None] | None = None) -> Match:
    """Play one match now, judge it and store it as a one-match tournament; return the match as stored.

    judges: judge names (none: every configured judge). progress(line) hears of each LLM call as
    it completes, and of each retry as it happens (default: stderr). Everything is checked before anything is
    written; a match that fails stays stored as failed and ArenaError says why; one that reaches a web debater's
    turn is parked there (status awaiting), for a later `arena run` to continue once the person's speech is in.
    """
    motion = ws.store.motion(motion_id)
    if motion is None:
        known = ws.store.motion_ids()
        available = f"{len(known)} available, such as {known[0]}" if known else "none available"
        raise UserError(f"--motion {motion_id}: no such motion ({available}; see 'arena motion list')")
    _sides(ws, pro, con)
    specs = _judge_specs(ws, judges)
    require_keys(ws, [pro, con, *(s.name for s in specs)])  # before the match is stored

    with editing(ws):  # checked again, as arena.toml is now, and the match stored with no removal between
        _sides(ws, pro, con)
        (match_id,) = ws.store.add_tournament("single", ws.config.arena.seed, {"motion": motion_id},
                                              [(motion_id, pro, con)], debate_format=ws.config.arena.format)
    say = progress or (lambda line: print(line, file=sys.stderr))
    say(f"{match_id}: PRO {pro} vs CON {con} on {motion_id}: {motion.text}")

    def heard(tag: CallTag, completion: Completion) -> None:
        where = " · ".join(part for part in (tag.stage, tag.side, tag.role) if part)
        say(f"{where}  ({completion.usage.completion_tokens} tokens{', cached' if completion.cached else ''})")

    runner = MatchRunner.of(ws)
    runner.llm.listeners.append(lambda event: say(retry_line(event)) if event.kind == "retry" else None)
    try:
        stored = cast(Match, ws.store.match(match_id))  # stored just above
        return asyncio.run(runner.play_match(stored, specs, listener=heard))
    except AwaitingPerson as waiting:  # parked (the engine stored it so): the person's speech comes first
        say(f"{match_id} is parked: {waiting}; a later 'arena run' continues it once the speech is in ('arena "
            "debaters issue' gives the link)")
        return cast(Match, ws.store.match(match_id))
    except (ArenaError, UserError) as exc:
        # The match row is already stored (failed), so this is no longer a mistake in the input: exit 1.
        raise ArenaError(f"match {match_id} failed: {exc}") from None


def _judge_specs(ws: Workspace, names: Iterable[str]) -> list[JudgeSpec]:
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


def judge(ws: Workspace, judges: Iterable[str] = (), *, rejudge: bool = False, concurrency: int | None = None,
          progress: Callable[[str], None] | None = None) -> list[JudgeTotals]:
    """Judge completed matches that lack verdicts of the named judges (none named: every configured judge).

    A match lacks them when the judge has no verdict of it or a failed run on it, so a rerun retries
    failed judgments; rejudge instead replaces every verdict of those judges given before this call.
    A judge's R runs on a match are written in one transaction, replacing its earlier ones. Each
    (match, judge) is claimed first, so processes judging one workspace at once judge each once.
    progress(line) hears of each match judged (default: stderr). concurrency: matches judged at once; None: 4, each
    model sent at most its measured slots at once (as run's). Returns per judge {judge, matches, verdicts,
    failed_runs, elsewhere (judged meanwhile by another process)}.
    """
    specs = _judge_specs(ws, judges)
    if not specs:
        raise UserError(f"{ws.config.path.name}: no [[judges]] configured, so there is no one to judge"
                        if not ws.config.judges else
                        f"{ws.config.path.name}: no [[judges]] the arena runs, only judges of people, who cast "
                        "ballots ('arena ballots issue'), so there is no one to judge")
    since = now() if rejudge else None
    work = [(spec, m) for spec in specs for m in ws.store.matches_to_judge(spec.name, rejudged_before=since)]
    require_keys(ws, {spec.name for spec, _ in work})  # before any call: a missing key is named, nothing written
    runner = MatchRunner.of(ws, follow_slots=concurrency is None)
    say = progress or (lambda line: print(line, file=sys.stderr))
    totals: dict[str, JudgeTotals] = {
        s.name: {"judge": s.name, "matches": 0, "verdicts": 0, "failed_runs": 0, "elsewhere": 0} for s in specs}

    async def one(item: tuple[JudgeSpec, str]) -> list[Verdict] | None:
        spec, match_id = item
        return await runner.judge_stored(match_id, spec, rejudged_before=since)

    def done(finished: int, item: tuple[JudgeSpec, str], verdicts: list[Verdict] | None) -> None:
        spec, match_id = item
        total = totals[spec.name]
        if verdicts is None:
            total["elsewhere"] += 1
            say(f"[{finished}/{len(work)}] {match_id} {spec.name}: judged by another process")
            return
        failed = sum(v.failed for v in verdicts)
        total["matches"] += 1
        total["verdicts"] += len(verdicts)
        total["failed_runs"] += failed
        pro, con = score(verdicts)
        say(f"[{finished}/{len(work)}] {match_id} {spec.name}: "
            + (f"{failed} of {len(verdicts)} runs failed" if failed else f"pro {pro:g} – con {con:g}"))

    with stop_on_sigterm():  # a kill stops it as Ctrl-C does: the judging in flight cancelled, its claims released
        run_bounded(work, one, concurrency=4 if concurrency is None else concurrency, done=done)
    return list(totals.values())


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


class FitOptions(TypedDict, total=False):
    """How rate_frame fits, as `arena rate` passes it on: --by, --ci, --bootstrap, --seed, --weighting, --anchor."""

    by: str | None
    ci: str
    bootstrap: int
    seed: int
    weighting: str
    anchor: tuple[str, float] | None


class RateOptions(FitOptions, total=False):
    """Everything `arena rate` passes to rate, rate_results and their histories: --side and --control too (None:
    the workspace's setting)."""

    side: str | None
    control: Sequence[str] | None


class FrameOptions(FitOptions, total=False):
    """rate_frame's keywords but the source, which history_frame passes on to each snapshot's fit."""

    side: str
    control: Sequence[str]
    simulated: Collection[str] | None


def rate(ws: Workspace, *, judge: str | None = None, side: str | None = None,
         control: Sequence[str] | None = None, **options: Unpack[FitOptions]) -> Ratings:
    """Ratings from one judge's verdicts (default: the first configured judge); side, control and options as
    rate_frame (default side and control: the workspace's, rating_side and rating_control). Each row's
    `simulated` says whether any of that entry's own speeches or searches came from the simulator
    (Store.simulated_entries)."""
    judge = judge_or_first(ws, judge)
    control = rating_control(ws, control)
    result = rate_frame(results_frame(ws, judge, features=bool(control)), f"the verdicts of judge {judge!r}",
                        side=rating_side(ws, side), control=control, simulated=ws.store.simulated_entries(),
                        **options)
    result["meta"]["judge"] = judge
    result["meta"]["simulated"] = ws.store.judge_simulated(judge)
    return result


def results_frame(ws: Workspace, judge: str | None = None, *, features: bool = True) -> pd.DataFrame:
    """One judge's results rows, every dimension, as the results CSV's columns (default: the first judge); with
    features, each side's style counts over the match's speeches too (words_a, words_b, ...), which reads every
    speech."""
    import pandas as pd
    from leaderboard.results import COLUMNS, COUNTS, FEATURE_COLUMNS

    judge = judge_or_first(ws, judge)
    rows = results_rows(ws.store, judge, ws.config.judge(judge).runs)
    if not features:
        return pd.DataFrame(rows, columns=[c for c in COLUMNS if c not in COUNTS])
    counts = match_features(ws.store)
    nothing = {side: dict.fromkeys(FEATURE_COLUMNS, 0) for side in ("pro", "con")}
    for row in rows:
        totals = counts.get(row["match_id"], nothing)
        row |= {column: totals[side][name] for name, pair in FEATURE_COLUMNS.items()
                for column, side in zip(pair, ("pro", "con"))}
    return pd.DataFrame(rows, columns=list(COLUMNS))


def results_csv(frame: pd.DataFrame) -> str:
    """Results rows (results_frame, read_results) as the results CSV's text (docs/reference/formats.md)."""
    from leaderboard.results import csv_text

    return csv_text(frame)


def read_results(path: Path) -> pd.DataFrame:
    """The validated rows of a results CSV; a file that breaks the schema is the user's mistake."""
    from leaderboard.results import ResultsError
    from leaderboard.results import read_results as read

    check_size(Path(path), "results CSV file", MAX_DATA_FILE_BYTES)
    try:
        return read(path)
    except ResultsError as exc:
        raise UserError(str(exc)) from None


def rating_side(ws: Workspace | None, side: str | None) -> str:
    """How ratings treat the side: `side` when given, else the workspace's [rating] side (with no workspace,
    as for a results file, that setting's default)."""
    return side or (ws.config.rating if ws else RatingSettings()).side


def rating_control(ws: Workspace | None, control: Sequence[str] | None) -> tuple[str, ...]:
    """The style features ratings control for: `control` when given (empty: none), else the workspace's [rating]
    control (with no workspace, as for a results file, none)."""
    return tuple(control) if control is not None else (ws.config.rating.control if ws else ())


def rate_results(path: Path, *, side: str | None = None, control: Sequence[str] | None = None,
                 **options: Unpack[FitOptions]) -> Ratings:
    """Ratings from a results CSV, with no workspace; side and options as rate_frame (default side: fit)."""
    result = rate_frame(read_results(path), str(path), side=rating_side(None, side),
                        control=rating_control(None, control), **options)
    result["meta"]["results"] = str(path)
    return result


def rate_frame(frame: pd.DataFrame, source: str, *, by: str | None = None, ci: str = "bootstrap",
               bootstrap: int = 1000, seed: int = 0, weighting: str = "paper", anchor: tuple[str, float] | None = None,
               side: str = "fit", control: Sequence[str] = (), simulated: Collection[str] | None = None) -> Ratings:
    """The main fit of results rows (see leaderboard.results.main_rows) and, with by, one fit per category
    or dimension, each with the same options (side: fit the Pro advantage or ignore it; control: the style
    features fitted with the ratings); source names the rows in messages. simulated: the entries whose rows say
    `"simulated": true` (default: those the rows' simulated column gives, leaderboard.results.simulated_entries)."""
    from leaderboard.ratings import rate as fit
    from leaderboard.results import FEATURE_COLUMNS, groups, main_rows, simulated_entries

    unknown = [name for name in control if name not in FEATURE_COLUMNS]
    if unknown:
        raise UserError(f"--control {unknown[0]}: not a feature (expected {', '.join(FEATURE_COLUMNS)})")
    missing = [c for name in control for c in FEATURE_COLUMNS[name] if c not in frame.columns]
    if missing:
        raise UserError(f"--control {','.join(control)}: {source} has no {', '.join(missing)} "
                        f"column{'s' * (len(missing) > 1)} (`arena rate --format csv` writes them)")

    main = main_rows(frame)
    if len(frame) and not len(main):
        found = ", ".join(sorted(frame["dimension"].unique()))
        raise UserError(f"{source}: no rows of dimension 'overall' to rate (dimensions found: {found})")
    if by is not None and by not in frame.columns:
        raise UserError(f"--by {by}: {source} has no {by} column")
    fakes = set(simulated_entries(frame) if simulated is None else simulated)

    def one(rows: pd.DataFrame, where: str) -> dict[str, Any]:
        if anchor is not None and not ((rows["entry_a"] == anchor[0]) | (rows["entry_b"] == anchor[0])).any():
            raise UserError(f"--anchor: entry {anchor[0]!r} has no matches {where}, so it cannot anchor that fit")
        return _with_forfeits(fit(rows, ci=ci, bootstrap=bootstrap, seed=seed, weighting=weighting, anchor=anchor,
                                  side=side, control=tuple(control)), rows, fakes)

    result = one(main, f"in {source}")
    if by is not None:
        result["by"] = {group: one(rows, f"of {by} {group!r} in {source}") for group, rows in groups(frame, by).items()}
    # The documented order (docs/reference/json.md): ratings, side, control, by, meta. The fits are
    # leaderboard.ratings.rate's plain dicts, their rows with forfeits and simulated (_with_forfeits).
    return cast(Ratings, {key: result[key] for key in ("ratings", "side", "control", "by", "meta") if key in result})


def _with_forfeits(result: dict[str, Any], rows: pd.DataFrame, simulated: Collection[str]) -> dict[str, Any]:
    """The fit with each entry's forfeits beside its matches (rows whose forfeit column names its side), and
    whether it is simulated (in simulated) last."""
    forfeited: dict[Hashable, int] = {}
    if "forfeit" in rows.columns:
        for side, entry in (("pro", "entry_a"), ("con", "entry_b")):
            for name, count in rows.loc[rows["forfeit"] == side, entry].value_counts().items():
                forfeited[name] = forfeited.get(name, 0) + int(count)
    result["ratings"] = [_beside(row, "matches", forfeits=forfeited.get(row["entry"], 0))
                         | {"simulated": row["entry"] in simulated} for row in result["ratings"]]
    return result


def _beside(row: Mapping[str, object], key: str, **added: object) -> dict[str, object]:
    """row with added's keys right after key, where docs/reference/json.md shows them."""
    out: dict[str, object] = {}
    for name, value in row.items():
        out[name] = value
        if name == key:
            out |= added
    return out


def rate_history(ws: Workspace, *, judge: str | None = None, every: int | None = None, side: str | None = None,
                 control: Sequence[str] | None = None, **options: Unpack[FitOptions]) -> list[Snapshot]:
    """`arena rate --history`: ratings from one judge's verdicts (default: the first configured judge) after every
    `every` rated matches in the order they finished (history_frame); options as rate_frame, but for by."""
    from leaderboard.history import in_order

    judge = judge_or_first(ws, judge)
    control = rating_control(ws, control)
    snapshots = history_frame(in_order(results_frame(ws, judge, features=bool(control)), ws.store.finish_order()),
                              f"the verdicts of judge {judge!r}", every=every, side=rating_side(ws, side),
                              control=control, simulated=ws.store.simulated_entries(), **options)
    simulated = ws.store.judge_simulated(judge)
    for snapshot in snapshots:
        snapshot["meta"] |= {"judge": judge, "simulated": simulated}
    return snapshots


def history_results(path: Path, *, every: int | None = None, side: str | None = None,
                    control: Sequence[str] | None = None, **options: Unpack[FitOptions]) -> list[Snapshot]:
    """`arena rate --results FILE --history`: the history of a results CSV, its matches in the file's row order."""
    snapshots = history_frame(read_results(path), str(path), every=every, side=rating_side(None, side),
                              control=rating_control(None, control), **options)
    for snapshot in snapshots:
        snapshot["meta"]["results"] = str(path)
    return snapshots


def history_frame(frame: pd.DataFrame, source: str, *, every: int | None = None,
                  **options: Unpack[FrameOptions]) -> list[Snapshot]:
    """Snapshots {matches: k, last_match, ratings, meta}: rate_frame of the rows of the first k matches of frame
    (in its order), for k = every, 2·every, ... and all of them (leaderboard.history; default every: at most
    25 snapshots)."""
    from leaderboard.history import history

    if every is not None and every < 1:
        raise UserError(f"--every {every}: expected a positive number of matches between snapshots")
    if options.get("by") is not None:
        raise UserError("--by splits one fit into groups; --history follows the main fit only, so leave --by out")
    snapshots = history(frame, every=every,  # which takes the fit as a plain dict
                        fit=lambda rows: dict(rate_frame(rows, f"the first {rows['match_id'].nunique()} matches of "
                                                               f"{source}", **options)))
    return cast(list[Snapshot], snapshots)  # leaderboard.history's plain dicts: matches, last_match, the fit's keys


def stats_agents(ws: Workspace) -> list[AgentStats]:
    """Per debater kind, stage and role: calls per speech and tokens per call, over completed matches."""
    usage = ({"debater": s.debater, "stage": s.stage, "agents": {role: asdict(u) for role, u in s.agents.items()}}
             for s in ws.store.speech_usage())
    return cast(list[AgentStats], agent_stats(usage))  # arena.analysis.stats builds plain dicts


def stats_judges(ws: Workspace, withheld: Collection[str] = frozenset()) -> StatsJudges:
    """Per judge: matches, runs, failures, side bias, calls and cost; per pair: agreement and kappa; and for
    judges of people, per pair of its people and per person against each other judge; over every match but
    those withheld (the published site's embargo)."""
    stats = judge_stats([v.row() for v in ws.store.judged_verdicts() if v.match_id not in withheld],
                        [asdict(c) for c in ws.store.judge_calls() if c.match_id not in withheld],
                        [j.name for j in ws.config.judges], ballot_people(ws))
    return cast(StatsJudges, stats)  # arena.analysis.stats builds plain dicts


def stats_bias(ws: Workspace, judge: str | None = None, withheld: Collection[str] = frozenset(),
               features: Mapping[str, Mapping[str, Mapping[str, int]]] | None = None) -> list[BiasRow]:
    """`arena stats bias`: per judge, and per panelist where its verdicts name one (a jury's, an imported panel's),
    the Pro share of its decided votes, the share won by the longer side, its length coefficient and its
    same-family preference (arena.analysis.stats.bias_stats), over every completed match but those withheld (the published
    site's embargo). Each run that did not fail is a vote. The length coefficient is a controlled fit
    (leaderboard.ratings.rate with control=("length",), the side fitted, sandwich intervals) of the voter's votes
    alone, in Elo per unit of x = (Pro's words − Con's) / (Pro's + Con's), net of the debaters' ratings and the
    Pro advantage. Families: arena.domain.families; a judge of people, a jury and an imported panel have none of their own
    (a jury's and a panel's votes take their panelist's). features: arena.analysis.tally.match_features, when the caller
    has them already. judge: that judge's rows alone."""
    from arena.domain.families import family_of
    from arena.domain.records import HUMAN_JUDGE, IMPORTED, JURY

    if judge is not None:
        try:
            judge = ws.config.judge(judge).name
        except UserError as exc:
            raise UserError(f"--judge: {exc}") from None
    features = match_features(ws.store) if features is None else features
    words = {m: (sides["pro"]["length"], sides["con"]["length"]) for m, sides in features.items()}
    played = ws.store.played_entries()
    entries = {**{name: e.family for name, e in played.items()}, **{e.name: e.family for e in ws.config.entries}}
    judges = {j.name: None if j.casts_ballots or j.kind in (HUMAN_JUDGE, IMPORTED, JURY) else j.family
              for j in ws.config.judges}
    votes = bias_votes((v.row() for v in ws.store.judged_verdicts() if v.match_id not in withheld), words, entries,
                       judges, panelist_family=family_of)
    return cast(list[BiasRow], bias_stats(votes, [j.name for j in ws.config.judges], fit=_length_fit, only=judge))


def _length_fit(rows: list[dict[str, Any]]) -> Coefficient | None:
    """The length coefficient of one voter's results rows (arena.analysis.stats.vote_results): {coef, ci_low, ci_high} in
    Elo per unit of x, from the controlled fit with the side fitted and sandwich intervals; None with no rows."""
    import pandas as pd
    from leaderboard.ratings import rate as fit

    if not rows:
        return None
    frame = pd.DataFrame(rows)
    fitted = fit(frame, ci="sandwich", bootstrap=0, side="fit", control=("length",))
    return cast(Coefficient, fitted["control"]["length"])  # leaderboard.ratings.rate builds plain dicts


def ballot_people(ws: Workspace) -> dict[str, dict[int, str]]:
    """Judge of people → run → person, from the configured `people` lists (opening the workspace checked
    that everyone with ballots keeps their place there)."""
    return {j.name: dict(enumerate(j.people)) for j in ws.config.judges if j.casts_ballots}


def stats_sides(ws: Workspace) -> StatsSides:
    """Pro/Con sides per entry over completed matches; Pro score share and side-bias test per motion and
    overall, from the default judge's results (none without a judge)."""
    done = ws.store.match_states(status="done")
    motion_of = {m.id: m.motion_id for m in done}
    judge = first_judge(ws)
    results = [{"motion": motion_of[r["match_id"]], "score_pro": r["score_a"], "score_con": r["score_b"]}
               for r in (results_rows(ws.store, judge, ws.config.judge(judge).runs) if judge else [])
               if r["dimension"] == "overall" and r["forfeit"] is None]  # a forfeit says nothing of sides
    data = side_stats([{"pro": m.pro, "con": m.con} for m in done], results,
                      [e.name for e in ws.config.entries if not e.retired])
    return cast(StatsSides, {"judge": judge, **data})  # arena.analysis.stats builds plain dicts


def stats_paper(ws: Workspace, judge: str | None = None) -> StatsPaper:
    """`arena stats paper`: the Agent4Debate paper's tables from the stored verdicts (arena.analysis.stats.paper_points and
    consistency_split), with the paper's own figures beside ours in a workspace its preset made.

    judge: whose S/L/A/O points (default: the first judge the arena runs, else the first judge); the human
    judges' column is the first judge of people's. Forfeits have no verdicts, so no judge's points count them.
    """
    names = [j.name for j in ws.config.judges]
    if not names:
        raise UserError(f"{ws.config.path.name}: no [[judges]] configured, so there are no verdicts to tabulate")
    try:
        judge = ws.config.judge(judge).name if judge else (ws.config.automatic_judges or ws.config.judges)[0].name
    except UserError as exc:
        raise UserError(f"--judge: {exc}") from None
    people = ballot_people(ws)
    crowd = next(iter(people), None)
    rows = [v.row() for v in ws.store.judged_verdicts()]
    debaters = {name: e.debater for name, e in ws.store.played_entries().items()}
    humans = {r["match_id"] for r in rows if "human" in (debaters.get(r["pro"]), debaters.get(r["con"]))}
    tables: dict[str, Any] = paper_points(points_of_three(r for r in rows if r["judge"] == judge),
                                          points_of_three(r for r in rows if r["judge"] == crowd) if crowd else {},
                                          debaters, [e.name for e in ws.config.entries])
    tables["consistency"] = consistency_split(rows, people, [n for n in names if n not in people], humans)
    preset = ws.store.preset()
    _beside_paper(tables, PRESETS[preset].figures if preset in PRESETS else {})
    # arena.analysis.stats builds the tables as plain dicts, and _beside_paper gives their rows "paper".
    return cast(StatsPaper, {"judge": judge, "people": crowd,
                             "simulated": any(ws.store.judge_simulated(n) for n in (judge, crowd) if n),
                             "preset": preset, **tables})


# Per section of `arena stats paper`: where its rows sit, and the columns that key a row.
_PAPER_KEYS = {"pairs": (("pairs",), ("entry", "opponent")), "kinds": (("kinds",), ("debater", "opponent")),
               "judges": (("consistency", "judges"), ("judge", "people")),
               "among_people": (("consistency", "among_people"), ("people",))}


def _beside_paper(tables: dict[str, Any], figures: dict[str, Any]) -> None:
    """Give every row a "paper" key: the paper's figures for it, or None (figures: none outside the preset's
    workspace), adding the rows the paper has and this workspace has not (yet), with no matches."""
    for section, (path, keys) in _PAPER_KEYS.items():
        holder = tables
        for step in path[:-1]:
            holder = holder[step]
        rows = holder[path[-1]]
        known = {tuple(r[k] for k in keys) for r in rows}
        empty = ({"matches": 0, **{c: None for c in PAPER_COLUMNS}, "people_matches": 0, "people_overall": None}
                 if section in ("pairs", "kinds") else
                 {scope: {"matches": 0, **({"comparisons": 0} if section == "among_people" else {}),
                          "consistency": None} for scope in SCOPES})
        rows += [{**dict(zip(keys, key)), **empty} for key in figures.get(section, {}) if key not in known]
        for row in rows:
            row["paper"] = figures.get(section, {}).get(tuple(row[k] for k in keys))


def judge_bench(ws: Workspace, dataset: Path, judge: str, *, concurrency: int = 4,
                progress: Callable[[str], None] | None = None) -> JudgeBench:
    """Run a configured judge on human-labelled debates (layouts: judges.bench) and score it against them.

    Each debate is judged R times (the judge's runs); its outcome is the majority (match_outcome), and
    a debate with a failed run counts as failed, not scored. Per-dimension labels (DebateArt's
    gold/dimension.csv) are scored the same way against the majority of the runs' dimension verdicts
    (bench.dimension_scores). Nothing is stored but the LLM ledger and cache, whose calls carry match_id
    "bench:<id>".
    """
    spec = _judge_specs(ws, [judge])[0]
    require_keys(ws, [spec.name])  # before any call: a missing key is named, nothing written
    items = bench.load_dataset(dataset, language=ws.config.arena.language)
    runner = MatchRunner.of(ws, follow_slots=concurrency is None)
    say = progress or (lambda line: print(line, file=sys.stderr))

    async def one(item: bench.BenchItem) -> tuple[BenchResult, dict[str, str] | None]:
        """The item's result row, and the judge's outcome per dimension it gave verdicts on (None: failed)."""
        verdicts = await runner.judge(f"bench:{item.id}", item.view, spec)
        failed = sum(v.failed for v in verdicts)
        pro, con = score(verdicts)
        dimensions = None if failed else {d: match_outcome(*score(verdicts, d))
                                          for d in dict.fromkeys(d for v in verdicts for d in v.dimensions)}
        return ({"id": item.id, "label": item.label, "outcome": None if failed else match_outcome(pro, con),
                 "score_pro": pro, "score_con": con, "failed_runs": failed}, dimensions)

    def done(finished: int, item: bench.BenchItem, result: tuple[BenchResult, Any]) -> None:
        row = result[0]
        say(f"[{finished}/{len(items)}] {item.id}: human {item.label}, {spec.name} "
            + (f"failed ({row['failed_runs']} of {spec.runs} runs)" if row["outcome"] is None else row["outcome"]))

    finished = run_bounded(items, one, concurrency=concurrency, done=done)
    results = [row for row, _ in finished]
    # judges.bench builds plain dicts.
    scored = cast(BenchScore, bench.metrics([r["label"] for r in results], [r["outcome"] for r in results]))
    report: BenchReport = {"judge": spec.name, "dataset": str(dataset), "runs": spec.runs,
                           "simulated": spec.simulated, **scored}
    dimensions: _Dimensions = {}
    if any(item.dimensions is not None for item in items):  # the dataset has per-dimension labels
        scores, per_item = cast(tuple[dict[str, DimensionScore], list[dict[str, DimensionOutcome]]],
                                bench.dimension_scores(items, [dims for _, dims in finished]))
        dimensions = {"dimensions": scores}
        results = [{**row, "dimensions": dims} for row, dims in zip(results, per_item)]
    return {**report, **dimensions, "results": results}


class _Dimensions(TypedDict, total=False):
    """judge_bench's score per labelled dimension, which only a dataset with such labels has."""

    dimensions: dict[str, DimensionScore]


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


def check(ws: Workspace, names: Iterable[str] = ()) -> list[CheckRow]:
    """Probe the models of the named entries and judges (default: all): [{name, model, ok, structured,
    context_window, latency_s, error, priced}] (arena.app.runner.check)."""
    return check_models(ws, names)


def check_notes(ws: Workspace, rows: Iterable[CheckRow]) -> list[str]:
    """What check's measured figures (rows, as check returned them) mean for a run, a line each, where the settings
    will hurt: too few slots for a run's matches at once, or a speech slower than [llm] timeout_s
    (arena.app.runner.check.notes)."""
    return check_figures(ws, rows)


def check_warnings(ws: Workspace, names: Iterable[str] = ()) -> list[str]:
    """What `arena check` warns of before its probes, for the named judges (default: all): each judge whose R runs
    can only repeat one another (arena.app.runner.check.repeating_judges)."""
    return repeating_judges(ws, list(names) or None)


def dry_run(ws: Workspace, *, retry_failed: bool = False, every: int = DRY_RUN_EVERY,
            concurrency: int | None = None) -> DryRun:
    """What `run` would cost, projected from one match in `every` of each class played on the simulator (1: every
    match), with nothing written (arena.app.runner.dryrun); and how long it would take, at `concurrency` matches at once
    (None: the run's default), from what `arena check` measured of each model (time_s)."""
    return project(ws, retry_failed=retry_failed, every=every, concurrency=concurrency)


def publish(ws: Workspace, out: Path | None = None, *, keep_others: bool = True) -> Path:
    """Write the static site (default <workspace>/site) from the first judge's verdicts; return its index. The
    matches people are still judging blind are left out of it (arena.app.people.ballot_links.embargo).

    The site is built beside out and swapped in at once (arena.base.files.replace_folder): a reader sees the old site
    or the new one, never a mix. Files in out the publish did not write stay (keep_others), withdrawn pages
    excepted.

    Incremental: when nothing the site is made from has changed since the last publish to out (site_state), and
    its files are as that publish left them, the site stays as it is; otherwise the pages of unchanged matches are
    hard links to the old site's (leaderboard.site.render)."""
    # Lazy: the renderer and the rating code (pandas) cost every other command, and a publish that finds nothing
    # new, half a second to import.
    from arena.app.site_data import site_data, site_state, withdrawn_pages
    from leaderboard.site.published import unchanged

    out = Path(out) if out else ws.path / "site"
    if ws.path.resolve().is_relative_to(out.resolve()):  # the swap would take the workspace's files with the site
        raise UserError(f"--out {out}: holds the workspace {ws.path}; publish to a folder of its own")
    tidy_beside(out)  # a killed publish's leftovers go, also when there is nothing new to publish
    # One state of the database for all it reads, the embargo first: a match a run finishes meanwhile is not on
    # this site, rather than on it though the embargo, decided before it existed, did not know to hold it back.
    with ws.store.snapshot():
        embargo = people.embargo(ws)
        state = site_state(ws, embargo.awaiting, embargo.unplayed)
        if unchanged(out, state, others=keep_others, withdrawn=withdrawn_pages(ws, embargo.withheld)):
            return out / "index.html"
        from leaderboard.site.render import publish as render

        features = match_features(ws.store)  # every speech read once, for the bias report and controlled boards
        # The site's data (arena.app.site_data, leaderboard.site.render) holds the figures as plain dicts.
        judges = cast(dict[str, Any], stats_judges(ws, embargo.withheld))
        bias = cast(list[dict[str, Any]], stats_bias(ws, withheld=embargo.withheld, features=features))
        data = site_data(ws, first_judge(ws), judges, bias=bias, features=features, awaiting=embargo.awaiting,
                         unplayed=embargo.unplayed)
        withdrawn = set(data.withdrawn)
        replace_folder(out, lambda folder: render(folder, data, previous=out, state=state),
                       keep=lambda name: keep_others and name not in withdrawn)
    return out / "index.html"


def export(ws: Workspace, out: Path | None = None, *, public: bool = False) -> ExportResult:
    """`arena export`: the workspace as Parquet tables with a dataset card (arena.opendata.exports) in out (default
    <workspace>/export), built beside it and swapped in; {path, public, rows: {table: rows}}. A public export
    also leaves out what the published site embargoes (arena.app.people.ballot_links.embargo)."""
    from arena.opendata.exports import export_workspace  # lazy: pyarrow, for this command only

    out = Path(out) if out else ws.path / "export"
    if ws.path.resolve().is_relative_to(out.resolve()):  # the swap would take the workspace's files with it
        raise UserError(f"--out {out}: holds the workspace {ws.path}; export to a folder of its own")
    blocked = next((p for p in (out, *out.parents) if p.exists() and not p.is_dir()), None)
    if blocked is not None:
        raise UserError(f"--out {out}: {blocked} is a file, not a folder")
    if public:
        ws.store.ballot_secret()  # made the first time it is needed: a write, which the snapshot below cannot hold
    with ws.store.snapshot():  # the embargo and every table from one state of the database, as publish reads
        withheld = people.embargo(ws).withheld if public else frozenset()
        rows = export_workspace(ws, out, public=public, withheld=withheld)
    return {"path": str(out), "public": public, "rows": rows}


def demo(path: Path, *, language: str = "en", rounds: int = 2, progress: Callable[[str], None] | None = None) -> Path:
    """`arena demo`: a simulated tournament end to end in language: init, schedule, play, judge, ballots, rate,
    publish; the path of the site's index. Resumes if rerun (in the language it was started in)."""
    demo_workspace.prepare(Path(path), language)
    ws = open_workspace(path)
    try:
        if not ws.store.count_matches():
            schedule(ws, "round-robin", rounds=rounds)
        run(ws, concurrency=4, progress=progress)
        people.simulate(ws, demo_workspace.PEOPLE, seed=ws.config.arena.seed)
        return publish(ws, ws.path / "site", keep_others=False)
    finally:
        ws.close()


def ballots_issue(ws: Workspace, judge: str, base_url: str | None = None) -> list[BallotLink]:
    """`arena ballots issue`: a new private link per person of a judge of people (arena.app.people.ballot_links.issue)."""
    return people.issue(ws, judge, base_url or DEFAULT_BASE_URL)


def ballots_status(ws: Workspace, judge: str | None = None) -> list[BallotStatus]:
    """`arena ballots status`: ballots cast per person (arena.app.people.ballot_links.status)."""
    return people.status(ws, judge)


def ballots_close(ws: Workspace, judge: str) -> BallotsClosed:
    """`arena ballots close`: the judge's links take no more ballots and the site shows what it held back
    (arena.app.people.ballot_links.close)."""
    return people.close(ws, judge)


def ballots_import(ws: Workspace, path: Path, judge: str) -> BallotsImported:
    """`arena ballots import`: the ballots of a CSV, stored at once (arena.app.people.ballot_links.import_csv)."""
    return people.import_csv(ws, path, judge)


def debaters_issue(ws: Workspace, entry: str | None = None, base_url: str | None = None) -> list[DebaterLink]:
    """`arena debaters issue`: a new private link per web debater, or for the one named (arena.app.people.debater_links.issue)."""
    return debating.issue(ws, entry, base_url or DEFAULT_BASE_URL)


def debaters_status(ws: Workspace) -> list[DebaterStatus]:
    """`arena debaters status`: each web debater's turns, open, written and missed (arena.app.people.debater_links.status)."""
    return debating.status(ws)


def debaters_extend(ws: Workspace, entry: str, hours: float) -> DebaterExtended:
    """`arena debaters extend`: hours more for each of the web debater's open turns (arena.app.people.debater_links.extend)."""
    return debating.extend(ws, entry, hours)


def serve(path: Path, host: str = "127.0.0.1", port: int = 8000,
          ready: Callable[[str, list[JudgeSpec], list[str], bool], None] = lambda *told: None) -> None:
    """`arena serve`: the web app of the workspace at path on host:port until Ctrl-C or SIGTERM (arena.app.people.web);
    ready(url, judges of people, web debaters, private: whether host is reachable from this computer only) once
    listening."""
    from arena.app.people import web  # lazy: Starlette, for this command only

    web.serve(path, host, port,
              ready=lambda url, judges, debaters: ready(url, judges, debaters, web.is_loopback(host)))
