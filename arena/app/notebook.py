"""The Python API for notebooks: `arena.open(DIR)` gives an Arena, whose methods are the facade's commands
(arena.app.commands) on that workspace, tables as pandas DataFrames of stable columns and dtypes (FRAMES), everything
else as the facade's typed records. Bad input raises the arena.base.errors.UserError the CLI exits 2 with.

A shell over the facade, as the CLI is: it wires nothing, and computes nothing a command does not.
"""
from __future__ import annotations

import asyncio
import ctypes
import threading
import types
from dataclasses import dataclass
from os import PathLike
from pathlib import Path
from typing import (Any, Callable, Iterable, Literal, Mapping, NotRequired, Sequence, TypeVar, Union, Unpack, get_args,
                    get_origin, get_type_hints, is_typeddict)

import pandas as pd

from arena.app import commands
from arena.app.commands import RateOptions
from arena.app.shapes.figures import (AgentStats, AttackPlan, AttackRow, BiasRow, EntryPoints, EntrySides,
                                      JudgeConsistency, JudgeFigures, JudgePair, KindPoints, MotionShare, PairPoints,
                                      PeopleConsistency, PeoplePair, PersonVsJudge, RatingRow, Ratings, RobustnessRow,
                                      SideShare, Snapshot)
from arena.app.shapes.reports import CheckRow, DryRun, ExportResult, JudgeTotals, RunResult
from arena.app.shapes.records import EntryDetail, EntryRow, MatchJson, MatchRow, MotionDetail, MotionRow, Schedule
from arena.analysis.outcomes import match_outcome
from arena.base.errors import UserError
from arena.base.limits import MAX_BOOTSTRAP
from arena.base.terminal import shown
from arena.domain.records import CATEGORIES
from arena.workspace.folder import Workspace

# --- columns -----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Column:
    """A DataFrame column: its name, its pandas dtype, and for a category its categories (in order)."""

    name: str
    dtype: str  # string, int64, Int64 (with missing values), float64, bool, boolean (with missing), category, ...
    categories: tuple[str, ...] = ()

    def pandas(self) -> Any:
        """The dtype as pandas takes it."""
        return pd.CategoricalDtype(list(self.categories)) if self.dtype == "category" else self.dtype


def columns_of(shape: Any, prefix: str = "", nullable: bool = False) -> list[Column]:
    """A TypedDict's keys as columns, in order, a nested TypedDict's flattened as `key_inner`; a key that may be
    absent or None takes a dtype that holds missing values."""
    out: list[Column] = []
    for key, hint in get_type_hints(shape, include_extras=True).items():
        missing = nullable
        if get_origin(hint) is NotRequired:
            hint, missing = get_args(hint)[0], True
        if get_origin(hint) in (Union, types.UnionType):
            kinds = [a for a in get_args(hint) if a is not type(None)]
            missing = missing or len(kinds) < len(get_args(hint))
            hint = kinds[0] if len(kinds) == 1 else Any
        if is_typeddict(hint):
            out += columns_of(hint, f"{prefix}{key}_", missing)
        else:
            out.append(_column(f"{prefix}{key}", hint, missing))
    return out


def _column(name: str, hint: Any, missing: bool) -> Column:
    if hint is bool:
        return Column(name, "boolean" if missing else "bool")
    if hint is int:
        return Column(name, "Int64" if missing else "int64")
    if hint is float:
        return Column(name, "float64")
    if hint is str:
        return Column(name, "string")
    if get_origin(hint) is Literal:
        return Column(name, "category", tuple(str(a) for a in get_args(hint)))
    return Column(name, "object")


