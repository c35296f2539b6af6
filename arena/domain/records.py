"""The domain's records: frozen, plain, and named as a debate tournament names things."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Mapping, NamedTuple

from arena.domain.families import family_of
from arena.gateway.providers import OFFLINE_PREFIX

Side = Literal["pro", "con"]
Stage = str  # a turn's stage in its debate format (arena.domain.formats): "constructive", "opening", "rebuttal_1", ...
Outcome = Literal["pro", "con", "tie"]
MatchStatus = Literal["scheduled", "running", "awaiting", "done", "failed"]  # awaiting: a person's turn

SIDES: tuple[Side, ...] = ("pro", "con")
STAGES: tuple[Stage, ...] = ("constructive", "rebuttal", "summary")
CATEGORIES = ("fact", "value", "policy")
DIMENSIONS = ("argument", "source", "language")
DEFAULT_INFO_SLIDE = "Both sides bear an equal burden of proof."
INFO_SLIDES = {"zh": "双方负有同等的举证责任。"}  # the same, in the languages with prompts of their own


def default_info_slide(language: str) -> str:
    return INFO_SLIDES.get(language, DEFAULT_INFO_SLIDE)
HUMAN_DEBATER = "human"  # the debater kind whose speeches people write
HUMAN_JUDGE = "human"  # the judge kind whose verdicts are people's ballots, never run by the arena
# The debater kind of an entry an importer registered (it debated elsewhere: never scheduled, never plays) and
# the judge kind of a judge whose verdicts were imported (never run by the arena).
IMPORTED = "imported"
# The judge kind that seats, per match, models drawn from its pool (options.pool), each giving one run: R is its
# size (options.size), and it has no model of its own.
JURY = "jury"
JURY_SIZE = 3
DEFAULT_FORMAT = "agent4debate"


def is_simulated(model: str) -> bool:
    return model.startswith(OFFLINE_PREFIX)


@dataclass(frozen=True)
class Motion:
    """What is debated. A two-sided motion words each side's proposition (pro_text, con_text), as Chinese
    motions often do ("正义只是利益" / "正义不只是利益"); text then names the pair."""

    id: str
    text: str
    category: str  # fact | value | policy
    language: str = "en"
    info_slide: str = ""  # none given: the equal-burden slide, in the motion's language
    pro_text: str = ""
    con_text: str = ""

    def __post_init__(self) -> None:
        if not self.info_slide:
            object.__setattr__(self, "info_slide", default_info_slide(self.language))

    @property
    def two_sided(self) -> bool:
        return bool(self.pro_text)

    def proposition(self, side: str) -> str:
        """What the side argues for: its own wording on a two-sided motion, else the motion for PRO and its
        negation for CON (the text itself, which CON opposes)."""
        return (self.pro_text if side == "pro" else self.con_text) if self.two_sided else self.text


@dataclass(frozen=True)
class Entry:
    """A registered debater: a debater kind running on a model."""

    name: str
    debater: str
    model: str
    api_base: str = ""
    strength: float = 0.0  # planted strength, meaningful for offline models only
    params: Mapping[str, Any] = field(default_factory=dict)
    retired: bool = False  # kept in the registry and the ratings, no longer scheduled
    context_window: int | None = None  # tokens the model accepts; None: litellm's model info, else probed
    structured_output: str = "auto"  # "auto" or one of arena.gateway.structured.STRUCTURED_MODES
    family: str = ""  # who made the model: arena.toml's, else (left "") derived from it (arena.domain.families)

    def __post_init__(self) -> None:
        if not self.family:
            object.__setattr__(self, "family", family_of(self.model))

    @property
    def simulated(self) -> bool:
        return is_simulated(self.model)

    @property
    def imported(self) -> bool:
        return self.debater == IMPORTED

    @property
    def on_the_web(self) -> bool:
        """A person who writes this entry's speeches on the web (a human entry with via = "web"): its matches wait
        for them (arena.match.turns)."""
        return self.debater == HUMAN_DEBATER and self.params.get("via") == "web"


@dataclass(frozen=True)
class JudgeSpec:
    """A configured judge: a judge kind running on a model, R runs per match."""

    name: str
    kind: str
    model: str
    api_base: str = ""
    runs: int = 3
    options: Mapping[str, Any] = field(default_factory=dict)
    context_window: int | None = None
    structured_output: str = "auto"
    family: str = ""  # as an entry's

    def __post_init__(self) -> None:
        if not self.family:
            object.__setattr__(self, "family", family_of(self.model))

    @property
    def models(self) -> tuple[str, ...]:
        """The models its runs are asked on: a jury's pool, else its model."""
        if self.kind != JURY:
            return (self.model,)
        pool = self.options.get("pool")  # checked by the kind; here read as far as it is a list of strings
        return tuple(m for m in pool if isinstance(m, str)) if isinstance(pool, list) else ()

    @property
    def simulated(self) -> bool:
        """Any of its models is the simulator's: a jury of a mixed pool is labelled simulated as a whole."""
        return any(is_simulated(m) for m in self.models)

    @property
    def casts_ballots(self) -> bool:
        """People judge: its verdicts are ballots (run = the person's index), never played by the arena."""
        return self.kind == HUMAN_JUDGE

    @property
    def imported(self) -> bool:
        """Its verdicts came from another arena's judges (an importer): the arena never runs it."""
        return self.kind == IMPORTED

    @property
    def external(self) -> bool:
        """Its verdicts come from outside the arena (people's ballots, an import): never run by it."""
        return self.casts_ballots or self.imported

    @property
    def people(self) -> tuple[str, ...]:
        return tuple(self.options.get("people", ())) if self.casts_ballots else ()


