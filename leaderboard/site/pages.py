"""What the pages show beyond SiteData itself: the figures the renderer composes from it for its templates (the
judges with pages and their labels, each match's verdicts by judge, a motion's side balance, the history's key, the
heatmap in rating order, ...). Pure functions of SiteData: nothing here renders or writes."""
from __future__ import annotations

from typing import Any, Callable, Iterable, Literal, Mapping, NotRequired, Sequence, TypedDict

from leaderboard.results import DIMENSIONS, dimension_order
from leaderboard.site import labels
from leaderboard.site import svg
from leaderboard.tables import Rating
from leaderboard.site.data import (AttackFigures, Board, BiasRow, Consistency, JudgeInfo, JudgePair, MatchRecord,
                                   MotionRecord, PeoplePair, PersonVsJudge, SiteData, SiteEntry, Snapshot, WinMatrices)
from leaderboard.site.published import page_name

VIEWS = ("overall", "fact", "value", "policy", *DIMENSIONS)  # tab order; custom dimensions' tabs follow

Translate = Callable[..., str]  # a message and its named values → the message in the site's language
Points = tuple[float, float]  # (PRO, CON)


class SiteJudge(TypedDict):
    """A judge with a page (its ratings): its data.judges record, if any, with its people, simulated flag, label and
    page; a judge data.judges does not describe has only a name, a page and blanks."""

    name: str
    kind: str
    model: str
    runs: int | None
    options: NotRequired[Mapping[str, Any]]
    imported: NotRequired[bool]
    judged: NotRequired[bool]
    people: Sequence[str]
    simulated: bool
    simulated_own: NotRequired[bool]
    label: str
    page: str


class PeopleRows(TypedDict):
    """A judge of people's rows on the consistency page: pairs of its people, each person against other judges."""

    pairs: list[PeoplePair]
    vs: list[PersonVsJudge]


class ConsistencyFigures(TypedDict):
    """The consistency page's tables, with each judge's label, and page if any."""

    pairs: Sequence[JudgePair]
    people: dict[str, PeopleRows]
    labels: dict[str, str]
    pages: dict[str, str]


class Robustness(TypedDict):
    """A judge's last attack run as its page shows it: its rows, when it began, and whether the judge is simulated."""

    rows: list[AttackFigures]
    ran_at: str
    simulated: bool


class BiasFigures(TypedDict):
    """The biases page's table, with each judge's label, page if any, and whether its verdicts are simulated."""

    rows: Sequence[BiasRow]
    labels: dict[str, str]
    pages: dict[str, str]
    simulated: set[str]


# A run of a judge on a match page: who (a run's number, or a person's name), the overall outcome ("failed"), each
# dimension's outcome, each detail, and the rationale (or the error).
Run = tuple[int | str, str, list[str], list[str], str]


class Judged(TypedDict):
    """A judge's verdicts on a match: its points, the dimensions its runs decided, the details its source gave, and
    per run (a person's ballot, for a judge of people) what it decided."""

    judge: str
    score: Points
    dimensions: list[str]
    people: bool
    details: list[str]
    runs: list[Run]


class Balance(TypedDict):
    """Pro and Con points on a motion under the rating judge, and Pro's share (None: none judged)."""

    pro: float
    con: float
    pro_share: float | None




PARTS = ("speeches", "search", "verdicts")  # what the simulator may make of a match, in the banner's order


class Simulated(TypedDict):
    """A line of the simulation banner: a part of the matches (speeches, search, verdicts; on an entry's page its
    own speeches and search, its opponents' and the verdicts), in how many of them the simulator made it, and over
    a single match whose it made (the sides, upper case, or the judges)."""

    part: str
    n: int
    whose: list[str]


class Simulation(TypedDict):
    """What the simulator made of some matches (total: those played), part by part, and in how many matches flagged
    simulated it is not known which part (imported so)."""

    total: int
    rows: list[Simulated]
    unknown: int


def simulation(matches: Iterable[MatchRecord], data: SiteData, entry: str | None = None) -> Simulation | None:
    """What the simulator made of the matches played among these (data.simulated_parts), for the banner that says
    so; with entry, of that entry's matches: its own speeches and search, its opponents', the verdicts. None when it
    made nothing of them."""
    played = [m for m in matches if m.status != "scheduled"]
    counts: dict[str, int] = {}
    whose: dict[str, list[str]] = {}
    unknown = 0
    for m in played:
        parts = data.simulated_parts.get(m.id, {})
        unknown += bool(m.simulated and not parts)
        for part, who in _scoped(parts, m, entry):
            counts[part] = counts.get(part, 0) + 1
            whose[part] = list(dict.fromkeys([*whose.get(part, []), *who]))
    if not counts and not unknown:
        return None
    shown = ("speeches", "search", "opponents", "verdicts") if entry else PARTS
    return {"total": len(played), "unknown": unknown,
            "rows": [{"part": p, "n": counts.get(p, 0), "whose": whose.get(p, [])} for p in shown]}


