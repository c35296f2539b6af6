"""`arena entry remove`: an entry in no match leaves arena.toml (every other byte kept) and the database, so its
name is free again; one that has played or is scheduled is refused, pointing at `arena entry retire`."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from arena.workspace.config import CONFIG_NAME, load_config
from tests.support.helpers import TWO_OFFLINE, assert_user_error, entry, invoke, new_workspace, query, snapshot


@pytest.fixture
def ws(builds, tmp_path) -> Path:
    """The test's own copy of build_ws's workspace (made once per test process)."""
    return builds.copy("entry_remove:ws", build_ws, tmp_path / "ws").path


def build_ws(path: Path) -> None:
    """`arena init`'s template workspace with two offline entries added by `arena entry add`."""
    assert invoke("init", path).exit_code == 0
    for name in ("a", "b"):
        added = invoke("entry", "add", name, "--debater", "direct", "--model", f"offline/{name}", "-w", path)
        assert added.exit_code == 0, added.output


def names(ws: Path) -> list[str]:
    listed = invoke("entry", "list", "--format", "json", "-w", ws)
    assert listed.exit_code == 0, listed.output
    return [row["name"] for row in json.loads(listed.output)]


def test_removing_an_entry_just_added_gives_back_arena_toml_as_it_was(ws):
    before = snapshot(ws)
    added = invoke("entry", "add", "c", "--debater", "agent4debate", "--model", "offline/c", "--strength", "0.5",
                   "--param", "temperature=0.4", "-w", ws)
    assert added.exit_code == 0, added.output
    result = invoke("entry", "remove", "c", "-w", ws)
    assert result.exit_code == 0, result.output
    assert f"removed entry 'c' from {ws / CONFIG_NAME}" in result.output
    assert snapshot(ws)[CONFIG_NAME] == before[CONFIG_NAME]  # byte for byte
    assert query(ws, "SELECT name FROM entries ORDER BY name") == [("a",), ("b",)]  # arena.db forgets it


def test_a_removed_entry_name_can_be_registered_again(ws):
    assert invoke("entry", "remove", "b", "-w", ws).exit_code == 0
    assert names(ws) == ["a"]
    again = invoke("entry", "add", "b", "--debater", "search-baseline", "--model", "offline/b2", "-w", ws)
    assert again.exit_code == 0, again.output
    assert load_config(ws).entry("b").debater == "search-baseline"


def test_remove_keeps_the_comments_and_the_tables_around_the_entry(tmp_path):
    text = ('[search]\nprovider = "offline"\n\n# the field\n[[entries]]\nname = "a"\ndebater = "direct"\n'
            'model = "offline/a"\n\n[[entries]]\nname = "b"\ndebater = "direct"  # for now\nmodel = "offline/b"\n'
            '[entries.params]\n# cooler\ntemperature = 0.2\n# and the last one:\n[[entries]]\nname = "c"\n'
            'debater = "direct"\nmodel = "offline/c"\n')
    ws = new_workspace(tmp_path / "ws", text=text, opened=True)
    assert invoke("entry", "remove", "b", "-w", ws).exit_code == 0
    assert (ws / CONFIG_NAME).read_text(encoding="utf-8") == text.replace(
        '\n[[entries]]\nname = "b"\ndebater = "direct"  # for now\nmodel = "offline/b"\n[entries.params]\n# cooler\n'
        "temperature = 0.2\n", "")
    assert [e.name for e in load_config(ws).entries] == ["a", "c"]


@pytest.mark.parametrize("play", [False, True], ids=["scheduled", "played"])
def test_an_entry_in_a_match_is_not_removed_but_pointed_at_retire(tmp_path, play):
    ws = new_workspace(tmp_path / "ws", motions=["builtin:en"], entries=[*TWO_OFFLINE, entry("c")], opened=True)
    assert invoke("schedule", "--format", "round-robin", "-w", ws).exit_code == 0
    if play:
        assert invoke("run", "-w", ws).exit_code == 0
    before = snapshot(ws)
    status = "done" if play else "scheduled"
    assert_user_error(invoke("entry", "remove", "a", "-w", ws), "entry 'a' is in 4 matches", f"(4 {status})",
                      "cannot be removed", "'arena entry retire a'")
    assert snapshot(ws) == before
    assert invoke("entry", "retire", "a", "-w", ws).exit_code == 0


def test_remove_of_an_unknown_entry_names_the_known(ws):
    before = snapshot(ws)
    assert_user_error(invoke("entry", "remove", "zed", "-w", ws), "unknown entry 'zed'", "a, b")
    assert snapshot(ws) == before
