"""Judges of people: the `human` kind in arena.toml, `arena ballots issue | status | import`, and the rule that
the arena itself never runs them. Ballots are read back from the database as the verdicts they become."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from arena.app.commands import open_workspace
from arena.ballots import queue, token_hash
from tests.helpers import PEOPLE, TWO_OFFLINE, assert_user_error, invoke, judge, new_workspace, snapshot

QUICK = judge("quick", model="offline/judge", runs=1)


@pytest.fixture
def played(tmp_path) -> Path:
    """A workspace whose two offline entries played a round-robin (2 matches), judged by `quick` only; the judge of
    people "experts" (ann, bo, cy) beside it."""
    ws = new_workspace(tmp_path / "ws", entries=TWO_OFFLINE, judges=[QUICK, PEOPLE], init="cli")
    assert invoke("schedule", "--format", "round-robin", "-w", ws).exit_code == 0
    result = invoke("run", "-w", ws)
    assert result.exit_code == 0, result.output
    return ws


def verdicts(ws: Path, judge: str) -> list[tuple]:
    w = open_workspace(ws)
    try:
        return [(r["match_id"], r["run"], r["overall"], json.loads(r["dimensions"]), r["rationale"], r["simulated"])
                for r in w.store.verdict_rows(judge)]
    finally:
        w.close()


def test_a_human_judge_needs_no_model_and_has_one_run_per_person(played):
    ws = open_workspace(played)
    try:
        experts = ws.config.judge("experts")
        assert (experts.runs, experts.people, experts.casts_ballots, experts.simulated) == (3, ("ann", "bo", "cy"),
                                                                                             True, False)
        assert [j.name for j in ws.config.automatic_judges] == ["quick"]
    finally:
        ws.close()


def test_arena_run_and_judge_never_run_people(played):
    assert [v[:2] for v in verdicts(played, "quick")] == [("m00001", 0), ("m00002", 0)]
    assert verdicts(played, "experts") == []
    assert_user_error(invoke("judge", "--judge", "experts", "-w", played), "--judge", "'experts'",
                      "arena ballots issue", "arena ballots import")
    assert invoke("judge", "-w", played).exit_code == 0  # every judge the arena runs: quick, already done
    assert verdicts(played, "experts") == []


@pytest.mark.parametrize("judge, fragments", [
    ('[[judges]]\nname = "p"\nkind = "human"\n', ("arena.toml:1: judges[0]", "people")),
    ('[[judges]]\nname = "p"\nkind = "human"\n[judges.options]\npeople = []\n', ("judges[0].options.people", "people")),
    ('[[judges]]\nname = "p"\nkind = "human"\n[judges.options]\npeople = ["ann", "ann"]\n',
     ("judges[0].options.people", "'ann' is listed twice")),
    ('[[judges]]\nname = "p"\nkind = "human"\n[judges.options]\npeople = ["a b"]\n',
     ("judges[0].options.people", "'a b'")),
    ('[[judges]]\nname = "p"\nkind = "human"\nruns = 2\n[judges.options]\npeople = ["ann"]\n',
     ("arena.toml:4: judges[0].runs", "number of people")),
    ('[[judges]]\nname = "p"\nkind = "human"\n[judges.options]\npeople = ["ann"]\ntemperature = 0.5\n',
     ("judges[0].options", "temperature")),
    ('[[judges]]\nname = "p"\nkind = "single"\n', ("judges[0]", "missing required key 'model'")),
])
def test_bad_human_judges_exit_2_naming_the_key(tmp_path, judge, fragments):
    ws = tmp_path / "ws"
    assert invoke("init", ws).exit_code == 0
    (ws / "arena.toml").write_text(judge, encoding="utf-8")
    before = snapshot(ws)
    assert_user_error(invoke("entry", "list", "-w", ws), *fragments)
    assert snapshot(ws) == before


def test_issue_gives_each_person_a_private_link_stored_only_as_a_hash(played):
    result = invoke("ballots", "issue", "--judge", "experts", "--base-url", "http://10.0.0.5:9000/", "--format",
                    "json", "-w", played)
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert [(r["person"], r["assigned"], r["cast"]) for r in rows] == [("ann", 2, 0), ("bo", 2, 0), ("cy", 2, 0)]
    tokens = [r["url"].removeprefix("http://10.0.0.5:9000/b/") for r in rows]
    assert all(len(t) >= 32 and "/" not in t for t in tokens) and len(set(tokens)) == 3
    db = (played / "arena.db").read_bytes()
    assert not any(t.encode() in db for t in tokens)  # only hashes are kept
    ws = open_workspace(played)
    try:
        assert [ws.store.link_holder(token_hash(t)) for t in tokens] == [("experts", p) for p in ("ann", "bo", "cy")]
        assert ws.store.link_holder(token_hash(tokens[0] + "x")) is None
    finally:
        ws.close()
    again = json.loads(invoke("ballots", "issue", "--judge", "experts", "--format", "json", "-w", played).stdout)
    assert again[0]["url"].startswith("http://127.0.0.1:8000/b/")
    ws = open_workspace(played)
    try:  # a new link replaces the old one
        assert ws.store.link_holder(token_hash(tokens[0])) is None
        assert ws.store.link_holder(token_hash(again[0]["url"].rsplit("/", 1)[1])) == ("experts", "ann")
    finally:
        ws.close()


def test_each_person_has_their_own_stable_order():
    ids = [f"m{k:05d}" for k in range(1, 21)]
    orders = {p: queue("experts", p, ids) for p in ("ann", "bo", "cy")}
    assert all(sorted(o) == ids for o in orders.values())
    assert len({tuple(o) for o in orders.values()}) == 3
    assert queue("experts", "ann", reversed(ids)) == orders["ann"]


CSV = ("match_id,person,overall,argument,source,language,rationale\n"
       "m00001,ann,pro,pro,tie,con,\"Clearer case,\nbetter rebuttal\"\n"
       "m00001,bo,CON,,,,\n"
       "m00002,ann,tie,tie,tie,tie,close\n"
       "m00001,ann,con,con,con,con,changed my mind\n")


def test_import_stores_ballots_as_verdicts_by_person_and_a_later_row_replaces(played, tmp_path):
    path = tmp_path / "ballots.csv"
    path.write_text(CSV, encoding="utf-8")
    result = invoke("ballots", "import", path, "--judge", "experts", "-w", played)
    assert result.exit_code == 0, result.output
    assert "stored 3 ballot(s) of 2 person(s)" in result.output
    assert verdicts(played, "experts") == [
        ("m00001", 0, "con", {"argument": "con", "source": "con", "language": "con"}, "changed my mind", 0),
        ("m00001", 1, "con", {}, "", 0),
        ("m00002", 0, "tie", {"argument": "tie", "source": "tie", "language": "tie"}, "close", 0)]
    status = json.loads(invoke("ballots", "status", "--format", "json", "-w", played).stdout)
    assert status == [{"judge": "experts", "person": p, "assigned": 2, "cast": n}
                      for p, n in (("ann", 2), ("bo", 1), ("cy", 0))]
    rated = json.loads(invoke("rate", "--judge", "experts", "--format", "json", "--bootstrap", "20", "-w",
                              played).stdout)
    assert rated["meta"]["matches"] == 2 and {r["entry"] for r in rated["ratings"]} == {"a", "b"}


@pytest.mark.parametrize("text, fragments", [
    ("", ("ballots.csv:1", "empty", "match_id,person,overall")),
    ("match_id,person,winner\n", ("ballots.csv:1", "unknown column 'winner'")),
    ("match_id,overall\n", ("ballots.csv:1", "no person column")),
    ("match_id,person,overall\nm00001,ann,pro\nm00009,ann,pro\n", ("ballots.csv:3", "m00009", "not a done match")),
    ("match_id,person,overall\nm00001,dan,pro\n", ("ballots.csv:2", "person 'dan'", "ann, bo, cy")),
    ("match_id,person,overall\nm00001,ann,maybe\n", ("ballots.csv:2", "overall", "pro, con or tie", "'maybe'")),
    ("match_id,person,overall\nm00001,ann,\n", ("ballots.csv:2", "overall", "missing")),
    ("match_id,person,overall,source\nm00001,ann,pro,best\n", ("ballots.csv:2", "source", "'best'")),
    ("match_id,person,overall,rationale\nm00001,ann,pro,\"a\nb\"\nm00002,ann,x,y\n", ("ballots.csv:4", "overall")),
    ("match_id,person,overall\nm00001,ann,pro,extra\n", ("ballots.csv:2", "columns")),
    ("match_id,person,overall,rationale\nm00001,ann,pro," + "x" * 20_001 + "\n", ("ballots.csv:2", "rationale")),
])
def test_a_bad_row_exits_2_naming_file_and_line_and_stores_nothing(played, tmp_path, text, fragments):
    path = tmp_path / "ballots.csv"
    path.write_text(text, encoding="utf-8")
    before = hashlib.sha256((played / "arena.db").read_bytes()).hexdigest()
    assert_user_error(invoke("ballots", "import", path, "--judge", "experts", "-w", played), *fragments)
    assert hashlib.sha256((played / "arena.db").read_bytes()).hexdigest() == before


@pytest.mark.parametrize("args, fragments", [
    (("ballots", "issue", "--judge", "quick"), ("--judge", "'quick'", "single judge", "experts")),
    (("ballots", "issue", "--judge", "nobody"), ("--judge", "unknown judge 'nobody'")),
    (("ballots", "issue", "--judge", "experts", "--base-url", "ftp://x"), ("--base-url", "http(s)")),
    (("ballots", "status", "--judge", "quick"), ("--judge", "'quick'")),
    (("ballots", "import", "missing.csv", "--judge", "experts"), ("missing.csv", "no such file")),
])
def test_bad_ballot_commands_exit_2_and_write_nothing(played, args, fragments):
    before = hashlib.sha256((played / "arena.db").read_bytes()).hexdigest()
    assert_user_error(invoke(*args, "-w", played), *fragments)
    assert hashlib.sha256((played / "arena.db").read_bytes()).hexdigest() == before


def test_people_keep_their_place_once_they_have_ballots(played, tmp_path):
    path = tmp_path / "ballots.csv"
    path.write_text("match_id,person,overall\nm00001,bo,pro\n", encoding="utf-8")
    assert invoke("ballots", "import", path, "--judge", "experts", "-w", played).exit_code == 0
    toml = played / "arena.toml"
    text = toml.read_text(encoding="utf-8")
    toml.write_text(text.replace('["ann", "bo", "cy"]', '["ann", "bo", "cy", "dee"]'), encoding="utf-8")
    assert invoke("ballots", "status", "-w", played).exit_code == 0  # adding at the end is fine
    toml.write_text(text.replace('["ann", "bo", "cy"]', '["bo", "ann", "cy"]'), encoding="utf-8")
    assert_user_error(invoke("ballots", "status", "-w", played), "judges[1].options.people", "'bo'",
                      "place 2", "found 'ann'")


def test_import_reads_spreadsheet_csv_with_a_byte_order_mark_and_names_lines_after_blank_ones(played, tmp_path):
    path = tmp_path / "ballots.csv"
    path.write_text("\ufeffmatch_id,person,overall\r\nm00001,ann,pro\r\n\r\nm00002,bo,con\r\n", encoding="utf-8")
    assert invoke("ballots", "import", path, "--judge", "experts", "-w", played).exit_code == 0
    assert [v[:3] for v in verdicts(played, "experts")] == [("m00001", 0, "pro"), ("m00002", 1, "con")]
    path.write_text("match_id,person,overall\n\nm00001,ann,pro\n\n\nm00002,bo,nope\n", encoding="utf-8")
    assert_user_error(invoke("ballots", "import", path, "--judge", "experts", "-w", played), "ballots.csv:6",
                      "'nope'")
