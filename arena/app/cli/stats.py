"""`arena stats agents | judges | sides | bias | paper`: statistics over completed matches."""
from __future__ import annotations

from itertools import groupby
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

import click

from arena.app.cli.common import echo, echo_json, fixed, format_option, open_ws, table, workspace_option
from arena.base.errors import plural

if TYPE_CHECKING:  # the shapes of what the facade returns, for the renderers
    from arena.app.shapes.figures import (EntryPoints, JudgeConsistency, JudgePair, KindPoints, MotionShare, PairPoints,
                                          PaperFigures, PeopleConsistency, PeoplePair, PeopleScope, PersonVsJudge,
                                          RobustnessRow, SameFamily, ScopeConsistency)


@click.group()
def stats() -> None:
    """Statistics over completed matches."""


@stats.command("agents")
@workspace_option
@format_option
def stats_agents(workspace: Path, fmt: str) -> None:
    """Per debater kind, stage and role: calls per speech and tokens per call (Agent4Debate Tables 8-9)."""
    from arena.app import commands as app

    rows = app.stats_agents(open_ws(workspace))
    if fmt == "json":
        echo_json(rows)
        return

    def num(value: float | None, digits: int = 1) -> str | None:
        return None if value is None else f"{value:.{digits}f}"

    table([{**r, "calls/speech": num(r["calls_per_speech"], 2),
             "completion tok/call": num(r["completion_tokens_per_call"]),
             "prompt tok/call": num(r["prompt_tokens_per_call"]), "cost/speech": num(r["cost_per_speech"], 4)}
            for r in rows],
           ["debater", "stage", "role", "speeches", "calls/speech", "completion tok/call", "prompt tok/call",
            "cost/speech"])


@stats.command("judges")
@workspace_option
@format_option
def stats_judges(workspace: Path, fmt: str) -> None:
    """Per judge: failures, Pro win rate with a binomial side-bias test, the share of matches whose runs were
    identical, runs that contradicted their own scores, calls and cost per match, and for a judge attacked by
    `arena judge-attacks` a line of its last run's flip rates; per pair of judges: agreement on the overall winner
    and Cohen's kappa; for judges of people, the same per pair of their people and per person against each other
    judge."""
    from arena.app import commands as app

    data = app.stats_judges(open_ws(workspace))
    if fmt == "json":
        echo_json(data)
        return
    table([{**r, "pro win rate": fixed(r["pro_win_rate"], 3), "side-bias p": fixed(r["side_bias_p"], 3),
             "identical runs": fixed(r["identical_runs"], 3), "calls/match": fixed(r["calls_per_match"], 2),
             "cost/match": fixed(r["cost_per_match"], 4)}
            for r in data["judges"]],
           ["judge", "matches", "runs", "failed_runs", "pro_wins", "ties", "con_wins", "pro win rate", "side-bias p",
            "identical runs", "self_contradictions", "calls/match", "cost/match"])
    # A line per judge attacked (arena judge-attacks), under the judges it adds to, before the tables of pairs
    runs = [list(run) for _, run in groupby(data.get("robustness", []), key=lambda r: r["judge"])]
    if runs:
        echo("")
        for run in runs:
            echo(robustness_line(run))

    def figures(rows: Sequence[JudgePair | PeoplePair | PersonVsJudge]) -> list[dict[str, object]]:
        return [{**r, "agreement": fixed(r["agreement"], 3), "kappa": fixed(r["kappa"], 3)} for r in rows]

    # Each table only when it has rows: the people's two only with judges of people (of two or more people).
    agreements: list[tuple[Sequence[JudgePair | PeoplePair | PersonVsJudge], list[str]]] = [
        (data["pairs"], ["a", "b"]), (data["people"], ["judge", "a", "b"]),
        (data["people_vs_judges"], ["judge", "person", "vs"])]
    for rows, columns in agreements:
        if rows:
            echo("")
            table(figures(rows), [*columns, "matches", "agreement", "kappa"])


def robustness_line(rows: Sequence[RobustnessRow]) -> str:
    """A judge's last attack run in a line: when, on how many matches (the most trials of an attack), each attack's
    flips of trials with the flip rate and its 95% interval, the attacked speeches the speech checks caught."""
    first = rows[0]

    def attack(k: int, r: RobustnessRow) -> str:
        rate = ("n/a" if r["flip_rate"] is None or r["ci_low"] is None or r["ci_high"] is None
                else f"{r['flip_rate']:.2f}, {r['ci_low']:.2f}–{r['ci_high']:.2f}")
        return f"{r['attack']} {r['flips']}/{r['trials']}{' flipped' if k == 0 else ''} ({rate})"

    caught = ", ".join(f"{r['attack']} {r['caught']}" for r in rows if r["caught"]) or "none"
    return (f"robustness of {first['judge']!r} (attacked {first['ran_at'][:10]}, "
            f"{plural(max(r['trials'] for r in rows), 'match')}): {', '.join(attack(k, r) for k, r in enumerate(rows))}"
            f"; caught by the speech checks: {caught}{' — SIMULATED' if any(r['simulated'] for r in rows) else ''}")


@stats.command("sides")
@workspace_option
@format_option
def stats_sides(workspace: Path, fmt: str) -> None:
    """Pro/Con sides per entry; per motion and overall the Pro score share with a binomial side-bias test."""
    from arena.app import commands as app

    data = app.stats_sides(open_ws(workspace))
    if fmt == "json":
        echo_json(data)
        return
    table(data["entries"], ["entry", "pro", "con"])
    echo(f"\nPro score share by motion (judge {data['judge'] or 'none configured'}):")
    overall: MotionShare = {"motion": "overall", **data["overall"]}
    share = [{**r, "pro share": fixed(r["pro_share"], 3), "p": fixed(r["p_value"], 3)}
             for r in [*data["motions"], overall]]
    table(share, ["motion", "matches", "pro share", "pro_wins", "con_wins", "ties", "p"])


