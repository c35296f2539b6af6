"""`arena judge`: a judge added later rates old transcripts; failed runs are retried; --rejudge replaces."""
from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from arena.app import commands as app
from arena.app.commands import open_workspace
from arena.base.errors import UserError
from tests.support.helpers import (TWO_OFFLINE, VERDICT, assert_user_error, invoke, judge, new_workspace, play_with, snapshot,
                           workspace_toml)


def verdicts(path: Path) -> list[tuple]:
    db = sqlite3.connect(path / "arena.db")
    try:
        return db.execute("SELECT match_id, judge, run, overall, error, created_at FROM verdicts "
                          "ORDER BY match_id, judge, run").fetchall()
    finally:
        db.close()


def of(judge: str, rows: list[tuple]) -> list[tuple]:
    return [r for r in rows if r[1] == judge]


def build_ws(path: Path) -> None:
    """Two offline entries, judges j1 (one run) and j2 (two runs); two matches judged by j1 only."""
    new_workspace(path, entries=TWO_OFFLINE, judges=[judge("j1", runs=1), judge("j2", runs=2)], init=None)
    assert len(play_with(path, "j1")) == 2


@pytest.fixture
def ws(builds, tmp_path) -> Path:
    """The test's own copy of build_ws's workspace (played once per test process)."""
    return builds.copy("judge_cmd:ws", build_ws, tmp_path / "ws").path


def test_run_and_judge_list_say_what_a_judge_added_later_has_left_to_judge(ws):
    run = invoke("run", "-w", ws)
    assert run.exit_code == 0, run.output
    assert run.stdout == ("nothing to play: every scheduled match is done, but 2 done matches have no verdict of "
                          "judge 'j2': 'arena judge' judges them\n")
    listed = invoke("judge", "list", "-w", ws)
    assert listed.exit_code == 0, listed.output
    assert [line.split() for line in listed.stdout.splitlines()] == [
        ["name", "kind", "model", "runs", "family", "judged", "to", "judge"],
        ["j1", "single", "offline/j1", "1", "offline/j1", "2", "0"],
        ["j2", "single", "offline/j2", "2", "offline/j2", "0", "2"]]
    assert listed.stderr == "done matches still to judge: 2 by 'j2'; 'arena judge' judges them\n"
    rows = json.loads(invoke("judge", "list", "--format", "json", "-w", ws).stdout)
    assert [(r["name"], r["runs"], r["judged"], r["to_judge"], r["simulated"]) for r in rows] == [
        ("j1", 1, 2, 0, True), ("j2", 2, 0, 2, True)]
    assert invoke("judge", "-w", ws).exit_code == 0
    assert [r["to_judge"] for r in json.loads(invoke("judge", "list", "--format", "json", "-w", ws).stdout)] == [0, 0]
    assert invoke("run", "-w", ws).stdout.startswith("nothing to play: no scheduled matches. Schedule some")


def test_judge_list_of_no_judges_says_how_to_add_one(tmp_path):
    path = new_workspace(tmp_path / "ws", entries=TWO_OFFLINE)
    listed = invoke("judge", "list", "-w", path)
    assert listed.exit_code == 0 and "arena judge add NAME --kind single" in listed.stdout
    assert json.loads(invoke("judge", "list", "--format", "json", "-w", path).stdout) == []


def test_a_judge_added_later_judges_every_done_match_once(ws):
    before = verdicts(ws)
    assert {(m, j) for m, j, *_ in before} == {("m00001", "j1"), ("m00002", "j1")}

    result = invoke("judge", "--judge", "j2", "-w", ws)
    assert result.exit_code == 0, result.output
    assert result.stdout == "judged 2 matches with j2: 4 verdicts, 0 failed runs\n"
    assert sorted(line.split()[1] for line in result.stderr.splitlines()) == ["m00001", "m00002"]  # progress
    after = verdicts(ws)
    assert of("j1", after) == of("j1", before)
    assert [(m, run) for m, _, run, overall, error, _ in of("j2", after) if overall in ("pro", "con") and not error] \
        == [("m00001", 0), ("m00001", 1), ("m00002", 0), ("m00002", 1)]

    again = invoke("judge", "-w", ws)  # every configured judge: nothing is missing any more
    assert again.exit_code == 0, again.output
    assert again.stdout == ("judged 0 matches with j1: 0 verdicts, 0 failed runs\n"
                            "judged 0 matches with j2: 0 verdicts, 0 failed runs\n")
    assert verdicts(ws) == after


def test_only_completed_matches_are_judged(ws):
    wsp = open_workspace(ws)
    try:
        app.schedule(wsp, "round-robin")  # two more matches, scheduled but not played
        totals = app.judge(wsp, ["j2"], progress=lambda line: None)
    finally:
        wsp.close()
    assert totals == [{"judge": "j2", "matches": 2, "verdicts": 4, "failed_runs": 0, "kept": 0, "elsewhere": 0}]
    assert {m for m, *_ in of("j2", verdicts(ws))} == {"m00001", "m00002"}


