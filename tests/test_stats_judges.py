"""`arena stats judges`: side bias, failures, cost per judge; agreement and kappa per pair; the ledger's judge."""
from __future__ import annotations

import json
import sqlite3

import pytest

from arena.stats import agreement, cohen_kappa, judge_stats, match_outcome, side_bias
from arena.store import SCHEMA_VERSION, Store
from tests.test_cli import invoke
from tests.test_judge_cmd import ENTRIES, judge_toml, play_with

JUDGE_KEYS = ["judge", "matches", "runs", "failed_runs", "pro_wins", "con_wins", "ties", "pro_win_rate",
              "side_bias_p", "calls_per_match", "cost_per_match"]
PAIR_KEYS = ["a", "b", "matches", "agreement", "kappa"]


# --- the pure functions ---------------------------------------------------------------------------

def test_kappa_is_one_for_perfect_agreement():
    assert cohen_kappa(["pro", "con", "tie", "pro"], ["pro", "con", "tie", "pro"]) == 1.0


def test_kappa_textbook_example():
    # 50 items rated yes/no: both yes 20, A yes B no 5, A no B yes 10, both no 15.
    # p_o = 35/50 = 0.7; p_e = 0.5·0.6 + 0.5·0.4 = 0.5; κ = 0.2 / 0.5 = 0.4.
    a = ["yes"] * 25 + ["no"] * 25
    b = ["yes"] * 20 + ["no"] * 5 + ["yes"] * 10 + ["no"] * 15
    assert cohen_kappa(a, b, ["yes", "no"]) == pytest.approx(0.4)


def test_kappa_is_negative_for_systematic_disagreement_and_none_when_undefined():
    assert cohen_kappa(["pro", "con"], ["con", "pro"]) == pytest.approx(-1.0)
    assert cohen_kappa(["pro", "pro"], ["pro", "pro"]) is None  # p_e = 1: chance explains everything
    assert cohen_kappa([], []) is None
    with pytest.raises(ValueError):
        cohen_kappa(["pro"], [])


def test_agreement_counts_a_tie_as_consistent_with_anything():
    assert agreement(["pro", "pro", "con", "tie"], ["pro", "con", "tie", "con"]) == 0.75
    assert agreement(["pro", "con"], ["con", "pro"]) == 0.0
    assert agreement([], []) is None


def test_match_outcome_is_the_majority_of_runs():
    assert [match_outcome(*s) for s in [(2, 1), (1, 2), (1.5, 1.5), (0, 0)]] == ["pro", "con", "tie", "tie"]


def test_side_bias_binomial_test():
    rate, p = side_bias(9, 1)
    assert rate == 0.9
    assert p == pytest.approx(2 * 11 / 1024)  # P(X ≥ 9) + P(X ≤ 1) for X ~ Bin(10, 1/2)
    assert side_bias(5, 5) == (0.5, pytest.approx(1.0))
    assert side_bias(0, 0) == (None, None)


def v(judge, match_id, overall, error=None):
    return {"judge": judge, "match_id": match_id, "overall": overall, "error": error}


def test_judge_stats_on_hand_made_rows():
    rows = [
        v("A", "m1", "pro"), v("A", "m1", "pro"), v("A", "m1", "con"),   # pro
        v("A", "m2", "con"), v("A", "m2", "tie"), v("A", "m2", "pro"),   # 1.5–1.5: tie
        v("A", "m3", "pro"), v("A", "m3", None, "timeout"), v("A", "m3", "pro"),  # failed run: not rated
        v("A", "m4", "pro"), v("A", "m4", "pro"), v("A", "m4", "pro"),   # pro
        v("B", "m1", "con"), v("B", "m2", "pro"), v("B", "m3", "pro"), v("B", "m4", "pro"),
    ]
    calls = [{"judge": "A", "match_id": "m1", "calls": 3, "cost": 0.03},
             {"judge": "A", "match_id": "m2", "calls": 5, "cost": 0.01},
             {"judge": "B", "match_id": "m1", "calls": 1, "cost": None}]
    out = judge_stats(rows, calls, ["C", "B"])
    assert [r["judge"] for r in out["judges"]] == ["C", "B", "A"]  # configured first, then the rest
    c, b, a = out["judges"]
    assert a == {"judge": "A", "matches": 4, "runs": 12, "failed_runs": 1, "pro_wins": 2, "con_wins": 0, "ties": 1,
                 "pro_win_rate": 1.0, "side_bias_p": 0.5, "calls_per_match": 4.0,
                 "cost_per_match": pytest.approx(0.02)}
    assert (b["pro_wins"], b["con_wins"], b["calls_per_match"], b["cost_per_match"]) == (3, 1, 1.0, None)
    assert c == {"judge": "C", "matches": 0, "runs": 0, "failed_runs": 0, "pro_wins": 0, "con_wins": 0, "ties": 0,
                 "pro_win_rate": None, "side_bias_p": None, "calls_per_match": None, "cost_per_match": None}
    pairs = {(p["a"], p["b"]): p for p in out["pairs"]}
    assert list(pairs) == [("C", "B"), ("C", "A"), ("B", "A")]
    assert pairs[("C", "B")]["matches"] == 0 and pairs[("C", "B")]["kappa"] is None
    # A and B both rated m1 (pro/con), m2 (tie/pro), m4 (pro/pro); m3 is out, A failed on it.
    ba = pairs[("B", "A")]
    assert ba["matches"] == 3
    assert ba["agreement"] == pytest.approx(2 / 3)
    # B: con, pro, pro; A: pro, tie, pro. p_o = 1/3; p_e = (2/3)(2/3) + (1/3)(0) + 0 = 4/9.
    assert ba["kappa"] == pytest.approx((1 / 3 - 4 / 9) / (1 - 4 / 9))


