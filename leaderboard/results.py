"""Results rows, the input of every rating fit: the results CSV read strictly, and the rows each fit uses.

The CSV (docs/reference/formats.md) has a header line and one row per match and dimension:
match_id,entry_a,entry_b,score_a,score_b[,category][,dimension][,forfeit][,simulated], then optionally the style
features' pairs words_a,words_b, citations_a,citations_b, markdown_a,markdown_b (each side's count over the
match's speeches: whole numbers from 0 to MAX_COUNT; FEATURE_COLUMNS); other columns are ignored. forfeit, when
present, is "pro" or "con" on a match that side forfeited (its scores R–0 for the other side), else empty. simulated, when present, is "true" on a match anything of which came from the offline
simulator (a speech, a search, a verdict), "false" or empty otherwise (any case); it is read as a bool.
Scores are judge points out of R runs (or shares, R = 1). A header with no rows is valid and
rates nothing; a file without even a header is an error. Blank lines are skipped. Names are text as
written ("007" and "7" are two entries).

A file with no quote, carriage return or NUL is read by pyarrow's CSV reader, any other (or one that
reader would read differently) by pandas', which names the problems; the rows are the same either way.
"""

from __future__ import annotations

import io
import re
import warnings
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

REQUIRED = ("match_id", "entry_a", "entry_b", "score_a", "score_b")
# The style features a controlled fit can enter (leaderboard.control), and each one's columns: Pro's, Con's.
FEATURE_COLUMNS = {"length": ("words_a", "words_b"), "citations": ("citations_a", "citations_b"),
                   "markdown": ("markdown_a", "markdown_b")}
COUNTS = tuple(c for pair in FEATURE_COLUMNS.values() for c in pair)
COLUMNS = (*REQUIRED, "category", "dimension", "forfeit", "simulated", *COUNTS)
SCORES = ("score_a", "score_b")
NUMBERS = (*SCORES, *COUNTS)  # the columns read as numbers
OVERALL = "overall"
DIMENSIONS = ("argument", "source", "language")  # the default dimensions, listed first wherever dimensions are
HEADER = f"{','.join(REQUIRED)}[,category][,dimension][,forfeit][,simulated][,words_a,words_b,...]"
FORFEITS = ("", "pro", "con")  # the values of the forfeit column: none, or the side that forfeited
FLAGS = ("", "true", "false")  # the values of the simulated column, in any case ("" is false)
# The most a feature count may be: one side's words (or characters, citations, markdown marks) over a match's
# speeches. A long format's side speaks some 10,000 words; far past any real match, and small enough that the
# controlled fit's sums of counts stay exact in doubles (1e308 words made them inf, and the fit NaN).
MAX_COUNT = 1_000_000
def with_counts(rows: Iterable[Mapping[str, object]],
                counts: Mapping[str, Mapping[str, Mapping[str, int]]]) -> list[dict[str, object]]:
    """Results rows with each side's style counts beside them (words_a, words_b, ...: FEATURE_COLUMNS), from counts:
    match id → side → feature → count; 0 for a match it does not hold (one without speeches)."""
    nothing = {side: dict.fromkeys(FEATURE_COLUMNS, 0) for side in ("pro", "con")}
    out = []
    for row in rows:
        totals = counts.get(str(row["match_id"]), nothing)
        out.append({**row, **{column: totals[side][name] for name, pair in FEATURE_COLUMNS.items()
                              for column, side in zip(pair, ("pro", "con"))}})
    return out


# A rule rows can break: (the rows that break it, problem(i) describing row i).
_RowCheck = tuple[np.ndarray, Callable[..., str]]

# Names are read as categoricals so that the per-row checks compare integer codes and the
# text work (stripping, searching) runs once per distinct value, not once per row.
_TEXT_DTYPES = {"match_id": object, "entry_a": "category", "entry_b": "category", "category": "category",
                "dimension": "category", "forfeit": "category", "simulated": "category"}
# Totals are compared after rounding, so that shares like 1/3 + 2/3 count as the same total 1.
_TOTAL_DECIMALS = 9
# Bytes on which pyarrow's CSV reader and pandas' could read a file differently: quotes, line ends other than
# "\n", NUL. A file with none of them is read by pyarrow's (_arrow_rows).
_UNUSUAL_BYTES = (b'"', b"\r", b"\x00")


class ResultsError(ValueError):
    """A results file that breaks the schema; the message names the file, the line and the problem."""


