"""Rewrite the generated regions of the docs from the code, so the docs and `arena --help` cannot disagree.

A region is `<!-- generated:KEY -->` ... `<!-- /generated -->` in a page under docs/. KEY is one of:

  cli arena PATH...        a command's usage line and its argument and option tables (the click tree)
  config SECTION           an arena.toml table's keys and defaults (arena.workspace.config's schema)
  kind FAMILY NAME         a built-in kind's params or options (what `arena kinds` prints)
  template                 the arena.toml that `arena init` writes (arena.workspace.folder.template)
  modules                  every Python module of the packages, with its docstring's first paragraph
  api                      the Python API (arena.app.notebook.Arena): each method's signature and summary, and
                           the columns and dtypes of each DataFrame it returns (arena.app.notebook.FRAMES)
  example PATH             a file of the repository (an example script), whole, in a code block

Hand-written cells (an option's or key's meaning, a key's type, a nuanced default that agrees with the
code) are kept from the page; everything the code knows is rewritten. A command without a section gets
one on the command-line page, placed after its predecessor in the command tree.

The examples of docs/reference/json.md are hand-written too, and checked: json_shapes names the shape
(a TypedDict of arena.app.shapes.records, figures or reports) of each JSON example of a section, and the keys a
section's examples show of a shape are exactly its keys (json_shape_problems).

    python docs/gen.py           rewrite the pages
    python docs/gen.py --check   exit 1, naming the stale pages, when a rewrite would change anything
"""
from __future__ import annotations

import ast
import inspect
import json
import re
import sys
import types
from pathlib import Path
from typing import Any, Iterator, NotRequired, Union, get_args, get_origin, get_type_hints, is_typeddict

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
CLI_PAGE = DOCS / "reference" / "cli.md"
JSON_PAGE = DOCS / "reference" / "json.md"
PACKAGES = ("arena", "debaters", "judges", "leaderboard", "motions")
REGION = re.compile(r"<!-- generated:(?P<key>[^>]+?) -->\n(?P<body>.*?)<!-- /generated -->", re.S)
FLAG = re.compile(r"(?<![\w-])(--[A-Za-z][\w-]*)")
SPAN = re.compile(r"`([^`]+)`")


# --- tables --------------------------------------------------------------------------------------

def cells(line: str) -> list[str]:
    """The cells of one markdown table row (`\\|` is a pipe inside a cell)."""
    return [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]


def table_rows(body: str, first: str) -> list[list[str]]:
    """The body rows of the tables in `body` whose first header cell is `first`."""
    rows, inside = [], False
    for line in body.splitlines():
        if not line.lstrip().startswith("|"):
            inside = False
            continue
        row = cells(line)
        if row and row[0] == first:
            inside = True
        elif inside and not all(re.fullmatch(r":?-{3,}:?", c) for c in row):
            rows.append(row)
    return rows


def table(header: list[str], rows: list[list[str]]) -> str:
    """A markdown table."""
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join("---" for _ in header) + " |"]
    return "\n".join([*lines, *("| " + " | ".join(r) + " |" for r in rows)])


def escape(text: str) -> str:
    """Text for a table cell: no pipe or line break breaks the row."""
    return " ".join(text.split()).replace("|", "\\|").replace("<", "&lt;")


# --- the command line ----------------------------------------------------------------------------

def command_tree():
    """(path, command, context) for every visible command, in the order `arena --help` lists them."""
    import click

    from arena.app.cli import main

    def walk(cmd, ctx, path):
        yield path, cmd, ctx
        if isinstance(cmd, click.Group):
            for name in cmd.list_commands(ctx):
                sub = cmd.get_command(ctx, name)
                if sub is not None and not sub.hidden:
                    yield from walk(sub, click.Context(sub, info_name=name, parent=ctx), (*path, name))

    return list(walk(main, click.Context(main, info_name="arena"), ()))


def _plain(default) -> bool:
    """Whether a default is a value the page states as it is (not none, unset or computed)."""
    return isinstance(default, (str, int, float, Path)) and not isinstance(default, bool)


def _default_cell(param, old: str | None) -> str:
    """The default column: the page's own wording when it agrees with the code, else the code's value."""
    if param.required:
        return old if old and "required" in old else "required"
    if getattr(param, "is_flag", False):
        return old or "off"
    if _plain(param.default):
        return old if old and str(param.default) in old else f"`{param.default}`"
    return old or "none"


