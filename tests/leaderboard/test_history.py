"""Ratings over time: `arena rate --history [--every N]`, leaderboard.history, and the site's history page."""
from __future__ import annotations

import csv
import json
import sqlite3

import pandas as pd
import pytest

from arena.app import commands as app
from leaderboard.history import cutoffs, default_every, history, prefixes
from leaderboard.ratings import rate
from leaderboard.site.render import SiteData, publish
from tests.support.helpers import assert_user_error, invoke, judge, new_workspace, snapshot
from tests.support.sites import HOSTILE, THREE_OFFLINE, check_site


# --- the pure functions -------------------------------------------------------------------------------------

def test_the_default_spacing_gives_at_most_25_snapshots():
    assert [default_every(n) for n in (0, 1, 24, 25, 26, 50, 51, 10_000)] == [1, 1, 1, 1, 2, 2, 3, 400]
    for n in (1, 7, 25, 26, 49, 51, 2_501, 10_000):
        assert len(cutoffs(n, default_every(n))) <= 25
        if default_every(n) > 1:  # and no smaller spacing does
            assert len(cutoffs(n, default_every(n) - 1)) > 25


def test_cutoffs_end_with_every_match():
    assert cutoffs(10, 3) == [3, 6, 9, 10]
    assert cutoffs(9, 3) == [3, 6, 9]
    assert cutoffs(2, 5) == [2]
    assert cutoffs(0, 5) == []


