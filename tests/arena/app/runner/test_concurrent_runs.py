"""Many processes on one workspace: concurrent `arena run`s, `arena judge` beside them, `--workers`, kill -9.

Every run here is a real `arena` process talking to the fake provider over HTTP; the checks read
the database and the provider's request log: each match played once, each (match, judge) judged
once, and no more paid calls than one runner alone would make (within 10% after a kill -9).
"""
from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from arena.app import commands as app
from arena.app.commands import open_workspace
from tests.support.helpers import mark_checked, query
from tests.support.running import (ROOT, assert_each_match_done_once, key, priced_workspace, scheduled, slow, start_run,
                           statuses)

pytestmark = pytest.mark.slow
ENTRIES = ("alpha", "beta", "gamma", "delta")  # a round-robin of 12 matches
MATCHES, CALLS = 12, 12 * 7  # 6 speeches and R = 1 verdict per match


def finish(*processes: subprocess.Popen, timeout: float = 240) -> list[tuple[str, str]]:
    """Wait for each process; their (stdout, stderr), after checking each ended well."""
    outputs = [p.communicate(timeout=timeout) for p in processes]
    for p, (out, err) in zip(processes, outputs):
        assert p.returncode == 0, err
        assert "Traceback" not in err
    return outputs


def done_count(summary: str) -> int:
    return int(summary.split(" done,")[0].split()[-1])


def paid_calls(path: Path) -> int:
    return query(path, "SELECT COUNT(*) FROM calls WHERE kind = 'llm' AND cache_hit = 0 AND error IS NULL")[0][0]


