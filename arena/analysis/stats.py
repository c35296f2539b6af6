"""Statistics over stored matches, as pure functions of the records the store hands over: `arena stats agents`,
`judges` and `sides`. The paper's tables are arena.analysis.paper's, the judges' biases arena.analysis.bias',
both re-exported here."""
from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from itertools import combinations
from typing import TypedDict

from arena.analysis.bias import (DECIDED, BiasRow, LengthFit, SameFamily, Vote, VoteResult, bias_row, bias_stats,
                                 bias_votes, clustered_share, same_family, vote_results, wilson)
from arena.analysis.outcomes import (OUTCOMES, Agreement, agreement, ballot_outcomes, cohen_kappa, compare,
                                     judge_outcomes, match_outcome, runs_by_judge, side_bias)
from arena.analysis.paper import (PAPER_COLUMNS, SCOPES, Consistencies, EntryPoints, JudgeAgreement, KindMeans,
                                  MatchPoints, PairMeans, PaperTables, PeopleAgreement, PeopleScope,
                                  ScopeConsistency, consistency_split, paper_points, points_of_three)
from arena.domain.contradictions import CONTRADICTION, contradiction
from arena.domain.formats import BUILTIN
from arena.domain.records import AgentUsage, JudgeCalls, JudgedVerdict, SpeechUsage

__all__ = ["DECIDED", "OUTCOMES", "PAPER_COLUMNS", "SCOPES", "AgentStats", "Agreement", "BiasRow", "Consistencies",
           "EntryPoints", "EntrySides", "JudgeAgreement", "JudgeFigures", "JudgePair", "KindMeans", "LengthFit",
           "MatchPoints", "MotionScore", "MotionShare", "PairMeans", "PaperTables", "PeopleAgreement", "PeoplePair",
           "PeopleScope", "PersonVsJudge", "SameFamily", "ScopeConsistency", "SideShare", "SideStats", "Sides",
           "StatsJudges", "Vote", "VoteResult", "agent_stats", "agreement", "ballot_outcomes", "bias_row",
           "bias_stats", "bias_votes", "clustered_share", "cohen_kappa", "compare", "consistency_split",
           "identical_runs", "judge_outcomes", "judge_stats", "match_outcome", "paper_points", "people_pairs",
           "people_vs_judges", "points_of_three", "runs_by_judge", "same_family", "self_contradictory", "side_bias",
           "side_stats", "vote_results", "wilson"]


# --- `arena stats agents` ------------------------------------------------------------------------------------

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


def agent_stats(speeches: Iterable[SpeechUsage]) -> list[AgentStats]:
    """Per debater kind, stage and internal role: mean calls per speech and tokens per call.

    The shape of the Agent4Debate paper's Tables 8 and 9, from each speech's debater kind, stage and agents (what
    each role spent). A role missing from a speech ran 0 times in it, so an ablation shows as fewer calls per
    speech. Stages come in speaking order: the built-in formats' (the default's first), then any other in the
    order first seen.
    """
    groups: dict[tuple[str, str], list[Mapping[str, AgentUsage]]] = {}
    for s in speeches:
        groups.setdefault((s.debater, s.stage), []).append(s.agents)
    order = dict.fromkeys([*(stage for fmt in BUILTIN.values() for stage in fmt.stages), *(s for _, s in groups)])
    rank = {stage: k for k, stage in enumerate(order)}
    out: list[AgentStats] = []
    for (debater, stage), agents in sorted(groups.items(), key=lambda g: (g[0][0], rank[g[0][1]])):
        n = len(agents)
        for role in dict.fromkeys(role for usage in agents for role in usage):  # first-seen order: call order
            ran = [usage[role] for usage in agents if role in usage]
            calls = sum(u.calls for u in ran)
            costs = [u.cost for u in ran]
            out.append({
                "debater": debater, "stage": stage, "role": role, "speeches": n,
                "calls_per_speech": calls / n,
                "completion_tokens_per_call": _per(sum(u.completion_tokens for u in ran), calls),
                "prompt_tokens_per_call": _per(sum(u.prompt_tokens for u in ran), calls),
                "cost_per_speech": None if None in costs else sum(c or 0.0 for c in costs) / n,
            })
    return out


def _per(total: float, calls: int) -> float | None:
    return total / calls if calls else None


# --- `arena stats judges` ------------------------------------------------------------------------------------

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


# The key order of each shape is the order of the columns the Python API's tables show (arena.app.notebook).


