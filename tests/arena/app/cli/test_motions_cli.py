"""`arena motion list|show|import`: the configured sets, one motion, and importing a file into the workspace."""
from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from arena.workspace.config import parse_config
from motions.library import load_builtin
from tests.support.helpers import assert_user_error, invoke, new_workspace, snapshot

CONFIG = '''\
# My arena: comments survive an import.
[arena]
seed = 0

[motions]
sets = ["builtin:en"]   # the English library
'''

MINE_YAML = '''\
# Local motions
- id: my-fact-001
  text: Cities are getting hotter
  category: fact
- id: my-policy-001
  text: Cities should plant more trees
  category: policy
  info_slide: Trees cool streets.
'''

MINE_JSONL = ('{"id": "my-value-001", "text": "Quiet is a public good", "category": "value"}\n\n'
              '{"id": "my-value-002", "text": "Noise is a private harm", "category": "value"}\n')


@pytest.fixture
def ws(builds, tmp_path) -> Path:
    """The test's own copy of build_ws's workspace (made once per test process)."""
    return builds.copy("motions_cli:ws", build_ws, tmp_path / "ws").path


def build_ws(path: Path) -> None:
    new_workspace(path, text=CONFIG, init="cli", opened=True)  # first-open housekeeping done


def listed(ws: Path, *args: str) -> list[dict]:
    result = invoke("motion", "list", "-w", ws, "--format", "json", *args)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


# --- list and show -------------------------------------------------------------------------------

def test_list_json_is_the_configured_sets(ws):
    rows = listed(ws)
    builtin = load_builtin("en")
    assert [r["id"] for r in rows] == [m.id for m in builtin]
    assert rows[0] == {"id": builtin[0].id, "text": builtin[0].text, "category": builtin[0].category,
                       "language": "en", "info_slide": builtin[0].info_slide, "set": "builtin:en"}


@pytest.mark.parametrize("category", ["fact", "value", "policy"])
def test_list_filters_by_category(ws, category):
    rows = listed(ws, "--category", category)
    assert rows and {r["category"] for r in rows} == {category}


def test_list_table_and_bad_category(ws):
    result = invoke("motion", "list", "-w", ws)
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[0].split() == ["id", "category", "language", "set", "text"]
    assert_user_error(invoke("motion", "list", "-w", ws, "--category", "opinion"), "--category", "opinion")


def test_show_text_and_json(ws):
    motion = load_builtin("en")[0]
    result = invoke("motion", "show", motion.id, "-w", ws)
    assert result.exit_code == 0, result.output
    assert f"text: {motion.text}" in result.output and "set: builtin:en" in result.output
    data = json.loads(invoke("motion", "show", motion.id, "-w", ws, "--format", "json").output)
    assert data == {"id": motion.id, "text": motion.text, "category": motion.category, "language": "en",
                    "info_slide": motion.info_slide, "set": "builtin:en", "matches": 0}


def test_show_unknown_id_exits_2(ws):
    assert_user_error(invoke("motion", "show", "nope-001", "-w", ws), "nope-001", "arena motion list")


# --- import ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("name, text, ids", [
    ("mine.yaml", MINE_YAML, ["my-fact-001", "my-policy-001"]),
    ("mine.jsonl", MINE_JSONL, ["my-value-001", "my-value-002"]),
])
def test_import_copies_the_file_and_adds_its_set(ws, tmp_path, name, text, ids):
    source = write(tmp_path / name, text)
    result = invoke("motion", "import", source, "-w", ws)
    assert result.exit_code == 0, result.output
    assert f"imported 2 motions from {source} as file:motions/{name}" in result.output
    assert (ws / "motions" / name).read_text(encoding="utf-8") == text
    toml = (ws / "arena.toml").read_text(encoding="utf-8")
    assert toml == CONFIG.replace('sets = ["builtin:en"]', f'sets = ["builtin:en", "file:motions/{name}"]')
    # The workspace no longer needs the original.
    source.unlink()
    rows = listed(ws)
    assert [r["id"] for r in rows][-2:] == ids and {r["set"] for r in rows[-2:]} == {f"file:motions/{name}"}
    shown = json.loads(invoke("motion", "show", ids[0], "-w", ws, "--format", "json").output)
    assert shown["set"] == f"file:motions/{name}"


@pytest.mark.parametrize("config, expected_sets", [
    pytest.param("[arena]\nseed = 0\n", ["builtin:en"], id="no-motions-table"),
    pytest.param("[motions]\n# which sets\n\n[arena]\nseed = 0", ["builtin:en"], id="table-without-sets"),
    pytest.param('[motions]\nsets = [\n  "builtin:en",  # English ] with a bracket\n  "builtin:zh",\n]\n',
                 ["builtin:en", "builtin:zh"], id="multi-line-array"),
    pytest.param("[motions]\nsets = []\n", [], id="empty-array"),
])
def test_import_edits_any_layout_of_sets_keeping_the_rest(tmp_path, config, expected_sets):
    ws = tmp_path / "ws"
    assert invoke("init", ws).exit_code == 0
    write(ws / "arena.toml", config)
    source = write(tmp_path / "mine.yaml", MINE_YAML)
    result = invoke("motion", "import", source, "-w", ws)
    assert result.exit_code == 0, result.output
    text = (ws / "arena.toml").read_text(encoding="utf-8")
    assert tomllib.loads(text)["motions"]["sets"] == [*expected_sets, "file:motions/mine.yaml"]
    for line in config.splitlines():
        if not line.lstrip().startswith(("sets", "]")):
            assert line in text  # comments and other lines kept
    assert parse_config(text, ws / "arena.toml").motions.sets == (*expected_sets, "file:motions/mine.yaml")


