"""`arena run --dry-run` projects from a sample: the same calls as playing every match, readable figures, a total
that says when it is partial and why, a progress line on a terminal, and nothing written."""
from __future__ import annotations

import io
import json
import re
import sys

import pytest

from arena.app import commands as app
from arena.app.runner.dryrun import spread
from arena.gateway.catalog import listed_price, price
from tests.support.helpers import entry, invoke, judge, new_workspace, snapshot

LOCAL = "http://127.0.0.1:9/v1"  # never reached: the dry run sends nothing


@pytest.fixture(scope="module")
def plan(tmp_path_factory):
    """Four direct entries (two priced, one unknown to litellm, one on a local server) and a judge on
    gpt-4o-mini: a round robin of 12 matches, one class, of which the dry run plays 2 (one in ten, rounded up)."""
    path = new_workspace(tmp_path_factory.mktemp("dry") / "ws", arena={"judge_runs": 1},
                         entries=[entry("mini", model="openai/gpt-4o-mini"),
                                  entry("deep", model="deepseek/deepseek-chat"),
                                  entry("mystery", model="openai/mystery-model"),
                                  entry("local", model="openai/my-local-model", api_base=LOCAL)],
                         judges=[judge("j1", model="openai/gpt-4o-mini", runs=2)])
    ws = app.open_workspace(path)
    app.schedule(ws, "round-robin", rounds=1)
    ws.close()
    return path


def projected(path, **options) -> dict:
    ws = app.open_workspace(path)
    try:
        return app.dry_run(ws, **options)
    finally:
        ws.close()


def test_the_projection_from_a_sample_has_the_calls_of_playing_every_match(plan):
    sampled, full = projected(plan), projected(plan, every=1)
    assert (sampled["matches"], sampled["sampled"]) == (12, 2)
    assert (full["matches"], full["sampled"]) == (12, 12)
    rows, every = ({r["model"]: r for r in p["models"]} for p in (sampled, full))
    assert set(rows) == set(every) == {"openai/gpt-4o-mini", "deepseek/deepseek-chat", "openai/mystery-model",
                                       "openai/my-local-model"}
    # A direct debater's calls do not vary: 3 speeches a match, 6 matches each; the judge 2 runs of 12 matches.
    assert {m: r["calls"] for m, r in rows.items()} == {m: r["calls"] for m, r in every.items()} == {
        "openai/gpt-4o-mini": 18 + 24, "deepseek/deepseek-chat": 18, "openai/mystery-model": 18,
        "openai/my-local-model": 18}
    # Tokens vary with the motion and the simulator's wording: within 5% of playing every match.
    for model, row in rows.items():
        for key in ("prompt_tokens", "completion_tokens"):
            assert row[key] == pytest.approx(every[model][key], rel=0.05), (model, key)
    assert sampled["cost"] == pytest.approx(full["cost"], rel=0.05) and sampled["cost"] > 0
    assert sampled["failed"] == full["failed"] == []


def test_the_json_keeps_plain_integers(plan):
    p = json.loads(json.dumps(projected(plan)))
    for row in p["models"]:
        assert all(type(row[k]) is int for k in ("calls", "prompt_tokens", "completion_tokens")), row
    assert type(p["searches"]) is int and type(p["matches"]) is int and type(p["sampled"]) is int


def test_the_table_has_thousands_separators_and_the_partial_total_says_why(plan):
    before = snapshot(plan)
    result = invoke("run", "--dry-run", "-w", plan)
    assert result.exit_code == 0, result.output
    out = result.output
    assert out.startswith("dry run: 12 pending matches projected from 2 sampled matches played")
    rows = [line.split()[1:4] for line in out.splitlines() if re.match(r"\S+/\S+\s+\d", line)]
    assert len(rows) == 4
    figures = [cell for row in rows for cell in row]
    assert all(re.fullmatch(r"\d{1,3}(,\d{3})*", cell) for cell in figures), figures
    assert any("," in cell for cell in figures)  # the plan's prompt tokens run to thousands
    # 2 of 4 models are priced: the total says it covers them only, and why each other has no price.
    assert re.search(r"^projected cost: \$\d+\.\d{4} for 2 of 4 models \(partial\); 2 unpriced:$", out, re.MULTILINE)
    assert "  openai/mystery-model: not in litellm's price map" in out
    assert f"  openai/my-local-model: a local server ({LOCAL})" in out
    assert re.search(r"^per match: [\d,.]+ calls, \d{1,3}(,\d{3})+ tokens, \$\d+\.\d{4} \(priced models only\)$", out,
                     re.MULTILINE)
    assert snapshot(plan) == before  # arena.db and arena.toml untouched


