"""The JSON shapes commands print (docs/reference/json.md) for kinds, entries, motions, matches and the plan: each
a TypedDict, and the records turned into them, in one place. Ratings and statistics are arena.app.shapes.figures'; what a
command that does something reports, arena.app.shapes.reports'.

A TypedDict is the plain dict it describes, so what is printed is what is built, key for key and in order."""
from __future__ import annotations

from typing import Any, Literal, Mapping, NotRequired, TypedDict, get_args

from arena.base.params import KindParam as KindParam  # `arena kinds`: made where the params are described
from arena.domain import records
from arena.domain.formats import Format, shown
from arena.domain.records import (Entry, HumanTurn, JudgeSpec, Match, MatchProgress, MatchState, MatchStatus, Motion, Outcome, Side,
                                  Verdict, score)
from arena.gateway.redact import public_url


class Kind(TypedDict):
    """`arena kinds`: a debater, judge or importer kind, built-in or plug-in."""

    family: Literal["debater", "judge", "importer"]
    kind: str
    source: str  # "built-in", or the plug-in's distribution
    params: list[KindParam]


class _Strength(TypedDict, total=False):
    """An offline entry's planted strength, which only the simulator's entries have."""

    strength: float


class EntryRow(TypedDict):
    """`arena entry list`: one entry."""

    name: str
    debater: str
    model: str
    family: str
    family_warning: str | None  # a declared family the table contradicts, a guessed one a jury seats by
    matches: int
    forfeits: int
    simulated: bool
    retired: bool
    strength: NotRequired[float]


class JudgeRow(TypedDict):
    """`arena judge list`: one judge."""

    name: str
    kind: str
    model: str  # a jury's first model of its pool (models: all of it); a judge of people's: "human"
    models: list[str]
    runs: int  # R: runs a match (a judge of people's: its people)
    family: str
    people: list[str]  # a judge of people's, by name; empty for the others
    simulated: bool
    judged: int  # done matches it has verdicts on, none failed: those its ratings count
    to_judge: int | None  # done matches lacking its verdicts, or with a failed run: what 'arena judge' judges
    # (None: people and imported judges, whom the arena does not run)


class EntryDetail(TypedDict):
    """`arena entry show`: one entry's configuration, status and matches."""

    name: str
    status: Literal["active", "retired", "imported"]
    retired: bool
    debater: str
    model: str
    family: str
    simulated: bool
    api_base: str
    strength: NotRequired[float]
    params: dict[str, Any]
    matches: int
    forfeits: int


class _TwoSided(TypedDict, total=False):
    """Each side's proposition, which only a two-sided motion words."""

    pro_text: str
    con_text: str


class MotionRow(TypedDict):
    """`arena motion list`: a motion and its set."""

    id: str
    text: str
    category: str
    language: str
    info_slide: str
    pro_text: NotRequired[str]
    con_text: NotRequired[str]
    set: str | None


class MotionDetail(MotionRow):
    """`arena motion show`: a motion, its set and how many stored matches are on it."""

    matches: int


class MatchRow(TypedDict):
    """`arena match list`: a stored match."""

    id: str
    status: MatchStatus
    motion: str
    pro: str
    con: str
    error: str | None
    forfeit: Side | None
    format: str


class MatchMotion(TypedDict):
    """The motion of `arena match show`."""

    id: str
    text: str
    category: str
    language: str
    pro_text: NotRequired[str]
    con_text: NotRequired[str]


class ReferenceJson(TypedDict):
    """A source a speech cites."""

    title: str
    url: str
    text: str
    number: int


class UsageJson(TypedDict):
    """One agent role's calls, tokens and cost in a speech (cost None: the price is unknown); cached_tokens: of
    prompt_tokens, those the provider read from its prompt cache."""

    calls: int
    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int
    cost: float | None


class SpeechJson(TypedDict):
    """A speech of `arena match show`, titled by its format."""

    stage: str
    title: str
    side: Side
    text: str
    references: list[ReferenceJson]
    started_at: str
    finished_at: str
    cut: bool
    agents: dict[str, UsageJson]


