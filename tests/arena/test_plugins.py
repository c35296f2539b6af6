"""One module for plug-in authors (arena.plugins), the old contract paths forwarding to it with a warning, and the
installed import packages: the design's five, no generic names beside them."""
from __future__ import annotations

import importlib
import subprocess
import sys
import tomllib
import warnings
from pathlib import Path

import pytest
from setuptools import find_packages

import arena.plugins as plugins
from arena.domain import records
from arena.match import judging, protocol

ROOT = Path(__file__).resolve().parents[2]


def test_every_name_of_the_plugin_module_is_the_kernels_own_object():
    assert plugins.DebateContext is protocol.DebateContext and plugins.Draft is protocol.Draft
    assert plugins.BaseJudge is judging.BaseJudge and plugins.verdict_schema is judging.verdict_schema
    assert plugins.Entry is records.Entry and plugins.JudgeSpec is records.JudgeSpec
    assert sorted(plugins.__all__) == sorted(set(plugins.__all__))
    assert all(hasattr(plugins, name) for name in plugins.__all__)


@pytest.mark.parametrize("old, name, new", [
    ("arena.protocol", "DebateContext", protocol.DebateContext),
    ("arena.judging", "BaseJudge", judging.BaseJudge),
    ("arena.records", "Entry", records.Entry),
    ("judges.base", "verdict_schema", judging.verdict_schema),
])
def test_an_old_path_still_gives_the_name_and_says_where_it_went(old, name, new):
    module = importlib.import_module(old)
    with pytest.warns(DeprecationWarning, match=rf"{old}\.{name} moved: import it from arena\.plugins"):
        assert getattr(module, name) is new


def test_an_old_path_refuses_a_name_it_never_had():
    module = importlib.import_module("arena.judging")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(AttributeError, match="module 'arena.judging' has no attribute 'Nonesuch'"):
            module.Nonesuch  # noqa: B018


def test_a_plugin_written_against_the_old_paths_still_imports(tmp_path):
    """`from arena.judging import BaseJudge` in a plug-in's module works, warning once, in a fresh process."""
    (tmp_path / "old_plugin.py").write_text(
        "from arena.protocol import DebateContext, Draft\nfrom judges.base import BaseJudge, Decision\n"
        "class Quiet(BaseJudge):\n    pass\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-W", "always::DeprecationWarning", "-c", "import old_plugin"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=60,
                          env={"PYTHONPATH": f"{tmp_path}:{ROOT}", "LITELLM_LOCAL_MODEL_COST_MAP": "True"})
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("DeprecationWarning") == 4  # DebateContext, Draft, BaseJudge, Decision


def test_the_distribution_installs_the_five_packages_of_the_design_and_nothing_else():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    include = config["tool"]["setuptools"]["packages"]["find"]["include"]
    tops = {name.split(".")[0] for name in find_packages(str(ROOT), include=include)}
    assert tops == {"arena", "debaters", "judges", "motions", "leaderboard"}
    assert not (ROOT / "website").exists() and not (ROOT / "importers").exists()
