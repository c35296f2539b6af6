"""The JSON shapes of ratings and statistics (docs/reference/json.md): `arena rate`, `arena stats ...` and `arena
judge-bench`. The rating code and arena.analysis.stats build them as plain dicts; the facade (arena.app.commands) gives them
these types, and tests/test_reference.py checks what it returns against them."""
from __future__ import annotations

from typing import Literal, NotRequired, TypedDict

# --- `arena rate` ------------------------------------------------------------------------------------------


class RatingRow(TypedDict):
    """An entry's rating (Elo) with its 95% interval, Rank (UB) and record; forfeits among its matches."""

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


class SideFit(TypedDict):
    """The Pro advantage (Elo) and its 95% interval."""

    pro_advantage: float
    ci_low: float
    ci_high: float


class Coefficient(TypedDict):
    """A style feature's coefficient, in Elo per unit of (pro - con) / (pro + con), and its 95% interval."""

    coef: float
    ci_low: float
    ci_high: float


class RatingsMeta(TypedDict):
    """How a fit was made, and of what: a judge's verdicts (judge, simulated) or a results file (results)."""

    matches: int
    ci: Literal["bootstrap", "sandwich"]
    bootstrap: int
    weighting: Literal["paper", "none"]
    seed: int
    side: Literal["fit", "ignore"]
    control: NotRequired[list[str]]
    prior: bool
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


# --- `arena stats agents`, `judges`, `bias`, `sides` ---------------------------------------------------------


class AgentStats(TypedDict):
    """`arena stats agents`: a debater kind's role at a stage (None: no calls, or a price unknown)."""

    debater: str
    stage: str
    role: str
    speeches: int
    calls_per_speech: float
    completion_tokens_per_call: float | None
    prompt_tokens_per_call: float | None
    cost_per_speech: float | None


class JudgeFigures(TypedDict):
    """A judge's row of `arena stats judges` (None where undefined)."""

    judge: str
    matches: int
    runs: int
    failed_runs: int
    pro_wins: int
    con_wins: int
    ties: int
    pro_win_rate: float | None
    side_bias_p: float | None
    calls_per_match: float | None
    cost_per_match: float | None
    identical_runs: float | None
    self_contradictions: int


class JudgePair(TypedDict):
    """Two judges' agreement on the matches both decided."""

    a: str
    b: str
    matches: int
    agreement: float | None
    kappa: float | None


class PeoplePair(TypedDict):
    """Two people of a judge of people: their agreement on the matches both cast a ballot on."""

    judge: str
    a: str
    b: str
    matches: int
    agreement: float | None
    kappa: float | None


class PersonVsJudge(TypedDict):
    """A person of a judge of people against another judge."""

    judge: str
    person: str
    vs: str
    matches: int
    agreement: float | None
    kappa: float | None


class StatsJudges(TypedDict):
    """`arena stats judges`."""

    judges: list[JudgeFigures]
    pairs: list[JudgePair]
    people: list[PeoplePair]
    people_vs_judges: list[PersonVsJudge]


class SameFamily(TypedDict):
    """A voter's decided votes where one debater is of its family, its share for that side, and other voters'."""

    votes: int
    own_share: float
    others_share: float | None


class BiasRow(TypedDict):
    """`arena stats bias`: a judge's votes (panelist None) or one panelist's (None: no votes to count)."""

    judge: str
    panelist: str | None
    votes: int
    pro_share: float | None
    pro_ci_low: float | None
    pro_ci_high: float | None
    longer_share: float | None
    longer_ci_low: float | None
    longer_ci_high: float | None
    length_coef: float | None
    length_ci_low: float | None
    length_ci_high: float | None
    same_family: SameFamily | None


class EntrySides(TypedDict):
    """An entry's completed matches on each side."""

    entry: str
    pro: int
    con: int


class SideShare(TypedDict):
    """The Pro score share and side-bias test over all matches."""

    matches: int
    pro_share: float | None
    pro_wins: int
    con_wins: int
    ties: int
    p_value: float | None


class MotionShare(TypedDict):
    """The Pro score share and side-bias test over one motion's matches."""

    motion: str
    matches: int
    pro_share: float | None
    pro_wins: int
    con_wins: int
    ties: int
    p_value: float | None


class StatsSides(TypedDict):
    """`arena stats sides` (judge None: none configured, and no motions)."""

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


class _Points(TypedDict):
    """Mean points out of 3 over some matches, by judge column, and the people's overall."""

    matches: int
    source: float | None
    language: float | None
    argument: float | None
    overall: float | None
    people_matches: int
    people_overall: float | None


class EntryPoints(_Points):
    """An entry's mean points in a category ("all": every match)."""

    entry: str
    debater: str
    category: str


class _MeanPoints(_Points):
    """Mean points against an opponent, beside the paper's (None: it has none)."""

    opponent: str
    paper: PaperFigures | None


class PairPoints(_MeanPoints):
    """An entry's mean points against one opponent."""

    entry: str


class KindPoints(_MeanPoints):
    """A debater kind's mean points against another kind."""

    debater: str


class ScopeConsistency(TypedDict):
    """A judge's consistency with a judge of people over the matches of one scope."""

    matches: int
    consistency: float | None


class PeopleScope(TypedDict):
    """The consistency among a judge of people's people over the matches of one scope."""

    matches: int
    comparisons: int
    consistency: float | None


class PaperConsistency(TypedDict):
    """The paper's consistency in each scope."""

    excluding_human_debaters: float
    all: float


class JudgeConsistency(TypedDict):
    """A judge against a judge of people (Table 6)."""

    judge: str
    people: str
    excluding_human_debaters: ScopeConsistency
    all: ScopeConsistency
    paper: PaperConsistency | None


class PeopleConsistency(TypedDict):
    """The people of a judge of people among themselves (Table 6)."""

    people: str
    excluding_human_debaters: PeopleScope
    all: PeopleScope
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


class BenchScore(TypedDict):
    """A judge against human labels over the debates it decided (judges.bench.metrics)."""

    items: int
    judged: int
    failed: int
    accuracy: float | None
    kappa: float | None
    confusion: dict[str, dict[str, int]]  # human label → the judge's outcome → debates


class DimensionScore(TypedDict):
    """A labelled dimension scored against the judge's (judge_dimension None: it judged none like it)."""

    items: int
    judged: int
    failed: int
    accuracy: float | None
    kappa: float | None
    confusion: dict[str, dict[str, int]]
    judge_dimension: str | None


class DimensionOutcome(TypedDict):
    """A debate's label on a dimension and the judge's outcome (None: not judged)."""

    label: str
    outcome: str | None


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
    """A judge's score against the human labels of a dataset, with the judge's runs per debate."""

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
