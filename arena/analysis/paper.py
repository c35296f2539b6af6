"""The Agent4Debate paper's tables over stored verdicts (`arena stats paper`): mean points out of 3 per entry, per
pair of entries and per pair of debater kinds (Tables 1, 2 and 5), and consistency between judges and people
(Table 6)."""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import combinations
from typing import TypedDict

from arena.analysis.outcomes import agreement, ballot_outcomes, judge_outcomes, runs_by_judge
from arena.analysis.tally import judged_runs
from arena.domain.records import CATEGORIES, JudgedVerdict, Side, score

PAPER_COLUMNS = ("source", "language", "argument", "overall")  # the paper's S, L, A and O
SCOPES = ("excluding_human_debaters", "all")  # Table 6's two columns: matches without a human debater, and all


class MatchPoints(TypedDict):
    """A match's sides and category, and per column the points out of 3 of each side (pro, con)."""

    pro: str
    con: str
    category: str
    points: dict[str, tuple[float, float]]


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


class PairMeans(_Points):
    """An entry's mean points against one opponent."""

    entry: str
    opponent: str


class KindMeans(_Points):
    """A debater kind's mean points against another kind."""

    debater: str
    opponent: str


class PaperTables(TypedDict):
    """paper_points': the points tables."""

    entries: list[EntryPoints]
    pairs: list[PairMeans]
    kinds: list[KindMeans]


class ScopeConsistency(TypedDict):
    """A judge's consistency with a judge of people over the matches of one scope."""

    matches: int
    consistency: float | None


class PeopleScope(TypedDict):
    """The consistency among a judge of people's people over the matches of one scope."""

    matches: int
    comparisons: int
    consistency: float | None


class JudgeAgreement(TypedDict):
    """A judge against a judge of people (Table 6)."""

    judge: str
    people: str
    excluding_human_debaters: ScopeConsistency
    all: ScopeConsistency


class PeopleAgreement(TypedDict):
    """The people of a judge of people among themselves (Table 6)."""

    people: str
    excluding_human_debaters: PeopleScope
    all: PeopleScope


class Consistencies(TypedDict):
    """consistency_split's: the paper's Table 6."""

    judges: list[JudgeAgreement]
    among_people: list[PeopleAgreement]


def points_of_three(verdicts: Iterable[JudgedVerdict]) -> dict[str, MatchPoints]:
    """One judge's points on each match as the Agent4Debate paper counts them (Tables 1, 2 and 5).

    verdicts: the judge's stored verdicts. Each run gives the winner of a dimension (source, language, argument) or
    of the match (overall) 1 point and a tie 0.5 to each side; a side's points out of 3 are 3 × its share of the
    points given, which are its points when R = 3 as in the paper. A match with a failed run is left out, as the
    ratings leave it out; a column no run decided has no points.
    """
    out: dict[str, MatchPoints] = {}
    for match_id, (first, verdicts_) in judged_runs(verdicts).items():
        points = {}
        for column in PAPER_COLUMNS:
            pro, con = score(verdicts_, column)
            if pro + con > 0:
                points[column] = (3 * pro / (pro + con), 3 * con / (pro + con))
        out[match_id] = {"pro": first.pro, "con": first.con, "category": first.category, "points": points}
    return out


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


class _Tally(TypedDict):
    """A group's points so far: matches and each column's points under the judge, and the people's overall."""

    matches: int
    people_matches: int
    people_overall: list[float]
    columns: dict[str, list[float]]


_Groups = Callable[[MatchPoints, Side], list[tuple[str, str]]]


def _mean_points(judged: Mapping[str, MatchPoints], people: Mapping[str, MatchPoints],
                 groups: _Groups) -> dict[tuple[str, str], _Points]:
    """group → {"matches", S, L, A, O, "people_matches", "people_overall"}: the mean points out of 3 of the sides
    groups(match, side) puts in each group, under the judge (judged) and, overall, under the people (people),
    both as points_of_three gives them; a column is the mean over the matches that have it."""
    tally: dict[tuple[str, str], _Tally] = {}

    def cell(group: tuple[str, str]) -> _Tally:
        return tally.setdefault(group, {"matches": 0, "people_matches": 0, "people_overall": [],
                                        "columns": {c: [] for c in PAPER_COLUMNS}})

    sides: tuple[Side, Side] = ("pro", "con")
    for m in judged.values():
        for i, side in enumerate(sides):
            for group in groups(m, side):
                row = cell(group)
                row["matches"] += 1
                for column, pair in m["points"].items():
                    row["columns"][column].append(pair[i])
    for m in people.values():
        if "overall" in m["points"]:
            for i, side in enumerate(sides):
                for group in groups(m, side):
                    row = cell(group)
                    row["people_matches"] += 1
                    row["people_overall"].append(m["points"]["overall"][i])
    return {group: {"matches": r["matches"], "source": _mean(r["columns"]["source"]),
                    "language": _mean(r["columns"]["language"]), "argument": _mean(r["columns"]["argument"]),
                    "overall": _mean(r["columns"]["overall"]), "people_matches": r["people_matches"],
                    "people_overall": _mean(r["people_overall"])}
            for group, r in tally.items()}


