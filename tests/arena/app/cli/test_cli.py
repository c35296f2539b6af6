"""The `arena` command line: exit codes, messages that name file/key/line, and nothing written on bad input."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from arena.app import commands as app
from arena.base.errors import UserError
from arena.app.commands import open_workspace
from tests.support.helpers import TWO_OFFLINE, assert_user_error, entry, invoke, new_workspace, snapshot, workspace_toml

ARENA = Path(sys.executable).with_name("arena")


# --- arena init -------------------------------------------------------------------------------

def test_init_creates_workspace(tmp_path):
    ws = tmp_path / "nested" / "ws"
    result = invoke("init", ws)
    assert result.exit_code == 0, result.output
    assert (ws / "arena.toml").is_file()
    assert (ws / "arena.db").is_file()
    assert str(ws / "arena.toml") in result.output
    # And the new workspace is usable.
    listed = invoke("entry", "list", "-w", ws, "--format", "json")
    assert listed.exit_code == 0, listed.output
    assert json.loads(listed.output) == []


def test_second_init_exits_2_naming_the_file(tmp_path):
    ws = tmp_path / "ws"
    assert invoke("init", ws).exit_code == 0
    (ws / "arena.toml").write_text(workspace_toml(entries=TWO_OFFLINE), encoding="utf-8")  # edits must survive
    before = snapshot(ws)
    result = invoke("init", ws)
    assert_user_error(result, str(ws / "arena.toml"), "already exists")
    assert snapshot(ws) == before


def test_init_default_directory_is_current_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = invoke("init")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "arena.toml").is_file() and (tmp_path / "arena.db").is_file()


# --- bad arena.toml: exit 2, a precise message, nothing written --------------------------------

ENTRY = '[[entries]]\nname = "a"\ndebater = "direct"\nmodel = "offline/a"\n'
JUDGE = '[[judges]]\nname = "j"\nkind = "single"\nmodel = "offline/j"\n'

BAD_CONFIGS = [
    pytest.param('[arena]\nseed = 0\nlanguage = "en\n', ("not valid TOML", "line 3"), id="bad-toml"),
    pytest.param('[llm]\nretries = 4\nretrys = 5\n', ("arena.toml:3: llm.retrys", "unknown key"),
                 id="unknown-key"),
    pytest.param('[llm]\nmax_concurrency = 0\n', ("arena.toml:2: llm.max_concurrency", "at least 1"),
                 id="out-of-range"),
    pytest.param('[search]\nprovider = "bing"\n', ("arena.toml:2: search.provider", "'tavily' or 'offline'"),
                 id="bad-provider"),
    pytest.param('[[entries]]\nname = "a"\ndebater = "nope"\nmodel = "offline/a"\n',
                 ("arena.toml:3: entries[0].debater", "unknown debater kind 'nope'", "direct"),
                 id="unknown-debater-kind"),
    pytest.param(ENTRY + '[[judges]]\nname = "j"\nkind = "nope"\nmodel = "offline/j"\n',
                 ("arena.toml:7: judges[0].kind", "unknown judge kind 'nope'", "single"),
                 id="unknown-judge-kind"),
    pytest.param(ENTRY + '[entries.params]\nfoo = 1\n', ("arena.toml", "unknown param", "foo", "'a'"),
                 id="unknown-direct-param"),
    pytest.param(ENTRY + JUDGE + '[judges.options]\nzap = 1\n', ("arena.toml", "unknown option", "zap", "'j'"),
                 id="unknown-judge-option"),
    pytest.param(ENTRY + '[[entries]]\nname = "a"\ndebater = "direct"\nmodel = "offline/b"\n',
                 ("arena.toml:6: entries[1].name", "repeated name 'a'"), id="repeated-entry"),
]

COMMANDS = [
    pytest.param(("entry", "list"), id="entry-list"),
    pytest.param(("match", "list"), id="match-list"),
    pytest.param(("rate",), id="rate"),
    pytest.param(("schedule", "--format", "round-robin"), id="schedule"),
    pytest.param(("match", "show", "m1"), id="match-show"),
    pytest.param(("run",), id="run"),
    pytest.param(("publish",), id="publish"),
]


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("toml, fragments", BAD_CONFIGS)
def test_bad_config_exits_2_and_writes_nothing(tmp_path, toml, fragments, command):
    ws = tmp_path / "ws"
    assert invoke("init", ws).exit_code == 0
    (ws / "arena.toml").write_text(toml, encoding="utf-8")
    before = snapshot(ws)
    result = invoke(*command, "-w", ws)
    assert_user_error(result, *fragments)
    assert snapshot(ws) == before


@pytest.mark.parametrize("toml, fragments", BAD_CONFIGS)
def test_bad_config_does_not_create_the_database(tmp_path, toml, fragments):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "arena.toml").write_text(toml, encoding="utf-8")
    result = invoke("entry", "list", "-w", ws)
    assert_user_error(result, *fragments)
    assert sorted(p.name for p in ws.iterdir()) == ["arena.toml"]


@pytest.mark.parametrize("toml, fragments", [
    pytest.param('[llm]\nretries = 4\nretrys = 5\n', ("arena.toml:3: llm.retrys", "unknown key"), id="unknown-key"),
    pytest.param('[[entries]]\nname = "a"\ndebater = "nope"\nmodel = "offline/a"\n',
                 ("arena.toml:3: entries[0].debater", "unknown debater kind"), id="unknown-debater-kind"),
])
def test_bad_config_subprocess_prints_no_traceback(tmp_path, toml, fragments):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "arena.toml").write_text(toml, encoding="utf-8")
    proc = subprocess.run([str(ARENA), "match", "list", "-w", str(ws)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    for fragment in fragments:
        assert fragment in proc.stderr
    assert proc.stdout == ""
    assert sorted(p.name for p in ws.iterdir()) == ["arena.toml"]


@pytest.mark.parametrize("toml, key", [
    pytest.param(ENTRY + '[entries.params]\nfoo = 1\n', "arena.toml:5: entries[0].params", id="direct-param"),
    pytest.param(ENTRY + JUDGE + '[judges.options]\nzap = 1\n', "arena.toml:9: judges[0].options",
                 id="judge-option"),
])
def test_kind_parameter_error_names_key_and_line(tmp_path, toml, key):
    (tmp_path / "arena.toml").write_text(toml, encoding="utf-8")
    assert_user_error(invoke("entry", "list", "-w", tmp_path), key)


def test_unknown_motion_set_names_file_and_key(tmp_path):
    (tmp_path / "arena.toml").write_text('[motions]\nsets = ["builtin:xx"]\n', encoding="utf-8")
    result = invoke("match", "list", "-w", tmp_path)
    assert_user_error(result, "xx")  # exit 2, and nothing created, hold already
    assert sorted(p.name for p in tmp_path.iterdir()) == ["arena.toml"]
    assert_user_error(result, "arena.toml", "motions.sets")


# --- missing workspace ---------------------------------------------------------------------------

@pytest.mark.parametrize("command", [("entry", "list"), ("match", "list"), ("rate",), ("run",)])
def test_missing_workspace_suggests_init(tmp_path, command):
    missing = tmp_path / "nowhere"
    result = invoke(*command, "-w", missing)
    assert_user_error(result, "arena.toml", "arena init")
    assert not missing.exists()


def test_empty_folder_is_not_a_workspace(tmp_path):
    result = invoke("match", "list", "-w", tmp_path)
    assert_user_error(result, "arena.toml", "arena init")
    assert list(tmp_path.iterdir()) == []


def test_default_workspace_is_current_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert_user_error(invoke("entry", "list"), "arena init")
    assert invoke("init").exit_code == 0
    assert invoke("entry", "list").exit_code == 0


# --- bad values on a good workspace --------------------------------------------------------------

@pytest.fixture
def good_ws(builds, tmp_path) -> Path:
    """The test's own copy of a workspace of two offline entries made by `arena init` (once per test process)."""
    return builds.copy("cli:good_ws", build_good_ws, tmp_path / "ws").path


