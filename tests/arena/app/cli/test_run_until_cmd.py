"""`arena run --until CRITERION [--batch B] [--max-matches N]` on offline workspaces of planted strengths: it stops
once the criterion holds (and it does, refitted by `arena rate`), at --max-matches or --budget (exit 0, met false),
resumes a killed run's batch before drawing more, refuses a judge of people first and bad options (exit 2, nothing
written), keeps the new matches of an open judge of people off the published site; `--dry-run --until` projects the
matches to settle the criterion, costed, writing nothing."""
from __future__ import annotations

import json
import os
import signal
import time

import pytest

from arena.app import commands as app
from arena.app.commands import open_workspace
from arena.app.people.ballot_links import simulate as cast_simulated_ballots
from leaderboard.site.render import page_name
from tests.support.helpers import (assert_user_error, debate_responder, entry, invoke, judge, new_workspace, people,
                                   play_round_robin, query, snapshot)
from tests.support.running import assert_each_match_done_once, priced_workspace, start_run, statuses


def planted(path, *strengths: float, **settings):
    """An offline workspace of entries e0, e1, ... of these planted strengths (logits) and one judge j, R = 1."""
    return new_workspace(path, arena={"judge_runs": 1}, judges=settings.pop("judges", [judge("j")]),
                         entries=[entry(f"e{k}", strength=s) for k, s in enumerate(strengths)], **settings)


def json_of(result) -> dict:
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


# --- the stopping rule ----------------------------------------------------------------------------------------

def test_a_run_stops_once_the_planted_top_k_is_settled_and_says_so(tmp_path):
    """Four entries two logits apart, top=2: about 12 s (some 36 offline matches in batches of 4, each refitted)."""
    path = planted(tmp_path / "ws", 3.0, 1.0, -1.0, -3.0)
    result = invoke("run", "-w", path, "--until", "top=2")
    assert result.exit_code == 0, result.output
    (done,) = statuses(path).values()
    assert statuses(path) == {"done": done}
    assert f"until top=2: met after {done} matches; " in result.stdout
    # The progress says where the board stood after each batch: settled only at the last, so the run stopped there.
    stood = [line for line in result.stderr.splitlines() if line.startswith("top=2: ")]
    assert stood[-1].startswith("top=2: 2 of 2 boundaries settled") and stood[-1].endswith(f" · {done} matches")
    assert len(stood) >= 2 and not any(line.startswith("top=2: 2 of 2") for line in stood[:-1])
    # It holds as `arena rate` fits the board: the planted top 2, each interval above every lower entry's.
    rated = json_of(invoke("rate", "-w", path, "--format", "json"))["ratings"]
    assert [r["entry"] for r in rated[:2]] == ["e0", "e1"]
    for k, top in enumerate(rated[:2]):
        assert all(top["ci_low"] > lower["ci_high"] for lower in rated[k + 1:]), rated


# --- limits: --max-matches and --budget -------------------------------------------------------------------------

def test_max_matches_stops_at_exactly_that_many_even_when_a_batch_is_bigger_than_the_room_left(tmp_path):
    """Three entries alike, so top=1 cannot settle: batches of 5, then the 2 left to reach 7. About 3 s."""
    path = planted(tmp_path / "ws", 0.0, 0.0, 0.0)
    result = json_of(invoke("run", "-w", path, "--until", "top=1", "--batch", "5", "--max-matches", "7",
                            "--format", "json"))
    until = result["until"]
    assert (until["met"], until["reason"], until["matches"], until["batches"]) == (False, "max matches", 7, 2)
    assert (until["criterion"], until["settled"], until["boundaries"]) == ("top=1", 0, 1)
    assert result["done"] == 7 and statuses(path) == {"done": 7}
    assert query(path, "SELECT tournament_id, COUNT(*) FROM matches GROUP BY tournament_id") == [(1, 5), (2, 2)]
    again = invoke("run", "-w", path, "--until", "top=1", "--max-matches", "7")  # already there: nothing drawn
    assert again.exit_code == 0, again.output
    assert "until top=1: not met: max matches reached (7 matches)" in again.stdout and statuses(path) == {"done": 7}


def test_the_budget_stops_an_until_run_before_a_batch_and_within_one(tmp_path, fake_llm):
    fake_llm.responder = debate_responder()  # PRO always wins: the two entries stay level, top=1 never holds
    path = priced_workspace(tmp_path, fake_llm.api_base)  # alpha and beta on a priced model, 4 matches scheduled
    assert invoke("run", "-w", path).exit_code == 0
    spent, asked = query(path, "SELECT SUM(cost) FROM calls")[0][0], len(fake_llm.requests)
    at = json_of(invoke("run", "-w", path, "--until", "top=1", "--budget", repr(spent), "--format", "json"))
    assert (at["until"]["met"], at["until"]["reason"], at["until"]["batches"]) == (False, "budget", 0)
    assert len(fake_llm.requests) == asked and statuses(path) == {"done": 4}
    # A little more: a batch is drawn, its first match takes the ledger over the budget, and no other starts.
    over = json_of(invoke("run", "-w", path, "--until", "top=1", "--budget", repr(spent * 1.01), "--batch", "4",
                          "--concurrency", "1", "--format", "json"))
    assert (over["until"]["met"], over["until"]["reason"], over["until"]["batches"]) == (False, "budget", 1)
    assert over["stopped"] == "budget" and over["done"] == 1 and over["until"]["matches"] == 5
    assert statuses(path) == {"done": 5, "scheduled": 3}


