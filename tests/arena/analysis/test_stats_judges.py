"""`arena stats judges`: side bias, failures, cost per judge; agreement and kappa per pair; the ledger's judge."""
from __future__ import annotations

import json
import sqlite3

import pytest

from arena.domain.records import JudgeCalls, Motion
from arena.analysis.stats import agreement, cohen_kappa, judge_stats, match_outcome, side_bias
from arena.store import SCHEMA_VERSION, Store
from tests.support.verdicts import judged
from tests.support.helpers import PEOPLE, TWO_OFFLINE, SINCE_VERSION_10, invoke, judge, new_workspace, play_with

JUDGE_KEYS = ["judge", "matches", "runs", "failed_runs", "pro_wins", "con_wins", "ties", "pro_win_rate",
              "side_bias_p", "calls_per_match", "cost_per_match", "identical_runs", "self_contradictions"]
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
    return judged(match_id, judge, overall, error=error)


def test_judge_stats_on_hand_made_rows():
    rows = [
        v("A", "m1", "pro"), v("A", "m1", "pro"), v("A", "m1", "con"),   # pro
        v("A", "m2", "con"), v("A", "m2", "tie"), v("A", "m2", "pro"),   # 1.5–1.5: tie
        v("A", "m3", "pro"), v("A", "m3", None, "timeout"), v("A", "m3", "pro"),  # failed run: not rated
        v("A", "m4", "pro"), v("A", "m4", "pro"), v("A", "m4", "pro"),   # pro
        v("B", "m1", "con"), v("B", "m2", "pro"), v("B", "m3", "pro"), v("B", "m4", "pro"),
    ]
    calls = [JudgeCalls("A", "m1", 3, 0.03), JudgeCalls("A", "m2", 5, 0.01), JudgeCalls("B", "m1", 1, None)]
    out = judge_stats(rows, calls, ["C", "B"])
    assert [r["judge"] for r in out["judges"]] == ["C", "B", "A"]  # configured first, then the rest
    c, b, a = out["judges"]
    assert a == {"judge": "A", "matches": 4, "runs": 12, "failed_runs": 1, "pro_wins": 2, "con_wins": 0, "ties": 1,
                 "pro_win_rate": 1.0, "side_bias_p": 0.5, "calls_per_match": 4.0,
                 "cost_per_match": pytest.approx(0.02),
                 "identical_runs": pytest.approx(1 / 3),  # of m1, m2 and m4 (m3 failed), m4's runs are one answer
                 "self_contradictions": 0}
    assert (b["pro_wins"], b["con_wins"], b["calls_per_match"], b["cost_per_match"]) == (3, 1, 1.0, None)
    assert b["identical_runs"] is None  # one run per match: nothing to repeat
    assert c == {"judge": "C", "matches": 0, "runs": 0, "failed_runs": 0, "pro_wins": 0, "con_wins": 0, "ties": 0,
                 "pro_win_rate": None, "side_bias_p": None, "calls_per_match": None, "cost_per_match": None,
                 "identical_runs": None, "self_contradictions": 0}
    pairs = {(p["a"], p["b"]): p for p in out["pairs"]}
    assert list(pairs) == [("C", "B"), ("C", "A"), ("B", "A")]
    assert pairs[("C", "B")]["matches"] == 0 and pairs[("C", "B")]["kappa"] is None
    # A and B both rated m1 (pro/con), m2 (tie/pro), m4 (pro/pro); m3 is out, A failed on it.
    ba = pairs[("B", "A")]
    assert ba["matches"] == 3
    assert ba["agreement"] == pytest.approx(2 / 3)
    # B: con, pro, pro; A: pro, tie, pro. p_o = 1/3; p_e = (2/3)(2/3) + (1/3)(0) + 0 = 4/9.
    assert ba["kappa"] == pytest.approx((1 / 3 - 4 / 9) / (1 - 4 / 9))


def b(judge, match_id, run, overall):
    return judged(match_id, judge, overall, run=run)