@stats.command("bias")
@click.option("--judge", default=None, help="This judge's rows alone (default: every judge).")
@workspace_option
@format_option
def stats_bias(judge: str | None, workspace: Path, fmt: str) -> None:
    """Per judge, and per panelist where its verdicts name one (a jury's, an imported panel's): the Pro share of
    its decided votes, the share won by the side with more words, the length coefficient of a controlled fit of
    its votes (Elo per unit of (Pro's words - Con's) / (Pro's + Con's)), each with a 95% interval, and its
    preference for a debater of its own model family against other judges' votes on the same matches."""
    from arena.app import commands as app

    rows = app.stats_bias(open_ws(workspace), judge)
    if fmt == "json":
        echo_json(rows)
        return

    def share(value: float | None, low: float | None, high: float | None) -> str:
        if value is None:
            return "n/a"
        return f"{value:.2f} ({low:.2f}-{high:.2f})"

    from leaderboard.control import loose

    def coefficient(value: float | None, low: float | None, high: float | None) -> str:
        if value is None or low is None or high is None:  # all three or none (arena.analysis.stats.bias_row)
            return "n/a"
        return f"{round(value):+d} ({round(low):+d} to {round(high):+d})" + (", not estimated" if loose(low, high) else "")

    def family(same: SameFamily | None) -> str:
        if same is None:
            return ""
        return f"{same['own_share']:.2f} vs {fixed(same['others_share'], 2)} ({plural(same['votes'], 'vote')})"

    table([{**r, "pro share (95% CI)": share(r["pro_share"], r["pro_ci_low"], r["pro_ci_high"]),
             "longer side's share": share(r["longer_share"], r["longer_ci_low"], r["longer_ci_high"]),
             "length coef (Elo)": coefficient(r["length_coef"], r["length_ci_low"], r["length_ci_high"]),
             "own family vs others": family(r["same_family"])} for r in rows],
           ["judge", "panelist", "votes", "pro share (95% CI)", "longer side's share", "length coef (Elo)",
            "own family vs others"])


@stats.command("paper")
@click.option("--judge", default=None,
              help="Whose S/L/A/O points (default: the first judge the arena runs; people's ballots count too).")
@workspace_option
@format_option
def stats_paper(judge: str | None, workspace: Path, fmt: str) -> None:
    """The Agent4Debate paper's tables: mean Source/Language/Argument/Overall points out of 3 per entry and
    category, head to head and per debater kind (Tables 1, 2, 5); consistency of the judges with the judges of
    people, without the matches of human debaters and over all (Table 6); the paper's figures beside ours in a
    workspace made by `arena init --preset agent4debate`."""
    from arena.app import commands as app

    data = app.stats_paper(open_ws(workspace), judge)
    if fmt == "json":
        echo_json(data)
        return
    people = f"; human: the overall points of the people of {data['people']!r}" if data["people"] else ""
    echo(f"mean points out of 3 under judge {data['judge']!r} (S source, L language, A argument, O overall"
         f"{people}){' — SIMULATED' if data['simulated'] else ''}")

    def points(r: EntryPoints | PairPoints | KindPoints, paper: PaperFigures | None = None) -> dict[str, object]:
        return {**r, "S": fixed(r["source"], 2), "L": fixed(r["language"], 2), "A": fixed(r["argument"], 2),
                "O": fixed(r["overall"], 2), "human": fixed(r["people_overall"], 2),
                "paper S/L/A/O (human)": "/".join(f"{x:.2f}" for x in (paper["source"], paper["language"],
                                                                       paper["argument"], paper["overall"]))
                + (f" ({paper['people_overall']:.2f})" if "people_overall" in paper else "") if paper else ""}

    columns = ["matches", "S", "L", "A", "O", "people_matches", "human"]
    paper = ["paper S/L/A/O (human)"] if data["preset"] else []
    table([points(r) for r in data["entries"]], ["entry", "debater", "category", *columns])
    compared: list[tuple[str, list[PairPoints] | list[KindPoints], list[str]]] = [
        ("head to head (Tables 1, 2)", data["pairs"], ["entry", "opponent"]),
        ("by debater kind, against each other kind (Table 5)", data["kinds"], ["debater", "opponent"])]
    for title, rows, keys in compared:
        echo(f"\n{title}:")
        table([points(r, r["paper"]) for r in rows], [*keys, *columns, *paper])

    def of(scope: ScopeConsistency | PeopleScope) -> str:
        return f"{fixed(scope['consistency'], 2)} of {scope['matches']}"

    def split(r: JudgeConsistency | PeopleConsistency) -> dict[str, object]:
        figures = r["paper"]
        theirs = ({"paper without humans": f"{figures['excluding_human_debaters']:.2f}",
                   "paper all": f"{figures['all']:.2f}"} if figures else {})
        return {**r, "without humans": of(r["excluding_human_debaters"]), "all": of(r["all"]), **theirs}

    scopes = ["without humans", "all"]
    echo("\nconsistency, matches without a human debater and all (Table 6):")
    table([split(r) for r in data["consistency"]["judges"]],
           ["judge", "people", *scopes, *[f"paper {s}" for s in scopes if paper]])
    echo("\namong the people of each judge of people:")
    table([split(r) for r in data["consistency"]["among_people"]],
           ["people", *scopes, *[f"paper {s}" for s in scopes if paper]])
