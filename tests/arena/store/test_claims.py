"""Claims with leases (arena.match.claims, arena.store): who may take a match to play or judge, and when a claim lapses."""
from __future__ import annotations

import os
import subprocess
import sys
import threading

import pytest

from arena.match import claims
from arena.match.claims import ClaimLost, Holder
from arena.base.clock import now
from arena.domain.records import Motion, Verdict
from arena.store import Store


def holder(name: str, *, pid: int | None = None, host: str = claims.HOST) -> Holder:
    return Holder(name, pid if pid is not None else os.getpid(), host)


@pytest.fixture
def planned(tmp_path):
    """Two Store connections on one database (as two processes have), with three scheduled matches."""
    first = Store(tmp_path / "arena.db")
    first.add_motions([Motion("m1", "This house would test.", "policy", "en", "")])
    ids = first.add_tournament("t", 0, {}, [("m1", "a", "b"), ("m1", "b", "a"), ("m1", "a", "c")])
    second = Store(tmp_path / "arena.db")
    yield first, second, ids
    first.close()
    second.close()


def dead_pid() -> int:
    """The pid of a process that has exited (and been reaped)."""
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return int(done.stdout)


def test_claims_hand_each_match_to_one_holder_in_order(planned):
    first, second, ids = planned
    a, b = holder("a"), holder("b")
    assert first.claim_match(a) == ids[0]
    assert second.claim_match(b) == ids[1]  # the other connection sees the first claim at once
    assert first.claim_match(a) == ids[2]
    assert second.claim_match(b) is None
    rows = first.conn.execute("SELECT match_id, holder FROM claims ORDER BY match_id").fetchall()
    assert [tuple(r) for r in rows] == [(ids[0], "a"), (ids[1], "b"), (ids[2], "a")]
    assert {r[0] for r in first.conn.execute("SELECT status FROM matches")} == {"running"}