def command_region(cmd, ctx, old_body: str) -> str:
    """A command's usage line, then a table of its arguments and of its options."""
    import click

    usage = " ".join(["Usage:", ctx.command_path, *cmd.collect_usage_pieces(ctx)])
    parts = [f"```\n{usage}\n```"]
    old_args = {SPAN.findall(r[0])[0]: r for r in table_rows(old_body, "argument") if SPAN.findall(r[0])}
    args = [p for p in cmd.params if isinstance(p, click.Argument)]
    if args:
        rows = []
        for a in args:
            old = old_args.get(a.human_readable_name)
            rows.append([f"`{a.human_readable_name}`", _default_cell(a, old and old[1]), old[2] if old else ""])
        parts.append(table(["argument", "default", "meaning"], rows))
    old_opts = {}
    for r in table_rows(old_body, "option"):
        for flag in FLAG.findall(r[0]):
            old_opts.setdefault(flag, r)
    opts = [p for p in cmd.params if isinstance(p, click.Option) and not p.hidden]
    if opts:
        rows = []
        for o in opts:
            record = o.get_help_record(ctx)
            old = next((old_opts[f] for f in (*o.opts, *o.secondary_opts) if f in old_opts), None)
            meaning = old[2] if old else escape(o.help or "").rstrip(".")
            rows.append([f"`{escape(record[0])}`", _default_cell(o, old and old[1]), meaning])
        parts.append(table(["option", "default", "meaning"], rows))
    return "\n\n".join(parts) + "\n"


def place_new_commands(text: str, tree) -> str:
    """Add a section for each command the page lacks, after the section of the command before it."""
    have = {m.group("key") for m in REGION.finditer(text)}
    for k, (path, cmd, ctx) in enumerate(tree):
        key = " ".join(("cli", "arena", *path))
        if key in have:
            continue
        # the next command that has a section: the new one goes just before its heading
        later = next((" ".join(("cli", "arena", *p)) for p, _, _ in tree[k + 1:]
                      if " ".join(("cli", "arena", *p)) in have), None)
        level = "#" * min(len(path) + 1, 3)
        help_text = " ".join(inspect.cleandoc(cmd.help or "").split("\n\n")[0].split())
        section = f"{level} `{ctx.command_path}`\n\n<!-- generated:{key} -->\n<!-- /generated -->\n\n{help_text}\n\n"
        if later is None:
            text = text.rstrip("\n") + "\n\n" + section.rstrip("\n") + "\n"
        else:
            at = text.index(f"<!-- generated:{later} -->")
            heading = text.rfind("\n#", 0, at) + 1
            text = text[:heading] + section + text[heading:]
        have.add(key)
    return text


# --- arena.toml ----------------------------------------------------------------------------------

def toml_value(value) -> str:
    """A default as TOML."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (tuple, list)):
        return json.dumps(list(value), ensure_ascii=False)
    if isinstance(value, dict):
        return "{}" if not value else json.dumps(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    return repr(value)


def config_region(name: str, old_body: str) -> str:
    """An arena.toml table: a row per key in the schema's order; type and meaning kept from the page."""
    from arena.workspace import config

    spec, defaults, required = config.tables()[name]
    old = {SPAN.findall(r[0])[0]: r for r in table_rows(old_body, "key") if SPAN.findall(r[0])}
    rows = []
    for key, (_, check, *_) in spec.items():
        was = old.get(key)
        if key in required:
            default = was[2] if was and "required" in was[2] else "required"
        elif key in defaults and not name.startswith(("entries", "judges")):
            default = f"`{toml_value(defaults[key])}`"
        else:  # an entry's or judge's default may be computed ("[arena] judge_runs"): the page says how
            default = was[2] if was else (f"`{toml_value(defaults[key])}`" if key in defaults else "none")
        kind = was[1] if was else escape(check[1])
        rows.append([f"`{key}`", kind, default, was[3] if was else ""])
    return table(["key", "type", "default", "meaning"], rows) + "\n"


# --- kinds, the template, the modules ------------------------------------------------------------

