"""Judges of people: the `human` kind in arena.toml, `arena ballots issue | status | import`, and the rule that
the arena itself never runs them. Ballots are read back from the database as the verdicts they become."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from arena.app.commands import open_workspace
from arena.domain.ballots import queue, token_hash
from tests.support.helpers import PEOPLE, TWO_OFFLINE, assert_user_error, invoke, judge, new_workspace, snapshot

QUICK = judge("quick", model="offline/judge", runs=1)


def build_played(path: Path) -> None:
    """A workspace whose two offline entries played a round-robin (2 matches), judged by `quick` only; the judge of
    people "experts" (ann, bo, cy) beside it."""
    ws = new_workspace(path, entries=TWO_OFFLINE, judges=[QUICK, PEOPLE], init="cli")
    assert invoke("schedule", "--format", "round-robin", "-w", ws).exit_code == 0
    result = invoke("run", "-w", ws)
    assert result.exit_code == 0, result.output


@pytest.fixture
def played(builds, tmp_path) -> Path:
    """The test's own copy of build_played's workspace (built once per test process)."""
    return builds.copy("ballots:played", build_played, tmp_path / "ws").path


def verdicts(ws: Path, judge: str) -> list[tuple]:
    w = open_workspace(ws)
    try:
        return [(v.match_id, v.verdict.run, v.verdict.overall, dict(v.verdict.dimensions), v.verdict.rationale,
                 v.simulated)
                for v in w.store.judged_verdicts(judge)]
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
    assert again[0]["url"].startswith("http://127.0.0.1:8765/b/")
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
    assert "stored 3 ballots of 2 people" in result.output
    assert verdicts(played, "experts") == [
        ("m00001", 0, "con", {"argument": "con", "source": "con", "language": "con"}, "changed my mind", 0),
        ("m00001", 1, "con", {}, "", 0),
        ("m00002", 0, "tie", {"argument": "tie", "source": "tie", "language": "tie"}, "close", 0)]
    status = json.loads(invoke("ballots", "status", "--format", "json", "-w", played).stdout)
    # Open, so the two matches, each missing a ballot of someone's, are embargoed on the published site.
    assert status == [{"judge": "experts", "person": p, "assigned": 2, "cast": n, "state": "open", "embargoed": 2}
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


# A spreadsheet's export of ballots whose third row's rationale opens a quote: the ten rows after it are rows of
# their own (each line a whole ballot), not the rationale's.
ROWS = [f"m0000{1 + k % 2},{('ann', 'bo', 'cy')[k % 3]},{('pro', 'con', 'tie')[k % 3]},row {k}" for k in range(12)]
OPENED = "m00002,cy,con,\"Strong start, weak close"


@pytest.mark.parametrize("lines, fragments", [
    # The quote is never closed: the record runs to the end of the file.
    ([*ROWS[:2], OPENED, *ROWS[2:]], ("ballots.csv:4:", "never closed", "end of the file (line 14)")),
    # A later row's quote closes it, so the record parses, having swallowed the rows between.
    ([*ROWS[:2], OPENED, *ROWS[2:11], 'm00001,bo,pro,fine"'], ("ballots.csv:4:", "over line 5",
                                                               "a ballot row of its own")),
    # Closed by the opening quote of a later row's field, which leaves text after it.
    ([*ROWS[:2], OPENED, *ROWS[2:11], 'm00001,bo,pro,"fine"'], ("ballots.csv:4:", "after a closing quote on line 14")),
])
def test_an_unclosed_quote_refuses_the_file_naming_the_line_where_its_record_began(played, tmp_path, lines,
                                                                                   fragments):
    path = tmp_path / "ballots.csv"
    path.write_text("match_id,person,overall,rationale\n" + "\n".join(lines) + "\n", encoding="utf-8")
    before = hashlib.sha256((played / "arena.db").read_bytes()).hexdigest()
    assert_user_error(invoke("ballots", "import", path, "--judge", "experts", "-w", played), *fragments)
    assert hashlib.sha256((played / "arena.db").read_bytes()).hexdigest() == before
    assert verdicts(played, "experts") == []


@pytest.mark.parametrize("text, fragments", [
    # Text after a closing quote, which a lenient reader would glue on.
    ("match_id,person,overall,rationale\nm00001,ann,pro,ok\nm00002,ann,con,\"good\" point\n",
     ("ballots.csv:3:", "after a closing quote")),
    ("match_id,person,overall,rationale\nm00001,ann,pro,\"a\nb\" c\n", ("ballots.csv:2:", "after a closing quote")),
    # The rationale first: the swallowed row is found by the header's match_id and person columns.
    ("rationale,match_id,person,overall\n\"Sharp,m00001,ann,pro\nunclosed,m00002,bo,con\nend\",m00002,cy,tie\n",
     ("ballots.csv:2:", "over line 3")),
    # Too many fields, one of them quoted across lines.
    ("match_id,person,overall\nm00001,ann,pro,\"x\ny\"\n", ("ballots.csv:2:", "3 columns expected", "got 4")),
])
def test_what_a_lenient_reader_would_let_through_is_refused(played, tmp_path, text, fragments):
    path = tmp_path / "ballots.csv"
    path.write_text(text, encoding="utf-8")
    assert_user_error(invoke("ballots", "import", path, "--judge", "experts", "-w", played), *fragments)
    assert verdicts(played, "experts") == []


def test_a_rationale_over_several_lines_with_commas_and_match_ids_in_its_prose_is_kept_whole(played, tmp_path):
    rationale = ("Clearer case, better rebuttal.\r\nm00002, by contrast, was closer;\r\nann, bo and cy agree:\r\n"
                 "m00001 ann pro\r\n\r\n1,2,3,4 \"quoted\"")
    path = tmp_path / "ballots.csv"
    quoted = rationale.replace('"', '""')
    path.write_text(f"match_id,person,overall,rationale\r\nm00001,ann,pro,\"{quoted}\"\r\nm00002,bo,con,short\r\n",
                    encoding="utf-8", newline="")
    result = invoke("ballots", "import", path, "--judge", "experts", "-w", played)
    assert result.exit_code == 0, result.output
    assert [(v[0], v[1], v[2], v[4]) for v in verdicts(played, "experts")] == [
        ("m00001", 0, "pro", rationale.replace("\r\n", "\n")), ("m00002", 1, "con", "short")]  # read as text
