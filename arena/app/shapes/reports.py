"""The JSON shapes of what the commands that do something report (docs/reference/json.md): an import, a motion
import, a judging pass, a run and a dry run, model checks, ballots, web debaters and an export. The app modules that
build them return these types."""
from __future__ import annotations

from typing import Literal, NotRequired, TypedDict

from arena.domain.records import Side
from leaderboard.tables import Separability

# --- `arena import`, `arena motion import` -----------------------------------------------------------------


class KnownCounts(TypedDict):
    """What an import found in the workspace already."""

    matches: int
    entries: int
    judges: int


class FlaggedSpeech(TypedDict):
    """An imported speech and the first speech check it fails."""

    match: str
    stage: str
    side: Side
    problem: str


class SpeechChecks(TypedDict):
    """What the speech checks find in the matches an import added."""

    speeches: int
    flagged: list[FlaggedSpeech]


class SkippedFile(TypedDict):
    """A file, or a row of one ("file.md:12"), an import left out, and why."""

    path: str
    reason: str


class ImportReport(TypedDict):
    """`arena import`: what was added, found already (known) and skipped (speech_checks None: not checked)."""

    kind: str
    source: str
    matches: int
    entries: int
    speech_checks: SpeechChecks | None
    judges: list[str]
    runs: int
    motions: int
    known: KnownCounts
    skipped: list[SkippedFile]


class MotionImport(TypedDict):
    """`arena motion import`: the set added to arena.toml, the copy, its motions, and notes for people."""

    set: str
    path: str
    motions: int
    notes: list[str]


# --- `arena judge`, `arena run`, `arena check` ---------------------------------------------------------------


class JudgeTotals(TypedDict):
    """`arena judge`: one judge's pass (elsewhere: matches another process judged meanwhile)."""

    judge: str
    matches: int
    verdicts: int
    failed_runs: int
    kept: int  # stored verdicts kept in place of a judging with failed runs (a failure never replaces a verdict)
    elsewhere: int


class SkippedMatch(TypedDict):
    """A match a run left scheduled because an entry of it lacks a key: each missing variable → the match's
    entries that need it."""

    id: str
    pro: str
    con: str
    missing: dict[str, list[str]]


class RunResult(TypedDict):
    """`arena run`: matches played and how it stopped; with nothing to play, running and failed_waiting too."""

    done: int
    failed: int
    total: int
    not_started: int
    elsewhere: int
    stopped: str | None  # None, "budget" or "interrupted" (arena.app.runner.engine.play_claimed)
    cost: float
    ledger_cost: float
    unpriced: int
    cpu_s: float
    running: NotRequired[int]
    failed_waiting: NotRequired[int]
    awaiting: NotRequired[int]  # matches parked for a person's speech on the web (only when there are any)
    unjudged: NotRequired[dict[str, int]]  # with nothing to play: done matches lacking each judge's verdicts (any)
    skipped: NotRequired[list[SkippedMatch]]  # matches not played for want of keys (only when there are any)
    until: NotRequired[Until]  # `arena run --until`: where the criterion stood when the run stopped


class Until(TypedDict):
    """`arena run --until`: the criterion, whether it was met, why the run stopped, and where the board stood then."""

    criterion: str  # "top=3", "separability=0.8"
    met: bool
    reason: str  # "met", "max matches", "budget", "interrupted", "failed" (a batch's every match), "waiting" (for
    # people's speeches), "keys" (what is left needs entries that lack keys), "stalled" (a batch played nothing)
    matches: int  # done matches in the workspace at the stop
    batches: int  # active batches this run drew
    settled: int | None  # top=K: boundaries settled (None for separability)
    boundaries: int | None
    separability: Separability


class ModelCost(TypedDict):
    """A model's projected calls, tokens and cost (None: its price is unknown); cached_tokens: of prompt_tokens, those
    a provider's automatic prompt cache would read (arena.gateway.caching), priced at the cache-read price."""

    model: str
    calls: int
    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int
    cost: float | None


class Unpriced(TypedDict):
    """Why a model has no price."""

    model: str
    reason: str


class PerMatch(TypedDict):
    """The projection per pending match."""

    calls: float
    tokens: float
    cost: float


class NotCounted(TypedDict):
    """A pending match the projection leaves out, and why."""

    id: str
    error: str


