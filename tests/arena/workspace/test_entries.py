"""Registering, showing and retiring entries; an entry that has played cannot change."""
from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from arena.workspace.config import load_config, parse_config
from arena.domain.records import Entry
from arena.workspace.registration import parse_params
from debaters.registry import DEBATERS
from tests.support.helpers import assert_user_error, invoke, new_workspace, play_round_robin, snapshot

CONFIG = '''\
# My arena: every comment and blank line here must survive an edit.
[arena]
seed = 0          # keep draws stable
judge_runs = 1

[search]
provider = "offline"

[[entries]]       # the favourite
name = "a"
debater = "direct"
model = "offline/a"
strength = 0.5
[entries.params]  # sampling
temperature = 0.3

[[entries]]
name = "b"
debater = "direct"
model = "offline/b"   # the underdog
strength = -0.5

# One judge, run once, to keep tests quick.
[[judges]]
name = "j"
kind = "single"
model = "offline/judge"
runs = 1
'''


def build_ws(path: Path) -> None:
    new_workspace(path, text=CONFIG, init="cli", opened=True)  # first-open housekeeping done


@pytest.fixture
def ws(builds, tmp_path) -> Path:
    """The test's own copy of build_ws's workspace (`arena init`, once per test process)."""
    return builds.copy("entries:ws", build_ws, tmp_path / "ws").path


def toml_bytes(ws: Path) -> bytes:
    return (ws / "arena.toml").read_bytes()


def entries_json(ws: Path) -> list[dict]:
    result = invoke("entry", "list", "-w", ws, "--format", "json")
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


# --- entry add -----------------------------------------------------------------------------------

@pytest.mark.parametrize("final_newline", [True, False])
def test_add_appends_a_table_and_keeps_every_byte(ws, final_newline):
    old = CONFIG.encode() if final_newline else CONFIG.rstrip("\n").encode()
    (ws / "arena.toml").write_bytes(old)
    result = invoke("entry", "add", "c", "--debater", "direct", "--model", "offline/c", "--param", "temperature=0.5",
                    "--param", "words_summary=200", "-w", ws)
    assert result.exit_code == 0, result.output
    new = toml_bytes(ws)
    assert new.startswith(old) and len(new) > len(old)
    config = load_config(ws)
    assert config.entries[:2] == parse_config(CONFIG, ws / "arena.toml").entries
    assert config.entries[-1] == Entry("c", "direct", "offline/c", params={"temperature": 0.5, "words_summary": 200})
    params = config.entries[-1].params
    assert type(params["temperature"]) is float and type(params["words_summary"]) is int
    assert "strength" not in new[len(old):].decode()  # written only when given
    assert [r["name"] for r in entries_json(ws)] == ["a", "b", "c"]


def test_add_writes_api_base_strength_and_escapes_strings(ws):
    model = 'openai/odd"model\\v1'
    result = invoke("entry", "add", "real", "--debater", "direct", "--model", model,
                    "--api-base", "http://127.0.0.1:8000/v1", "-w", ws)
    assert result.exit_code == 0, result.output
    result = invoke("entry", "add", "sim", "--debater", "direct", "--model", "offline/sim", "--strength", "1.25",
                    "-w", ws)
    assert result.exit_code == 0, result.output
    real, sim = load_config(ws).entries[-2:]
    assert (real.model, real.api_base) == (model, "http://127.0.0.1:8000/v1")
    assert (sim.model, sim.strength) == ("offline/sim", 1.25)


def test_parse_params_reads_toml_values_and_falls_back_to_text():
    params = parse_params(["t=0.5", "n=200", "flag=true", "list=[1, 2]", "note=hello world", "empty=",
                           "two=1\nw = 2"])
    assert params == {"t": 0.5, "n": 200, "flag": True, "list": [1, 2], "note": "hello world", "empty": "",
                      "two": "1\nw = 2"}
    assert type(params["t"]) is float and type(params["n"]) is int


BAD_ADDS = [
    pytest.param(("c", "--debater", "nope", "--model", "offline/c"),
                 ("--debater 'nope'", "unknown debater kind", *DEBATERS.names()), id="unknown-kind"),
    pytest.param(("a", "--debater", "direct", "--model", "offline/c"),
                 ("NAME 'a'", "arena.toml:10: entries[0].name", "already registers"), id="duplicate-name"),
    pytest.param(("c d", "--debater", "direct", "--model", "offline/c"), ("NAME", "letters, digits"), id="bad-name"),
    pytest.param(("c", "--debater", "direct", "--model", "gpt-4o"),
                 ("--model 'gpt-4o'", "PROVIDER/MODEL", "'openai/gpt-4o'"), id="no-provider"),
    pytest.param(("c", "--debater", "direct", "--model", "openai/gpt-4o", "--api-base", "localhost:8000"),
                 ("--api-base 'localhost:8000'", "http(s) URL"), id="bad-api-base"),
    pytest.param(("c", "--debater", "direct", "--model", "openai/gpt-4o", "--strength", "1"),
                 ("--strength", "offline models"), id="strength-on-real-model"),
    pytest.param(("c", "--debater", "direct", "--model", "offline/c", "--strength", "inf"),
                 ("--strength", "finite"), id="infinite-strength"),
    pytest.param(("c", "--debater", "direct", "--model", "offline/c", "--param", "note=hello"),
                 ("--param", "unknown param", "note", "direct"), id="unknown-param"),
    pytest.param(("c", "--debater", "direct", "--model", "offline/c", "--param", "temperature=hot"),
                 ("--param", "temperature", "'hot'"), id="bad-param-value"),
    pytest.param(("c", "--debater", "direct", "--model", "offline/c", "--param", "temperature"),
                 ("--param", "'temperature'", "KEY=VALUE"), id="param-without-equals"),
    pytest.param(("c", "--debater", "direct", "--model", "offline/c", "--param", "seed=1", "--param", "seed=2"),
                 ("--param", "'seed' given more than once"), id="repeated-param"),
]


