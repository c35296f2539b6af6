"""docs/reference/ is the user-facing contract; these tests keep it true to the code.

The reference is four pages: cli.md (the commands), config.md, formats.md and json.md (what commands
print with --format json, headed by command like cli.md), with index.md before them. Each page is parsed into sections by heading (outside code fences). A command's section is
headed by its path alone, e.g. "### `arena entry add`", and runs to the next heading of the same
or a higher level, or to the next command heading. Every check of a command looks only inside
its own section, so an option documented under another command does not count.

Checked against the click group itself (no subprocesses): every command and subcommand has one
section with its exact usage line, a table row per option (long and short flags, choices,
default, required) and per argument, and no row for an option or argument it does not have;
every command heading, usage line and `arena ...` code span names a real command (the
"Planned" section names only commands that do not exist yet). Checked against arena.workspace.config:
every [section] key and [[entries]]/[[judges]] key has a row (and no invented key does), with
the right default. Checked against `arena kinds`: the generated tables of built-in kinds. Checked
against the command functions on a small offline workspace: every key of the JSON they return
appears in the section of the command that prints it, and what they return has the shape (the
TypedDict) they are annotated with. Checked against those TypedDicts (docs/gen.py's json_shapes):
the keys json.md's examples show of each shape are exactly its keys.
"""
from __future__ import annotations

import importlib
import importlib.util
import json
import re
import tomllib
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Mapping, TypedDict, get_type_hints

import click
import pytest

from arena.workspace import config as arena_config
from arena.app.cli import main
from arena.domain.records import Brief, Budget, Motion
from arena.workspace.folder import template
from debaters.registry import DEBATERS
from judges.registry import JUDGES
from tests.support import helpers
from tests.support.lechmazur_checkout import tournament, write_checkout

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / "docs" / "reference"
PAGE_NAMES = ("index.md", "cli.md", "config.md", "formats.md", "json.md")

HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
COMMAND_WORD = r"[a-z][a-z0-9-]*"
COMMAND_TITLE = re.compile(rf"arena(?: {COMMAND_WORD})*")
FLAG = re.compile(r"(?<![\w-])(--?[A-Za-z][\w-]*)")
CODE_SPAN = re.compile(r"`([^`]+)`")
PLANNED = "Planned (not yet available)"
KIND_TITLE = re.compile(r"(debater|judge|importer) kind `([^`]+)`")


# --- the document ------------------------------------------------------------------------------

@dataclass(frozen=True)
class Table:
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]


@dataclass(frozen=True)
class Section:
    level: int
    title: str
    line: int  # of the heading, from 1
    lines: tuple[str, ...]  # the body, heading excluded
    fenced: tuple[bool, ...]  # per body line: inside a code fence

    @property
    def command(self) -> tuple[str, ...] | None:
        return command_path(self.title)

    @property
    def text(self) -> str:
        return "\n".join(self.lines)

    def tables(self) -> list[Table]:
        tables, current = [], []
        for line, fenced in [*zip(self.lines, self.fenced), ("", False)]:
            if not fenced and line.lstrip().startswith("|"):
                current.append(_cells(line))
                continue
            if current:
                body = tuple(r for r in current[1:] if not all(re.fullmatch(r":?-{3,}:?", c) for c in r))
                tables.append(Table(current[0], body))
                current = []
        return tables

    def rows(self, header: str) -> list[tuple[str, ...]]:
        """The rows of this section's tables whose first column is headed `header`."""
        return [row for t in self.tables() if t.header and t.header[0] == header for row in t.rows]


def _cells(line: str) -> tuple[str, ...]:
    return tuple(c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1])


def command_path(title: str) -> tuple[str, ...] | None:
    """("entry", "add") for a heading "`arena entry add`"; None for a heading that is no command path."""
    plain = title.replace("`", "").strip()
    return tuple(plain.split()[1:]) if COMMAND_TITLE.fullmatch(plain) else None


