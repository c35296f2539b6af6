"""`arena rate`: results CSVs rated without a workspace, strict CSV validation, --by, --weighting, --anchor,
--format csv export and its round trip."""
from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from arena.app import commands as app
from arena.app.runner import runs
from arena.app.commands import open_workspace
from leaderboard import bt, elo, results
from leaderboard.results import ResultsError, read_results
from tests.support.helpers import PEOPLE, assert_user_error, entry, invoke, judge, new_workspace, snapshot

HEADER = "match_id,entry_a,entry_b,score_a,score_b,category,dimension\n"
GOOD = HEADER + "m1,a,b,3,0,fact,overall\nm2,b,c,2,1,value,overall\n"

# A small tournament: one overall row per match, argument rows for some, two categories,
# lopsided scores (3-0) next to close ones (2-1), and every entry beating and losing to someone.
SMALL = HEADER + "".join(f"m{k},{a},{b},{sa},{3 - sa},{cat},{dim}\n" for k, (a, b, sa, cat, dim) in enumerate([
    ("a", "b", 3, "fact", "overall"), ("b", "c", 2, "value", "overall"), ("c", "a", 1, "fact", "overall"),
    ("b", "a", 1, "value", "overall"), ("c", "b", 2, "fact", "overall"), ("a", "c", 1, "value", "overall"),
    ("a", "d", 3, "fact", "overall"), ("d", "b", 1, "value", "overall"), ("c", "d", 0, "fact", "overall"),
    ("d", "a", 2, "value", "overall"), ("b", "d", 3, "fact", "overall"), ("d", "c", 2, "value", "overall"),
])) + "".join(f"m{k},{a},{b},{sa},{3 - sa},fact,argument\n" for k, (a, b, sa) in enumerate([
    ("a", "b", 2), ("b", "c", 1), ("c", "a", 2), ("b", "a", 2), ("c", "b", 1), ("a", "c", 3)]))


def separability_of(rows: list[dict]) -> dict:
    """The separability of rating rows, counted pair by pair: the pairs whose intervals do not overlap."""
    pairs = [(r, s) for k, r in enumerate(rows) for s in rows[k + 1:]]
    separated = sum(r["ci_low"] > s["ci_high"] or s["ci_low"] > r["ci_high"] for r, s in pairs)
    return {"pairs": len(pairs), "separated": separated, "share": separated / len(pairs) if pairs else None}


def rate_json(*args) -> dict:
    result = invoke("rate", "--format", "json", *args)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