def read_results(path: str | Path) -> pd.DataFrame:
    """The validated rows of a results CSV: its schema columns in order, scores float, names text."""
    path = Path(path)
    raw = _read_bytes(path)
    header = _csv(raw, path, nrows=0).columns
    missing = [c for c in REQUIRED if c not in header]
    if missing:
        found = ", ".join(repr(c) for c in header)
        raise ResultsError(f"{path}:1: missing column{'s' * (len(missing) > 1)} {', '.join(missing)} "
                           f"(the header has {found}; expected {HEADER})")
    for pair in FEATURE_COLUMNS.values():
        if (pair[0] in header) != (pair[1] in header):
            have, lack = pair if pair[0] in header else pair[::-1]
            raise ResultsError(f"{path}:1: column {have} without {lack}: a feature's counts come in pairs, Pro's "
                               f"and Con's")
    present = [c for c in COLUMNS if c in header]
    frame, text_checks = _read_rows(raw, path, list(header), present)
    _raise_first_problem(path, frame, text_checks + _row_checks(frame))
    frame = frame.reset_index(drop=True)
    for column in present:
        if column not in NUMBERS:
            frame[column] = _text(frame[column])
    if "simulated" in frame.columns:
        frame["simulated"] = frame["simulated"].str.lower() == "true"
    return frame


def simulated_entries(frame: pd.DataFrame) -> set[str]:
    """The entries of the rows' simulated matches (none without a simulated column): what a results CSV, which
    records simulation per match, can tell of entries. A workspace knows each entry's own side
    (arena.store.Store.simulated_entries)."""
    if "simulated" not in frame.columns or not len(frame):
        return set()
    flagged = frame[frame["simulated"].astype(bool)]
    return {str(name) for column in ("entry_a", "entry_b") for name in flagged[column]}


def csv_text(frame: pd.DataFrame) -> str:
    """A frame of results rows as the results CSV: its columns in order, simulated written true or false, the
    feature counts as whole numbers."""
    counts = [c for c in COUNTS if c in frame.columns]
    if counts:
        frame = frame.assign(**{c: frame[c].astype("int64") for c in counts})
    if "simulated" in frame.columns:
        frame = frame.assign(simulated=frame["simulated"].map(lambda v: "true" if v is True or v == 1 else "false"))
    return frame.to_csv(index=False, lineterminator="\n")


def main_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows of the main fit: those of dimension "overall" when there is a dimension column, else all."""
    if "dimension" not in frame.columns:
        return frame
    return frame[frame["dimension"] == OVERALL]


def groups(frame: pd.DataFrame, by: str) -> dict[str, pd.DataFrame]:
    """Rows per category (of the main rows) in name order, or per dimension other than "overall" in
    dimension_order."""
    rows = main_rows(frame) if by == "category" else frame[frame[by] != OVERALL]
    parts = {str(name): group for name, group in rows.groupby(by, sort=True)}
    return {name: parts[name] for name in dimension_order(parts)} if by == "dimension" else parts


def dimension_order(names: Iterable[str]) -> list[str]:
    """Dimension names in listing order: the default three in their order, then any others by name."""
    found = set(names)
    return [d for d in DIMENSIONS if d in found] + sorted(found - set(DIMENSIONS))


def _read_bytes(path: Path) -> bytes:
    """The file's bytes, or ResultsError saying why it cannot be read."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise ResultsError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise ResultsError(f"{path}: is a folder, not a results CSV file") from None
    except OSError as exc:
        raise ResultsError(f"{path}: cannot be read: {exc.strerror}") from None


def _csv(raw: bytes, path: Path, **options: Any) -> pd.DataFrame:
    """pandas.read_csv of the bytes, with its parse errors turned into ResultsError naming the line."""
    try:
        with warnings.catch_warnings():
            # pandas only warns when the first data row has more fields than the header.
            warnings.simplefilter("error", pd.errors.ParserWarning)
            # Blank lines are kept as rows (dropped later) so that row i is line i + 2; "NA" or
            # "null" are names, not missing values; index_col=False so that no column becomes the index.
            frame: pd.DataFrame = pd.read_csv(io.BytesIO(raw), encoding="utf-8-sig", keep_default_na=False,
                                              skip_blank_lines=False, index_col=False, **options)
            return frame
    except pd.errors.ParserWarning:
        raise ResultsError(f"{path}:2: more fields than the header has") from None
    except pd.errors.EmptyDataError:
        raise ResultsError(f"{path}:1: the file is empty; expected the header line {HEADER}") from None
    except pd.errors.ParserError as exc:
        shape = re.search(r"Expected (\d+) fields in line (\d+), saw (\d+)", str(exc))
        if shape:
            expected, line, saw = shape.groups()
            raise ResultsError(f"{path}:{line}: {saw} fields, but the header has {expected}") from None
        raise ResultsError(f"{path}: not a readable CSV file ({exc})") from None
    except UnicodeDecodeError:
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = raw.count(b"\n", 0, exc.start) + 1
            raise ResultsError(f"{path}:{line}: not UTF-8 text") from None
        raise