def paper_points(judged: Mapping[str, MatchPoints], people: Mapping[str, MatchPoints], debaters: Mapping[str, str],
                 entries: Sequence[str] = ()) -> PaperTables:
    """Mean S/L/A/O points out of 3 (points_of_three of the judge: judged; of a judge of people: people, overall
    only), as the Agent4Debate paper's Tables 1, 2 and 5 give them, over the matches each judged.

    "entries": per entry, over all its matches (category "all") and per motion category; "pairs": per entry
    against each opponent it met (head to head, Tables 1 and 2); "kinds": per debater kind against each other
    kind, over the matches between them (Table 5: human against agent4debate). debaters: entry → debater kind.
    entries: names to list first, in order; the rest follow by name.
    """
    def opponent(m: MatchPoints, side: Side) -> str:
        return m["con"] if side == "pro" else m["pro"]

    def kinds(m: MatchPoints, side: Side) -> list[tuple[str, str]]:
        ours, theirs = debaters.get(m[side], ""), debaters.get(opponent(m, side), "")
        return [(ours, theirs)] if ours != theirs else []

    per_entry = _mean_points(judged, people, lambda m, side: [(m[side], "all"), (m[side], m["category"])])
    listed = list(dict.fromkeys([*entries, *sorted({name for name, _ in per_entry})]))
    categories = ["all", *CATEGORIES, *sorted({c for _, c in per_entry} - {"all", *CATEGORIES})]
    pairs = _mean_points(judged, people, lambda m, side: [(m[side], opponent(m, side))])
    by_kind = _mean_points(judged, people, kinds)
    return {"entries": [{"entry": name, "debater": debaters.get(name, ""), "category": c, **per_entry[name, c]}
                        for name in listed for c in categories if (name, c) in per_entry],
            "pairs": [{"entry": a, "opponent": b, **pairs[a, b]} for a, b in sorted(pairs)],
            "kinds": [{"debater": a, "opponent": b, **by_kind[a, b]} for a, b in sorted(by_kind)]}


def _consistent(a: Mapping[str, str], b: Mapping[str, str], matches: Sequence[str]) -> ScopeConsistency:
    return {"matches": len(matches), "consistency": agreement([a[m] for m in matches], [b[m] for m in matches])}


def consistency_split(verdicts: Iterable[JudgedVerdict], people: Mapping[str, Mapping[int, str]],
                      judges: Sequence[str], human_matches: set[str]) -> Consistencies:
    """The Agent4Debate paper's Table 6: consistency (agreement) over the matches without a human debater
    (human_matches: those with one) and over all matches.

    verdicts: the stored verdicts; people: judge of people → run → person; judges: the other judges to compare, in
    order. "judges": each judge against each judge of people, their outcomes (judge_outcomes: majorities of runs,
    and of ballots) over the matches both have one on. "among_people": per judge of people, pooled over every pair
    of its people and every match both cast a ballot on, with the number of matches that have two ballots or more
    and of such comparisons.
    """
    verdicts = list(verdicts)
    outcomes = judge_outcomes(runs_by_judge(verdicts))
    ballots = ballot_outcomes(verdicts, people)

    def scoped(matches: Iterable[str]) -> tuple[list[str], list[str]]:
        """(the matches without a human debater, all the matches): SCOPES' two."""
        every = list(matches)
        return [m for m in every if m not in human_matches], every

    rows: list[JudgeAgreement] = []
    for judge in judges:
        for crowd in people:
            ours, theirs = outcomes.get(judge, {}), outcomes.get(crowd, {})
            without, every = scoped(m for m in ours if m in theirs)
            rows.append({"judge": judge, "people": crowd, "excluding_human_debaters": _consistent(ours, theirs, without),
                         "all": _consistent(ours, theirs, every)})
    among: list[PeopleAgreement] = []
    for crowd, names in people.items():
        cast = ballots.get(crowd, {})
        pairs = list(combinations([cast.get(names[run], {}) for run in sorted(names)], 2))

        def among_scope(matches: list[str]) -> PeopleScope:
            compared = [(a[m], b[m]) for m in matches for a, b in pairs if m in a and m in b]
            return {"matches": sum(sum(m in c for c in cast.values()) >= 2 for m in matches),
                    "comparisons": len(compared),
                    "consistency": agreement([x for x, _ in compared], [y for _, y in compared])}

        without, every = scoped(dict.fromkeys(m for c in cast.values() for m in c))
        among.append({"people": crowd, "excluding_human_debaters": among_scope(without), "all": among_scope(every)})
    return {"judges": rows, "among_people": among}
