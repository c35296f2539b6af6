"""`arena run`: resume after SIGKILL and Ctrl-C, the budget stop, --retry-failed, faults, --dry-run, progress."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

from arena.app import commands as app
from arena.app.runner import runs
from arena.app.commands import open_workspace
from arena.app.runner.dryrun import dry_run
from arena.app.runner.progress import Progress
from tests.support.fakes.openai_server import Reply
from tests.support.helpers import debate_responder, entry, invoke, judge, new_workspace, query, stage_and_side
from tests.support.running import (assert_each_match_done_once, key, priced_workspace, scheduled, slow, start_run,
                           statuses)


def wait_until_mid_run(path: Path, process: subprocess.Popen, timeout: float = 120) -> None:
    """Until one match is done and another is running with at least one completed LLM call."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert process.poll() is None, process.communicate()
        done = statuses(path).get("done", 0)
        busy = query(path, "SELECT COUNT(*) FROM calls c JOIN matches m ON m.id = c.match_id "
                           "WHERE m.status = 'running' AND c.error IS NULL")[0][0]
        if done >= 1 and busy >= 1:
            return
        time.sleep(0.02)
    raise AssertionError("the run never reached the middle")


def caught_mid_run(tmp_path, fake_llm) -> tuple[Path, subprocess.Popen]:
    """A slow run of six matches at --concurrency 2, caught mid-way (wait_until_mid_run): its path and process."""
    fake_llm.responder = slow(0.1)
    path = scheduled(tmp_path, fake_llm.api_base)
    process = start_run(path, "--concurrency", "2")
    wait_until_mid_run(path, process)
    return path, process


# --- kill -9 and Ctrl-C ---------------------------------------------------------------------------

@pytest.mark.slow
def test_resume_after_sigkill_pays_only_for_the_calls_in_flight(tmp_path, fake_llm):
    path, process = caught_mid_run(tmp_path, fake_llm)
    os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=30)
    time.sleep(0.3)  # let the server finish answering (into the void) what the dead run had asked

    before = fake_llm.requests
    cached = query(path, "SELECT COUNT(*) FROM cache WHERE kind = 'llm'")[0][0]
    in_flight = len(before) - cached  # asked, but the answer never reached the cache
    # At most: 2 matches playing with 2 constructives each, and 2 being judged with R = 1.
    assert 0 <= in_flight <= 2 * 2 + 2 * 1
    assert statuses(path).get("done", 0) < 6

    rerun = start_run(path, "--concurrency", "2")
    out, err = rerun.communicate(timeout=120)
    assert rerun.returncode == 0, err
    assert ", 0 failed, of" in out
    assert_each_match_done_once(path, 6)

    after = fake_llm.requests[len(before):]
    asked_before = {key(r.body) for r in before}
    repeated = [r for r in after if key(r.body) in asked_before]
    assert len(repeated) <= in_flight  # every call completed before the kill came from the cache
    assert query(path, "SELECT COUNT(*) FROM calls WHERE cache_hit = 1")[0][0] >= 1
    assert len({key(r.body) for r in fake_llm.requests}) == 6 * 7  # 6 speeches + 1 verdict per match


@pytest.mark.slow
def test_ctrl_c_stops_cleanly_and_the_rerun_completes(tmp_path, fake_llm):
    path, process = caught_mid_run(tmp_path, fake_llm)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    assert "Traceback" not in err
    assert "interrupted" in out and "arena run" in out
    left = statuses(path)
    assert "running" not in left and "failed" not in left  # in-flight matches went back to 'scheduled'
    assert left.get("done", 0) >= 1 and left.get("scheduled", 0) >= 1
    assert query(path, "SELECT COUNT(*) FROM speeches WHERE match_id IN "
                       "(SELECT id FROM matches WHERE status = 'scheduled')")[0][0] == 0

    result = invoke("run", "-w", path)
    assert result.exit_code == 0, result.output
    assert_each_match_done_once(path, 6)


# --- budget -------------------------------------------------------------------------------------