@dataclass(frozen=True)
class Reference:
    """A source a speech cites: as [number] in its text (0: its place in the speech's list, from 1)."""

    title: str
    url: str
    text: str = ""  # what the source says (a search result's content): judges check citations against it
    number: int = 0


@dataclass(frozen=True)
class AgentUsage:
    """What one internal agent (role) of a debater or judge spent."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float | None = None  # None when the model's price is unknown
    # Of prompt_tokens, those the provider read from its prompt cache (arena.gateway.caching): counted at the
    # model's cache-read price in cost
    cached_tokens: int = 0

    def __add__(self, other: "AgentUsage") -> "AgentUsage":
        cost = None if self.cost is None and other.cost is None else (self.cost or 0.0) + (other.cost or 0.0)
        return AgentUsage(
            self.calls + other.calls,
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            cost,
            self.cached_tokens + other.cached_tokens,
        )


@dataclass(frozen=True)
class Speech:
    stage: Stage
    side: Side
    text: str
    references: tuple[Reference, ...] = ()
    started_at: str = ""
    finished_at: str = ""
    agents: Mapping[str, AgentUsage] = field(default_factory=dict)
    cut: bool = False  # the model stopped at its length cap: the speech may end mid-sentence


@dataclass(frozen=True)
class Verdict:
    """One run of one judge on one match. A failed judgment has error set and no winner.

    The one record of a verdict. Its other forms stay for a reason each: arena.match.judging.Decision is a judge's
    answer in the labels it saw, before a swapped run is turned back; Ballot is a person's vote before it is
    stored as their judge's run; StoredVerdict and JudgedVerdict hold a Verdict with where it is stored;
    arena.app.shapes.records.VerdictJson is the JSON contract; a results row (arena.analysis.tally.ResultsRow)
    is the rating's input, which a results CSV gives too."""

    judge: str
    run: int
    overall: Outcome | None
    dimensions: Mapping[str, Outcome] = field(default_factory=dict)
    rationale: str = ""
    error: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)  # what a source said beyond these (margin, panelist, ...)
    cached_tokens: int = 0  # the run's prompt tokens its provider read from its prompt cache

    @property
    def failed(self) -> bool:
        return self.error is not None


@dataclass(frozen=True)
class Ballot:
    """One person's vote on a finished match, blind to all but PRO and CON: stored as their judge's verdict."""

    match_id: str
    person: str
    overall: Outcome
    dimensions: Mapping[str, Outcome] = field(default_factory=dict)
    rationale: str = ""


@dataclass(frozen=True)
class Forfeit:
    """A side whose debater could not give a speech because of its answers (not its provider): the match is
    done, and the other side takes every run of every judge."""

    side: Side
    reason: str

    @property
    def winner(self) -> Side:
        return "con" if self.side == "pro" else "pro"


