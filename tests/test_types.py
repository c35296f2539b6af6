"""The type checker: mypy passes on the packages with pyproject.toml's configuration ([tool.mypy]: strict on every
package), and it catches a misuse of the packages' types.

mypy runs as `.venv/bin/python -m mypy` would, from the repository's root with its config, and keeps its cache in
the repository's .mypy_cache (mypy's own default): on a fresh checkout a run is as cold as with a private cache,
and every later run, the developer's own included, reuses it.
"""
from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "pyproject.toml"
CACHE = ROOT / ".mypy_cache"


def mypy(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(CONFIG), "--cache-dir", str(CACHE),
                           *args], cwd=ROOT, capture_output=True, text=True)


@pytest.mark.slow
def test_mypy_passes_on_the_packages():
    """The files of [tool.mypy] (arena, debaters, judges, leaderboard, motions). Cold, on a fresh
    checkout (no .mypy_cache), some 7 s of one core (10-12 s of wall time on a busy 2-core machine); with the
    cache warm, under a second."""
    done = mypy()
    assert done.returncode == 0, f"mypy found errors (exit {done.returncode}):\n{done.stdout}{done.stderr}"
    assert "Success: no issues found" in done.stdout


PROBE = '''\
from arena.domain.records import Motion
from leaderboard.bt import fit_ratings, rank_ub

good = fit_ratings([0], [1], [1.0], [0.0], 2, anchor=(0, 1000.0))
ranks = rank_ub(good.ratings, good.ratings)
bad_count = fit_ratings([0], [1], [1.0], [0.0], "two")  # error: n is an int
bad_anchor = fit_ratings([0], [1], [1.0], [0.0], 2, anchor=("entry", 1000.0))  # error: an anchor is (index, rating)
bad_ratings: list[str] = good.ratings  # error: ratings are an array of floats
motion = Motion("m1", "This house would test.", "policy", colour="red")  # error: Motion has no colour
'''


def test_mypy_reports_a_misuse_of_the_strict_modules_types(tmp_path):
    """Calls that go against leaderboard.bt's and arena.domain.records' annotations are errors, each on its line, and
    the correct calls beside them are not: the checker checks (before bt was annotated, mypy said nothing)."""
    probe = tmp_path / "types_probe_misuse.py"
    probe.write_text(PROBE, encoding="utf-8")
    done = mypy(str(probe))
    assert done.returncode == 1, f"mypy should have failed (exit {done.returncode}):\n{done.stdout}{done.stderr}"
    # By the file's name alone: mypy replays a module's cached errors under the path it first checked it at
    # (another run's tmp_path) when neither it nor what it imports has changed.
    flagged = {int(line) for line in re.findall(rf"\b{re.escape(probe.name)}:(\d+): error:", done.stdout)}
    expected = {k for k, text in enumerate(PROBE.splitlines(), 1) if "# error:" in text}
    assert flagged == expected, f"errors on lines {sorted(flagged)}, expected {sorted(expected)}:\n{done.stdout}"


def test_the_config_is_strict_for_every_package_and_no_module_is_let_off():
    """Strict is the rule, not a list: [tool.mypy] says strict = true over the five packages, and no override turns
    one of strict's checks off for some module (the overrides only quiet third-party libraries without types)."""
    config = tomllib.loads(CONFIG.read_text(encoding="utf-8"))["tool"]["mypy"]
    assert config["strict"] is True
    assert sorted(config["files"]) == ["arena", "debaters", "judges", "leaderboard", "motions"]
    loosening = {"strict", "check_untyped_defs", "disallow_untyped_defs", "disallow_incomplete_defs",
                 "disallow_any_generics", "disallow_untyped_calls", "warn_return_any", "no_implicit_reexport",
                 "disallow_subclassing_any", "disallow_untyped_decorators", "strict_equality", "ignore_errors"}
    for override in config.get("overrides", []):
        assert not loosening & set(override), override
        assert all(not name.startswith(("arena", "debaters", "judges", "leaderboard", "motions"))
                   for name in override["module"]), override
