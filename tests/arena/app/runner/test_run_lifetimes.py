"""A run's processes live and die together, hold a bounded number of matches, and ledger every call they send.

Real `arena run` processes against the fake provider: the parent killed with SIGKILL (its workers must stop
within seconds and put their matches back), a judge slower than the debaters (at most 2N matches under way),
and a kill while a priced call is unanswered (the ledger shows it, and --budget counts it).
"""
from __future__ import annotations

import os
import signal
import time

import pytest

from arena.app.runner.runs import shares
from arena.match.claims import alive
from arena.store import IN_FLIGHT
from tests.support.fakes.openai_server import Reply
from tests.support.helpers import debate_responder, query, stage_and_side
from tests.support.running import priced_workspace, scheduled, slow, start_run, statuses
from tests.arena.app.runner.test_concurrent_runs import ENTRIES, MATCHES, both_workers_mid_match, finish, wait_for

pytestmark = pytest.mark.slow


def test_workers_stop_within_seconds_when_their_parent_is_killed(tmp_path, fake_llm):
    fake_llm.responder = slow(0.5)  # the plan takes longer than the 10 s the workers are given to stop
    path = scheduled(tmp_path, fake_llm.api_base, entries=ENTRIES)
    parent = start_run(path, "--workers", "2", "--concurrency", "2")
    workers = both_workers_mid_match(path, parent)
    os.kill(parent.pid, signal.SIGKILL)  # as the OOM killer or a supervisor would: no chance to pass anything on
    parent.wait(timeout=30)
    killed_at = time.monotonic()
    while any(alive(pid) for pid in workers) and time.monotonic() - killed_at < 10:
        time.sleep(0.05)
    assert not any(alive(pid) for pid in workers), "workers outlived their parent"
    requests = len(fake_llm.requests)
    time.sleep(1.0)
    assert len(fake_llm.requests) == requests  # nobody plays on with no one watching
    left = statuses(path)
    assert left.get("scheduled", 0) >= MATCHES // 2  # most of the plan was never started ...
    assert "running" not in left and "failed" not in left  # ... and the matches in flight went back to it
    assert not query(path, "SELECT COUNT(*) FROM claims")[0][0]

    finish(start_run(path, "--workers", "2"))
    assert statuses(path) == {"done": MATCHES}


def judge_slower_than_debaters(delay: float):
    """Speeches at once, verdicts after `delay`: played matches pile up waiting for their judge."""
    answer = debate_responder()
    return lambda body: Reply(content=answer(body), delay=delay if body["model"] == "judge-model" else 0)


@pytest.mark.parametrize("workers, concurrency", [(1, 2), (2, 3)])
def test_no_more_than_twice_the_concurrency_is_under_way(tmp_path, fake_llm, workers, concurrency):
    fake_llm.responder = judge_slower_than_debaters(0.3)
    path = scheduled(tmp_path, fake_llm.api_base, entries=ENTRIES)
    run = start_run(path, "--workers", str(workers), "--concurrency", str(concurrency))
    most = 0
    while run.poll() is None:
        most = max(most, query(path, "SELECT COUNT(*) FROM claims WHERE judge = ''")[0][0])
        time.sleep(0.01)
    finish(run)
    assert statuses(path) == {"done": MATCHES}
    assert most == 2 * concurrency  # claims included: held from the claim to the commit, never more


def test_worker_shares_add_up_to_the_runs_concurrency():
    assert shares(8, 3) == [3, 3, 2]
    assert shares(4, 4) == [1, 1, 1, 1]
    assert all(sum(shares(n, w)) == n and max(shares(n, w)) - min(shares(n, w)) <= 1
               for n in range(1, 20) for w in range(1, n + 1))


def test_more_workers_than_matches_at_once_are_not_started(tmp_path, fake_llm):
    fake_llm.responder = slow(0.02)
    path = scheduled(tmp_path, fake_llm.api_base, entries=ENTRIES)
    [(_, err)] = finish(start_run(path, "--workers", "3", "--concurrency", "2"))
    assert "--workers 3 with --concurrency 2: 2 workers" in err
    assert len({pid for (pid,) in query(path, "SELECT DISTINCT pid FROM claims")}) == 0  # all released
    assert statuses(path) == {"done": MATCHES}


def test_a_call_in_flight_at_a_kill_is_in_the_ledger_and_counts_against_the_budget(tmp_path, fake_llm):
    fake_llm.responder = lambda body: Reply(content=debate_responder()(body), delay=60)  # never answered in time
    path = priced_workspace(tmp_path, fake_llm.api_base)
    run = start_run(path, "--concurrency", "1")
    wait_for(lambda: len(fake_llm.requests) >= 2, run)  # both constructives, written at once
    os.kill(run.pid, signal.SIGKILL)
    run.wait(timeout=30)

    rows = query(path, "SELECT kind, model, error, cost, match_id, side FROM calls ORDER BY side")
    assert [(kind, model, error, side) for kind, model, error, _, _, side in rows] == [
        ("llm", "openai/gpt-4o-mini", IN_FLIGHT, "con"), ("llm", "openai/gpt-4o-mini", IN_FLIGHT, "pro")]
    for (*_, cost, match_id, side) in rows:
        [sent] = [r.body for r in fake_llm.requests if stage_and_side(r.body) == ("constructive", side)]
        prompt_bytes = sum(len(m["content"].encode()) for m in sent["messages"])
        # gpt-4o-mini: $0.15 per million prompt tokens, $0.60 per million answer tokens (litellm's price map);
        # a byte per token and the whole answer room: the most the call can cost
        assert cost == pytest.approx(prompt_bytes * 0.15e-6 + sent["max_tokens"] * 0.6e-6)
        assert match_id == rows[0][4]

    budget = sum(row[3] for row in rows) / 2  # what the killed calls may have cost is already over it
    out, err = start_run(path, "--budget", f"{budget:.10f}").communicate(timeout=120)
    assert "budget reached" in out, err
    assert len(fake_llm.requests) == 2  # nothing more was sent
    assert query(path, "SELECT COUNT(*) FROM calls WHERE error = ?", IN_FLIGHT)[0][0] == 2


def test_settled_calls_leave_nothing_in_flight(tmp_path, fake_llm):
    fake_llm.responder = slow(0.0)
    path = priced_workspace(tmp_path, fake_llm.api_base)
    finish(start_run(path))
    rows = query(path, "SELECT error, cost, prompt_tokens, latency_s, model FROM calls WHERE kind = 'llm'")
    unsettled = [row for row in rows if not (row[0] is None and row[1] > 0 and row[2] > 0)]
    assert rows and not unsettled, unsettled
    assert len(rows) == len(fake_llm.requests)  # one row per call sent: settled in place, not added
