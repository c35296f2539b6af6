"""One writer of arena.toml at a time (arena.app.setup.wiring.editing): edits started at once by processes of their own
all land, a removal is decided against what a concurrent schedule stores, and a judge a run is using stays.

Each test starts real `python -m arena` processes (about 1.5 s of CPU each, for the imports): 8 at once in the
first, 2 in the second, and a run in the third.
"""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arena.workspace.config import load_config
from tests.support.helpers import invoke, query, write_workspace
from tests.support.running import ROOT, scheduled, slow, start_run
from tests.arena.app.runner.test_concurrent_runs import finish

pytestmark = pytest.mark.slow


def arena_processes(*commands: list[str]) -> list[subprocess.Popen]:
    """Each `arena <command>` started at once, in a process of its own."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return [subprocess.Popen([sys.executable, "-m", "arena", *command], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=env) for command in commands]


def outcomes(processes: list[subprocess.Popen]) -> list[tuple[int, str]]:
    """(exit code, stderr) of each process, once all have ended."""
    errors = [p.communicate(timeout=120)[1] for p in processes]
    return [(p.returncode, err) for p, err in zip(processes, errors)]


def test_judges_added_by_eight_processes_at_once_all_land(tmp_path, fake_llm):
    path = write_workspace(tmp_path / "ws", fake_llm.api_base)
    before = [j.name for j in load_config(path).judges]
    names = [f"added-{k}" for k in range(8)]
    ended = outcomes(arena_processes(*(["judge", "add", name, "--kind", "single", "--model", f"offline/{name}",
                                        "-w", str(path)] for name in names)))
    assert [code for code, _ in ended] == [0] * 8, ended
    assert [j.name for j in load_config(path).judges][:len(before)] == before  # nothing of before lost
    assert sorted(j.name for j in load_config(path).judges[len(before):]) == names  # and every edit landed
    assert "undone" not in "".join(err for _, err in ended)


@pytest.mark.parametrize("attempt", range(2))
def test_an_entry_removed_while_a_schedule_is_drawn_is_in_no_stored_match_or_stays(tmp_path, fake_llm, attempt):
    path = write_workspace(tmp_path / "ws", fake_llm.api_base, entries=("alpha", "beta", "gamma", "victim"))
    (removal, _), (drawn, err) = outcomes(arena_processes(["entry", "remove", "victim", "-w", str(path)],
                                                          ["schedule", "--format", "round-robin", "--rounds", "40",
                                                           "-w", str(path)]))
    assert drawn == 0, err
    names = {name for row in query(path, "SELECT pro, con FROM matches") for name in row}
    configured = {e.name for e in load_config(path).entries}
    if removal == 0:  # removed first: the schedule drew from the three left
        assert "victim" not in configured and names == {"alpha", "beta", "gamma"}
    else:  # drawn first: the entry is in matches, so it stays
        assert "victim" in configured and "victim" in names
    assert names <= configured  # either way, no stored match names an entry that is gone


def test_a_judge_a_run_is_using_is_not_removed_until_the_run_has_stopped(tmp_path, fake_llm):
    fake_llm.responder = slow(0.3)
    path = scheduled(tmp_path, fake_llm.api_base)
    run = start_run(path)
    deadline = time.monotonic() + 60
    while not query(path, "SELECT COUNT(*) FROM claims")[0][0] and time.monotonic() < deadline:
        time.sleep(0.05)
    toml = (Path(path) / "arena.toml").read_bytes()
    refused = invoke("judge", "remove", "j1", "-w", path)
    assert refused.exit_code == 1
    assert "a run is under way in this workspace" in refused.stderr and f"process {run.pid}" in refused.stderr
    assert (Path(path) / "arena.toml").read_bytes() == toml
    finish(run)
    assert query(path, "SELECT COUNT(*) FROM matches WHERE status='done'")[0][0] == 6
    # Once the run has stopped, what stands in the way is the verdicts it stored, as ever.
    kept = invoke("judge", "remove", "j1", "-w", path)
    assert kept.exit_code == 2 and "has verdicts or ballot links" in kept.stderr


def test_init_never_writes_over_an_arena_toml_made_while_it_checked(tmp_path):
    """Two `arena init`s of one folder at once: the second to write finds the first's file and leaves it as it is."""
    from arena.base.errors import UserError
    from arena.workspace.folder import init_workspace

    path = tmp_path / "ws"
    theirs = b"# another init's arena.toml\n"

    def meanwhile(config):  # runs after init's check that no arena.toml exists, before it writes one
        path.mkdir()
        (path / "arena.toml").write_bytes(theirs)
        return []

    with pytest.raises(UserError, match="arena.toml: already exists"):
        init_workspace(path, load_motions=meanwhile)
    assert (path / "arena.toml").read_bytes() == theirs
    assert sorted(p.name for p in path.iterdir() if p.name.startswith(".")) == []  # no temporary file left
