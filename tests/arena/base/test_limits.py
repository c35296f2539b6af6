"""Bounded inputs (issue 24): every number, file and structure a user gives has a limit (arena.base.limits); past it
a command exits 2 naming the file and line, the key or the option, and writes nothing. Bombs are refused as
the parser meets them, so none of these tests takes long. And opening a workspace reads no motion file whose
bytes the database already holds."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from arena.base import limits
from arena.app import commands as app
from arena.base.errors import UserError
from judges.bench import load_dataset
from tests.support.helpers import (TWO_OFFLINE, assert_user_error, entry, invoke, judge, new_workspace, people, snapshot,
                           workspace_toml)

RESULTS = "match_id,entry_a,entry_b,score_a,score_b\nm1,a,b,2,1\nm2,a,b,1,2\nm3,b,a,3,0\n"


def line_of(text: str, fragment: str) -> int:
    return next(k for k, row in enumerate(text.splitlines(), start=1) if fragment in row)


@pytest.fixture
def ws(builds, tmp_path) -> Path:
    """The test's own copy of build_ws's workspace (made once per test process)."""
    return builds.copy("limits:ws", build_ws, tmp_path / "ws").path


def build_ws(path: Path) -> None:
    """Two simulated entries on the built-in motions, opened once: a refused command must leave it as it is."""
    new_workspace(path, motions=["builtin:en"], entries=TWO_OFFLINE, judges=[judge("j")], opened=True)


def refused(ws: Path, *args, fragments=()) -> None:
    """`arena ARGS -w ws` exits 2 naming every fragment, and the workspace's files are byte for byte as before."""
    before = snapshot(ws)
    assert_user_error(invoke(*args, "-w", ws), *fragments)
    assert snapshot(ws) == before


# --- arena.toml ---------------------------------------------------------------------------------------------

BAD_SETTINGS = [
    pytest.param({"arena": {"judge_runs": 1_000_000_000}}, "judge_runs =", "arena.judge_runs", "at most 100",
                 id="judge-runs"),
    pytest.param({"arena": {"seed": 99999999999999999999}}, "seed =", "arena.seed", "at most 9223372036854775807",
                 id="seed-past-int64"),
    pytest.param({"arena": {"seed": -1}}, "seed =", "arena.seed", "at least 0", id="seed-negative"),
    pytest.param({"arena": {"seed": True}}, "seed =", "arena.seed", "whole number", id="seed-bool"),
    pytest.param({"llm": {"backoff_s": float("inf")}}, "backoff_s =", "llm.backoff_s", "finite", id="backoff-inf"),
    pytest.param({"llm": {"timeout_s": float("inf")}}, "timeout_s =", "llm.timeout_s", "finite", id="timeout-inf"),
    pytest.param({"llm": {"retries": 1000}}, "retries =", "llm.retries", "at most 10", id="retries"),
    pytest.param({"llm": {"max_concurrency": 10**9}}, "max_concurrency =", "llm.max_concurrency", "at most 1000",
                 id="max-concurrency"),
    pytest.param({"llm": {"schema_retries": 1000}}, "schema_retries =", "llm.schema_retries", "at most 10",
                 id="schema-retries"),
]


@pytest.mark.parametrize("settings, line_text, key, fragment", BAD_SETTINGS)
def test_an_out_of_range_setting_exits_2_naming_its_line_and_key(ws, settings, line_text, key, fragment):
    text = workspace_toml(motions=["builtin:en"], entries=TWO_OFFLINE, judges=[judge("j")], **settings)
    (ws / "arena.toml").write_text(text, encoding="utf-8")
    refused(ws, "entry", "list", fragments=(f"arena.toml:{line_of(text, line_text)}: {key}", fragment))


BAD_TABLES = [
    pytest.param(dict(judges=[judge("j", runs=1000)]), "runs =", "judges[0].runs", "at most 100", id="runs"),
    pytest.param(dict(judges=[people("crowd", *(f"p{k}" for k in range(101)))]), "people =",
                 "judges[0].options.people", "101 people", id="people"),
    pytest.param(dict(entries=[entry("a", strength=1000.0), entry("b")]), "strength =", "entries[0].strength",
                 "at most 50", id="strength"),
    pytest.param(dict(entries=[entry("a", params={"temperature": float("nan")}), entry("b")]), "temperature =",
                 "entries[0].params.temperature", "finite", id="param-nan"),
    pytest.param(dict(entries=[entry("a"), entry("b")], judges=[judge("j", options={"temperature": float("-inf")})]),
                 "temperature =", "judges[0].options.temperature", "finite", id="option-inf"),
]