class StatsJudges(TypedDict):
    """`arena stats judges`: the figures of the judges' verdicts (the app adds their attack runs beside them:
    arena.app.shapes.figures.StatsJudges)."""

    judges: list[JudgeFigures]
    pairs: list[JudgePair]
    people: list[PeoplePair]
    people_vs_judges: list[PersonVsJudge]


def identical_runs(matches: Mapping[str, list[JudgedVerdict]]) -> float | None:
    """The share of a judge's judged matches with R ≥ 2 (two runs or more, none failed) whose runs all gave the
    same verdict, overall and per dimension, with the same rationale: runs that repeat one another, evidence
    counted R times over. None with no such match. matches: match → its stored verdicts (runs_by_judge)."""
    judged = [rs for rs in matches.values() if len(rs) >= 2 and not any(r.verdict.error for r in rs)]
    if not judged:
        return None

    def said(r: JudgedVerdict) -> tuple[str | None, str, str]:
        return r.verdict.overall, json.dumps(dict(r.verdict.dimensions), sort_keys=True), r.verdict.rationale or ""

    return sum(len({said(r) for r in rs}) == 1 for rs in judged) / len(judged)


def self_contradictory(v: JudgedVerdict) -> bool:
    """Whether a stored verdict is a self-contradiction (arena.domain.contradictions): one whose dimensions' winners
    contradict the scores its extra holds, or a run that failed because its answers kept doing so."""
    said = v.verdict
    if said.error:
        return bool(said.extra.get("self_contradiction")) or f"{CONTRADICTION}:" in said.error
    return bool(contradiction(said.dimensions, said.extra.get("scores") or {}))


def people_pairs(ballots: Mapping[str, Mapping[str, Mapping[str, str]]],
                 people: Mapping[str, Mapping[int, str]]) -> list[PeoplePair]:
    """For each judge of people and each pair of its people (in run order): agreement and kappa over the
    matches both cast a ballot on (compare). ballots as ballot_outcomes gives them."""
    rows: list[PeoplePair] = []
    for judge, names in people.items():
        cast_ = ballots.get(judge, {})
        for a, b in combinations([names[run] for run in sorted(names)], 2):
            rows.append({"judge": judge, "a": a, "b": b, **compare(cast_.get(a, {}), cast_.get(b, {}))})
    return rows


def people_vs_judges(ballots: Mapping[str, Mapping[str, Mapping[str, str]]], people: Mapping[str, Mapping[int, str]],
                     outcomes: Mapping[str, Mapping[str, str]], judges: Sequence[str]) -> list[PersonVsJudge]:
    """Each person of each judge of people against each of judges (match outcomes as judge_outcomes gives
    them): agreement and kappa over the matches the person cast a ballot on and that judge rated."""
    return [{"judge": judge, "person": names[run], "vs": other,
             **compare(ballots.get(judge, {}).get(names[run], {}), outcomes.get(other, {}))}
            for judge, names in people.items() for run in sorted(names) for other in judges]


def judge_stats(verdicts: Iterable[JudgedVerdict], calls: Iterable[JudgeCalls], judges: Sequence[str] = (),
                people: Mapping[str, Mapping[int, str]] | None = None) -> StatsJudges:
    """Per judge and per pair of judges, from the stored verdicts of completed matches and the judges' calls (one
    record per judge and match).

    A judge's outcome on a match is the majority of its runs (judge_outcomes); it has none on a
    match where a run failed, as it does not rate that match. Side bias and pairs count matches,
    not runs: the R runs of one match are not independent samples. Calls and cost per match are
    means over the judge's matches with ledger rows naming it (calls recorded before the ledger
    named judges cannot be attributed), counting every call there, retries and rejudging included;
    cost is None when any call's price is unknown. identical_runs is the share of its judged matches with R ≥ 2
    whose runs all said the same (identical_runs); self_contradictions counts its runs whose stated winner
    contradicts their own scores, stored or failed for it (self_contradictory).
    judges: names to list first, in order (configured judges, even with no verdicts yet).
    people: judge of people → run → person. For them, "people" compares each pair of a judge's
    people (people_pairs) and "people_vs_judges" each person with every judge not of people.
    """
    verdicts = list(verdicts)
    people = people or {}
    runs = runs_by_judge(verdicts)
    names = list(dict.fromkeys([*judges, *sorted(runs)]))
    ledger: dict[str, dict[str, JudgeCalls]] = {}
    for c in calls:
        ledger.setdefault(c.judge, {})[c.match_id] = c

    outcomes = judge_outcomes(runs)
    rows: list[JudgeFigures] = []
    for name in names:
        matches = runs.get(name, {})
        decided = list(outcomes.get(name, {}).values())
        counts = {k: decided.count(k) for k in OUTCOMES}
        rate, p = side_bias(counts["pro"], counts["con"])
        spent = [ledger[name][m] for m in matches if m in ledger.get(name, {})]
        costs = [c.cost for c in spent]
        rows.append({
            "judge": name, "matches": len(matches), "runs": sum(map(len, matches.values())),
            "failed_runs": sum(bool(r.verdict.error) for rs in matches.values() for r in rs),
            "pro_wins": counts["pro"], "con_wins": counts["con"], "ties": counts["tie"],
            "pro_win_rate": rate, "side_bias_p": p,
            "calls_per_match": sum(c.calls for c in spent) / len(spent) if spent else None,
            "cost_per_match": _mean_cost(costs),
            "identical_runs": identical_runs(matches),
            "self_contradictions": sum(self_contradictory(r) for rs in matches.values() for r in rs),
        })

    pairs: list[JudgePair] = [{"a": a, "b": b, **compare(outcomes.get(a, {}), outcomes.get(b, {}))}
                              for a, b in combinations(names, 2)]
    ballots = ballot_outcomes(verdicts, people)
    return {"judges": rows, "pairs": pairs, "people": people_pairs(ballots, people),
            "people_vs_judges": people_vs_judges(ballots, people, outcomes, [n for n in names if n not in people])}


