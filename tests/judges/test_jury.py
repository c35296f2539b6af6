"""Families and a jury (issue 36): each model's family from its litellm string, arena.toml's `family`, and the `jury`
judge, which seats per match models of other families than the debaters', each giving one run."""
from __future__ import annotations

import json
import re
from collections import Counter

import pytest

from arena.app import commands as app
from arena.workspace.config import load_config
from arena.domain.families import family_of, guessed, known_family
from tests.support.helpers import (assert_user_error, debate_responder, entry, invoke, judge, new_workspace, play_with,
                           write_workspace)

# --- families --------------------------------------------------------------------------------------------------

FAMILIES = [
    # hosted vendors, directly and through routers and clouds
    ("openai/gpt-4o", "openai"),
    ("gpt-4o-mini", "openai"),
    ("openai/o3-mini", "openai"),
    ("o1", "openai"),
    ("chatgpt-4o-latest", "openai"),
    ("azure/gpt-4o", "openai"),
    ("openrouter/openai/gpt-oss-120b", "openai"),
    ("anthropic/claude-3-5-sonnet-20241022", "anthropic"),
    ("openrouter/anthropic/claude-3.5-sonnet", "anthropic"),
    ("bedrock/anthropic.claude-3-sonnet-20240229-v1:0", "anthropic"),
    ("vertex_ai/claude-3-5-sonnet@20240620", "anthropic"),
    ("gemini/gemini-1.5-pro", "google"),
    ("vertex_ai/gemini-2.0-flash", "google"),
    ("mistral/mistral-large-latest", "mistral"),
    ("mistral/open-mixtral-8x22b", "mistral"),
    ("codestral/codestral-latest", "mistral"),
    ("deepseek/deepseek-chat", "deepseek"),
    ("xai/grok-2-latest", "xai"),
    ("openrouter/x-ai/grok-beta", "xai"),
    ("cohere/command-r-plus", "cohere"),
    ("bedrock/amazon.nova-pro-v1:0", "amazon"),
    ("perplexity/sonar-pro", "perplexity"),
    # open models: the maker of the base, wherever they are served
    ("ollama/llama3.1:8b", "meta"),
    ("ollama_chat/llama3.1:8b", "meta"),
    ("bedrock/meta.llama3-1-70b-instruct-v1:0", "meta"),
    ("groq/llama-3.3-70b-versatile", "meta"),
    ("openrouter/nvidia/llama-3.1-nemotron-70b-instruct", "meta"),  # NVIDIA's fine-tune of Llama
    ("groq/deepseek-r1-distill-llama-70b", "meta"),  # DeepSeek's distillation into Llama
    ("together_ai/deepseek-ai/DeepSeek-R1-Distill-Qwen-14B", "qwen"),
    ("hosted_vllm/Qwen/Qwen2.5-7B-Instruct", "qwen"),
    ("openai/Qwen/Qwen2.5-7B-Instruct", "qwen"),  # a local OpenAI-compatible server: the name decides
    ("lm_studio/qwen2.5-7b-instruct", "qwen"),
    ("dashscope/qwen-max", "qwen"),
    ("ollama/gemma2:2b", "google"),
    ("openrouter/google/gemma-2-9b-it", "google"),
    ("together_ai/mistralai/Mixtral-8x7B-Instruct-v0.1", "mistral"),
    ("ollama/phi3:mini", "microsoft"),
    ("openrouter/microsoft/phi-4", "microsoft"),
    ("openai/smollm2", "huggingface"),
    ("huggingface/HuggingFaceTB/SmolLM2-1.7B-Instruct", "huggingface"),
    ("SmolLM2-135M-Instruct-Q8_0.gguf", "huggingface"),
    ("hosted_vllm/EleutherAI/gpt-j-6b", "eleutherai"),  # "gpt" in the name, yet no OpenAI model
    ("watsonx/ibm/granite-13b-chat-v2", "ibm"),
    # nothing known: a vendor's own API, else the first segment after the provider
    ("anthropic/some-future-model", "anthropic"),
    ("gemini/learnlm-1.5-pro", "google"),
    ("openrouter/nousresearch/hermes-2-pro", "nousresearch"),
    ("openai/judge-model", "judge-model"),  # openai/ is also the route to any compatible server
    ("azure/my-deployment", "my-deployment"),
    ("ollama/foo:7b", "foo"),
    ("my-model", "my-model"),
    # the simulator: each model its own family, unless it stands in for a real one
    ("offline/a", "offline/a"),
    ("offline/Judge-One", "offline/judge-one"),
    ("offline/openai/gpt-4o", "openai"),
    ("human/ann", "human"),  # people's convention: no provider
]


