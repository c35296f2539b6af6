"""`arena stats agents | judges | bias | sides | paper`: statistics over the stored matches (arena.analysis.stats)."""
from __future__ import annotations

from typing import Any, Collection, Mapping, Sequence, cast

from arena.app.commands.attacks import attack_row
from arena.app.commands.names import first_judge
from arena.app.setup.presets import PRESETS
from arena.app.shapes.figures import (AgentStats, BiasRow, Coefficient, RobustnessRow, StatsJudges, StatsPaper,
                                      StatsSides)
from arena.analysis.stats import (PAPER_COLUMNS, SCOPES, MotionScore, agent_stats, bias_stats, bias_votes, consistency_split,
                                  judge_stats, paper_points, points_of_three, side_stats)
from arena.analysis.tally import match_features, results_rows
from arena.base.errors import UserError
from arena.domain.records import AttackResult
from arena.workspace.folder import Workspace


def stats_agents(ws: Workspace) -> list[AgentStats]:
    """Per debater kind, stage and role: calls per speech and tokens per call, over completed matches."""
    return agent_stats(ws.store.speech_usage())


def stats_judges(ws: Workspace, withheld: Collection[str] = frozenset()) -> StatsJudges:
    """Per judge: matches, runs, failures, side bias, calls and cost; per pair: agreement and kappa; and for
    judges of people, per pair of its people and per person against each other judge; over every match but
    those withheld (the published site's embargo). With a stored `arena judge-attacks` run, robustness: the rows
    of each judge's last (as that run found them: an attack run is not split by match)."""
    stats = judge_stats([v for v in ws.store.judged_verdicts() if v.match_id not in withheld],
                        [c for c in ws.store.judge_calls() if c.match_id not in withheld],
                        [j.name for j in ws.config.judges], ballot_people(ws))
    out: StatsJudges = {**stats, "robustness": robustness(ws.store.attack_results(),
                                                         [r["judge"] for r in stats["judges"]])}
    if not out["robustness"]:  # absent, not empty, without a stored run: the figures stay as they were
        del out["robustness"]
    return out


def robustness(results: Sequence[AttackResult], judges: Sequence[str]) -> list[RobustnessRow]:
    """Each judge's last attack run as rows (judge-attacks' JSON rows with when it ran), the judges in the order
    given (the judges table's) and any other after them, each run's rows in its order."""
    rank = {name: k for k, name in enumerate(judges)}
    ordered = sorted(results, key=lambda r: rank.get(r.judge, len(rank)))  # stable: the store's order within
    return [{**attack_row(r), "ran_at": r.ran_at} for r in ordered]


def stats_bias(ws: Workspace, judge: str | None = None, withheld: Collection[str] = frozenset(),
               features: Mapping[str, Mapping[str, Mapping[str, int]]] | None = None) -> list[BiasRow]:
    """`arena stats bias`: per judge, and per panelist where its verdicts name one (a jury's, an imported panel's),
    the Pro share of its decided votes, the share won by the longer side, its length coefficient and its
    same-family preference (arena.analysis.stats.bias_stats), over every completed match but those withheld (the published
    site's embargo). Each run that did not fail is a vote. The length coefficient is a controlled fit
    (leaderboard.ratings.rate with control=("length",), the side fitted, sandwich intervals) of the voter's votes
    alone, in Elo per unit of x = (Pro's words − Con's) / (Pro's + Con's), net of the debaters' ratings and the
    Pro advantage. Families: arena.domain.families; a judge of people, a jury and an imported panel have none of their own
    (a jury's and a panel's votes take their panelist's). features: arena.analysis.tally.match_features, when the caller
    has them already. judge: that judge's rows alone."""
    from arena.domain.families import family_of
    from arena.domain.records import HUMAN_JUDGE, IMPORTED, JURY

    if judge is not None:
        try:
            judge = ws.config.judge(judge).name
        except UserError as exc:
            raise UserError(f"--judge: {exc}") from None
    features = match_features(ws.store) if features is None else features
    words = {m: (sides["pro"]["length"], sides["con"]["length"]) for m, sides in features.items()}
    played = ws.store.played_entries()
    entries = {**{name: e.family for name, e in played.items()}, **{e.name: e.family for e in ws.config.entries}}
    judges = {j.name: None if j.casts_ballots or j.kind in (HUMAN_JUDGE, IMPORTED, JURY) else j.family
              for j in ws.config.judges}
    votes = bias_votes((v for v in ws.store.judged_verdicts() if v.match_id not in withheld), words, entries,
                       judges, panelist_family=family_of)
    return bias_stats(votes, [j.name for j in ws.config.judges], fit=_length_fit, only=judge)


def _length_fit(rows: Sequence[Mapping[str, object]]) -> Coefficient | None:
    """The length coefficient of one voter's results rows (arena.analysis.stats.vote_results): {coef, ci_low, ci_high} in
    Elo per unit of x, from the controlled fit with the side fitted and sandwich intervals; None with no rows."""
    import pandas as pd
    from leaderboard.ratings import rate as fit

    if not rows:
        return None
    frame = pd.DataFrame(rows)
    control = fit(frame, ci="sandwich", bootstrap=0, side="fit", control=("length",)).get("control")
    return control["length"] if control else None


