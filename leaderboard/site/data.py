"""What the site is given: SiteData and the shapes of its parts, the records and figures the app gathers
(arena.app.site_data) and the renderer (leaderboard.site.render) shows.

The site imports nothing of arena, so it declares here, structurally, what it reads of arena's values: the match
records as Protocols (arena.domain.records.Match and its parts satisfy them), the figures as TypedDicts whose items
are read-only. A read-only item takes a richer value (more keys, a narrower type, a required key where the site's
is optional), so the typed values of `arena stats` are handed over as they are, never copied or cast to the site's own. The
rating fit's own shapes (leaderboard.tables: Rating, Separability, SideFit, Coefficient, FitMeta), below the site in its package,
are used as they are.
"""
from __future__ import annotations

from dataclasses import Field, dataclass, field
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Mapping, NotRequired, Protocol, Sequence, TypedDict

from leaderboard.tables import Coefficient, FitMeta, Rating, Separability, SideFit

if TYPE_CHECKING:  # typing.ReadOnly is Python 3.13's; annotations are never evaluated at run time here
    from typing_extensions import ReadOnly


# --- the match records (arena.domain.records) ---------------------------------------------------------------

class MotionRecord(Protocol):
    """A motion as its pages show it (arena.domain.records.Motion)."""

    @property
    def id(self) -> str: ...
    @property
    def text(self) -> str: ...
    @property
    def category(self) -> str: ...
    @property
    def language(self) -> str: ...
    @property
    def info_slide(self) -> str: ...
    @property
    def pro_text(self) -> str: ...
    @property
    def con_text(self) -> str: ...
    @property
    def two_sided(self) -> bool: ...


class ReferenceRecord(Protocol):
    """A source a speech cites (arena.domain.records.Reference)."""

    @property
    def title(self) -> str: ...
    @property
    def url(self) -> str: ...
    @property
    def number(self) -> int: ...


class SpeechRecord(Protocol):
    """A speech as a match page shows it (arena.domain.records.Speech)."""

    @property
    def stage(self) -> str: ...
    @property
    def side(self) -> str: ...
    @property
    def text(self) -> str: ...
    @property
    def references(self) -> Sequence[ReferenceRecord]: ...
    @property
    def cut(self) -> bool: ...


class VerdictRecord(Protocol):
    """One run of one judge on a match (arena.domain.records.Verdict)."""

    @property
    def judge(self) -> str: ...
    @property
    def run(self) -> int: ...
    @property
    def overall(self) -> str | None: ...
    @property
    def dimensions(self) -> Mapping[str, str]: ...
    @property
    def rationale(self) -> str: ...
    @property
    def error(self) -> str | None: ...
    @property
    def extra(self) -> Mapping[str, Any]: ...  # what a source said beyond these: any JSON value
    @property
    def failed(self) -> bool: ...


class ForfeitRecord(Protocol):
    """A side that could not finish its match (arena.domain.records.Forfeit)."""

    @property
    def side(self) -> str: ...
    @property
    def reason(self) -> str: ...
    @property
    def winner(self) -> str: ...


class MatchRecord(Protocol):
    """A match as the site shows it (arena.domain.records.Match): a dataclass, whose speeches the renderer fills in
    (dataclasses.replace) when the caller hands the matches over without them."""

    __dataclass_fields__: ClassVar[dict[str, Field[Any]]]

    @property
    def id(self) -> str: ...
    @property
    def motion(self) -> MotionRecord: ...
    @property
    def pro(self) -> str: ...
    @property
    def con(self) -> str: ...
    @property
    def status(self) -> str: ...
    @property
    def error(self) -> str | None: ...
    @property
    def simulated(self) -> bool: ...
    @property
    def speeches(self) -> Sequence[SpeechRecord]: ...
    @property
    def verdicts(self) -> Sequence[VerdictRecord]: ...
    @property
    def forfeit(self) -> ForfeitRecord | None: ...
    @property
    def format(self) -> str: ...


class RoleUsage(Protocol):
    """What an entry's debater spent in one of its agent roles (arena.domain.records.AgentUsage)."""

    @property
    def calls(self) -> int: ...
    @property
    def prompt_tokens(self) -> int: ...
    @property
    def completion_tokens(self) -> int: ...


# --- the ratings (leaderboard.ratings; the shapes of the fit are leaderboard.tables') ----------------------------------------------------------------------

class Board(TypedDict):
    """One view's ratings as leaderboard.ratings.rate gives them (with control: the controlled fit): its Fit, read."""

    ratings: ReadOnly[Sequence[Rating]]
    separability: ReadOnly[Separability]
    side: ReadOnly[SideFit | None]
    control: NotRequired[ReadOnly[Mapping[str, Coefficient] | None]]
    meta: ReadOnly[FitMeta]


class SnapshotMeta(FitMeta):
    """A snapshot's fit settings, naming the judge whose verdicts it fits and whether they are simulated."""

    judge: str | None
    simulated: bool