class VerdictJson(TypedDict):
    """A judge's run of `arena match show`: arena.domain.records.Verdict as JSON, a shape of its own because the
    JSON is the contract (docs/reference/json.md), whatever the record becomes."""

    judge: str
    run: int
    overall: Outcome | None
    dimensions: dict[str, Outcome]
    rationale: str
    cached_tokens: int  # the run's prompt tokens its provider read from its prompt cache
    error: NotRequired[str]
    extra: NotRequired[dict[str, Any]]


class Score(TypedDict):
    """The judge's points of each side."""

    pro: float
    con: float


class Awaiting(TypedDict):
    """The turn an awaiting match is parked at: whose speech, open since when, and its deadline."""

    entry: str
    stage: str
    side: Side
    since: str
    deadline: str


class Playing(TypedDict):
    """What a running match is doing (arena.domain.records.MatchProgress): the stage, side and role of its call in flight
    (else of its latest call; all null before its first), its LLM calls so far, and since when that call runs."""

    stage: str | None
    side: Side | None
    role: str | None
    calls: int
    since: str


class MatchJson(TypedDict):
    """`arena match show`: a match with its motion, speeches, verdicts and score; awaiting, while it is parked at a
    person's turn."""

    id: str
    status: MatchStatus
    error: str | None
    simulated: bool
    format: str
    forfeit: Side | None
    forfeit_reason: str | None
    motion: MatchMotion
    pro: str
    con: str
    speeches: list[SpeechJson]
    verdicts: list[VerdictJson]
    score: Score
    awaiting: NotRequired[Awaiting]
    progress: NotRequired[Playing]


class AgentMessage(TypedDict):
    """`arena match messages`: what an agent was sent and answered (stage and side None: a judge's call)."""

    stage: str | None
    side: Side | None
    role: str
    prompt: str
    response: str
    created_at: str


class Tournament(TypedDict):
    """A stored plan's tournament and the flags of its anomalies."""

    id: int
    format: str
    seed: int
    created_at: str
    flags: list[str]


class PlannedMatch(TypedDict):
    """A stored match with its tournament, round and (active) selection probability."""

    id: str
    tournament: int
    format: str
    round: int | None
    status: MatchStatus
    motion: str
    pro: str
    con: str
    probability: float | None


class Schedule(TypedDict):
    """`arena schedule --show`: every tournament, and every match in schedule order."""

    tournaments: list[Tournament]
    matches: list[PlannedMatch]


def entry_row(entry: Entry, matches: int, forfeits: int, simulated: bool | None = None, *,
              family_warning: str = "") -> EntryRow:
    """`arena entry list`: name, debater, model, family (arena.domain.families, or arena.toml's), family_warning
    (what is wrong with it, else None: arena.app.runner.juries.family_note), matches (completed), forfeits (of
    them), simulated (any of its speeches or searches came from the simulator, Store.simulated_entries; None: its
    model is the simulator), retired; strength if its model is the simulator."""
    simulated = entry.simulated if simulated is None else simulated
    return {"name": entry.name, "debater": entry.debater, "model": entry.model, "family": entry.family,
            "family_warning": family_warning or None, "matches": matches,
            "forfeits": forfeits, "simulated": simulated, "retired": entry.retired, **_strength(entry)}


def judge_row(spec: JudgeSpec, judged: int, to_judge: int | None) -> JudgeRow:
    """`arena judge list`: a configured judge, how many done matches it has judged (its verdicts, none failed) and
    how many wait for it (None: a judge the arena does not run)."""
    return {"name": spec.name, "kind": spec.kind, "model": spec.model, "models": list(spec.models),
            "runs": spec.runs, "family": spec.family, "people": list(spec.people), "simulated": spec.simulated,
            "judged": judged, "to_judge": to_judge}


def entry_detail(entry: Entry, matches: int, forfeits: int, simulated: bool | None = None) -> EntryDetail:
    """`arena entry show`: the configuration, status, completed-match count and forfeits; simulated as entry_row
    says."""
    simulated = entry.simulated if simulated is None else simulated
    return {"name": entry.name, "status": "retired" if entry.retired else "imported" if entry.imported else "active",
            "retired": entry.retired,
            "debater": entry.debater, "model": entry.model, "family": entry.family, "simulated": simulated,
            "api_base": public_url(entry.api_base), **_strength(entry),
            "params": dict(entry.params), "matches": matches, "forfeits": forfeits}


def _strength(entry: Entry) -> _Strength:
    return {"strength": entry.strength} if entry.simulated else {}


