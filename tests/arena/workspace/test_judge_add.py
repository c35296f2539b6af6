"""`arena judge add` and `arena judge remove`: a judge registered and taken away without hand-editing arena.toml,
every other byte of the file kept, checked as arena.toml's judges are, and refused with nothing written."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from arena.workspace.config import CONFIG_NAME, load_config
from tests.support.helpers import (TWO_OFFLINE, arena_process, assert_user_error, install_plugin, invoke, judge,
                           new_workspace, play_with, snapshot)

# A comment and a blank line of the user's own, which every edit keeps where they are.
MINE = "\n# my judges, for the finals\n"


@pytest.fixture
def ws(builds, tmp_path) -> Path:
    """The test's own copy of build_ws's workspace (made once per test process)."""
    return builds.copy("judge_add:ws", build_ws, tmp_path / "ws").path


def build_ws(path: Path) -> None:
    """Two offline entries and judge j1, opened once, with a comment of the user's at the end of arena.toml."""
    new_workspace(path, motions=["builtin:en"], entries=TWO_OFFLINE, judges=[judge("j1")], opened=True)
    with (path / CONFIG_NAME).open("a", encoding="utf-8") as f:
        f.write(MINE)


def test_judge_add_appends_a_table_and_keeps_every_byte_before_it(ws):
    before = (ws / CONFIG_NAME).read_text(encoding="utf-8")
    result = invoke("judge", "add", "j2", "--kind", "debatrix", "--model", "offline/j2", "--runs", "2",
                    "--option", "temperature=0.3", "-w", ws)
    assert result.exit_code == 0, result.output
    assert "added judge 'j2' (debatrix, on offline/j2, 2 runs a match)" in result.output
    after = (ws / CONFIG_NAME).read_text(encoding="utf-8")
    assert after.startswith(before)
    assert after[len(before):] == ('\n[[judges]]\nname = "j2"\nkind = "debatrix"\nmodel = "offline/j2"\nruns = 2\n'
                                   "[judges.options]\ntemperature = 0.3\n")
    j2 = load_config(ws).judge("j2")
    assert (j2.kind, j2.model, j2.runs, dict(j2.options)) == ("debatrix", "offline/j2", 2, {"temperature": 0.3})


def test_a_judge_added_without_runs_takes_the_arena_default_and_judges(ws):
    assert invoke("judge", "add", "j2", "--kind", "single", "--model", "offline/j2", "-w", ws).exit_code == 0
    assert load_config(ws).judge("j2").runs == 3  # [arena] judge_runs
    play_with(ws, "j1")
    judged = invoke("judge", "--judge", "j2", "-w", ws)
    assert judged.exit_code == 0, judged.output
    assert "with j2: 6 verdicts, 0 failed runs" in judged.output


def test_judge_add_registers_people_in_order(ws):
    result = invoke("judge", "add", "experts", "--kind", "human", "--people", "cy,ann,bo", "-w", ws)
    assert result.exit_code == 0, result.output
    assert "added judge 'experts' (human, people cy, ann, bo)" in result.output
    experts = load_config(ws).judge("experts")
    assert (experts.people, experts.runs, experts.model) == (("cy", "ann", "bo"), 3, "human")
    status = invoke("ballots", "status", "--judge", "experts", "--format", "json", "-w", ws)
    assert status.exit_code == 0, status.output
    assert [r["person"] for r in json.loads(status.output)] == ["cy", "ann", "bo"]


BAD = [
    pytest.param(("j1", "--kind", "single", "--model", "offline/x"), ("NAME 'j1'", "already registers a judge"),
                 id="duplicate-name"),
    pytest.param(("j2", "--kind", "sole", "--model", "offline/x"),
                 ("--kind 'sole'", "unknown judge kind", "debatrix, devils_advocate, human, imported, jury, panel, single"),
                 id="unknown-kind"),
    pytest.param(("j2", "--kind", "imported"), ("--kind 'imported'", "arena import"), id="imported-kind"),
    pytest.param(("j2", "--kind", "single"), ("--model", "missing required key 'model'"), id="no-model"),
    pytest.param(("j2", "--kind", "single", "--model", "gpt-4o"), ("--model 'gpt-4o'", "PROVIDER/MODEL"),
                 id="model-without-provider"),
    pytest.param(("j2", "--kind", "single", "--model", "offline/x", "--api-base", "ftp://x"),
                 ("--api-base", "http(s) URL"), id="bad-api-base"),
    pytest.param(("j2", "--kind", "single", "--model", "offline/x", "--runs", "0"), ("--runs", "at least 1"),
                 id="runs-out-of-range"),
    pytest.param(("j2", "--kind", "single", "--model", "offline/x", "--option", "colour=red"),
                 ("--option", "unknown option(s) colour"), id="unknown-option"),
    pytest.param(("j2", "--kind", "single", "--model", "offline/x", "--option", "temperature=hot"),
                 ("--option", "temperature"), id="option-of-the-wrong-type"),
    pytest.param(("j2", "--kind", "single", "--model", "offline/x", "--option", "nokey"),
                 ("--option", "expected KEY=VALUE"), id="option-not-a-pair"),
    pytest.param(("j2", "--kind", "single", "--model", "offline/x", "--people", "ann"),
                 ("--people", "only judges of people"), id="people-on-a-model-judge"),
    pytest.param(("j2", "--kind", "human"), ("--people", "a human judge needs people"), id="human-without-people"),
    pytest.param(("j2", "--kind", "human", "--people", "ann,ann"), ("--people", "'ann' is listed twice"),
                 id="person-twice"),
    pytest.param(("j2", "--kind", "human", "--people", "ann,b o"), ("--people", "'b o'"), id="bad-person-name"),
    pytest.param(("j2", "--kind", "human", "--people", "ann", "--runs", "2"), ("--runs", "number of people"),
                 id="runs-on-people"),
    pytest.param(("j2", "--kind", "human", "--people", "ann", "--option", "people=[\"bo\"]"),
                 ("--people and --option people", "once"), id="people-twice"),
    pytest.param(("j 2", "--kind", "single", "--model", "offline/x"), ("NAME", "'j 2'"), id="bad-name"),
]