@dataclass(frozen=True)
class Match:
    id: str
    motion: Motion
    pro: str
    con: str
    status: str = "scheduled"  # scheduled | running | done | failed
    error: str | None = None
    simulated: bool = False
    speeches: tuple[Speech, ...] = ()
    verdicts: tuple[Verdict, ...] = ()
    forfeit: Forfeit | None = None  # done, but one side could not debate: no judge read it
    format: str = DEFAULT_FORMAT  # the debate format (arena.domain.formats) it is played in


# --- what the store keeps beside the records above (arena.store's reads) --------------------------------------------

@dataclass(frozen=True)
class Tournament:
    """A stored schedule: the draw's format and seed, and its params (flags, byes, per-pairing notes)."""

    id: int
    format: str
    seed: int
    params: Mapping[str, Any]
    created_at: str


@dataclass(frozen=True)
class MatchState:
    """A stored match without its speeches and verdicts: where it stands in the plan, and its motion's category."""

    id: str
    seq: int
    tournament_id: int | None  # None: imported
    motion_id: str
    motion_text: str
    category: str
    pro: str
    con: str
    format: str
    status: MatchStatus
    error: str | None
    simulated: bool
    created_at: str
    started_at: str | None
    finished_at: str | None
    forfeit: Forfeit | None


@dataclass(frozen=True)
class StoredVerdict:
    """A verdict as the store keeps it: the Verdict, of which match, whether simulated, when written."""

    match_id: str
    verdict: Verdict
    simulated: bool
    created_at: str


@dataclass(frozen=True)
class JudgedVerdict(StoredVerdict):
    """A stored verdict on a completed match, with the match's sides, motion category and simulated flag: what the
    statistics (arena.analysis) read."""

    pro: str
    con: str
    category: str
    match_simulated: bool


@dataclass(frozen=True)
class StoredSpeech:
    """A stored speech: of which match, and its place in the match's speaking order."""

    match_id: str
    seq: int
    speech: Speech


@dataclass(frozen=True)
class SpeechUsage:
    """What the agents of one speech of a completed match spent, and the debater kind that gave it."""

    debater: str
    stage: Stage
    agents: Mapping[str, AgentUsage]


@dataclass(frozen=True)
class AgentMessage:
    """What one agent was sent and answered, byte for byte, during a match."""

    stage: Stage | None
    side: Side | None
    role: str
    prompt: str
    response: str
    created_at: str


@dataclass(frozen=True)
class JudgeCalls:
    """A judge's LLM calls on one completed match: how many, and their summed cost (None when any was unknown)."""

    judge: str
    match_id: str
    calls: int
    cost: float | None


class TurnKey(NamedTuple):
    """Which turn of which match: what a person's turn is known by."""

    match_id: str
    stage: Stage
    side: Side


class Budget(NamedTuple):
    """A turn's length: amount words, or characters for languages written without spaces."""

    amount: int
    unit: str  # words | characters


@dataclass(frozen=True)
class Brief:
    """What a person was shown for a turn when it opened (arena.match.turns.brief), kept with the turn: the motion,
    the turn's title, purpose and place among the format's turns (k of n), the budget, and the speeches the protocol
    lets that side see, in order, under their stages' titles (stage → title, in the workspace's language)."""

    motion: Motion
    format: str
    title: str
    purpose: str
    place: tuple[int, int]
    language: str
    budget: Budget
    visible: tuple[Speech, ...] = ()
    stage_titles: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class HumanTurn:
    """A person's turn to speak in a match, written on the web (a `human` entry with via = "web"): what the protocol
    let that side see when it opened (brief: arena.match.turns.brief), the saved draft, and the speech once submitted."""

    match_id: str
    stage: Stage
    side: Side
    entry: str
    opened_at: str
    deadline: str
    brief: Brief
    draft: str = ""
    draft_at: str | None = None
    speech: str | None = None
    submitted_at: str | None = None

    @property
    def submitted(self) -> bool:
        return self.speech is not None


JUDGING = "judging"  # the stage a judge's call is shown at: its ledger row has no stage (judges read whole debates)


