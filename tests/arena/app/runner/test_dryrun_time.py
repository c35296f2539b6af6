"""`arena run --dry-run` times the plan: each server's work from what `arena check` measured of its models (slots,
tokens/s, prompt tokens/s, a call's round trip), the busiest server or the matches' calls in turn bounding it, the
models it could not time named, simulated ones said to take no time. Facts are written as `arena check` leaves
them; nothing is sent anywhere (the servers below are never reached)."""
from __future__ import annotations

import json
import re

import pytest

from arena.app import commands as app
from tests.support.helpers import assert_user_error, entry, invoke, judge, new_workspace, snapshot
from tests.arena.app.runner.test_dryrun_projection import projected

ONE = "http://127.0.0.1:9/v1"  # never reached: the dry run sends nothing
TWO = "http://127.0.0.1:10/v1"
SMOL = {"slots": 1, "tokens_per_s": 80.0, "prompt_tokens_per_s": 250.0, "latency_s": 0.5}


def plan(path, entries, judges, facts=()) -> str:
    """A round robin of the entries (2 matches a pair), judged by the judges (R = 1), with facts remembered for
    (model, api_base) as `arena check` remembers them."""
    path = new_workspace(path, arena={"judge_runs": 1}, entries=entries, judges=judges)
    ws = app.open_workspace(path)
    try:
        app.schedule(ws, "round-robin", rounds=1)
        for model, api_base, known in facts:
            ws.store.remember_model(model, api_base, ok=True, **known)
    finally:
        ws.close()
    return str(path)


def work(row: dict, facts: dict) -> float:
    """A model's seconds for its projected calls: a round trip each, its prompt and completion tokens at its rates."""
    prompt = row["prompt_tokens"] / facts["prompt_tokens_per_s"] if facts.get("prompt_tokens_per_s") else 0.0
    return row["calls"] * facts["latency_s"] + prompt + row["completion_tokens"] / facts["tokens_per_s"]


def rows(p: dict) -> dict:
    return {r["model"]: r for r in p["models"]}


def test_one_slot_works_through_the_plan_in_turn_and_more_slots_share_it(tmp_path):
    both = [entry("a", model="openai/smol", api_base=ONE), entry("b", model="openai/smol", api_base=ONE)]
    refs = [judge("j", model="openai/smol", api_base=ONE)]
    one = projected(plan(tmp_path / "one", both, refs, [("openai/smol", ONE, SMOL)]))
    t = one["time_s"]
    seconds = work(rows(one)["openai/smol"], SMOL)
    assert seconds > 0
    [server] = t["basis"]["servers"]
    assert (server["server"], server["slots"], server["at_once"]) == (ONE, 1, 1)
    assert [m["model"] for m in server["models"]] == ["openai/smol"]
    assert server["models"][0] | {"work_s": 0} == {"model": "openai/smol", "calls": rows(one)["openai/smol"]["calls"],
                                                   **SMOL, "work_s": 0}
    assert server["work_s"] == server["wall_s"] == pytest.approx(seconds, abs=0.1)
    assert t["estimate"] == pytest.approx(seconds, abs=0.1) and t["basis"]["bound"] == "server"
    assert t["unmeasured"] == [] and t["simulated"] == []

    # Eight slots: the run's 4 matches at once share the server; a match's calls still go one after another.
    eight = projected(plan(tmp_path / "eight", both, refs, [("openai/smol", ONE, {**SMOL, "slots": 8})]))
    t = eight["time_s"]
    [server] = t["basis"]["servers"]
    assert (server["slots"], server["at_once"]) == (8, 4)
    assert server["wall_s"] == pytest.approx(seconds / 4, abs=0.1)
    # Only 2 matches: both at once, so never less than one match's calls in turn.
    assert t["estimate"] == pytest.approx(max(seconds / 4, t["basis"]["match_s"]), abs=0.1)
    # --concurrency 1: one match at a time, so the matches' calls in turn bound it: each match's six speeches in
    # five steps (the two constructives go together), then its judge's run.
    judged = [judge("j", model="openai/judge", api_base=TWO)]
    alone = projected(plan(tmp_path / "alone", both, judged, [("openai/smol", ONE, {**SMOL, "slots": 8}),
                                                              ("openai/judge", TWO, {**SMOL, "slots": 8})]),
                      concurrency=1)
    t = alone["time_s"]
    assert t["basis"]["at_once"] == 1 and t["basis"]["bound"] == "matches"
    speeches, judging = work(rows(alone)["openai/smol"], SMOL), work(rows(alone)["openai/judge"], SMOL)
    assert t["estimate"] == pytest.approx(speeches * 5 / 6 + judging, abs=0.1)
    assert t["basis"]["match_s"] == pytest.approx(t["estimate"] / 2, abs=0.1)  # the mean of the 2 matches