@pytest.mark.parametrize("args, fragments", BAD)
def test_a_refused_judge_add_names_the_option_and_writes_nothing(ws, args, fragments):
    before = snapshot(ws)
    assert_user_error(invoke("judge", "add", *args, "-w", ws), *fragments)
    assert snapshot(ws) == before


def test_an_option_of_arena_judge_before_add_is_refused_not_applied_elsewhere(ws, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    before = snapshot(ws)
    assert_user_error(invoke("judge", "-w", ws, "add", "j2", "--kind", "single", "--model", "offline/x"),
                      "--workspace is an option of 'arena judge' itself")
    assert snapshot(ws) == before


def test_judge_remove_of_an_unused_judge_gives_back_the_file_as_it_was(ws):
    before = snapshot(ws)
    assert invoke("judge", "add", "j2", "--kind", "panel", "--model", "offline/j2", "--option", "temperature=0.5",
                  "-w", ws).exit_code == 0
    result = invoke("judge", "remove", "j2", "-w", ws)
    assert result.exit_code == 0, result.output
    assert f"removed judge 'j2' from {ws / CONFIG_NAME}" in result.output
    assert snapshot(ws) == before


def test_judge_remove_keeps_the_comments_around_a_judge_in_the_middle(tmp_path):
    text = ('[search]\nprovider = "offline"\n\n# first\n[[judges]]\nname = "a"\nkind = "single"\nmodel = "offline/a"'
            "\n\n# the one to go\n[[judges]]\nname = \"b\"  # b's model\nkind = \"panel\"\nmodel = \"offline/b\"\n"
            '[judges.options]\n# a comment inside\ntemperature = 0.1\n\n# about c\n[[judges]]\nname = "c"\n'
            'kind = "single"\nmodel = "offline/c"\n')
    ws = new_workspace(tmp_path / "ws", text=text, opened=True)
    result = invoke("judge", "remove", "b", "-w", ws)
    assert result.exit_code == 0, result.output
    assert (ws / CONFIG_NAME).read_text(encoding="utf-8") == text.replace(  # comments outside b's table stay
        '[[judges]]\nname = "b"  # b\'s model\nkind = "panel"\nmodel = "offline/b"\n[judges.options]\n'
        "# a comment inside\ntemperature = 0.1\n", "")
    assert [j.name for j in load_config(ws).judges] == ["a", "c"]


def test_judge_remove_is_refused_once_the_judge_has_verdicts_and_its_name_stays_taken(ws):
    play_with(ws, "j1")
    before = snapshot(ws)
    assert_user_error(invoke("judge", "remove", "j1", "-w", ws), "judge 'j1' has verdicts", "cannot be removed")
    assert snapshot(ws) == before
    # Taken out by hand, its verdicts stay in arena.db: a new judge of the name would inherit them.
    config = ws / CONFIG_NAME
    config.write_text(config.read_text(encoding="utf-8").replace('[[judges]]\nname = "j1"\nkind = "single"\n'
                                                                 'model = "offline/j1"\n', ""), encoding="utf-8")
    assert load_config(ws).judges == ()
    assert_user_error(invoke("judge", "add", "j1", "--kind", "single", "--model", "offline/j1", "-w", ws),
                      "NAME 'j1'", "keeps verdicts of a removed judge")


def test_judge_remove_of_an_unknown_judge_names_the_known(ws):
    assert_user_error(invoke("judge", "remove", "nobody", "-w", ws), "unknown judge 'nobody'", "j1")


PLUGIN = '''\
from judges.single import SingleJudge


class SternJudge(SingleJudge):
    """A single judge under another name."""
'''


def test_judge_add_takes_a_plug_in_kind_and_init_names_it(tmp_path):
    env = install_plugin(tmp_path / "site", "stern_plugin", "[arena.judges]\nstern = stern_plugin:SternJudge\n",
                         PLUGIN)
    made = arena_process("init", tmp_path / "ws", env=env)
    assert made.returncode == 0, made.stderr
    kinds = "debatrix | devils_advocate | human | imported | jury | panel | single | stern"
    assert f"# a judge kind: {kinds}\n" in (tmp_path / "ws" / CONFIG_NAME).read_text(encoding="utf-8")
    added = arena_process("judge", "add", "s", "--kind", "stern", "--model", "offline/s", "-w", tmp_path / "ws",
                          env=env)
    assert added.returncode == 0, added.stderr
    assert "added judge 's' (stern, on offline/s, 3 runs a match)" in added.stdout
