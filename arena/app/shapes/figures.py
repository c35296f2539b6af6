"""The JSON shapes of ratings and statistics (docs/reference/json.md): `arena rate`, `arena stats ...` and `arena
judge-bench`. Each shape is declared where its value is built (leaderboard.ratings and leaderboard.history, the
rating fit; arena.analysis.stats, paper and bias, the statistics; judges.bench, judge-bench's scores) and re-exported
here; declared here are only what the app composes from them (what the arena knows beside a fit, the paper's own
figures beside ours, a judge-bench report, the judges' stored attack runs beside their figures) and judge-attacks'
rows. tests/test_reference.py checks what the facade returns against them."""
from __future__ import annotations

from typing import NotRequired, TypedDict

from arena.analysis.stats import (AgentStats, BiasRow, EntryPoints, EntrySides, JudgeAgreement, JudgeFigures,
                                  JudgePair, MotionShare, PeopleAgreement, PeoplePair, PeopleScope, PersonVsJudge,
                                  SameFamily, ScopeConsistency, SideShare)
from arena.analysis.stats import StatsJudges as JudgeStats
from judges.bench import BenchScore, DimensionOutcome, DimensionScore
from leaderboard.tables import Coefficient, FitMeta, Separability, SideFit

__all__ = ["AgentStats", "AttackPlan", "AttackRow", "BenchReport", "BenchResult", "BenchScore", "BiasRow",
           "Coefficient", "Consistencies", "DimensionOutcome", "DimensionScore", "EntryPoints", "EntrySides",
           "JudgeBench", "JudgeConsistency", "JudgeFigures", "JudgePair", "KindPoints", "MotionShare", "PairPoints",
           "PaperConsistency", "PaperFigures", "PeopleConsistency", "PeoplePair", "PeopleScope", "PersonVsJudge",
           "RatingRow", "Ratings", "RatingsFit", "RatingsMeta", "RobustnessRow", "SameFamily", "ScopeConsistency",
           "Separability", "SideFit", "SideShare", "Snapshot", "StatsJudges", "StatsPaper", "StatsSides"]

# --- `arena rate` ------------------------------------------------------------------------------------------


class RatingRow(TypedDict):
    """An entry's rating (Elo) with its 95% interval, Rank (UB) and record; forfeits among its matches.
    leaderboard.tables.Rating with forfeits and simulated added, declared whole here because the key order is the
    order of the Python API's columns (arena.app.notebook), forfeits beside matches."""

    entry: str
    rating: float
    ci_low: float
    ci_high: float
    matches: int
    forfeits: int
    wins: int
    ties: int
    losses: int
    rank_ub: int
    provisional: bool
    simulated: bool


class RatingsMeta(FitMeta):
    """How a fit was made, and of what: a judge's verdicts (judge, simulated) or a results file (results)."""

    judge: NotRequired[str]
    simulated: NotRequired[bool]
    results: NotRequired[str]


class RatingsFit(TypedDict):
    """A group's fit under `by` (side None: ignored or no matches; control: only when controlled); separability: of
    its rows' intervals."""

    ratings: list[RatingRow]
    separability: Separability
    side: SideFit | None
    control: NotRequired[dict[str, Coefficient] | None]
    meta: RatingsMeta


class Ratings(TypedDict):
    """`arena rate`: the main fit, and with --by one fit per category or dimension (separability, side, control as
    RatingsFit's)."""

    ratings: list[RatingRow]
    separability: Separability
    side: SideFit | None
    control: NotRequired[dict[str, Coefficient] | None]
    by: NotRequired[dict[str, RatingsFit]]
    meta: RatingsMeta


class Snapshot(TypedDict):
    """`arena rate --history`: the fit of the first `matches` matches, the last of them last_match."""

    matches: int
    last_match: str
    ratings: list[RatingRow]
    separability: Separability
    side: SideFit | None
    control: NotRequired[dict[str, Coefficient] | None]
    meta: RatingsMeta


# --- `arena stats sides` -----------------------------------------------------------------------------------


class StatsSides(TypedDict):
    """`arena stats sides` (judge None: none configured, and no motions): arena.analysis.stats.SideStats, whose
    judge the app names first."""

    judge: str | None
    entries: list[EntrySides]
    motions: list[MotionShare]
    overall: SideShare


# --- `arena stats paper` -----------------------------------------------------------------------------------