def kind_region(family: str, kind: str) -> str:
    """A built-in kind's params or options, as `arena kinds --format json` gives them."""
    from arena.app.commands import kinds

    found = [k for k in kinds() if (k["family"], k["kind"], k["source"]) == (family, kind, "built-in")]
    if not found:
        raise SystemExit(f"docs: no built-in {family} kind {kind!r}: remove its section")
    rows = [[f"`{p['name']}`", f"`{json.dumps(p['default'], ensure_ascii=False)}`", escape(p["accepts"]),
             escape(p["help"])] for p in found[0]["params"]]
    return table(["param", "default", "accepts", "meaning"], rows) + "\n"


def template_region() -> str:
    """The arena.toml `arena init` writes where no plug-in is installed."""
    from arena.workspace.folder import template
    from debaters.registry import DEBATERS
    from judges.registry import JUDGES

    return f"```toml\n{template(sorted(DEBATERS.builtins), sorted(JUDGES.builtins)).strip()}\n```\n"


def modules() -> list[Path]:
    """Every Python module of the packages, relative to the repository."""
    return sorted(p.relative_to(ROOT) for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py")
                  if "__pycache__" not in p.parts)


def modules_region() -> str:
    """A table of every module with the first paragraph of its docstring."""
    rows = []
    for path in modules():
        doc = ast.get_docstring(ast.parse((ROOT / path).read_text(encoding="utf-8"))) or ""
        summary = doc.strip().split("\n\n")[0] or ("the package" if path.name == "__init__.py" else "")
        rows.append([f"`{path.as_posix()}`", escape(summary)])
    return table(["module", "what it is"], rows) + "\n"


# --- the Python API ------------------------------------------------------------------------------

def signature(name: str, function) -> str:
    """A method as a notebook calls it: `ws.name(params) -> returns`, annotations as written in the source."""
    sig = inspect.signature(function)
    parts, starred = [], False
    for p in list(sig.parameters.values())[1:]:  # self is the `ws.`
        text = p.name
        if p.kind is p.VAR_KEYWORD:
            text, starred = f"**{p.name}", True
        elif p.kind is p.KEYWORD_ONLY and not starred:
            parts.append("*")
            starred = True
        if p.annotation is not p.empty:
            text += f": {p.annotation}"
        if p.default is not p.empty:
            text += f" = {p.default!r}"
        parts.append(text)
    return f"ws.{name}({', '.join(parts)}) -> {sig.return_annotation}"


def column_table(columns) -> str:
    """A DataFrame's columns: name and dtype (a category's categories where they are fixed)."""
    rows = [[f"`{c.name}`", f"{c.dtype} ({', '.join(c.categories)})" if c.categories else c.dtype] for c in columns]
    return table(["column", "dtype"], rows)


def api_region() -> str:
    """Every public method of arena.app.notebook.Arena in the order of its source: signature, the first paragraph
    of its docstring, and the columns of the DataFrames it returns."""
    import dataclasses

    from arena.app import notebook

    parts = []
    for name, function in vars(notebook.Arena).items():
        if name.startswith("_") or not inspect.isfunction(function):
            continue
        doc = inspect.cleandoc(function.__doc__ or "").split("\n\n")
        parts.append(f"### `ws.{name}`\n\n```python\n{signature(name, function)}\n```\n\n{' '.join(doc[0].split())}")
        parts += [" ".join(more.split()) for more in doc[1:]]
        returned = getattr(notebook, str(inspect.signature(function).return_annotation), None)
        if dataclasses.is_dataclass(returned):
            fields = ", ".join(f"`{f.name}`" for f in dataclasses.fields(returned))
            parts.append(f"`{returned.__name__}` ({fields}): {' '.join(inspect.cleandoc(returned.__doc__).split())}")
        for key, columns in notebook.FRAMES.get(name, {}).items():
            if key == "by":  # the same columns after the group's: said, not tabled again
                parts.append(f"With `by`: {', '.join(f'`{c.name}` ({c.dtype})' for c in columns[:1])} first, named "
                             "as `by` is (`category` or `dimension`), then the columns above.")
                continue
            if key:
                parts.append(f"`.{key}`:")
            parts.append(column_table(columns))
    return "\n\n".join(parts) + "\n"