class Snapshot(TypedDict):
    """The rating judge's overall fit after its first `matches` matches (leaderboard.history.history); its meta also
    names the judge and whether it is simulated, which only the download (history.json) shows."""

    matches: ReadOnly[int]
    last_match: ReadOnly[str]
    ratings: ReadOnly[Sequence[Rating]]
    separability: ReadOnly[Separability]
    side: ReadOnly[SideFit | None]
    control: NotRequired[ReadOnly[Mapping[str, Coefficient] | None]]
    meta: ReadOnly[SnapshotMeta]


class WinMatrices(TypedDict, total=False):
    """leaderboard.ratings.win_matrices of the overall results, rows and columns in `entries` order: predicted
    P(row beats column), the observed mean score share (None: never met) and the match counts. Empty when nothing
    is rated."""

    entries: ReadOnly[Sequence[str]]
    predicted: ReadOnly[Sequence[Sequence[float]]]
    observed_share: ReadOnly[Sequence[Sequence[float | None]]]
    counts: ReadOnly[Sequence[Sequence[int]]]


# --- what the workspace says of its entries and judges ------------------------------------------------------

class SiteEntry(TypedDict):
    """An entry's page and its columns of the boards: its configuration, matches played and forfeited, what it
    cost (None: unknown) and spent per agent role. removed: played or rated, no longer in arena.toml."""

    name: ReadOnly[str]
    debater: ReadOnly[str]
    model: ReadOnly[str]
    simulated: ReadOnly[bool]  # any of its speeches or searches came from the simulator
    retired: ReadOnly[bool]
    params: ReadOnly[Mapping[str, Any]]  # as arena.toml sets them: any TOML value
    matches: ReadOnly[int]
    forfeits: NotRequired[ReadOnly[int]]
    cost: ReadOnly[float | None]
    cost_per_match: ReadOnly[float | None]
    cost_unknown: ReadOnly[bool]
    roles: ReadOnly[Mapping[str, RoleUsage]]
    removed: NotRequired[ReadOnly[bool]]


class JudgeInfo(TypedDict):
    """A configured judge: its kind, model, runs R and options (any TOML value: a jury's pool, an imported judge's
    source, ...); its people, for a judge of people's ballots; whether its verdicts are simulated (on simulated
    matches; by the simulator itself) or imported (came from elsewhere), and whether it has verdicts on a match shown."""

    name: ReadOnly[str]
    kind: ReadOnly[str]
    model: ReadOnly[str]
    runs: ReadOnly[int]
    options: ReadOnly[Mapping[str, Any]]
    people: ReadOnly[Sequence[str]]
    simulated: ReadOnly[bool]  # any of its verdicts is on a simulated match
    simulated_own: NotRequired[ReadOnly[bool]]  # its verdicts themselves came from the simulator (default: simulated)
    imported: ReadOnly[bool]
    judged: ReadOnly[bool]


# --- `arena stats judges` and `arena stats bias` ------------------------------------------------------------

class JudgePair(TypedDict):
    """How far two judges agree on the matches both judged."""

    a: ReadOnly[str]
    b: ReadOnly[str]
    matches: ReadOnly[int]
    agreement: ReadOnly[float | None]
    kappa: ReadOnly[float | None]


class PeoplePair(JudgePair):
    """How far two people of a judge of people agree."""

    judge: ReadOnly[str]


class PersonVsJudge(TypedDict):
    """How far a person of a judge of people agrees with another judge (vs)."""

    judge: ReadOnly[str]
    person: ReadOnly[str]
    vs: ReadOnly[str]
    matches: ReadOnly[int]
    agreement: ReadOnly[float | None]
    kappa: ReadOnly[float | None]


class JudgeFigures(TypedDict):
    """What a judge's page shows of its `arena stats judges` figures: whether its runs are evidence (the share of
    matches every run of it decided and argued alike; None: none judged twice) and how often it contradicted its
    own scores."""

    judge: ReadOnly[str]
    identical_runs: NotRequired[ReadOnly[float | None]]
    self_contradictions: NotRequired[ReadOnly[int]]


class AttackFigures(TypedDict):
    """A row of a judge's last attack run (`arena judge-attacks`): how often one attack turned its verdict to the
    side its clean verdict found losing, flips of trials with the share's 95% interval (None without trials), the
    attacked speeches the speech checks would have refused (caught), whether the judge is simulated, and when the
    run began (an ISO time)."""

    judge: ReadOnly[str]
    attack: ReadOnly[str]
    trials: ReadOnly[int]
    flips: ReadOnly[int]
    flip_rate: ReadOnly[float | None]
    ci_low: ReadOnly[float | None]
    ci_high: ReadOnly[float | None]
    caught: ReadOnly[int]
    simulated: ReadOnly[bool]
    ran_at: ReadOnly[str]