@pytest.mark.parametrize("model, family", FAMILIES)
def test_a_family_is_derived_from_the_model_string(model, family):
    assert family_of(model) == family


# Guessed: step 4's last resort, a name the table does not know; not the simulator's own or a person's by convention.
GUESSED = {"openai/judge-model", "azure/my-deployment", "ollama/foo:7b", "my-model",
           "openrouter/nousresearch/hermes-2-pro"}
BY_CONVENTION = {"offline/a", "offline/Judge-One", "human/ann"}  # the simulator's own, a person's


@pytest.mark.parametrize("model, family", FAMILIES)
def test_a_family_only_guessed_from_a_name_is_told_from_one_the_table_knows(model, family):
    assert guessed(model) == (model in GUESSED)
    assert known_family(model) == (None if model in GUESSED | BY_CONVENTION else family)


# --- arena.toml's family ---------------------------------------------------------------------------------------

def test_entries_and_judges_derive_their_family_unless_arena_toml_gives_one(tmp_path):
    path = new_workspace(tmp_path / "ws", entries=[entry("gpt", model="openai/gpt-4o"),
                                                   entry("tuned", model="hosted_vllm/acme/tuned-7b", family="meta")],
                         judges=[judge("j", model="anthropic/claude-3-5-haiku-latest"),
                                 judge("k", model="openai/my-judge", family="qwen")])
    listed = invoke("entry", "list", "-w", path, "--format", "json")
    assert listed.exit_code == 0, listed.output
    assert {r["name"]: r["family"] for r in json.loads(listed.output)} == {"gpt": "openai", "tuned": "meta"}
    table = invoke("entry", "list", "-w", path)
    assert table.output.splitlines()[0].split()[:4] == ["name", "debater", "model", "family"]
    assert "hosted_vllm/acme/tuned-7b  meta" in table.output
    shown = invoke("entry", "show", "tuned", "-w", path, "--format", "json")
    assert json.loads(shown.output)["family"] == "meta"
    assert {j.name: j.family for j in load_config(path).judges} == {"j": "anthropic", "k": "qwen"}


@pytest.mark.parametrize("table", ["entries", "judges"])
@pytest.mark.parametrize("value", ["Open AI", "", 3, "OpenAI"])
def test_a_bad_family_exits_2_naming_its_key(tmp_path, table, value):
    keys = {"entries": [entry("a", family=value), entry("b")], "judges": [judge("j", family=value)]}
    path = new_workspace(tmp_path / "ws", init=None, **{table: keys[table]})
    assert_user_error(invoke("entry", "list", "-w", path), f"{table}[0].family")


def test_entry_add_and_judge_add_write_a_family_of_their_own_and_refuse_a_bad_one(tmp_path):
    path = new_workspace(tmp_path / "ws", init="cli", entries=[entry("a"), entry("b")])
    added = invoke("entry", "add", "tuned", "--debater", "direct", "--model", "hosted_vllm/acme/tuned-7b",
                   "--family", "meta", "-w", path)
    assert added.exit_code == 0, added.output
    judged = invoke("judge", "add", "k", "--kind", "single", "--model", "openai/my-judge", "--family", "qwen",
                    "-w", path)
    assert judged.exit_code == 0, judged.output
    text = (path / "arena.toml").read_text(encoding="utf-8")
    assert 'model = "hosted_vllm/acme/tuned-7b"\nfamily = "meta"\n' in text
    assert 'model = "openai/my-judge"\nfamily = "qwen"\n' in text
    assert load_config(path).entry("tuned").family == "meta"
    before = (path / "arena.toml").read_bytes()
    assert_user_error(invoke("entry", "add", "x", "--debater", "direct", "--model", "openai/gpt-4o", "--family",
                             "Open AI", "-w", path), "--family", "'Open AI'")
    assert (path / "arena.toml").read_bytes() == before


# --- a jury on the simulator -----------------------------------------------------------------------------------

