"""The `human` debater: speeches from files or an editor, briefed with exactly what the protocol shows."""
from __future__ import annotations

import re
import shlex
import sqlite3
import sys
from pathlib import Path

import pytest

from arena.app import commands as app
from arena.base.errors import ArenaError
from arena.app.commands import open_workspace
from debaters.human import MARKER, editor_command
from tests.support.helpers import entry, invoke, judge, new_workspace

MOTION = "en-fact-001"
ORDER = [("constructive", "pro"), ("constructive", "con"), ("rebuttal", "pro"), ("rebuttal", "con"),
         ("summary", "con"), ("summary", "pro")]

BOT = entry("bot")
JUDGE = judge("j", runs=1)

# A stand-in for a person at an editor: keeps a copy of the briefing it was given, then types a speech.
EDITOR_SCRIPT = '''\
import pathlib, re, shutil, sys
log, path = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[-1])
briefing = path.read_text(encoding="utf-8")
stage = re.search(r"^Stage: (\\w+)", briefing, re.M).group(1)
side = re.search(r"^Your side: (\\w+)", briefing, re.M).group(1).lower()
shutil.copy(path, log / f"{stage}-{side}.md")
with path.open("a", encoding="utf-8") as out:
    out.write(f"\\nHuman {side} {stage} speech: my own words.\\n\\n")
'''


def human(name: str, **params) -> dict:
    return entry(name, "human", f"human/{name}", params=params)


def workspace(tmp_path: Path, *humans: dict) -> Path:
    """The offline entry bot, judge j (one run), and the human entries; no arena.db yet. The people here type a
    line each, so the speech checks are off (a person's speech is checked: tests/arena/domain/test_speech_checks.py)."""
    return new_workspace(tmp_path / "ws", arena={"speech_checks": False}, entries=[BOT, *humans], judges=[JUDGE],
                         init=None)


def editor(tmp_path: Path) -> tuple[str, Path]:
    """An editor command line (with arguments, as people write them) and the folder it logs briefings to."""
    script = tmp_path / "editor.py"
    script.write_text(EDITOR_SCRIPT, encoding="utf-8")
    log = tmp_path / "briefings"
    log.mkdir()
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(script))} {shlex.quote(str(log))}", log


def play(ws_path: Path, pro: str, con: str):
    ws = open_workspace(ws_path)
    try:
        match = app.play_one(ws, MOTION, pro, con, progress=lambda line: None)
        return match, ws.store.match(match.id)
    finally:
        ws.close()


def failed_match(ws_path: Path):
    db = sqlite3.connect(ws_path / "arena.db")
    try:
        (status, error), = db.execute("SELECT status, error FROM matches").fetchall()
        speeches = db.execute("SELECT COUNT(*) FROM speeches").fetchone()[0]
        return status, error, speeches
    finally:
        db.close()


# --- speeches from files ------------------------------------------------------------------------

def test_speeches_dir_speeches_are_stored_as_written_and_no_llm_is_called(tmp_path, monkeypatch):
    ws_path = workspace(tmp_path, human("me", speeches_dir="speeches"))
    monkeypatch.chdir(tmp_path)  # a relative speeches_dir is read from the current folder
    folder = tmp_path / "speeches"
    folder.mkdir()
    files = {
        "constructive.md": "We open with three points.\n\nFirst, harm is measurable.",
        "rebuttal.md": "This generic rebuttal is shadowed by rebuttal-con.md.",
        "rebuttal-con.md": "Their constructive ignored the base rates.",
        "summary-con.md": "We won the clash on evidence.\n",
    }
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")

    _, match = play(ws_path, "bot", "me")
    assert match.status == "done"
    mine = {s.stage: s for s in match.speeches if s.side == "con"}
    assert mine["constructive"].text == files["constructive.md"]
    assert mine["rebuttal"].text == files["rebuttal-con.md"]
    assert mine["summary"].text == files["summary-con.md"].strip()
    assert all(s.agents == {} for s in mine.values())  # no per-role usage: nobody was called
    assert [v.judge for v in match.verdicts] == ["j"]
    db = sqlite3.connect(ws_path / "arena.db")
    assert db.execute("SELECT COUNT(*) FROM calls WHERE side = 'con' OR model = 'human/me'").fetchone()[0] == 0
    assert db.execute("SELECT COUNT(*) FROM calls WHERE side = 'pro'").fetchone()[0] == 3
    db.close()


@pytest.mark.parametrize("summary", [None, "  \n\n"], ids=["missing", "empty"])
def test_missing_or_empty_speech_file_fails_the_match_naming_the_file(tmp_path, summary):
    folder = tmp_path / "speeches"
    folder.mkdir()
    (folder / "constructive.md").write_text("Opening.", encoding="utf-8")
    (folder / "rebuttal.md").write_text("Rebuttal.", encoding="utf-8")
    if summary is not None:
        (folder / "summary-pro.md").write_text(summary, encoding="utf-8")
    ws_path = workspace(tmp_path, human("me", speeches_dir=str(folder)))

    with pytest.raises(ArenaError) as caught:
        play(ws_path, "me", "bot")
    assert str(folder / "summary-pro.md") in str(caught.value)
    assert ("empty" if summary is not None else "exists") in str(caught.value)
    status, error, speeches = failed_match(ws_path)
    assert (status, speeches) == ("failed", 0)
    assert str(folder / "summary-pro.md") in error


