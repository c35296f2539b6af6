"""The layers are folders, and point one way: arena/app/ (the program) → debaters/, judges/, motions/, leaderboard/
(the kinds, the motion library and the rating math with its site) → the kernel (arena/ but its app: rooms base, domain,
gateway, workspace, store, match, analysis, opendata). The rating math (leaderboard/) imports no arena, and its site
(leaderboard/site/) renders what the app hands it; inside the app, each room imports only the rooms below it in
APP_ROOMS, and the CLI goes through the facade; no module imports itself round a circle.

Every import counts, at module level or inside a function, since a lazy import is still a dependency.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("arena", "debaters", "judges", "motions", "leaderboard")
# The layers, each a folder (or a few), top first. A module belongs to the first layer one of whose folders holds it.
LAYERS = {
    "app": ("arena.app",),
    "site": ("leaderboard.site",),
    "rating": ("leaderboard",),
    "kinds": ("debaters", "judges", "motions"),
    "kernel": ("arena",),
}
# What each layer may import from this repository (beside itself). The site renders what the app hands it, with the
# rating math's shapes and scale alone (no store, no workspace, no kind); the rating math takes plain arrays and imports nothing
# of the arena, so `arena rate` and the benchmarks fit ratings without them.
MAY_IMPORT = {
    "app": ("site", "rating", "kinds", "kernel"),
    "site": ("rating",),
    "rating": (),
    "kinds": ("kernel",),
    "kernel": (),
}
# The one module the kernel may take from leaderboard: the Elo scale both the fit and the draw use. It
# imports nothing but the standard library, so it pulls neither numpy nor anything upward into the kernel.
SANCTIONED = {"leaderboard.elo"}
# The app modules the package `arena` itself may import, inside a function alone: `arena.open(DIR)`, the door of the
# Python API, hands its caller the app's workspace object. (`python -m arena`, arena.__main__, starts the CLI: it
# belongs to the app, see layer.)
DOORS = {"arena": {"arena.app.notebook"}}
# The app's rooms (a folder, or a module alone), bottom row first: a room imports only rooms of rows below its own.
# The JSON shapes are below everything that builds or reads them; setting up (opening a workspace) below everything
# that opens one; the runner and people's web app below the site's data; the facade (commands) above them all but
# the two shells over it, the CLI (which goes through the facade alone, but for the shapes of what it prints) and
# the Python API.
APP_ROOMS = (
    {"shapes"},
    {"setup"},
    {"runner", "people"},
    {"site_data"},
    {"commands"},
    {"cli", "notebook"},
)


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


def layer(module: str) -> str | None:
    """The layer whose folder holds a module of this repository; None for anything else (the standard library,
    third-party packages)."""
    if module == "arena.__main__":
        return "app"  # `python -m arena` starts the program, so it belongs to the program
    for name, folders in LAYERS.items():
        if any(within(module, folder) for folder in folders):
            return name
    return None


def violations(module: str, source: str) -> list[str]:
    """The imports that break the layering, for a module of this repository."""
    own = layer(module)
    allowed = {*SANCTIONED, *DOORS.get(module, ())}
    bad = []
    for name in sorted(imports(source, module)):
        other = layer(name)
        if other is None or other == own or other in MAY_IMPORT[own] or any(within(name, s) for s in allowed):
            continue
        bad.append(f"{module} ({own}) imports {name} ({other})")
    return bad


def room(module: str) -> str:
    """An app module's room: the folder under arena/app/ that holds it, or the module itself."""
    return module.removeprefix("arena.app.").split(".")[0]


def app_violations(module: str, source: str) -> list[str]:
    """The imports of an arena.app module that break APP_ROOMS: a room unplaced, or one not below it."""
    rows = {name: k for k, row in enumerate(APP_ROOMS) for name in row}
    mine = room(module)
    if mine not in rows:
        return [f"{module} has no row in APP_ROOMS"]
    bad = []
    for name in sorted(imports(source, module)):
        other = room(name)
        if not within(name, "arena.app") or name == "arena.app" or other == mine or other not in rows:
            continue  # outside the app, the package itself, its own room, or a name imported from a module
        if rows[other] >= rows[mine]:
            bad.append(f"{module} imports {name}, which is not below it in APP_ROOMS")
        elif mine == "cli" and other not in ("commands", "shapes"):
            bad.append(f"{module} imports {name}: the CLI goes through the facade (arena.app.commands) alone")
    return bad


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import circles of a module graph: each strongly connected group of two or more modules, sorted
    (Tarjan's algorithm; a module that imports itself counts too)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                top = stack.pop()
                group.append(top)
                if top == node:
                    break
            if len(group) > 1 or node in graph.get(node, ()):
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def import_graph() -> dict[str, set[str]]:
    """Each module of the repository → the modules of the repository it imports (lazily or not), but a door's
    (DOORS): every module under the package `arena` imports it first, and it reaches into the app only when called."""
    sources = {module: path.read_text(encoding="utf-8") for module, path in modules()}
    return {module: {name for name in imports(source, module) if name in sources
                     and not any(within(name, door) for door in DOORS.get(module, ()))}
            for module, source in sources.items()}


def test_a_door_imports_the_app_only_when_it_is_called():
    """`import arena` costs no app layer (and no pandas): a door's imports of the app are inside functions, or for
    annotations alone."""
    for module, doors in DOORS.items():
        tree = ast.parse((ROOT / (module.replace(".", "/") + "/__init__.py")).read_text(encoding="utf-8"))
        eager = [node for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))]
        eager += [node for block in tree.body
                  if isinstance(block, ast.If) and "TYPE_CHECKING" not in ast.unparse(block.test)
                  for node in ast.walk(block) if isinstance(node, (ast.Import, ast.ImportFrom))]
        found = {name for node in eager for name in imports(ast.unparse(node), module)}
        assert not [name for name in found if any(within(name, door) for door in doors)], module


