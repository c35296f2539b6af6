"""People debating on the web, on the command line: `[people] turn_deadline_h`, `arena debaters issue | status |
extend`, and `arena match show` of a match parked at a person's turn. Turns are opened through the store, as the
engine opens them."""
from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from arena.app.commands import open_workspace
from arena.domain.ballots import token_hash
from arena.domain.records import Brief, Budget, Motion
from tests.support.helpers import TWO_OFFLINE, assert_user_error, entry, invoke, judge, new_workspace, snapshot, workspace_toml

WEB = {"via": "web"}
ENTRIES = (*TWO_OFFLINE, entry("pat", "human", "human/pat", params=WEB), entry("quill", "human", "human/quill"),
           entry("sam", "human", "human/sam", params=WEB))
# What a turn showed: only its motion matters here.
BRIEF = Brief(Motion("m1", "Cities should ban cars", "policy"), "agent4debate", "Constructive", "", (1, 6), "en",
              Budget(450, "words"))


def hours_from_now(hours: float) -> str:
    return (datetime.now(timezone.utc) + timedelta(hours=hours)).isoformat(timespec="microseconds")


def build(path: Path) -> None:
    """Two offline entries, the web debaters pat and sam, quill who writes in an editor; a round-robin of them."""
    new_workspace(path, entries=ENTRIES, judges=[judge("j", runs=1)])
    result = invoke("schedule", "--format", "round-robin", "-w", path)
    assert result.exit_code == 0, result.output


@pytest.fixture
def ws(builds, tmp_path) -> Path:
    return builds.copy("debaters-cli:ws", build, tmp_path / "ws").path


def pat_matches(path: Path) -> list[tuple[str, str]]:
    """(match id, pat's side) of each match pat plays, in schedule order."""
    rows = json.loads(invoke("match", "list", "--format", "json", "-w", path).output)
    return [(r["id"], "pro" if r["pro"] == "pat" else "con") for r in rows if "pat" in (r["pro"], r["con"])]


def open_turns(path: Path, *turns: tuple[str, str, str, str]) -> None:
    """Open each (match, stage, side, deadline) turn of pat's and park its match, as the engine does."""
    w = open_workspace(path)
    try:
        for match_id, stage, side, deadline in turns:
            w.store.open_turn(match_id, stage, side, "pat", BRIEF, deadline)
            w.store.park_match(match_id)
    finally:
        w.close()