def _flat(row: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """A row with its nested objects' keys brought up as `key_inner` (None stays None: its columns are missing)."""
    out: dict[str, Any] = {}
    for key, value in row.items():
        if isinstance(value, Mapping):
            out |= _flat(value, f"{prefix}{key}_")
        else:
            out[f"{prefix}{key}"] = value
    return out


def frame(rows: Iterable[Mapping[str, Any]], columns: Sequence[Column]) -> pd.DataFrame:
    """Rows as a DataFrame of exactly these columns and dtypes (a key a row lacks is a missing value)."""
    flat = [_flat(r) for r in rows]
    data = {c.name: pd.Series([r.get(c.name) for r in flat], dtype=object) for c in columns}
    out = pd.DataFrame(data, columns=[c.name for c in columns])
    for c in columns:
        if c.dtype.startswith("datetime64"):
            out[c.name] = pd.to_datetime(out[c.name], utc=True, format="ISO8601").astype(c.pandas())
        else:
            out[c.name] = out[c.name].astype(c.pandas())
    return out


def _first(columns: Sequence[Column], *names: str) -> list[Column]:
    """The columns with those named first, in that order: the keys that name a row before its figures."""
    return [*(c for n in names for c in columns if c.name == n), *(c for c in columns if c.name not in names)]


OUTCOMES = ("pro", "con", "tie")
RATING_COLUMNS = columns_of(RatingRow)
# The results rows (docs/reference/formats.md, "results CSV"), as commands.results_frame gives them.
RESULT_COLUMNS = [*(Column(c, "string") for c in ("match_id", "entry_a", "entry_b")),
                  Column("score_a", "float64"), Column("score_b", "float64"), Column("category", "string"),
                  Column("dimension", "string"), Column("forfeit", "category", ("pro", "con")),
                  Column("simulated", "bool"),
                  *(Column(f"{f}_{s}", "int64") for f in ("words", "citations", "markdown") for s in "ab")]
# One per stored verdict: its judge's dimensions each get a column between winner and rationale.
VERDICT_COLUMNS = [Column("match", "string"), Column("judge", "string"), Column("run", "int64"),
                   Column("winner", "category", OUTCOMES), Column("rationale", "string"), Column("error", "string"),
                   Column("panelist", "string"), Column("simulated", "bool"),
                   Column("created_at", "datetime64[ns, UTC]")]
HISTORY_COLUMNS = [Column("at_matches", "int64"), Column("last_match", "string"), *RATING_COLUMNS]
# `arena match list`'s, then what a notebook asks of a match next: whether the simulator made any of it, and its
# result by one judge (as the ratings count it: a forfeit scores the judge's R runs to the other side).
MATCH_COLUMNS = [*columns_of(MatchRow), Column("simulated", "bool"), Column("winner", "category", OUTCOMES),
                 Column("score_pro", "float64"), Column("score_con", "float64")]

# Every DataFrame an Arena method returns, by method and table ("": the method returns that one frame), with its
# columns; docs/gen.py lists them on the API page. "<by>" and "<dimension>" stand for columns named by the data.
FRAMES: dict[str, dict[str, list[Column]]] = {
    "ratings": {"": RATING_COLUMNS, "by": [Column("<by>", "string"), *RATING_COLUMNS]},
    "history": {"": HISTORY_COLUMNS},
    "matches": {"": MATCH_COLUMNS},
    "verdicts": {"": [*VERDICT_COLUMNS[:4], Column("<dimension>", "category", OUTCOMES), *VERDICT_COLUMNS[4:]]},
    "results": {"": RESULT_COLUMNS},
    "stats_agents": {"": columns_of(AgentStats)},
    "stats_judges": {"judges": columns_of(JudgeFigures), "pairs": columns_of(JudgePair),
                     "people": columns_of(PeoplePair), "people_vs_judges": columns_of(PersonVsJudge),
                     "robustness": columns_of(RobustnessRow)},
    "stats_sides": {"entries": columns_of(EntrySides), "motions": columns_of(MotionShare)},
    "stats_bias": {"": columns_of(BiasRow)},
    "stats_paper": {"entries": _first(columns_of(EntryPoints), "entry", "debater", "category"),
                    "pairs": _first(columns_of(PairPoints), "entry", "opponent"),
                    "kinds": _first(columns_of(KindPoints), "debater", "opponent"),
                    "judges": columns_of(JudgeConsistency), "among_people": columns_of(PeopleConsistency)},
}


# --- the tables of commands that give several ---------------------------------------------------------------------


@dataclass(frozen=True)
class JudgeTables:
    """`arena stats judges` as DataFrames: a row per judge, per pair of judges, per pair of a judge of people's
    people, per person against each other judge, and per attack of each judge's last `arena judge-attacks` run
    (empty when none is stored)."""

    judges: pd.DataFrame
    pairs: pd.DataFrame
    people: pd.DataFrame
    people_vs_judges: pd.DataFrame
    robustness: pd.DataFrame


@dataclass(frozen=True)
class SideTables:
    """`arena stats sides` as DataFrames: a row per entry and per motion; overall over every match; judge: whose
    results (None: no judge configured)."""

    judge: str | None
    entries: pd.DataFrame
    motions: pd.DataFrame
    overall: SideShare


@dataclass(frozen=True)
class PaperTables:
    """`arena stats paper` as DataFrames: the Agent4Debate paper's tables (the paper's own figures in the `paper_`
    columns, in a workspace its preset made), Table 6 as judges (each judge against a judge of people) and
    among_people."""

    judge: str
    people: str | None
    simulated: bool
    preset: str | None
    entries: pd.DataFrame
    pairs: pd.DataFrame
    kinds: pd.DataFrame
    judges: pd.DataFrame
    among_people: pd.DataFrame


# --- the options of a rating fit ----------------------------------------------------------------------------------

class RatingOptions(RateOptions, total=False):
    """The options of a rating fit, as `arena rate` takes them: judge (whose verdicts; default the first judge), by,
    ci, bootstrap, seed, weighting, anchor (ENTRY, RATING), side and control (None: the default)."""

    judge: str | None


_CHOICES = {"by": ("category", "dimension"), "ci": ("bootstrap", "sandwich"), "weighting": ("paper", "none"),
            "side": ("fit", "ignore")}
_RATE_OPTIONS = tuple(get_type_hints(RatingOptions))  # by, ci, bootstrap, seed, weighting, anchor, side, control, judge


def _rate_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """The options of a rating fit, checked as `arena rate` checks its own; a UserError names the one that is
    wrong. None leaves an option at its default."""
    for name, value in options.items():
        if name not in _RATE_OPTIONS:
            raise UserError(f"{name}: not an option of a rating fit (options: {', '.join(_RATE_OPTIONS)})")
        if value is None:
            continue
        if name in _CHOICES and value not in _CHOICES[name]:
            raise UserError(f"{name}={value!r}: expected one of {', '.join(_CHOICES[name])}")
        if name in ("bootstrap", "seed") and (not isinstance(value, int) or isinstance(value, bool)):
            raise UserError(f"{name}={value!r}: expected a whole number")
        if name == "bootstrap" and not 0 <= value <= MAX_BOOTSTRAP:
            raise UserError(f"bootstrap={value}: expected 0 to {MAX_BOOTSTRAP:,} replicates")
        if name == "anchor" and not (isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], str)
                                     and isinstance(value[1], (int, float))):
            raise UserError(f"anchor={value!r}: expected (ENTRY, RATING), e.g. ('a4d-4o', 1000)")
        if name == "control" and (isinstance(value, str) or not all(isinstance(v, str) for v in value)):
            raise UserError(f"control={value!r}: expected a list of features, e.g. ['length']")
        if name == "judge" and not isinstance(value, str):
            raise UserError(f"judge={value!r}: expected a judge's name")
    return {name: value for name, value in options.items() if value is not None}