def _read_rows(raw: bytes, path: Path, header: list[str], present: list[str]) -> tuple[pd.DataFrame, list[_RowCheck]]:
    """The schema columns of the data rows (blank lines dropped, index = row number), and checks that
    need the file's text."""
    fast = _arrow_rows(raw, header, present)
    if fast is not None:
        return fast, []
    # Every column is read (usecols would hide rows with too many fields); other columns stay text.
    dtypes = {c: _TEXT_DTYPES.get(c, object) for c in header}
    try:
        numbers: dict[str, type] = dict.fromkeys([c for c in NUMBERS if c in header], float)
        frame, scores_as_text = _csv(raw, path, dtype={**dtypes, **numbers}), False
    except ResultsError:
        raise
    except ValueError:
        # Some number is not one, or a line is blank: read the numbers as text to see which.
        numbers = dict.fromkeys([c for c in NUMBERS if c in header], object)
        frame, scores_as_text = _csv(raw, path, dtype={**dtypes, **numbers}), True
    # pandas makes a category column whose values all look like numbers a column of numbers ("007" and "7" one
    # entry 7): such columns are read again as text.
    numeric = {c: object for c in present if isinstance(frame[c].dtype, pd.CategoricalDtype)
               and not pd.api.types.is_string_dtype(frame[c].cat.categories)}
    if numeric:
        scores = object if scores_as_text else float
        frame = _csv(raw, path, dtype={**dtypes, **numeric, **dict.fromkeys([c for c in NUMBERS if c in header],
                                                                               scores)})
    frame = frame[present]
    # Counted before blank lines are dropped: a field spanning lines makes more lines than rows.
    spans_lines = len(frame) + 1 != _line_count(raw)
    checks: list[_RowCheck] = []
    if scores_as_text:
        frame = frame[~np.logical_and.reduce([_rows_where(_coded(frame[c]), lambda v: v == "") for c in present])]
        frame, checks = _parse_scores(frame)
    if spans_lines:
        checks.append(_line_break_check(frame))
    return frame, checks


def _arrow_rows(raw: bytes, header: list[str], present: list[str]) -> pd.DataFrame | None:
    """The frame _read_rows reads, by pyarrow's CSV reader (several times faster than pandas', and on every
    core), or None for a file it might read differently: one with _UNUSUAL_BYTES, not UTF-8, a header pandas
    would rename (a repeated or empty name), a row of another width (a blank line, too), a score pandas'
    reader takes for no number, or no rows. pandas' reader then reads it and names its problems."""
    if any(byte in raw for byte in _UNUSUAL_BYTES) or not (raw.isascii() or _is_utf8(raw)):
        return None
    import pyarrow as pa  # pandas imports it anyway; lazily all the same, for this reader only
    import pyarrow.compute as pc
    from pyarrow import csv

    try:
        # Every column as text (no type guessing), blank lines kept as rows of another width: an error.
        table = csv.read_csv(pa.py_buffer(raw), parse_options=csv.ParseOptions(ignore_empty_lines=False),
                             convert_options=csv.ConvertOptions(column_types=dict.fromkeys(header, pa.string()),
                                                                check_utf8=False))
    except pa.ArrowInvalid:
        return None
    if table.column_names != list(header) or not len(table):
        return None
    columns = {}
    for name in present:
        if name == "match_id":  # mostly distinct: left to the checks to code, as pandas' column is
            columns[name] = table.column(name).to_pandas()
            continue
        coded = pc.dictionary_encode(table.column(name).combine_chunks())
        codes, values = coded.indices.to_numpy(), pd.Index(coded.dictionary.to_pandas())
        if name in NUMBERS:
            numbers = _numbers(values)
            if numbers is None:
                return None
            columns[name] = numbers[codes]
        else:
            columns[name] = pd.Categorical.from_codes(codes, values)
    return pd.DataFrame(columns)