def wait_for(condition, process: subprocess.Popen | None = None, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process is not None:
            assert process.poll() is None, process.communicate()
        if condition():
            return
        time.sleep(0.02)
    raise AssertionError("timed out waiting")


@pytest.mark.parametrize("runners", [2, 3])
def test_concurrent_runs_play_each_match_once(tmp_path, fake_llm, runners):
    fake_llm.responder = slow(0.05)
    path = scheduled(tmp_path, fake_llm.api_base, entries=ENTRIES)
    processes = [start_run(path, "--concurrency", "2") for _ in range(runners)]
    outputs = finish(*processes)

    assert_each_match_done_once(path, MATCHES)
    assert paid_calls(path) == CALLS  # nothing played twice ...
    assert len(fake_llm.requests) == CALLS and len({key(r.body) for r in fake_llm.requests}) == CALLS  # ... or asked
    assert sum(done_count(out) for out, _ in outputs) == MATCHES  # the runs split the plan between them
    assert query(path, "SELECT COUNT(*) FROM claims")[0][0] == 0  # and left no claim behind


def test_run_beside_two_judges_judges_each_match_once(tmp_path, fake_llm):
    fake_llm.responder = slow(0.05)
    path = scheduled(tmp_path, fake_llm.api_base, entries=("alpha", "beta", "gamma"))
    finish(start_run(path, "--concurrency", "3"))  # 6 matches done, judged by j1 alone
    toml = path / "arena.toml"
    toml.write_text(toml.read_text() + '\n[[judges]]\nname = "j2"\nkind = "single"\nmodel = "openai/judge2-model"\n'
                                       f'api_base = "{fake_llm.api_base}"\nruns = 2\n')
    mark_checked(path)
    ws = open_workspace(path)
    try:
        app.schedule(ws, "round-robin", rounds=1)  # 6 more to play, which `arena run` judges with j1 and j2
    finally:
        ws.close()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    judging = [subprocess.Popen([os.sys.executable, "-m", "arena", "judge", "--judge", "j2", "-w", str(path),
                                 "--concurrency", "2"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=env) for _ in range(2)]
    outputs = finish(start_run(path, "--concurrency", "3"), *judging)

    assert statuses(path) == {"done": 12}
    per_judge = dict(query(path, "SELECT judge, COUNT(*) FROM verdicts WHERE error IS NULL GROUP BY judge"))
    assert per_judge == {"j1": 12, "j2": 24}
    calls = query(path, "SELECT match_id, COUNT(*) FROM calls WHERE judge = 'j2' AND cache_hit = 0 "
                        "GROUP BY match_id")
    assert len(calls) == 12 and {n for _, n in calls} == {2}  # R = 2 runs per match, nobody's twice
    judged = [int(out.split("judged ")[1].split(" match")[0]) for out, _ in outputs[1:]]
    assert sum(judged) == 6  # the two `arena judge`s split the six old matches (the run judged the new ones)


def test_a_kill_9_of_one_runner_leaves_its_matches_to_the_others(tmp_path, fake_llm):
    fake_llm.responder = slow(0.05)
    path = scheduled(tmp_path, fake_llm.api_base, entries=ENTRIES)
    victim, survivor = start_run(path, "--concurrency", "2"), start_run(path, "--concurrency", "2")

    def victim_mid_match() -> bool:  # the victim holds a match of which some calls are done
        return bool(query(path, "SELECT COUNT(*) FROM claims c JOIN calls k ON k.match_id = c.match_id "
                                "WHERE c.pid = ? AND c.judge = ''", victim.pid)[0][0])

    wait_for(victim_mid_match, victim)
    held = {m for (m,) in query(path, "SELECT match_id FROM claims WHERE pid = ?", victim.pid)}
    os.kill(victim.pid, signal.SIGKILL)
    victim.wait(timeout=30)
    finish(survivor)
    finish(start_run(path))  # whatever the survivor could not see yet, the next run plays

    assert_each_match_done_once(path, MATCHES)
    assert held and not query(path, "SELECT COUNT(*) FROM claims")[0][0]
    assert paid_calls(path) <= 1.1 * CALLS  # only the calls in flight at the kill were paid twice
    assert len(fake_llm.requests) <= 1.1 * CALLS


def worker_pids(parent: int) -> list[int]:
    """The worker processes (children but multiprocessing's own helpers) of a process, by /proc."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            cmdline = (entry / "cmdline").read_bytes()
        except (OSError, IndexError, ValueError):
            continue
        if ppid == parent and b"resource_tracker" not in cmdline:
            found.append(int(entry.name))
    return found


def both_workers_mid_match(path: Path, process: subprocess.Popen) -> set[int]:
    """Wait until each of the two workers of `arena run --workers 2` holds a match some calls of which are done;
    their pids."""
    workers: set[int] = set()

    def mid_match() -> bool:
        workers.update(worker_pids(process.pid))
        busy = {pid for (pid,) in query(path, "SELECT DISTINCT c.pid FROM claims c JOIN calls k "
                                              "ON k.match_id = c.match_id WHERE c.judge = ''")}
        return len(workers) == 2 and busy == workers

    wait_for(mid_match, process)
    return workers


def test_workers_share_the_plan_with_one_progress_display(tmp_path, fake_llm):
    fake_llm.responder = slow(0.05)
    path = scheduled(tmp_path, fake_llm.api_base, entries=ENTRIES)
    process = start_run(path, "--workers", "2", "--concurrency", "2")
    seen: set[int] = set()

    def two_workers_playing() -> bool:
        seen.update(worker_pids(process.pid))
        holders = {pid for (pid,) in query(path, "SELECT DISTINCT pid FROM claims")}
        return len(seen) == 2 and holders == seen  # each worker holds a match: both play

    wait_for(two_workers_playing, process)
    [(out, err)] = finish(process)

    assert out.strip() == f"{MATCHES} done, 0 failed, of {MATCHES}"
    assert_each_match_done_once(path, MATCHES)
    assert paid_calls(path) == CALLS
    lines = err.strip().splitlines()
    counters = [line.split("]")[0] + "]" for line in lines if line.startswith("[")]
    assert counters == [f"[{k}/{MATCHES}]" for k in range(1, MATCHES + 1)]  # one display, counting every worker
    assert lines[-1].startswith("after ") and f"{MATCHES}/{MATCHES} done" in lines[-1]
    assert f"{CALLS} calls" in lines[-1]  # the calls of both workers, relayed to the parent
    assert not any(Path(f"/proc/{pid}").exists() for pid in seen)  # no worker outlives the run


def test_workers_split_the_runs_concurrency_so_a_small_plan_reaches_every_worker(tmp_path, fake_llm):
    fake_llm.responder = slow(0.05)
    path = scheduled(tmp_path, fake_llm.api_base, entries=ENTRIES)
    process = start_run(path, "--workers", "2", "--concurrency", str(MATCHES))  # the whole plan at once
    most_held: dict[int, int] = {}

    def both_workers_playing() -> bool:
        for pid, held in query(path, "SELECT pid, COUNT(*) FROM claims WHERE judge = '' GROUP BY pid"):
            most_held[pid] = max(most_held.get(pid, 0), held)
        return len(most_held) == 2

    wait_for(both_workers_playing, process)
    finish(process)
    assert_each_match_done_once(path, MATCHES)
    assert max(most_held.values()) <= MATCHES // 2  # neither claimed more than its half of the 12 slots


def test_ctrl_c_stops_every_worker_and_the_rerun_completes(tmp_path, fake_llm):
    fake_llm.responder = slow(0.1)
    path = scheduled(tmp_path, fake_llm.api_base, entries=ENTRIES)
    process = start_run(path, "--workers", "2", "--concurrency", "2")
    workers = both_workers_mid_match(path, process)
    process.send_signal(signal.SIGINT)  # the parent alone, as `kill -INT`; a terminal's Ctrl-C is the same
    out, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    assert "Traceback" not in err and "interrupted" in out
    assert not any(Path(f"/proc/{pid}").exists() for pid in workers)
    left = statuses(path)
    assert "running" not in left and "failed" not in left  # every match in flight went back to the plan
    assert left.get("scheduled", 0) >= 4
    assert not query(path, "SELECT COUNT(*) FROM claims")[0][0]
    assert query(path, "SELECT COUNT(*) FROM speeches WHERE match_id IN "
                       "(SELECT id FROM matches WHERE status = 'scheduled')")[0][0] == 0

    finish(start_run(path, "--workers", "2"))
    assert_each_match_done_once(path, MATCHES)
    assert paid_calls(path) <= 1.1 * CALLS


def test_the_budget_holds_across_workers(tmp_path, fake_llm):
    fake_llm.responder = slow(0.05)
    path = priced_workspace(tmp_path, fake_llm.api_base)  # 4 matches on a priced model
    process = start_run(path, "--workers", "2", "--concurrency", "1", "--budget", "0.000001")
    [(out, _)] = finish(process)
    # Each worker starts one match at $0; once one is committed the ledger is over the budget for both.
    done = statuses(path).get("done", 0)
    assert 1 <= done <= 2 and statuses(path).get("scheduled", 0) == 4 - done
    assert "budget reached" in out
    assert query(path, "SELECT COUNT(*) FROM calls WHERE kind = 'llm'")[0][0] == 7 * done  # nothing more started
    assert len(fake_llm.requests) == paid_calls(path)
