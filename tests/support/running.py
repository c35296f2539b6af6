"""Runs on the fake provider, shared by test_run_cmd and test_concurrent_runs: scheduled workspaces, `arena run`
as a process of its own, and checks of what arena.db holds once runs are over."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from arena.app import commands as app
from arena.app.commands import open_workspace
from tests.support.fakes.openai_server import Reply
from tests.support.helpers import debate_responder, entry, judge, mark_checked, new_workspace, query, write_workspace

ROOT = Path(__file__).resolve().parents[2]
ENTRIES = ("alpha", "beta", "gamma")  # a round-robin of 6 matches, each pair on its own motion


def slow(delay: float):
    """debate_responder, each answer after `delay` seconds, so a run is long enough to interrupt."""
    answer = debate_responder()
    return lambda body: Reply(content=answer(body), delay=delay)


def scheduled(tmp_path, api_base, *, entries=ENTRIES, judge_runs: int = 1) -> Path:
    """tmp_path/ws as write_workspace makes it, with a round-robin of its entries scheduled."""
    return round_robin(write_workspace(tmp_path / "ws", api_base, entries=entries, judge_runs=judge_runs), rounds=1)


def round_robin(path: Path, *, rounds: int) -> Path:
    """The workspace at path with a round-robin of `rounds` scheduled; its path."""
    ws = open_workspace(path)
    try:
        app.schedule(ws, "round-robin", rounds=rounds)
    finally:
        ws.close()
    return path


def statuses(path: Path) -> dict[str, int]:
    """How many matches have each status."""
    return dict(query(path, "SELECT status, COUNT(*) FROM matches GROUP BY status"))


def start_run(path: Path, *args: str) -> subprocess.Popen:
    """`arena run -w path` (with args) as a process of its own."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-m", "arena", "run", "-w", str(path), *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            preexec_fn=_as_in_a_terminal)


def _as_in_a_terminal() -> None:
    """The run takes Ctrl-C as a foreground command does, even when the tests themselves were started in the
    background by a shell without job control, which (as POSIX asks) has them and their children ignore SIGINT."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def assert_each_match_done_once(path: Path, matches: int, judge_runs: int = 1) -> None:
    assert statuses(path) == {"done": matches}
    assert query(path, "SELECT COUNT(*) FROM speeches")[0][0] == 6 * matches
    assert query(path, "SELECT COUNT(*) FROM verdicts WHERE error IS NULL")[0][0] == judge_runs * matches
    # One agent message per call: a duplicated match would leave twice as many.
    assert query(path, "SELECT COUNT(*) FROM agent_messages")[0][0] == (6 + judge_runs) * matches
    per_match = query(path, "SELECT match_id, COUNT(*) FROM speeches GROUP BY match_id")
    assert {n for _, n in per_match} == {6}


def key(body: dict) -> str:
    """A request body as one comparable string."""
    return json.dumps(body, sort_keys=True)


def priced_workspace(tmp_path, api_base) -> Path:
    """Entries and judge on gpt-4o-mini, a model litellm prices, served by the fake server."""
    temperatures = {"alpha": 0.2, "beta": 0.4}  # two entries on one model, asking differently
    path = new_workspace(tmp_path / "ws", arena={"judge_runs": 1},
                         entries=[entry(name, model="openai/gpt-4o-mini", api_base=api_base, params={"temperature": t})
                                  for name, t in temperatures.items()],
                         judges=[judge("j1", model="openai/gpt-4o-mini", api_base=api_base)])
    return round_robin(mark_checked(path), rounds=2)  # 4 matches