def test_a_provider_api_not_measured_for_slots_serves_as_many_as_the_run_sends(tmp_path):
    """`arena check` measures a provider's own API (no api_base) for speed, not slots: the run then sends it up to
    [llm] max_concurrency at once, and the projection counts that many, not one."""
    hosted = {"tokens_per_s": 60.0, "prompt_tokens_per_s": 2000.0, "latency_s": 0.4}
    both = [entry("a", model="openai/gpt-4o"), entry("b", model="openai/gpt-4o")]
    p = projected(plan(tmp_path / "ws", both, [judge("j", model="openai/gpt-4o")], [("openai/gpt-4o", "", hosted)]))
    [server] = p["time_s"]["basis"]["servers"]
    assert (server["slots"], server["at_once"]) == (16, 4)  # [llm] max_concurrency's default; the run's 4 matches
    assert server["wall_s"] == pytest.approx(work(rows(p)["openai/gpt-4o"], hosted) / 4, abs=0.1)


def test_models_on_one_server_add_up_and_servers_work_in_parallel(tmp_path):
    fast = {**SMOL, "tokens_per_s": 160.0, "prompt_tokens_per_s": None}
    entries = [entry("a", model="openai/smol", api_base=ONE), entry("b", model="openai/other", api_base=ONE)]
    judges = [judge("j", model="offline/j")]
    shared = projected(plan(tmp_path / "shared", entries, judges,
                            [("openai/smol", ONE, SMOL), ("openai/other", ONE, fast)]))
    t = shared["time_s"]
    smol, other = work(rows(shared)["openai/smol"], SMOL), work(rows(shared)["openai/other"], fast)
    [server] = t["basis"]["servers"]  # one api_base: one server, working through both models' calls
    assert [m["model"] for m in server["models"]] == ["openai/other", "openai/smol"]
    assert {m["model"]: m["work_s"] for m in server["models"]} == pytest.approx(
        {"openai/smol": smol, "openai/other": other}, abs=0.1)
    assert server["models"][0]["prompt_tokens_per_s"] is None  # not measured: its prompt tokens take no time
    assert t["estimate"] == pytest.approx(smol + other, abs=0.2)
    assert t["simulated"] == ["offline/j"]  # the judge is simulated: no time

    apart = projected(plan(tmp_path / "apart", [entries[0], {**entries[1], "api_base": TWO}], judges,
                           [("openai/smol", ONE, SMOL), ("openai/other", TWO, fast)]))
    t = apart["time_s"]
    assert [s["server"] for s in t["basis"]["servers"]] == sorted([ONE, TWO])
    walls = {s["server"]: s["wall_s"] for s in t["basis"]["servers"]}
    assert walls == pytest.approx({ONE: work(rows(apart)["openai/smol"], SMOL),
                                   TWO: work(rows(apart)["openai/other"], fast)}, abs=0.1)
    # Two one-slot servers in parallel: the busier one, or the matches' calls in turn (they share the debates).
    assert t["estimate"] == pytest.approx(max(max(walls.values()), t["basis"]["match_s"]), abs=0.1)
    assert t["estimate"] < sum(walls.values())


def test_a_model_arena_check_has_not_measured_is_named_with_what_would_measure_it(tmp_path):
    entries = [entry("a", model="openai/smol", api_base=ONE), entry("hosted", model="openai/gpt-4o")]
    judges = [judge("j", model="openai/gpt-4o")]
    # Probed before throughput was measured (an older arena check): a latency alone does not time a model.
    path = plan(tmp_path / "ws", entries, judges, [("openai/smol", ONE, SMOL), ("openai/gpt-4o", "", {"latency_s": 0.4})])
    p = projected(path)
    t = p["time_s"]
    assert t["unmeasured"] == [{"model": "openai/gpt-4o", "names": ["hosted", "j"]}]
    assert [m["model"] for s in t["basis"]["servers"] for m in s["models"]] == ["openai/smol"]
    assert t["estimate"] == pytest.approx(work(rows(p)["openai/smol"], SMOL), abs=0.1)  # the measured one only

    out = invoke("run", "--dry-run", "-w", path).output
    line = next(line for line in out.splitlines() if line.startswith("time:"))
    assert re.fullmatch(r"time: about \d+m\d\ds for the measured models \(openai/smol at 1 slot, 80 tokens/s: "
                        r"\d+m\d\ds of work; not timed: openai/gpt-4o — run 'arena check hosted j' to measure it\)",
                        line), line

    # None measured: no estimate, and the line says what would give one.
    bare = plan(tmp_path / "bare", entries, judges)
    assert projected(bare)["time_s"]["estimate"] is None
    line = next(line for line in invoke("run", "--dry-run", "-w", bare).output.splitlines()
                if line.startswith("time:"))
    assert line == ("time: unknown (not timed: openai/gpt-4o, openai/smol — run 'arena check a hosted j' to "
                    "measure them)")


