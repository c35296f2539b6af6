"""`arena rate`: Bradley–Terry ratings from a workspace or a results CSV, and their history."""
from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING

import click

from arena.app.cli.common import SEED, echo, echo_data, echo_json, open_ws, table, workspace_option
from arena.base import limits
from arena.base.errors import UserError, plural

if TYPE_CHECKING:  # the shapes of what the facade returns, for the renderers
    from arena.app.commands import RateOptions
    from arena.app.shapes.figures import Coefficient, RatingRow, RatingsMeta, Separability, SideFit


def _anchor(ctx: click.Context, option: click.Parameter, value: str | None) -> tuple[str, float] | None:
    """--anchor ENTRY=RATING as (entry, rating); the entry may itself contain '='."""
    if value is None:
        return None
    name, _, rating = value.rpartition("=")
    try:
        number = float(rating)
    except ValueError:
        number = math.nan
    if not name or not math.isfinite(number):
        raise click.BadParameter(f"{value!r} is not ENTRY=RATING with a finite number, e.g. gpt-4o=1200")
    return name, number


def _control(ctx: click.Context, option: click.Parameter, value: str | None) -> tuple[str, ...] | None:
    """--control FEATURE[,...] as a tuple of distinct features; "none" as no control (overriding arena.toml)."""
    from arena.domain.features import FEATURES

    if value is None:
        return None
    if value.strip() == "none":
        return ()
    names = [name.strip() for name in value.split(",")]
    for name in names:
        if name not in FEATURES:
            raise click.BadParameter(f"{name!r} is not a feature: expected a comma-separated list of "
                                     f"{', '.join(FEATURES)}, or none")
    if len(set(names)) != len(names):
        raise click.BadParameter(f"{value!r} names a feature twice")
    return tuple(names)


@click.command()
@click.option("--results", "results_file", type=click.Path(path_type=Path), default=None, metavar="FILE.csv",
              help="Rate the rows of this results CSV instead of a workspace's verdicts (no workspace needed).")
@click.option("--judge", default=None, help="Rate from this judge's verdicts (default: the first configured).")
@click.option("--by", type=click.Choice(["category", "dimension"]), default=None,
              help="Also fit each category (of the overall rows) or each judged dimension on its own.")
@click.option("--ci", type=click.Choice(["bootstrap", "sandwich"]), default="bootstrap", show_default=True,
              help="95% intervals: bootstrap percentiles over matches, or robust (sandwich) normal intervals.")
@click.option("--bootstrap", type=click.IntRange(0, limits.MAX_BOOTSTRAP), default=1000, show_default=True)
@click.option("--seed", type=SEED, default=0, show_default=True)
@click.option("--weighting", type=click.Choice(["paper", "none"]), default="paper", show_default=True,
              help="paper: a match weighs 1/(1+exp(-|score_a-score_b|)); none: every match weighs 1.")
@click.option("--anchor", default=None, metavar="ENTRY=RATING", callback=_anchor,
              help="Pin ENTRY at RATING (default: ratings average 1000).")
@click.option("--side", type=click.Choice(["fit", "ignore"]), default=None,
              help="fit: a Pro advantage (Elo, like home advantage) fitted with the ratings; ignore: the paper's "
                   "side-blind fit. Default: [rating] side of arena.toml, else fit.")
@click.option("--control", default=None, metavar="FEATURE[,...]", callback=_control,
              help="Fit style features with the ratings, which are then net of them: length, citations, markdown "
                   "(each side's total over the match's speeches); none for no control. Default: [rating] control of "
                   "arena.toml, else none.")
@click.option("--history", is_flag=True,
              help="Ratings after every N matches in the order they finished (with --results: the file's row "
                   "order), each snapshot a fit of the matches so far; intervals default to sandwich.")
@click.option("--every", type=click.IntRange(min=1), default=None, metavar="N",
              help="With --history: matches between snapshots (default: the smallest N giving at most 25).")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "csv"]), default="table", show_default=True,
              help="csv: the results rows themselves (every dimension), to re-rate later with --results.")