# Stand-ins for real models (offline/PROVIDER/MODEL): simulated, yet of the real models' families.
POOL = ["offline/openai/gpt-4o-mini", "offline/anthropic/claude-3-5-haiku-latest", "offline/gemini/gemini-2.0-flash",
        "offline/mistral/mistral-small-latest", "offline/deepseek/deepseek-chat", "offline/xai/grok-2-latest"]
DEBATERS = {"o": "openai", "n": "anthropic", "g": "google"}


def jury(name: str = "jury", pool=POOL, **options) -> dict:
    return {"name": name, "kind": "jury", "options": {"pool": list(pool), **options}}


def jury_workspace(path, **options):
    return new_workspace(path, motions=["builtin:en"], judges=[jury(**options)],
                         entries=[entry(name, family=family) for name, family in DEBATERS.items()])


def panels(ws, judge_name: str = "jury") -> dict[str, list]:
    """Each match's verdicts of the judge, as (panelist, failed) in run order."""
    return {m["id"]: [v for v in app.match_get(ws, m["id"]).verdicts if v.judge == judge_name]
            for m in app.match_list(ws)}


def test_a_jury_seats_size_models_of_other_families_than_the_debaters_and_the_same_on_a_rerun(tmp_path):
    path = jury_workspace(tmp_path / "ws", size=3)
    ws = app.open_workspace(path)
    try:
        assert ws.config.judge("jury").runs == 3  # R is the size
        app.schedule(ws, "round-robin", rounds=1)
        assert app.run(ws, concurrency=2, progress=lambda line: None)["done"] == 6
        first = panels(ws)
        seated = {}
        for match_id, verdicts in first.items():
            match = app.match_get(ws, match_id)
            assert match.simulated
            assert [v.run for v in verdicts] == [0, 1, 2] and not any(v.failed for v in verdicts)
            drawn = [v.extra["panelist"] for v in verdicts]
            assert len(set(drawn)) == 3 and set(drawn) <= set(POOL)
            debaters = {DEBATERS[match.pro], DEBATERS[match.con]}
            assert not {family_of(model) for model in drawn} & debaters, (match_id, drawn, debaters)
            assert [bool(v.extra.get("swapped")) for v in verdicts] == [False, True, False]  # swap_sides per run
            seated[match_id] = drawn
        assert len({tuple(sorted(d)) for d in seated.values()}) > 1  # each match its own draw

        app.judge(ws, ["jury"], rejudge=True, progress=lambda line: None)
        assert {m: [v.extra["panelist"] for v in vs] for m, vs in panels(ws).items()} == seated
    finally:
        ws.close()


def test_a_pool_that_cannot_seat_a_jury_fails_that_matchs_judging_naming_the_families(tmp_path):
    pool = POOL[:3]  # openai, anthropic, google: one model of neither debater's family
    path = jury_workspace(tmp_path / "ws", pool=pool, size=2)
    ws = app.open_workspace(path)
    try:
        app.schedule(ws, "round-robin", rounds=1)
        app.run(ws, concurrency=2, progress=lambda line: None)
        for match_id, verdicts in panels(ws).items():
            match = app.match_get(ws, match_id)
            assert len(verdicts) == 2 and all(v.failed and v.overall is None for v in verdicts)
            assert not any("panelist" in v.extra for v in verdicts)  # nobody sat: no same-family model instead
            error = verdicts[0].error
            assert f"'{DEBATERS[match.pro]}' (PRO) and '{DEBATERS[match.con]}' (CON)" in error, error
            assert f"match {match_id}" in error and "1 of its pool's 3 models is of neither" in error
            for model in pool:
                assert f"{model} ({family_of(model)})" in error
    finally:
        ws.close()

    # More families in the pool: `arena judge` judges the failed matches again, and now the jury sits.
    config = path / "arena.toml"
    config.write_text(config.read_text(encoding="utf-8").replace(json.dumps(pool)[:-1], json.dumps(pool)[:-1]
                                                                 + ', "offline/xai/grok-2-latest"'),
                      encoding="utf-8")
    ws = app.open_workspace(path)
    try:
        assert len(ws.config.judge("jury").models) == 4
        app.judge(ws, ["jury"], progress=lambda line: None)
        for verdicts in panels(ws).values():
            assert len(verdicts) == 2 and not any(v.failed for v in verdicts)
            assert "offline/xai/grok-2-latest" in {v.extra["panelist"] for v in verdicts}
    finally:
        ws.close()