def _is_utf8(raw: bytes) -> bool:
    """Whether the bytes are UTF-8 text by Python's codec, the one pandas' reader decodes with."""
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _numbers(texts: pd.Index) -> np.ndarray | None:
    """Distinct score texts as pandas' reader reads them into a float column (so a file reads the same by
    either reader), or None if one is empty or no number to it."""
    if (texts == "").any():
        return None
    try:
        numbers = pd.read_csv(io.BytesIO("\n".join(texts).encode()), header=None, dtype=float,
                              keep_default_na=False, skip_blank_lines=False).iloc[:, 0].to_numpy()
    except ValueError:
        return None
    return numbers if len(numbers) == len(texts) else None


def _parse_scores(frame: pd.DataFrame) -> tuple[pd.DataFrame, list[_RowCheck]]:
    """The frame with its text numbers as numbers (NaN where not one), and checks of those rows."""
    checks: list[_RowCheck] = []
    numbers = {}
    for column in [c for c in NUMBERS if c in frame.columns]:
        text = frame[column]
        numbers[column] = pd.to_numeric(text, errors="coerce").astype(float)
        missing = (text == "").to_numpy()
        checks.append((missing, lambda i, column=column: f"{column} is missing"))
        checks.append((np.isnan(numbers[column].to_numpy()) & ~missing,
                       lambda i, column=column, text=text: f"{column} {text.iloc[i]!r} is not a number"))
    return frame.assign(**numbers), checks


def _line_count(raw: bytes) -> int:
    """Lines in the file, counting a last line without a newline."""
    return raw.count(b"\n") + (not raw.endswith(b"\n"))


def _line_break_check(frame: pd.DataFrame) -> _RowCheck:
    """Rows with a line break inside a quoted field."""
    rows = np.logical_or.reduce([_rows_where(_coded(frame[c]), lambda v: v.str.contains(r"[\r\n]"))
                                 for c in frame.columns if c not in NUMBERS])
    return rows, lambda i: "a field holds a line break (names, ids, categories and dimensions are one line)"


def _text(column: pd.Series) -> pd.Series:
    """column.astype(str); a categorical one by indexing its categories, many times faster than converting
    every row."""
    if not isinstance(column.dtype, pd.CategoricalDtype) or (column.cat.codes < 0).any():
        return column.astype(str)
    return pd.Series(column.cat.categories.astype(str).take(column.cat.codes.to_numpy()), index=column.index,
                     name=column.name)