def test_a_simulated_plan_takes_no_model_time(tmp_path):
    path = plan(tmp_path / "ws", [entry("a"), entry("b")], [judge("j")])
    t = projected(path)["time_s"]
    assert t == {"estimate": 0.0, "basis": {"at_once": 4, "match_s": 0.0, "bound": "server", "servers": []},
                 "unmeasured": [], "simulated": ["offline/a", "offline/b", "offline/j"]}
    lines = [line for line in invoke("run", "--dry-run", "-w", path).output.splitlines() if line.startswith("time:")]
    assert lines == ["time: about 0s (offline/a, offline/b, offline/j: simulated, no time)"]


def test_the_json_adds_time_s_and_keeps_every_key_it_had(tmp_path):
    path = plan(tmp_path / "ws", [entry("a", model="openai/smol", api_base=ONE), entry("b")], [judge("j")],
                [("openai/smol", ONE, SMOL)])
    before = snapshot(tmp_path / "ws")
    result = invoke("run", "--dry-run", "--format", "json", "-w", path)
    assert result.exit_code == 0, result.output
    printed = json.loads(result.stdout)
    assert set(printed) == {"matches", "sampled", "models", "unknown", "why_unknown", "searches", "search_provider",
                            "cost", "per_match", "failed", "time_s"}
    assert printed == json.loads(json.dumps(projected(path)))  # the Python API's, as it is
    assert {"estimate", "basis"} <= set(printed["time_s"]) and printed["time_s"]["estimate"] > 0
    assert snapshot(tmp_path / "ws") == before  # nothing written


def test_json_without_a_dry_run_is_refused_before_anything_is_written(tmp_path):
    path = plan(tmp_path / "ws", [entry("a"), entry("b")], [judge("j")])
    before = snapshot(tmp_path / "ws")
    assert_user_error(invoke("run", "--format", "json", "-w", path), "--format json", "--dry-run")
    assert snapshot(tmp_path / "ws") == before


def test_a_stand_in_answers_within_the_calls_max_tokens_as_a_real_model_would(tmp_path):
    # The simulator writes its own lengths, whatever the budget; a real model stops at max_tokens (a direct speech:
    # 2 x 50 + 64 tokens for a 50-word budget). A simulated entry of the plan keeps what the simulator will write.
    short = {f"words_{stage}": 50 for stage in ("constructive", "rebuttal", "summary")}
    p = projected(plan(tmp_path / "ws", [entry("real", model="openai/smol", api_base=ONE, params=short),
                                         entry("sim", params=short)], [judge("j", model="openai/judge")]), every=1)
    real, sim = rows(p)["openai/smol"], rows(p)["offline/sim"]
    assert real["calls"] == sim["calls"] == 6  # 3 speeches a match, 2 matches
    assert 0.9 * 164 * 6 <= real["completion_tokens"] <= 164 * 6
    assert sim["completion_tokens"] > 2 * real["completion_tokens"]  # the simulator's own lengths, uncut


def test_an_answer_as_sent_is_cut_at_a_word_within_the_limit():
    from arena.gateway.offline import as_sent

    text = "one two three four five six seven eight nine ten"  # 10 words: 13 tokens as the simulator counts
    assert as_sent(text, 13, 100, prose=True) == (text, 13)
    cut, tokens = as_sent(text, 13, 7, prose=True)
    assert tokens <= 7 and text.startswith(cut) and cut == "one two three four five"
    assert as_sent('{"winner": "pro"}', 40, 7, prose=False) == ('{"winner": "pro"}', 7)  # JSON kept whole
