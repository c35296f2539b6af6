"""`arena init --preset agent4debate` (the paper's Competitive Debate Arena) and `arena demo --language zh`."""
from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from arena.app.setup import demo
from arena.app.commands import open_workspace
from tests.support.helpers import assert_user_error, init_preset, invoke, new_workspace, snapshot
from tests.support.sites import shared_demo

ARENA = [sys.executable, "-m", "arena"]
CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture(scope="module")
def preset(builds, tmp_path_factory) -> Path:
    """This module's copy of `arena init --preset agent4debate` (made once per test process)."""
    return builds.copy("init:agent4debate", init_preset, tmp_path_factory.mktemp("preset") / "a4d", name="a4d").path


def test_the_preset_mirrors_the_papers_arena(preset):
    ws = open_workspace(preset)
    try:
        config = ws.config
        assert config.arena.language == "zh" and config.motions.sets == ("builtin:zh",)
        assert config.rating.side == "ignore"  # the paper's fit has no Pro-advantage parameter
        kinds = [e.debater for e in config.entries]
        assert kinds.count("agent4debate") == 7 and kinds.count("search-baseline") == 2
        assert kinds.count("direct") == 1 and kinds.count("human") == 1
        assert {e.model for e in config.entries if e.debater == "agent4debate"} >= {
            "openai/gpt-4o", "anthropic/claude-3-5-sonnet-20240620", "deepseek/deepseek-chat"}
        assert all(e.model.split("/")[0] != "offline" for e in config.entries)
        debatrix, experts = config.judges
        assert (debatrix.kind, debatrix.model, debatrix.runs) == ("debatrix", "openai/gpt-4o-mini", 3)
        assert (experts.kind, experts.runs, len(experts.people)) == ("human", 3, 3)
        states = ws.store.match_states()
        assert len(states) == 200 and {m.status for m in states} == {"scheduled"}
        assert all(CJK.search(m.motion_text) for m in states)
        assert {m.category for m in states} == {"fact", "value", "policy"}
    finally:
        ws.close()
    text = (preset / "arena.toml").read_text(encoding="utf-8")
    assert "2408.04472" in text and "Debatrix-Elo" in text and "Human-Elo" in text  # says where parts come from
    assert "API_KEY" in text and not re.search(r"(sk|key)-[A-Za-z0-9]{8,}", text)  # names keys, holds none


def test_the_preset_dry_run_projects_calls_and_cost_per_model_and_writes_nothing(preset):
    before = snapshot(preset)
    done = subprocess.run([*ARENA, "run", "--dry-run", "-w", str(preset)], capture_output=True, text=True,
                          timeout=600, env={"PATH": "/usr/bin:/bin", "LITELLM_LOCAL_MODEL_COST_MAP": "True"})
    assert done.returncode == 0, done.stderr
    assert "dry run: 200 pending matches" in done.stdout
    for model in ("openai/gpt-4o-mini", "openai/gpt-4o", "deepseek/deepseek-chat", "gemini/gemini-1.5-pro"):
        assert re.search(rf"^{re.escape(model)}\s+\d+", done.stdout, re.MULTILINE), model
    assert "projected cost: $" in done.stdout and "tavily searches" in done.stdout
    assert snapshot(preset) == before


def test_the_preset_is_checked_without_keys_and_people_need_no_probe(preset):
    listed = json.loads(invoke("entry", "list", "--format", "json", "-w", preset).stdout)
    assert len(listed) == 11
    checked = invoke("check", "humans", "experts", "--format", "json", "-w", preset)
    assert checked.exit_code == 0, checked.output
    assert json.loads(checked.stdout) == []  # people call no model: nothing to probe, nothing fails


def test_an_unknown_preset_exits_2_and_writes_nothing(tmp_path):
    assert_user_error(invoke("init", tmp_path / "x", "--preset", "nope"), "--preset", "'nope'", "agent4debate")
    assert not (tmp_path / "x").exists()


@pytest.fixture(scope="module")
def zh_demo(builds) -> Path:
    return shared_demo(builds, "zh")  # `arena demo --language zh` (tests.support.sites.demo_workspace), once per process


def test_demo_in_chinese_plays_a_chinese_tournament_end_to_end(zh_demo):
    path = zh_demo
    db = sqlite3.connect(path / "arena.db")
    try:
        assert db.execute("SELECT COUNT(*) FROM matches WHERE status = 'done'").fetchone()[0] == 60
        assert {lang for (lang,) in db.execute("SELECT DISTINCT mo.language FROM matches m JOIN motions mo "
                                               "ON mo.id = m.motion_id")} == {"zh"}
        speeches = [t for (t,) in db.execute("SELECT text FROM speeches")]
        assert all(len(CJK.findall(t)) > len(t) / 3 for t in speeches)  # Chinese prose, not English
        assert db.execute("SELECT COUNT(*) FROM verdicts WHERE judge = 'sim-experts'").fetchone()[0] == 180
    finally:
        db.close()
    page = next((path / "site" / "matches").glob("*.html")).read_text(encoding="utf-8")
    assert 'lang="zh"' in page


def test_demo_in_another_language_than_its_workspace_exits_2(tmp_path):
    path = new_workspace(tmp_path / "demo", arena={"language": "zh"}, search=None, init=None)
    # Marked as the demo's own, as a demo started with --language zh would be.
    toml = path / "arena.toml"
    toml.write_text(demo.MARK + "\n" + toml.read_text())
    assert_user_error(invoke("demo", "-w", path), "a demo in language 'zh'", "--language zh")
    assert [p.name for p in path.iterdir()] == ["arena.toml"]  # refused before opening: no arena.db
