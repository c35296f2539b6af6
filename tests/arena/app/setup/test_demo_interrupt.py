"""`arena demo` stopped part way (issue 50): Ctrl-C or a SIGTERM while it plays stops it as it stops `arena run`
(exit 130, "interrupted"), and no site of some of the matches is published as if it were the demo's result; the
matches not done are scheduled again, and a rerun resumes and publishes. A real `python -m arena demo` process,
signalled once the workspace's database holds a few done matches."""
from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.helpers import query
from tests.support.running import ROOT, statuses

pytestmark = pytest.mark.slow  # each a demo's start and a few seconds of play (~5 s); the resume a whole demo (~10 s)


def start_demo(path: Path) -> subprocess.Popen:
    """`arena demo -w path` as a process of its own, taking Ctrl-C as a foreground command does (see
    tests.support.running.start_run)."""
    return subprocess.Popen([sys.executable, "-m", "arena", "demo", "-w", str(path)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)},
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def done_matches(path: Path) -> int:
    """How many matches the demo's database holds done (0 before it exists)."""
    try:
        return query(path, "SELECT COUNT(*) FROM matches WHERE status = 'done'")[0][0]
    except sqlite3.OperationalError:  # not created yet, or its tables not yet
        return 0


def interrupted(path: Path, signum: int) -> subprocess.CompletedProcess:
    """The demo at path signalled with signum once it has played 3 matches: how it ended."""
    proc = start_demo(path)
    deadline = time.monotonic() + 120
    while done_matches(path) < 3:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the demo played no 3 matches in 120 s"
        time.sleep(0.05)
    proc.send_signal(signum)
    out, err = proc.communicate(timeout=120)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_an_interrupted_demo_exits_130_and_publishes_nothing(tmp_path, signum):
    path = tmp_path / "arena-demo"

    ended = interrupted(path, signum)

    assert ended.returncode == 130, ended.stderr[-2000:]
    assert "interrupted" in ended.stderr and "Traceback" not in ended.stderr
    assert f"'arena demo -w {path}' resumes the demo" in ended.stderr  # what to do next
    assert "index.html" not in ended.stdout  # no site's path printed as if done...
    assert not (path / "site").exists()  # ...and none published from a part of the matches
    counts = statuses(path)
    assert set(counts) == {"done", "scheduled"} and 3 <= counts["done"] < 60, counts  # none left 'running'


def test_a_rerun_of_an_interrupted_demo_resumes_and_publishes(tmp_path):
    path = tmp_path / "arena-demo"
    first = interrupted(path, signal.SIGINT)
    assert first.returncode == 130
    played = query(path, "SELECT id, finished_at FROM matches WHERE status = 'done'")

    rerun = subprocess.run([sys.executable, "-m", "arena", "demo", "-w", str(path)], capture_output=True, text=True,
                           env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=300)

    assert rerun.returncode == 0, rerun.stderr[-2000:]
    assert rerun.stdout.strip() == str(path / "site" / "index.html")
    assert statuses(path) == {"done": 60}
    finished = dict(query(path, "SELECT id, finished_at FROM matches"))
    assert all(finished[match_id] == at for match_id, at in played)  # the first's matches were not played again
    assert query(path, "SELECT COUNT(*) FROM speeches")[0][0] == 6 * 60
    assert len(list((path / "site" / "matches").glob("*.html"))) == 60