# --- speeches typed in an editor ----------------------------------------------------------------

def test_each_briefing_shows_exactly_what_the_protocol_allows(tmp_path):
    command, log = editor(tmp_path)
    ws_path = workspace(tmp_path, human("hp", editor=command, words_rebuttal=123), human("hc", editor=command))

    _, match = play(ws_path, "hp", "hc")
    assert match.status == "done"
    texts = {(s.stage, s.side): s.text for s in match.speeches}
    assert texts[("rebuttal", "pro")] == "Human pro rebuttal speech: my own words."
    briefings = {key: (log / f"{key[0]}-{key[1]}.md").read_text(encoding="utf-8") for key in ORDER}
    for (stage, side), briefing in briefings.items():
        assert match.motion.text in briefing and match.motion.info_slide in briefing
        assert f"Your side: {side.upper()}" in briefing and f"Stage: {stage}" in briefing
        assert briefing.endswith(MARKER + "\n")
        # Stage 1 is blind; after it, a speaker sees every earlier speech, its own included.
        allowed = [] if stage == "constructive" else ORDER[:ORDER.index((stage, side))]
        for key, text in texts.items():
            assert (text in briefing) == (key in allowed), f"{stage}/{side} briefing and the {key} speech"
    assert "about 123 words" in briefings[("rebuttal", "pro")]
    assert "about 400 words" in briefings[("rebuttal", "con")]
    assert "about 450 words" in briefings[("constructive", "pro")]


def test_editor_human_against_an_llm_is_not_an_llm_call(tmp_path):
    command, log = editor(tmp_path)
    ws_path = workspace(tmp_path, human("me", editor=command))

    _, match = play(ws_path, "me", "bot")
    bot_rebuttal = next(s.text for s in match.speeches if (s.stage, s.side) == ("rebuttal", "con"))
    assert bot_rebuttal in (log / "summary-pro.md").read_text(encoding="utf-8")
    assert bot_rebuttal not in (log / "rebuttal-pro.md").read_text(encoding="utf-8")
    assert all(s.agents == {} for s in match.speeches if s.side == "pro")
    assert all(s.agents["writer"].calls == 1 for s in match.speeches if s.side == "con")


def test_nothing_written_in_the_editor_fails_the_match_with_exit_1(tmp_path):
    quiet = f"{shlex.quote(sys.executable)} -c pass"  # opens and closes without typing anything
    ws_path = workspace(tmp_path, human("me", editor=quiet))

    result = invoke("match", "play", "--motion", MOTION, "--pro", "me", "--con", "bot", "-w", ws_path)
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    assert "match m00001 failed: human entry 'me' wrote no constructive speech for PRO" in result.output
    status, error, speeches = failed_match(ws_path)
    assert (status, speeches) == ("failed", 0)
    assert "wrote no constructive speech" in error


@pytest.mark.parametrize("command, fragment", [
    (f"{shlex.quote(sys.executable)} -c 'import sys; sys.exit(3)'", "exited with status 3"),
    ("no-such-editor-xyz --wait", "cannot start editor 'no-such-editor-xyz'"),
    (f"{shlex.quote(sys.executable)} -c 'import sys; open(sys.argv[1], \"w\").write(\"hi\")'",
     "was removed from the briefing"),
], ids=["nonzero-exit", "not-found", "marker-removed"])
def test_editor_failures_fail_the_match_with_the_reason(tmp_path, command, fragment):
    ws_path = workspace(tmp_path, human("me", editor=command))
    with pytest.raises(ArenaError, match=re.escape(fragment)):
        play(ws_path, "me", "bot")
    status, error, speeches = failed_match(ws_path)
    assert (status, speeches) == ("failed", 0)
    assert fragment in error


def test_editor_comes_from_param_then_visual_then_editor_then_vi(monkeypatch):
    monkeypatch.setenv("VISUAL", "code --wait")
    monkeypatch.setenv("EDITOR", "nano")
    assert editor_command("emacs -nw") == ["emacs", "-nw"]
    assert editor_command("") == ["code", "--wait"]
    monkeypatch.delenv("VISUAL")
    assert editor_command("") == ["nano"]
    monkeypatch.delenv("EDITOR")
    assert editor_command("") == ["vi"]


@pytest.mark.parametrize("params, fragments", [
    ({"editor": "vim '"}, ("entries[1].params", "param editor", "balanced quotes")),
    ({"editor": "   "}, ("entries[1].params", "param editor", "a command line")),
    ({"speeches_dir": 3}, ("entries[1].params", "param speeches_dir", "str")),
    ({"voice": "loud"}, ("entries[1].params", "unknown param", "voice", "speeches_dir")),
], ids=["unbalanced-quotes", "blank-editor", "not-a-string", "unknown"])
def test_bad_human_params_exit_2(tmp_path, params, fragments):
    ws_path = workspace(tmp_path, human("me", **params))
    result = invoke("entry", "list", "-w", ws_path)
    assert result.exit_code == 2, result.output
    for fragment in fragments:
        assert fragment in result.output
    assert not (ws_path / "arena.db").exists()
