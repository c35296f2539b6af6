"""`arena stats sides`: Pro/Con counts per entry; Pro score share and the binomial side-bias test per motion
and overall."""
from __future__ import annotations

import json

import pytest

from arena.app import commands as app

from arena.app.commands import open_workspace
from arena.domain.records import Verdict
from arena.analysis.stats import side_stats
from tests.support.helpers import entry, invoke, judge, new_workspace


def result(motion: str, pro: float, con: float) -> dict:
    return {"motion": motion, "score_pro": pro, "score_con": con}


def test_known_counts_give_known_shares_and_p_values():
    results = ([result("m1", 3, 0), result("m1", 2, 1), result("m1", 0, 3)]  # R = 3
               + [result("m2", 1, 0)] * 10  # R = 1: Pro won all ten
               + [result("m3", 1.5, 1.5)])  # a tie: half the points each, no decision
    data = side_stats([], results)
    m1, m2, m3 = data["motions"]
    assert m1 == {"motion": "m1", "matches": 3, "pro_share": pytest.approx(5 / 9), "pro_wins": 2, "con_wins": 1,
                  "ties": 0, "p_value": pytest.approx(1.0)}
    # Two-sided exact binomial test: 10 of 10 has p = 2 · 0.5^10.
    assert m2["pro_share"] == 1.0 and m2["p_value"] == pytest.approx(2 * 0.5 ** 10)
    assert m3["pro_share"] == 0.5 and m3["ties"] == 1 and m3["p_value"] is None  # nothing decided
    overall = data["overall"]
    assert overall["matches"] == 14 and overall["pro_share"] == pytest.approx((5 + 10 + 1.5) / (9 + 10 + 3))
    assert (overall["pro_wins"], overall["con_wins"], overall["ties"]) == (12, 1, 1)
    assert overall["p_value"] == pytest.approx(2 * 14 / 2 ** 13)  # P(X ≥ 12) + P(X ≤ 1), X ~ Bin(13, 0.5)


def test_entries_count_pro_and_con_sides_listing_given_names_first():
    matches = [{"pro": "b", "con": "a"}, {"pro": "b", "con": "c"}, {"pro": "a", "con": "b"}]
    assert side_stats(matches, [], ["c", "z"])["entries"] == [
        {"entry": "c", "pro": 0, "con": 1}, {"entry": "z", "pro": 0, "con": 0},
        {"entry": "a", "pro": 1, "con": 1}, {"entry": "b", "pro": 2, "con": 1}]


def test_no_results_give_empty_motions_and_null_overall():
    assert side_stats([], []) == {"entries": [], "motions": [], "overall": {
        "matches": 0, "pro_share": None, "pro_wins": 0, "con_wins": 0, "ties": 0, "p_value": None}}


ABC = [entry(name) for name in "abc"]
JUDGE = judge("j", model="offline/judge", runs=2)


def test_stats_sides_json_from_the_default_judge(tmp_path):
    path = new_workspace(tmp_path / "ws", entries=ABC, judges=[JUDGE], init="cli")
    ws = open_workspace(path)
    try:
        ids = app.schedule(ws, "round-robin").match_ids  # 6 matches: 3 pairs, each motion both ways
        for match_id in ids[:4]:  # Pro wins both runs of four matches; two stay unplayed
            ws.store.commit_match(match_id, [], [Verdict("j", 0, "pro"), Verdict("j", 1, "pro")], [], True)
        played = [ws.store.match(m) for m in ids[:4]]
    finally:
        ws.close()
    out = invoke("stats", "sides", "-w", path, "--format", "json")
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert set(data) == {"judge", "entries", "motions", "overall"} and data["judge"] == "j"
    assert set(data["entries"][0]) == {"entry", "pro", "con"}
    assert sum(e["pro"] for e in data["entries"]) == sum(e["con"] for e in data["entries"]) == 4  # completed only
    assert [e["entry"] for e in data["entries"]] == ["a", "b", "c"]
    assert {m["motion"] for m in data["motions"]} == {m.motion.id for m in played}
    for row in data["motions"]:
        assert {"motion", "matches", "pro_share", "p_value"} <= set(row) and row["pro_share"] == 1.0
    assert data["overall"]["matches"] == 4 and data["overall"]["pro_share"] == 1.0
    assert data["overall"]["p_value"] == pytest.approx(2 * 0.5 ** 4)

    table = invoke("stats", "sides", "-w", path)
    assert table.exit_code == 0, table.output
    lines = table.output.splitlines()
    assert lines[0].split() == ["entry", "pro", "con"]
    assert "Pro score share by motion (judge j):" in table.output
    assert lines[-1].split() == ["overall", "4", "1.000", "4", "0", "0", "0.125"]


def test_stats_sides_without_a_judge_counts_sides_only(tmp_path):
    path = new_workspace(tmp_path / "ws", entries=ABC, init="cli")
    out = invoke("stats", "sides", "-w", path, "--format", "json")
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert data["judge"] is None and data["motions"] == [] and data["overall"]["matches"] == 0
    assert data["entries"] == [{"entry": n, "pro": 0, "con": 0} for n in "abc"]


FAKE_API = "http://127.0.0.1:9/v1"
REAL = dict(entries=[entry("a", model="openai/model-a", api_base=FAKE_API),
                     entry("b", model="openai/model-b", api_base=FAKE_API), entry("sim")],
            judges=[judge("j", model="openai/judge", api_base=FAKE_API, runs=2)])


def test_results_are_labelled_simulated_by_the_stored_flag_not_by_configured_entries(tmp_path):
    """A configured but unplayed offline entry does not make real results simulated; a simulated match does."""
    from arena.app.site_data import site_data
    from arena.workspace.config import SiteSettings
    from arena.domain.records import simulated

    ws = open_workspace(new_workspace(tmp_path / "ws", **REAL, init="cli"))
    try:
        a, b, sim, j = (*ws.config.entries, ws.config.judge("j"))
        real, fake = ws.store.add_tournament("t", 0, {}, [("en-value-001", "a", "b"), ("en-value-002", "a", "sim")])
        ws.store.commit_match(real, [], [Verdict("j", 0, "pro"), Verdict("j", 1, "tie")], [], simulated(a, b, j))
        assert not simulated(a, b, j) and simulated(a, sim, j)
        assert app.rate(ws, bootstrap=0)["meta"]["simulated"] is False
        assert site_data(ws, "j", {}, settings=SiteSettings(intervals="sandwich")).simulated is False
        ws.store.commit_match(fake, [], [Verdict("j", 0, "pro"), Verdict("j", 1, "pro")], [], simulated(a, sim, j))
        assert app.rate(ws, bootstrap=0)["meta"]["simulated"] is True
        assert site_data(ws, "j", {}, settings=SiteSettings(intervals="sandwich")).simulated is True
        assert [ws.store.match(m).simulated for m in (real, fake)] == [False, True]
    finally:
        ws.close()
