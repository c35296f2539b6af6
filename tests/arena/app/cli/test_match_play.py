"""`arena match play`: one match now, with progress, stored as a one-match tournament."""
from __future__ import annotations

import dataclasses
import json
import sqlite3
from pathlib import Path

import pytest

from arena.app import commands as app
from arena.app.shapes import records as shapes
from arena.base.errors import UserError
from arena.domain.records import Entry
from arena.app.commands import open_workspace
from tests.support.helpers import entry, failing_at, invoke, judge, new_workspace, snapshot, write_workspace

MOTION = "en-fact-001"
ORDER = [("constructive", "pro"), ("constructive", "con"), ("rebuttal", "pro"), ("rebuttal", "con"),
         ("summary", "con"), ("summary", "pro")]


@pytest.fixture
def ws_path(tmp_path) -> Path:
    """Offline entries a and b, judges j1 (one run) and j2 (two runs); no arena.db yet."""
    return new_workspace(tmp_path / "ws", entries=[entry("a"), entry("b")],
                         judges=[judge("j1", runs=1), judge("j2", runs=2)], init=None)


def play(ws_path, *args):
    return invoke("match", "play", "-w", ws_path, *args)


def test_match_play_shows_progress_then_transcript_and_score(ws_path):
    result = play(ws_path, "--motion", MOTION, "--pro", "a", "--con", "b")
    assert result.exit_code == 0, result.output
    progress = result.stderr.splitlines()
    assert progress[0].startswith(f"m00001: PRO a vs CON b on {MOTION}: ")
    for stage, side in ORDER:
        assert sum(line.startswith(f"{stage} · {side} · writer  (") and line.endswith(" tokens)")
                   for line in progress) == 1, (stage, side, progress)
    assert sum(line.startswith("judge  (") for line in progress) == 3  # j1 once, j2 twice

    shown = shapes.match_json(app.match_get(ws := open_workspace(ws_path), "m00001"))
    ws.close()
    assert shown["status"] == "done"
    assert [(s["stage"], s["side"]) for s in shown["speeches"]] == ORDER
    assert [(v["judge"], v["run"]) for v in shown["verdicts"]] == [("j1", 0), ("j2", 0), ("j2", 1)]
    out = result.stdout
    for s in shown["speeches"]:
        assert f"--- {s['title']} · {s['side'].upper()} ---\n{s['text']}" in out
    assert out.count("\n--- ") == 6
    assert f"Score: pro {shown['score']['pro']} – con {shown['score']['con']}" in out
    assert shown["score"]["pro"] + shown["score"]["con"] == 1  # the first judge's score: j1, one run
    # The same text as `arena match show`.
    assert invoke("match", "show", "m00001", "-w", ws_path).stdout == out

    db = sqlite3.connect(ws_path / "arena.db")
    assert db.execute("SELECT format, params FROM tournaments").fetchall() == [("single", json.dumps({"motion": MOTION}))]
    db.close()


def test_match_show_reads_each_verdicts_outcomes_as_text(ws_path):
    # The issue: a verdict's dimensions were printed as a Python dict, {'argument': 'pro', ...}.
    assert play(ws_path, "--motion", MOTION, "--pro", "a", "--con", "b").exit_code == 0
    data = json.loads(invoke("match", "show", "m00001", "-w", ws_path, "--format", "json").stdout)
    text = invoke("match", "show", "m00001", "-w", ws_path).stdout
    for v in data["verdicts"]:
        assert set(v["dimensions"]) == {"argument", "source", "language"}  # the JSON keeps its mapping
        outcomes = " · ".join(f"{name} {v['dimensions'][name]}" for name in ("argument", "source", "language"))
        assert f"\n{v['judge']} run {v['run'] + 1}: overall {v['overall']} · {outcomes}\n  " in text
    assert not [line for line in text.splitlines() if " run " in line and ("{" in line or "':" in line)]


def test_match_play_uses_only_the_named_judges(ws_path):
    result = play(ws_path, "--motion", MOTION, "--pro", "b", "--con", "a", "--judge", "j2", "--judge", "j2")
    assert result.exit_code == 0, result.output
    ws = open_workspace(ws_path)
    match = ws.store.match("m00001")
    ws.close()
    assert (match.pro, match.con) == ("b", "a")
    assert [(v.judge, v.run) for v in match.verdicts] == [("j2", 0), ("j2", 1)]


@pytest.mark.parametrize("args, fragments", [
    (("--motion", "en-fact-999", "--pro", "a", "--con", "b"),
     ("--motion en-fact-999: no such motion", "available, such as en-", "arena motion list")),
    (("--motion", MOTION, "--pro", "zed", "--con", "b"), ("--pro: unknown entry 'zed'", "a, b")),
    (("--motion", MOTION, "--pro", "a", "--con", "zed"), ("--con: unknown entry 'zed'", "a, b")),
    (("--motion", MOTION, "--pro", "a", "--con", "a"), ("--pro and --con both name 'a'",)),
    (("--motion", MOTION, "--pro", "a", "--con", "b", "--judge", "j1", "--judge", "jx"),
     ("--judge: unknown judge 'jx'", "j1, j2")),
    (("--pro", "a", "--con", "b"), ("--motion",)),
], ids=["unknown-motion", "unknown-pro", "unknown-con", "same-entry", "unknown-judge", "no-motion"])
def test_bad_input_exits_2_and_writes_nothing(ws_path, args, fragments):
    assert invoke("match", "list", "-w", ws_path).exit_code == 0  # first-open housekeeping done
    before = snapshot(ws_path)
    result = play(ws_path, *args)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    for fragment in fragments:
        assert fragment in result.output, (fragment, result.output)
    assert snapshot(ws_path) == before


def test_a_retired_entry_cannot_play(ws_path):
    @dataclasses.dataclass(frozen=True)
    class Retired(Entry):
        retired: bool = True

    ws = open_workspace(ws_path)
    try:
        a = ws.config.entry("a")
        ws.config = dataclasses.replace(ws.config, entries=(
            Retired(a.name, a.debater, a.model, a.api_base, a.strength, a.params), ws.config.entry("b")))
        with pytest.raises(UserError, match="--pro: entry 'a' is retired"):
            app.play_one(ws, MOTION, "a", "b", progress=lambda line: None)
        assert ws.store.match_states() == []
    finally:
        ws.close()


def test_a_provider_error_fails_the_match_with_exit_1(tmp_path, fake_llm):
    ws_path = write_workspace(tmp_path / "ws", fake_llm.api_base)
    fake_llm.responder = failing_at("rebuttal", "con")
    result = play(ws_path, "--motion", MOTION, "--pro", "alpha", "--con", "beta")
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    assert "error: match m00001 failed: openai/beta-model: BadRequestError 400" in result.stderr
    assert "context length exceeded" in result.stderr
    assert "rebuttal · pro · writer" in result.stderr  # progress up to the failure
    assert result.stdout == ""
    db = sqlite3.connect(ws_path / "arena.db")
    (status, error), = db.execute("SELECT status, error FROM matches").fetchall()
    assert status == "failed" and "400" in error
    assert db.execute("SELECT COUNT(*) FROM speeches").fetchone()[0] == 0
    assert db.execute("SELECT COUNT(*) FROM verdicts").fetchone()[0] == 0
    db.close()