# --- a kill mid-batch, and the resume --------------------------------------------------------------------------

def caught_mid_batch(path, process, timeout: float = 120) -> int:
    """Until a batch of the run is under way (one of its matches done, another not): that tournament's id."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert process.poll() is None, process.communicate()
        under_way = query(path, "SELECT tournament_id FROM matches GROUP BY tournament_id "
                                "HAVING SUM(status = 'done') >= 1 AND SUM(status != 'done') >= 1")
        if under_way:
            return under_way[0][0]
        time.sleep(0.01)
    raise AssertionError("no batch was ever caught under way")


@pytest.mark.slow
def test_a_killed_until_run_resumes_its_batch_first_and_plays_no_match_twice(tmp_path):
    """SIGKILL mid-batch, then a new --until run: the killed batch's matches left are played first, every match once,
    and the run goes on to the criterion. About 15 s (two `arena run` processes, some 15 offline matches)."""
    path = planted(tmp_path / "ws", 4.0, 0.0, -4.0)
    killed = start_run(path, "--until", "top=1", "--concurrency", "1")
    batch = caught_mid_batch(path, killed)
    os.kill(killed.pid, signal.SIGKILL)
    killed.wait(timeout=30)
    finished = dict(query(path, "SELECT id, finished_at FROM matches WHERE status = 'done'"))
    left = {m for (m,) in query(path, "SELECT id FROM matches WHERE tournament_id = ? AND status != 'done'", batch)}
    assert left and not query(path, "SELECT id FROM matches WHERE tournament_id > ?", batch)

    resumed = start_run(path, "--until", "top=1", "--format", "json")
    out, err = resumed.communicate(timeout=300)
    assert resumed.returncode == 0, err
    result = json.loads(out)
    assert result["until"]["met"] and result["until"]["reason"] == "met"
    # Before the first refit, the run played what the killed batch left, and nothing else.
    first = err.splitlines()[:next(k for k, line in enumerate(err.splitlines()) if line.startswith("top=1: "))]
    assert {line.split()[1] for line in first if line.startswith("[")} == left
    drawn = query(path, "SELECT MIN(started_at) FROM matches WHERE tournament_id > ?", batch)[0][0]
    assert drawn is not None  # it went on past the killed batch ...
    assert query(path, "SELECT MAX(finished_at) FROM matches WHERE tournament_id <= ?", batch)[0][0] < drawn
    # ... each match played once: the killed run's done matches untouched, one set of speeches and verdicts each.
    assert dict(query(path, "SELECT id, finished_at FROM matches WHERE id IN (%s)" % ",".join("?" * len(finished)),
                      *finished)) == finished
    assert_each_match_done_once(path, result["until"]["matches"], judge_runs=1)


# --- judges of people, and people who debate on the web ----------------------------------------------------------

@pytest.mark.parametrize("dry", [False, True])
def test_a_judge_of_people_first_is_refused_naming_it_and_nothing_is_written(tmp_path, dry):
    path = planted(tmp_path / "ws", 1.0, 0.0, -1.0, judges=[people("experts", "ann"), judge("j")], opened=True)
    before = snapshot(path)
    result = invoke("run", "-w", path, "--until", "top=1", *(["--dry-run"] if dry else []))
    assert_user_error(result, "--until top=1", "the default judge 'experts' is a judge of people")
    assert snapshot(path) == before


def embargoed(path) -> int:
    (row,) = json_of(invoke("ballots", "status", "--format", "json", "-w", path))
    return row["embargoed"]


def done_ids(path) -> set[str]:
    return {m for (m,) in query(path, "SELECT id FROM matches WHERE status = 'done'")}


def test_an_until_run_beside_an_open_judge_of_people_keeps_its_new_matches_off_the_published_site(tmp_path):
    """The automatic judge j settles the board; ann judges for the people. About 5 s."""
    path = planted(tmp_path / "ws", 0.0, 0.0, 0.0, judges=[judge("j"), people("experts", "ann",
                                                                                model="offline/people")])
    assert embargoed(path) == 0
    first = invoke("run", "-w", path, "--until", "top=1", "--max-matches", "3")
    assert first.exit_code == 0 and "not met: max matches reached (3 matches)" in first.stdout
    assert embargoed(path) == 3  # ann has not judged them
    ws = open_workspace(path)
    try:
        assert cast_simulated_ballots(ws, "experts") == 3
    finally:
        ws.close()
    assert embargoed(path) == 0
    old = done_ids(path)
    second = invoke("run", "-w", path, "--until", "top=1", "--max-matches", "6")
    assert second.exit_code == 0, second.output
    new = done_ids(path) - old
    assert len(new) == 3 and embargoed(path) == 3
    assert invoke("publish", "-w", path).exit_code == 0
    site = snapshot(path / "site")
    assert all(page_name("matches", m) in site for m in old)
    assert not [m for m in new if page_name("matches", m) in site or any(m.encode() in data for data in site.values())]


# --- bad options --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("args, fragments", [
    (("--until", "top=0"), ("--until 'top=0'", "at least 1")),
    (("--until", "top=x"), ("--until 'top=x'", "not a whole number")),
    (("--until", "separability=1.5"), ("--until 'separability=1.5'", "share")),
    (("--until", "foo=1"), ("--until 'foo=1'", "expected top=K")),
    (("--until", "top=5"), ("--until top=5", "5 active entries", "more than K")),
    (("--until", "top=1", "--batch", "0"), ("--batch",)),
    (("--until", "top=1", "--max-matches", "0"), ("--max-matches",)),
    (("--batch", "3"), ("--batch goes with --until",)),
    (("--max-matches", "30"), ("--max-matches goes with --until",)),
    (("--dry-run", "--batch", "3"), ("--batch goes with --until",)),
])
def test_bad_until_options_exit_2_naming_the_option_and_write_nothing(tmp_path, args, fragments):
    path = planted(tmp_path / "ws", 2.0, 1.0, 0.0, -1.0, -2.0, opened=True)
    before = snapshot(path)
    assert_user_error(invoke("run", "-w", path, *args), *fragments)
    assert snapshot(path) == before


# --- the dry run ----------------------------------------------------------------------------------------------------

def test_the_dry_run_projects_the_matches_to_settle_costs_them_with_the_pending_and_writes_nothing(tmp_path):
    """A round-robin played and one match pending; --max-matches 14 keeps the simulations short. About 10 s."""
    path = planted(tmp_path / "ws", 2.0, 0.0, -2.0)
    play_round_robin(path)  # 6 matches done, the board not settled yet
    ws = open_workspace(path)
    try:
        app.schedule(ws, "random", matches=1)
    finally:
        ws.close()
    before = snapshot(path)
    projected = json_of(invoke("run", "-w", path, "--dry-run", "--until", "top=1", "--max-matches", "14",
                               "--format", "json"))
    assert snapshot(path) == before
    until = projected["until"]
    assert set(until) == {"criterion", "matches", "low", "high", "met_share", "simulations", "cap", "done"}
    assert (until["criterion"], until["done"], until["simulations"]) == ("top=1", 6, 5)
    # The pending match is played before any batch, so 7 more at most reach 14.
    assert 1 <= until["low"] <= until["matches"] <= until["high"] <= until["cap"] == 7 and 0 <= until["met_share"] <= 1
    assert projected["matches"] == 1 + until["matches"]  # the pending match and the projected ones, all costed
    calls = {m["model"]: m["calls"] for m in projected["models"]}
    assert calls["offline/j"] == projected["matches"]  # a verdict a match
    assert sum(calls[f"offline/e{k}"] for k in range(3)) == 6 * projected["matches"]  # six speeches a match
    text = invoke("run", "-w", path, "--dry-run", "--until", "top=1", "--max-matches", "14")
    assert text.exit_code == 0 and f"until top=1: about {until['matches']} more match" in text.stdout


def test_an_entry_without_its_key_is_left_out_of_later_batches_and_the_run_ends_saying_why(tmp_path):
    """gpt (openai/, whose key the tests never set) is skipped in the first batch; later batches leave it out rather
    than draw its matches again and again, and once only its pairs are left to settle the run ends: reason keys.
    About 10 s."""
    path = new_workspace(tmp_path / "ws", arena={"judge_runs": 1}, judges=[judge("j")],
                         entries=[entry("gpt", model="openai/gpt-4o-mini"), entry("e0", strength=2.5),
                                  entry("e1", strength=-1.0)])
    result = json_of(invoke("run", "-w", path, "--until", "top=1", "--max-matches", "60", "--format", "json"))
    assert result["until"]["reason"] == "keys" and not result["until"]["met"]
    drawn = query(path, "SELECT tournament_id, pro, con FROM matches ORDER BY id")
    first = drawn[0][0]
    assert any("gpt" in (pro, con) for t, pro, con in drawn if t == first)
    assert not [m for m in drawn if m[0] != first and "gpt" in m[1:]]  # never drawn again
    assert query(path, "SELECT COUNT(*) FROM calls WHERE model LIKE 'openai/%'") == [(0,)]