def frame(rows: list[tuple[str, str, str, float, float]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["match_id", "entry_a", "entry_b", "score_a", "score_b"])


MATCHES = [("m1", "a", "b", 3, 0), ("m2", "b", "c", 2, 1), ("m3", "c", "a", 1, 2), ("m4", "a", "c", 0, 3),
           ("m5", "b", "a", 1.5, 1.5), ("m6", "c", "b", 3, 0), ("m7", "a", "b", 2, 1)]


def test_snapshot_k_is_the_fit_of_the_first_k_matches():
    snapshots = history(frame(MATCHES), every=2, ci="sandwich")
    assert [s["matches"] for s in snapshots] == [2, 4, 6, 7]
    assert [s["last_match"] for s in snapshots] == ["m2", "m4", "m6", "m7"]
    for s in snapshots:
        assert s == {"matches": s["matches"], "last_match": s["last_match"],
                     **rate(frame(MATCHES[:s["matches"]]), ci="sandwich")}
    assert {r["entry"] for r in snapshots[0]["ratings"]} == {"a", "b", "c"}  # m2 brings in c
    assert snapshots[-1]["ratings"] == rate(frame(MATCHES), ci="sandwich")["ratings"]


def test_matches_count_in_their_order_of_first_appearance_whatever_the_rows_per_match():
    # Two rows per match (overall and a dimension), the second rows after all the first ones.
    rows = frame(MATCHES[:4] + MATCHES[:4])
    seen = [sorted(part["match_id"]) for _, _, part in prefixes(rows, every=1)]
    assert seen == [["m1", "m1"], ["m1", "m1", "m2", "m2"], ["m1", "m1", "m2", "m2", "m3", "m3"],
                    sorted(["m1", "m2", "m3", "m4"] * 2)]
    assert history(frame(MATCHES[::-1]), every=3, ci="sandwich")[0]["last_match"] == "m5"  # the order given
    assert history(frame([]), ci="sandwich") == []


# --- a workspace, matches finishing out of schedule order ----------------------------------------------------

@pytest.fixture(scope="module")
def played(tmp_path_factory):
    """Three offline entries, a round-robin of 12 matches judged by j1 (R = 3), whose finishing times are then
    set to the reverse of the schedule: (path, match ids in the order they finished)."""
    path = new_workspace(tmp_path_factory.mktemp("history") / "ws", entries=THREE_OFFLINE, judges=[judge("j1", runs=3)])
    ws = app.open_workspace(path)
    try:
        app.schedule(ws, "round-robin", rounds=2)
        assert app.run(ws, progress=lambda line: None)["done"] == 12
    finally:
        ws.close()
    db = sqlite3.connect(path / "arena.db")
    db.execute("UPDATE matches SET finished_at = printf('2026-01-01T00:00:%02d.000000+00:00', 60 - seq)")
    db.commit()
    order = [r[0] for r in db.execute("SELECT id FROM matches ORDER BY finished_at")]
    db.close()
    assert order == [f"m{k:05d}" for k in range(12, 0, -1)]
    return path, order


def rate_json(*args) -> dict | list:
    result = invoke("rate", "--format", "json", *args)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_history_follows_the_order_matches_finished_in(played, tmp_path):
    path, order = played
    snapshots = rate_json("--history", "--every", "5", "-w", path)
    assert [(s["matches"], s["last_match"]) for s in snapshots] == [(5, order[4]), (10, order[9]), (12, order[11])]
    assert all(list(s)[:3] == ["matches", "last_match", "ratings"] and list(s)[-1] == "meta" for s in snapshots)
    for s in snapshots:
        assert s["meta"]["ci"] == "sandwich" and s["meta"]["matches"] == s["matches"]
        assert s["meta"]["judge"] == "j1" and s["meta"]["simulated"] is True
    # Snapshot k rates exactly the first k matches to finish: the results CSV of those, rated directly.
    exported = list(csv.DictReader(invoke("rate", "--format", "csv", "-w", path).output.splitlines()))
    for s in snapshots:
        first = set(order[:s["matches"]])
        part = tmp_path / f"first-{s['matches']}.csv"
        with part.open("w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(exported[0]))
            writer.writeheader()
            writer.writerows(r for r in exported if r["match_id"] in first)
        direct = rate_json("--results", part, "--ci", "sandwich")
        # Every key `arena rate` gives (ratings, and any others such as the side's), but for the meta's source.
        assert {k: v for k, v in s.items() if k not in ("matches", "last_match", "meta")} == \
            {k: v for k, v in direct.items() if k != "meta"}
        assert {k: v for k, v in s["meta"].items() if k not in ("judge", "simulated")} == \
            {k: v for k, v in direct["meta"].items() if k != "results"}
    # The last is `arena rate` itself, with the same options.
    assert snapshots[-1]["ratings"] == rate_json("--ci", "sandwich", "-w", path)["ratings"]


def test_the_default_spacing_and_the_options_flow_through(played):
    path, _ = played
    default = rate_json("--history", "-w", path)
    assert [s["matches"] for s in default] == list(range(1, 13))  # 12 matches: N = 1
    anchored = rate_json("--history", "--every", "6", "--anchor", "ace=1500", "--weighting", "none",
                         "--ci", "bootstrap", "--bootstrap", "20", "--seed", "3", "-w", path)
    assert all(r["rating"] == 1500 for s in anchored for r in s["ratings"] if r["entry"] == "ace")
    assert {(s["meta"]["ci"], s["meta"]["bootstrap"], s["meta"]["weighting"], s["meta"]["seed"]) for s in anchored} \
        == {("bootstrap", 20, "none", 3)}
    again = rate_json("--history", "--every", "6", "--anchor", "ace=1500", "--weighting", "none",
                      "--ci", "bootstrap", "--bootstrap", "20", "--seed", "3", "-w", path)
    assert again == anchored  # deterministic under the seed
    assert anchored[-1]["ratings"] == rate_json("--anchor", "ace=1500", "--weighting", "none", "--bootstrap", "20",
                                                "--seed", "3", "-w", path)["ratings"]


def test_history_table(played):
    path, order = played
    result = invoke("rate", "--history", "--every", "10", "-w", path)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == ("ratings from judge 'j1' after every 10 of 12 matches in the order they finished, "
                        "sandwich intervals — SIMULATED")
    assert f"after 10 matches (the last {order[9]}):" in lines and f"after 12 matches (the last {order[11]}):" in lines
    assert result.output.count("rank_ub  entry") == 2


@pytest.mark.parametrize("args, fragments", [
    (["--history", "--every", "0"], ["--every", "0 is not in the range"]),
    (["--history", "--every", "-3"], ["--every"]),
    (["--history", "--every", "two"], ["--every", "'two' is not a valid integer"]),
    (["--every", "3"], ["--every N spaces the snapshots of --history; add --history"]),
    (["--history", "--by", "category"], ["--by", "--history"]),
    (["--history", "--format", "csv"], ["--format csv", "--history"]),
    (["--history", "--anchor", "nobody=1000"], ["--anchor: entry 'nobody' has no matches in the first 1 match "]),
], ids=["zero", "negative", "text", "every-alone", "by", "csv", "anchor"])
def test_bad_history_options_exit_2_writing_nothing(played, args, fragments):
    path, _ = played
    before = snapshot(path)
    assert_user_error(invoke("rate", *args, "-w", path), *fragments)
    assert snapshot(path) == before


def test_a_results_file_keeps_its_row_order(tmp_path):
    rows = "".join(f"{m},{a},{b},{sa},{sb}\n" for m, a, b, sa, sb in MATCHES)
    forward, backward = tmp_path / "forward.csv", tmp_path / "backward.csv"
    header = "match_id,entry_a,entry_b,score_a,score_b\n"
    forward.write_text(header + rows)
    backward.write_text(header + "".join(reversed(rows.splitlines(keepends=True))))
    ahead = rate_json("--results", forward, "--history", "--every", "3")
    behind = rate_json("--results", backward, "--history", "--every", "3")
    assert [s["last_match"] for s in ahead] == ["m3", "m6", "m7"]
    assert [s["last_match"] for s in behind] == ["m5", "m2", "m1"]
    figures = lambda rows: [(r["entry"], r["rating"], r["ci_low"], r["ci_high"]) for r in rows]  # noqa: E731
    assert figures(ahead[0]["ratings"]) == figures(rate(frame(MATCHES[:3]), ci="sandwich")["ratings"])
    assert ahead[0]["ratings"] != behind[0]["ratings"]
    assert ahead[-1]["ratings"] == behind[-1]["ratings"]  # every match, in either order
    assert ahead[0]["meta"]["results"] == str(forward) and "judge" not in ahead[0]["meta"]


def test_no_rated_matches_no_history(tmp_path):
    path = new_workspace(tmp_path / "ws", entries=THREE_OFFLINE, judges=[judge("j1")])
    assert rate_json("--history", "-w", path) == []
    assert invoke("rate", "--history", "-w", path).output == "no rated matches yet: no history\n"


# --- the site ----------------------------------------------------------------------------------------------

def test_the_site_plots_one_series_per_entry_and_links_the_page(played, tmp_path):
    path, _ = played
    site = tmp_path / "site"
    assert invoke("publish", "--out", site, "-w", path).exit_code == 0
    page = (site / "history.html").read_text()
    assert page.count('<g class="series"') == 3
    for name in ("ace", "bold", "calm"):
        assert f'data-entry="{name}"' in page
    assert "Simulated results" in page  # offline entries and judge
    assert 'href="history.html">Ratings over time</a>' in (site / "index.html").read_text()
    assert check_site(site) == []
    # The page's data: the history `arena rate --history` gives with its defaults.
    published = json.loads((site / "history.json").read_text())
    cli = rate_json("--history", "-w", path)
    assert [(s["matches"], s["last_match"]) for s in published] == [(s["matches"], s["last_match"]) for s in cli]
    assert [[(r["entry"], r["rating"], r["ci_low"], r["ci_high"]) for r in s["ratings"]] for s in published] == \
        [[(r["entry"], r["rating"], r["ci_low"], r["ci_high"]) for r in s["ratings"]] for s in cli]
    assert published[-1]["meta"]["judge"] == "j1"


def test_the_history_page_escapes_entry_names(tmp_path):
    rows = [{"entry": name, "rating": rating, "ci_low": rating - 50, "ci_high": rating + 50, "matches": 1,
             "wins": 1, "ties": 0, "losses": 0, "rank_ub": 1, "provisional": True}
            for name, rating in ((f"x{HOSTILE}", 1040.0), ("y&z", 960.0))]
    history_data = [{"matches": 1, "last_match": "m1", "ratings": rows, "meta": {}},
                    {"matches": 2, "last_match": f"m{HOSTILE}", "ratings": rows, "meta": {}}]
    data = SiteData("T", "now", "j", True, {"overall": {"ratings": rows, "meta": {}}}, {}, [], [],
                    history=history_data)
    publish(tmp_path / "site", data)
    page = (tmp_path / "site" / "history.html").read_text()
    assert "<script>alert" not in page and "&lt;script&gt;" in page
    assert page.count('<g class="series"') == 2 and 'data-entry="y&amp;z"' in page
    assert "Simulated results" in page


def test_a_site_with_no_matches_says_there_is_no_history(tmp_path):
    publish(tmp_path / "site", SiteData("T", "now", None, False, {"overall": {"ratings": [], "meta": {}}}, {}, [], []))
    assert "the ratings have no history" in (tmp_path / "site" / "history.html").read_text()
    assert json.loads((tmp_path / "site" / "history.json").read_text()) == []
