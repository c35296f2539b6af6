"""`arena judge`, `arena judge list | add | remove` and `arena judge-bench`: the judges of arena.toml, their verdicts on
stored matches, and a judge scored against human labels."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, TypedDict

from arena.app.commands.names import judge_specs
from arena.app.runner.check import require_keys
from arena.app.runner.engine import Judging, MatchRunner, run_bounded, stop_on_sigterm
from arena.app.setup.wiring import editing, reload
from arena.app.shapes.figures import BenchReport, BenchResult, DimensionScore, JudgeBench
from arena.app.shapes import records as shapes
from arena.app.shapes.reports import JudgeTotals
from arena.analysis.stats import match_outcome
from arena.analysis.tally import judged_runs
from arena.base import terminal
from arena.base.clock import now
from arena.base.errors import ArenaError, UserError, plural
from arena.domain.records import JudgeSpec, Outcome, score
from arena.workspace import registration
from arena.workspace.folder import Workspace
from judges import bench
from judges.registry import JUDGES

def judge_list(ws: Workspace) -> list[shapes.JudgeRow]:
    """Every configured judge (shapes.judge_row): the matches it has judged, and for a judge the arena runs, the done
    matches that still lack its verdicts ('arena judge' judges them)."""
    return [shapes.judge_row(spec, len(judged_runs(ws.store.judged_verdicts(spec.name))),
                             None if spec.external else len(ws.store.matches_to_judge(spec.name)))
            for spec in ws.config.judges]


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


def judge(ws: Workspace, judges: Iterable[str] = (), *, rejudge: bool = False, concurrency: int | None = None,
          progress: Callable[[str], None] | None = None) -> list[JudgeTotals]:
    """Judge completed matches that lack verdicts of the named judges (none named: every configured judge).

    A match lacks them when the judge has no verdict of it or a failed run on it, so a rerun retries
    failed judgments; rejudge instead replaces every verdict of those judges given before this call.
    A judge's R runs on a match are written in one transaction, replacing its earlier ones, unless a run failed
    where a stored run is valid: a failure never replaces a verdict, so the stored runs stay (kept) and the failed
    runs are reported. Each (match, judge) is claimed first, so processes judging one workspace at once judge each
    once.
    progress(line) hears of each match judged (default: stderr). concurrency: matches judged at once; None: 4, each
    model sent at most its measured slots at once (as run's). Returns per judge {judge, matches, verdicts,
    failed_runs, kept (stored verdicts kept in place of a judging with failed runs), elsewhere (judged meanwhile by
    another process)}.
    """
    specs = judge_specs(ws, judges)
    if not specs:
        raise UserError(f"{ws.config.path.name}: no [[judges]] configured, so there is no one to judge"
                        if not ws.config.judges else
                        f"{ws.config.path.name}: no [[judges]] the arena runs, only judges of people, who cast "
                        "ballots ('arena ballots issue'), so there is no one to judge")
    since = now() if rejudge else None
    work = [(spec, m) for spec in specs for m in ws.store.matches_to_judge(spec.name, rejudged_before=since)]
    require_keys(ws, {spec.name for spec, _ in work})  # before any call: a missing key is named, nothing written
    runner = MatchRunner.of(ws, follow_slots=concurrency is None)
    say = progress or terminal.say
    totals: dict[str, JudgeTotals] = {
        s.name: {"judge": s.name, "matches": 0, "verdicts": 0, "failed_runs": 0, "kept": 0, "elsewhere": 0}
        for s in specs}

    async def one(item: tuple[JudgeSpec, str]) -> Judging | None:
        spec, match_id = item
        return await runner.judge_stored(match_id, spec, rejudged_before=since)

    def done(finished: int, item: tuple[JudgeSpec, str], judging: Judging | None) -> None:
        spec, match_id = item
        total = totals[spec.name]
        if judging is None:
            total["elsewhere"] += 1
            say(f"[{finished}/{len(work)}] {match_id} {spec.name}: judged by another process")
            return
        verdicts = judging.verdicts
        failed = [v for v in verdicts if v.failed]
        total["matches"] += 1
        total["verdicts"] += len(verdicts)
        total["failed_runs"] += len(failed)
        total["kept"] += judging.kept
        pro, con = score(verdicts)
        kept = f"; its {plural(judging.kept, 'stored verdict')} kept" if judging.kept else ""
        say(f"[{finished}/{len(work)}] {match_id} {spec.name}: "
            + (f"{len(failed)} of {plural(len(verdicts), 'run')} failed{kept}: {failed[0].error}" if failed
               else f"pro {pro:g} – con {con:g}"))

    with stop_on_sigterm():  # a kill stops it as Ctrl-C does: the judging in flight cancelled, its claims released
        run_bounded(work, one, concurrency=4 if concurrency is None else concurrency, done=done)
    return list(totals.values())


def judge_bench(ws: Workspace, dataset: Path, judge: str, *, concurrency: int = 4,
                progress: Callable[[str], None] | None = None) -> JudgeBench:
    """Run a configured judge on human-labelled debates (layouts: judges.bench) and score it against them.

    Each debate is judged R times (the judge's runs); its outcome is the majority (match_outcome), and
    a debate with a failed run counts as failed, not scored. Per-dimension labels (DebateArt's
    gold/dimension.csv) are scored the same way against the majority of the runs' dimension verdicts
    (bench.dimension_scores). Nothing is stored but the LLM ledger and cache, whose calls carry match_id
    "bench:<id>".
    """
    spec = judge_specs(ws, [judge])[0]
    require_keys(ws, [spec.name])  # before any call: a missing key is named, nothing written
    items = bench.load_dataset(dataset, language=ws.config.arena.language)
    runner = MatchRunner.of(ws, follow_slots=concurrency is None)
    say = progress or terminal.say

    async def one(item: bench.BenchItem) -> tuple[BenchResult, dict[str, Outcome] | None]:
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
            + (f"failed ({row['failed_runs']} of {plural(spec.runs, 'run')})" if row["outcome"] is None
               else row["outcome"]))

    finished = run_bounded(items, one, concurrency=concurrency, done=done)
    results = [row for row, _ in finished]
    scored = bench.metrics([r["label"] for r in results], [r["outcome"] for r in results])
    report: BenchReport = {"judge": spec.name, "dataset": str(dataset), "runs": spec.runs,
                           "simulated": spec.simulated, **scored}
    dimensions: _Dimensions = {}
    if any(item.dimensions is not None for item in items):  # the dataset has per-dimension labels
        scores, per_item = bench.dimension_scores(items, [dims for _, dims in finished])
        dimensions = {"dimensions": scores}
        results = [{**row, "dimensions": dims} for row, dims in zip(results, per_item)]
    return {**report, **dimensions, "results": results}


class _Dimensions(TypedDict, total=False):
    """judge_bench's score per labelled dimension, which only a dataset with such labels has."""

    dimensions: dict[str, DimensionScore]