def _scoped(parts: Mapping[str, Sequence[str]], match: MatchRecord, entry: str | None) -> list[tuple[str, list[str]]]:
    """(part, whose) the simulator made of a match: every part, or an entry's own speeches and search, its
    opponent's (as "opponents") and the verdicts."""
    def sides(part: str) -> list[str]:
        return [s.upper() for s in ("pro", "con") if s in parts.get(part, ())]

    if entry is None:
        return [(p, sides(p) if p != "verdicts" else list(parts[p])) for p in PARTS if p in parts]
    own = "pro" if match.pro == entry else "con"
    out = [(p, [own.upper()]) for p in ("speeches", "search") if own in parts.get(p, ())]
    other = {s for p in ("speeches", "search") for s in parts.get(p, ()) if s != own}
    out += [("opponents", [s.upper() for s in ("pro", "con") if s in other])] if other else []
    return out + ([("verdicts", list(parts["verdicts"]))] if "verdicts" in parts else [])


def views(boards: Mapping[str, object]) -> list[str]:
    """A judge's tabs: the built-in views in VIEWS order, then custom dimensions."""
    return [v for v in VIEWS if v in boards] + [v for v in boards if v not in VIEWS]


def judge_label(judge: JudgeInfo, t: Translate = labels.plain("en")) -> str:
    """How a judge's ratings are named: "Human-Elo (N people)" for people's ballots, else its kind and model."""
    n = len(judge.get("people") or [])
    if judge.get("imported"):
        return t("imported from {source}", source=judge.get("options", {}).get("source") or t("elsewhere"))
    if n:
        return t("Human-Elo ({n} person)", n=n) if n == 1 else t("Human-Elo ({n} people)", n=n)
    pool = judge.get("options", {}).get("pool")
    if pool:  # a jury has no model of its own: its panelists are drawn per match
        return t("jury of {size} drawn from {pool} models", size=judge.get("runs"), pool=len(pool))
    return f"{judge['kind']} · {judge['model']}"


def site_judges(data: SiteData, t: Translate) -> list[SiteJudge]:
    """The judges with pages, in data.judge_boards order: each one's data.judges record with its people,
    simulated flag, label and page (a judge data.judges does not describe has only a name and a page)."""
    known = {j["name"]: j for j in data.judges}
    out: list[SiteJudge] = []
    for name in data.judge_boards:
        judge = known.get(name)
        if judge is None:
            out.append({"name": name, "kind": "", "model": "", "runs": None, "people": [], "simulated": False,
                        "label": "", "page": page_name("judges", name)})
        else:
            out.append({**judge, "people": judge.get("people") or [], "simulated": bool(judge.get("simulated")),
                        "label": judge_label(judge, t), "page": page_name("judges", name)})
    return out


def consistency(stats: Consistency, data: SiteData, judges: Sequence[SiteJudge], t: Translate) -> ConsistencyFigures:
    """The consistency page's tables from `arena stats judges`' figures: pairs of judges, and per judge of
    people its pairs of people and each person against the other judges; each judge's label, and page if any."""
    of_people: dict[str, PeopleRows] = {}
    for row in stats.get("people", []):
        of_people.setdefault(row["judge"], {"pairs": [], "vs": []})["pairs"].append(row)
    for vs in stats.get("people_vs_judges", []):
        of_people.setdefault(vs["judge"], {"pairs": [], "vs": []})["vs"].append(vs)
    return {"pairs": stats.get("pairs", []), "people": of_people,
            "labels": {j["name"]: judge_label(j, t) for j in data.judges},
            "pages": {j["name"]: j["page"] for j in judges}}


def robustness(stats: Consistency, judge: str) -> Robustness | None:
    """A judge's last attack run from `arena stats judges`' robustness rows; None when none of it is stored."""
    rows = [r for r in stats.get("robustness", []) if r["judge"] == judge]
    if not rows:
        return None
    return {"rows": rows, "ran_at": rows[0]["ran_at"], "simulated": any(r["simulated"] for r in rows)}


def bias(data: SiteData, judges: Sequence[SiteJudge], t: Translate) -> BiasFigures:
    """The biases page's table, `arena stats bias`' rows, with each judge's label, page if any, and whether its
    verdicts are simulated."""
    known = {j["name"]: j for j in data.judges}
    return {"rows": data.bias, "labels": {name: judge_label(j, t) for name, j in known.items()},
            "pages": {j["name"]: j["page"] for j in judges},
            "simulated": {name for name, j in known.items() if j.get("simulated")}}


def legend(history: Sequence[Snapshot]) -> list[dict[str, object]]:
    """The history plot's key: per entry of the last snapshot, in its order, its series' colour and dash, its last
    rating row, and after how many matches it was first rated."""
    first: dict[str, int] = {}
    for snapshot in history:
        for row in snapshot["ratings"]:
            first.setdefault(row["entry"], snapshot["matches"])
    return [{**row, "colour": svg.series_style(i)[0], "dash": svg.series_style(i)[1], "since": first[row["entry"]]}
            for i, row in enumerate(history[-1]["ratings"] if history else [])]