def test_many_threads_claiming_at_once_never_share_a_match(tmp_path):
    store = Store(tmp_path / "arena.db")
    store.add_motions([Motion("m1", "This house would test.", "policy", "en", "")])
    ids = store.add_tournament("t", 0, {}, [("m1", "a", "b")] * 40)
    store.close()
    got: dict[str, list[str]] = {}

    def grab(name: str) -> None:
        mine = Store(tmp_path / "arena.db")  # a connection each, as processes have
        got[name] = []
        while (match_id := mine.claim_match(holder(name))) is not None:
            got[name].append(match_id)
        mine.close()

    threads = [threading.Thread(target=grab, args=(f"h{k}",)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    claimed = [m for ms in got.values() for m in ms]
    assert sorted(claimed) == sorted(ids)  # every match once, none twice


def test_a_claim_lapses_when_its_heartbeat_is_older_than_the_lease(planned, monkeypatch):
    first, second, ids = planned
    far = holder("far", pid=1, host="another-host")  # a pid we cannot check: only the heartbeat tells
    assert first.claim_match(far, only=ids[0]) == ids[0]
    assert second.claim_match(holder("b"), only=ids[0], lease_s=60) is None  # alive and well
    assert second.pending_matches(lease_s=60) == ids[1:]
    t0 = claims.clock()
    monkeypatch.setattr("arena.store.claims.clock", lambda: t0 + 61)
    assert second.pending_matches(lease_s=60) == ids
    assert second.claim_match(holder("b"), only=ids[0], lease_s=60) == ids[0]
    # The first holder comes back: its commit is refused, and nothing of it is written.
    with pytest.raises(ClaimLost, match="another took it over"):
        first.commit_match(ids[0], [], [Verdict("j", 0, "pro")], [], True, holder=far)
    assert first.conn.execute("SELECT COUNT(*) FROM verdicts").fetchone()[0] == 0
    assert first.conn.execute("SELECT status FROM matches WHERE id=?", (ids[0],)).fetchone()[0] == "running"


def test_heartbeats_keep_a_claim_alive(planned, monkeypatch):
    first, second, ids = planned
    far = holder("far", pid=1, host="another-host")
    t0 = claims.clock()
    first.claim_match(far, only=ids[0])
    monkeypatch.setattr("arena.store.claims.clock", lambda: t0 + 50)
    first.heartbeat(far)
    monkeypatch.setattr("arena.store.claims.clock", lambda: t0 + 100)  # 100 s after the claim, 50 after the beat
    assert second.claim_match(holder("b"), only=ids[0], lease_s=60) is None


def test_a_claim_of_a_process_gone_from_this_host_lapses_at_once(planned):
    first, second, ids = planned
    gone = holder("gone", pid=dead_pid())
    assert first.claim_match(gone, only=ids[1]) == ids[1]
    assert second.claim_match(holder("b"), only=ids[1]) == ids[1]  # no waiting for the lease


def test_commit_and_release_check_the_holder(planned):
    first, second, ids = planned
    a, b = holder("a"), holder("b")
    match_id = first.claim_match(a)
    with pytest.raises(ClaimLost):
        second.commit_match(match_id, [], [Verdict("j", 0, "pro")], [], True, holder=b)
    second.mark_failed(match_id, "not b's to fail", b)  # not b's claim: nothing happens
    second.mark_scheduled(match_id, b)
    assert first.conn.execute("SELECT status FROM matches WHERE id=?", (match_id,)).fetchone()[0] == "running"
    first.commit_match(match_id, [], [Verdict("j", 0, "pro")], [], True, holder=a)
    assert first.conn.execute("SELECT status FROM matches WHERE id=?", (match_id,)).fetchone()[0] == "done"
    assert first.conn.execute("SELECT COUNT(*) FROM claims").fetchone()[0] == 0  # committing gave it up
    with pytest.raises(ClaimLost):  # and a second commit of the same match is refused
        first.commit_match(match_id, [], [Verdict("j", 0, "pro")], [], True, holder=a)


def test_an_interrupted_match_goes_back_to_the_plan_and_a_failed_one_waits_for_retry(planned):
    first, _, ids = planned
    a = holder("a")
    first.claim_match(a, only=ids[0])
    first.mark_scheduled(ids[0], a)
    first.claim_match(a, only=ids[1])
    first.mark_failed(ids[1], "boom", a)
    assert first.pending_matches() == [ids[0], ids[2]]
    assert first.pending_matches(now()) == ids  # --retry-failed: failed before now
    assert first.pending_matches("2000-01-01T00:00:00") == [ids[0], ids[2]]  # failed after then: not this run's
    assert first.conn.execute("SELECT COUNT(*) FROM claims").fetchone()[0] == 0


def test_judging_claims_one_holder_per_match_and_judge(planned):
    first, second, ids = planned
    a, b = holder("a"), holder("b")
    for match_id in ids[:2]:
        first.claim_match(a, only=match_id)
        first.commit_match(match_id, [], [Verdict("j1", 0, "pro")], [], True, holder=a)
    assert first.matches_to_judge("j2") == ids[:2]
    assert first.claim_judging(a, ids[0], "j2")
    assert not second.claim_judging(b, ids[0], "j2")  # a holds it
    assert second.claim_judging(b, ids[0], "j3")  # another judge is another claim
    assert not second.claim_judging(b, ids[0], "j1")  # j1 has judged it already
    assert not second.claim_judging(b, ids[2], "j2")  # not played yet
    with pytest.raises(ClaimLost):
        second.replace_verdicts(ids[0], "j2", [Verdict("j2", 0, "con")], True, holder=b)
    first.replace_verdicts(ids[0], "j2", [Verdict("j2", 0, "con")], True, holder=a)
    assert not second.claim_judging(b, ids[0], "j2")  # judged now: nothing left to claim
    assert first.matches_to_judge("j2") == [ids[1]]


def test_rejudging_claims_what_was_judged_before_the_rejudge_began(planned):
    first, second, ids = planned
    a, b = holder("a"), holder("b")
    first.claim_match(a, only=ids[0])
    first.commit_match(ids[0], [], [Verdict("j1", 0, "pro")], [], True, holder=a)
    since = now()
    assert first.matches_to_judge("j1") == []
    assert first.matches_to_judge("j1", rejudged_before=since) == [ids[0]]
    assert first.claim_judging(a, ids[0], "j1", rejudged_before=since)
    first.replace_verdicts(ids[0], "j1", [Verdict("j1", 0, "con")], True, holder=a)
    # A second rejudging process that started at the same time finds it done since then.
    assert not second.claim_judging(b, ids[0], "j1", rejudged_before=since)