def _coded(column: pd.Series) -> tuple[np.ndarray, pd.Index]:
    """Integer codes of a text column and its distinct values, so text work runs once per value."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        return column.cat.codes.to_numpy(), column.cat.categories
    return pd.factorize(column)


def _rows_where(coded: tuple[np.ndarray, pd.Index], test: Callable[[pd.Index], ArrayLike]) -> np.ndarray:
    """Rows whose value passes test, a vectorised predicate on the distinct values."""
    codes, values = coded
    rows: np.ndarray = np.asarray(test(values), dtype=bool)[codes]
    return rows


def _row_checks(frame: pd.DataFrame) -> list[_RowCheck]:
    """(rows, problem) for every rule a row can break, problem(i) describing row i."""
    a, b = frame["score_a"].to_numpy(), frame["score_b"].to_numpy()
    total = a + b
    checks: list[_RowCheck] = []
    for column, score in (("score_a", a), ("score_b", b)):
        checks.append((np.isinf(score), lambda i, column=column: f"{column} is not a finite number"))
        checks.append((score < 0, lambda i, column=column, score=score: f"{column} {score[i]:g} is negative"))
    checks.append((total == 0, lambda i: "score_a + score_b = 0, so the match awards nothing to rate"))
    valid = np.isfinite(total) & (a >= 0) & (b >= 0) & (total > 0)
    if valid.any():
        main = (frame["dimension"] == OVERALL).to_numpy() if "dimension" in frame.columns else np.ones(len(frame), bool)
        checks.append(_scale_check(a, b, total, valid, main))
    for column in [c for c in COUNTS if c in frame.columns]:
        count = frame[column].to_numpy()
        not_count = ~np.isfinite(count) | (count < 0) | (count != np.floor(count))
        checks.append((not_count, lambda i, column=column, count=count: f"{column} {count[i]:g} is not a count (a "
                                                                        f"whole number, 0 or more)"))
        checks.append((~not_count & (count > MAX_COUNT),
                       lambda i, column=column, count=count: f"{column} {count[i]:.15g} is above {MAX_COUNT:,}, the "
                                                             f"most a side's count over a match may be"))
    coded = {c: _coded(frame[c]) for c in frame.columns if c not in NUMBERS}
    # Names count as empty when blank too; ids are only checked for "", as stripping every
    # distinct id of a large file would cost more than all the other checks together.
    checks.append((_rows_where(coded["match_id"], lambda v: v == ""), lambda i: "match_id is empty"))
    for column in [c for c in coded if c not in ("match_id", "forfeit", "simulated")]:
        checks.append((_rows_where(coded[column], lambda v: v.str.strip() == ""),
                       lambda i, column=column: f"{column} is empty"))
    if "forfeit" in coded:
        checks.append((_rows_where(coded["forfeit"], lambda v: ~v.isin(FORFEITS)),
                       lambda i: f"forfeit {frame['forfeit'].iloc[i]!r} is not pro, con or empty"))
    if "simulated" in coded:
        checks.append((_rows_where(coded["simulated"], lambda v: ~v.str.lower().isin(FLAGS)),
                       lambda i: f"simulated {frame['simulated'].iloc[i]!r} is not true, false or empty"))
    names = coded["entry_a"][1].union(coded["entry_b"][1])
    entry_a = names.get_indexer(coded["entry_a"][1])[coded["entry_a"][0]]
    entry_b = names.get_indexer(coded["entry_b"][1])[coded["entry_b"][0]]
    checks.append((entry_a == entry_b,
                   lambda i: f"entry {names[entry_a[i]]!r} plays itself (entry_a and entry_b must differ)"))
    checks.append(_repeat_check(frame, coded))
    return checks


def _scale_check(a: NDArray[np.float64], b: NDArray[np.float64], total: NDArray[np.float64], valid: NDArray[np.bool_],
                 main: NDArray[np.bool_]) -> _RowCheck:
    """Rows whose score or total is above R, the most common total of the main rows (the overall rows, when
    there are any; else every row), the largest if tied.

    A total below R is allowed (a failed judge run awards nothing; a dimension only some of a judge's
    people decided), a total above it is not: no score out of R runs, or share, can exceed the scale
    the rest of the file is on. The overall rows set R because every run decides the overall winner,
    while a dimension may be left undecided, so in a file of many such rows their total would pass for R.
    """
    where = "the overall rows" if (valid & main).any() and not main.all() else "the file"
    basis = valid & main if (valid & main).any() else valid
    totals = pd.Series(np.round(total[basis], _TOTAL_DECIMALS)).value_counts()
    scale = float(totals.index[totals.to_numpy() == totals.max()].max())
    over = np.round(total, _TOTAL_DECIMALS) > scale

    def problem(i: int) -> str:
        why = f"above R = {scale:g}, the most common score_a + score_b in {where}"
        for column, score in (("score_a", a), ("score_b", b)):
            if score[i] > scale:
                return f"{column} {score[i]:g} is {why}"
        return f"score_a + score_b = {total[i]:g} is {why}"

    return valid & over, problem


def _repeat_check(frame: pd.DataFrame, coded: dict[str, tuple[np.ndarray, pd.Index]]) -> _RowCheck:
    """Rows repeating an earlier row's match_id (within its dimension, when there is a dimension column)."""
    key = coded["match_id"][0].astype(np.int64)
    if "dimension" in coded:
        codes, values = coded["dimension"]
        key = key * len(values) + codes
    repeated = pd.Series(key).duplicated().to_numpy()

    def problem(i: int) -> str:
        first = frame.index[np.flatnonzero(key == key[i])[0]] + 2
        within = f" with dimension {frame['dimension'].iloc[i]!r}" if "dimension" in coded else ""
        return f"match_id {frame['match_id'].iloc[i]!r}{within} repeats line {first}"

    return repeated, problem


def _raise_first_problem(path: Path, frame: pd.DataFrame, checks: list[_RowCheck]) -> None:
    """Raise ResultsError for the first row breaking any check, naming its line (row i is line i + 2)."""
    first = min(((int(np.argmax(rows)), k) for k, (rows, _) in enumerate(checks) if rows.any()), default=None)
    if first is not None:
        row, k = first
        raise ResultsError(f"{path}:{frame.index[row] + 2}: {checks[k][1](row)}")