def motion_row(motion: Motion, spec: str | None) -> MotionRow:
    """`arena motion list`: a motion and the set it comes from (None: known only from stored matches)."""
    return {"id": motion.id, "text": motion.text, "category": motion.category, "language": motion.language,
            "info_slide": motion.info_slide, **_sides(motion), "set": spec}


def _sides(motion: Motion) -> _TwoSided:
    """pro_text and con_text, for a two-sided motion only: one-sided motions keep their shape."""
    return {"pro_text": motion.pro_text, "con_text": motion.con_text} if motion.two_sided else {}


def match_row(m: MatchState) -> MatchRow:
    """`arena match list`: a stored match's id, status, motion, sides, error, forfeit (the side, or None) and
    debate format."""
    return {"id": m.id, "status": m.status, "motion": m.motion_id, "pro": m.pro, "con": m.con, "error": m.error,
            "forfeit": m.forfeit.side if m.forfeit else None, "format": m.format}


def agent_message(m: records.AgentMessage) -> AgentMessage:
    """`arena match messages`: what one agent was sent and answered, its fields in the record's order."""
    return {"stage": m.stage, "side": m.side, "role": m.role, "prompt": m.prompt, "response": m.response,
            "created_at": m.created_at}


# Match.status is a str (arena.domain.records) that the store only ever sets to one of MatchStatus: each status by
# its name, so that a status outside MatchStatus fails loudly (KeyError) rather than printing.
_STATUS: dict[str, MatchStatus] = {status: status for status in get_args(MatchStatus)}


def match_json(match: Match, judge: str | None = None, declared: Mapping[str, Format] | None = None,
               turn: HumanTurn | None = None, progress: MatchProgress | None = None) -> MatchJson:
    """`arena match show --format json`; the score is the given judge's (default: the first that judged). Speeches
    in their format's order, each with its stage's title (a format no longer installed: as stored, titled by key);
    awaiting last, from turn, the person's turn the match is parked at; progress last, what a running match does."""
    judge = judge or next((v.judge for v in match.verdicts), None)
    pro, con = score([v for v in match.verdicts if v.judge == judge])
    fmt = shown(match.format, declared)
    out: MatchJson = {
        "id": match.id, "status": _STATUS[match.status], "error": match.error, "simulated": match.simulated,
        "format": match.format,
        "forfeit": match.forfeit.side if match.forfeit else None,
        "forfeit_reason": match.forfeit.reason if match.forfeit else None,
        "motion": {"id": match.motion.id, "text": match.motion.text, "category": match.motion.category,
                   "language": match.motion.language, **_sides(match.motion)},
        "pro": match.pro, "con": match.con,
        "speeches": [{"stage": s.stage, "title": fmt.title_of(s.stage), "side": s.side, "text": s.text,
                      "references": [{"title": r.title, "url": r.url, "text": r.text, "number": r.number}
                                     for r in s.references],
                      "started_at": s.started_at, "finished_at": s.finished_at, "cut": s.cut,
                      "agents": {role: {"calls": u.calls, "prompt_tokens": u.prompt_tokens,
                                        "completion_tokens": u.completion_tokens, "cached_tokens": u.cached_tokens,
                                        "cost": u.cost}
                                 for role, u in s.agents.items()}}
                     for s in fmt.ordered(match.speeches)],
        "verdicts": [_verdict(v) for v in match.verdicts],
        "score": {"pro": pro, "con": con},
    }
    if turn is not None:
        out["awaiting"] = {"entry": turn.entry, "stage": turn.stage, "side": turn.side, "since": turn.opened_at,
                           "deadline": turn.deadline}
    if progress is not None:
        out["progress"] = {"stage": progress.step.stage, "side": progress.step.side, "role": progress.step.role,
                           "calls": progress.calls, "since": progress.since}
    return out


def _verdict(v: Verdict) -> VerdictJson:
    """A run as match_json shows it: error only when it failed, extra only when the judge said more."""
    out: VerdictJson = {"judge": v.judge, "run": v.run, "overall": v.overall, "dimensions": dict(v.dimensions),
                        "rationale": v.rationale, "cached_tokens": v.cached_tokens}
    if v.error:
        out["error"] = v.error
    if v.extra:
        out["extra"] = dict(v.extra)
    return out