def test_avoid_same_family_false_draws_from_the_whole_pool(tmp_path):
    path = jury_workspace(tmp_path / "ws", pool=POOL[:3], size=3, avoid_same_family=False)
    ws = app.open_workspace(path)
    try:
        app.schedule(ws, "round-robin", rounds=1)
        app.run(ws, concurrency=2, progress=lambda line: None)
        for verdicts in panels(ws).values():
            assert sorted(v.extra["panelist"] for v in verdicts) == sorted(POOL[:3])
    finally:
        ws.close()


def test_arena_check_probes_each_pool_model_and_names_its_family(tmp_path):
    path = jury_workspace(tmp_path / "ws", pool=POOL[:4], size=2)
    checked = invoke("check", "-w", path, "--format", "json")
    assert checked.exit_code == 0, checked.output
    rows = [r for r in json.loads(checked.output) if r["name"] == "jury"]
    assert [(r["model"], r["family"]) for r in rows] == [(m, family_of(m)) for m in POOL[:4]]
    assert all(r["ok"] for r in rows)
    entries = {r["name"]: r["family"] for r in json.loads(checked.output) if r["name"] in DEBATERS}
    assert entries == DEBATERS  # arena.toml's family, not the offline model's own
    table = invoke("check", "-w", path)
    assert table.output.splitlines()[0].split()[:3] == ["name", "model", "family"]


def test_a_jury_of_real_models_needs_their_keys_before_anything_is_sent(tmp_path):
    path = new_workspace(tmp_path / "ws", entries=[entry("a"), entry("b")],
                         judges=[jury(pool=["offline/x", "anthropic/claude-3-5-haiku-latest"], size=2)])
    assert_user_error(invoke("check", "-w", path), "ANTHROPIC_API_KEY", "jury")


@pytest.mark.parametrize("keys, fragments", [
    ({"runs": 3}, ["judges[0].runs", "leave runs out"]),
    ({"model": "openai/gpt-4o"}, ["judges[0].model", "leave model out"]),
    ({"options": {"size": 2}}, ["judges[0].options", "option pool is required"]),
    ({"options": {"pool": ["offline/x"], "size": 2}}, ["judges[0].options", "pool lists 1 model, fewer than size = 2"]),
    ({"options": {"pool": ["offline/x", "offline/x"], "size": 1}}, ["judges[0].options", "option pool"]),
    ({"options": {"pool": ["nosuchprovider/x"], "size": 1}}, ["judges[0].options", "option pool"]),
    ({"options": {"pool": ["offline/x"], "size": 1, "inner": "human"}}, ["option inner = 'human'"]),
    ({"options": {"pool": ["offline/x"], "size": 1, "inner": "jury"}}, ["option inner = 'jury'"]),
    ({"options": {"pool": ["offline/x"], "size": 1, "inner": "nosuch"}}, ["unknown judge kind", "single"]),
    ({"options": {"pool": ["offline/x"], "size": 1, "referees": 2}}, ["its inner single judge", "referees"]),
], ids=["runs", "model", "no-pool", "small-pool", "repeated", "provider", "human", "jury", "unknown", "inner-option"])
def test_a_jury_that_cannot_be_exits_2_naming_the_key(tmp_path, keys, fragments):
    table = {"name": "jury", "kind": "jury", **keys}
    table["options"] = {"pool": ["offline/x", "offline/y"], **table.get("options", {})} \
        if "options" not in keys else table["options"]
    path = new_workspace(tmp_path / "ws", init=None, entries=[entry("a"), entry("b")], judges=[table])
    assert_user_error(invoke("entry", "list", "-w", path), *fragments)


def test_the_inner_kinds_options_go_to_it(tmp_path):
    path = new_workspace(tmp_path / "ws", entries=[entry("a"), entry("b")],
                         judges=[jury(pool=["offline/x", "offline/y"], size=2, inner="panel", referees=2, turns=1,
                                      temperature=0.3)])
    ws = app.open_workspace(path)
    try:
        inner = ws.judges["jury"].inner
        assert (type(inner).__name__, inner.options["turns"], inner.options["temperature"]) == ("PanelJudge", 1, 0.3)
        assert len(inner.personas) == 2
    finally:
        ws.close()


