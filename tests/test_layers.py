"""The layers point one way: arena.app → debaters, judges, importers, motions, website, leaderboard → the arena
kernel; website (the published site) stands on leaderboard (the rating math) and neither imports arena; inside the
app, cli → commands → the rest in the order of APP_ORDER; no module imports itself round a circle.

Every import counts, at module level or inside a function, since a lazy import is still a dependency.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
KINDS_AND_LIBRARIES = ("debaters", "judges", "importers", "motions", "leaderboard", "website")
# What the site (website) may take from this repository: itself and the rating math. It renders the plain records
# and ratings the app gathers for it (arena.app.site_data), so it needs no store, no workspace and no kind.
SITE_USES = ("website", "leaderboard")
# The app's modules, bottom row first: a module imports only app modules of rows below its own. The JSON shapes
# (TypedDicts, and the records turned into them) are below every module that builds or reads them; wiring (opening
# a workspace) is below everything that opens one; the match engine below the workers, and both below a run;
# the facade (commands) above all but the CLI, which goes through it alone, but for the shapes of what it prints.
SHAPES = {"shapes", "figures", "reports"}
APP_ORDER = (
    SHAPES,
    {"progress", "presets", "demo", "check", "standings", "wiring"},
    {"engine", "people", "debating", "site_data", "web", "imports"},
    {"workers"},
    {"runs"},
    {"dryrun"},
    {"commands"},
    {"cli", "notebook"},  # the two shells over the facade: the command line and the Python API (arena.open)
)
# The one module the kernel may take from leaderboard: the Elo scale both the fit and the draw use. It
# imports nothing but the standard library, so it pulls neither numpy nor anything upward into the kernel.
SANCTIONED = {"leaderboard.elo"}
# The app modules the package `arena` itself may import, inside a function alone: `arena.open(DIR)`, the door of the
# Python API, hands its caller the app's workspace object, as `python -m arena` (arena.__main__) starts the CLI.
DOORS = {"arena": {"arena.app.notebook"}}


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
            sanctioned = {*SANCTIONED, *DOORS.get(module, ())}
            if any(within(name, p) for p in forbidden) and not any(within(name, s) for s in sanctioned):
                bad.append(f"{module} (kernel) imports {name}")
        elif within(module, "leaderboard") and (within(name, "arena") or within(name, "website")):
            # `arena rate` and the benchmarks fit ratings without a site: the rating math pulls in no renderer
            bad.append(f"{module} (rating code) imports {name}")
        elif within(module, "website") and any(within(name, p) for p in ("arena", *KINDS_AND_LIBRARIES)) \
                and not any(within(name, p) for p in SITE_USES):
            bad.append(f"{module} (the site) imports {name}: the site renders what the app hands it")
        elif any(within(module, p) for p in ("debaters", "judges", "motions")) and within(name, "arena.app"):
            bad.append(f"{module} (a kind) imports {name}")
        elif within(module, "importers") and any(within(name, p) for p in ("arena.app", *KINDS_AND_LIBRARIES)) \
                and not within(name, "importers"):
            bad.append(f"{module} (an importer) imports {name}: importers read files into the kernel's records")
    return bad


def app_violations(module: str, source: str) -> list[str]:
    """The imports of an arena.app module that break APP_ORDER: a module unplaced, or one not below it."""
    rows = {name: k for k, row in enumerate(APP_ORDER) for name in row}
    short = module.removeprefix("arena.app.")
    if short not in rows:
        return [f"{module} has no row in APP_ORDER"]
    bad = []
    for name in sorted(imports(source, module)):
        other = name.removeprefix("arena.app.").split(".")[0]
        if not within(name, "arena.app") or name == "arena.app" or other not in rows:
            continue  # outside the app, the package itself, or a name imported from a module (checked as that module)
        if rows[other] >= rows[short]:
            bad.append(f"{module} imports {name}, which is not below it in APP_ORDER")
        elif short == "cli" and other != "commands" and other not in SHAPES:
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
    for package in ("arena", *KINDS_AND_LIBRARIES):
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
    ("arena.app.engine", "from arena.app.runs import run", "arena.app.engine imports arena.app.runs, which is not below"),
    ("arena.app.workers", "def f():\n    from arena.app.commands import open_workspace\n",
     "arena.app.workers imports arena.app.commands, which is not below"),
    ("arena.app.engine", "from arena.app import workers", "arena.app.engine imports arena.app.workers, which is not"),
    ("arena.app.cli", "from arena.app.people import issue", "arena.app.cli imports arena.app.people: the CLI goes"),
    ("arena.app.newcomer", "import json", "arena.app.newcomer has no row in APP_ORDER"),
])
def test_the_app_order_check_catches_each_kind_of_violation(module, source, problem):
    assert any(v.startswith(problem) for v in app_violations(module, source))


def test_the_app_order_check_allows_what_the_order_allows():
    assert app_violations("arena.app.cli", "from arena.app import commands as app\nfrom arena.errors import UserError") == []
    assert app_violations("arena.app.runs", "from arena.app.workers import fan_out\nfrom arena.app.engine import play_claimed") == []


# Modules outside arena.store that may import sqlite3, and why: none reads or writes the database.
SQLITE_USERS = {"arena.files": "tells SQLite's full-disk error from others, as it does the OS's"}


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
    ("def f(store):\n    return store.conn.execute('SELECT 1')\n", "arena.exports:2 .execute"),
    ("def f(ws):\n    return ws.store.conn\n", "arena.exports:2 .conn"),
    ("import sqlite3\n", "arena.exports imports sqlite3"),
    ("from sqlite3 import Row\n", "arena.exports imports sqlite3"),
])
def test_the_store_check_catches_each_kind_of_violation(source, problem):
    assert problem in store_violations("arena.exports", source)
    assert store_violations("arena.store.plan", source) == []


def test_the_sanctioned_module_imports_only_the_standard_library():
    for name in SANCTIONED:
        path = ROOT / (name.replace(".", "/") + ".py")
        assert imports(path.read_text(encoding="utf-8"), name) <= {"math", "__future__", "__future__.annotations"}


def test_the_app_layer_is_where_kinds_are_wired():
    app = {name for module, path in modules() if within(module, "arena.app")
           for name in imports(path.read_text(encoding="utf-8"), module)}
    assert {"debaters.registry", "judges.registry", "importers.registry", "motions.library"} <= app


@pytest.mark.parametrize("module, source, problem", [
    ("arena.store", "from judges.registry import JUDGES", "arena.store (kernel) imports judges.registry"),
    ("arena.runner", "def f():\n    import leaderboard.bt\n", "arena.runner (kernel) imports leaderboard.bt"),
    ("arena.stats", "from arena import app", "arena.stats (kernel) imports arena.app"),
    ("arena.stats", "from .app import cli", "arena.stats (kernel) imports arena.app"),
    ("leaderboard.ratings", "from arena.records import score", "leaderboard.ratings (rating code) imports arena"),
    ("leaderboard.ratings", "from website import svg", "leaderboard.ratings (rating code) imports website"),
    ("website.render", "from arena.records import score", "website.render (the site) imports arena.records"),
    ("website.render", "def f():\n    from judges.registry import JUDGES\n",
     "website.render (the site) imports judges"),
    ("arena.files", "from website.published import page_name", "arena.files (kernel) imports website.published"),
    ("importers.arena", "from website.render import publish", "importers.arena (an importer) imports website"),
    ("judges.single", "from arena.app.runs import run", "judges.single (a kind) imports arena.app"),
    ("importers.lechmazur", "from judges.registry import JUDGES", "importers.lechmazur (an importer) imports judges"),
    ("importers.lechmazur", "from arena.app.wiring import reload", "importers.lechmazur (an importer) imports arena.app"),
    ("arena.store", "from importers.base import Imported", "arena.store (kernel) imports importers.base"),
    ("arena", "def open(path):\n    from arena.app.commands import open_workspace\n",
     "arena (kernel) imports arena.app.commands"),
    ("arena.records", "def f():\n    from arena.app.notebook import Arena\n",
     "arena.records (kernel) imports arena.app.notebook"),
])
def test_the_check_catches_each_kind_of_violation(module, source, problem):
    assert any(v.startswith(problem) for v in violations(module, source))


def test_the_check_allows_what_the_layers_allow():
    assert violations("arena.app.commands", "from judges.registry import JUDGES\nfrom leaderboard import bt") == []
    assert violations("judges.single", "from arena.judging import BaseJudge") == []
    assert violations("importers.lechmazur", "from importers.base import Importer\nfrom arena.records import Match") == []
    assert violations("arena.scheduler", "from leaderboard.elo import BASE_RATING") == []
    assert violations("arena.app.commands", "from website.render import publish") == []
    site = "import jinja2\nfrom leaderboard.elo import PRIOR_SD\nfrom website import labels"
    assert violations("website.render", site) == []