def test_a_fully_priced_plan_has_a_plain_total(tmp_path):
    path = new_workspace(tmp_path / "ws", arena={"judge_runs": 1},
                         entries=[entry("mini", model="openai/gpt-4o-mini"),
                                  entry("deep", model="deepseek/deepseek-chat")],
                         judges=[judge("j1", model="openai/gpt-4o-mini")])
    ws = app.open_workspace(path)
    app.schedule(ws, "round-robin", rounds=1)
    ws.close()
    out = invoke("run", "--dry-run", "-w", path).output
    assert "dry run: 2 pending matches projected from 1 sampled match played" in out
    assert re.search(r"^projected cost: \$\d+\.\d{4}$", out, re.MULTILINE) and "unpriced" not in out


def test_a_terminal_sees_a_progress_line_and_a_pipe_does_not(plan, monkeypatch):
    class Terminal(io.StringIO):
        def isatty(self):
            return True

    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    projected(plan)
    drawn = terminal.getvalue()
    assert "\rdry run: simulating 1/2 sampled matches" in drawn and "\rdry run: simulating 2/2 sampled matches" in drawn
    assert drawn.endswith("\r\x1b[K")  # the line is cleared before the report

    piped = io.StringIO()
    monkeypatch.setattr(sys, "stderr", piped)
    projected(plan)
    assert piped.getvalue() == ""


def test_the_sample_is_spread_through_each_class():
    assert spread(list(range(10)), 3) == [0, 3, 6]
    assert spread(list(range(3)), 5) == [0, 1, 2]


@pytest.mark.parametrize("model", ["openai/gpt-4o", "openai/gpt-4o-mini", "deepseek/deepseek-chat",
                                   "anthropic/claude-3-5-sonnet-20240620", "gemini/gemini-1.5-pro",
                                   "dashscope/qwen2-72b-instruct", "zai/glm-4-air", "openai/mystery-model",
                                   "offline/sim"])
def test_the_dry_runs_prices_read_from_the_map_are_litellms(model):
    # The preset's models and the tests': read without importing litellm, priced (or not) as litellm prices them.
    listed, litellms = listed_price(model, 1000, 2000), price(model, 1000, 2000)
    assert (listed is None) == (litellms is None)
    assert listed is None or listed == pytest.approx(litellms, rel=1e-9)


def test_a_failed_sample_counts_no_match_it_stood_for(plan, monkeypatch):
    from arena.app.runner import dryrun

    simulate = dryrun._simulate

    def failing(*ids):
        def play(ws, simulated, played, progress):
            usage, failed = simulate(ws, simulated, played, progress)
            return usage, {**failed, **{played[i].id: "offline/mini: RuntimeError boom" for i in ids}}
        return play

    # One of the class's two samples fails: the other stands for the ten matches not played.
    monkeypatch.setattr(dryrun, "_simulate", failing(0))
    p = projected(plan)
    assert [f["error"] for f in p["failed"]] == ["offline/mini: RuntimeError boom"]
    assert sum(r["calls"] for r in p["models"]) == 11 * (3 + 3 + 2)  # 3 calls a side, the judge's 2 runs

    # Both fail: no match of the class is counted, and each says which like it failed.
    monkeypatch.setattr(dryrun, "_simulate", failing(0, 1))
    p = projected(plan)
    failed = {f["id"]: f["error"] for f in p["failed"]}
    samples = sorted(i for i, error in failed.items() if error.startswith("offline/mini"))
    assert len(failed) == 12 and len(samples) == 2 and p["models"] == []
    assert all(re.fullmatch(rf"not played: {samples[0]}, a match like it, failed", error)
               for i, error in failed.items() if i not in samples)