def build_good_ws(path: Path) -> None:
    new_workspace(path, entries=TWO_OFFLINE, init="cli")


def test_match_show_unknown_id_exits_2(good_ws):
    assert_user_error(invoke("match", "show", "NOPE", "-w", good_ws), "NOPE")
    assert_user_error(invoke("match", "show", "NOPE", "-w", good_ws, "--format", "json"), "NOPE")


@pytest.mark.parametrize("args, fragments", [
    (("--format", "random"), ("--matches is required", "random")),
    (("--format", "active"), ("--matches is required", "active")),
    (("--format", "onboard"), ("--entry is required", "onboard")),
    (("--format", "onboard", "--entry", "nobody"), ("--entry", "nobody")),
    (("--format", "round-robin", "--matches", "3"), ("--matches does not apply", "round-robin")),
    (("--format", "random", "--matches", "3", "--rounds", "2"), ("--rounds does not apply", "random")),
    (("--show", "--format", "swiss"), ("--show", "--format")),
])
def test_schedule_option_errors_exit_2_and_store_nothing(good_ws, args, fragments):
    result = invoke("schedule", *args, "-w", good_ws)
    assert_user_error(result, *fragments)
    listed = invoke("match", "list", "-w", good_ws, "--format", "json")
    assert listed.exit_code == 0 and json.loads(listed.output) == []