class PaperFigures(TypedDict):
    """The Agent4Debate paper's own points of a row (people_overall: its human judges', where it gives them)."""

    source: float
    language: float
    argument: float
    overall: float
    people_overall: NotRequired[float]


class _MeanPoints(TypedDict):
    """Mean points out of 3 against an opponent (arena.analysis.paper's PairMeans, KindMeans), beside the paper's
    (None: it has none). Declared whole here, as the key order is the Python API's column order."""

    matches: int
    source: float | None
    language: float | None
    argument: float | None
    overall: float | None
    people_matches: int
    people_overall: float | None
    opponent: str
    paper: PaperFigures | None


class PairPoints(_MeanPoints):
    """An entry's mean points against one opponent."""

    entry: str


class KindPoints(_MeanPoints):
    """A debater kind's mean points against another kind."""

    debater: str


class PaperConsistency(TypedDict):
    """The paper's consistency in each scope."""

    excluding_human_debaters: float
    all: float


class JudgeConsistency(JudgeAgreement):
    """A judge against a judge of people (Table 6), beside the paper's."""

    paper: PaperConsistency | None


class PeopleConsistency(PeopleAgreement):
    """The people of a judge of people among themselves (Table 6), beside the paper's."""

    paper: PaperConsistency | None


class Consistencies(TypedDict):
    """The paper's Table 6."""

    judges: list[JudgeConsistency]
    among_people: list[PeopleConsistency]


class StatsPaper(TypedDict):
    """`arena stats paper`: the Agent4Debate paper's tables (people: the judge of people whose points count)."""

    judge: str
    people: str | None
    simulated: bool
    preset: str | None
    entries: list[EntryPoints]
    pairs: list[PairPoints]
    kinds: list[KindPoints]
    consistency: Consistencies


# --- `arena judge-bench` -----------------------------------------------------------------------------------


class BenchResult(TypedDict):
    """A labelled debate judged (outcome None: a run failed)."""

    id: str
    label: str
    outcome: str | None
    score_pro: float
    score_con: float
    failed_runs: int
    dimensions: NotRequired[dict[str, DimensionOutcome]]


class BenchReport(TypedDict):
    """A judge's score against the human labels of a dataset (judges.bench.BenchScore), with the judge's runs per
    debate."""

    judge: str
    dataset: str
    runs: int
    simulated: bool
    items: int
    judged: int
    failed: int
    accuracy: float | None
    kappa: float | None
    confusion: dict[str, dict[str, int]]


class JudgeBench(BenchReport):
    """`arena judge-bench`: the judge's score, per labelled dimension too, and each debate's result."""

    dimensions: NotRequired[dict[str, DimensionScore]]
    results: list[BenchResult]


# --- `arena judge-attacks` ---------------------------------------------------------------------------------


class AttackRow(TypedDict):
    """How often one attack turned the judge's verdict to the attacked side (arena.domain.records.AttackResult):
    flips of trials (matches), the share and its 95% Wilson interval (None without trials), the attacked speeches
    the speech checks would have refused (caught), the flips of trials whose attacked speeches all passed them
    (flips_uncaught: what the attack wins against the arena, checks and judge), the attack's calls and cost (None: a
    price unknown), and whether the judge is the offline simulator."""

    judge: str
    attack: str
    trials: int
    flips: int
    flip_rate: float | None
    ci_low: float | None
    ci_high: float | None
    caught: int
    flips_uncaught: int
    calls: int
    cost: float | None
    simulated: bool


class AttackPlan(TypedDict):
    """`arena judge-attacks --dry-run`: what the run would do and cost, projected from a sample judged on the
    offline simulator standing in for the judge's model (cost None: a price unknown)."""

    judge: str
    matches: int
    attacks: list[str]
    clean: int
    judgings: int
    sampled: int
    calls: int
    prompt_tokens: int
    completion_tokens: int
    cost: float | None


# --- `arena stats judges` ----------------------------------------------------------------------------------


class RobustnessRow(AttackRow):
    """A row of a judge's last stored `arena judge-attacks` run (arena.store.attacks), with when the run began."""

    ran_at: str


class StatsJudges(JudgeStats):
    """`arena stats judges`: the figures of the judges' verdicts (arena.analysis.stats.StatsJudges) and, when any
    judge's attack run is stored, the rows of each such judge's last (robustness; absent when none is)."""

    robustness: NotRequired[list[RobustnessRow]]