class Consistency(TypedDict, total=False):
    """`arena stats judges`: the judges' figures, pairs of judges, for judges of people pairs of their people and
    each person against the other judges, and the rows of each attacked judge's last attack run."""

    judges: ReadOnly[Sequence[JudgeFigures]]
    pairs: ReadOnly[Sequence[JudgePair]]
    people: ReadOnly[Sequence[PeoplePair]]
    people_vs_judges: ReadOnly[Sequence[PersonVsJudge]]
    robustness: ReadOnly[Sequence[AttackFigures]]


class SameFamily(TypedDict):
    """A judge's share of votes for the side its own model's family debated, and for others'."""

    votes: ReadOnly[int]
    own_share: ReadOnly[float]
    others_share: ReadOnly[float | None]


class BiasRow(TypedDict):
    """`arena stats bias`: a judge's (or one of its panelists') lean to Pro, to the longer side (its share and its
    coefficient in Elo) and to its own family, each with its interval."""

    judge: ReadOnly[str]
    panelist: ReadOnly[str | None]
    votes: ReadOnly[int]
    pro_share: ReadOnly[float | None]
    pro_ci_low: ReadOnly[float | None]
    pro_ci_high: ReadOnly[float | None]
    longer_share: ReadOnly[float | None]
    longer_ci_low: ReadOnly[float | None]
    longer_ci_high: ReadOnly[float | None]
    length_coef: ReadOnly[float | None]
    length_ci_low: ReadOnly[float | None]
    length_ci_high: ReadOnly[float | None]
    same_family: ReadOnly[SameFamily | None]


# A results row (leaderboard.results.COLUMNS, and the style counts), written to results.csv as it is.
ResultsRow = Mapping[str, object]
# The caller's loader of speeches: match ids → each one's speeches, in speaking order.
Transcripts = Callable[[Sequence[str]], Mapping[str, Sequence[SpeechRecord]]]


@dataclass(frozen=True)
class SiteData:
    """Everything the site shows, gathered by the caller."""

    title: str
    generated_at: str
    judge: str | None  # the judge whose verdicts the ratings come from
    simulated: bool
    boards: Mapping[str, Board]  # view (overall, a category, a dimension) → ratings
    matrices: WinMatrices  # of the overall results
    entries: Sequence[SiteEntry]
    matches: Sequence[MatchRecord]
    results: Sequence[ResultsRow] = field(default_factory=list)
    judges: Sequence[JudgeInfo] = field(default_factory=list)
    # match id → judge → (PRO, CON) points over that judge's runs that did not fail, as the caller scores them
    scores: Mapping[str, Mapping[str, tuple[float, float]]] = field(default_factory=dict)
    # judge → view → ratings, for every judge with rated matches, each on a page of its own (judges/<name>.html)
    judge_boards: Mapping[str, Mapping[str, Board]] = field(default_factory=dict)
    consistency: Consistency = field(default_factory=lambda: Consistency())
    # The rating judge's overall fit after every N matches in the order they finished
    history: Sequence[Snapshot] = field(default_factory=list)
    # Held back while people judge blind: done matches awaiting ballots, and matches still to play; neither is in
    # any field above, the site only says how many. withdrawn: their pages (as page_name gives them), which an
    # earlier publish may have written and the publisher must not keep.
    awaiting: int = 0
    unplayed: int = 0
    withdrawn: tuple[str, ...] = ()
    # Debate format (a match's .format) → stage → title; a stage not listed is shown by its key
    stage_titles: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    # The caller's loader of speeches, for matches whose records come without them (None: each match carries its
    # speeches); then stamps says, per match, when its speeches were stored.
    transcripts: Transcripts | None = None
    stamps: Mapping[str, str] = field(default_factory=dict)
    matches_per_page: int = 500  # rows per page of the matches list: matches.html, then matches-2.html, ...
    language: str = "en"  # the content's language (the workspace's [arena] language): the pages' lang and labels
    # The same boards controlled for style (leaderboard.ratings.rate's control): the features they are net of,
    # view → ratings of the rating judge (the index), judge → view → ratings (its page); each board has a toggle
    # between raw and controlled, the controlled shown first when controlled_first.
    control: tuple[str, ...] = ()
    controlled: Mapping[str, Board] = field(default_factory=dict)
    judge_controlled: Mapping[str, Mapping[str, Board]] = field(default_factory=dict)
    controlled_first: bool = False
    # `arena stats bias`: a row per judge, and per panelist its verdicts name
    bias: Sequence[BiasRow] = field(default_factory=list)
    # match id → what of it the simulator made: "speeches" and "search" → the sides ("pro", "con") it made them for,
    # "verdicts" → the judges; a match absent made by no simulator, or (flagged simulated) by one in parts unknown
    simulated_parts: Mapping[str, Mapping[str, Sequence[str]]] = field(default_factory=dict)
    # The attacks of `arena judge-attacks`, name → what it changes and what it keeps (two sentences), in their order:
    # the methodology page explains each, and a judge's page shows its last run's rows (consistency's robustness)
    attacks: Mapping[str, str] = field(default_factory=dict)