@pytest.fixture
def here(tmp_path, monkeypatch) -> Path:
    """An empty current folder that is not a workspace."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


def write(folder: Path, text: str | bytes, name: str = "results.csv") -> Path:
    path = folder / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    return path


# --- validation: exit 2, the file, the line and the problem; nothing written ----------------------

BAD_FILES = [
    pytest.param("match_id,entry_a,score_a\nm1,a,1\n", 1, "missing columns entry_b, score_b", id="missing-columns"),
    pytest.param("", 1, "empty", id="empty-file"),
    pytest.param(GOOD + "m3,a,c,x,1,fact,overall\n", 4, "score_a 'x' is not a number", id="non-numeric"),
    pytest.param(GOOD + "m3,a,c,1,,fact,overall\n", 4, "score_b is missing", id="missing-score"),
    pytest.param(GOOD + "m3,a,c,inf,1,fact,overall\n", 4, "score_a is not a finite number", id="infinite"),
    pytest.param(GOOD + "m3,a,c,-1,2,fact,overall\n", 4, "score_a -1 is negative", id="negative"),
    pytest.param(GOOD + "m3,a,c,0,0,fact,overall\n", 4, "score_a + score_b = 0", id="zero-total"),
    pytest.param(GOOD + "m3,a,c,0,4,fact,overall\n", 4, "score_b 4 is above R = 3", id="score-above-scale"),
    pytest.param(GOOD + "m3,a,c,2,2,fact,overall\n", 4, "score_a + score_b = 4 is above R = 3",
                 id="total-above-scale"),
    pytest.param(GOOD + "m3,c,c,2,1,fact,overall\n", 4, "entry 'c' plays itself", id="self-play"),
    pytest.param(GOOD + "m1,a,b,2,1,fact,argument\nm1,a,b,3,0,fact,overall\n", 5,
                 "match_id 'm1' with dimension 'overall' repeats line 2", id="repeated-match"),
    pytest.param("match_id,entry_a,entry_b,score_a,score_b\nm1,a,b,1,0\nm1,b,a,1,0\n", 3,
                 "match_id 'm1' repeats line 2", id="repeated-match-no-dimension"),
    pytest.param(GOOD + ",a,c,2,1,fact,overall\n", 4, "match_id is empty", id="empty-match-id"),
    pytest.param(GOOD + "m3,  ,c,2,1,fact,overall\n", 4, "entry_a is empty", id="blank-entry"),
    pytest.param(GOOD + "m3,a,,2,1,fact,overall\n", 4, "entry_b is empty", id="empty-entry"),
    pytest.param(GOOD + "m3,a,c,2,1,fact,\n", 4, "dimension is empty", id="empty-dimension"),
    pytest.param(GOOD + "m3,a,c,2,1,,overall\n", 4, "category is empty", id="empty-category"),
    pytest.param(GOOD + "m3,a,c,2,1,fact,overall,extra\n", 4, "8 fields, but the header has 7", id="extra-field"),
    pytest.param(HEADER + "m1,a,b,3,0,fact,overall,extra\n", 2, "more fields than the header", id="extra-field-first"),
    pytest.param(GOOD + 'm3,"a\nz",c,2,1,fact,overall\n', 4, "line break", id="line-break-in-name"),
    pytest.param(GOOD.encode() + "m3,caf\xe9,c,2,1,fact,overall\n".encode("latin-1"), 4, "not UTF-8",
                 id="not-utf8"),
    # Blank lines are skipped, yet lines are still counted as they are in the file.
    pytest.param(HEADER + "\nm1,a,b,3,0,fact,overall\n\n\nm2,a,a,2,1,fact,overall\n", 6, "plays itself",
                 id="line-after-blank-lines"),
    # Of several problems, the first row's is reported.
    pytest.param(GOOD + "m3,a,c,2,1,fact,overall\nm4,a,c,2,1,fact,\nm3,b,b,x,1,fact,overall\n", 5,
                 "dimension is empty", id="first-problem-first"),
]


@pytest.mark.parametrize("text, line, problem", BAD_FILES)
def test_bad_results_file_exits_2_naming_file_line_and_problem(here, text, line, problem):
    path = write(here, text)
    before = snapshot(here)
    for fmt in ("table", "json", "csv"):
        result = invoke("rate", "--results", path, "--format", fmt, "-w", here / "no-workspace")
        assert_user_error(result, f"{path}:{line}: ", problem)
        assert result.output.count("\n") == 1  # the message, nothing before it
    assert snapshot(here) == before  # nothing written, no folder created


@pytest.mark.parametrize("text, line, problem", BAD_FILES)
def test_read_results_raises_results_error(tmp_path, text, line, problem):
    path = write(tmp_path, text)
    with pytest.raises(ResultsError) as raised:
        read_results(path)
    assert str(raised.value).startswith(f"{path}:{line}: ") and problem in str(raised.value)
    assert isinstance(raised.value, ValueError)  # leaderboard/ raises no arena errors


def test_bad_results_file_through_the_console_script_prints_no_traceback(here):
    path = write(here, GOOD + "m3,a,c,-1,2,fact,overall\n")
    arena = Path(sys.executable).with_name("arena")
    proc = subprocess.run([str(arena), "rate", "--results", str(path)], capture_output=True, text=True, check=False,
                          timeout=60)
    assert proc.returncode == 2
    assert proc.stdout == "" and "Traceback" not in proc.stderr
    assert f"{path}:4: score_a -1 is negative" in proc.stderr


@pytest.mark.parametrize("args, fragments", [
    pytest.param(("--results", "missing.csv"), ("missing.csv", "no such file"), id="no-such-file"),
    pytest.param(("--results", "."), ("is a folder",), id="folder"),
    pytest.param(("--results", "results.csv", "--judge", "j1"), ("--judge", "--results"), id="judge-with-results"),
    pytest.param(("--results", "results.csv", "--anchor", "a"), ("--anchor", "ENTRY=RATING"), id="anchor-no-equals"),
    pytest.param(("--results", "results.csv", "--anchor", "a=high"), ("--anchor", "ENTRY=RATING"), id="anchor-nan"),
    pytest.param(("--results", "results.csv", "--anchor", "=1200"), ("--anchor",), id="anchor-no-entry"),
    pytest.param(("--results", "results.csv", "--anchor", "zed=1200"), ("--anchor", "'zed'", "results.csv"),
                 id="anchor-unknown-entry"),
    pytest.param(("--results", "results.csv", "--by", "team"), ("--by",), id="by-unknown"),
    pytest.param(("--results", "results.csv", "--weighting", "elo"), ("--weighting",), id="weighting-unknown"),
    pytest.param(("--results", "results.csv", "--ci", "wald"), ("--ci",), id="ci-unknown"),
    pytest.param(("--results", "results.csv", "--side", "both"), ("--side", "'both'", "fit", "ignore"),
                 id="side-unknown"),
    pytest.param(("--results", "results.csv", "--format", "xml"), ("--format",), id="format-unknown"),
])
def test_bad_options_exit_2_naming_the_option(here, args, fragments):
    write(here, GOOD)
    before = snapshot(here)
    assert_user_error(invoke("rate", *args), *fragments)
    assert snapshot(here) == before


def test_by_a_column_the_file_lacks_exits_2(here):
    path = write(here, "match_id,entry_a,entry_b,score_a,score_b\nm1,a,b,1,0\n")
    assert_user_error(invoke("rate", "--results", path, "--by", "category"), "--by category", "no category column")


def test_dimension_column_without_overall_rows_exits_2(here):
    path = write(here, HEADER + "m1,a,b,3,0,fact,argument\n")
    assert_user_error(invoke("rate", "--results", path), str(path), "no rows of dimension 'overall'", "argument")


def test_anchor_entry_absent_from_a_group_exits_2(here):
    path = write(here, SMALL)
    result = invoke("rate", "--results", path, "--by", "dimension", "--anchor", "d=1200", "--bootstrap", "0")
    assert_user_error(result, "--anchor", "'d'", "dimension 'argument'")


# --- what a valid file may hold -------------------------------------------------------------------

def test_valid_variations_are_accepted(tmp_path):
    path = write(tmp_path, (
        "judge,match_id,entry_a,entry_b,score_a,score_b,dimension,category\n"  # any order, extra column
        "j,m1,NA,null,2,1,overall,fact\n"      # "NA" and "null" are names, not missing values
        "\n"                                   # blank lines are skipped
        "j,m1,NA,null,1.5,1.5,argument,fact\n"  # the same match once per dimension
        "j,m2,null,NA,1,0,overall,fact\n"      # a total below R (a failed run) is allowed
        "j,m3,NA,null,0.5,2.5,clarity,value\n"  # a custom dimension
    ))
    frame = read_results(path)
    assert list(frame.columns) == ["match_id", "entry_a", "entry_b", "score_a", "score_b", "category", "dimension"]
    assert frame["entry_a"].tolist() == ["NA", "NA", "null", "NA"]
    assert frame["score_a"].tolist() == [2.0, 1.5, 1.0, 0.5]
    assert frame["dimension"].tolist() == ["overall", "argument", "overall", "clarity"]


def test_shares_in_0_1_are_their_own_scale(tmp_path):
    path = write(tmp_path, "match_id,entry_a,entry_b,score_a,score_b\nm1,a,b,0.25,0.75\nm2,a,b,1,0\n"
                           "m3,b,a,0.3333333333333333,0.6666666666666667\n")
    assert len(read_results(path)) == 3
    with pytest.raises(ResultsError, match=r":5: score_a 1.5 is above R = 1"):
        read_results(write(tmp_path, path.read_text() + "m4,a,b,1.5,0\n"))


def test_the_overall_rows_set_r_when_dimensions_have_smaller_totals(tmp_path):
    """People may leave a dimension undecided: many argument rows out of 1 ballot do not make R = 1."""
    text = HEADER + "m1,a,b,3,0,fact,overall\nm2,b,a,2,1,fact,overall\n" + "".join(
        f"m{k},a,b,1,0,fact,argument\n" for k in (1, 2)) + "m3,a,b,1,0,fact,overall\nm3,a,b,0,1,fact,argument\n"
    assert len(read_results(write(tmp_path, text))) == 6
    with pytest.raises(ResultsError, match=r":8: score_a 4 is above R = 3, the most common score_a \+ score_b in "
                                           r"the overall rows"):
        read_results(write(tmp_path, text + "m4,a,b,4,0,fact,argument\n"))


def test_header_only_file_rates_nothing(here):
    path = write(here, HEADER)
    data = rate_json("--results", path, "--by", "category")
    assert data["ratings"] == [] and data["by"] == {} and data["meta"]["matches"] == 0
    assert data["separability"] == {"pairs": 0, "separated": 0, "share": None}
    table = invoke("rate", "--results", path)
    assert table.exit_code == 0 and "separability" not in table.output  # no pair of entries: no line


def test_a_million_rows_read_back_as_written(tmp_path):
    # The size the rating benchmark times (benchmarks/rating.py); here only what is read is checked.
    rng = np.random.default_rng(0)
    n = 1_000_000
    a = rng.integers(0, 50, n)
    b = (a + rng.integers(1, 50, n)) % 50
    points = rng.integers(0, 4, n)
    dims = ("overall", "argument", "source", "language")
    lines = [f"m{k // 4},e{x},e{y},{p},{3 - p},fact,{dims[k % 4]}"
             for k, (x, y, p) in enumerate(zip(a.tolist(), b.tolist(), points.tolist()))]
    frame = read_results(write(tmp_path, HEADER + "\n".join(lines) + "\n"))
    assert len(frame) == n
    assert frame["entry_a"].astype(str).tolist()[:1000] == [f"e{x}" for x in a[:1000]]
    np.testing.assert_array_equal(frame["score_a"].to_numpy(), points)
    assert frame["dimension"].astype(str).value_counts().to_dict() == dict.fromkeys(dims, n // 4)


# --- the two readers: pyarrow's for clean files, pandas' for the rest, the same rows either way -----

def read_by_pandas(path: Path, monkeypatch) -> pd.DataFrame:
    """read_results with pyarrow's reader turned away, so that pandas' reads every file."""
    with monkeypatch.context() as patched:
        patched.setattr(results, "_arrow_rows", lambda raw, header, present: None)
        return read_results(path)


def arrow_takes(path: Path) -> bool:
    """Whether pyarrow's reader reads the file (rather than leaving it to pandas')."""
    raw = path.read_bytes()
    header = list(pd.read_csv(io.BytesIO(raw), nrows=0, encoding="utf-8-sig").columns)
    return results._arrow_rows(raw, header, [c for c in results.COLUMNS if c in header]) is not None


CLEAN_FILES = [
    pytest.param(SMALL, id="small"),
    pytest.param("\ufeff" + "judge,match_id,entry_a,entry_b,score_a,score_b,forfeit,dimension,category,note\n"
                 "j,m1,NA,null,2,1,,overall,fact,x\nj,m1,NA,null,1.5,1.5,,argument,fact,\n"
                 "j,m2,null,NA,3,0,con,overall,value,y\nj,m3, a ,NA,0.5,2.5,,clarity,value,z\n"
                 "j,m4,caf\u00e9,NA,1e0,2,,overall,fact,w", id="bom-extra-columns-forfeit-no-final-newline"),
    # Names that look like numbers stay the text they are: "007" and "7" are two entries.
    pytest.param("match_id,entry_a,entry_b,score_a,score_b,category\n1,007,7,2,1,1\n2,7,10,1,2,2.0\n"
                 "3,10,007,3,0,1\n", id="numeric-looking-names"),
    # A score's text is read by pandas' own number parser in either reader: spaces around it are allowed.
    pytest.param(GOOD.replace("m1,a,b,3,0", "m1,a,b, 3 ,0.0"), id="score-with-spaces"),
]


@pytest.mark.parametrize("text", CLEAN_FILES)
def test_pyarrow_reads_a_clean_file_as_pandas_does(tmp_path, monkeypatch, text):
    path = write(tmp_path, text)
    assert arrow_takes(path)
    fast = read_results(path)
    pd.testing.assert_frame_equal(fast, read_by_pandas(path, monkeypatch))
    assert all(fast[c].map(type).eq(str).all() for c in fast.columns if c not in ("score_a", "score_b"))


def test_names_that_look_like_numbers_stay_text(tmp_path, monkeypatch):
    # pandas makes a category column of numbers-alike a column of numbers ("007" -> 7); read again as text.
    path = write(tmp_path, CLEAN_FILES[2].values[0])
    for frame in (read_results(path), read_by_pandas(path, monkeypatch)):
        assert frame["entry_a"].tolist() == ["007", "7", "10"] and frame["category"].tolist() == ["1", "2.0", "1"]
    data = rate_json("--results", path, "--bootstrap", "0")
    assert sorted(r["entry"] for r in data["ratings"]) == ["007", "10", "7"]


UNUSUAL_FILES = [
    pytest.param(GOOD.replace("m2,b,c", '"m2",b,"c"'), id="quoted"),
    pytest.param(GOOD.replace("\n", "\r\n"), id="crlf"),
    pytest.param(GOOD + "\n", id="blank-line-at-the-end"),
    pytest.param(GOOD.replace("category,dimension", "category,category"), id="repeated-header-name"),
    pytest.param(GOOD.replace("m2,b,c,2,1,value,overall", "m2,b,c,2,1,value"), id="short-row"),
    pytest.param(GOOD.replace("b,3,0", "b,3,0x"), id="score-no-number"),
    pytest.param(HEADER, id="header-only"),
]


@pytest.mark.parametrize("text", UNUSUAL_FILES + [pytest.param(p.values[0], id=p.id) for p in BAD_FILES])
def test_a_file_pyarrow_might_read_otherwise_goes_to_pandas(tmp_path, monkeypatch, text, request):
    """Every unusual or bad file is read by pandas' reader or, if by pyarrow's, to the same rows or the same
    message."""
    path = write(tmp_path, text)
    outcomes = []
    for read in (read_results, lambda p: read_by_pandas(p, monkeypatch)):
        try:
            outcomes.append(read(path))
        except ResultsError as exc:
            outcomes.append(str(exc))
    if isinstance(outcomes[1], str):
        assert outcomes[0] == outcomes[1]
    else:
        pd.testing.assert_frame_equal(outcomes[0], outcomes[1])
    if request.node.callspec.id in {p.id for p in UNUSUAL_FILES}:
        assert not arrow_takes(path)


def test_leaderboard_imports_nothing_from_arena():
    code = ("import sys, leaderboard.results, leaderboard.ratings; "
            "sys.exit(any(m == 'arena' or m.startswith('arena.') for m in sys.modules))")
    assert subprocess.run([sys.executable, "-c", code], check=False, timeout=60).returncode == 0


# --- --results: rating a file without a workspace -------------------------------------------------

def test_results_rate_without_a_workspace(here):
    path = write(here, SMALL)
    before = snapshot(here)
    data = rate_json("--results", path, "--bootstrap", "50", "--seed", "3", "-w", here / "nowhere")
    assert snapshot(here) == before and not (here / "nowhere").exists()
    assert [r["entry"] for r in data["ratings"]] and {r["entry"] for r in data["ratings"]} == {"a", "b", "c", "d"}
    assert isinstance(data["meta"].pop("prior"), bool)  # set when a resample needed the weak prior
    assert data["meta"] == {"matches": 12, "ci": "bootstrap", "bootstrap": 50, "weighting": "paper", "seed": 3,
                            "side": "fit", "results": str(path)}
    assert list(data) == ["ratings", "separability", "side", "meta"]
    assert data["separability"] == separability_of(data["ratings"]) and data["separability"]["pairs"] == 6
    # Only the overall rows are fitted: the same ratings as a file of those rows alone.
    overall = write(here, "".join(line + "\n" for line in SMALL.splitlines() if not line.endswith("argument")),
                    "overall.csv")
    assert rate_json("--results", overall, "--bootstrap", "50", "--seed", "3")["ratings"] == data["ratings"]


def test_results_table_names_the_file(here):
    path = write(here, SMALL)
    result = invoke("rate", "--results", path, "--bootstrap", "0")
    assert result.exit_code == 0, result.output
    assert result.output.startswith(f"ratings from {path}, 12 matches, 0 bootstrap replicates\n")
    assert result.output.splitlines()[1].split()[:3] == ["rank_ub", "entry", "rating"]


def test_the_table_says_the_separability_under_the_board(here):
    # a beats everyone, b loses to everyone, c and d split their matches: by hand, c-d is the one pair of 6 whose
    # intervals overlap.
    rows = ([("a", "b", 3, 0)] * 12 + [("a", "c", 3, 0), ("a", "d", 3, 0), ("c", "b", 3, 0), ("d", "b", 3, 0)] * 8
            + [("c", "d", 2, 1), ("d", "c", 2, 1)] * 8)
    path = write(here, HEADER + "".join(f"m{k},{a},{b},{x},{y},fact,overall\n" for k, (a, b, x, y) in enumerate(rows)))
    options = ("--results", path, "--ci", "sandwich")
    data = rate_json(*options)
    assert data["separability"] == separability_of(data["ratings"]) == {"pairs": 6, "separated": 5, "share": 5 / 6}
    lines = invoke("rate", *options).output.splitlines()
    assert lines[1].startswith("rank_ub") and [line.split()[1] for line in lines[2:6]] == ["a", "c", "d", "b"]
    assert lines[6] == "separability: 5 of 6 pairs apart (0.83): 95% intervals that do not overlap"  # under the board
    assert lines[7].startswith("Pro advantage")


def test_one_match_is_counted_as_one_match(here):
    # The issue: "1 matches". One match, with a history of one snapshot, and --by of one group.
    path = write(here, HEADER + "m1,a,b,2,1,fact,overall\n")
    result = invoke("rate", "--results", path, "--bootstrap", "0", "--by", "category")
    assert result.exit_code == 0, result.output
    assert result.output.startswith(f"ratings from {path}, 1 match, 0 bootstrap replicates\n")
    assert "\ncategory 'fact': 1 match\n" in result.output
    history = invoke("rate", "--results", path, "--history")
    assert history.exit_code == 0, history.output
    assert history.output.startswith(f"ratings from {path} after every 1 of 1 match in the file's row order")
    assert "\nafter 1 match (the last m1):\n" in history.output
    assert "1 matches" not in result.output + history.output
    # Two entries, one pair, said in the singular under each board: the main one, the group's (without intervals,
    # --bootstrap 0, two ratings are two points apart) and the snapshot's (sandwich intervals: one match leaves
    # them overlapping).
    line = "\nseparability: {} of 1 pair apart ({}): 95% intervals that do not overlap\n"
    assert result.output.count(line.format(1, "1.00")) == 2 and history.output.count(line.format(0, "0.00")) == 1


def test_sandwich_intervals_are_passed_through(here):
    path = write(here, SMALL)
    data = rate_json("--results", path, "--ci", "sandwich")
    assert data["meta"]["ci"] == "sandwich"
    assert all(r["ci_low"] < r["rating"] < r["ci_high"] for r in data["ratings"])


# --- --by category | dimension ------------------------------------------------------------------

def group_file(folder: Path, keep, name: str) -> Path:
    """The rows of SMALL that keep(row) accepts, without the dimension column (so all of them are fitted)."""
    rows = [line.split(",") for line in SMALL.splitlines()]
    return write(folder, "".join(",".join(row[:6]) + "\n" for row in [rows[0], *filter(keep, rows[1:])]), name)


@pytest.mark.parametrize("by, groups, keep", [
    ("category", {"fact": 6, "value": 6}, lambda group: lambda row: row[5] == group and row[6] == "overall"),
    ("dimension", {"argument": 6}, lambda group: lambda row: row[6] == group),
])
def test_by_fits_each_group_as_its_rows_alone(here, by, groups, keep):
    path = write(here, SMALL)
    options = ("--bootstrap", "40", "--seed", "7", "--weighting", "none")
    data = rate_json("--results", path, "--by", by, *options)
    assert list(data) == ["ratings", "separability", "side", "by", "meta"]
    assert list(data["by"]) == list(groups)
    assert data["ratings"] == rate_json("--results", path, *options)["ratings"]
    for group, matches in groups.items():
        fit = data["by"][group]
        assert list(fit) == ["ratings", "separability", "side", "meta"]
        assert fit["meta"]["matches"] == matches
        assert {k: fit["meta"][k] for k in ("bootstrap", "seed", "weighting", "ci")} == {
            "bootstrap": 40, "seed": 7, "weighting": "none", "ci": "bootstrap"}
        alone = rate_json("--results", group_file(here, keep(group), f"{group}.csv"), *options)
        assert fit["ratings"] == alone["ratings"] and fit["side"] == alone["side"]
        assert fit["separability"] == alone["separability"] == separability_of(fit["ratings"])


def test_by_dimension_lists_the_default_dimensions_first_then_custom_ones_by_name(here):
    rows = "".join(f"m{k},a,b,2,1,fact,{dim}\n" for k in range(3)
                   for dim in ("overall", "zeal", "language", "clash", "source", "argument"))
    data = rate_json("--results", write(here, HEADER + rows), "--by", "dimension", "--bootstrap", "0")
    assert list(data["by"]) == ["argument", "source", "language", "clash", "zeal"]


def test_by_prints_one_titled_table_per_group(here):
    path = write(here, SMALL)
    result = invoke("rate", "--results", path, "--by", "category", "--bootstrap", "0")
    assert result.exit_code == 0, result.output
    blocks = result.output.split("\n\n")
    assert [block.splitlines()[0] for block in blocks[1:]] == ["category 'fact': 6 matches",
                                                               "category 'value': 6 matches"]
    assert all(block.splitlines()[1].startswith("rank_ub") for block in blocks)


# --- --weighting, --anchor ------------------------------------------------------------------------

def test_weighting_none_is_plain_bradley_terry_and_differs_from_paper(here):
    path = write(here, SMALL)
    paper = rate_json("--results", path, "--bootstrap", "0", "--side", "ignore")
    plain = rate_json("--results", path, "--bootstrap", "0", "--weighting", "none", "--side", "ignore")
    assert plain["meta"]["weighting"] == "none"
    frame = read_results(path)
    frame = frame[frame["dimension"] == "overall"]
    entries = sorted(set(frame["entry_a"]) | set(frame["entry_b"]))
    a = frame["entry_a"].map(entries.index).to_numpy()
    b = frame["entry_b"].map(entries.index).to_numpy()
    y = bt.soft_outcomes(frame["score_a"], frame["score_b"])
    W, N = bt.pair_statistics(a, b, y, np.ones(len(frame)), len(entries))  # every match weighs 1
    assert bt.mle_exists(W)
    expected = elo.BASE_RATING + elo.ELO_SCALE * bt.fit(W, N)
    got = {r["entry"]: r["rating"] for r in plain["ratings"]}
    np.testing.assert_allclose([got[e] for e in entries], expected, atol=0.006)
    papers = {r["entry"]: r["rating"] for r in paper["ratings"]}
    assert max(abs(papers[e] - got[e]) for e in entries) > 5  # lopsided 3-0 wins weigh more under paper


def test_anchor_pins_the_entry_and_shifts_the_rest(here):
    path = write(here, SMALL)
    free = {r["entry"]: r for r in rate_json("--results", path, "--bootstrap", "30")["ratings"]}
    pinned = {r["entry"]: r for r in rate_json("--results", path, "--bootstrap", "30", "--anchor", "c=1500")["ratings"]}
    assert pinned["c"]["rating"] == 1500.0
    shift = 1500.0 - free["c"]["rating"]
    assert abs(shift) > 100
    for name in "abd":
        assert pinned[name]["rating"] == pytest.approx(free[name]["rating"] + shift, abs=0.02)


def test_anchor_applies_to_every_group(here):
    path = write(here, SMALL)
    data = rate_json("--results", path, "--by", "category", "--bootstrap", "0", "--anchor", "a=1200")
    for fit in [data, *data["by"].values()]:
        assert {r["entry"]: r["rating"] for r in fit["ratings"]}["a"] == 1200.0


# --- --side: the Pro advantage fitted with the ratings, or ignored -----------------------------------

def planted_side(folder: Path, advantage: float = 80.0, seed: int = 0) -> tuple[Path, dict[str, float]]:
    """A results CSV of 16 entries (true ratings N(1000, 150^2)) and 6,000 matches, the stronger of each pair
    Pro (entry_a) 80% of the time, each judged by 3 runs with the Pro side `advantage` Elo up; and the true
    ratings, mean 1000."""
    rng = np.random.default_rng(seed)
    n, m = 16, 6000
    truth = rng.normal(0.0, 150.0, n)
    a = rng.integers(0, n, m)
    b = (a + rng.integers(1, n, m)) % n
    swap = (truth[a] > truth[b]) != (rng.random(m) < 0.8)
    pro, con = np.where(swap, b, a), np.where(swap, a, b)
    points = rng.binomial(3, 1 / (1 + 10 ** (-(truth[pro] - truth[con] + advantage) / 400)))
    rows = "".join(f"m{k},e{pro[k]:02d},e{con[k]:02d},{points[k]},{3 - points[k]}\n" for k in range(m))
    path = write(folder, "match_id,entry_a,entry_b,score_a,score_b\n" + rows, "planted.csv")
    return path, {f"e{i:02d}": float(t) for i, t in enumerate(truth - truth.mean() + 1000)}


def rmse(ratings: list[dict], truth: dict[str, float]) -> float:
    return float(np.sqrt(np.mean([(r["rating"] - truth[r["entry"]]) ** 2 for r in ratings])))


def test_side_fit_recovers_a_planted_pro_advantage_and_rates_closer_to_the_truth(here):
    path, truth = planted_side(here)
    options = ("--results", path, "--weighting", "none", "--bootstrap", "200")
    fitted = rate_json(*options)
    side = fitted["side"]
    assert abs(side["pro_advantage"] - 80) <= 25 and side["ci_low"] <= 80 <= side["ci_high"]
    assert side["ci_high"] - side["ci_low"] < 30  # 6,000 matches pin it
    robust = rate_json(*options, "--ci", "sandwich")["side"]
    assert robust["pro_advantage"] == side["pro_advantage"] and robust["ci_low"] <= 80 <= robust["ci_high"]
    ignored = rate_json(*options, "--side", "ignore")
    assert ignored["side"] is None and ignored["meta"]["side"] == "ignore"
    assert rmse(fitted["ratings"], truth) < rmse(ignored["ratings"], truth) / 2
    # Ignoring the side credits the strong entries, who drew Pro, with its advantage.
    top = sorted(truth, key=truth.get)[-4:]
    blind = {r["entry"]: r["rating"] - truth[r["entry"]] for r in ignored["ratings"]}
    assert all(blind[name] > 10 for name in top)
    # The paper's weighting stretches the scale (about 12% at 3 runs), the advantage with it.
    paper = rate_json("--results", path, "--bootstrap", "200")["side"]
    assert 80 < paper["pro_advantage"] <= 105


def test_side_is_reported_per_group_and_in_the_table(here):
    path = write(here, SMALL)
    data = rate_json("--results", path, "--by", "category", "--bootstrap", "0")
    for fit in [data, *data["by"].values()]:
        assert set(fit["side"]) == {"pro_advantage", "ci_low", "ci_high"}
    assert data["by"]["fact"]["side"] != data["by"]["value"]["side"]  # each group's own fit
    table = invoke("rate", "--results", path, "--by", "category", "--bootstrap", "50")
    assert table.exit_code == 0, table.output
    blocks = table.output.split("\n\n")
    same = rate_json("--results", path, "--by", "category", "--bootstrap", "50")
    sides = [same["side"], *(fit["side"] for fit in same["by"].values())]
    assert len(blocks) == len(sides) == 3
    for block, side in zip(blocks, sides):
        assert block.rstrip().splitlines()[-1] == (f"Pro advantage {side['pro_advantage']:+.0f} Elo (95% CI "
                                                   f"{side['ci_low']:+.0f} to {side['ci_high']:+.0f})")
    ignored = invoke("rate", "--results", path, "--side", "ignore", "--bootstrap", "0")
    assert ignored.output.startswith(f"ratings from {path}, 12 matches, 0 bootstrap replicates, side ignored\n")
    assert "Pro advantage" not in ignored.output


def test_the_workspace_setting_decides_the_side_unless_side_is_given(demo_ws, tmp_path):
    path = tmp_path / "ws"
    shutil.copytree(demo_ws, path)
    config = path / "arena.toml"
    text = config.read_text(encoding="utf-8")
    assert rate_json("-w", path, "--bootstrap", "0")["meta"]["side"] == "fit"  # the default
    config.write_text(text + '\n[rating]\nside = "ignore"\n', encoding="utf-8")
    ignored = rate_json("-w", path, "--bootstrap", "0")
    assert ignored["side"] is None and ignored["meta"]["side"] == "ignore"
    exported = write(tmp_path, invoke("rate", "--format", "csv", "-w", path).output, "export.csv")
    assert ignored["ratings"] == rate_json("--results", exported, "--bootstrap", "0", "--side", "ignore")["ratings"]
    fitted = rate_json("-w", path, "--bootstrap", "0", "--side", "fit")
    assert fitted["meta"]["side"] == "fit" and fitted["side"]["pro_advantage"] is not None
    assert fitted["ratings"] != ignored["ratings"]
    config.write_text(text + '\n[rating]\nside = "sometimes"\n', encoding="utf-8")
    before = snapshot(path)
    line = len(text.splitlines()) + 3
    assert_user_error(invoke("rate", "-w", path), f"arena.toml:{line}: rating.side", "'fit' or 'ignore'",
                      "'sometimes'")
    assert snapshot(path) == before


# --- a workspace: --format csv export, and its round trip through --results -----------------------

STRENGTH = {"sim-ace": 1.5, "sim-bold": 0.5, "sim-calm": -0.5, "sim-deft": -1.5}
SIMULATED = [entry(name, model=f"offline/{name.removeprefix('sim-')}", strength=strength)
             for name, strength in STRENGTH.items()]
SIM_JUDGE = judge("sim-judge", model="offline/judge", runs=3)


@pytest.fixture(scope="module")
def demo_ws(tmp_path_factory) -> Path:
    """A simulated tournament: 4 entries, 24 matches, a judge with 3 runs that judges every dimension."""
    path = tmp_path_factory.mktemp("rate") / "ws"
    new_workspace(path, entries=SIMULATED, judges=[SIM_JUDGE])
    ws = open_workspace(path)
    try:
        app.schedule(ws, "round-robin", rounds=2)
        assert runs.run(ws, concurrency=4, progress=lambda line: None)["failed"] == 0
    finally:
        ws.close()
    return path


def test_csv_export_round_trips_through_results(demo_ws, tmp_path):
    exported = invoke("rate", "--format", "csv", "-w", demo_ws)
    assert exported.exit_code == 0, exported.output
    frame = pd.read_csv(io.StringIO(exported.output), keep_default_na=False)
    assert list(frame.columns) == ["match_id", "entry_a", "entry_b", "score_a", "score_b", "category", "dimension",
                                   "forfeit", "simulated", "words_a", "words_b", "citations_a", "citations_b",
                                   "markdown_a", "markdown_b"]
    # Each side's counts over the match's speeches, the same on every dimension's row of a match.
    assert (frame["words_a"] > 100).all() and (frame["words_b"] > 100).all()
    assert (frame.groupby("match_id")["words_a"].nunique() == 1).all()
    assert set(frame["forfeit"]) == {""}  # the demo's simulated debaters never forfeit
    assert set(frame["simulated"]) == {True}  # pandas reads true as True: every match of offline entries
    assert sorted(frame["dimension"].unique()) == ["argument", "language", "overall", "source"]
    assert (frame["dimension"] == "overall").sum() == 24
    path = write(tmp_path, exported.output, "export.csv")
    for args in [(), ("--by", "category"), ("--by", "dimension"), ("--weighting", "none", "--anchor", "sim-ace=1500"),
                 ("--ci", "sandwich"), ("--side", "ignore"), ("--control", "length,citations,markdown"),
                 ("--control", "length", "--by", "category", "--ci", "sandwich", "--side", "ignore")]:
        options = ("--bootstrap", "50", "--seed", "1", *args)
        from_ws = rate_json("-w", demo_ws, *options)
        from_file = rate_json("--results", path, *options)
        assert from_file["ratings"] == from_ws["ratings"] and from_file.get("by") == from_ws.get("by")
        assert from_file["side"] == from_ws["side"] and from_file.get("control") == from_ws.get("control")
        assert ("control" in from_ws) == ("--control" in args)
        assert from_ws["meta"]["judge"] == "sim-judge" and from_file["meta"]["results"] == str(path)
        assert {k: v for k, v in from_file["meta"].items() if k != "results"} == {
            k: v for k, v in from_ws["meta"].items() if k not in ("judge", "simulated")}
    # Exporting the file again gives the same rows.
    again = invoke("rate", "--results", path, "--format", "csv")
    assert again.exit_code == 0 and again.output == exported.output


def test_workspace_by_category_and_dimension(demo_ws):
    by_category = rate_json("-w", demo_ws, "--by", "category", "--bootstrap", "0")
    assert set(by_category["by"]) <= {"fact", "value", "policy"} and by_category["by"]
    assert sum(fit["meta"]["matches"] for fit in by_category["by"].values()) == 24
    by_dimension = rate_json("-w", demo_ws, "--by", "dimension", "--bootstrap", "0")
    assert list(by_dimension["by"]) == ["argument", "source", "language"]  # the default dimensions in their order
    assert by_dimension["meta"]["judge"] == "sim-judge" and by_dimension["meta"]["simulated"] is True


def test_workspace_anchor_unknown_entry_exits_2(demo_ws):
    before = snapshot(demo_ws)
    assert_user_error(invoke("rate", "-w", demo_ws, "--anchor", "nobody=1000"), "--anchor", "'nobody'")
    assert snapshot(demo_ws) == before


# --- a judge of people: the Human-Elo from their ballots ------------------------------------------

def people_ballots(matches: list[tuple[str, str, str]]):
    """Ballots on (match_id, pro, con): all three people on the first 16 matches, ann and bo on two more, ann
    alone on two more, nobody on the last four. ann picks the stronger side and decides argument too; bo
    and cy mostly agree, with dissent and ties."""
    from arena.domain.records import Ballot

    out = []
    for k, (match_id, pro, con) in enumerate(matches):
        stronger, weaker = ("pro", "con") if STRENGTH[pro] > STRENGTH[con] else ("con", "pro")
        votes = {"ann": stronger, "bo": stronger if k % 3 else weaker,
                 "cy": "tie" if k % 4 == 0 else weaker if k % 5 == 0 else stronger}
        cast = list(votes) if k < 16 else ["ann", "bo"] if k < 18 else ["ann"] if k < 20 else []
        out += [Ballot(match_id, person, votes[person], {"argument": votes[person]} if person == "ann" else {})
                for person in cast]
    return out


@pytest.fixture(scope="module")
def people_ws(tmp_path_factory) -> tuple[Path, list, list]:
    """The simulated tournament above, 24 matches, with the people of judge experts' ballots on 20 of them:
    (path, [(match_id, pro, con)], the ballots)."""
    path = tmp_path_factory.mktemp("people") / "ws"
    new_workspace(path, entries=SIMULATED, judges=[SIM_JUDGE, PEOPLE])
    ws = open_workspace(path)
    try:
        app.schedule(ws, "round-robin", rounds=2)
        assert runs.run(ws, concurrency=4, progress=lambda line: None)["failed"] == 0
        matches = [(m.id, m.pro, m.con) for m in ws.store.match_states()]
        ballots = people_ballots(matches)
        ws.store.cast_ballots("experts", ("ann", "bo", "cy"), ballots, simulated=False)
    finally:
        ws.close()
    return path, matches, ballots


def test_human_elo_can_be_controlled_for_length(people_ws):
    path, _, _ = people_ws
    data = rate_json("-w", path, "--judge", "experts", "--control", "length,markdown", "--ci", "sandwich")
    assert data["meta"]["judge"] == "experts" and list(data["control"]) == ["length", "markdown"]
    assert data["meta"]["matches"] == 20 and all(f["ci_low"] <= f["coef"] <= f["ci_high"]
                                                 for f in data["control"].values())


def test_human_elo_rates_the_ballots_with_r_3_and_the_papers_weighting(people_ws):
    path, matches, ballots = people_ws
    data = rate_json("-w", path, "--judge", "experts", "--bootstrap", "0", "--side", "ignore")
    assert (data["meta"]["judge"], data["meta"]["matches"], data["meta"]["simulated"]) == ("experts", 20, False)
    # By hand: a ballot gives its side 1 point (a tie ½ each); a match scores its ballots' points, out of 3
    # with every ballot cast; y = a/(a + b), w = 1/(1 + e^−|a − b|).
    points = {}
    for ballot in ballots:
        pro, con = points.get(ballot.match_id, (0.0, 0.0))
        points[ballot.match_id] = (pro + {"pro": 1, "tie": 0.5}.get(ballot.overall, 0),
                                   con + {"con": 1, "tie": 0.5}.get(ballot.overall, 0))
    rated = [(pro, con, *points[m]) for m, pro, con in matches if m in points]
    assert sorted(a + b for _, _, a, b in rated) == [1.0] * 2 + [2.0] * 2 + [3.0] * 16
    entries = sorted(STRENGTH)
    a = np.array([entries.index(r[0]) for r in rated])
    b = np.array([entries.index(r[1]) for r in rated])
    score_a, score_b = np.array([r[2] for r in rated]), np.array([r[3] for r in rated])
    w = 1 / (1 + np.exp(-np.abs(score_a - score_b)))
    W, N = bt.pair_statistics(a, b, score_a / (score_a + score_b), w, len(entries))
    assert bt.mle_exists(W)
    expected = elo.BASE_RATING + elo.ELO_SCALE * bt.fit(W, N)
    got = {r["entry"]: r["rating"] for r in data["ratings"]}
    np.testing.assert_allclose([got[e] for e in entries], expected, atol=0.006)
    assert got["sim-ace"] > got["sim-bold"] > got["sim-calm"] > got["sim-deft"]  # the people saw who was stronger
    table = invoke("rate", "-w", path, "--judge", "experts", "--bootstrap", "0")
    assert table.exit_code == 0 and table.output.startswith("ratings from judge 'experts', 20 matches")


def test_partial_ballots_score_out_of_the_ballots_cast(people_ws, tmp_path):
    """A match scores the ballots cast on it: 2–0 with two ballots weighs 1/(1+e^−2), less than a unanimous
    3–0; a match with no ballot is not rated; a dimension counts only the ballots that decided it."""
    path, matches, _ = people_ws
    exported = invoke("rate", "--format", "csv", "--judge", "experts", "-w", path)
    assert exported.exit_code == 0, exported.output
    frame = pd.read_csv(io.StringIO(exported.output), keep_default_na=False)
    overall = frame[frame["dimension"] == "overall"]
    totals = dict(zip(overall["match_id"], overall["score_a"] + overall["score_b"]))
    ids = [m for m, _, _ in matches]
    assert [totals.get(m) for m in ids] == [3.0] * 16 + [2.0] * 2 + [1.0] * 2 + [None] * 4
    argument = frame[frame["dimension"] == "argument"]  # ann alone decided it, on every match she judged
    assert list(argument["match_id"]) == ids[:20] and set(argument["score_a"] + argument["score_b"]) == {1.0}
    assert set(frame["dimension"]) == {"overall", "argument"}
    # The results CSV takes the lower totals (below R = 3, the most common) and rates as the workspace does.
    again = write(tmp_path, exported.output, "people.csv")
    options = ("--bootstrap", "20", "--by", "dimension")
    from_ws, from_file = rate_json("-w", path, "--judge", "experts", *options), rate_json("--results", again, *options)
    assert from_file["ratings"] == from_ws["ratings"] and from_file["by"] == from_ws["by"]
    assert list(from_ws["by"]) == ["argument"]