def test_judge_add_registers_a_jury_without_model_or_runs(tmp_path):
    path = new_workspace(tmp_path / "ws", init="cli", entries=[entry("a"), entry("b")])
    added = invoke("judge", "add", "jury", "--kind", "jury", "--option", f"pool={json.dumps(POOL[:4])}",
                   "--option", "size=2", "-w", path)
    assert added.exit_code == 0, added.output
    assert "added judge 'jury' (jury, 2 models a match drawn from a pool of 4)" in added.output
    spec = load_config(path).judge("jury")
    assert (spec.runs, spec.models, spec.simulated) == (2, tuple(POOL[:4]), True)
    assert_user_error(invoke("judge", "add", "j2", "--kind", "jury", "--option", f"pool={json.dumps(POOL[:4])}",
                             "--runs", "3", "-w", path), "--runs", "leave runs out")


def test_a_dry_run_simulates_the_jury_of_real_models_as_it_would_draw(tmp_path):
    real = ["openai/gpt-4o-mini", "anthropic/claude-3-5-haiku-20241022", "gemini/gemini-1.5-flash",
            "mistral/mistral-small-latest"]
    path = new_workspace(tmp_path / "ws", entries=[entry("o", model="openai/gpt-4o"),
                                                   entry("n", model="anthropic/claude-3-5-sonnet-20241022")],
                         judges=[jury(pool=real, size=2)])
    ws = app.open_workspace(path)
    try:
        app.schedule(ws, "round-robin", rounds=1)
        projected = app.dry_run(ws, every=1)
    finally:
        ws.close()
    calls = {row["model"]: row["calls"] for row in projected["models"]}
    # Between an OpenAI and an Anthropic debater the jury seats the Gemini and Mistral models, once per match each.
    assert calls["gemini/gemini-1.5-flash"] == calls["mistral/mistral-small-latest"] == 2
    assert "openai/gpt-4o-mini" not in calls and "anthropic/claude-3-5-haiku-20241022" not in calls
    assert not projected["failed"]


# --- what each panelist saw, over HTTP -------------------------------------------------------------------------

def test_each_panelist_is_asked_once_per_run_on_its_own_model_reading_the_sides_its_run_reads(tmp_path, fake_llm):
    """Debaters alpha and beta (families alpha-model and beta-model) on the fake server; a jury of four of its
    models, one of them alpha's own: the other three sit, each asked exactly one verdict."""
    fake_llm.responder = debate_responder()
    pool = ["openai/alpha-model", "openai/p1-model", "openai/p2-model", "openai/p3-model"]
    path = write_workspace(tmp_path / "ws", fake_llm.api_base,
                           judges=[{**jury(pool=pool, size=3), "api_base": fake_llm.api_base}])
    played = play_with(path, "jury")
    verdict_requests = [r.body for r in fake_llm.requests if r.body.get("response_format")]
    assert Counter(body["model"] for body in verdict_requests) == {"p1-model": 2, "p2-model": 2, "p3-model": 2}

    ws = app.open_workspace(path)
    try:
        matches = [app.match_get(ws, match_id) for match_id in played]
    finally:
        ws.close()
    for match in matches:
        verdicts = [v for v in match.verdicts if v.judge == "jury"]
        assert sorted(v.extra["panelist"] for v in verdicts) == pool[1:] and not any(v.failed for v in verdicts)
        # This match's verdict requests: those quoting its PRO's constructive (debate_responder's marker).
        asked = [b for b in verdict_requests
                 if f"SPEECH<{match.pro}-model|constructive|pro>" in b["messages"][-1]["content"]]
        assert Counter(b["model"] for b in asked) == {"p1-model": 1, "p2-model": 1, "p3-model": 1}
        for v in verdicts:
            [body] = [b for b in asked if b["model"] == v.extra["panelist"].removeprefix("openai/")]
            con = re.search(r"=== CON · constructive[^\n]*===\n(.*?)\n=== end", body["messages"][-1]["content"],
                            re.S).group(1)
            # The run that reads the sides exchanged (odd runs, swap_sides) shows PRO's speech under CON's label.
            assert ("|constructive|pro>" in con) == bool(v.extra.get("swapped")) == (v.run % 2 == 1), v


def test_the_site_names_a_jury_by_its_draw_not_a_model():
    from leaderboard.site import labels
    from leaderboard.site.render import judge_label

    jury = {"name": "j", "kind": "jury", "model": "", "runs": 3, "options": {"pool": ["a/x", "b/y", "c/z", "d/w"]}}
    assert judge_label(jury) == "jury of 3 drawn from 4 models"
    assert judge_label(jury, labels.plain("zh")) == "从 4 个模型中抽取 3 位评委"
    assert judge_label({"name": "s", "kind": "single", "model": "openai/gpt-4o", "runs": 3}) == "single · openai/gpt-4o"