def example_region(path: str) -> str:
    """A file of the repository, whole, as a code block."""
    text = (ROOT / path).read_text(encoding="utf-8")
    return f"```{'python' if path.endswith('.py') else ''}\n{text.rstrip()}\n```\n"


# --- the JSON shapes -----------------------------------------------------------------------------

def json_shapes() -> dict[str, tuple[Any, ...]]:
    """json.md's section titles → the shape of each ```json example of the section, in order."""
    from arena.app.shapes import figures as f
    from arena.app.shapes import reports as r
    from arena.app.shapes import records as s

    return {
        "arena kinds": (list[s.Kind],),
        "arena entry list": (list[s.EntryRow],),
        "arena entry show": (s.EntryDetail,),
        "arena motion list": (list[s.MotionRow],),
        "arena motion show": (s.MotionDetail,),
        "arena import": (r.ImportReport,),
        "arena match list": (list[s.MatchRow],),
        "arena match show": (s.MatchJson, s.MatchJson, s.MatchJson, s.MatchJson),
        "arena match messages": (list[s.AgentMessage],),
        "arena schedule": (s.Schedule,),
        "arena check": (list[r.CheckRow],),
        "arena run": (r.RunResult, r.RunResult, r.RunResult, r.RunResult, r.RunResult, r.DryRun, r.UntilDryRun),
        "arena judge list": (list[s.JudgeRow],),
        "arena judge-bench": (f.JudgeBench, f.JudgeBench),
        "arena judge-attacks": (list[f.AttackRow], f.AttackPlan),
        "arena rate": (f.Ratings, f.Ratings),
        "Ratings over time": (list[f.Snapshot], list[f.Snapshot]),
        "arena ballots issue": (list[r.BallotLink],),
        "arena ballots status": (list[r.BallotStatus],),
        "arena debaters issue": (list[r.DebaterLink],),
        "arena debaters status": (list[r.DebaterStatus],),
        "arena stats agents": (list[f.AgentStats],),
        "arena stats bias": (list[f.BiasRow],),
        "arena stats judges": (f.StatsJudges,),
        "arena stats sides": (f.StatsSides,),
        "arena stats paper": (f.StatsPaper,),
    }


def typed_keys(shape: type) -> dict[str, tuple[Any, bool]]:
    """A TypedDict's keys → (the type of its value, whether the key is required)."""
    out = {}
    for key, hint in get_type_hints(shape, include_extras=True).items():
        # NotRequired as the hint says: __optional_keys__ misses it under `from __future__ import annotations`
        optional = get_origin(hint) is NotRequired
        out[key] = (get_args(hint)[0] if optional else hint, not optional)
    return out


def typed_dicts(value: Any, shape: Any, where: str) -> Iterator[tuple[type | None, Any, str]]:
    """Each object in value that shape says is a TypedDict, as (that TypedDict, the object, where it is); an object
    that shape says is none, or a list shape says is none, as (None, a problem, where it is)."""
    origin = get_origin(shape)
    if origin in (Union, types.UnionType):
        shapes = [a for a in get_args(shape) if a is not type(None)]
        if value is None:
            return
        if len(shapes) != 1:
            raise TypeError(f"{where}: {shape} is a union of {len(shapes)} shapes: which is an example's?")
        shape, origin = shapes[0], get_origin(shapes[0])
    if is_typeddict(shape):
        if not isinstance(value, dict):
            yield None, f"expected an object ({shape.__name__}), found {json.dumps(value)[:40]}", where
            return
        yield shape, value, where
        keys = typed_keys(shape)
        for key, inner in value.items():
            if key in keys:
                yield from typed_dicts(inner, keys[key][0], f"{where}.{key}")
    elif origin is list:
        if not isinstance(value, list):
            yield None, f"expected a list, found {json.dumps(value)[:40]}", where
            return
        for k, item in enumerate(value):
            yield from typed_dicts(item, get_args(shape)[0], f"{where}[{k}]")
    elif origin is dict and isinstance(value, dict):  # keyed by data (roles, groups, labels): each value its shape
        for key, inner in value.items():
            yield from typed_dicts(inner, get_args(shape)[1], f"{where}.{key}")


