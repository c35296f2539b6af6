"""Kinds are found by name: built-ins, and third-party kinds through entry points."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from arena.errors import UserError
from debaters.registry import DEBATERS
from judges.registry import JUDGES

PLUGIN = '''
from arena.protocol import Draft


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
    site = tmp_path / "site"
    (site / "echo_plugin-1.0.dist-info").mkdir(parents=True)
    (site / "echo_plugin.py").write_text(PLUGIN)
    (site / "echo_plugin-1.0.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: echo-plugin\n"
                                                                   "Version: 1.0\n")
    (site / "echo_plugin-1.0.dist-info" / "entry_points.txt").write_text(
        "[arena.debaters]\necho = echo_plugin:EchoDebater\n")
    ws = tmp_path / "ws"
    script = textwrap.dedent(f'''
        import json
        from arena.app import commands as app, runner, shapes
        from arena.app.commands import open_workspace
        from arena.workspace import init_workspace
        init_workspace({str(ws)!r}, """
        [search]
        provider = "offline"
        [[entries]]
        name = "e1"
        debater = "echo"
        model = "offline/e1"
        [entries.params]
        line = "hello"
        [[entries]]
        name = "e2"
        debater = "direct"
        model = "offline/e2"
        [[judges]]
        name = "j"
        kind = "single"
        model = "offline/j"
        runs = 1
        """)
        w = open_workspace({str(ws)!r})
        app.schedule(w, "round-robin")
        runner.run(w, progress=lambda line: None)
        print(json.dumps(shapes.match_json(w.store.match("m00001"))["speeches"]))
    ''')
    env = {**os.environ, "PYTHONPATH": str(site)}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    speeches = json.loads(done.stdout)
    echo = [s["text"] for s in speeches if s["side"] == "pro"]  # m00001: e1 is Pro
    assert echo == ["hello (pro, constructive, saw 0)", "hello (pro, rebuttal, saw 2)",
                    "hello (pro, summary, saw 5)"]