def test_budget_stops_new_matches_once_the_ledger_reaches_it(tmp_path, fake_llm):
    fake_llm.responder = debate_responder()
    path = priced_workspace(tmp_path, fake_llm.api_base)
    result = invoke("run", "-w", path, "--concurrency", "1", "--budget", "0.000001")
    assert result.exit_code == 0, result.output
    # The first match starts at $0; it costs more than the budget, so no other starts.
    assert statuses(path) == {"done": 1, "scheduled": 3}
    assert "budget reached" in result.output and "3 matches stay scheduled" in result.output
    spent = query(path, "SELECT SUM(cost) FROM calls")[0][0]
    assert spent > 0.000001
    assert len(fake_llm.requests) == 7  # one match's calls, nothing of the others

    # The budget counts the whole ledger, so a rerun at the amount already spent starts nothing; more finishes.
    result = invoke("run", "-w", path, "--budget", str(spent))
    assert result.exit_code == 0 and "0 done, 0 failed, of 3; budget reached" in result.output
    assert len(fake_llm.requests) == 7
    result = invoke("run", "-w", path, "--budget", "1")
    assert result.exit_code == 0 and statuses(path) == {"done": 4}


def test_budget_says_when_prices_are_unknown(tmp_path, fake_llm):
    fake_llm.responder = debate_responder()
    path = scheduled(tmp_path, fake_llm.api_base, entries=("alpha", "beta"))
    result = invoke("run", "-w", path, "--budget", "0.01")
    assert result.exit_code == 0, result.output
    assert statuses(path) == {"done": 2}  # unknown prices count as $0 ...
    assert "14 calls had no known price and counted as $0 against the budget" in result.output  # ... and it says so


def test_bad_budget_exits_2_naming_the_option(tmp_path):
    result = invoke("run", "-w", tmp_path, "--budget", "-1")
    assert result.exit_code == 2 and "--budget" in result.output


# --- failures and --retry-failed ----------------------------------------------------------------

def test_retry_failed_plays_failed_matches_again(tmp_path, fake_llm):
    answer = debate_responder()
    broken = {"on": True}

    def responder(body):
        if broken["on"] and body["model"] == "beta-model" and stage_and_side(body) == ("rebuttal", "con"):
            return Reply(status=400, content="context length exceeded")
        return answer(body)

    fake_llm.responder = responder
    path = scheduled(tmp_path, fake_llm.api_base, entries=("alpha", "beta"))
    result = invoke("run", "-w", path)
    assert result.exit_code == 1 and "1 done, 1 failed, of 2" in result.output
    assert "context length exceeded" in result.output
    [(error,)] = query(path, "SELECT error FROM matches WHERE status = 'failed'")
    assert "400" in error and "context length exceeded" in error

    broken["on"] = False
    result = invoke("run", "-w", path)  # failed matches wait for --retry-failed
    assert result.exit_code == 0 and "nothing to play" in result.output
    assert "1 failed match waits for 'arena run --retry-failed'" in result.output
    result = invoke("run", "-w", path, "--retry-failed")
    assert result.exit_code == 0 and "1 done, 0 failed, of 1" in result.output
    assert_each_match_done_once(path, 2, judge_runs=1)
    assert query(path, "SELECT COUNT(*) FROM matches WHERE error IS NOT NULL")[0][0] == 0