class Projection(TypedDict):
    """What the pending matches would cost, per model and in total (of the priced models)."""

    matches: int
    models: list[ModelCost]
    unknown: list[str]
    why_unknown: list[Unpriced]
    searches: int
    search_provider: str
    cost: float
    per_match: PerMatch
    failed: list[NotCounted]


class ModelTime(TypedDict):
    """One measured model's part of a server's work: what `arena check` measured of it, and its seconds of work."""

    model: str
    calls: int
    slots: int
    tokens_per_s: float
    prompt_tokens_per_s: float | None
    latency_s: float
    work_s: float


class ServerTime(TypedDict):
    """A server's projected work (its api_base; a hosted model without one is a server of its own)."""

    server: str
    slots: int
    at_once: int
    work_s: float
    wall_s: float
    models: list[ModelTime]


class TimeBasis(TypedDict):
    """How the wall time was projected: the servers' work, and a match's calls in turn."""

    at_once: int
    match_s: float
    bound: str
    servers: list[ServerTime]


class Unmeasured(TypedDict):
    """A model the dry run could not time, and the entries and judges that `arena check NAME` would measure it by."""

    model: str
    names: list[str]


class TimeEstimate(TypedDict):
    """The projected wall time of the plan (None: no model of it was measured), its basis, what it leaves out."""

    estimate: float | None
    basis: TimeBasis
    unmeasured: list[Unmeasured]
    simulated: list[str]


class DryRun(Projection):
    """`arena run --dry-run`: the projection, how many matches it played on the simulator, and its wall time."""

    sampled: int
    time_s: TimeEstimate


class UntilDryRun(DryRun):
    """`arena run --dry-run --until`: the dry run of the pending matches and those the run is projected to add."""

    until: UntilProjection


class UntilProjection(TypedDict):
    """How many more matches `arena run --until` is projected to play: the median of simulations of its loop on
    the current board (each entry's true rating drawn from its interval), their 10th and 90th percentiles, the share
    of simulations in which the criterion held before max_matches, and the matches done now."""

    criterion: str
    matches: int
    low: int
    high: int
    met_share: float
    simulations: int
    cap: int  # the most matches a simulation could add: --max-matches less the done and pending, else 50 per entry
    done: int


class CheckRow(TypedDict):
    """`arena check`: one model of an entry or judge probed, or the search provider (named "[search]")."""

    name: str
    model: str
    family: str | None
    ok: bool
    structured: str | None
    context_window: int | None
    latency_s: float | None
    error: str | None
    priced: bool
    slots: int | None  # requests the server serves at once, measured (null: not measured, or not a model's row)
    tokens_per_s: float | None  # completion tokens a second of one request alone, measured


# --- `arena ballots ...`, `arena debaters ...`, `arena export` ---------------------------------------------


class BallotLink(TypedDict):
    """`arena ballots issue`: a person's new private link, and their ballots so far."""

    person: str
    url: str
    assigned: int
    cast: int


class BallotStatus(TypedDict):
    """`arena ballots status`: a person's ballots, and their judge's state and embargo."""

    judge: str
    person: str
    assigned: int
    cast: int
    state: Literal["open", "closed"]
    embargoed: int


class BallotsClosed(TypedDict):
    """`arena ballots close` (already: closed before; held: the matches it had open ballots on)."""

    judge: str
    closed_at: str
    already: bool
    held: int
    embargoed: int


class BallotsImported(TypedDict):
    """`arena ballots import`: the ballots stored and how many people cast them."""

    judge: str
    ballots: int
    people: int


class DebaterLink(TypedDict):
    """`arena debaters issue`: a web debater's new private link, and their turns so far."""

    entry: str
    url: str
    pending: int
    done: int


class OpenTurn(TypedDict):
    """A web debater's turn its match still awaits (lapsed: past its deadline, so the next run forfeits the side)."""

    match: str
    stage: str
    side: Side
    since: str
    deadline: str
    lapsed: bool


class DebaterStatus(TypedDict):
    """`arena debaters status`: a web debater's turns: open (each), written, and missed (the match went on)."""

    entry: str
    pending: int
    done: int
    missed: int
    open: list[OpenTurn]


class DebaterExtended(TypedDict):
    """`arena debaters extend`: the turns given more time, and the entry's open turns now."""

    entry: str
    hours: float
    extended: int
    open: list[OpenTurn]


class ExportResult(TypedDict):
    """`arena export`: the folder written, whether it is public, and the rows per table."""

    path: str
    public: bool
    rows: dict[str, int]