def unlisted(data: SiteData, listed: Mapping[str, SiteEntry]) -> list[str]:
    """Entry names the site links to (match sides, rated entries) that data.entries does not describe."""
    names = dict.fromkeys(n for m in data.matches for n in (m.pro, m.con))
    names.update(dict.fromkeys(r["entry"] for board in data.boards.values() for r in board["ratings"]))
    return [n for n in names if n not in listed]


def removed_entry(name: str) -> SiteEntry:
    """The page of an entry played or rated but no longer configured: its name, and no configuration."""
    return {"name": name, "debater": "", "model": "", "simulated": False, "retired": False, "removed": True,
            "params": {}, "matches": 0, "cost": None, "cost_per_match": None, "cost_unknown": False, "roles": {}}


def overall_ratings(boards: Mapping[str, Board]) -> Sequence[Rating]:
    """The overall board's rows, best first; none when nothing is rated."""
    return boards["overall"]["ratings"] if "overall" in boards else []


def heatmap(matrices: WinMatrices, order: Sequence[str], t: Translate) -> str:
    """The heatmap with entries in rating order, best first, so the colour runs from corner to corner."""
    names = matrices.get("entries", [])
    index = {name: i for i, name in enumerate(names)}
    keep = [index[name] for name in order if name in index]
    if not keep:
        return ""

    def pick(m: Sequence[Sequence[Any]]) -> list[list[Any]]:  # reorder rows and columns alike
        return [[m[i][j] for j in keep] for i in keep]

    return svg.heatmap([names[i] for i in keep], pick(matrices["predicted"]), pick(matrices["observed_share"]),
                       pick(matrices["counts"]), t=t)


def stage_title(data: SiteData, match: MatchRecord, stage: str) -> str:
    """A stage's title as its match's format names it (data.stage_titles), else its key in words."""
    return data.stage_titles.get(match.format, {}).get(stage) or stage.replace("_", " ").capitalize()


def score(match: MatchRecord, data: SiteData) -> Points | None:
    """(PRO, CON) points from the rating judge, as the ratings count them: None when unjudged or a run failed."""
    runs = [v for v in match.verdicts if v.judge == data.judge]
    if data.judge is None or not runs or any(v.failed for v in runs):  # runs of it: it is a judge
        return None
    return data.scores[match.id][data.judge]


def judged(match: MatchRecord, data: SiteData, people: Mapping[str, Sequence[str]]) -> list[Judged]:
    """Verdicts grouped by judge, each with its (PRO, CON) points over the runs that did not fail, the
    dimensions its runs decided (a judge may have its own), the details its source gave beyond them (an imported
    verdict's single-valued `extra`: panelist, margin, ...) and per run the outcome of each; a judge of
    people's runs are its people's ballots, named by person (people: judge → its people, run order)."""
    groups: dict[str, list[Any]] = {}
    for v in match.verdicts:
        groups.setdefault(v.judge, []).append(v)
    out: list[Judged] = []
    for judge, runs in groups.items():
        dimensions = dimension_order(d for v in runs for d in v.dimensions)
        details = list(dict.fromkeys(k for v in runs for k, x in v.extra.items() if _single(x)))
        names = people.get(judge) or []
        out.append({"judge": judge, "score": data.scores[match.id][judge], "dimensions": dimensions,
                    "people": bool(names), "details": details,
                    "runs": [(names[v.run] if v.run < len(names) else v.run + 1, v.overall or "failed",
                              [v.dimensions.get(d, "") for d in dimensions],
                              [_detail(v.extra.get(k)) for k in details], v.error or v.rationale) for v in runs]})
    return out


def _single(value: object) -> bool:
    """A value a table cell shows: a string or a number (not a list, a table, or a flag)."""
    return isinstance(value, (str, int, float)) and not isinstance(value, bool)


def _detail(value: object) -> str:
    """A detail as its cell shows it: numbers without trailing zeros (+1.5 stays 1.5), absent as empty."""
    return "" if value is None else f"{value:g}" if isinstance(value, float) else str(value)


def motions(matches: Iterable[MatchRecord]) -> dict[str, tuple[MotionRecord, list[MatchRecord]]]:
    """motion id → (the motion, the matches debated on it)"""
    out: dict[str, tuple[MotionRecord, list[MatchRecord]]] = {}
    for m in matches:
        out.setdefault(m.motion.id, (m.motion, []))[1].append(m)
    return out


def by_entry(matches: Iterable[MatchRecord]) -> dict[str, list[tuple[MatchRecord, Literal["pro", "con"]]]]:
    """entry → [(match, side it took)]"""
    out: dict[str, list[tuple[MatchRecord, Literal["pro", "con"]]]] = {}
    for m in matches:
        out.setdefault(m.pro, []).append((m, "pro"))
        out.setdefault(m.con, []).append((m, "con"))
    return out


def balance(matches: Iterable[MatchRecord], data: SiteData) -> Balance:
    """Pro and Con points on this motion under the rating judge: the side balance readers check."""
    judge = data.judge
    points = [data.scores[m.id][judge] for m in matches if judge is not None and judge in data.scores.get(m.id, {})]
    pro, con = sum(p for p, _ in points), sum(c for _, c in points)
    total = pro + con
    return {"pro": pro, "con": con, "pro_share": pro / total if total else None}