def test_transient_faults_and_malformed_answers_end_with_every_match_done(tmp_path, fake_llm):
    answer = debate_responder()
    seen: set[str] = set()
    lock = threading.Lock()

    def responder(body):
        if body.get("response_format"):
            with lock:
                first = body["messages"][0]["content"] not in seen
                seen.add(body["messages"][0]["content"])
            if first:  # every judge prompt is first answered with broken JSON, then re-asked
                return '{"overall": "pro", "rationale": '
        return answer(body)

    fake_llm.responder = responder
    # The first requests of the run meet a rate limit, a server error and a body that is not JSON.
    fake_llm.faults.enqueue(Reply(status=429), Reply(status=500), Reply(raw="{not json"), Reply(status=503))
    path = scheduled(tmp_path, fake_llm.api_base, judge_runs=1)
    toml = path / "arena.toml"  # enough retries for all four faults to land on one call
    toml.write_text(toml.read_text().replace("retries = 2", "retries = 4"))
    result = runs.run(open_workspace(path), concurrency=3, progress=lambda line: None)
    assert (result["done"], result["failed"]) == (6, 0)
    assert_each_match_done_once(path, 6)
    errors = [e for (e,) in query(path, "SELECT error FROM calls WHERE error IS NOT NULL")]
    assert len(errors) == 4 and any("429" in e for e in errors) and any("500" in e for e in errors)
    re_asked = [r for r in fake_llm.requests if "That answer is not valid" in json.dumps(r.body)]
    assert len(re_asked) == 6  # one re-ask per match's judge prompt


def test_persistent_faults_fail_their_matches_with_the_reason_and_leave_none_running(tmp_path, fake_llm):
    answer = debate_responder()

    def responder(body):
        if body["model"] == "gamma-model":
            return Reply(status=503, content="gamma is down")
        if body.get("response_format") and "SPEECH<alpha-model|summary|pro>" in json.dumps(body):
            return "no verdict here"  # never valid: this judge fails on the matches alpha opened as Pro
        return answer(body)

    fake_llm.responder = responder
    path = scheduled(tmp_path, fake_llm.api_base, judge_runs=1)
    result = runs.run(open_workspace(path), concurrency=6, progress=lambda line: None)
    assert (result["done"], result["failed"]) == (2, 4)  # gamma plays in 4 of the 6 matches
    assert "running" not in statuses(path) and "scheduled" not in statuses(path)
    reasons = query(path, "SELECT error FROM matches WHERE status = 'failed'")
    assert all("503" in r and "gamma is down" in r and "after 3 tries" in r for (r,) in reasons)
    assert query(path, "SELECT COUNT(*) FROM speeches WHERE match_id IN "
                       "(SELECT id FROM matches WHERE status = 'failed')")[0][0] == 0
    # A judge that never gives a valid answer is a failed verdict of a completed match, with its reason.
    [(error,)] = query(path, "SELECT error FROM verdicts WHERE error IS NOT NULL")
    assert "no valid structured answer" in error


def test_judging_does_not_hold_a_play_slot(tmp_path, fake_llm):
    answer = debate_responder()
    speeches, lock = [], threading.Lock()
    both_played = threading.Event()
    waited = []

    def responder(body):
        if body.get("response_format"):
            # The first judge answers only once the other match has played all its speeches (or after 20 s):
            # with one play slot, that happens only if judging does not hold the slot.
            waited.append(both_played.wait(timeout=20))
            return answer(body)
        with lock:
            speeches.append(stage_and_side(body))
            if len(speeches) == 12:
                both_played.set()
        return answer(body)

    fake_llm.responder = responder
    path = scheduled(tmp_path, fake_llm.api_base, entries=("alpha", "beta"), judge_runs=1)
    result = runs.run(open_workspace(path), concurrency=1, progress=lambda line: None)
    assert result["done"] == 2
    assert waited == [True, True]


# --- dry run ------------------------------------------------------------------------------------