def parse(text: str) -> list[Section]:
    lines = text.splitlines()
    fenced, inside = [], False
    for line in lines:
        if line.lstrip().startswith("```"):
            inside = not inside
            fenced.append(True)
        else:
            fenced.append(inside)
    heads = [(i, len(m.group(1)), m.group(2)) for i, line in enumerate(lines)
             if not fenced[i] and (m := HEADING.match(line))]
    sections = []
    for k, (i, level, title) in enumerate(heads):
        is_command = command_path(title) is not None
        end = next((j for j, lvl, t in heads[k + 1:] if lvl <= level or (is_command and command_path(t) is not None)),
                   len(lines))
        sections.append(Section(level, title, i + 1, tuple(lines[i + 1:end]), tuple(fenced[i + 1:end])))
    return sections


PAGES = {name: (REFERENCE / name).read_text(encoding="utf-8") for name in PAGE_NAMES}
PAGE_SECTIONS = {name: parse(text) for name, text in PAGES.items()}
# Every page but json.md, whose headings repeat the command line's.
SECTIONS = [s for name, sections in PAGE_SECTIONS.items() if name != "json.md" for s in sections]
CONFIG = "docs/reference/config.md"
DOC = "\n".join(PAGES.values())  # for facts that may be on any page


def _gen():
    spec = importlib.util.spec_from_file_location("docs_gen", ROOT / "docs" / "gen.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


gen = _gen()  # docs/gen.py: json.md's examples against the TypedDicts of what commands return


def where_is(section: Section) -> str:
    """The page and line of a section, e.g. docs/reference/cli.md:12."""
    page = next(n for n, sections in PAGE_SECTIONS.items() if any(s is section for s in sections))
    return f"docs/reference/{page}:{section.line}"


def section_titled(title: str) -> Section:
    found = [s for s in SECTIONS if s.title.replace("`", "").strip() == title]
    assert len(found) == 1, f"docs/reference: expected one section headed {title!r}, found {len(found)}"
    return found[0]


# --- the command line --------------------------------------------------------------------------

def _walk(cmd: click.Command, ctx: click.Context, path: tuple[str, ...]):
    yield path, cmd, ctx
    if isinstance(cmd, click.Group):
        for name in cmd.list_commands(ctx):
            sub = cmd.get_command(ctx, name)
            if sub is not None and not sub.hidden:
                yield from _walk(sub, click.Context(sub, info_name=name, parent=ctx), (*path, name))


COMMANDS: dict[tuple[str, ...], tuple[click.Command, click.Context]] = {
    path: (cmd, ctx) for path, cmd, ctx in _walk(main, click.Context(main, info_name="arena"), ())}
PATHS = sorted(COMMANDS)


def name(path: tuple[str, ...]) -> str:
    return " ".join(("arena", *path))


def command_section(path: tuple[str, ...], page: str = "cli.md") -> Section:
    found = [s for s in PAGE_SECTIONS[page] if s.command == path]
    assert len(found) == 1, f"docs/reference/{page}: expected one section headed `{name(path)}`, found {len(found)}"
    return found[0]


def resolve(words: list[str]) -> tuple[str, ...] | None:
    """The command that `arena WORDS...` runs (later words are its arguments); None when a group lacks one."""
    cmd, path = main, ()
    for word in words:
        if not isinstance(cmd, click.Group):
            break
        if (path := (*path, word)) not in COMMANDS:
            return None
        cmd = COMMANDS[path][0]
    return path


def _options(cmd: click.Command) -> list[click.Option]:
    return [p for p in cmd.params if isinstance(p, click.Option) and not p.hidden]


def _arguments(cmd: click.Command) -> list[click.Argument]:
    return [p for p in cmd.params if isinstance(p, click.Argument)]


def _plain(default) -> bool:
    """Whether a parameter's default is a plain value the document must state (not none, unset or computed)."""
    return isinstance(default, (str, int, float, Path)) and not isinstance(default, bool)


def _has_flag(cell: str, flag: str) -> bool:
    return flag in FLAG.findall(cell)


# --- every command, in its own section ---------------------------------------------------------

def test_the_walk_finds_the_whole_command_line():
    assert {(), ("run",), ("entry", "add"), ("stats", "judges"), ("judge-bench",)} <= set(PATHS)


@pytest.mark.parametrize("path", PATHS, ids=name)
def test_each_command_has_one_section_with_its_usage_line(path):
    cmd, ctx = COMMANDS[path]
    usage = " ".join(cmd.get_usage(ctx).split())
    section = command_section(path)
    assert usage in [" ".join(line.split()) for line in section.lines], \
        f"{where_is(section)}: section `{name(path)}` lacks its usage line {usage!r}"


@pytest.mark.parametrize("path", PATHS, ids=name)
def test_each_option_has_a_row_in_its_commands_section(path):
    cmd, _ = COMMANDS[path]
    section = command_section(path)
    rows = section.rows("option")
    where = f"{where_is(section)}: section `{name(path)}`"
    for option in _options(cmd):
        flags = [*option.opts, *option.secondary_opts]
        longs = [f for f in flags if f.startswith("--")]
        row = next((r for r in rows if any(_has_flag(r[0], f) for f in longs)), None)
        assert row is not None, f"{where} has no option row for {' / '.join(longs)}"
        for flag in flags:
            assert _has_flag(row[0], flag), f"{where}: the row of {longs[0]} does not name {flag}"
        if isinstance(option.type, click.Choice):
            for choice in option.type.choices:
                assert choice in row[0], f"{where}: the row of {longs[0]} does not list the choice {choice!r}"
        if option.required:
            assert "required" in row[1], f"{where}: the row of {longs[0]} does not say it is required"
        elif not option.is_flag and _plain(option.default):
            assert str(option.default) in row[1], \
                f"{where}: the row of {longs[0]} gives default {row[1]!r}, not {option.default}"


@pytest.mark.parametrize("path", PATHS, ids=name)
def test_each_argument_has_a_row_in_its_commands_section(path):
    cmd, _ = COMMANDS[path]
    section = command_section(path)
    rows = section.rows("argument")
    where = f"{where_is(section)}: section `{name(path)}`"
    for argument in _arguments(cmd):
        metavar = argument.human_readable_name
        row = next((r for r in rows if metavar in CODE_SPAN.findall(r[0])), None)
        assert row is not None, f"{where} has no argument row for {metavar}"
        if argument.required:
            assert "required" in row[1], f"{where}: the row of {metavar} does not say it is required"
        elif _plain(argument.default):
            assert str(argument.default) in row[1], \
                f"{where}: the row of {metavar} gives default {row[1]!r}, not {argument.default}"


@pytest.mark.parametrize("path", PATHS, ids=name)
def test_no_section_documents_an_option_or_argument_its_command_lacks(path):
    cmd, _ = COMMANDS[path]
    section = command_section(path)
    where = f"{where_is(section)}: section `{name(path)}`"
    real = {f for o in _options(cmd) for f in (*o.opts, *o.secondary_opts)} | {"-h", "--help"}
    for row in section.rows("option"):
        for flag in FLAG.findall(row[0]):
            assert flag in real, f"{where} documents {flag}, which `{name(path)}` does not have"
    arguments = {a.human_readable_name for a in _arguments(cmd)}
    for row in section.rows("argument"):
        for span in CODE_SPAN.findall(row[0]):
            assert span in arguments, f"{where} documents argument {span}, which `{name(path)}` does not have"


def test_every_command_heading_names_a_real_command():
    for s in (s for sections in PAGE_SECTIONS.values() for s in sections):
        plain = s.title.replace("`", "").strip()
        if KIND_TITLE.fullmatch(s.title):
            continue  # a kind's section, such as importer kind `arena`
        if re.search(r"(?<![\w.-])arena(?=\s|$)", plain):
            assert s.command is not None, \
                f"{where_is(s)}: heading {s.title!r} mentions a command but is not a command path alone"
            assert s.command in COMMANDS, f"{where_is(s)}: `{name(s.command)}` is not a command"


def lines_of_the_docs():
    """(page, line number, line) of every page of the docs site, the guides and README.md included."""
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            yield path.relative_to(ROOT).as_posix(), number, line


def test_every_usage_line_names_a_real_command():
    for page, number, line in lines_of_the_docs():
        m = re.match(r"\s*Usage: arena\b(.*)", line)
        if m:
            words = re.match(rf"((?: {COMMAND_WORD})*)", m.group(1)).group(1).split()
            assert tuple(words) in COMMANDS, f"{page}:{number}: {line.strip()!r} is no command's usage"


def test_every_command_in_a_code_span_is_real_outside_the_planned_section():
    planned = section_titled(PLANNED)
    planned_lines = {("docs/reference/index.md", n) for n in range(planned.line, planned.line + len(planned.lines) + 1)}
    for page, number, line in lines_of_the_docs():
        for span in CODE_SPAN.findall(line):
            m = re.match(rf"arena((?: {COMMAND_WORD})+)", span)
            if not m:
                continue
            words = m.group(1).split()
            if (page, number) in planned_lines:
                assert resolve(words) is None or resolve(words) != tuple(words), \
                    f"{page}:{number}: `{span}` exists now; move it out of '{PLANNED}'"
            else:
                assert resolve(words) is not None, f"{page}:{number}: `{span}` names no command"


def test_every_python_name_and_source_file_the_document_cites_exists():
    for page, number, line in lines_of_the_docs():
        for span in CODE_SPAN.findall(line):
            if re.fullmatch(r"arena(\.\w+){2,}", span):  # arena.app.commands.run, not arena.toml
                module, attribute = span, []
                while True:
                    try:
                        found = importlib.import_module(module)
                        break
                    except ModuleNotFoundError:
                        module, _, last = module.rpartition(".")
                        attribute.insert(0, last)
                for part in attribute:
                    assert hasattr(found, part), f"{page}:{number}: `{span}` does not exist"
                    found = getattr(found, part)
            elif re.fullmatch(r"[\w/]+\.py", span):
                assert (ROOT / span).is_file(), f"{page}:{number}: `{span}` is no file of the repository"


@pytest.mark.parametrize("page", PAGE_NAMES)
def test_every_json_example_is_json(page):
    text = PAGES[page]
    for m in re.finditer(r"```json\n(.*?)```", text, re.S):
        try:
            json.loads(m.group(1))
        except json.JSONDecodeError as exc:
            raise AssertionError(f"docs/reference/{page}:{text[:m.start()].count(chr(10)) + 2}: not JSON: {exc}") from None


# --- arena.toml --------------------------------------------------------------------------------

CONFIG_TABLES = {(f"[[{name}]]" if required else f"[{name}]"): (spec, defaults)
                 for name, (spec, defaults, required) in arena_config.tables().items()}


def test_config_tables_pair_sections_with_their_settings():
    assert list(arena_config._SECTIONS) == ["arena", "llm", "search", "motions", "rating", "site", "people"]
    for title, (spec, defaults) in CONFIG_TABLES.items():
        if not title.startswith("[["):
            assert set(spec) == set(defaults), title


def test_every_config_key_is_in_the_document():
    keys = {key for spec in (*arena_config._SECTIONS.values(), arena_config._ENTRY, arena_config._JUDGE) for key in spec}
    missing = sorted(key for key in keys if f"`{key}`" not in PAGES["config.md"])
    assert not missing, f"{CONFIG} does not mention arena.toml keys {missing}"


def _toml_value(cell: str):
    spans = CODE_SPAN.findall(cell)
    if not spans:
        return None, False
    try:
        return tomllib.loads(f"v = {spans[0]}")["v"], True
    except tomllib.TOMLDecodeError:
        return None, False


def _same(documented, actual) -> bool:
    """A documented TOML default equals the code's (a tuple is an array; 120 is 120.0; true is not 1)."""
    if isinstance(actual, tuple):
        actual = list(actual)
    elif isinstance(actual, Mapping):
        actual = dict(actual)
    if isinstance(actual, bool) or isinstance(documented, bool):
        return type(documented) is type(actual) and documented == actual
    return documented == actual


@pytest.mark.parametrize("title", list(CONFIG_TABLES))
def test_each_config_table_documents_exactly_its_keys_with_their_defaults(title):
    spec, defaults = CONFIG_TABLES[title]
    section = section_titled(title)
    where = f"{where_is(section)}: section `{title}`"
    rows = {CODE_SPAN.findall(r[0])[0]: r for r in section.rows("key") if CODE_SPAN.findall(r[0])}
    assert set(rows) == set(spec), \
        f"{where}: documented keys {sorted(rows)} are not the code's {sorted(spec)}"
    required = arena_config._REQUIRED.get(title.strip("[]"), ())
    for key, row in rows.items():
        default_cell = row[2]
        if key in required:
            assert "required" in default_cell, f"{where}: {key} is required"
            continue
        value, literal = _toml_value(default_cell)
        if title.startswith("[["):
            if not literal:  # e.g. runs: `[arena] judge_runs`
                continue
        else:
            assert literal, f"{where}: the default of {key} ({default_cell!r}) is not a TOML value in backticks"
        assert _same(value, defaults[key]), f"{where}: {key} defaults to {defaults[key]!r}, not {default_cell}"


def test_the_template_arena_init_writes_is_in_the_document():
    shown = template(sorted(DEBATERS.builtins), sorted(JUDGES.builtins))  # `arena init`'s, no plug-in installed
    assert shown.strip() in PAGES["config.md"], f"{CONFIG} does not show the template `arena init` writes as it is"


# --- kinds -------------------------------------------------------------------------------------

def test_the_kind_tables_are_arena_kinds_of_the_built_in_kinds():
    from arena.app.commands import kinds

    built_in = {(k["family"], k["kind"]): k["params"] for k in kinds() if k["source"] == "built-in"}
    documented = {}
    for s in SECTIONS:
        m = KIND_TITLE.fullmatch(s.title)
        if m:
            documented[(m.group(1), m.group(2))] = s
    assert set(documented) == set(built_in), \
        f"docs/reference kind sections {sorted(documented)} are not the built-in kinds {sorted(built_in)}"
    for key, section in documented.items():
        where = f"{where_is(section)}: {key[0]} kind {key[1]}"
        rows = [(CODE_SPAN.findall(r[0])[0], r) for r in section.rows("param")]
        assert [n for n, _ in rows] == [p["name"] for p in built_in[key]], f"{where}: params differ from arena kinds"
        for (param, row), p in zip(rows, built_in[key]):
            assert row[1] == f"`{json.dumps(p['default'], ensure_ascii=False)}`", f"{where}: default of {param}"


# --- JSON shapes -------------------------------------------------------------------------------

# Keys whose values are keyed by data (roles, groups, labels, dimension names), not by the schema.
_DATA_KEYED = {"agents": "values", "by": "values", "confusion": "skip", "dimensions": "skip", "params": "skip"}


def json_keys(value, out: set[str] | None = None) -> set[str]:
    out = set() if out is None else out
    if isinstance(value, dict):
        for key, inner in value.items():
            out.add(key)
            how = _DATA_KEYED.get(key)
            if how == "values" and isinstance(inner, dict):
                for v in inner.values():
                    json_keys(v, out)
            elif how is None:
                json_keys(inner, out)
    elif isinstance(value, (list, tuple)):
        for item in value:
            json_keys(item, out)
    return out


WORKSPACE = dict(arena={"seed": 0, "judge_runs": 1}, entries=[helpers.entry("a", strength=0.5), helpers.entry("b")],
                 judges=[helpers.judge("j1"), helpers.judge("j2"),
                         helpers.people("people", "ann", "bo", model="offline/people")])


@pytest.fixture(scope="module")
def printed(tmp_path_factory) -> dict[tuple[str, ...], list]:
    """What each command that prints JSON returns, on a small offline workspace, by command path."""
    from arena.app import commands as app
    from arena.app.people import ballot_links as people

    root = helpers.new_workspace(tmp_path_factory.mktemp("reference") / "ws", **WORKSPACE)
    bench = root / "bench.jsonl"
    bench.write_text(json.dumps({"id": "d1", "motion": "Cats are better than dogs", "label": "pro",
                                 "speeches": [{"side": "pro", "text": "Calm."}, {"side": "con", "text": "Loyal."}]})
                     + "\n", encoding="utf-8")
    quiet = lambda line: None  # noqa: E731
    ws = app.open_workspace(root)
    try:
        played = app.play_one(ws, "en-fact-001", "a", "b", progress=quiet)
        app.schedule(ws, "round-robin")
        dry = app.dry_run(ws)
        ran = app.run(ws, concurrency=2, progress=quiet)
        people.simulate(ws, "people")
        printed = {
            ("kinds",): [app.kinds()],
            ("check",): [app.check(ws)],  # offline models: usable without a probe
            ("entry", "list"): [app.entry_list(ws)],
            ("entry", "show"): [app.entry_show(ws, "a")],
            ("motion", "list"): [app.motion_list(ws)],
            ("motion", "show"): [app.motion_show(ws, "en-fact-001")],
            ("match", "list"): [app.match_list(ws)],
            ("match", "show"): [app.match_show(ws, played.id)],
            ("match", "messages"): [app.match_messages(ws, played.id)],
            ("schedule",): [app.schedule_show(ws)],
            ("run",): [dry, ran],
            ("judge", "list"): [app.judge_list(ws)],
            ("judge-bench",): [app.judge_bench(ws, bench, "j1", progress=quiet)],
            # Before the stats: `arena stats judges` then gives j1's last attack run too.
            ("judge-attacks",): [app.judge_attacks(ws, "j1", matches=2, progress=quiet),
                                 app.judge_attacks_plan(ws, "j1", matches=2)],
            ("rate",): [app.rate(ws, bootstrap=0, by="category"), app.rate_history(ws, ci="sandwich")],
            ("stats", "agents"): [app.stats_agents(ws)],
            ("stats", "judges"): [app.stats_judges(ws)],
            ("stats", "bias"): [app.stats_bias(ws)],
            ("ballots", "issue"): [people.issue(ws, "people")],
            ("ballots", "status"): [people.status(ws)],
            ("stats", "sides"): [app.stats_sides(ws)],
            ("stats", "paper"): [app.stats_paper(ws)],
            ("import",): [app.import_debates(ws, "lechmazur", write_checkout(root.parent / "lech", tournament()))],
        }
        # A match being played: claimed, its writer's call in flight (in the ledger as sent).
        from arena.match.claims import Holder
        from arena.store import IN_FLIGHT

        running = app.schedule(ws, "random", matches=1).match_ids[0]
        ws.store.claim_match(Holder.here(), only=running)
        ws.store.record_call(kind="llm", model="offline/x", latency_s=0.0, cache_hit=False, simulated=True,
                             match_id=running, role="writer", stage="constructive", side="pro", error=IN_FLIGHT)
        printed[("match", "show")].append(app.match_show(ws, running))
        # Last, so that nothing above sees it: a match parked at a's turn, a now a person who debates on the web.
        parked = app.schedule(ws, "random", matches=1).match_ids[0]
        shown = Brief(Motion("m1", "Cities should ban cars", "policy"), "agent4debate", "Constructive", "", (1, 6), "en",
                      Budget(450, "words"))
        ws.store.open_turn(parked, "constructive", "pro", ws.store.pairing(parked)[1], shown, "2100-01-01T00:00:00+00:00")
        ws.store.park_match(parked)
        ws.config = replace(ws.config, entries=tuple(replace(e, debater="human", params={"via": "web"})
                                                     if e.name == "a" else e for e in ws.config.entries))
        printed[("match", "show")].append(app.match_show(ws, parked))
        printed[("debaters", "issue")] = [app.debaters_issue(ws)]
        printed[("debaters", "status")] = [app.debaters_status(ws)]
        printed[("debaters", "extend")] = [app.debaters_extend(ws, "a", 1.5)]
        return printed
    finally:
        ws.close()


def test_the_json_fixture_covers_every_command_with_a_json_format(printed):
    with_json = {path for path, (cmd, _) in COMMANDS.items()
                 if any(isinstance(o.type, click.Choice) and "json" in o.type.choices for o in _options(cmd))}
    assert with_json <= set(printed), f"add {sorted(with_json - set(printed))} to the printed fixture"


# The facade function behind each value of the printed fixture, in its order: what it is annotated to return.
RETURNS = {("kinds",): ["kinds"], ("check",): ["check"], ("entry", "list"): ["entry_list"],
           ("entry", "show"): ["entry_show"], ("motion", "list"): ["motion_list"], ("motion", "show"): ["motion_show"],
           ("match", "list"): ["match_list"], ("match", "show"): ["match_show", "match_show", "match_show"],
           ("match", "messages"): ["match_messages"], ("schedule",): ["schedule_show"], ("run",): ["dry_run", "run"],
           ("judge", "list"): ["judge_list"], ("judge-bench",): ["judge_bench"],
           ("judge-attacks",): ["judge_attacks", "judge_attacks_plan"], ("rate",): ["rate", "rate_history"],
           ("stats", "agents"): ["stats_agents"], ("stats", "judges"): ["stats_judges"],
           ("stats", "bias"): ["stats_bias"], ("ballots", "issue"): ["ballots_issue"],
           ("ballots", "status"): ["ballots_status"], ("stats", "sides"): ["stats_sides"],
           ("stats", "paper"): ["stats_paper"], ("import",): ["import_debates"],
           ("debaters", "issue"): ["debaters_issue"], ("debaters", "status"): ["debaters_status"],
           ("debaters", "extend"): ["debaters_extend"]}


def test_what_each_command_returns_has_the_shape_it_is_annotated_with(printed):
    # The rating code and arena.analysis.stats build plain dicts, which the facade casts to its TypedDicts: here they meet.
    from arena.app import commands

    assert set(RETURNS) == set(printed)
    problems = []
    for path, names in RETURNS.items():
        for name, value in zip(names, printed[path], strict=True):
            shape = get_type_hints(getattr(commands, name))["return"]
            for found, obj, where in gen.typed_dicts(value, shape, name):
                if found is None:
                    problems.append(f"{where}: {obj}")
                    continue
                keys = gen.typed_keys(found)
                problems += [f"{where}: {found.__name__} has no key `{k}`" for k in obj if k not in keys]
                problems += [f"{where}: no `{k}` of {found.__name__}" for k, (_, required) in keys.items()
                             if required and k not in obj]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("path", [("kinds",), ("check",), ("entry", "list"), ("entry", "show"), ("motion", "list"),
                                  ("motion", "show"), ("match", "list"), ("match", "show"), ("schedule",),
                                  ("run",), ("judge-bench",), ("judge-attacks",), ("rate",), ("stats", "agents"),
                                  ("stats", "judges"), ("stats", "bias"), ("stats", "sides"), ("stats", "paper"),
                                  ("import",), ("debaters", "issue"), ("debaters", "status")], ids=name)
def test_each_json_key_is_documented_in_its_commands_section(printed, path):
    section = command_section(path, "json.md")
    keys = set().union(*(json_keys(value) for value in printed[path]))
    assert keys, f"no JSON from `{name(path)}`"
    missing = sorted(k for k in keys if f'"{k}"' not in section.text)
    assert not missing, f"{where_is(section)}: section `{name(path)}` lacks JSON keys {missing}"


def test_the_json_examples_show_exactly_the_keys_of_their_shapes():
    problems = gen.json_shape_problems(PAGES["json.md"])
    assert not problems, "\n".join(["docs/reference/json.md (shapes: docs/gen.py's json_shapes):", *problems])


# --- the checks can fail -----------------------------------------------------------------------

def test_a_key_renamed_in_an_example_or_in_its_shape_fails_the_json_shapes_check():
    from arena.app.shapes.records import EntryRow

    section = PAGES["json.md"].index("### `arena entry list`")
    renamed_in_doc = (PAGES["json.md"][:section]
                      + PAGES["json.md"][section:].replace('"forfeits": 0', '"forfeit_count": 0', 1))
    assert gen.json_shape_problems(renamed_in_doc) == [
        "json.md `arena entry list`, example 1[0]: `forfeit_count` is no key of EntryRow",
        "json.md `arena entry list`: no example shows `forfeits` of EntryRow"]

    hints = get_type_hints(EntryRow, include_extras=True)  # strength stays NotRequired
    Renamed = TypedDict("Renamed", {**{k: v for k, v in hints.items() if k != "name"}, "nmae": str})
    assert gen.json_shape_problems(PAGES["json.md"], {"arena entry list": (list[Renamed],)}) == [
        "json.md `arena entry list`, example 1[0]: `name` is no key of Renamed",
        "json.md `arena entry list`: no example shows `nmae` of Renamed"]


def test_the_parser_scopes_options_to_their_own_section():
    doc = "\n".join([
        "## `arena run`", "```", "Usage: arena run [OPTIONS]", "```",
        "| option | default | meaning |", "| --- | --- | --- |", "| `--dry-run` | off | x |",
        "## `arena judge`", "| option | default | meaning |", "| --- | --- | --- |",
        "| `--concurrency INTEGER` | `4` | x |",
    ])
    run, judge = parse(doc)
    assert run.command == ("run",) and judge.command == ("judge",)
    assert [r[0] for r in run.rows("option")] == ["`--dry-run`"]  # --concurrency is judge's, not run's
    assert "Usage: arena run [OPTIONS]" in run.lines
    assert command_path("`arena.toml`") is None and command_path("Exit codes") is None
