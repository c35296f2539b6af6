"""`arena stats agents`: calls per speech and tokens per call, per debater kind, stage and role."""
from __future__ import annotations

import json

import pytest

from arena.domain.records import STAGES, AgentUsage, SpeechUsage
from arena.analysis.stats import agent_stats
from tests.support.helpers import assert_user_error, entry, invoke, judge, new_workspace, play_round_robin

KEYS = ["debater", "stage", "role", "speeches", "calls_per_speech", "completion_tokens_per_call",
        "prompt_tokens_per_call", "cost_per_speech"]


def usage(calls: int, prompt: int, completion: int, cost: float | None = 0.0) -> AgentUsage:
    return AgentUsage(calls, prompt, completion, cost)


def speech(debater: str, stage: str, agents: dict[str, AgentUsage]) -> SpeechUsage:
    return SpeechUsage(debater, stage, agents)


def test_a_role_that_did_not_run_counts_as_zero_calls():
    speeches = [
        speech("a4d", "constructive", {"searcher": usage(2, 100, 40), "writer": usage(1, 500, 300, 0.01)}),
        speech("a4d", "constructive", {"writer": usage(3, 900, 300, 0.03)}),  # ablation
    ]
    assert agent_stats(speeches) == [
        {"debater": "a4d", "stage": "constructive", "role": "searcher", "speeches": 2, "calls_per_speech": 1.0,
         "completion_tokens_per_call": 20.0, "prompt_tokens_per_call": 50.0, "cost_per_speech": 0.0},
        {"debater": "a4d", "stage": "constructive", "role": "writer", "speeches": 2, "calls_per_speech": 2.0,
         "completion_tokens_per_call": 150.0, "prompt_tokens_per_call": 350.0, "cost_per_speech": 0.02},
    ]


def test_unknown_cost_and_zero_calls_give_null():
    rows = agent_stats([speech("d", "summary", {"writer": usage(1, 10, 5, None), "reviewer": usage(0, 0, 0)})])
    writer, reviewer = rows
    assert writer["cost_per_speech"] is None
    assert reviewer["calls_per_speech"] == 0.0 and reviewer["completion_tokens_per_call"] is None


def test_groups_by_debater_then_stage_in_debate_order():
    speeches = [speech(d, s, {"writer": usage(1, 1, 1)}) for d in ("zeta", "alpha") for s in reversed(STAGES)]
    assert [(r["debater"], r["stage"]) for r in agent_stats(speeches)] == [
        (d, s) for d in ("alpha", "zeta") for s in STAGES]


def build_played(path):
    ws = new_workspace(path, arena={"seed": 0, "judge_runs": 1}, init="cli",
                       entries=[entry("a", strength=0.5, params={"temperature": 0.3}), entry("b", strength=-0.5)],
                       judges=[judge("j", model="offline/judge", runs=1)])
    play_round_robin(ws)


@pytest.fixture
def played(builds, tmp_path):
    """The test's own copy of build_played's workspace (played once per test process)."""
    return builds.copy("stats_agents:played", build_played, tmp_path / "ws").path


def test_stats_agents_json_for_direct_entries(played):
    result = invoke("stats", "agents", "-w", played, "--format", "json")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)
    assert [list(r) for r in rows] == [KEYS] * 3
    assert [(r["debater"], r["stage"], r["role"]) for r in rows] == [("direct", s, "writer") for s in STAGES]
    for r in rows:
        assert r["speeches"] == 4  # two matches, a speech per side per stage
        assert r["calls_per_speech"] == 1.0
        assert r["completion_tokens_per_call"] > 0 and r["prompt_tokens_per_call"] > 0
        assert r["cost_per_speech"] == 0.0  # the simulator is free


def test_stats_agents_table(played):
    result = invoke("stats", "agents", "-w", played)
    assert result.exit_code == 0, result.output
    header, *lines = result.output.splitlines()
    assert header.split()[:5] == ["debater", "stage", "role", "speeches", "calls/speech"]
    assert [line.split()[:5] for line in lines] == [["direct", s, "writer", "4", "1.00"] for s in STAGES]


def test_stats_agents_without_matches(tmp_path):
    assert invoke("init", tmp_path / "ws").exit_code == 0
    result = invoke("stats", "agents", "-w", tmp_path / "ws", "--format", "json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == []


def test_stats_needs_a_workspace(tmp_path):
    assert_user_error(invoke("stats", "agents", "-w", tmp_path / "nowhere"), "arena init")