def _mean_cost(costs: list[float | None]) -> float | None:
    """The mean cost, None without costs or when any is unknown."""
    known = [c for c in costs if c is not None]
    return sum(known) / len(known) if known and len(known) == len(costs) else None


# --- `arena stats sides` -------------------------------------------------------------------------------------

class Sides(TypedDict):
    """A completed match's entries on each side: what side_stats counts."""

    pro: str
    con: str


class MotionScore(TypedDict):
    """One judge's overall scores of a match it judged without a failed run, and the match's motion."""

    motion: str
    score_pro: float
    score_con: float


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


class SideStats(TypedDict):
    """side_stats': entries' sides, and the Pro share per motion and overall."""

    entries: list[EntrySides]
    motions: list[MotionShare]
    overall: SideShare


def side_stats(matches: Iterable[Sides], results: Iterable[MotionScore], entries: Sequence[str] = ()) -> SideStats:
    """Side balance and side bias, as debate tab software reports them.

    matches: completed matches, counted per entry as Pro and Con sides. results: one judge's overall scores of the
    matches it judged without a failed run. Per motion and overall: matches; the Pro score share
    Σ score_pro / Σ (score_pro + score_con) (the judge's points, a tie half to each side); Pro wins, Con wins and
    ties by each match's majority outcome; and p_value, the two-sided exact binomial test of Pro wins among
    decided matches against 0.5 (side_bias): whole matches, since the R runs of one match are not independent
    samples, so rounding points would overstate the evidence.
    entries: names to list first, in order (active entries, even with no matches yet).
    """
    sides: dict[str, EntrySides] = {}
    for name in entries:
        sides.setdefault(name, {"entry": name, "pro": 0, "con": 0})
    for m in matches:
        sides.setdefault(m["pro"], {"entry": m["pro"], "pro": 0, "con": 0})["pro"] += 1
        sides.setdefault(m["con"], {"entry": m["con"], "pro": 0, "con": 0})["con"] += 1
    listed = list(dict.fromkeys(entries))
    rows = [sides[n] for n in listed] + [sides[n] for n in sorted(sides) if n not in listed]

    by_motion: dict[str, list[MotionScore]] = {}
    everything = []
    for r in results:
        by_motion.setdefault(r["motion"], []).append(r)
        everything.append(r)
    return {"entries": rows,
            "motions": [{"motion": motion, **_side_share(by_motion[motion])} for motion in sorted(by_motion)],
            "overall": _side_share(everything)}


def _side_share(results: list[MotionScore]) -> SideShare:
    points = sum(r["score_pro"] + r["score_con"] for r in results)
    outcomes = [match_outcome(r["score_pro"], r["score_con"]) for r in results]
    counts = {k: outcomes.count(k) for k in OUTCOMES}
    return {"matches": len(results), "pro_share": sum(r["score_pro"] for r in results) / points if points else None,
            "pro_wins": counts["pro"], "con_wins": counts["con"], "ties": counts["tie"],
            "p_value": side_bias(counts["pro"], counts["con"])[1]}
