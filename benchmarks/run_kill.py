"""What a kill -9 of `arena run --workers 2` leaves: how soon its workers stop, how many requests reach the provider
after the kill, and where the plan's matches are; beside the reference, the watchdog's own deadline (WATCH_S to
notice, GRACE_S to stop).

A loopback fake provider answers every call after 0.5 s; 4 direct entries play a round-robin of 12 matches; the
parent is killed 1 s after both workers hold a match.

Run: .venv/bin/python benchmarks/run_kill.py
"""
from __future__ import annotations

import os
import signal
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from arena.app.runner.workers import GRACE_S, WATCH_S  # noqa: E402
from arena.match.claims import alive  # noqa: E402
from tests.support.fakes.openai_server import FakeOpenAI  # noqa: E402
from tests.support.helpers import query  # noqa: E402
from tests.support.running import scheduled, slow, start_run  # noqa: E402
from tests.arena.app.runner.test_concurrent_runs import worker_pids  # noqa: E402


def main() -> None:
    with FakeOpenAI() as fake, tempfile.TemporaryDirectory() as tmp:
        fake.responder = slow(0.5)
        path = scheduled(Path(tmp), fake.api_base, entries=("a", "b", "c", "d"))
        run = start_run(path, "--workers", "2", "--concurrency", "2")
        workers: set[int] = set()
        while len(workers) < 2 or query(path, "SELECT COUNT(DISTINCT pid) FROM claims")[0][0] < 2:
            workers.update(worker_pids(run.pid))
            time.sleep(0.02)
        time.sleep(1.0)
        os.kill(run.pid, signal.SIGKILL)
        killed = time.monotonic()
        run.wait()
        sent = len(fake.requests)
        while any(alive(pid) for pid in workers):
            time.sleep(0.005)
        stopped = time.monotonic() - killed
        time.sleep(1.0)
        statuses = dict(query(path, "SELECT status, COUNT(*) FROM matches GROUP BY status"))
        print(f"workers stopped {stopped * 1000:.0f} ms after kill -9 of their run "
              f"(reference: the watchdog's worst case, {(WATCH_S + GRACE_S) * 1000:.0f} ms)")
        print(f"requests after the kill: {len(fake.requests) - sent}; matches: {statuses}; "
              f"claims left: {query(path, 'SELECT COUNT(*) FROM claims')[0][0]}")


if __name__ == "__main__":
    main()
