"""Results rows, the input of every rating fit (docs/reference/formats.md, "results CSV"): a judge's from the
workspace, or a results CSV's, and the CSV's text."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from arena.app.commands.names import judge_or_first
from arena.analysis.tally import match_features, results_rows
from arena.base.errors import UserError, check_size
from arena.base.limits import MAX_DATA_FILE_BYTES
from arena.workspace.folder import Workspace

if TYPE_CHECKING:  # for annotations alone
    import pandas as pd


def results_frame(ws: Workspace, judge: str | None = None, *, features: bool = True) -> pd.DataFrame:
    """One judge's results rows, every dimension, as the results CSV's columns (default: the first judge); with
    features, each side's style counts over the match's speeches too (words_a, words_b, ...), which reads every
    speech."""
    import pandas as pd
    from leaderboard.results import COLUMNS, COUNTS, with_counts

    judge = judge_or_first(ws, judge)
    rows = results_rows(ws.store, judge, ws.config.judge(judge).runs)
    if not features:
        return pd.DataFrame(rows, columns=[c for c in COLUMNS if c not in COUNTS])
    return pd.DataFrame(with_counts(rows, match_features(ws.store)), columns=list(COLUMNS))


def results_csv(frame: pd.DataFrame) -> str:
    """Results rows (results_frame, read_results) as the results CSV's text (docs/reference/formats.md)."""
    from leaderboard.results import csv_text

    return csv_text(frame)


def read_results(path: Path) -> pd.DataFrame:
    """The validated rows of a results CSV; a file that breaks the schema is the user's mistake."""
    from leaderboard.results import ResultsError
    from leaderboard.results import read_results as read

    check_size(Path(path), "results CSV file", MAX_DATA_FILE_BYTES)
    try:
        return read(path)
    except ResultsError as exc:
        raise UserError(str(exc)) from None
