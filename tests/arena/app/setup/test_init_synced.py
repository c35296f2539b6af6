"""`arena init` leaves the workspace synced (issue 12): arena.db already holds what the first open would store
(the entries, the motions of the configured sets), so a command rejected right after init, or a read-only one,
leaves arena.db byte-identical."""
from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import pytest

from arena.app import commands as app
from arena.workspace.config import CONFIG_NAME
from arena.base.errors import UserError
from arena.store import DB_NAME
from tests.support.helpers import TWO_OFFLINE, assert_user_error, init_template, invoke, workspace_toml


def db_digest(ws: Path) -> str:
    """sha256 over arena.db and any file beside it (arena.db-wal, arena.db-shm), names included, so a change
    that still sits in the WAL counts too."""
    digest = hashlib.sha256()
    for path in sorted(ws.glob(DB_NAME + "*")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def sidecars(ws: Path) -> list[str]:
    return sorted(p.name for p in ws.glob(DB_NAME + "-*"))


@pytest.fixture
def ws(builds, tmp_path) -> Path:
    """The test's own copy of a workspace just made by `arena init`, from the template (made once per process)."""
    return builds.copy("init_synced:ws", build_ws, tmp_path / "ws").path


def build_ws(path: Path) -> None:
    init_template(path)
    assert sidecars(path) == []  # init closed the database: the WAL is checkpointed and gone


def db_rows(ws: Path, sql: str) -> list[tuple]:
    """Rows read without touching the folder: a plain read-only connection to a WAL database leaves an empty
    arena.db-wal and arena.db-shm behind, which the next writer's close removes; an immutable one reads the
    file alone, which is all there is once no WAL is left."""
    assert sidecars(ws) == []
    conn = sqlite3.connect(f"file:{ws / DB_NAME}?immutable=1", uri=True)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


# --- what init stores ----------------------------------------------------------------------------

def test_init_stores_the_motions_of_the_configured_sets(ws):
    stored = [r[0] for r in db_rows(ws, "SELECT id FROM motions ORDER BY id")]
    listed = invoke("motion", "list", "-w", ws, "--format", "json")
    assert listed.exit_code == 0, listed.output
    assert stored and stored == sorted(row["id"] for row in json.loads(listed.output))


# --- read-only commands right after init -----------------------------------------------------------

READ_ONLY = [
    pytest.param(("entry", "list"), id="entry-list"),
    pytest.param(("motion", "list"), id="motion-list"),
    pytest.param(("motion", "show", "en-fact-001"), id="motion-show"),
    pytest.param(("match", "list"), id="match-list"),
    pytest.param(("schedule", "--show"), id="schedule-show"),
    pytest.param(("stats", "agents"), id="stats-agents"),
]


@pytest.mark.parametrize("command", READ_ONLY)
def test_read_only_command_after_init_leaves_the_database_as_it_was(ws, command):
    before = db_digest(ws)
    result = invoke(*command, "-w", ws)
    assert result.exit_code == 0, result.output
    assert db_digest(ws) == before
    assert sidecars(ws) == []


# --- a rejected command right after init, one per kind of bad input --------------------------------

BAD_JSONL = '{"id": "x-1", "text": "This house would test", "category": "policy"}\n{bad json\n'
BAD_YAML = "- id: x-1\n  text: This house would test\n  category: nonsense\n"
RESULTS = ("match_id,entry_a,entry_b,score_a,score_b,category,dimension\n"
           "m1,a,b,3,0,fact,overall\nm2,b,c,2,1,value,overall\nm3,a,c,x,1,fact,overall\n")

# (args, files written into an inputs/ folder beside the workspace, fragments the message must hold);
# {inputs} in args and fragments is that folder.
BAD_INPUTS = [
    # arena entry add: a bad value of each kind
    pytest.param(("entry", "add", "x", "--debater", "nope", "--model", "offline/x"), {},
                 ("--debater 'nope'", "unknown debater kind"), id="entry-unknown-debater-kind"),
    pytest.param(("entry", "add", "x", "--debater", "direct", "--model", "openai/gpt-4o", "--strength", "1.0"), {},
                 ("--strength", "only offline models"), id="entry-strength-on-a-real-model"),
    pytest.param(("entry", "add", "x", "--debater", "direct", "--model", "offline/x", "--strength", "abc"), {},
                 ("--strength", "'abc' is not a valid float"), id="entry-strength-not-a-number"),
    pytest.param(("entry", "add", "x", "--debater", "direct", "--model", "offline/x", "--param", "foo=1"), {},
                 ("--param", "unknown param(s) foo"), id="entry-unknown-param"),
    pytest.param(("entry", "add", "x", "--debater", "direct", "--model", "offline/x", "--api-base", "ftp://x"), {},
                 ("--api-base 'ftp://x'", "http(s) URL"), id="entry-bad-api-base"),
    # arena schedule: bad option values, refused by click or once the workspace is open
    pytest.param(("schedule", "--format", "elimination"), {}, ("--format", "'elimination'"),
                 id="schedule-unknown-format"),
    pytest.param(("schedule", "--format", "round-robin", "--rounds", "-1"), {}, ("--rounds", "-1"),
                 id="schedule-negative-rounds"),
    pytest.param(("schedule", "--format", "onboard", "--entry", "nobody"), {}, ("--entry", "unknown entry 'nobody'"),
                 id="schedule-unknown-entry"),
    pytest.param(("schedule", "--format", "random"), {}, ("--matches is required", "random"),
                 id="schedule-missing-option"),
    pytest.param(("schedule", "--format", "round-robin"), {}, ("at least 2 active entries",),
                 id="schedule-too-few-entries"),
    # arena motion import: a malformed motion file
    pytest.param(("motion", "import", "{inputs}/bad.jsonl"), {"bad.jsonl": BAD_JSONL},
                 ("{inputs}/bad.jsonl", "line 2", "not valid JSON"), id="motion-import-bad-jsonl-line"),
    pytest.param(("motion", "import", "{inputs}/bad.yaml"), {"bad.yaml": BAD_YAML},
                 ("{inputs}/bad.yaml", "item 1 (line 3)", "unknown category 'nonsense'"), id="motion-import-bad-yaml-item"),
    pytest.param(("motion", "import", "{inputs}/empty.yaml"), {"empty.yaml": "# nothing\n"},
                 ("{inputs}/empty.yaml", "no motions"), id="motion-import-empty-file"),
    # arena rate --results: a results CSV with a bad row
    pytest.param(("rate", "--results", "{inputs}/results.csv"), {"results.csv": RESULTS},
                 ("{inputs}/results.csv:4: ", "score_a 'x' is not a number"), id="rate-results-bad-row"),
    # arena judge: an unknown judge name, and no judge at all
    pytest.param(("judge", "--judge", "nope"), {}, ("--judge", "unknown judge 'nope'"), id="judge-unknown-name"),
    pytest.param(("judge",), {}, ("arena.toml", "no [[judges]] configured"), id="judge-none-configured"),
    # a motion that is not in the configured sets
    pytest.param(("motion", "show", "no-such-motion"), {}, ("no motion 'no-such-motion'",), id="motion-show-unknown"),
]


@pytest.mark.parametrize("args, files, fragments", BAD_INPUTS)
def test_rejected_command_after_init_leaves_the_database_byte_identical(ws, tmp_path, monkeypatch, args, files,
                                                                        fragments):
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    for name, text in files.items():
        (inputs / name).write_text(text, encoding="utf-8")
    monkeypatch.chdir(ws)  # and -w too: whichever way a command finds the workspace, it is this one
    toml_before = (ws / CONFIG_NAME).read_bytes()
    before = db_digest(ws)
    result = invoke(*(a.format(inputs=inputs) for a in args), "-w", ws)
    assert_user_error(result, *(f.format(inputs=inputs) for f in fragments))
    assert db_digest(ws) == before
    assert sidecars(ws) == []
    assert (ws / CONFIG_NAME).read_bytes() == toml_before
    assert sorted(p.name for p in ws.iterdir()) == sorted([CONFIG_NAME, DB_NAME])  # nothing copied into motions/ either


# --- a broken arena.toml edit right after init, then any command -------------------------------------

BROKEN_EDITS = [
    # (old text of the template, new text, fragments): a misspelt key, a value out of range, an unknown
    # section, and a motion set that does not exist
    pytest.param("retries = 4 ", "retrys = 4 ", ("llm.retrys", "unknown key"), id="unknown-key"),
    pytest.param("judge_runs = 3 ", "judge_runs = 0 ", ("arena.judge_runs",), id="out-of-range"),
    pytest.param("[search]", "[serch]", ("serch", "unknown section"), id="unknown-section"),
    pytest.param('sets = ["builtin:en"]', 'sets = ["builtin:xx"]', ("motions.sets", "built-in motion set 'xx'"),
                 id="unknown-motion-set"),
]

COMMANDS = [
    pytest.param(("entry", "list"), id="entry-list"),
    pytest.param(("motion", "list"), id="motion-list"),
    pytest.param(("entry", "add", "x", "--debater", "direct", "--model", "offline/x"), id="entry-add"),
    pytest.param(("schedule", "--format", "round-robin"), id="schedule"),
    pytest.param(("judge",), id="judge"),
    pytest.param(("rate",), id="rate"),
]


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("old, new, fragments", BROKEN_EDITS)
def test_broken_config_edit_after_init_leaves_the_database_byte_identical(ws, old, new, fragments, command):
    config = ws / CONFIG_NAME
    text = config.read_text(encoding="utf-8")
    assert text.count(old) == 1
    config.write_text(text.replace(old, new), encoding="utf-8")
    line = next(k for k, row in enumerate(text.splitlines(), start=1) if old in row)
    before = db_digest(ws)
    result = invoke(*command, "-w", ws)
    # The message names the file, and the line of the key where the key is a line's own.
    where = f"{CONFIG_NAME}:{line}: " if "=" in old else CONFIG_NAME
    assert_user_error(result, where, *fragments)
    assert db_digest(ws) == before
    assert sidecars(ws) == []


# --- the Python API: a workspace made with entries is synced too ----------------------------------

WITH_ENTRIES = workspace_toml(motions=["builtin:en"], entries=TWO_OFFLINE)


def test_app_init_stores_entries_and_motions_so_a_rejected_command_writes_nothing(tmp_path):
    path = tmp_path / "ws"
    assert app.init(path, WITH_ENTRIES) == path / CONFIG_NAME
    assert sidecars(path) == []
    assert db_rows(path, "SELECT name, model, strength FROM entries ORDER BY name") == [
        ("a", "offline/a", 0.5), ("b", "offline/b", -0.5)]
    assert db_rows(path, "SELECT COUNT(*) FROM motions")[0][0] > 0
    before = db_digest(path)
    assert_user_error(invoke("schedule", "--format", "onboard", "--entry", "nobody", "-w", path), "nobody")
    assert_user_error(invoke("entry", "add", "a", "--debater", "direct", "--model", "offline/c", "-w", path), "'a'")
    assert invoke("entry", "list", "-w", path).exit_code == 0
    assert db_digest(path) == before


def test_app_init_checks_before_writing(tmp_path):
    """A configuration opening would refuse (here an unknown motion set) is refused before anything is written."""
    path = tmp_path / "ws"
    with pytest.raises(UserError, match="motions.sets"):
        app.init(path, WITH_ENTRIES.replace("builtin:en", "builtin:xx"))
    assert not path.exists()
