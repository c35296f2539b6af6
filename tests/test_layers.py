"""The layers point one way: arena.app → debaters, judges, motions, leaderboard → the arena kernel.

Every import counts, at module level or inside a function, since a lazy import is still a dependency.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
KINDS_AND_LIBRARIES = ("debaters", "judges", "motions", "leaderboard")
# The one module the kernel may take from leaderboard: the Elo scale both the fit and the draw use. It
# imports nothing but the standard library, so it pulls neither numpy nor anything upward into the kernel.
SANCTIONED = {"leaderboard.elo"}


def imports(source: str, module: str) -> set[str]:
    """Every module a source file imports, absolute names, relative imports resolved against module."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = module.split(".")[:-node.level]
                base = ".".join([*parent, base] if base else parent)
            found.add(base)
            found |= {f"{base}.{alias.name}" for alias in node.names}  # `from arena import app` names a module
    return found


def within(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def kernel(module: str) -> bool:
    """arena.* but the app, and but `python -m arena`, which starts the program and so belongs to it."""
    return within(module, "arena") and not within(module, "arena.app") and module != "arena.__main__"


def violations(module: str, source: str) -> list[str]:
    """The imports that break the layering, for a module of this repository."""
    bad = []
    for name in sorted(imports(source, module)):
        if kernel(module):
            forbidden = [*KINDS_AND_LIBRARIES, "arena.app"]
            if any(within(name, p) for p in forbidden) and not any(within(name, s) for s in SANCTIONED):
                bad.append(f"{module} (kernel) imports {name}")
        elif within(module, "leaderboard") and within(name, "arena"):
            bad.append(f"{module} (rating code) imports {name}")
        elif any(within(module, p) for p in ("debaters", "judges", "motions")) and within(name, "arena.app"):
            bad.append(f"{module} (a kind) imports {name}")
    return bad


def modules() -> list[tuple[str, Path]]:
    out = []
    for package in ("arena", *KINDS_AND_LIBRARIES):
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            out.append((".".join(parts[:-1] if parts[-1] == "__init__" else parts), path))
    return out


def test_every_module_respects_the_layers():
    found = [v for module, path in modules() for v in violations(module, path.read_text(encoding="utf-8"))]
    assert found == []


def test_the_sanctioned_module_imports_only_the_standard_library():
    for name in SANCTIONED:
        path = ROOT / (name.replace(".", "/") + ".py")
        assert imports(path.read_text(encoding="utf-8"), name) <= {"math", "__future__", "__future__.annotations"}


def test_the_app_layer_is_where_kinds_are_wired():
    app = {name for module, path in modules() if within(module, "arena.app")
           for name in imports(path.read_text(encoding="utf-8"), module)}
    assert {"debaters.registry", "judges.registry", "motions.library"} <= app


@pytest.mark.parametrize("module, source, problem", [
    ("arena.store", "from judges.registry import JUDGES", "arena.store (kernel) imports judges.registry"),
    ("arena.runner", "def f():\n    import leaderboard.bt\n", "arena.runner (kernel) imports leaderboard.bt"),
    ("arena.stats", "from arena import app", "arena.stats (kernel) imports arena.app"),
    ("arena.stats", "from .app import cli", "arena.stats (kernel) imports arena.app"),
    ("leaderboard.site", "from arena.records import score", "leaderboard.site (rating code) imports arena"),
    ("judges.single", "from arena.app.runner import run", "judges.single (a kind) imports arena.app"),
])
def test_the_check_catches_each_kind_of_violation(module, source, problem):
    assert any(v.startswith(problem) for v in violations(module, source))


def test_the_check_allows_what_the_layers_allow():
    assert violations("arena.app.commands", "from judges.registry import JUDGES\nfrom leaderboard import bt") == []
    assert violations("judges.single", "from arena.judging import BaseJudge") == []
    assert violations("arena.scheduler", "from leaderboard.elo import BASE_RATING") == []