@pytest.mark.parametrize("tables, line_text, key, fragment", BAD_TABLES)
def test_an_out_of_range_entry_or_judge_key_exits_2_naming_its_line_and_key(ws, tables, line_text, key, fragment):
    text = workspace_toml(motions=["builtin:en"], **{"entries": TWO_OFFLINE, "judges": [judge("j")], **tables})
    (ws / "arena.toml").write_text(text, encoding="utf-8")
    refused(ws, "entry", "list", fragments=(f"arena.toml:{line_of(text, line_text)}: {key}", fragment))


def test_deeply_nested_toml_values_exit_2(ws):
    text = (ws / "arena.toml").read_text(encoding="utf-8")
    deep = text + "[entries.params]\nagents = " + "[" * 100_000 + "]" * 100_000 + "\n"
    (ws / "arena.toml").write_text(deep, encoding="utf-8")
    refused(ws, "entry", "list", fragments=("arena.toml", "nested more than 32 levels"))
    shallow = text + "[entries.params]\nagents = " + "[" * 40 + "]" * 40 + "\n"  # within tomllib's recursion
    (ws / "arena.toml").write_text(shallow, encoding="utf-8")
    refused(ws, "entry", "list", fragments=(f"arena.toml:{line_of(shallow, 'agents =')}: entries[1].params.agents",
                                            "nested more than 32 levels"))


def test_a_format_of_ten_thousand_turns_is_refused_in_a_line_that_counts_them(ws):
    turns = "".join(f'[[formats.turns]]\nstage = "s{k}"\nside = "pro"\ntitle = "T"\nwords = 10\n'
                    for k in range(10_000))
    (ws / "arena.toml").write_text((ws / "arena.toml").read_text(encoding="utf-8")
                                   + '\n[[formats]]\nname = "huge"\n' + turns, encoding="utf-8")
    result = invoke("entry", "list", "-w", ws)
    assert_user_error(result, f"formats[0].turns: expected a list of 1 to {limits.MAX_TURNS} turns",
                      "got a list of 10000 items")
    assert len(result.stderr) < 400  # 619 KB before: every turn shown


def test_an_arena_toml_past_its_size_exits_2_before_reading_it(ws):
    text = (ws / "arena.toml").read_text(encoding="utf-8")
    (ws / "arena.toml").write_text(text + "#" * limits.MAX_CONFIG_BYTES + "\n", encoding="utf-8")
    refused(ws, "entry", "list", fragments=("arena.toml", "at most 1,048,576 bytes"))


# --- command-line numbers ------------------------------------------------------------------------------------

BAD_OPTIONS = [
    pytest.param(("schedule", "--format", "random", "--matches", "1000000000"), "--matches", id="schedule-matches"),
    pytest.param(("schedule", "--format", "round-robin", "--rounds", "1000"), "--rounds", id="schedule-rounds"),
    pytest.param(("schedule", "--format", "random", "--matches", "2", "--seed", "-1"), "--seed", id="schedule-seed"),
    pytest.param(("run", "--budget", "nan"), "--budget", id="budget-nan"),
    pytest.param(("run", "--budget", "inf"), "--budget", id="budget-inf"),
    pytest.param(("run", "--budget", "-1"), "--budget", id="budget-negative"),
    pytest.param(("run", "--workers", "100000"), "--workers", id="workers"),
    pytest.param(("run", "--concurrency", "1000000000"), "--concurrency", id="run-concurrency"),
    pytest.param(("judge", "--concurrency", "1000000000"), "--concurrency", id="judge-concurrency"),
    pytest.param(("rate", "--seed", "-1"), "--seed", id="rate-seed-negative"),
    pytest.param(("rate", "--seed", str(2**63)), "--seed", id="rate-seed-past-int64"),
    pytest.param(("rate", "--bootstrap", "1000000000"), "--bootstrap", id="rate-bootstrap"),
]


@pytest.mark.parametrize("args, option", BAD_OPTIONS)
def test_an_out_of_range_option_exits_2_naming_it(ws, args, option):
    refused(ws, *args, fragments=(option,))


@pytest.mark.parametrize("option, value", [("--seed", "-1"), ("--bootstrap", "1000000000")])
def test_rate_of_a_results_file_bounds_its_numbers_too(tmp_path, option, value):
    results = tmp_path / "results.csv"
    results.write_text(RESULTS, encoding="utf-8")
    assert_user_error(invoke("rate", "--results", results, option, value), option)
    largest = invoke("rate", "--results", results, "--bootstrap", "20", "--seed", str(limits.MAX_SEED))
    assert largest.exit_code == 0, largest.output