def test_people_are_compared_pair_by_pair_and_with_each_llm_judge():
    people = {"H": {0: "ann", 1: "bo", 2: "cy"}}
    rows = [
        b("H", "m1", 0, "pro"), b("H", "m1", 1, "pro"), b("H", "m1", 2, "con"),  # 2–1: pro
        b("H", "m2", 0, "con"), b("H", "m2", 1, "tie"),                          # cy cast none: 0.5–1.5, con
        b("H", "m3", 0, "pro"),                                                  # ann alone: pro
        b("H", "m4", 1, "tie"), b("H", "m4", 2, "pro"),                          # bo and cy only: 1.5–0.5, pro
        v("L", "m1", "con"), v("L", "m2", "con"), v("L", "m3", "con"), v("L", "m5", "pro"),
    ]
    out = judge_stats(rows, [], ["L", "H"], people)
    assert list(out) == ["judges", "pairs", "people", "people_vs_judges"]
    h = out["judges"][1]
    assert (h["judge"], h["matches"], h["runs"], h["pro_wins"], h["con_wins"], h["ties"]) == ("H", 4, 8, 3, 1, 0)
    # The judge of people is a judge like any: its majority (pro, con, pro on m1-m3) against L (con, con, con).
    (pair,) = out["pairs"]
    assert (pair["a"], pair["b"], pair["matches"], pair["agreement"]) == ("L", "H", 3, pytest.approx(1 / 3))
    assert pair["kappa"] == pytest.approx(0.0)  # p_o = 1/3 = p_e: L always says con
    # Pairs of people, over the matches both cast a ballot on.
    assert [(p["judge"], p["a"], p["b"], p["matches"]) for p in out["people"]] == [
        ("H", "ann", "bo", 2), ("H", "ann", "cy", 1), ("H", "bo", "cy", 2)]
    ann_bo, ann_cy, bo_cy = out["people"]
    assert ann_bo["agreement"] == 1.0  # (pro, pro) and (con, tie): a tie is consistent with anything
    assert ann_bo["kappa"] == pytest.approx((1 / 2 - 1 / 4) / (1 - 1 / 4))  # p_o = 1/2; p_e = ½·½ (pro)
    assert (ann_cy["agreement"], ann_cy["kappa"]) == (0.0, 0.0)  # m1, pro against con: p_o = 0 = p_e
    assert bo_cy["agreement"] == 0.5  # m1 (pro, con) no, m4 (tie, pro) yes
    assert bo_cy["kappa"] == pytest.approx((0 - 1 / 4) / (1 - 1 / 4))  # p_e = ½·½ (pro)
    # Each person against the judges not of people.
    assert [(p["person"], p["vs"], p["matches"], p["agreement"]) for p in out["people_vs_judges"]] == [
        ("ann", "L", 3, pytest.approx(1 / 3)), ("bo", "L", 2, 0.5), ("cy", "L", 1, 1.0)]


def test_people_with_no_ballots_pair_over_no_matches():
    out = judge_stats([], [], ["H"], {"H": {0: "ann", 1: "bo"}})
    assert out["people"] == [{"judge": "H", "a": "ann", "b": "bo", "matches": 0, "agreement": None, "kappa": None}]
    assert out["people_vs_judges"] == []  # no judge but people to compare with


# --- on a workspace ---------------------------------------------------------------------------------

def build_ws(path):
    new_workspace(path, entries=TWO_OFFLINE, judges=[judge("j1", runs=3), judge("j2", runs=2)], init=None)
    play_with(path, "j1", rounds=2)
    assert invoke("judge", "--judge", "j2", "-w", path).exit_code == 0


@pytest.fixture
def ws(builds, tmp_path):
    """The test's own copy of build_ws's workspace (played once per test process)."""
    return builds.copy("stats_judges:ws", build_ws, tmp_path / "ws").path


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
    assert list(data) == ["judges", "pairs", "people", "people_vs_judges"]
    assert data["people"] == data["people_vs_judges"] == []  # no judge of people
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