def test_dry_run_projects_calls_and_cost_per_model_and_writes_nothing(tmp_path, fake_llm):
    path = new_workspace(tmp_path / "ws", arena={"judge_runs": 1},
                         entries=[entry("known", model="openai/gpt-4o-mini", api_base=fake_llm.api_base),
                                  entry("mystery", model="openai/mystery-model"), entry("sim")],
                         judges=[judge("j1", model="openai/gpt-4o-mini", runs=2)])
    ws = open_workspace(path)
    app.schedule(ws, "round-robin", rounds=1)  # 6 matches; each entry plays 4
    ws.close()
    before = {p.name: p.read_bytes() for p in path.iterdir()}

    result = invoke("run", "-w", path, "--dry-run")
    assert result.exit_code == 0, result.output
    assert {p.name: p.read_bytes() for p in path.iterdir()} == before
    assert fake_llm.requests == []
    assert "openai/mystery-model" in result.output and "unknown" in result.output
    assert "  openai/mystery-model: not in litellm's price map" in result.output

    ws = open_workspace(path)
    projection = dry_run(ws)
    ws.close()
    rows = {r["model"]: r for r in projection["models"]}
    # 3 speeches in each of 4 matches per entry; the judge: 2 runs of 6 matches.
    assert {m: r["calls"] for m, r in rows.items()} == {"openai/gpt-4o-mini": 12 + 12, "openai/mystery-model": 12,
                                                        "offline/sim": 12}
    assert rows["openai/mystery-model"]["cost"] is None and projection["unknown"] == ["openai/mystery-model"]
    assert rows["offline/sim"]["cost"] == 0.0
    mini = rows["openai/gpt-4o-mini"]
    # The judge's two runs read one prompt: the second's is in the provider's cache (from 1,024 tokens), and its
    # cached tokens cost the cache-read price (gpt-4o-mini: half the input price).
    assert 0 < mini["cached_tokens"] < mini["prompt_tokens"]
    assert mini["cost"] == pytest.approx(0.15e-6 * (mini["prompt_tokens"] - mini["cached_tokens"])
                                         + 0.075e-6 * mini["cached_tokens"] + 0.6e-6 * mini["completion_tokens"])
    assert projection["cost"] == pytest.approx(mini["cost"])
    assert projection["per_match"]["calls"] == pytest.approx(48 / 6)
    assert projection["failed"] == []
    assert {p.name: p.read_bytes() for p in path.iterdir()} == before


# --- progress display ---------------------------------------------------------------------------

class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_progress_prints_plain_lines_and_an_eta_off_a_terminal():
    from arena.gateway.llm import CallEvent, CallTag
    from arena.domain.records import AgentUsage

    lines, clock = [], Clock()
    display = Progress(4, 2, say=lines.append, clock=clock)
    assert display.eta() == "after the 1st match"  # no mean to go by yet, and it says so
    display.started("m1")
    display.started("m2")
    tag = CallTag("writer", "m1", "constructive", "pro")
    for usage in (AgentUsage(1, 100, 20, 0.5), AgentUsage(1, 100, 20, None)):
        display.told(CallEvent("sent", tag, "openai/x"))
        display.told(CallEvent("answered", tag, "openai/x", usage=usage))
    display.told(CallEvent("cached", tag, "openai/x", usage=AgentUsage(1, 100, 20, 0.0)))
    clock.now = 10.0
    display.finished("m1")
    display.finished("m2", "openai/x: RateLimitError 429")
    assert lines == ["[1/4] m1 done (10.0s)", "[2/4] m2 failed: openai/x: RateLimitError 429"]
    assert display.eta() == "10s"  # 2 left, 10 s each, 2 at once
    status = display.status()
    assert "1/4 done, 0 running, 1 failed" in status
    assert "ETA 10s · 3 calls (1 cached), 360 tokens, $0.5000 +1 unpriced" in status
    display.close()
    assert lines[-1].startswith("after 10s: 1/4 done")
    assert lines[-1].endswith("$0.5000 (+1 call of unknown price)")  # in words once the width no longer matters


def test_progress_redraws_one_line_on_a_terminal(capsys):
    clock = Clock()
    display = Progress(2, 1, live=True, clock=clock)
    clock.now = 1.0
    display.started("m1")
    clock.now = 1.1
    display.started("m2")  # within a quarter second: not redrawn
    clock.now = 2.0
    display.finished("m1")
    display.finished("m2", "boom")
    display.close()
    err = capsys.readouterr().err
    assert err.count("\r") >= 3 and "\x1b[K" in err
    assert "m1 done" not in err  # done matches live in the status line
    assert "[2/2] m2 failed: boom\n" in err  # failures stay on screen
    assert err.rstrip("\n").endswith("1/2 done, 0 running, 1 failed · 0 calls, 0 tokens, $0.0000")