def ballot_people(ws: Workspace) -> dict[str, dict[int, str]]:
    """Judge of people → run → person, from the configured `people` lists (opening the workspace checked
    that everyone with ballots keeps their place there)."""
    return {j.name: dict(enumerate(j.people)) for j in ws.config.judges if j.casts_ballots}


def stats_sides(ws: Workspace) -> StatsSides:
    """Pro/Con sides per entry over completed matches; Pro score share and side-bias test per motion and
    overall, from the default judge's results (none without a judge)."""
    done = ws.store.match_states(status="done")
    motion_of = {m.id: m.motion_id for m in done}
    judge = first_judge(ws)
    results: list[MotionScore] = [{"motion": motion_of[r["match_id"]], "score_pro": r["score_a"], "score_con": r["score_b"]}
               for r in (results_rows(ws.store, judge, ws.config.judge(judge).runs) if judge else [])
               if r["dimension"] == "overall" and r["forfeit"] is None]  # a forfeit says nothing of sides
    data = side_stats([{"pro": m.pro, "con": m.con} for m in done], results,
                      [e.name for e in ws.config.entries if not e.retired])
    return {"judge": judge, "entries": data["entries"], "motions": data["motions"], "overall": data["overall"]}


def stats_paper(ws: Workspace, judge: str | None = None) -> StatsPaper:
    """`arena stats paper`: the Agent4Debate paper's tables from the stored verdicts (arena.analysis.stats.paper_points and
    consistency_split), with the paper's own figures beside ours in a workspace its preset made.

    judge: whose S/L/A/O points (default: the first judge the arena runs, else the first judge); the human
    judges' column is the first judge of people's. Forfeits have no verdicts, so no judge's points count them.
    """
    names = [j.name for j in ws.config.judges]
    if not names:
        raise UserError(f"{ws.config.path.name}: no [[judges]] configured, so there are no verdicts to tabulate")
    try:
        judge = ws.config.judge(judge).name if judge else (ws.config.automatic_judges or ws.config.judges)[0].name
    except UserError as exc:
        raise UserError(f"--judge: {exc}") from None
    people = ballot_people(ws)
    crowd = next(iter(people), None)
    rows = ws.store.judged_verdicts()
    debaters = {name: e.debater for name, e in ws.store.played_entries().items()}
    humans = {r.match_id for r in rows if "human" in (debaters.get(r.pro), debaters.get(r.con))}
    # The tables as plain dicts from here: _beside_paper walks their sections alike, giving every row "paper".
    tables: dict[str, Any] = {**paper_points(points_of_three(r for r in rows if r.verdict.judge == judge),
                                             points_of_three(r for r in rows if r.verdict.judge == crowd) if crowd else {},
                                             debaters, [e.name for e in ws.config.entries])}
    tables["consistency"] = consistency_split(rows, people, [n for n in names if n not in people], humans)
    preset = ws.store.preset()
    _beside_paper(tables, PRESETS[preset].figures if preset in PRESETS else {})
    # The one cast of the facade: the paper's figures were added beside every row of every section, and the rows only
    # the paper has were added, by one generic walk (_beside_paper) rather than a typed function per section.
    return cast(StatsPaper, {"judge": judge, "people": crowd,
                             "simulated": any(ws.store.judge_simulated(n) for n in (judge, crowd) if n),
                             "preset": preset, **tables})


# Per section of `arena stats paper`: where its rows sit, and the columns that key a row.
_PAPER_KEYS = {"pairs": (("pairs",), ("entry", "opponent")), "kinds": (("kinds",), ("debater", "opponent")),
               "judges": (("consistency", "judges"), ("judge", "people")),
               "among_people": (("consistency", "among_people"), ("people",))}


def _beside_paper(tables: dict[str, Any], figures: dict[str, Any]) -> None:
    """Give every row a "paper" key: the paper's figures for it, or None (figures: none outside the preset's
    workspace), adding the rows the paper has and this workspace has not (yet), with no matches."""
    for section, (path, keys) in _PAPER_KEYS.items():
        holder = tables
        for step in path[:-1]:
            holder = holder[step]
        rows = holder[path[-1]]
        known = {tuple(r[k] for k in keys) for r in rows}
        empty = ({"matches": 0, **{c: None for c in PAPER_COLUMNS}, "people_matches": 0, "people_overall": None}
                 if section in ("pairs", "kinds") else
                 {scope: {"matches": 0, **({"comparisons": 0} if section == "among_people" else {}),
                          "consistency": None} for scope in SCOPES})
        rows += [{**dict(zip(keys, key)), **empty} for key in figures.get(section, {}) if key not in known]
        for row in rows:
            row["paper"] = figures.get(section, {}).get(tuple(row[k] for k in keys))