def build_with_people(path):
    """Judge j1 (R = 3) on four matches, and the people of judge experts: ann follows j1, bo always says pro,
    cy cast ballots on two matches only (ties). Returns the outcomes of j1 by match."""
    from arena.app.commands import open_workspace
    from arena.domain.records import Ballot

    new_workspace(path, entries=TWO_OFFLINE, judges=[judge("j1", runs=3), PEOPLE], init=None)
    play_with(path, "j1", rounds=2)
    ws = open_workspace(path)
    try:
        runs = ws.store.judged_verdicts("j1")
        outcomes = {m: match_outcome(*score) for m, score in _points(runs).items()}
        ballots = [Ballot(m, "ann", o) for m, o in outcomes.items()] + [Ballot(m, "bo", "pro") for m in outcomes]
        ballots += [Ballot(m, "cy", "tie") for m in list(outcomes)[:2]]
        ws.store.cast_ballots("experts", ("ann", "bo", "cy"), ballots, simulated=False)
    finally:
        ws.close()
    assert len(outcomes) == 4
    return outcomes


@pytest.fixture
def with_people(builds, tmp_path):
    """The test's own copy of build_with_people's workspace (played once per test process), and j1's outcomes."""
    built = builds.copy("stats_judges:with_people", build_with_people, tmp_path / "ws")
    return built.path, built.value


def _points(rows) -> dict[str, tuple[float, float]]:
    """match → (PRO, CON) points of a judge's runs, counted here by hand."""
    points: dict[str, list[float]] = {}
    for r in rows:
        pro, con = points.setdefault(r.match_id, [0.0, 0.0])
        points[r.match_id] = [pro + {"pro": 1, "tie": 0.5}.get(r.verdict.overall, 0),
                              con + {"con": 1, "tie": 0.5}.get(r.verdict.overall, 0)]
    return {m: tuple(p) for m, p in points.items()}


def test_stats_judges_json_with_a_judge_of_people(with_people):
    path, j1 = with_people
    result = invoke("stats", "judges", "--format", "json", "-w", path)
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert [list(r) for r in data["judges"]] == [JUDGE_KEYS, JUDGE_KEYS]
    experts = data["judges"][1]
    assert (experts["judge"], experts["matches"], experts["runs"], experts["calls_per_match"]) == (
        "experts", 4, 10, None)
    # The people's majority: ann (= j1) and bo (pro), with cy's tie on two matches.
    majority = {m: "pro" if o in ("pro", "tie") else "tie" for m, o in j1.items()}
    (pair,) = data["pairs"]
    assert list(pair) == PAIR_KEYS and (pair["a"], pair["b"], pair["matches"]) == ("j1", "experts", 4)
    assert pair["agreement"] == agreement(list(j1.values()), list(majority.values()))
    assert pair["kappa"] == cohen_kappa(list(j1.values()), list(majority.values()))
    assert [list(p) for p in data["people"]] == [["judge", *PAIR_KEYS]] * 3
    assert [(p["a"], p["b"], p["matches"]) for p in data["people"]] == [("ann", "bo", 4), ("ann", "cy", 2),
                                                                         ("bo", "cy", 2)]
    ann_bo = data["people"][0]
    assert ann_bo["agreement"] == agreement(list(j1.values()), ["pro"] * 4)
    assert data["people"][1]["agreement"] == data["people"][2]["agreement"] == 1.0  # cy's ties agree with anything
    assert [list(p) for p in data["people_vs_judges"]] == [["judge", "person", "vs", *PAIR_KEYS[2:]]] * 3
    ann = data["people_vs_judges"][0]
    assert (ann["person"], ann["vs"], ann["matches"], ann["agreement"]) == ("ann", "j1", 4, 1.0)


def test_stats_judges_table_with_a_judge_of_people(with_people):
    path, _ = with_people
    result = invoke("stats", "judges", "-w", path)
    assert result.exit_code == 0, result.output
    judges, pairs, people, versus = result.output.split("\n\n")
    assert [line.split()[:3] for line in judges.splitlines()[1:]] == [["j1", "4", "12"], ["experts", "4", "10"]]
    assert pairs.splitlines()[0].split() == PAIR_KEYS
    assert people.splitlines()[0].split() == ["judge", *PAIR_KEYS]
    assert [line.split()[:4] for line in people.splitlines()[1:]] == [
        ["experts", "ann", "bo", "4"], ["experts", "ann", "cy", "2"], ["experts", "bo", "cy", "2"]]
    assert versus.splitlines()[0].split() == ["judge", "person", "vs", "matches", "agreement", "kappa"]
    assert [line.split()[:5] for line in versus.splitlines()[1:]] == [
        ["experts", "ann", "j1", "4", "1.000"], ["experts", "bo", "j1", "4", agreement_text(path)],
        ["experts", "cy", "j1", "2", "1.000"]]