def modules() -> list[tuple[str, Path]]:
    out = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            out.append((".".join(parts[:-1] if parts[-1] == "__init__" else parts), path))
    return out


def test_every_module_respects_the_layers():
    found = [v for module, path in modules() for v in violations(module, path.read_text(encoding="utf-8"))]
    assert found == []


def test_the_app_modules_import_in_the_app_order():
    found = [v for module, path in modules() if within(module, "arena.app") and module != "arena.app"
             for v in app_violations(module, path.read_text(encoding="utf-8"))]
    assert found == []


def test_no_module_imports_itself_round_a_circle():
    assert circles(import_graph()) == []


def test_the_circle_check_finds_a_circle_and_only_circles():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set(), "c": {"a", "b"}}) == []


@pytest.mark.parametrize("module, source, problem", [
    ("arena.app.setup.wiring", "from arena.app.runner.runs import run",
     "arena.app.setup.wiring imports arena.app.runner.runs, which is not below"),
    ("arena.app.runner.workers", "def f():\n    from arena.app.commands import open_workspace\n",
     "arena.app.runner.workers imports arena.app.commands, which is not below"),
    ("arena.app.people.web", "from arena.app.runner import engine", "arena.app.people.web imports arena.app.runner.engine"),
    ("arena.app.cli.main", "from arena.app.people.ballot_links import issue",
     "arena.app.cli.main imports arena.app.people.ballot_links: the CLI goes"),
    ("arena.app.newcomer", "import json", "arena.app.newcomer has no row in APP_ROOMS"),
])
def test_the_app_order_check_catches_each_kind_of_violation(module, source, problem):
    assert any(v.startswith(problem) for v in app_violations(module, source))


def test_the_app_order_check_allows_what_the_order_allows():
    assert app_violations("arena.app.cli.rating", "from arena.app import commands as app\n"
                          "from arena.app.shapes.figures import RateResult\nfrom arena.base.errors import UserError") == []
    assert app_violations("arena.app.runner.runs", "from arena.app.runner.workers import fan_out\n"
                          "from arena.app.runner.engine import play_claimed\nfrom arena.app.setup.wiring import reload") == []


# Modules outside arena.store that may import sqlite3, and why: none reads or writes the database.
SQLITE_USERS = {"arena.base.files": "tells SQLite's full-disk error from others, as it does the OS's"}


def store_violations(module: str, source: str) -> list[str]:
    """What a module outside arena.store does that only the store may: call execute on a connection, reach for a
    store's connection, or import sqlite3 (whose rows, sqlite3.Row, are the store's to decode into records)."""
    if within(module, "arena.store"):
        return []
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr in ("execute", "executemany", "executescript", "conn"):
            found.append(f"{module}:{node.lineno} .{node.attr}")
    if module not in SQLITE_USERS:
        found += [f"{module} imports sqlite3" for name in imports(source, module) if within(name, "sqlite3")][:1]
    return found


def test_sql_is_written_in_the_store_alone():
    found = [v for module, path in modules() for v in store_violations(module, path.read_text(encoding="utf-8"))]
    assert found == []


@pytest.mark.parametrize("source, problem", [
    ("def f(store):\n    return store.conn.execute('SELECT 1')\n", "arena.opendata.exports:2 .execute"),
    ("def f(ws):\n    return ws.store.conn\n", "arena.opendata.exports:2 .conn"),
    ("import sqlite3\n", "arena.opendata.exports imports sqlite3"),
    ("from sqlite3 import Row\n", "arena.opendata.exports imports sqlite3"),
])
def test_the_store_check_catches_each_kind_of_violation(source, problem):
    assert problem in store_violations("arena.opendata.exports", source)
    assert store_violations("arena.store.plan", source) == []