def test_rejudge_replaces_all_runs_of_the_named_judge_only(ws):
    assert invoke("judge", "--judge", "j2", "-w", ws).exit_code == 0
    before = verdicts(ws)
    # j2 now runs once: a rejudge must leave no stale second run behind.
    text = workspace_toml(entries=TWO_OFFLINE, judges=[judge("j1", runs=1), judge("j2", runs=1)])
    (ws / "arena.toml").write_text(text, encoding="utf-8")

    plain = invoke("judge", "--judge", "j2", "-w", ws)
    assert plain.stdout.startswith("judged 0 matches with j2")  # replacing must be asked for
    assert verdicts(ws) == before

    result = invoke("judge", "--judge", "j2", "--rejudge", "-w", ws)
    assert result.exit_code == 0, result.output
    assert result.stdout == "judged 2 matches with j2: 2 verdicts, 0 failed runs\n"
    after = verdicts(ws)
    assert of("j1", after) == of("j1", before)
    assert [(m, run) for m, _, run, *_ in of("j2", after)] == [("m00001", 0), ("m00002", 0)]
    old = {(m, run): created for m, _, run, *_, created in of("j2", before)}
    assert all(created > old[(m, run)] for m, _, run, *_, created in of("j2", after))


def test_failed_runs_are_retried_without_rejudge(tmp_path, fake_llm):
    j2 = judge("j2", model="openai/judge-model", runs=2, api_base=fake_llm.api_base, options={"overall_ties": False})
    path = new_workspace(tmp_path / "ws", llm={"backoff_s": 0.01, "retries": 0, "schema_retries": 0}, init=None,
                         entries=TWO_OFFLINE, judges=[judge("j1", runs=1), j2])
    play_with(path, "j1")
    fake_llm.script("not a verdict")  # every j2 run fails: no valid structured answer

    failed = invoke("judge", "--judge", "j2", "-w", path)
    assert failed.exit_code == 1, failed.output
    assert failed.stdout == "judged 2 matches with j2: 4 verdicts, 4 failed runs\n"
    assert "error: 4 judge runs failed" in failed.stderr and "arena judge" in failed.stderr
    assert all(error for *_, error, _ in of("j2", verdicts(path)))

    fake_llm.script(json.dumps(VERDICT))
    retried = invoke("judge", "--judge", "j2", "-w", path)
    assert retried.exit_code == 0, retried.output
    assert retried.stdout == "judged 2 matches with j2: 4 verdicts, 0 failed runs\n"
    # The fake says "pro" to whatever it reads; run 1 read the sides exchanged (swap_sides, on by default), so its
    # "pro" is CON's win, mapped back.
    assert [(run, overall, error) for _, _, run, overall, error, _ in of("j2", verdicts(path))] == \
        [(0, "pro", None), (1, "con", None)] * 2


def test_a_match_with_one_failed_run_is_judged_again(ws):
    assert invoke("judge", "--judge", "j2", "-w", ws).exit_code == 0
    db = sqlite3.connect(ws / "arena.db")
    db.execute("UPDATE verdicts SET overall=NULL, error='timeout' WHERE match_id='m00002' AND judge='j2' AND run=1")
    db.commit()
    db.close()
    result = invoke("judge", "--judge", "j2", "-w", ws)
    assert result.exit_code == 0, result.output
    assert result.stdout == "judged 1 match with j2: 2 verdicts, 0 failed runs\n"
    assert not any(error for *_, error, _ in verdicts(ws))


def test_unknown_judge_exits_2_and_writes_nothing(ws):
    before = snapshot(ws)
    assert_user_error(invoke("judge", "--judge", "j2", "--judge", "nope", "-w", ws),
                      "--judge: unknown judge 'nope'", "j1, j2")
    assert snapshot(ws) == before


def test_bad_concurrency_exits_2(ws):
    result = invoke("judge", "--concurrency", "0", "-w", ws)
    assert result.exit_code == 2 and "--concurrency" in result.output


def test_no_configured_judge_is_a_user_error(tmp_path):
    new_workspace(tmp_path, entries=TWO_OFFLINE, init=None)
    assert_user_error(invoke("judge", "-w", tmp_path), "arena.toml", "no [[judges]]")


def test_app_judge_refuses_unknown_names_before_judging(ws):
    wsp = open_workspace(ws)
    try:
        with pytest.raises(UserError, match="unknown judge 'jx'"):
            app.judge(wsp, ["j2", "jx"])
    finally:
        wsp.close()
    assert of("j2", verdicts(ws)) == []


# --- arena rate --judge: ratings from one judge, never from a match it failed on -------------------

def test_rate_names_its_judge_and_skips_matches_it_failed_on(ws):
    assert invoke("judge", "--judge", "j2", "-w", ws).exit_code == 0

    def rated(judge: str) -> int:
        result = invoke("rate", "--judge", judge, "--bootstrap", "0", "--format", "json", "-w", ws)
        assert result.exit_code == 0, result.output
        data = json.loads(result.output)
        assert data["meta"]["judge"] == judge
        return data["meta"]["matches"]

    assert rated("j2") == 2
    db = sqlite3.connect(ws / "arena.db")
    db.execute("UPDATE verdicts SET overall=NULL, error='no valid answer' WHERE match_id='m00001' AND judge='j2' "
               "AND run=0")
    db.commit()
    db.close()
    assert rated("j2") == 1  # run 1 of j2 on m00001 still decided, yet the match is not rated by j2
    assert rated("j1") == 2
    table = invoke("rate", "--judge", "j2", "--bootstrap", "0", "-w", ws)
    assert table.exit_code == 0, table.output
    assert table.output.startswith("ratings from judge 'j2', 1 match,")