def agreement_text(path) -> str:
    data = json.loads(invoke("stats", "judges", "--format", "json", "-w", path).output)
    return f"{data['people_vs_judges'][1]['agreement']:.3f}"


# --- each judge's last attack run (arena judge-attacks) ------------------------------------------------

ROBUSTNESS_KEYS = ["judge", "attack", "trials", "flips", "flip_rate", "ci_low", "ci_high", "caught", "flips_uncaught",
                   "calls", "cost", "simulated", "ran_at"]


def test_stats_judges_json_adds_each_attacked_judges_last_run_and_changes_nothing_else(ws):
    from arena.app import commands as app

    before = json.loads(invoke("stats", "judges", "--format", "json", "-w", ws).output)
    assert "robustness" not in before  # no run stored: the figures as they always were
    quiet = lambda line: None  # noqa: E731
    opened = app.open_workspace(ws)
    try:
        app.judge_attacks(opened, "j2", attacks=["padding", "null"], matches=2, progress=quiet)
        j1 = app.judge_attacks(opened, "j1", attacks=["injection", "swap"], matches=3, progress=quiet)
        j2 = app.judge_attacks(opened, "j2", attacks=["citations", "assertive", "null"], matches=2, progress=quiet)
        began = {r.judge: r.ran_at for r in opened.store.attack_results()}
    finally:
        opened.close()
    data = json.loads(invoke("stats", "judges", "--format", "json", "-w", ws).output)
    assert list(data) == ["judges", "pairs", "people", "people_vs_judges", "robustness"]
    assert {k: v for k, v in data.items() if k != "robustness"} == before  # attacking a judge rates nothing
    assert [list(r) for r in data["robustness"]] == [ROBUSTNESS_KEYS] * 5
    # What each judge's last run found, as judge-attacks said it, with when it began: j1 first (the judges table's
    # order), then j2, whose second run took the place of its first.
    assert data["robustness"] == [{**row, "ran_at": began[row["judge"]]} for row in [*j1, *j2]]
    assert began["j1"] < began["j2"] and all(r["simulated"] and r["trials"] > 0 for r in data["robustness"])


def test_stats_judges_table_has_a_robustness_line_per_attacked_judge(ws):
    from arena.app import commands as app
    from arena.analysis.bias import wilson
    from arena.domain.records import AttackResult

    before = invoke("stats", "judges", "-w", ws).output
    assert "robustness" not in before
    opened = app.open_workspace(ws)
    try:
        opened.store.save_attack_results("j2", [
            AttackResult("j2", "padding", 4, 3, *wilson(3, 4), 0, 8, 0.0, True, "2026-12-02T10:15:00+00:00"),
            AttackResult("j2", "null", 4, 1, *wilson(1, 4), 8, 8, 0.0, True, "2026-12-02T10:15:00+00:00"),
            AttackResult("j2", "swap", 0, 0, None, None, 0, 0, None, True, "2026-12-02T10:15:00+00:00")])
        opened.store.save_attack_results("j1", [
            AttackResult("j1", "injection", 3, 0, *wilson(0, 3), 0, 9, 0.0, False, "2026-11-30T23:59:59+00:00")])
    finally:
        opened.close()
    result = invoke("stats", "judges", "-w", ws)
    assert result.exit_code == 0, result.output
    judges, robustness, pairs = result.output.split("\n\n")
    assert [judges, pairs] == before.split("\n\n")  # the tables as they were, the lines between them

    def rate(flips: int, trials: int) -> str:
        low, high = wilson(flips, trials)
        return f"{flips / trials:.2f}, {low:.2f}–{high:.2f}"

    assert robustness.splitlines() == [
        f"robustness of 'j1' (attacked 2026-11-30, 3 matches): injection 0/3 flipped ({rate(0, 3)}); "
        "caught by the speech checks: none",
        f"robustness of 'j2' (attacked 2026-12-02, 4 matches): padding 3/4 flipped ({rate(3, 4)}), null 1/4 "
        f"({rate(1, 4)}), swap 0/0 (n/a); caught by the speech checks: null 8 — SIMULATED"]