# --- the workspace ------------------------------------------------------------------------------------------------


class Arena:
    """A workspace opened for Python (`arena.open(DIR)`): each method runs a command of the facade on it. Close it
    (or use it in a `with` block) to release its database."""

    def __init__(self, path: str | PathLike[str]) -> None:
        """Open the workspace at path (arena.toml checked, the database opened); a UserError if it is none."""
        self.path = Path(path)
        self._ws: Workspace | None = commands.open_workspace(self.path)

    @property
    def workspace(self) -> Workspace:
        """The open Workspace, for the facade's functions (arena.app.commands) that have no method here."""
        if self._ws is None:
            raise UserError(f"{self.path}: this workspace is closed; open it again with arena.open")
        return self._ws

    # --- tables ---

    def ratings(self, **options: Unpack[RatingOptions]) -> pd.DataFrame:
        """`arena rate`: a row per entry, in the columns of `arena rate --format json`'s ratings rows; with by
        ("category" or "dimension"), a row per group and entry, the group first, in a column named as by is.
        `frame.attrs["separability"]` holds the board's separability as the JSON's top level gives it ({"pairs",
        "separated", "share"}: the pairs of entries whose 95% intervals do not overlap; share None with no pair);
        with by, a dict of each group's.

        options: judge, by, ci, bootstrap, seed, weighting, anchor (ENTRY, RATING), side, control, as `arena rate`
        takes them (commands.rate)."""
        checked = _rate_options(options)
        fit = commands.rate(self.workspace, **checked)
        by = checked.get("by")
        if by is None:
            board = frame(fit["ratings"], RATING_COLUMNS)
            board.attrs["separability"] = fit["separability"]
            return board
        groups = fit.get("by", {})
        rows = [{by: group, **row} for group, each in groups.items() for row in each["ratings"]]
        board = frame(rows, [Column(by, "string"), *RATING_COLUMNS])
        board.attrs["separability"] = {group: each["separability"] for group, each in groups.items()}
        return board

    def history(self, every: int | None = None, **options: Unpack[RatingOptions]) -> pd.DataFrame:
        """`arena rate --history`: a row per snapshot and entry, at_matches the matches the snapshot rates and
        last_match the last of them; options as ratings' but by."""
        if every is not None and (not isinstance(every, int) or isinstance(every, bool)):
            raise UserError(f"every={every!r}: expected a positive number of matches between snapshots")
        # by goes on to the facade, which refuses it with the message `arena rate --history --by` exits 2 with
        snapshots: list[Snapshot] = commands.rate_history(self.workspace, every=every, **_rate_options(options))
        return frame(({"at_matches": s["matches"], "last_match": s["last_match"], **row}
                      for s in snapshots for row in s["ratings"]), HISTORY_COLUMNS)

    def matches(self, judge: str | None = None) -> pd.DataFrame:
        """`arena match list`: a row per stored match, in schedule order; simulated (anything of it came from the
        simulator), and the judge's result (default: the first judge, whose verdicts rate): winner (pro, con or
        tie) and score_pro, score_con (its runs' points), missing until it has judged the match without a failed
        run (a forfeit: every run to the other side, as the ratings count it)."""
        ws = self.workspace
        judge = _configured(ws, judge)
        simulated = {m.id: m.simulated for m in ws.store.match_states()}
        scored: dict[str, tuple[float, float]] = {}
        if judge is not None or ws.config.judges:
            rows = commands.results_frame(ws, judge, features=False)
            overall = rows[rows["dimension"] == "overall"]
            scored = {str(m): (float(a), float(b))
                      for m, a, b in zip(overall["match_id"], overall["score_a"], overall["score_b"])}
        return frame(({**row, "simulated": simulated.get(row["id"], False),
                       **(_result(*scored[row["id"]]) if row["id"] in scored else {})}
                      for row in commands.match_list(ws)), FRAMES["matches"][""])

    def verdicts(self, judge: str | None = None) -> pd.DataFrame:
        """A row per stored verdict (a judge's run on a match, or a person's ballot), in schedule order, then by judge
        and run: its winner, a column per dimension its judge gives, and a failed run's error (winner missing)."""
        ws = self.workspace
        judge = _configured(ws, judge)
        stored = [v for v in ws.store.stored_verdicts() if judge in (None, v.verdict.judge)]
        dimensions = list(dict.fromkeys(d for v in stored for d in v.verdict.dimensions))
        rows = [{"match": v.match_id, "judge": v.verdict.judge, "run": v.verdict.run, "winner": v.verdict.overall,
                 **v.verdict.dimensions, "rationale": v.verdict.rationale, "error": v.verdict.error,
                 "panelist": v.verdict.extra.get("panelist"), "simulated": v.simulated, "created_at": v.created_at}
                for v in stored]
        return frame(rows, [*VERDICT_COLUMNS[:4], *(Column(d, "category", OUTCOMES) for d in dimensions),
                            *VERDICT_COLUMNS[4:]])

    def results(self, judge: str | None = None, *, features: bool = True) -> pd.DataFrame:
        """`arena rate --format csv`: one judge's results rows (default: the first judge), every dimension, the input
        of every rating fit; features: each side's words, citations and markdown over the match's speeches."""
        ws = self.workspace
        if judge is not None:
            try:
                ws.config.judge(judge)
            except UserError as exc:
                raise UserError(f"judge: {exc}") from None
        rows = commands.results_frame(ws, judge, features=features)
        # pandas types a record's keys as Hashable; results_frame's columns are names (str), as frame takes them.
        records = [{str(name): value for name, value in row.items()} for row in rows.to_dict("records")]
        return frame(records, [c for c in RESULT_COLUMNS if c.name in rows.columns])

    def stats_agents(self) -> pd.DataFrame:
        """`arena stats agents`: a row per debater kind, stage and role."""
        return frame(commands.stats_agents(self.workspace), FRAMES["stats_agents"][""])

    def stats_judges(self) -> JudgeTables:
        """`arena stats judges`: each judge's figures, agreement and kappa between judges and people, and each
        judge's last attack run."""
        stats = commands.stats_judges(self.workspace)
        tables = FRAMES["stats_judges"]
        return JudgeTables(frame(stats["judges"], tables["judges"]), frame(stats["pairs"], tables["pairs"]),
                           frame(stats["people"], tables["people"]),
                           frame(stats["people_vs_judges"], tables["people_vs_judges"]),
                           frame(stats.get("robustness", []), tables["robustness"]))

    def stats_sides(self) -> SideTables:
        """`arena stats sides`: each entry's matches on each side, the Pro share per motion and overall."""
        stats = commands.stats_sides(self.workspace)
        tables = FRAMES["stats_sides"]
        return SideTables(stats["judge"], frame(stats["entries"], tables["entries"]),
                          frame(stats["motions"], tables["motions"]), stats["overall"])

    def stats_bias(self, judge: str | None = None) -> pd.DataFrame:
        """`arena stats bias`: a row per judge and panelist, same_family's figures as same_family_ columns."""
        return frame(commands.stats_bias(self.workspace, judge), FRAMES["stats_bias"][""])

    def stats_paper(self, judge: str | None = None) -> PaperTables:
        """`arena stats paper`: the Agent4Debate paper's tables, with its own figures beside ours (paper_ columns)."""
        stats = commands.stats_paper(self.workspace, judge)
        tables = FRAMES["stats_paper"]
        return PaperTables(stats["judge"], stats["people"], stats["simulated"], stats["preset"],
                           frame(stats["entries"], tables["entries"]), frame(stats["pairs"], tables["pairs"]),
                           frame(stats["kinds"], tables["kinds"]),
                           frame(stats["consistency"]["judges"], tables["judges"]),
                           frame(stats["consistency"]["among_people"], tables["among_people"]))

    # --- records ---

    def rate(self, **options: Unpack[RatingOptions]) -> Ratings:
        """`arena rate --format json` whole: the ratings with the Pro advantage (side), the controlled features'
        coefficients, the fits of each group (by) and how the fit was made (meta); options as ratings'."""
        return commands.rate(self.workspace, **_rate_options(options))

    def entries(self) -> list[EntryRow]:
        """`arena entry list`: every configured entry."""
        return commands.entry_list(self.workspace)

    def entry(self, name: str) -> EntryDetail:
        """`arena entry show NAME`: one entry's configuration, status and matches."""
        return commands.entry_show(self.workspace, name)

    def motions(self, category: str | None = None) -> list[MotionRow]:
        """`arena motion list`: the motions of the configured sets (of one category: fact, value or policy)."""
        if category is not None and category not in CATEGORIES:
            raise UserError(f"category={category!r}: expected one of {', '.join(CATEGORIES)}")
        return commands.motion_list(self.workspace, category)

    def motion(self, motion_id: str) -> MotionDetail:
        """`arena motion show ID`: one motion and how many stored matches are on it."""
        return commands.motion_show(self.workspace, motion_id)

    def match(self, match_id: str) -> MatchJson:
        """`arena match show ID --format json`: a match with its motion, speeches, verdicts and score."""
        return commands.match_show(self.workspace, match_id)

    def schedule(self, fmt: str | None = None, *, format: str | None = None, rounds: int | None = None,
                 matches: int | None = None, entry: str | None = None, seed: int | None = None) -> commands.Scheduled:
        """`arena schedule --format FMT`: draw a tournament plan and store it (format, match ids, flags). The format
        is the first argument, or format= as the CLI's option names it: ws.schedule("random") or
        ws.schedule(format="random")."""
        if (fmt is None) == (format is None):
            raise UserError("schedule: give the format once, as ws.schedule('round-robin') or "
                            f"ws.schedule(format='round-robin'){'' if fmt is None else f', not both ({fmt!r}, {format!r})'}")
        chosen = fmt if fmt is not None else format
        assert chosen is not None  # one of the two, checked above
        return commands.schedule(self.workspace, chosen, rounds=rounds, matches=matches, entry=entry, seed=seed)

    def schedule_show(self) -> Schedule:
        """`arena schedule --show`: every tournament, and every match in schedule order."""
        return commands.schedule_show(self.workspace)

    def run(self, *, concurrency: int | None = None, workers: int = 1, retry_failed: bool = False,
            budget: float | None = None, progress: Callable[[str], None] | None = None, until: str | None = None,
            batch: int | None = None, max_matches: int | None = None) -> RunResult:
        """`arena run`: play and judge every pending match; progress(line) hears a line per finished match (default:
        printed), never a redrawn status line. concurrency None: the command's default. until ("top=K" or
        "separability=X"): `arena run --until`, going on in batches of `batch` matches until the criterion holds,
        `max_matches` are done or the budget is spent; the result's "until" says whether it was met and why it
        stopped."""
        for name, value in (("batch", batch), ("max_matches", max_matches)):
            if value is not None and (until is None or not isinstance(value, int) or isinstance(value, bool)
                                      or value < 1):
                raise UserError(f"{name}={value!r}: " + ("goes with until (e.g. until='top=3')" if until is None
                                                          else "expected a positive whole number"))
        options: dict[str, Any] = {"workers": workers, "retry_failed": retry_failed, "budget": budget,
                                   "progress": progress or _printed}
        if concurrency is not None:
            options["concurrency"] = concurrency
        if until is not None:
            criterion = commands.parse_criterion(until)
            return beside_loop(lambda: commands.run_until(self.workspace, criterion, batch=batch,
                                                          max_matches=max_matches, **options))
        return beside_loop(lambda: commands.run(self.workspace, **options))

    def dry_run(self, *, retry_failed: bool = False, concurrency: int | None = None) -> DryRun:
        """`arena run --dry-run`: what the pending matches would cost and take, projected on the simulator (time from
        what `arena check` measured, at `concurrency` matches at once: None, the run's default), nothing written."""
        return beside_loop(lambda: commands.dry_run(self.workspace, retry_failed=retry_failed,
                                                    concurrency=concurrency))

    def judge(self, judges: Iterable[str] = (), *, rejudge: bool = False, concurrency: int | None = None,
              progress: Callable[[str], None] | None = None) -> list[JudgeTotals]:
        """`arena judge`: judge the done matches that lack the named judges' verdicts (default: every judge the arena
        runs); progress(line) hears a line per match judged (default: printed)."""
        return beside_loop(lambda: commands.judge(self.workspace, judges, rejudge=rejudge, concurrency=concurrency,
                                                  progress=progress or _printed))

    def judge_attacks(self, judge: str, *, attacks: Sequence[str] | None = None, matches: int | None = None,
                      budget: float | None = None, progress: Callable[[str], None] | None = None) -> list[AttackRow]:
        """`arena judge-attacks`: per attack, how often the judge's verdict went to the side its clean verdict found
        losing once the debate was altered against that side (attacks: names, default all; matches: a seeded sample
        of that many done matches, default all); progress(line) hears a line per judging (default: printed)."""
        return beside_loop(lambda: commands.judge_attacks(self.workspace, judge, attacks=attacks, matches=matches,
                                                          budget=budget, progress=progress or _printed))

    def judge_attacks_plan(self, judge: str, *, attacks: Sequence[str] | None = None,
                           matches: int | None = None) -> AttackPlan:
        """`arena judge-attacks --dry-run`: what judge_attacks would judge and cost, nothing sent or written."""
        return beside_loop(lambda: commands.judge_attacks_plan(self.workspace, judge, attacks=attacks,
                                                               matches=matches))

    def check(self, names: Iterable[str] = ()) -> list[CheckRow]:
        """`arena check`: probe and measure the models of the named entries and judges (default: all)."""
        return beside_loop(lambda: commands.check(self.workspace, names))

    def publish(self, out: str | Path | None = None) -> Path:
        """`arena publish`: write the static site (default: <workspace>/site); the path of its index.html."""
        return commands.publish(self.workspace, None if out is None else Path(out))

    def export(self, out: str | Path | None = None, *, public: bool = False) -> ExportResult:
        """`arena export`: the workspace as Parquet tables with a dataset card (default folder: <workspace>/export)."""
        return commands.export(self.workspace, None if out is None else Path(out), public=public)

    def close(self) -> None:
        """Release the workspace's database; later calls raise a UserError. Closing twice does nothing."""
        if self._ws is not None:
            self._ws.close()
            self._ws = None

    def __enter__(self) -> Arena:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"arena.open({str(self.path)!r}){'' if self._ws else ' (closed)'}"