@pytest.mark.parametrize("fmt, options, fragment", [
    ("random", {"matches": 10**9}, "--matches 1000000000"),
    ("round-robin", {"rounds": 101}, "--rounds 101"),
])
def test_the_python_api_refuses_a_plan_past_its_size_before_drawing_it(ws, fmt, options, fragment):
    opened = app.open_workspace(ws)
    try:
        with pytest.raises(UserError, match=fragment):
            app.schedule(opened, fmt, **options)
        assert opened.store.match_states() == []
    finally:
        opened.close()


# --- motion files --------------------------------------------------------------------------------------------

def merge_bomb(levels: int) -> str:
    """YAML of ten keys, then levels mappings each merging ten copies of the one before: 10**levels pairs."""
    lines = ["a0: &a0 {" + ", ".join(f"k{k}: {k}" for k in range(10)) + "}"]
    lines += [f"a{i}: &a{i} {{<<: [{', '.join([f'*a{i - 1}'] * 10)}]}}" for i in range(1, levels + 1)]
    return "\n".join(lines) + "\n"


def laughs(levels: int) -> str:
    """The billion laughs: lists of ten aliases of the list before."""
    lines = ["- &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    lines += [f"- &l{i} [{', '.join([f'*l{i - 1}'] * 10)}]" for i in range(1, levels + 1)]
    return "\n".join(lines) + "\n"


def motion(k: int, **keys) -> dict:
    return {"id": f"x-{k:05d}", "text": f"This house would test limit {k}", "category": "policy", **keys}


def jsonl(*items) -> str:
    return "".join((item if isinstance(item, str) else json.dumps(item)) + "\n" for item in items)


BAD_MOTION_FILES = [
    pytest.param("bomb.yaml", merge_bomb(9), ("bomb.yaml", "line 5", "more than 200,000 nodes"), id="merge-bomb"),
    pytest.param("laughs.yaml", laughs(9), ("laughs.yaml", "line 6", "more than 200,000 nodes"), id="laughs"),
    pytest.param("deep.yaml", "[" * 100_000 + "]" * 100_000 + "\n", ("deep.yaml", "line 1", "nested more than 32"),
                 id="deep-yaml"),
    pytest.param("self.yaml", "- &a [x, *a]\n", ("self.yaml", "line 1", "holds itself"), id="recursive-yaml"),
    pytest.param("dup.yaml", "- id: x-1\n  text: T\n  category: fact\n  text: U\n",
                 ("dup.yaml", "line 4", "key 'text' repeated (first on line 2)"), id="duplicate-key"),
    pytest.param("deep.jsonl", jsonl(motion(1), "[" * 100_000 + "]" * 100_000),
                 ("deep.jsonl", "line 2", "nested more than 32"), id="deep-jsonl"),
    pytest.param("long.jsonl", jsonl(motion(1), motion(2, text="word " * 1000)),
                 ("long.jsonl", "line 2", "'text' has 5,000 characters", "at most 4,000"), id="long-text"),
    pytest.param("slide.yaml", f"- id: x-1\n  text: T\n  category: fact\n  info_slide: {'s' * 4001}\n",
                 ("slide.yaml", "item 1 (line 4)", "'info_slide' has 4,001 characters"), id="long-slide"),
    pytest.param("many.jsonl", jsonl(*(motion(k) for k in range(limits.MAX_MOTIONS + 1))),
                 ("many.jsonl", "line 10001", "at most 10,000 motions"), id="too-many"),
    pytest.param("huge.jsonl", jsonl(motion(1, info_slide="s" * limits.MAX_MOTION_FILE_BYTES)),
                 ("huge.jsonl", "at most 8,388,608 bytes"), id="file-size"),
]


@pytest.mark.parametrize("name, text, fragments", BAD_MOTION_FILES)
def test_a_motion_file_past_a_limit_is_refused_on_import(ws, tmp_path, name, text, fragments):
    source = tmp_path / name
    source.write_text(text, encoding="utf-8")
    refused(ws, "motion", "import", source, fragments=fragments)


def test_aliases_and_merge_keys_within_the_limits_still_read(ws, tmp_path):
    source = tmp_path / "anchored.yaml"
    source.write_text("- &first {id: x-1, text: Cities should ban cars, category: policy}\n"
                      "- {<<: *first, id: x-2}\n", encoding="utf-8")
    assert invoke("motion", "import", source, "-w", ws).exit_code == 0
    listed = json.loads(invoke("motion", "list", "-w", ws, "--format", "json").output)
    assert [(m["id"], m["text"]) for m in listed[-2:]] == [("x-1", "Cities should ban cars"),
                                                          ("x-2", "Cities should ban cars")]


def test_a_configured_motion_file_past_its_size_refuses_every_command(tmp_path):
    path = new_workspace(tmp_path / "ws", motions=["builtin:en", "file:big.jsonl"], entries=TWO_OFFLINE, init=None)
    (path / "big.jsonl").write_text(jsonl(motion(1, info_slide="s" * limits.MAX_MOTION_FILE_BYTES)), encoding="utf-8")
    text = (path / "arena.toml").read_text(encoding="utf-8")
    assert_user_error(invoke("entry", "list", "-w", path),
                      f"arena.toml:{line_of(text, 'sets =')}: motions.sets", "big.jsonl", "8,388,608 bytes")
    assert sorted(p.name for p in path.iterdir()) == ["arena.toml", "big.jsonl"]  # no arena.db either


@pytest.mark.parametrize("layout", ["jsonl", "yaml"])
def test_judge_bench_datasets_are_bounded_too(tmp_path, layout):
    if layout == "jsonl":
        dataset = tmp_path / "bench.jsonl"
        dataset.write_text("[" * 100_000 + "]" * 100_000 + "\n", encoding="utf-8")
        fragments = (f"{dataset}:1", "nested more than 32")
    else:
        dataset = tmp_path / "bench"
        (dataset / "motions").mkdir(parents=True)
        (dataset / "speeches").mkdir()
        (dataset / "gold.csv").write_text("id,label\nd1,0\n", encoding="utf-8")
        (dataset / "motions" / "d1.yaml").write_text(merge_bomb(9), encoding="utf-8")
        (dataset / "speeches" / "d1.yaml").write_text("- {debater_name: pro, content: s}\n", encoding="utf-8")
        fragments = ("d1.yaml", "line 5", "more than 200,000 nodes")
    with pytest.raises(UserError) as info:
        load_dataset(dataset)
    assert all(f in str(info.value) for f in fragments), str(info.value)


def sparse(path: Path, size: int) -> Path:
    """A file of size bytes that takes no room on disk: only its size may refuse it, before any byte is read."""
    with path.open("wb") as f:
        f.truncate(size)
    return path


def test_data_files_past_their_size_are_refused_before_they_are_read(tmp_path):
    path = new_workspace(tmp_path / "ws", motions=["builtin:en"], entries=TWO_OFFLINE, judges=[people("crowd", "ann")],
                         opened=True)
    big = sparse(tmp_path / "big.csv", limits.MAX_DATA_FILE_BYTES + 1)
    assert_user_error(invoke("rate", "--results", big), "big.csv", "at most 67,108,864 bytes")
    refused(path, "ballots", "import", big, "--judge", "crowd", fragments=("big.csv", "at most 67,108,864 bytes"))
    with pytest.raises(UserError, match="at most 67,108,864 bytes"):
        load_dataset(sparse(tmp_path / "bench.jsonl", limits.MAX_DATA_FILE_BYTES + 1))


# --- opening a workspace -------------------------------------------------------------------------------------

def test_opening_reads_no_motion_file_the_database_holds_as_it_is(tmp_path, monkeypatch):
    path = new_workspace(tmp_path / "ws", motions=["builtin:en", "file:mine.jsonl"], entries=TWO_OFFLINE, init=None)
    mine = path / "mine.jsonl"
    mine.write_text(jsonl(motion(1), motion(2)), encoding="utf-8")
    first = invoke("motion", "list", "-w", path, "--format", "json")  # the first open reads the sets and stores them
    assert first.exit_code == 0, first.output

    def unread(*args):
        raise AssertionError("a motion file was read")

    with monkeypatch.context() as patched:
        patched.setattr("arena.app.setup.wiring.load_set_map", unread)
        before = snapshot(path)
        assert invoke("entry", "list", "-w", path).exit_code == 0
        again = invoke("motion", "list", "-w", path, "--format", "json")  # from the database: the same list
        assert again.exit_code == 0 and again.output == first.output
        assert snapshot(path) == before

    mine.write_text(jsonl(motion(1), motion(2), motion(3)), encoding="utf-8")  # changed: read again, and stored
    listed = json.loads(invoke("motion", "list", "-w", path, "--format", "json").output)
    assert [m["id"] for m in listed if m["set"] == "file:mine.jsonl"] == ["x-00001", "x-00002", "x-00003"]
    opened = app.open_workspace(path)
    try:
        assert opened.store.motion("x-00003") == opened.motions["x-00003"][0]
    finally:
        opened.close()

    mine.write_text(jsonl(motion(1), {"id": "x-bad"}), encoding="utf-8")  # changed and broken: refused, as before
    refused(path, "entry", "list", fragments=("motions.sets", "mine.jsonl", "line 2", "'text'"))