# --- the schema migration that added calls.judge ------------------------------------------------------

def test_a_version_1_database_gains_the_judge_column(tmp_path):
    path = tmp_path / "arena.db"
    Store(path).close()
    db = sqlite3.connect(path)  # make it what version 1 wrote: no judge column, and a call already recorded
    # No judge column (added in version 2), nor what versions 3 to 14 added.
    db.executescript("ALTER TABLE calls DROP COLUMN judge; ALTER TABLE calls DROP COLUMN structured;"
                     "ALTER TABLE calls DROP COLUMN fitted; ALTER TABLE calls DROP COLUMN finish_reason;"
                     "ALTER TABLE speeches DROP COLUMN cut; DROP TABLE models; DROP TABLE claims;"
                     "DROP TABLE ballot_links; DROP TABLE ballot_people; DROP TABLE ballot_closures;"
                     "ALTER TABLE motions DROP COLUMN pro_text; ALTER TABLE motions DROP COLUMN con_text;"
                     "ALTER TABLE matches DROP COLUMN forfeit; ALTER TABLE matches DROP COLUMN forfeit_reason;"
                     "ALTER TABLE matches DROP COLUMN format; ALTER TABLE verdicts DROP COLUMN extra;"
                     "DROP TABLE agent_messages; DROP TABLE message_blocks; DROP TABLE ledger_total;"
                     "DROP TRIGGER ledger_total_insert; DROP TRIGGER ledger_total_update; DROP TRIGGER ledger_total_delete;"
                     + SINCE_VERSION_10 +
                     "CREATE TABLE agent_messages (id INTEGER PRIMARY KEY, match_id TEXT NOT NULL, stage TEXT,"
                     " side TEXT, role TEXT NOT NULL, prompt TEXT NOT NULL, response TEXT NOT NULL,"
                     " created_at TEXT NOT NULL);"
                     "UPDATE meta SET value='1' WHERE key='schema_version';"
                     "INSERT INTO calls (kind, model, latency_s, cache_hit, simulated, created_at) "
                     "VALUES ('llm', 'offline/x', 0.5, 0, 1, 'then');")
    db.close()

    store = Store(path)
    store.record_call(kind="llm", model="offline/j", latency_s=0.1, cache_hit=False, simulated=True,
                      match_id="m00001", role="judge", judge="j")
    assert SCHEMA_VERSION == 14
    assert store.conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0] == "14"
    stamp = store.change_stamp()  # version 11's change stamp, renewed by the call recorded above ...
    store.add_motions([Motion("m1", "A motion.", "fact")])
    assert store.change_stamp() != stamp  # ... and by every later write of what the site shows
    store.remember_model("openai/m", "", structured="json_object")  # version 3's table is there
    assert store.model_facts("openai/m", "") == {"structured": "json_object"}
    assert store.pending_matches() == []  # and version 4's claims
    assert store.forfeit_counts() == {}  # and version 7's forfeits
    assert store.closed_judges() == {}  # and version 8's closed ballots
    assert [tuple(r) for r in store.conn.execute("SELECT format FROM matches")] == []  # and version 9's formats
    assert "extra" in {r[1] for r in store.conn.execute("PRAGMA table_info(verdicts)")}
    assert store.spent() == 0.0 and store.agent_messages("m00001") == []  # and version 10's lean store
    # and version 13's cached tokens: none for a call recorded before
    assert [tuple(r) for r in store.conn.execute("SELECT model, judge, cached_tokens FROM calls ORDER BY id")] == [
        ("offline/x", None, 0), ("offline/j", "j", 0)]
    assert store.attack_results() == []  # and version 14's judge attacks
    store.close()
    Store(path).close()  # a migrated database opens as it is
