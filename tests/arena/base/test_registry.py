"""Kinds are found by name: built-ins, and third-party kinds through entry points."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from arena.base.errors import UserError
from debaters.registry import DEBATERS
from arena.opendata.registry import IMPORTERS
from judges.registry import JUDGES
from tests.support.helpers import arena_process as arena, entry, install_plugin, invoke, judge, workspace_toml

PLUGIN = '''
from arena.match.protocol import Draft


class EchoDebater:
    """Says the same thing every speech, without a model."""

    def __init__(self, entry):
        self.line = entry.params.get("line", "echo")

    async def speak(self, ctx):
        return Draft(f"{self.line} ({ctx.side}, {ctx.stage}, saw {len(ctx.visible)})")
'''


def test_builtin_kinds_are_registered():
    assert "direct" in DEBATERS.names() and "single" in JUDGES.names()
    assert DEBATERS.get("direct").__name__ == "DirectDebater"


def test_unknown_kind_is_a_user_error_listing_known_ones():
    with pytest.raises(UserError, match=r"unknown debater kind 'nope'.*direct"):
        DEBATERS.get("nope")


def test_a_plugin_debater_plays_through_its_entry_point(tmp_path):
    """A distribution advertising arena.debaters is found and plays a match — no code change here."""
    env = install_plugin(tmp_path / "site", "echo_plugin", "[arena.debaters]\necho = echo_plugin:EchoDebater\n",
                         PLUGIN)
    ws = tmp_path / "ws"
    toml = workspace_toml(entries=[entry("e1", "echo", params={"line": "hello"}), entry("e2")],
                          judges=[judge("j", runs=1)], arena={"speech_checks": False})  # it echoes a line
    script = textwrap.dedent(f'''
        import json
        from arena.app import commands as app
        from arena.app.runner import runs
        from arena.app.shapes import records as shapes
        from arena.app.commands import open_workspace
        from arena.workspace.folder import init_workspace
        init_workspace({str(ws)!r}, {toml!r})
        w = open_workspace({str(ws)!r})
        app.schedule(w, "round-robin")
        runs.run(w, progress=lambda line: None)
        print(json.dumps(shapes.match_json(w.store.match("m00001"))["speeches"]))
    ''')
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    speeches = json.loads(done.stdout)
    echo = [s["text"] for s in speeches if s["side"] == "pro"]  # m00001: e1 is Pro
    assert echo == ["hello (pro, constructive, saw 0)", "hello (pro, rebuttal, saw 2)",
                    "hello (pro, summary, saw 5)"]


def test_a_plugin_that_takes_a_builtin_name_is_an_error_naming_both(tmp_path):
    env = install_plugin(tmp_path / "site", "shadow_plugin", "[arena.debaters]\ndirect = shadow_plugin:EchoDebater\n",
                         PLUGIN)
    done = arena("kinds", env=env)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "'direct'" in done.stderr and "shadow_plugin:EchoDebater" in done.stderr
    assert "debaters.direct:DirectDebater" in done.stderr and "shadow_plugin" in done.stderr
    # The same refusal wherever the kind is looked up, even for the built-in's own name.
    ws = tmp_path / "ws"
    refused = arena("init", str(ws), env=env)  # its template names the kinds installed
    assert refused.returncode == 2 and "shadow_plugin:EchoDebater" in refused.stderr and not ws.exists()
    assert invoke("init", ws).exit_code == 0  # without the plug-in
    listed = arena("entry", "list", "-w", str(ws), env=env)
    assert listed.returncode == 2 and "shadow_plugin:EchoDebater" in listed.stderr


def test_kinds_lists_builtins_and_plugins_with_their_param_tables(tmp_path):
    env = install_plugin(tmp_path / "site", "echo_plugin", "[arena.debaters]\necho = echo_plugin:EchoDebater\n",
                         PLUGIN)
    done = arena("kinds", "--format", "json", env=env)
    assert done.returncode == 0, done.stderr
    kinds = {(k["family"], k["kind"]): k for k in json.loads(done.stdout)}
    assert set(kinds) == {*(("debater", n) for n in DEBATERS.names()), ("debater", "echo"),
                          *(("judge", n) for n in JUDGES.names()), *(("importer", n) for n in IMPORTERS.names())}
    assert kinds[("debater", "echo")]["source"] == "echo_plugin:EchoDebater"
    assert kinds[("debater", "echo")]["params"] == []  # it declares no table
    direct = {p["name"]: p for p in kinds[("debater", "direct")]["params"]}
    assert kinds[("debater", "direct")]["source"] == "built-in"
    assert direct["temperature"] == {"name": "temperature", "default": 0.2, "type": "int or float",
                                     "accepts": "from 0 to 2", "help": "sampling temperature"}
    single = {p["name"] for p in kinds[("judge", "single")]["params"]}
    assert {"temperature", "swap_sides", "language", "overall_ties"} <= single  # common options and its own
    table = arena("kinds", env=env)
    assert "debater kind echo  (plug-in: echo_plugin:EchoDebater)" in table.stdout
    assert "judge kind panel" in table.stdout


def test_a_kind_is_named_in_messages_as_the_registry_names_it(tmp_path):
    from arena.domain.records import Entry, JudgeSpec

    with pytest.raises(UserError, match=r"entry 'a' \(search-baseline debater\): unknown param"):
        DEBATERS.get("search-baseline")(Entry("a", "search-baseline", "offline/a", params={"nope": 1}))
    with pytest.raises(UserError, match=r"judge 'j' \(devils_advocate judge\): unknown option"):
        JUDGES.get("devils_advocate")(JudgeSpec("j", "devils_advocate", "offline/j", options={"nope": 1}))


IMPORTER_PLUGIN = '''
from pathlib import Path

from arena.domain.records import IMPORTED, Entry, JudgeSpec, Match, Motion, Speech, Verdict
from arena.opendata.importers import Imported, Importer


class OneFile(Importer):
    """A debate in one text file: its first line PRO's speech, its second CON's, its third the winner."""

    def read(self, folder):
        pro, con, winner = (Path(folder) / "debate.txt").read_text().splitlines()
        motion = Motion("one-file", "A third source is one file.", "value")
        match = Match("one-1", motion, "left", "right", "done",
                      speeches=(Speech("constructive", "pro", pro), Speech("constructive", "con", con)),
                      verdicts=(Verdict("their-judge", 0, winner),))
        return Imported("one file", (Entry("left", IMPORTED, "left"), Entry("right", IMPORTED, "right")),
                        (JudgeSpec("their-judge", IMPORTED, IMPORTED, runs=1),), (motion,), (match,))
'''


def test_a_plugin_importer_is_listed_and_imports_through_its_entry_point(tmp_path):
    env = install_plugin(tmp_path / "site", "onefile_plugin", "[arena.importers]\nonefile = onefile_plugin:OneFile\n",
                  IMPORTER_PLUGIN)
    listed = arena("kinds", "--format", "json", env=env)
    assert listed.returncode == 0, listed.stderr
    kinds = {(k["family"], k["kind"]): k for k in json.loads(listed.stdout)}
    assert kinds[("importer", "onefile")]["source"] == "onefile_plugin:OneFile"
    folder, ws = tmp_path / "their", tmp_path / "ws"
    folder.mkdir()
    (folder / "debate.txt").write_text("Yes, one file.\nNo, two.\ncon\n")
    assert arena("init", str(ws), env=env).returncode == 0
    done = arena("import", "onefile", str(folder), "-w", str(ws), "--format", "json", env=env)
    assert done.returncode == 0, done.stderr
    assert {k: json.loads(done.stdout)[k] for k in ("matches", "entries", "judges", "runs")} == \
        {"matches": 1, "entries": 2, "judges": ["their-judge"], "runs": 1}
    shown = json.loads(arena("match", "show", "one-1", "-w", str(ws), "--format", "json", env=env).stdout)
    assert [s["text"] for s in shown["speeches"]] == ["Yes, one file.", "No, two."]
    assert [(v["judge"], v["overall"]) for v in shown["verdicts"]] == [("their-judge", "con")]
    refused = arena("import", "onefile", str(folder), "-w", str(ws), "--judge", "x", env=env)
    assert refused.returncode == 2 and "the onefile importer: unknown option(s) judge" in refused.stderr


def test_opening_a_workspace_looks_each_kind_up_once_not_each_entry(tmp_path, monkeypatch):
    """A lookup reads every installed package's entry points (some 15 ms): a hundred entries of one kind cost
    what one does, so that opening a big workspace (and so publishing it again) stays quick."""
    import arena.base.registry as registry
    from arena.app.commands import open_workspace
    from tests.support.helpers import new_workspace

    path = new_workspace(tmp_path / "ws", entries=[entry(f"e{k}") for k in range(30)], judges=[judge("j")])
    reads = []
    monkeypatch.setattr(registry, "entry_points", lambda **kw: reads.append(kw) or [])
    ws = open_workspace(path)
    ws.close()
    assert len(ws.debaters) == 30
    assert len(reads) == 2 + 2 * 2  # each family's names at the start, then has() and get() of direct and single