# --- on a workspace ---------------------------------------------------------------------------------

@pytest.fixture
def ws(tmp_path):
    path = tmp_path / "ws"
    path.mkdir()
    (path / "arena.toml").write_text(ENTRIES + judge_toml("j1", 3) + judge_toml("j2", 2), encoding="utf-8")
    play_with(path, "j1", rounds=2)
    assert invoke("judge", "--judge", "j2", "-w", path).exit_code == 0
    return path


def test_the_ledger_records_which_judge_made_each_call(ws):
    db = sqlite3.connect(ws / "arena.db")
    rows = db.execute("SELECT judge, role, COUNT(DISTINCT match_id), COUNT(*) FROM calls WHERE kind='llm' "
                      "GROUP BY judge, role ORDER BY judge").fetchall()
    db.close()
    assert rows == [(None, "writer", 4, 24), ("j1", "judge", 4, 12), ("j2", "judge", 4, 8)]


def test_stats_judges_json(ws):
    result = invoke("stats", "judges", "--format", "json", "-w", ws)
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert list(data) == ["judges", "pairs"]
    assert [list(r) for r in data["judges"]] == [JUDGE_KEYS, JUDGE_KEYS]
    j1, j2 = data["judges"]
    assert (j1["judge"], j1["matches"], j1["runs"], j1["failed_runs"]) == ("j1", 4, 12, 0)
    assert (j2["judge"], j2["matches"], j2["runs"], j2["failed_runs"]) == ("j2", 4, 8, 0)
    for r, runs in ((j1, 3), (j2, 2)):
        assert r["pro_wins"] + r["con_wins"] + r["ties"] == 4
        assert r["calls_per_match"] == runs  # one call per run of a single judge
        assert r["cost_per_match"] == 0.0  # the simulator is free
        decided = r["pro_wins"] + r["con_wins"]
        assert r["pro_win_rate"] == pytest.approx(r["pro_wins"] / decided)
        assert 0 < r["side_bias_p"] <= 1
    (pair,) = data["pairs"]
    assert list(pair) == PAIR_KEYS
    assert (pair["a"], pair["b"], pair["matches"]) == ("j1", "j2", 4)
    assert 0 <= pair["agreement"] <= 1


def test_stats_judges_table(ws):
    result = invoke("stats", "judges", "-w", ws)
    assert result.exit_code == 0, result.output
    judges, pairs = result.output.split("\n\n")
    header, *lines = judges.splitlines()
    assert header.split()[:4] == ["judge", "matches", "runs", "failed_runs"]
    assert [line.split()[:4] for line in lines] == [["j1", "4", "12", "0"], ["j2", "4", "8", "0"]]
    assert pairs.splitlines()[0].split() == PAIR_KEYS
    assert pairs.splitlines()[1].split()[:3] == ["j1", "j2", "4"]


def test_bench_calls_do_not_count_as_match_calls(ws):
    db = sqlite3.connect(ws / "arena.db")
    db.execute("INSERT INTO calls (kind, match_id, role, judge, model, latency_s, cache_hit, simulated, created_at) "
               "VALUES ('llm', 'bench:x', 'judge', 'j2', 'offline/j2', 0, 0, 1, '')")
    db.commit()
    db.close()
    data = json.loads(invoke("stats", "judges", "--format", "json", "-w", ws).output)
    assert data["judges"][1]["calls_per_match"] == 2.0


# --- the schema migration that added calls.judge ------------------------------------------------------

def test_a_version_1_database_gains_the_judge_column(tmp_path):
    path = tmp_path / "arena.db"
    Store(path).close()
    db = sqlite3.connect(path)  # make it what version 1 wrote: no judge column, and a call already recorded
    # No judge column (added in version 2), nor what versions 3, 4 and 5 added.
    db.executescript("ALTER TABLE calls DROP COLUMN judge; ALTER TABLE calls DROP COLUMN structured;"
                     "ALTER TABLE calls DROP COLUMN fitted; ALTER TABLE calls DROP COLUMN finish_reason;"
                     "ALTER TABLE speeches DROP COLUMN cut; DROP TABLE models; DROP TABLE claims;"
                     "DROP TABLE ballot_links; DROP TABLE ballot_people;"
                     "UPDATE meta SET value='1' WHERE key='schema_version';"
                     "INSERT INTO calls (kind, model, latency_s, cache_hit, simulated, created_at) "
                     "VALUES ('llm', 'offline/x', 0.5, 0, 1, 'then');")
    db.close()

    store = Store(path)
    store.record_call(kind="llm", model="offline/j", latency_s=0.1, cache_hit=False, simulated=True,
                      match_id="m00001", role="judge", judge="j")
    assert SCHEMA_VERSION == 5
    assert store.conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0] == "5"
    store.remember_model("openai/m", "", structured="json_object")  # version 3's table is there
    assert store.model_facts("openai/m", "") == {"structured": "json_object"}
    assert store.pending_matches() == []  # and version 4's claims
    assert [tuple(r) for r in store.conn.execute("SELECT model, judge FROM calls ORDER BY id")] == [
        ("offline/x", None), ("offline/j", "j")]
    store.close()
    Store(path).close()  # a migrated database opens as it is