@workspace_option
def rate(results_file: Path | None, judge: str | None, by: str | None, ci: str, bootstrap: int, seed: int,
         weighting: str, anchor: tuple[str, float] | None, side: str | None, control: tuple[str, ...] | None,
         history: bool, every: int | None, fmt: str, workspace: Path) -> None:
    """Weighted Bradley–Terry ratings (Elo scale) with 95% intervals, from a workspace or a results CSV."""
    from arena.app import commands as app

    if results_file is not None and judge is not None:
        raise UserError("--judge picks a workspace judge's verdicts; it does not apply to --results")
    if every is not None and not history:
        raise UserError("--every N spaces the snapshots of --history; add --history")
    if history and fmt == "csv":
        raise UserError("--format csv exports the results rows, not ratings; with --history use json or table")
    if fmt == "csv":
        frame = app.read_results(results_file) if results_file else app.results_frame(open_ws(workspace), judge)
        echo_data(app.results_csv(frame), nl=False)
        return
    options: RateOptions = {"by": by, "ci": ci, "bootstrap": bootstrap, "seed": seed, "weighting": weighting,
                            "anchor": anchor, "side": side, "control": control}
    if history:
        _rate_history(results_file, judge, workspace, every, fmt, options)
        return
    # With --results the workspace is never opened: the file is all there is to rate.
    result = (app.rate_results(results_file, **options) if results_file
              else app.rate(open_ws(workspace), judge=judge, **options))
    if fmt == "json":
        echo_json(result)
        return
    meta = result["meta"]
    source, intervals = _fitted(meta)
    settings = "".join([f", weighting {weighting}" if weighting != "paper" else "",
                        f", {anchor[0]} anchored at {anchor[1]:g}" if anchor else "",
                        ", side ignored" if meta["side"] == "ignore" else "",
                        f", controlled for {', '.join(meta['control'])}" if meta.get("control") else ""])
    echo(f"ratings from {source}, {plural(meta['matches'], 'match')}, {intervals}{settings}"
         f"{' — SIMULATED' if meta.get('simulated') else ''}")
    _rating_table(result["ratings"], result["separability"], result["side"], result.get("control"))
    for group, fit in result.get("by", {}).items():
        echo(f"\n{by} {group!r}: {plural(fit['meta']['matches'], 'match')}")
        _rating_table(fit["ratings"], fit["separability"], fit["side"], fit.get("control"))


def _rate_history(results_file: Path | None, judge: str | None, workspace: Path, every: int | None, fmt: str,
                  options: RateOptions) -> None:
    """`arena rate --history`: one fit per snapshot, so intervals are sandwich unless --ci is given."""
    from click.core import ParameterSource

    from arena.app import commands as app

    if click.get_current_context().get_parameter_source("ci") is ParameterSource.DEFAULT:
        options = {**options, "ci": "sandwich"}
    snapshots = (app.history_results(results_file, every=every, **options) if results_file
                 else app.rate_history(open_ws(workspace), judge=judge, every=every, **options))
    if fmt == "json":
        echo_json(snapshots)
        return
    if not snapshots:
        echo("no rated matches yet: no history")
        return
    meta = snapshots[-1]["meta"]
    source, intervals = _fitted(meta)
    order = "in the order they finished" if "judge" in meta else "in the file's row order"
    echo(f"ratings from {source} after every {every or snapshots[0]['matches']} of {plural(meta['matches'], 'match')} "
         f"{order}, {intervals}{' — SIMULATED' if meta.get('simulated') else ''}")
    for snapshot in snapshots:
        echo(f"\nafter {plural(snapshot['matches'], 'match')} (the last {snapshot['last_match']}):")
        _rating_table(snapshot["ratings"], snapshot["separability"], snapshot.get("side"))


def _fitted(meta: RatingsMeta) -> tuple[str, str]:
    """What a fit's meta says it rated (a judge's verdicts or a file) and how its intervals were drawn."""
    source = f"judge {meta['judge']!r}" if "judge" in meta else meta["results"]
    return source, "sandwich intervals" if meta["ci"] == "sandwich" else f"{meta['bootstrap']} bootstrap replicates"


def _rating_table(ratings: list[RatingRow], apart: Separability, side: SideFit | None = None,
                  control: dict[str, Coefficient] | None = None) -> None:
    """The ratings, then their separability (when there is a pair of entries), the Pro advantage (when fitted) and
    each controlled feature's coefficient on a line of its own."""
    table([{**r, "95% CI": f"{r['ci_low']:.0f}–{r['ci_high']:.0f}", "W-T-L": f"{r['wins']}-{r['ties']}-{r['losses']}",
             "rating": f"{r['rating']:.0f}", "provisional": "yes" if r["provisional"] else ""}
            for r in ratings],
           ["rank_ub", "entry", "rating", "95% CI", "matches", "W-T-L", "provisional"])
    if apart["share"] is not None:
        echo(f"separability: {apart['separated']:,} of {plural(apart['pairs'], 'pair')} apart ({apart['share']:.2f}): "
             "95% intervals that do not overlap")
    if side:
        echo(f"Pro advantage {side['pro_advantage']:+.0f} Elo (95% CI {side['ci_low']:+.0f} to "
             f"{side['ci_high']:+.0f})")
    from leaderboard.control import loose

    for name, fit in (control or {}).items():
        echo(f"{name} {fit['coef']:+.0f} Elo per unit of (pro - con)/(pro + con) (95% CI {fit['ci_low']:+.0f} "
             f"to {fit['ci_high']:+.0f})" + (": not estimated, its interval is too wide to mean anything"
                                              if loose(fit["ci_low"], fit["ci_high"]) else ""))