# --- juries that say when they cannot sit (issue 49) ----------------------------------------------------------

# Debaters o (openai) and n (anthropic) meet twice (round-robin: each side once). A pool of an OpenAI and an Anthropic
# model can seat nobody between them; one of three other families seats a jury of 3.
UNSEATABLE = POOL[:2]
SEATS_THREE = POOL[:5]


def two_entry_jury(path, pool, size):
    return new_workspace(path, motions=["builtin:en"], judges=[jury(pool=pool, size=size)],
                         entries=[entry("o", family="openai"), entry("n", family="anthropic")])


def test_a_run_whose_jury_can_seat_nobody_counts_its_matches_failed_and_exits_1_naming_the_families(tmp_path):
    path = two_entry_jury(tmp_path / "ws", UNSEATABLE, 1)
    assert invoke("schedule", "--format", "round-robin", "-w", path).exit_code == 0
    ran = invoke("run", "-w", path, "--concurrency", "2")
    assert ran.exit_code == 1, ran.output
    assert "0 done, 2 failed, of 2" in ran.stdout, ran.stdout
    failures = [line for line in ran.stderr.splitlines() if " failed: " in line]
    assert len(failures) == 2, ran.stderr
    for line in failures:
        assert "judging failed" in line and "'arena judge' judges it again" in line
        assert "'openai'" in line and "'anthropic'" in line, line
        for model in UNSEATABLE:
            assert f"{model} ({family_of(model)})" in line, line
    # The matches are stored with their speeches, each run a failed verdict that says why: `arena judge` retries them.
    ws = app.open_workspace(path)
    try:
        for match_id, verdicts in panels(ws).items():
            match = app.match_get(ws, match_id)
            assert match.status == "done" and len(match.speeches) == 6
            assert [(v.failed, v.extra) for v in verdicts] == [(True, {"unseated": True})]
    finally:
        ws.close()


def test_a_rejudge_that_can_seat_nobody_keeps_the_stored_verdicts_and_says_so(tmp_path):
    path = two_entry_jury(tmp_path / "ws", SEATS_THREE, 3)
    ws = app.open_workspace(path)
    try:
        app.schedule(ws, "round-robin", rounds=1)
        assert app.run(ws, concurrency=2, progress=lambda line: None)["failed"] == 0
        before = panels(ws)
    finally:
        ws.close()
    stored = [(v.run, v.overall, v.rationale, v.extra["panelist"]) for vs in before.values() for v in vs]
    assert len(stored) == 6 and all(overall for _, overall, _, _ in stored)

    # The pool loses a family: two models of neither debater's, fewer than size = 3.
    config = path / "arena.toml"
    config.write_text(config.read_text(encoding="utf-8").replace('"offline/deepseek/deepseek-chat"', ""
                                                                 ).replace(', ]', ']'), encoding="utf-8")
    rejudged = invoke("judge", "--judge", "jury", "--rejudge", "-w", path)
    assert rejudged.exit_code == 1, rejudged.output
    assert "6 stored verdicts kept in their place" in rejudged.stdout, rejudged.stdout
    assert "3 of 3 runs failed; its 3 stored verdicts kept: judge 'jury' (jury judge) cannot seat a jury of 3" \
        in rejudged.stderr, rejudged.stderr
    assert "'openai' (PRO) and 'anthropic' (CON)" in rejudged.stderr or "'anthropic' (PRO) and 'openai' (CON)" \
        in rejudged.stderr
    assert "stayed in their place, since a failure never replaces a verdict" in rejudged.output
    ws = app.open_workspace(path)
    try:
        after = panels(ws)
    finally:
        ws.close()
    assert [(v.run, v.overall, v.rationale, v.extra["panelist"]) for vs in after.values() for v in vs] == stored