@pytest.mark.parametrize("args, fragments", BAD_ADDS)
def test_bad_add_exits_2_and_writes_nothing(ws, args, fragments):
    before = snapshot(ws)
    assert_user_error(invoke("entry", "add", *args, "-w", ws), *fragments)
    assert snapshot(ws) == before


def test_add_refuses_a_name_the_database_remembers(ws):
    assert invoke("entry", "add", "c", "--debater", "direct", "--model", "offline/c", "-w", ws).exit_code == 0
    assert invoke("entry", "list", "-w", ws).exit_code == 0  # the database now knows c
    (ws / "arena.toml").write_text(CONFIG, encoding="utf-8")  # c removed from arena.toml again
    assert invoke("entry", "list", "-w", ws).exit_code == 0
    before = snapshot(ws)
    result = invoke("entry", "add", "c", "--debater", "direct", "--model", "offline/other", "-w", ws)
    assert_user_error(result, "NAME 'c'", "remembers")
    assert snapshot(ws) == before


def test_add_that_does_not_read_back_restores_the_file_and_exits_1(ws):
    # A static `entries = []` parses, but a TOML file cannot then append [[entries]] tables to it.
    (ws / "arena.toml").write_text('entries = []  # none yet\n[search]\nprovider = "offline"\n', encoding="utf-8")
    assert invoke("entry", "list", "-w", ws).exit_code == 0
    before = snapshot(ws)
    result = invoke("entry", "add", "c", "--debater", "direct", "--model", "offline/c", "-w", ws)
    assert result.exit_code == 1, result.output
    assert isinstance(result.exception, SystemExit) and "undone" in result.output
    assert snapshot(ws) == before


# --- entry show ----------------------------------------------------------------------------------

def test_show_json(ws):
    result = invoke("entry", "show", "a", "-w", ws, "--format", "json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == {
        "name": "a", "status": "active", "retired": False, "debater": "direct", "model": "offline/a",
        "family": "offline/a", "simulated": True, "api_base": "", "strength": 0.5, "params": {"temperature": 0.3}, "matches": 0,
        "forfeits": 0}


def test_show_text_and_match_count_after_play(ws):
    play_round_robin(ws)
    result = invoke("entry", "show", "b", "-w", ws)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    for line in ("name: b", "status: active", "debater: direct", "model: offline/b", "simulated: True",
                 "api_base: (none)", "strength: -0.5", "matches: 2"):
        assert line in lines, (line, lines)


def test_show_real_model_has_no_strength(ws):
    assert invoke("entry", "add", "r", "--debater", "direct", "--model", "openai/gpt-4o", "-w", ws).exit_code == 0
    data = json.loads(invoke("entry", "show", "r", "-w", ws, "--format", "json").output)
    assert data["simulated"] is False and "strength" not in data


def test_show_unknown_entry_exits_2(ws):
    assert_user_error(invoke("entry", "show", "zed", "-w", ws), "unknown entry 'zed'", "a, b")


# --- entry retire --------------------------------------------------------------------------------

@pytest.mark.parametrize("name, after", [
    pytest.param("a", "strength = 0.5\n", id="before-params-subtable"),
    pytest.param("b", "strength = -0.5\n", id="before-next-table"),
])
def test_retire_inserts_one_line_in_the_entry_table(ws, name, after):
    result = invoke("entry", "retire", name, "-w", ws)
    assert result.exit_code == 0, result.output
    assert toml_bytes(ws).decode() == CONFIG.replace(after, after + "retired = true\n", 1)
    config = load_config(ws)
    assert [e.name for e in config.entries if e.retired] == [name]
    assert config.entry("a").params == {"temperature": 0.3}


def test_retire_then_list_and_show(ws):
    assert invoke("entry", "retire", "b", "-w", ws).exit_code == 0
    assert [(r["name"], r["retired"]) for r in entries_json(ws)] == [("a", False), ("b", True)]
    table = invoke("entry", "list", "-w", ws).output.splitlines()
    assert table[0].split()[-1] == "status"
    assert [line.split()[-1] for line in table[1:]] == ["active", "retired"]
    shown = json.loads(invoke("entry", "show", "b", "-w", ws, "--format", "json").output)
    assert (shown["status"], shown["retired"]) == ("retired", True)


