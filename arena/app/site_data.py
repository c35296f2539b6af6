"""Gather what the site shows from a workspace: ratings per view and per judge, matrices, entries, matches,
the consistency of judges; and leave out what people are still judging blind (the embargo)."""
from __future__ import annotations

from collections import defaultdict
from dataclasses import replace

from arena.formats import shown
from arena.records import CATEGORIES, AgentUsage, score
from arena.results import results_rows
from arena.store import now
from arena.workspace import Workspace
from leaderboard.site import SiteData, page_name


def site_data(ws: Workspace, judge: str | None, consistency: dict, *, bootstrap: int = 1000, seed: int = 0,
              awaiting: frozenset[str] = frozenset(), unplayed: frozenset[str] = frozenset()) -> SiteData:
    """Ratings overall, per category and per dimension from one judge's verdicts (the index), the same for
    every other judge with rated matches (its own page), and the records behind them; consistency is the
    consistency of judges as `arena stats judges` gives it, over the matches shown.

    awaiting and unplayed (arena.app.people.embargo) are matches left out of everything: pages, lists, fits,
    counts, costs, history; the site says how many. Their pages and motion pages, which an earlier publish may
    have written, are named in withdrawn, for the publisher not to keep."""
    from leaderboard.ratings import win_matrices

    withheld = awaiting | unplayed
    rows = _shown(results_rows(ws.store, judge, ws.config.judge(judge).runs), withheld) if judge else []
    side = ws.config.rating.side
    boards, overall = _boards(rows, bootstrap=bootstrap, seed=seed, side=side)
    judge_boards = {}  # a page only for a judge with rated matches, in configured order
    for spec in ws.config.judges:
        if spec.name == judge:
            if len(overall):
                judge_boards[judge] = boards  # the index's fits, not fitted twice
            continue
        theirs = _shown(results_rows(ws.store, spec.name, spec.runs), withheld)
        if any(r["dimension"] == "overall" for r in theirs):
            judge_boards[spec.name] = _boards(theirs, bootstrap=bootstrap, seed=seed, side=side)[0]
    every = ws.store.matches()
    # Each match's speeches in its format's order, for pages that show them in turn under their stages' titles.
    formats = {name: shown(name, ws.config.formats) for name in {m.format for m in every}}
    matches = [replace(m, speeches=tuple(formats[m.format].ordered(m.speeches))) for m in every if m.id not in withheld]
    judged = {v.judge for m in matches for v in m.verdicts}
    return SiteData(
        title="Debate Arena leaderboard", generated_at=now(), judge=judge,
        simulated=any(m.simulated for m in matches),
        boards=boards, matrices=win_matrices(overall, side=side) if len(overall) else {},
        entries=_entries(ws, matches, withheld), matches=matches, results=rows,
        judges=[{"name": j.name, "kind": j.kind, "model": j.model, "runs": j.runs, "options": dict(j.options),
                 "people": list(j.people), "simulated": ws.store.judge_simulated(j.name), "imported": j.imported,
                 "judged": j.name in judged}
                for j in ws.config.judges],
        scores={m.id: _scores(m.verdicts) for m in matches},
        judge_boards=judge_boards, consistency=consistency, history=_history(ws, judge, rows, seed=seed),
        awaiting=len(awaiting), unplayed=len(unplayed), withdrawn=_withdrawn(every, matches),
        stage_titles={name: {stage: formats[name].title_of(stage) for stage in formats[name].stages}
                      for name in {m.format for m in matches}})


def _shown(rows: list[dict], withheld: frozenset[str]) -> list[dict]:
    """The results rows of matches the site shows."""
    return [r for r in rows if r["match_id"] not in withheld]


def _withdrawn(every: list, shown: list) -> tuple[str, ...]:
    """The site's pages that must not be there: those of the matches not shown, and of motions no shown match
    was debated on (an earlier publish may have written them)."""
    ids, motions = {m.id for m in shown}, {m.motion.id for m in shown}
    hidden = [m for m in every if m.id not in ids]
    return tuple(sorted({page_name("matches", m.id) for m in hidden}
                        | {page_name("motions", m.motion.id) for m in hidden if m.motion.id not in motions}))


def _history(ws: Workspace, judge: str | None, rows: list[dict], *, seed: int) -> list[dict]:
    """The overall fit of the judge's results rows after every N matches in the order they finished
    (leaderboard.history, at most 25 snapshots), with sandwich intervals: a bootstrap per snapshot would
    multiply the time publishing takes. Each snapshot's meta names the judge and whether it is simulated."""
    import pandas as pd
    from leaderboard.history import history, in_order
    from leaderboard.results import COLUMNS, main_rows

    overall = main_rows(pd.DataFrame(rows, columns=list(COLUMNS)))
    snapshots = history(in_order(overall, ws.store.finish_order()), ci="sandwich", seed=seed,
                        side=ws.config.rating.side)
    simulated = bool(judge) and ws.store.judge_simulated(judge)
    for snapshot in snapshots:
        snapshot["meta"] |= {"judge": judge, "simulated": simulated}
    return snapshots


def _boards(rows: list[dict], *, bootstrap: int, seed: int, side: str):
    """(view → ratings, the overall rows) of one judge's results rows, the Pro advantage fitted or not (side)."""
    import pandas as pd
    from leaderboard.ratings import rate
    from leaderboard.results import COLUMNS, groups, main_rows

    frame = pd.DataFrame(rows, columns=list(COLUMNS))
    overall = main_rows(frame)
    # The same splits as `arena rate --by`: a tab per built-in category and per dimension found in the verdicts
    # (custom ones included, in groups' order); a dimension named like a category cannot take that category's tab.
    views = {"overall": overall}
    views |= {c: part for c, part in groups(frame, "category").items() if c in CATEGORIES}
    views |= {d: part for d, part in groups(frame, "dimension").items() if d not in views}
    return {view: rate(part, bootstrap=bootstrap, seed=seed, side=side) for view, part in views.items()}, overall


def _scores(verdicts) -> dict[str, tuple[float, float]]:
    """Each judge's (PRO, CON) points on a match (arena.records.score)."""
    by_judge: dict[str, list] = defaultdict(list)
    for v in verdicts:
        by_judge[v.judge].append(v)
    return {judge: score(runs) for judge, runs in by_judge.items()}


def _entries(ws: Workspace, matches, withheld: frozenset[str]) -> list[dict]:
    costs = ws.store.entry_costs(skip=withheld)
    played: dict[str, int] = defaultdict(int)
    forfeits: dict[str, int] = defaultdict(int)
    roles: dict[str, dict[str, AgentUsage]] = defaultdict(dict)
    for m in matches:
        if m.status != "done":
            continue
        for s in m.speeches:
            name = m.pro if s.side == "pro" else m.con
            for role, usage in s.agents.items():
                roles[name][role] = roles[name].get(role, AgentUsage()) + usage
        played[m.pro] += 1
        played[m.con] += 1
        if m.forfeit is not None:
            forfeits[m.pro if m.forfeit.side == "pro" else m.con] += 1
    out = []
    for e in ws.config.entries:
        cost, unknown = costs.get(e.name, (0.0, False))
        out.append({"name": e.name, "debater": e.debater, "model": e.model, "simulated": e.simulated,
                    "retired": e.retired, "params": dict(e.params), "matches": played[e.name],
                    "forfeits": forfeits[e.name], "cost": cost,
                    "cost_per_match": cost / played[e.name] if played[e.name] else None, "cost_unknown": unknown,
                    "roles": roles[e.name]})
    return out