def json_sections(text: str) -> dict[str, list[str]]:
    """json.md's sections (each from its heading to the next), by title without backticks: their ```json
    examples."""
    sections: dict[str, list[str]] = {}
    current, fenced = None, False
    lines = text.splitlines()
    for k, line in enumerate(lines):
        if line.startswith("```"):
            if not fenced and line.strip() == "```json" and current is not None:
                end = next(j for j in range(k + 1, len(lines)) if lines[j].startswith("```"))
                sections[current].append("\n".join(lines[k + 1:end]))
            fenced = not fenced
        elif not fenced and (heading := re.match(r"#+\s+(.+)", line)):
            current = heading.group(1).replace("`", "").strip()
            sections[current] = []
    return sections


def json_shape_problems(text: str, shapes: dict[str, tuple[Any, ...]] | None = None) -> list[str]:
    """Where json.md's examples and their shapes (json_shapes) disagree: a section or example missing, an
    example that is not its shape's structure, a key an example shows that its TypedDict lacks, or a key of a
    TypedDict that none of the section's examples shows."""
    problems = []
    sections = json_sections(text)
    for title, expected in (json_shapes() if shapes is None else shapes).items():
        examples = sections.get(title)
        if examples is None:
            problems.append(f"json.md has no section `{title}`")
            continue
        if len(examples) != len(expected):
            problems.append(f"json.md `{title}`: {len(examples)} JSON examples, json_shapes names {len(expected)}")
            continue
        shown: dict[type, set[str]] = {}
        for k, (example, shape) in enumerate(zip(examples, expected), start=1):
            for found, value, where in typed_dicts(json.loads(example), shape, f"example {k}"):
                if found is None:
                    problems.append(f"json.md `{title}`, {where}: {value}")
                    continue
                keys = typed_keys(found)
                problems += [f"json.md `{title}`, {where}: `{key}` is no key of {found.__name__}"
                             for key in value if key not in keys]
                shown.setdefault(found, set()).update(value)
        for found, seen in shown.items():
            problems += [f"json.md `{title}`: no example shows `{key}` of {found.__name__}"
                         for key in typed_keys(found) if key not in seen]
    return problems


# --- the pages -----------------------------------------------------------------------------------

def render(key: str, old_body: str, commands: dict) -> str:
    """The body of one region."""
    words = key.split()
    if words[0] == "cli":
        path = tuple(words[2:])
        if path not in commands:
            raise SystemExit(f"docs: `{' '.join(words[1:])}` is no command: remove its section from the page")
        cmd, ctx = commands[path]
        return command_region(cmd, ctx, old_body)
    if words[0] == "config":
        return config_region(words[1], old_body)
    if words[0] == "kind":
        return kind_region(words[1], words[2])
    if key == "template":
        return template_region()
    if key == "modules":
        return modules_region()
    if key == "api":
        return api_region()
    if words[0] == "example":
        return example_region(words[1])
    raise SystemExit(f"docs: unknown generated region {key!r}")


def regenerate(path: Path, text: str, tree) -> str:
    """A page with every region rewritten."""
    if path == CLI_PAGE:
        text = place_new_commands(text, tree)
    commands = {p: (cmd, ctx) for p, cmd, ctx in tree}
    return REGION.sub(lambda m: f"<!-- generated:{m.group('key')} -->\n{render(m.group('key'), m.group('body'), commands)}"
                                "<!-- /generated -->", text)


def main(argv: list[str]) -> int:
    sys.path.insert(0, str(ROOT))
    check = "--check" in argv
    tree = command_tree()
    stale = []
    for path in sorted(DOCS.rglob("*.md")):
        text = path.read_text(encoding="utf-8")
        new = regenerate(path, text, tree)
        if new != text:
            stale.append(path.relative_to(ROOT).as_posix())
            if not check:
                path.write_text(new, encoding="utf-8")
    if check and stale:
        print(f"docs are stale: {', '.join(stale)}; run `python docs/gen.py`", file=sys.stderr)
        return 1
    if not check:
        print(f"rewrote {len(stale)} page(s)" + (f": {', '.join(stale)}" if stale else ""))
    problems = json_shape_problems(JSON_PAGE.read_text(encoding="utf-8"))
    if problems:  # the examples are hand-written: no rewrite mends them
        print("\n".join(["the JSON examples disagree with their shapes (json_shapes):", *problems]), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
