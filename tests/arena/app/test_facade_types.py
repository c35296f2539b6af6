"""The facade's results are typed: code that reads a key a result does not have fails mypy, before it runs.

arena.app.commands returns TypedDicts (arena.app.shapes.records, figures, reports), so a misspelt or renamed key is a type
error in whatever reads it: the CLI, or a script on the Python API, as here.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]

READER = '''
from arena.app import commands
from arena.workspace.folder import Workspace


def names(ws: Workspace) -> list[str]:
    return [row[{key!r}] for row in commands.entry_list(ws)]
'''


def mypy(module: Path, cache: Path) -> subprocess.CompletedProcess[str]:
    """mypy on one module, from the repository's root so that it reads this tree's arena."""
    return subprocess.run([sys.executable, "-m", "mypy", "--follow-imports=silent", "--cache-dir", str(cache),
                           str(module)], cwd=ROOT, capture_output=True, text=True)


@pytest.mark.slow
def test_mypy_finds_a_misspelt_key_of_a_facade_result(tmp_path):
    """About 5 s: mypy reads the facade and what it imports once, then again from its cache."""
    module = tmp_path / "reader.py"
    module.write_text(READER.format(key="nmae"), encoding="utf-8")
    wrong = mypy(module, tmp_path / "cache")
    assert wrong.returncode == 1, wrong.stdout + wrong.stderr
    assert 'TypedDict "EntryRow" has no key "nmae"' in wrong.stdout, wrong.stdout

    module.write_text(READER.format(key="name"), encoding="utf-8")
    right = mypy(module, tmp_path / "cache")
    assert right.returncode == 0, right.stdout + right.stderr