def test_arena_check_warns_of_a_jury_that_cannot_sit_naming_it_and_the_families(tmp_path):
    path = two_entry_jury(tmp_path / "ws", UNSEATABLE, 1)
    before = invoke("check", "-w", path)  # nothing scheduled: every two active entries
    assert before.exit_code == 0, before.output
    [warning] = [line for line in before.stderr.splitlines() if "cannot seat" in line]
    assert warning.startswith("warning: entries o and n: judge 'jury' (jury judge) cannot seat a jury of 1 on a match "
                              "of theirs: the debaters' families are 'openai' (PRO) and 'anthropic' (CON)"), warning
    assert "(pool: offline/openai/gpt-4o-mini (openai), offline/anthropic/claude-3-5-haiku-latest (anthropic))" \
        in warning
    assert invoke("schedule", "--format", "round-robin", "-w", path).exit_code == 0
    after = invoke("check", "-w", path, "--format", "json")
    assert after.exit_code == 0, after.output
    [warning] = [line for line in after.stderr.splitlines() if "cannot seat" in line]
    assert "2 scheduled matches between entries of these families (e.g. " in warning
    assert re.search(r"cannot seat a jury of 1 on match m\d+: the debaters' families are", warning), warning
    json.loads(after.stdout)  # the JSON stays whole: warnings go to stderr

    seated = two_entry_jury(tmp_path / "ok", SEATS_THREE, 3)
    assert "cannot seat" not in invoke("check", "-w", seated).stderr


def test_entry_list_and_check_warn_of_a_family_the_table_contradicts_and_of_a_guess_a_jury_relies_on(tmp_path):
    entries = [entry("mislabelled", model="offline/openai/gpt-4o", family="anthropic"),
               entry("tuned", model="offline/openai/my-finetune"), entry("eu", model="offline/azure/prod-eu"),
               entry("fine", model="offline/anthropic/claude-3-5-haiku-latest"),
               entry("sim", model="offline/sim", family="google")]
    alone = new_workspace(tmp_path / "alone", entries=entries)
    rows = {r["name"]: r["family_warning"] for r in json.loads(invoke("entry", "list", "-w", alone,
                                                                      "--format", "json").output)}
    # Without a jury only the contradiction matters; the simulator's own family (offline/NAME) may be declared.
    assert rows["mislabelled"] == ("declared family 'anthropic' contradicts the family table, which makes "
                                   "offline/openai/gpt-4o 'openai' (arena.domain.families); a jury seats by the "
                                   "declared one")
    assert rows["tuned"] is rows["eu"] is rows["fine"] is rows["sim"] is None

    path = new_workspace(tmp_path / "ws", entries=entries, judges=[jury(pool=POOL[2:5] + ["offline/openai/acme-7b"],
                                                                        size=2)])
    listed = invoke("entry", "list", "-w", path, "--format", "json")
    assert listed.exit_code == 0, listed.output
    rows = {r["name"]: r["family_warning"] for r in json.loads(listed.output)}
    assert rows["tuned"] == ("family 'my-finetune' is only guessed from the name offline/openai/my-finetune (the "
                             "family table knows no such model), and a jury seats by it: declare who made the model "
                             'with family = "..." in its [[entries]] table')
    assert "family 'prod-eu' is only guessed" in rows["eu"]
    assert "contradicts" in rows["mislabelled"] and rows["fine"] is rows["sim"] is None
    table = invoke("entry", "list", "-w", path)
    assert table.output.splitlines()[0].split()[-1] == "warning"
    assert [line.split()[0] for line in table.output.splitlines()[1:] if "only guessed" in line or "contradicts" in line
            ] == ["mislabelled", "tuned", "eu"]

    checked = invoke("check", "-w", path)
    assert checked.exit_code == 0, checked.output
    warnings = [line for line in checked.stderr.splitlines() if line.startswith("warning: ")]
    assert "warning: entry 'mislabelled' (offline/openai/gpt-4o): declared family 'anthropic' contradicts" \
        in "\n".join(warnings)
    assert any(w.startswith("warning: entry 'tuned' (offline/openai/my-finetune): family 'my-finetune' is only "
                            "guessed") for w in warnings), warnings
    assert any(w.startswith("warning: entry 'eu' (offline/azure/prod-eu): family 'prod-eu'") for w in warnings)
    [pool] = [w for w in warnings if w.startswith("warning: judge 'jury' (jury judge), pool model "
                                                  "offline/openai/acme-7b: family 'acme-7b' is only guessed")]
    assert "take it out of the pool" in pool and "family =" not in pool  # a pool model has no family key
    assert not any("'fine'" in w or "'sim'" in w for w in warnings)
