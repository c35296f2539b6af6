"""`arena rate` and `arena rate --history`: weighted Bradley–Terry ratings (leaderboard) from a judge's verdicts or
a results CSV, and how they moved as the matches came in."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Collection, Hashable, Sequence, TypedDict, Unpack

from arena.app.commands.names import judge_or_first
from arena.app.commands.results import read_results, results_frame
from arena.app.shapes.figures import RatingRow, Ratings, RatingsFit, RatingsMeta, Snapshot
from arena.base.errors import UserError, plural
from arena.workspace.config import RatingSettings
from arena.workspace.folder import Workspace

if TYPE_CHECKING:  # for annotations alone
    import pandas as pd

    from leaderboard.tables import Fit, FitMeta, Rating


class FitOptions(TypedDict, total=False):
    """How rate_frame fits, as `arena rate` passes it on: --by, --ci, --bootstrap, --seed, --weighting, --anchor."""

    by: str | None
    ci: str
    bootstrap: int
    seed: int
    weighting: str
    anchor: tuple[str, float] | None


class RateOptions(FitOptions, total=False):
    """Everything `arena rate` passes to rate, rate_results and their histories: --side and --control too (None:
    the workspace's setting)."""

    side: str | None
    control: Sequence[str] | None


class FrameOptions(FitOptions, total=False):
    """rate_frame's keywords but the source, which history_frame passes on to each snapshot's fit."""

    side: str
    control: Sequence[str]
    simulated: Collection[str] | None


def rate(ws: Workspace, *, judge: str | None = None, side: str | None = None,
         control: Sequence[str] | None = None, **options: Unpack[FitOptions]) -> Ratings:
    """Ratings from one judge's verdicts (default: the first configured judge); side, control and options as
    rate_frame (default side and control: the workspace's, rating_side and rating_control). Each row's
    `simulated` says whether any of that entry's own speeches or searches came from the simulator
    (Store.simulated_entries)."""
    judge = judge_or_first(ws, judge)
    control = rating_control(ws, control)
    result = rate_frame(results_frame(ws, judge, features=bool(control)), f"the verdicts of judge {judge!r}",
                        side=rating_side(ws, side), control=control, simulated=ws.store.simulated_entries(),
                        **options)
    result["meta"]["judge"] = judge
    result["meta"]["simulated"] = ws.store.judge_simulated(judge)
    return result


def rating_side(ws: Workspace | None, side: str | None) -> str:
    """How ratings treat the side: `side` when given, else the workspace's [rating] side (with no workspace,
    as for a results file, that setting's default)."""
    return side or (ws.config.rating if ws else RatingSettings()).side


def rating_control(ws: Workspace | None, control: Sequence[str] | None) -> tuple[str, ...]:
    """The style features ratings control for: `control` when given (empty: none), else the workspace's [rating]
    control (with no workspace, as for a results file, none)."""
    return tuple(control) if control is not None else (ws.config.rating.control if ws else ())


def rate_results(path: Path, *, side: str | None = None, control: Sequence[str] | None = None,
                 **options: Unpack[FitOptions]) -> Ratings:
    """Ratings from a results CSV, with no workspace; side and options as rate_frame (default side: fit)."""
    result = rate_frame(read_results(path), str(path), side=rating_side(None, side),
                        control=rating_control(None, control), **options)
    result["meta"]["results"] = str(path)
    return result


def rate_frame(frame: pd.DataFrame, source: str, *, by: str | None = None, ci: str = "bootstrap",
               bootstrap: int = 1000, seed: int = 0, weighting: str = "paper", anchor: tuple[str, float] | None = None,
               side: str = "fit", control: Sequence[str] = (), simulated: Collection[str] | None = None) -> Ratings:
    """The main fit of results rows (see leaderboard.results.main_rows) and, with by, one fit per category
    or dimension, each with the same options (side: fit the Pro advantage or ignore it; control: the style
    features fitted with the ratings); source names the rows in messages. simulated: the entries whose rows say
    `"simulated": true` (default: those the rows' simulated column gives, leaderboard.results.simulated_entries)."""
    from leaderboard.ratings import rate as fit
    from leaderboard.results import FEATURE_COLUMNS, groups, main_rows, simulated_entries

    unknown = [name for name in control if name not in FEATURE_COLUMNS]
    if unknown:
        raise UserError(f"--control {unknown[0]}: not a feature (expected {', '.join(FEATURE_COLUMNS)})")
    missing = [c for name in control for c in FEATURE_COLUMNS[name] if c not in frame.columns]
    if missing:
        raise UserError(f"--control {','.join(control)}: {source} has no {', '.join(missing)} "
                        f"column{'s' * (len(missing) > 1)} (`arena rate --format csv` writes them)")

    main = main_rows(frame)
    if len(frame) and not len(main):
        found = ", ".join(sorted(frame["dimension"].unique()))
        raise UserError(f"{source}: no rows of dimension 'overall' to rate (dimensions found: {found})")
    if by is not None and by not in frame.columns:
        raise UserError(f"--by {by}: {source} has no {by} column")
    fakes = set(simulated_entries(frame) if simulated is None else simulated)

    def one(rows: pd.DataFrame, where: str) -> RatingsFit:
        if anchor is not None and not ((rows["entry_a"] == anchor[0]) | (rows["entry_b"] == anchor[0])).any():
            raise UserError(f"--anchor: entry {anchor[0]!r} has no matches {where}, so it cannot anchor that fit")
        return _with_forfeits(fit(rows, ci=ci, bootstrap=bootstrap, seed=seed, weighting=weighting, anchor=anchor,
                                  side=side, control=tuple(control)), rows, fakes)

    fitted = one(main, f"in {source}")
    split = None if by is None else {group: one(rows, f"of {by} {group!r} in {source}")
                                     for group, rows in groups(frame, by).items()}
    # Written in the documented order (docs/reference/json.md): ratings, separability, side, control, by, meta.
    ratings, apart, side_fit, meta = fitted["ratings"], fitted["separability"], fitted["side"], fitted["meta"]
    if "control" in fitted:
        control_fit = fitted["control"]
        if split is None:
            return {"ratings": ratings, "separability": apart, "side": side_fit, "control": control_fit, "meta": meta}
        return {"ratings": ratings, "separability": apart, "side": side_fit, "control": control_fit, "by": split,
                "meta": meta}
    if split is None:
        return {"ratings": ratings, "separability": apart, "side": side_fit, "meta": meta}
    return {"ratings": ratings, "separability": apart, "side": side_fit, "by": split, "meta": meta}


def _with_forfeits(fitted: Fit, rows: pd.DataFrame, simulated: Collection[str]) -> RatingsFit:
    """The fit with each entry's forfeits beside its matches (rows whose forfeit column names its side), and
    whether it is simulated (in simulated) last."""
    forfeited: dict[Hashable, int] = {}
    if "forfeit" in rows.columns:
        for side, entry in (("pro", "entry_a"), ("con", "entry_b")):
            for name, count in rows.loc[rows["forfeit"] == side, entry].value_counts().items():
                forfeited[name] = forfeited.get(name, 0) + int(count)
    rated = [_rated(row, forfeited.get(row["entry"], 0), row["entry"] in simulated) for row in fitted["ratings"]]
    meta = _meta(fitted["meta"])
    if "control" in fitted:  # in the fit's order, meta last
        return {"ratings": rated, "separability": fitted["separability"], "side": fitted["side"],
                "control": fitted["control"], "meta": meta}
    return {"ratings": rated, "separability": fitted["separability"], "side": fitted["side"], "meta": meta}


def _meta(fit: FitMeta) -> RatingsMeta:
    """The fit's meta, which rate and rate_results go on to name the judge or the results file in."""
    if "control" in fit:
        return {"matches": fit["matches"], "ci": fit["ci"], "bootstrap": fit["bootstrap"], "weighting": fit["weighting"],
                "seed": fit["seed"], "side": fit["side"], "control": fit["control"], "prior": fit["prior"]}
    return {"matches": fit["matches"], "ci": fit["ci"], "bootstrap": fit["bootstrap"], "weighting": fit["weighting"],
            "seed": fit["seed"], "side": fit["side"], "prior": fit["prior"]}


def _rated(row: Rating, forfeits: int, simulated: bool) -> RatingRow:
    """An entry's rating with its forfeits beside its matches and whether it is simulated last, where
    docs/reference/json.md shows them."""
    return {"entry": row["entry"], "rating": row["rating"], "ci_low": row["ci_low"], "ci_high": row["ci_high"],
            "matches": row["matches"], "forfeits": forfeits, "wins": row["wins"], "ties": row["ties"],
            "losses": row["losses"], "rank_ub": row["rank_ub"], "provisional": row["provisional"],
            "simulated": simulated}


def rate_history(ws: Workspace, *, judge: str | None = None, every: int | None = None, side: str | None = None,
                 control: Sequence[str] | None = None, **options: Unpack[FitOptions]) -> list[Snapshot]:
    """`arena rate --history`: ratings from one judge's verdicts (default: the first configured judge) after every
    `every` rated matches in the order they finished (history_frame); options as rate_frame, but for by."""
    from leaderboard.history import in_order

    judge = judge_or_first(ws, judge)
    control = rating_control(ws, control)
    snapshots = history_frame(in_order(results_frame(ws, judge, features=bool(control)), ws.store.finish_order()),
                              f"the verdicts of judge {judge!r}", every=every, side=rating_side(ws, side),
                              control=control, simulated=ws.store.simulated_entries(), **options)
    simulated = ws.store.judge_simulated(judge)
    for snapshot in snapshots:
        snapshot["meta"] |= {"judge": judge, "simulated": simulated}
    return snapshots


def history_results(path: Path, *, every: int | None = None, side: str | None = None,
                    control: Sequence[str] | None = None, **options: Unpack[FitOptions]) -> list[Snapshot]:
    """`arena rate --results FILE --history`: the history of a results CSV, its matches in the file's row order."""
    snapshots = history_frame(read_results(path), str(path), every=every, side=rating_side(None, side),
                              control=rating_control(None, control), **options)
    for snapshot in snapshots:
        snapshot["meta"]["results"] = str(path)
    return snapshots


def history_frame(frame: pd.DataFrame, source: str, *, every: int | None = None,
                  **options: Unpack[FrameOptions]) -> list[Snapshot]:
    """Snapshots {matches: k, last_match, ratings, meta}: rate_frame of the rows of the first k matches of frame
    (in its order), for k = every, 2·every, ... and all of them (leaderboard.history; default every: at most
    25 snapshots)."""
    from leaderboard.history import prefixes

    if every is not None and every < 1:
        raise UserError(f"--every {every}: expected a positive number of matches between snapshots")
    if options.get("by") is not None:
        raise UserError("--by splits one fit into groups; --history follows the main fit only, so leave --by out")
    return [_snapshot(matches, last, rate_frame(rows, f"the first {plural(matches, 'match')} of {source}", **options))
            for matches, last, rows in prefixes(frame, every=every)]


def _snapshot(matches: int, last_match: str, fitted: Ratings) -> Snapshot:
    """A fit of the first `matches` matches as a snapshot: how many and the last of them first, then the fit."""
    ratings, apart, side_fit, meta = fitted["ratings"], fitted["separability"], fitted["side"], fitted["meta"]
    if "control" in fitted:
        return {"matches": matches, "last_match": last_match, "ratings": ratings, "separability": apart,
                "side": side_fit, "control": fitted["control"], "meta": meta}
    return {"matches": matches, "last_match": last_match, "ratings": ratings, "separability": apart, "side": side_fit,
            "meta": meta}