def test_the_sanctioned_module_imports_only_the_standard_library():
    for name in SANCTIONED:
        path = ROOT / (name.replace(".", "/") + ".py")
        assert imports(path.read_text(encoding="utf-8"), name) <= {"math", "__future__", "__future__.annotations"}


def test_the_app_layer_is_where_kinds_are_wired():
    app = {name for module, path in modules() if within(module, "arena.app")
           for name in imports(path.read_text(encoding="utf-8"), module)}
    assert {"debaters.registry", "judges.registry", "arena.opendata.registry", "motions.library"} <= app


@pytest.mark.parametrize("module, source, problem", [
    ("arena.store", "from judges.registry import JUDGES", "arena.store (kernel) imports judges.registry"),
    ("arena.app.runner", "def f():\n    import leaderboard.bt\n", ""),
    ("arena.match.protocol", "def f():\n    import leaderboard.bt\n", "arena.match.protocol (kernel) imports leaderboard.bt"),
    ("arena.analysis.stats", "from arena import app", "arena.analysis.stats (kernel) imports arena.app"),
    ("arena.analysis.stats", "from ..app import cli", "arena.analysis.stats (kernel) imports arena.app"),
    ("leaderboard.ratings", "from arena.domain.records import score", "leaderboard.ratings (rating) imports arena.domain"),
    ("leaderboard.ratings", "from leaderboard.site import svg", "leaderboard.ratings (rating) imports leaderboard.site"),
    ("leaderboard.ratings", "from judges.registry import JUDGES", "leaderboard.ratings (rating) imports judges"),
    ("leaderboard.site.render", "from arena.domain.records import score",
     "leaderboard.site.render (site) imports arena.domain.records"),
    ("leaderboard.site.render", "def f():\n    from judges.registry import JUDGES\n",
     "leaderboard.site.render (site) imports judges"),
    ("arena.base.files", "from leaderboard.site.published import page_name",
     "arena.base.files (kernel) imports leaderboard.site.published"),
    ("arena.opendata.from_arena", "from leaderboard.site.render import publish",
     "arena.opendata.from_arena (kernel) imports leaderboard.site"),
    ("judges.single", "from arena.app.runner.runs import run", "judges.single (kinds) imports arena.app"),
    ("arena.opendata.lechmazur", "from judges.registry import JUDGES", "arena.opendata.lechmazur (kernel) imports judges"),
    ("arena", "def open(path):\n    from arena.app.commands import open_workspace\n",
     "arena (kernel) imports arena.app.commands"),
    ("arena.domain.records", "def f():\n    from arena.app.notebook import Arena\n",
     "arena.domain.records (kernel) imports arena.app.notebook"),
])
def test_the_check_catches_each_kind_of_violation(module, source, problem):
    found = violations(module, source)
    assert any(v.startswith(problem) for v in found) if problem else found == []


def test_the_check_allows_what_the_layers_allow():
    assert violations("arena.app.commands", "from judges.registry import JUDGES\nfrom leaderboard import bt") == []
    assert violations("judges.single", "from arena.plugins import BaseJudge\nfrom arena.match.judging import run_judge") == []
    assert violations("arena.opendata.lechmazur", "from arena.opendata.importers import Importer\n"
                      "from arena.domain.records import Match") == []
    assert violations("arena.domain.scheduler", "from leaderboard.elo import BASE_RATING") == []
    assert violations("arena.app.commands", "from leaderboard.site.render import publish") == []
    assert violations("arena.__main__", "from arena.app.cli import main") == []
    site = "import jinja2\nfrom leaderboard.elo import PRIOR_SD\nfrom leaderboard.site import labels"
    assert violations("leaderboard.site.render", site) == []


def test_every_layer_is_a_folder_and_no_folder_is_crowded():
    """Each layer is one or more folders, and no folder holds more than 15 modules side by side."""
    crowded = {}
    for package in PACKAGES:
        for folder in [ROOT / package, *[p for p in (ROOT / package).rglob("*") if p.is_dir()]]:
            mods = [p for p in folder.glob("*.py") if p.name != "__init__.py"]
            if len(mods) > 15:
                crowded[str(folder.relative_to(ROOT))] = len(mods)
    assert crowded == {}
    assert all((ROOT / f.replace(".", "/") / "__init__.py").is_file() for folders in LAYERS.values() for f in folders)


def test_no_product_module_is_over_600_lines():
    long = {str(path.relative_to(ROOT)): n for _, path in modules()
            if (n := len(path.read_text(encoding="utf-8").splitlines())) > 600}
    assert long == {}