@dataclass(frozen=True)
class Step:
    """Who a match's call is for, as people are shown it: the debate stage (JUDGING for a judge's), the side (None
    for a judge's), and the role: a debater's agent (searcher, analyzer, writer, reviewer, ...) or the judge's name."""

    stage: Stage | None
    side: Side | None
    role: str | None

    @classmethod
    def of(cls, stage: str | None, side: str | None, role: str | None, judge: str | None) -> "Step":
        """The step of a call tagged so (arena.gateway.llm.CallTag, a ledger row): a judge's call is shown by its judge."""
        if judge is not None:
            return cls(JUDGING, None, judge)
        return cls(stage, side if side in SIDES else None, role)


@dataclass(frozen=True)
class MatchProgress:
    """What a running match is doing, from the ledger: its step (the call in flight, else its latest call; empty
    before its first), the LLM calls of its current play (every try sent, answers from the cache included), and
    since when the step's call runs (ISO; before its first call, the match's start)."""

    step: Step
    calls: int
    since: str


class CallSide(NamedTuple):
    """A call of a match and whom it was for: the dry run's measure of what a match costs each side and judge."""

    match_id: str
    kind: str
    side: str | None
    judge: str | None
    pro: str
    con: str
    prompt_tokens: int
    completion_tokens: int
    model: str
    cached_tokens: int


class LedgerCall(NamedTuple):
    """A row of the ledger, as stored (a named tuple rather than a dataclass: a ledger is read a hundred thousand
    rows at a time)."""

    id: int
    kind: str
    match_id: str | None
    role: str | None
    stage: str | None
    side: str | None
    judge: str | None
    model: str
    prompt_tokens: int
    completion_tokens: int
    cost: float | None
    latency_s: float
    cache_hit: int
    error: str | None
    simulated: int
    created_at: str
    structured: str | None
    fitted: int
    finish_reason: str | None
    cached_tokens: int


def points(outcome: Outcome | None, side: Side) -> float:
    """The scoring rule: a side gets 1 point for an outcome in its favour, 0.5 for a tie, else 0."""
    return 1.0 if outcome == side else 0.5 if outcome == "tie" else 0.0


def score(verdicts: tuple[Verdict, ...] | list[Verdict], key: str = "overall") -> tuple[float, float]:
    """(score_pro, score_con) over a judge's runs, each run scored by `points`.

    key is "overall" or a dimension name. Failed runs count for nothing.
    """
    outcomes = [v.overall if key == "overall" else v.dimensions.get(key) for v in verdicts if not v.failed]
    return sum((points(o, "pro") for o in outcomes), 0.0), sum((points(o, "con") for o in outcomes), 0.0)


def simulated(*parties: Entry | JudgeSpec, simulated_calls: bool = False) -> bool:
    """Whether results made by these entries and judges are simulated: any of them runs on the simulator, or
    the simulator answered any call made for them (simulated_calls: the ledger's `simulated` column, which also
    marks every search the offline search provider answered, `[search] provider = "offline"`).

    The one rule for a match's `simulated` flag, applied when its results are committed (with the calls of that
    play of the match, Store.simulated_sides); everything downstream reads the stored flag. An entry is
    simulated by the same rule over its own side's calls only (Store.simulated_entries): its opponent's
    simulated speeches make the match simulated, not the entry.
    """
    return simulated_calls or any(p.simulated for p in parties)


@dataclass(frozen=True)
class AttackResult:
    """How often one attack on what a judge reads (arena.match.attacks) turned its verdict to the attacked side,
    the side its clean verdict found losing, in a run of `arena judge-attacks`: flips of trials (matches), the
    95% Wilson interval of the share, the attacked speeches the speech checks would have refused before any judge
    read them (caught), and the attack's calls and cost (None: a price unknown)."""

    judge: str
    attack: str
    trials: int
    flips: int
    ci_low: float | None
    ci_high: float | None
    caught: int
    calls: int
    cost: float | None
    simulated: bool = False  # the judge's model is the offline simulator
    ran_at: str = ""
    flips_uncaught: int = 0  # flips whose attacked speeches the speech checks all passed: won against the arena

    @property
    def flip_rate(self) -> float | None:
        return self.flips / self.trials if self.trials else None