def json_of(*args) -> object:
    result = invoke(*args, "--format", "json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


# --- [people] turn_deadline_h ---------------------------------------------------------------------------------

@pytest.mark.parametrize("section, hours", [("", 72.0), ("[people]\nturn_deadline_h = 1.5\n", 1.5),
                                            ("[people]\nturn_deadline_h = 2\n", 2.0)])
def test_turn_deadline_h_defaults_to_72_hours_and_takes_any_positive_number(tmp_path, section, hours):
    w = open_workspace(new_workspace(tmp_path / "ws", text=workspace_toml(entries=TWO_OFFLINE) + section))
    try:
        assert w.config.people.turn_deadline_h == hours and type(w.config.people.turn_deadline_h) is float
    finally:
        w.close()


@pytest.mark.parametrize("value, fragment", [("0", "above 0"), ("-3", "above 0"), ('"72"', "got '72'"),
                                             ("true", "got True"), ("1e9", "at most 8760")])
def test_a_bad_turn_deadline_exits_2_naming_the_key_and_line(tmp_path, value, fragment):
    text = workspace_toml(entries=TWO_OFFLINE) + f"\n[people]\nturn_deadline_h = {value}\n"
    line = text.splitlines().index(f"turn_deadline_h = {value}") + 1
    path = new_workspace(tmp_path / "ws", init=None, text=text)
    assert_user_error(invoke("entry", "list", "-w", path), f"arena.toml:{line}: people.turn_deadline_h", fragment)


def test_an_unknown_people_key_exits_2(tmp_path):
    path = new_workspace(tmp_path / "ws", init=None, text=workspace_toml(entries=TWO_OFFLINE)
                         + "[people]\nturn_deadline = 72\n")
    assert_user_error(invoke("entry", "list", "-w", path), "people.turn_deadline: unknown key")


# --- arena debaters issue -------------------------------------------------------------------------------------

def test_issue_gives_each_web_debater_a_link_whose_hash_the_store_holds(ws):
    rows = json_of("debaters", "issue", "-w", ws)
    assert [list(r) for r in rows] == [["entry", "url", "pending", "done"]] * 2
    assert [(r["entry"], r["pending"], r["done"]) for r in rows] == [("pat", 0, 0), ("sam", 0, 0)]
    w = open_workspace(ws)
    try:
        for row in rows:
            prefix = "http://127.0.0.1:8765/d/"  # off 8000, where local model servers listen
            assert row["url"].startswith(prefix)
            assert w.store.debater_link_holder(token_hash(row["url"].removeprefix(prefix))) == row["entry"]
    finally:
        w.close()


def test_a_new_link_replaces_the_old_one(ws):
    first = json_of("debaters", "issue", "--entry", "pat", "--base-url", "https://debate.example.org/", "-w", ws)
    second = json_of("debaters", "issue", "--entry", "pat", "--base-url", "https://debate.example.org", "-w", ws)
    assert [r["entry"] for r in first] == [r["entry"] for r in second] == ["pat"]
    old, new = (rows[0]["url"].removeprefix("https://debate.example.org/d/") for rows in (first, second))
    assert old != new and "/" not in new
    w = open_workspace(ws)
    try:
        assert w.store.debater_link_holder(token_hash(old)) is None
        assert w.store.debater_link_holder(token_hash(new)) == "pat"
    finally:
        w.close()


def test_issue_counts_pending_and_done_turns(ws):
    (m1, s1), (m2, s2) = pat_matches(ws)[:2]
    open_turns(ws, (m1, "constructive", s1, hours_from_now(24)), (m2, "constructive", s2, hours_from_now(24)))
    w = open_workspace(ws)
    try:
        assert w.store.submit_speech(m1, "constructive", s1, "My case.")
    finally:
        w.close()
    rows = json_of("debaters", "issue", "--entry", "pat", "-w", ws)
    assert (rows[0]["pending"], rows[0]["done"]) == (1, 1)


def test_issue_prints_a_table_and_says_the_link_is_shown_once(ws):
    result = invoke("debaters", "issue", "-w", ws)
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[0].split() == ["entry", "pending", "done", "url"]
    assert "/d/" in result.stdout and "shown once" in result.stderr


@pytest.mark.parametrize("name, fragments", [
    ("a", ("--entry", "entry 'a' is not a web debater", "pat, sam")),
    ("quill", ("--entry", "entry 'quill' is not a web debater", 'via = "web"')),
    ("nobody", ("--entry", "unknown entry 'nobody'")),
])
def test_issue_for_an_entry_that_is_no_web_debater_exits_2_naming_it(ws, name, fragments):
    before = snapshot(ws)
    assert_user_error(invoke("debaters", "issue", "--entry", name, "-w", ws), *fragments)
    assert snapshot(ws) == before


def test_a_base_url_that_is_no_http_url_exits_2_and_issues_nothing(ws):
    before = snapshot(ws)
    assert_user_error(invoke("debaters", "issue", "--base-url", "debate.example.org", "-w", ws), "--base-url",
                      "expected an http(s) URL")
    assert snapshot(ws) == before


# --- arena debaters status, extend ----------------------------------------------------------------------------

def test_status_lists_each_web_debaters_open_turns_with_their_deadlines(ws):
    (m1, s1), (m2, s2) = pat_matches(ws)[:2]
    soon, past = hours_from_now(5), hours_from_now(-1)
    open_turns(ws, (m1, "constructive", s1, soon), (m2, "constructive", s2, past))
    rows = json_of("debaters", "status", "-w", ws)
    assert [(r["entry"], r["pending"], r["done"], r["missed"]) for r in rows] == [("pat", 2, 0, 0), ("sam", 0, 0, 0)]
    opened = rows[0]["open"]
    assert [(t["match"], t["stage"], t["side"], t["deadline"], t["lapsed"]) for t in opened] == [
        (m1, "constructive", s1, soon, False), (m2, "constructive", s2, past, True)]
    assert all(t["since"] <= soon for t in opened) and rows[1]["open"] == []
    text = invoke("debaters", "status", "-w", ws)
    assert text.exit_code == 0, text.output
    assert m1 in text.output and soon in text.output and "lapsed" in text.output


def test_extend_moves_the_deadlines_of_open_turns(ws):
    (m1, s1), (m2, s2) = pat_matches(ws)[:2]
    soon, past = hours_from_now(5), hours_from_now(-1)
    open_turns(ws, (m1, "constructive", s1, soon), (m2, "constructive", s2, past))
    result = invoke("debaters", "extend", "--entry", "pat", "--hours", "24", "-w", ws)
    assert result.exit_code == 0, result.output
    assert "gave entry 'pat' 24 more hours on 2 turns" in result.output
    turns = {t["match"]: t for t in json_of("debaters", "status", "-w", ws)[0]["open"]}
    assert datetime.fromisoformat(turns[m1]["deadline"]) == datetime.fromisoformat(soon) + timedelta(hours=24)
    assert hours_from_now(23.9) < turns[m2]["deadline"] < hours_from_now(24)  # from now: it had lapsed
    assert not any(t["lapsed"] for t in turns.values())


def test_extend_with_no_open_turn_says_so(ws):
    result = invoke("debaters", "extend", "--entry", "sam", "--hours", "0.5", "-w", ws)
    assert result.exit_code == 0, result.output
    assert "entry 'sam' has no turn to write" in result.output


@pytest.mark.parametrize("hours", ["0", "-2", "nan", "inf", "a day", "9000"])
def test_extend_by_a_bad_number_of_hours_exits_2(ws, hours):
    assert_user_error(invoke("debaters", "extend", "--entry", "pat", "--hours", hours, "-w", ws), "--hours")


def test_extend_of_an_entry_that_is_no_web_debater_exits_2_naming_it(ws):
    assert_user_error(invoke("debaters", "extend", "--entry", "quill", "--hours", "2", "-w", ws),
                      "--entry", "'quill'")


# --- arena match show ------------------------------------------------------------------------------------------

def test_match_show_of_an_awaiting_match_names_the_turn_it_awaits(ws):
    (m1, s1), = pat_matches(ws)[:1]
    deadline = hours_from_now(10)
    open_turns(ws, (m1, "constructive", s1, deadline))
    shown = json_of("match", "show", m1, "-w", ws)
    assert shown["status"] == "awaiting"
    awaiting = shown["awaiting"]
    assert list(awaiting) == ["entry", "stage", "side", "since", "deadline"]
    assert (awaiting["entry"], awaiting["stage"], awaiting["side"], awaiting["deadline"]) == (
        "pat", "constructive", s1, deadline)
    assert awaiting["since"] < deadline
    text = invoke("match", "show", m1, "-w", ws)
    assert f"Awaiting pat's {s1.upper()} constructive speech" in text.output and deadline in text.output


def test_match_show_of_a_match_not_awaiting_has_no_awaiting_key(ws):
    scheduled = next(r["id"] for r in json_of("match", "list", "-w", ws) if "pat" not in (r["pro"], r["con"]))
    assert invoke("match", "play", "--motion", "en-fact-001", "--pro", "a", "--con", "b", "-w", ws).exit_code == 0
    played = [r for r in json_of("match", "list", "-w", ws) if r["status"] == "done"]
    assert played
    for match_id in (scheduled, played[0]["id"]):
        shown = json_of("match", "show", match_id, "-w", ws)
        assert "awaiting" not in shown and list(shown)[-1] == "score"
        assert "Awaiting" not in invoke("match", "show", match_id, "-w", ws).output