T = TypeVar("T")


def _configured(ws: Workspace, judge: str | None) -> str | None:
    """A judge= argument as the configured judge's name (None stays None), refused naming the argument."""
    try:
        return None if judge is None else ws.config.judge(judge).name
    except UserError as exc:
        raise UserError(f"judge: {exc}") from None


def _result(pro: float, con: float) -> dict[str, Any]:
    """A match's result columns from a judge's score of it."""
    return {"winner": match_outcome(pro, con), "score_pro": pro, "score_con": con}


def _printed(line: str) -> None:
    """A progress line in the cell's output, its control characters shown as escapes (a notebook renders ANSI
    sequences, and a speech or a server's error may hold them)."""
    print(shown(line))


def beside_loop(work: Callable[[], T]) -> T:
    """work(), in this thread, or in a thread of its own when this one runs an event loop (a Jupyter cell does): the
    commands that call models run their own loop (asyncio.run), which a running loop refuses. An interrupt while
    waiting (the kernel's Ctrl-C) is passed on to that thread, where it stops the work as a Ctrl-C stops `arena run`:
    the matches in flight go back to the plan."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return work()
    values: list[T] = []  # what work returned, or
    errors: list[BaseException] = []  # what it raised
    finished = threading.Event()

    def target() -> None:
        try:
            values.append(work())
        except BaseException as exc:  # handed to the caller's thread, which raises it
            errors.append(exc)
        finally:
            finished.set()

    thread = threading.Thread(target=target, name="arena-command", daemon=True)
    thread.start()
    while not finished.is_set():
        try:
            # An Event, not join: Python 3.11's join, interrupted, can take a live thread for ended.
            finished.wait()
        except KeyboardInterrupt:  # raised in the thread at its next Python step (a run's loop wakes every second)
            if thread.ident is not None:  # it is: the thread has started
                ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread.ident),
                                                           ctypes.py_object(KeyboardInterrupt))
    thread.join()
    if errors:
        raise errors[0]
    return values[0]
