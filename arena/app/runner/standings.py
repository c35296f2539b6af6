"""Where entries stand now, for the draws that pair on standings (swiss, active, onboard)."""
from __future__ import annotations

from arena.domain import scheduler
from arena.domain.records import Outcome, Side, points
from arena.analysis.stats import match_outcome
from arena.analysis.tally import results_rows
from arena.workspace.folder import Workspace

BOOTSTRAP = 200  # interval widths good enough to steer a draw, at a fifth of `arena rate`'s cost
# arena.analysis.stats.match_outcome's words as the scoring rule takes them (it returns them as plain str)
OUTCOMES: dict[str, Outcome] = {"pro": "pro", "con": "con", "tie": "tie"}


def current_standings(ws: Workspace, judge: str | None, entries: list[str],
                      seed: int) -> tuple[dict[str, scheduler.Standing], list[str]]:
    """Each entry's rating, its spread and its points (wins + half ties) from the judge's results (None: no judge
    configured); flags for entries that have none, who stand at the mean rating with the prior's spread."""
    import pandas as pd
    from leaderboard.ratings import rate

    if judge is None:
        return {}, ["no judge configured, so no results: every entry stands at rating 1000 with 0 points"]
    rows = [r for r in results_rows(ws.store, judge, ws.config.judge(judge).runs)
            if r["dimension"] == "overall"]
    if not rows:
        return {}, [f"no results from judge {judge!r} yet: every entry stands at rating 1000 with 0 points"]
    earned: dict[str, float] = {}
    for r in rows:
        outcome = OUTCOMES[match_outcome(r["score_a"], r["score_b"])]
        sides: tuple[tuple[str, Side], ...] = ((r["entry_a"], "pro"), (r["entry_b"], "con"))
        for name, side in sides:
            earned[name] = earned.get(name, 0.0) + points(outcome, side)
    board = rate(pd.DataFrame(rows), bootstrap=BOOTSTRAP, seed=seed, side=ws.config.rating.side)
    standings = {r["entry"]: scheduler.Standing(rating=r["rating"], sd=(r["ci_high"] - r["ci_low"]) / (2 * 1.96),
                                                points=earned[r["entry"]], rated=True) for r in board["ratings"]}
    unrated = [e for e in entries if e not in standings]
    flags = [f"no results from judge {judge!r} yet for {', '.join(unrated)}: rating 1000 assumed, with the "
             "spread of an unrated entry"] if unrated else []
    return standings, flags