def test_second_retire_and_unknown_entry_exit_2(ws):
    assert invoke("entry", "retire", "a", "-w", ws).exit_code == 0
    before = snapshot(ws)
    assert_user_error(invoke("entry", "retire", "a", "-w", ws), "'a'", "already retired")
    assert_user_error(invoke("entry", "retire", "zed", "-w", ws), "unknown entry 'zed'")
    assert snapshot(ws) == before


def test_retire_flips_an_explicit_false(ws):
    (ws / "arena.toml").write_text(CONFIG.replace("strength = -0.5\n", "strength = -0.5\nretired = false  # yet\n"),
                                   encoding="utf-8")
    assert invoke("entry", "retire", "b", "-w", ws).exit_code == 0
    assert toml_bytes(ws).decode() == CONFIG.replace("strength = -0.5\n", "strength = -0.5\nretired = true  # yet\n")


def test_retire_goes_after_a_value_spanning_lines(ws):
    spanning = CONFIG.replace('model = "offline/b"   # the underdog\n', 'model = """offline/\\\n   b"""\n')
    (ws / "arena.toml").write_text(spanning, encoding="utf-8")
    assert load_config(ws).entry("b").model == "offline/b"
    assert invoke("entry", "retire", "b", "-w", ws).exit_code == 0
    assert toml_bytes(ws).decode() == spanning.replace("strength = -0.5\n", "strength = -0.5\nretired = true\n")


def test_retired_entry_is_not_scheduled_but_keeps_its_rating(ws):
    assert invoke("entry", "add", "c", "--debater", "direct", "--model", "offline/c", "-w", ws).exit_code == 0
    play_round_robin(ws)
    assert invoke("entry", "retire", "c", "-w", ws).exit_code == 0
    before = {m["id"] for m in json.loads(invoke("match", "list", "-w", ws, "--format", "json").output)}
    result = invoke("schedule", "--format", "round-robin", "-w", ws)
    assert result.exit_code == 0, result.output
    new = [m for m in json.loads(invoke("match", "list", "-w", ws, "--format", "json").output)
           if m["id"] not in before]
    assert new and {name for m in new for name in (m["pro"], m["con"])} == {"a", "b"}
    rated = invoke("rate", "--bootstrap", "0", "--format", "json", "-w", ws)
    assert rated.exit_code == 0, rated.output
    assert {r["entry"] for r in json.loads(rated.output)["ratings"]} == {"a", "b", "c"}


# --- immutability --------------------------------------------------------------------------------

@pytest.mark.parametrize("old, new, change", [
    pytest.param('model = "offline/a"', 'model = "offline/x"', "model 'offline/a' → 'offline/x'", id="model"),
    pytest.param("strength = 0.5", "strength = 0.7", "strength 0.5 → 0.7", id="strength"),
    pytest.param("temperature = 0.3", "temperature = 0.4", "params {'temperature': 0.3} → {'temperature': 0.4}",
                 id="params"),
    pytest.param('model = "offline/a"', 'model = "offline/a"\napi_base = "http://127.0.0.1:1/v1"',
                 "api_base '' → 'http://127.0.0.1:1/v1'", id="api-base"),
])
@pytest.mark.parametrize("command", [("entry", "list"), ("match", "list"), ("rate",)])
def test_played_entry_cannot_change(ws, old, new, change, command):
    play_round_robin(ws)
    (ws / "arena.toml").write_text(CONFIG.replace(old, new, 1), encoding="utf-8")
    before = snapshot(ws)
    result = invoke(*command, "-w", ws)
    assert_user_error(result, "arena.toml:9: entries[0]", "entry 'a' has played 2 matches", change, "new name")
    assert snapshot(ws) == before  # arena.db included: nothing synced


def test_played_entry_may_be_retired_and_unplayed_entry_may_change(ws):
    play_round_robin(ws)
    assert invoke("entry", "add", "c", "--debater", "direct", "--model", "offline/c", "-w", ws).exit_code == 0
    assert invoke("entry", "list", "-w", ws).exit_code == 0
    assert invoke("entry", "retire", "a", "-w", ws).exit_code == 0
    changed = toml_bytes(ws).decode().replace('model = "offline/c"', 'model = "offline/c2"')
    (ws / "arena.toml").write_text(changed, encoding="utf-8")
    result = invoke("entry", "list", "-w", ws, "--format", "json")
    assert result.exit_code == 0, result.output
    with closing(sqlite3.connect(ws / "arena.db")) as db:
        rows = dict(db.execute("SELECT name, model FROM entries").fetchall())
        retired = dict(db.execute("SELECT name, retired FROM entries").fetchall())
    assert rows == {"a": "offline/a", "b": "offline/b", "c": "offline/c2"}
    assert retired == {"a": 1, "b": 0, "c": 0}