@pytest.mark.parametrize("text, fragments", [
    pytest.param("- id: x-1\n  text: ''\n  category: fact\n", ("item 1", "missing or empty 'text'"), id="empty-text"),
    pytest.param("- id: x-1\n  category: fact\n", ("item 1", "missing or empty 'text'"), id="missing-text"),
    pytest.param("- id: x-1\n  text: T\n  category: opinion\n", ("item 1", "unknown category 'opinion'"),
                 id="unknown-category"),
    pytest.param("- id: x-1\n  text: T\n  category: fact\n- id: x-1\n  text: U\n  category: value\n",
                 ("item 2", "repeated id 'x-1'", "item 1"), id="repeated-id-in-file"),
    pytest.param(f"- id: {load_builtin('en')[0].id}\n  text: T\n  category: fact\n",
                 (f"id '{load_builtin('en')[0].id}'", "builtin:en"), id="id-of-a-configured-set"),
    pytest.param("", ("contains no motions",), id="empty-file"),
])
def test_import_errors_exit_2_naming_the_item_and_write_nothing(ws, tmp_path, text, fragments):
    source = write(tmp_path / "bad.yaml", text)
    before = snapshot(ws)
    result = invoke("motion", "import", source, "-w", ws)
    assert_user_error(result, "bad.yaml", *fragments)
    assert snapshot(ws) == before


def test_import_names_every_mistake_of_the_file_at_once(ws, tmp_path):
    # The issue: a motion file with three mistakes was refused one mistake a run.
    source = write(tmp_path / "bad.yaml", "- id: x-1\n  category: fact\n- id: x-2\n  text: T\n  category: opinion\n"
                                          "- id: x-1\n  text: U\n  category: value\n")
    before = snapshot(ws)
    result = invoke("motion", "import", source, "-w", ws)
    assert_user_error(result, f"error: {source}: 3 mistakes; nothing was read:",
                      f"{source}: item 1 (line 1): missing or empty 'text'",
                      f"{source}: item 2 (line 5): unknown category 'opinion'",
                      f"{source}: item 3 (line 6): repeated id 'x-1' (first at item 1)")
    assert snapshot(ws) == before


def test_import_bad_jsonl_line_is_named(ws, tmp_path):
    source = write(tmp_path / "bad.jsonl", MINE_JSONL + '{"id": "x", "text": "T", "category": 3}\n')
    before = snapshot(ws)
    assert_user_error(invoke("motion", "import", source, "-w", ws), "bad.jsonl", "line 4", "'category'")
    assert snapshot(ws) == before


def test_import_twice_or_over_a_different_copy_exits_2(ws, tmp_path):
    source = write(tmp_path / "mine.yaml", MINE_YAML)
    assert invoke("motion", "import", source, "-w", ws).exit_code == 0
    before = snapshot(ws)
    assert_user_error(invoke("motion", "import", source, "-w", ws), "already imported", "file:motions/mine.yaml")
    other = tmp_path / "other"
    other.mkdir()
    changed = write(other / "mine.yaml", MINE_YAML.replace("my-", "your-"))
    assert_user_error(invoke("motion", "import", changed, "-w", ws), "already imported")
    assert snapshot(ws) == before


def test_import_refuses_to_overwrite_a_different_file_in_motions(ws, tmp_path):
    write_dir = ws / "motions"
    write_dir.mkdir()
    write(write_dir / "mine.yaml", "# the user's own, not in the sets\n")
    before = snapshot(ws)
    assert_user_error(invoke("motion", "import", write(tmp_path / "mine.yaml", MINE_YAML), "-w", ws),
                      "already has a different motions/mine.yaml")
    assert snapshot(ws) == before


def test_import_refuses_an_id_the_database_keeps_for_another_motion(ws, tmp_path):
    first = write(tmp_path / "first.yaml", MINE_YAML)
    assert invoke("motion", "import", first, "-w", ws).exit_code == 0
    write(ws / "arena.toml", CONFIG)  # the set is dropped, but the database remembers its motions
    before = snapshot(ws)
    changed = write(tmp_path / "second.yaml", MINE_YAML.replace("Cities are getting hotter", "Cities are cooler"))
    assert_user_error(invoke("motion", "import", changed, "-w", ws), "my-fact-001", "Cities are getting hotter")
    assert snapshot(ws) == before


def test_import_missing_file_or_wrong_type_exits_2(ws, tmp_path):
    before = snapshot(ws)
    assert_user_error(invoke("motion", "import", tmp_path / "nope.yaml", "-w", ws), "nope.yaml")
    assert_user_error(invoke("motion", "import", write(tmp_path / "m.txt", MINE_YAML), "-w", ws),
                      "m.txt", "unsupported motion file type")
    assert snapshot(ws) == before


def test_import_into_a_zh_workspace_notes_motions_schedules_will_skip(tmp_path):
    ws = tmp_path / "ws"
    assert invoke("init", ws).exit_code == 0
    write(ws / "arena.toml", '[arena]\nlanguage = "zh"\n[motions]\nsets = ["builtin:zh"]\n')
    result = invoke("motion", "import", write(tmp_path / "mine.yaml", MINE_YAML), "-w", ws)
    assert result.exit_code == 0, result.output
    assert "note: 2 motions in en, not the workspace's language 'zh'" in result.output
