"""The JSON shapes of ratings and statistics (docs/reference/json.md): `arena rate`, `arena stats ...` and `arena
judge-bench`. Each shape is declared where its value is built (leaderboard.ratings and leaderboard.history, the
rating fit; arena.analysis.stats, paper and bias, the statistics; judges.bench, judge-bench's scores) and re-exported
here; declared here are only what the app composes from them (what the arena knows beside a fit, the paper's own
figures beside ours, a judge-bench report). tests/test_reference.py checks what the facade returns against them."""
from __future__ import annotations

from typing import NotRequired, TypedDict

from arena.analysis.stats import (AgentStats, BiasRow, EntryPoints, EntrySides, JudgeAgreement, JudgeFigures,
                                  JudgePair, KindMeans, MotionShare, PairMeans, PeopleAgreement, PeoplePair,
                                  PeopleScope, PersonVsJudge, SameFamily, ScopeConsistency, SideShare, SideStats,
                                  StatsJudges)
from judges.bench import BenchScore, DimensionOutcome, DimensionScore
from leaderboard.tables import Coefficient, FitMeta, Rating, SideFit

__all__ = ["AgentStats", "BenchReport", "BenchResult", "BenchScore", "BiasRow", "Coefficient", "Consistencies",
           "DimensionOutcome", "DimensionScore", "EntryPoints", "EntrySides", "JudgeBench", "JudgeConsistency",
           "JudgeFigures", "JudgePair", "KindPoints", "MotionShare", "PairPoints", "PaperConsistency", "PaperFigures",
           "PeopleConsistency", "PeoplePair", "PeopleScope", "PersonVsJudge", "RatingRow", "Ratings", "RatingsFit",
           "RatingsMeta", "SameFamily", "ScopeConsistency", "SideFit", "SideShare", "Snapshot", "StatsJudges",
           "StatsPaper", "StatsSides"]

# --- `arena rate` ------------------------------------------------------------------------------------------


class RatingRow(Rating):
    """An entry's rating (Elo) with its 95% interval, Rank (UB) and record; forfeits among its matches."""

    forfeits: int
    simulated: bool


class RatingsMeta(FitMeta):
    """How a fit was made, and of what: a judge's verdicts (judge, simulated) or a results file (results)."""

    judge: NotRequired[str]
    simulated: NotRequired[bool]
    results: NotRequired[str]


class RatingsFit(TypedDict):
    """A group's fit under `by` (side None: ignored or no matches; control: only when controlled)."""

    ratings: list[RatingRow]
    side: SideFit | None
    control: NotRequired[dict[str, Coefficient] | None]
    meta: RatingsMeta


class Ratings(TypedDict):
    """`arena rate`: the main fit, and with --by one fit per category or dimension (side, control as RatingsFit's)."""

    ratings: list[RatingRow]
    side: SideFit | None
    control: NotRequired[dict[str, Coefficient] | None]
    by: NotRequired[dict[str, RatingsFit]]
    meta: RatingsMeta


class Snapshot(TypedDict):
    """`arena rate --history`: the fit of the first `matches` matches, the last of them last_match."""

    matches: int
    last_match: str
    ratings: list[RatingRow]
    side: SideFit | None
    control: NotRequired[dict[str, Coefficient] | None]
    meta: RatingsMeta


# --- `arena stats sides` -----------------------------------------------------------------------------------


class StatsSides(SideStats):
    """`arena stats sides` (judge None: none configured, and no motions)."""

    judge: str | None


# --- `arena stats paper` -----------------------------------------------------------------------------------


class PaperFigures(TypedDict):
    """The Agent4Debate paper's own points of a row (people_overall: its human judges', where it gives them)."""

    source: float
    language: float
    argument: float
    overall: float
    people_overall: NotRequired[float]


class PairPoints(PairMeans):
    """An entry's mean points against one opponent, beside the paper's (None: it has none)."""

    paper: PaperFigures | None


class KindPoints(KindMeans):
    """A debater kind's mean points against another kind, beside the paper's (None: it has none)."""

    paper: PaperFigures | None


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


class BenchReport(BenchScore):
    """A judge's score against the human labels of a dataset, with the judge's runs per debate."""

    judge: str
    dataset: str
    runs: int
    simulated: bool


class JudgeBench(BenchReport):
    """`arena judge-bench`: the judge's score, per labelled dimension too, and each debate's result."""

    dimensions: NotRequired[dict[str, DimensionScore]]
    results: list[BenchResult]