def test_app_schedule_rejects_unknown_formats(good_ws):
    ws = open_workspace(good_ws)
    try:
        with pytest.raises(UserError, match="--format 'elimination': unknown format"):
            app.schedule(ws, "elimination")
        assert ws.store.match_states() == []
    finally:
        ws.close()


def test_schedule_needs_format_or_show(good_ws):
    assert_user_error(invoke("schedule", "-w", good_ws), "--format")


@pytest.mark.parametrize("args, option", [
    (("schedule", "--format", "round-robin", "--rounds", "0"), "--rounds"),
    (("schedule", "--format", "round-robin", "--rounds", "x"), "--rounds"),
    (("schedule", "--format", "elimination"), "--format"),
    (("run", "--concurrency", "0"), "--concurrency"),
    (("rate", "--bootstrap", "-1"), "--bootstrap"),
    (("entry", "list", "--format", "xml"), "--format"),
    (("match", "show", "m1", "--format", "table"), "--format"),
])
def test_out_of_range_cli_values_exit_2(good_ws, args, option):
    before = snapshot(good_ws)
    result = invoke(*args, "-w", good_ws)
    assert result.exit_code == 2, result.output
    assert option in result.output and "Traceback" not in result.output
    assert snapshot(good_ws) == before  # click rejects before the workspace is opened


def test_unknown_command_exits_2():
    result = invoke("frobnicate")
    assert result.exit_code == 2
    assert "frobnicate" in result.output


@pytest.mark.parametrize("args", [("match", "show", "NOPE"), ("schedule", "--format", "random")])
def test_rejected_command_on_good_workspace_writes_nothing(good_ws, args):
    assert invoke("match", "list", "-w", good_ws).exit_code == 0  # any first-open housekeeping done
    before = snapshot(good_ws)
    assert_user_error(invoke(*args, "-w", good_ws))
    assert snapshot(good_ws) == before


# --- entry list ----------------------------------------------------------------------------------

def test_entry_list_json_for_offline_entries(good_ws):
    result = invoke("entry", "list", "-w", good_ws, "--format", "json")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)
    assert [{k: r[k] for k in ("name", "debater", "model", "matches", "strength")} for r in rows] == [
        {"name": "a", "debater": "direct", "model": "offline/a", "matches": 0, "strength": 0.5},
        {"name": "b", "debater": "direct", "model": "offline/b", "matches": 0, "strength": -0.5},
    ]


def test_entry_list_json_has_no_strength_for_real_models(tmp_path):
    new_workspace(tmp_path, entries=[entry("real", model="openai/gpt-4o")], search=None, init=None)
    result = invoke("entry", "list", "-w", tmp_path, "--format", "json")
    assert result.exit_code == 0, result.output
    (row,) = json.loads(result.output)
    assert {k: row[k] for k in ("name", "debater", "model", "matches")} == {
        "name": "real", "debater": "direct", "model": "openai/gpt-4o", "matches": 0}
    assert "strength" not in row


def test_entry_list_table(good_ws):
    result = invoke("entry", "list", "-w", good_ws)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].split() == ["name", "debater", "model", "family", "matches", "forfeits", "strength", "status"]
    assert lines[1].split() == ["a", "direct", "offline/a", "offline/a", "0", "0", "0.5", "active"]
    assert lines[2].split() == ["b", "direct", "offline/b", "offline/b", "0", "0", "-0.5", "active"]


def test_match_list_json_empty(good_ws):
    result = invoke("match", "list", "-w", good_ws, "--format", "json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == []
