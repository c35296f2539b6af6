"""What real model servers do, and what the gateway and a run make of it: refused structured-output modes
(fallbacks), answer caps, cut and empty answers, prompts fitted to the context window, keys redacted end to end,
`arena check` and the run's preflight probe, and cut speeches.

Every LLM call goes gateway -> real litellm -> openai SDK -> HTTP -> FakeOpenAI over loopback.
Nothing is patched: behaviour is asserted from the request bodies the fake server saw and from
the rows written to arena.db.
"""
from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from arena.domain import transcript
from arena.app import commands as app
from arena.app.commands import open_workspace
from arena.workspace.config import LLMSettings
from arena.gateway.fitting import Cut, Material, PromptTooLong, fit
from arena.gateway.llm import CallTag, LLMCallError, LLMGateway
from arena.gateway.catalog import ModelRef
from arena.gateway.probe import COUNT_PROMPT, READ_PROMPT
from arena.match.protocol import AgentLog, LLMHandle
from arena.domain.records import Speech
from arena.gateway.search import SearchResult
from arena.store import DB_NAME, Store
from arena.gateway.structured import TEXT_TOKENS, answer_tokens
from debaters.knowledge import KnowledgeBase
from debaters.params import Length, speech_tokens
from tests.support.fakes.openai_server import FakeOpenAI, Recorded, Reply, last_user
from tests.support.helpers import VERDICT, debate_responder, invoke, query, speech_text, stage_and_side, write_workspace

# ----------------------------------------------------------------------------- helpers

FAST = LLMSettings(max_concurrency=4, retries=1, timeout_s=10.0, cache=True, backoff_s=0.01, schema_retries=2)
MESSAGES = [{"role": "user", "content": "Motion: Cities should ban cars. Who won?"}]
TAG = CallTag(role="judge", match_id="m00001")
SCHEMA = {
    "title": "verdict",
    "type": "object",
    "properties": {"winner": {"type": "string", "enum": ["pro", "con"]}, "reason": {"type": "string"}},
    "required": ["winner", "reason"],
    "additionalProperties": False,
}
VALID = '{"winner": "pro", "reason": "Better evidence."}'
NOTE = "left out to fit the model's context window"
SCHEMA_REFUSED = "response_format type json_schema is not supported by this server"  # llama-cpp-python style
OBJECT_REFUSED = "response_format type json_object is not supported"
SECRET = "sk-test-SECRET-abcdef123456"


def gateway(store, **overrides) -> LLMGateway:
    return LLMGateway(replace(FAST, **overrides), store)


def model(fake_llm, name: str = "fake-model", **kw) -> ModelRef:
    return ModelRef(f"openai/{name}", api_base=fake_llm.api_base, **kw)


def complete(gw: LLMGateway, ref: ModelRef, messages=MESSAGES, **kw):
    return asyncio.run(gw.complete(ref, messages, tag=TAG, **kw))


def calls(store: Store) -> list[dict]:
    return [dict(r) for r in store.conn.execute("SELECT * FROM calls WHERE kind='llm' ORDER BY id")]


def formats(fake_llm) -> list[str | None]:
    """The response_format type of each request the server saw (None: none sent)."""
    return [(b.get("response_format") or {}).get("type") for b in fake_llm.bodies]


def refusing(*refused: str, answer: str = VALID):
    """A server that refuses the named response_format types as llama.cpp-style servers do, else answers."""
    def respond(body: dict):
        kind = (body.get("response_format") or {}).get("type")
        if kind == "json_schema" and "json_schema" in refused:
            return Reply(status=500, content=SCHEMA_REFUSED)
        if kind == "json_object" and "json_object" in refused:
            return Reply(status=400, content=OBJECT_REFUSED)
        return answer
    return respond


VOCAB = "the city should ban private cars because streets belong to people who walk and ride".split()


def words_text(n: int, tag: str) -> str:
    """n words of plain English (about a token each), the first a tag naming the speech."""
    return " ".join([f"<{tag}>"] + [VOCAB[i % len(VOCAB)] for i in range(n - 1)])


def db_texts(path: Path) -> list[str]:
    """Every text value of every column of every table of arena.db."""
    db = sqlite3.connect(path / DB_NAME)
    try:
        tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        return [v for t in tables for row in db.execute(f"SELECT * FROM {t}") for v in row if isinstance(v, str)]
    finally:
        db.close()


def unchecked_workspace(path: Path, api_base: str) -> Path:
    """As tests.support.helpers.write_workspace (R = 1, one retry), but no model is known to work: `arena run` probes
    them first."""
    return write_workspace(path, api_base, judge_runs=1, retries=1, checked=False)


def schedule(path: Path) -> None:
    ws = open_workspace(path)
    try:
        app.schedule(ws, "round-robin", rounds=1)
    finally:
        ws.close()


def is_probe(request: Recorded) -> bool:
    """A request of the probe's: its chat, its structured answer, its window (asked of /models and /props), its
    measurement of the server (arena.gateway.probe.measure)."""
    if request.path not in FakeOpenAI.PATHS:
        return True
    text = last_user(request.body)
    return (text.startswith(("Reply with one word", MEASURE_COUNT, MEASURE_READ))
            or 'whose "word" is "ready"' in text)


MEASURE_COUNT, MEASURE_READ = COUNT_PROMPT.split("{}")[0], READ_PROMPT


def probing(responder):
    """responder, with the probe's requests answered as a healthy model answers them."""
    def respond(body: dict):
        if last_user(body).startswith("Reply with one word"):
            return "ready"
        if 'whose "word" is "ready"' in last_user(body):
            return '{"word": "ready"}'
        if last_user(body).startswith(MEASURE_COUNT):  # counting, cut at its max_tokens
            return " ".join(["one"] * body["max_tokens"])
        if last_user(body).startswith(MEASURE_READ):
            return "ok"
        return responder(body)
    return respond


# ---------------------------------------------------------------- 1. structured-output modes


def test_a_refused_json_schema_falls_back_to_json_object_with_the_schema_in_the_prompt(fake_llm, store):
    fake_llm.responder = refusing("json_schema")
    ref = model(fake_llm, structured="auto")

    result = complete(gateway(store), ref, schema=SCHEMA)

    assert result.data == {"winner": "pro", "reason": "Better evidence."}
    first, second = fake_llm.bodies
    assert first["response_format"]["type"] == "json_schema"
    assert second["response_format"] == {"type": "json_object", "schema": SCHEMA}
    assert json.dumps(SCHEMA, ensure_ascii=False) in last_user(second)
    assert json.dumps(SCHEMA) not in last_user(first)  # json_schema mode: the schema travels in response_format
    refused, answered = calls(store)
    assert "refused, falling back to json_object" in refused["error"]
    assert refused["structured"] == "json_schema"
    assert (answered["structured"], answered["error"]) == ("json_object", None)
    assert store.model_facts(ref.model, ref.api_base)["structured"] == "json_object"


def test_a_new_gateway_on_the_same_store_asks_json_object_directly(fake_llm, store):
    fake_llm.responder = refusing("json_schema")
    ref = model(fake_llm)
    complete(gateway(store), ref, schema=SCHEMA)
    fake_llm.clear()

    result = complete(gateway(store), ref, [{"role": "user", "content": "Another debate: who won?"}], schema=SCHEMA)

    assert result.data["winner"] == "pro"
    assert formats(fake_llm) == ["json_object"]  # the first request has no json_schema
    assert all(c["error"] is None for c in calls(store)[2:])


def test_when_json_object_is_refused_too_the_schema_is_asked_for_in_the_prompt(fake_llm, store):
    fake_llm.responder = refusing("json_schema", "json_object",
                                  answer='Sure! {"winner": "pro", "reason": "x"} Hope it helps')
    ref = model(fake_llm)

    result = complete(gateway(store), ref, schema=SCHEMA)

    assert result.data == {"winner": "pro", "reason": "x"}
    assert formats(fake_llm) == ["json_schema", "json_object", None]
    last = fake_llm.bodies[-1]
    assert "response_format" not in last
    assert json.dumps(SCHEMA, ensure_ascii=False) in last_user(last)
    assert [c["structured"] for c in calls(store)] == ["json_schema", "json_object", "prompt"]
    assert "refused, falling back to prompt" in calls(store)[1]["error"]
    assert store.model_facts(ref.model, ref.api_base)["structured"] == "prompt"


def test_a_forced_mode_is_used_from_the_first_request_and_not_fallen_back_from(fake_llm, store):
    fake_llm.responder = refusing("json_object")
    ref = model(fake_llm, structured="json_object")

    with pytest.raises(LLMCallError, match="json_object is not supported"):
        complete(gateway(store), ref, schema=SCHEMA)

    assert formats(fake_llm) == ["json_object"]  # a 400 refusal: no retry, and no other mode tried
    assert all("falling back" not in (c["error"] or "") for c in calls(store))
    assert "structured" not in (store.model_facts(ref.model, ref.api_base) or {})


def test_a_forced_json_object_mode_answers_from_the_first_request(fake_llm, store):
    fake_llm.responder = refusing("json_schema")
    result = complete(gateway(store), model(fake_llm, structured="json_object"), schema=SCHEMA)

    assert result.data["winner"] == "pro"
    assert formats(fake_llm) == ["json_object"]


def test_a_400_that_does_not_name_the_format_is_not_a_refusal(fake_llm, store):
    fake_llm.responder = lambda body: Reply(status=400, content="invalid api key")
    ref = model(fake_llm)

    with pytest.raises(LLMCallError, match="invalid api key"):
        complete(gateway(store), ref, schema=SCHEMA)

    assert formats(fake_llm) == ["json_schema"]
    [row] = calls(store)
    assert "falling back" not in row["error"]
    assert "structured" not in (store.model_facts(ref.model, ref.api_base) or {})


# ---------------------------------------------------------------- 2. max_tokens on every call


def test_a_text_call_without_max_tokens_is_capped_at_text_tokens(fake_llm, store):
    complete(gateway(store), model(fake_llm))
    assert fake_llm.bodies[0]["max_tokens"] == TEXT_TOKENS == 512


def test_a_schema_call_is_capped_by_its_schema(fake_llm, store):
    fake_llm.script(VALID)
    complete(gateway(store), model(fake_llm), schema=SCHEMA)
    assert fake_llm.bodies[0]["max_tokens"] == answer_tokens(SCHEMA)


def test_an_explicit_max_tokens_is_sent(fake_llm, store):
    complete(gateway(store), model(fake_llm), max_tokens=777)
    assert fake_llm.bodies[0]["max_tokens"] == 777


def test_the_entry_params_max_tokens_caps_the_answer_and_the_smaller_wins(fake_llm, store):
    gw = gateway(store, cache=False)
    complete(gw, model(fake_llm), max_tokens=777, params={"max_tokens": 100})
    complete(gw, model(fake_llm), max_tokens=50, params={"max_tokens": 100})
    assert [b["max_tokens"] for b in fake_llm.bodies] == [100, 50]


def test_a_real_model_answer_gets_at_most_half_its_window(fake_llm, store):
    complete(gateway(store), model(fake_llm, context_window=1000), max_tokens=777)
    assert fake_llm.bodies[0]["max_tokens"] <= 500


# ---------------------------------------------------------------- 3. cut and empty answers


def test_cut_json_is_re_asked_with_more_room(fake_llm, store):
    fake_llm.script(Reply(content='{"winner": "pro", "rea', finish_reason="length"), VALID)

    result = complete(gateway(store), model(fake_llm), schema=SCHEMA)

    assert result.data == {"winner": "pro", "reason": "Better evidence."}
    assert result.cut is False
    first, second = fake_llm.bodies
    assert second["max_tokens"] > first["max_tokens"]
    assert [c["finish_reason"] for c in calls(store)] == ["length", "stop"]


def test_json_cut_again_with_twice_the_room_fails_at_once(fake_llm, store):
    """Small models may pad JSON until any cap: a second cut is not asked again with yet more room."""
    fake_llm.script(Reply(content='{"winner": "pro", "reason": "', finish_reason="length"))

    with pytest.raises(LLMCallError, match="cut off twice, the second time at"):
        complete(gateway(store, schema_retries=5), model(fake_llm), schema=SCHEMA)

    first, second = fake_llm.bodies
    assert second["max_tokens"] == 2 * first["max_tokens"]


def test_cut_text_is_returned_marked_cut_without_a_re_ask(fake_llm, store):
    fake_llm.script(Reply(content="Cars choke our streets and", finish_reason="length"))

    result = complete(gateway(store), model(fake_llm))

    assert (result.text, result.cut) == ("Cars choke our streets and", True)
    assert len(fake_llm.requests) == 1
    assert calls(store)[0]["finish_reason"] == "length"


def test_an_empty_answer_is_asked_again(fake_llm, store):
    fake_llm.script(Reply(content="  \n "), "A real answer.")

    result = complete(gateway(store), model(fake_llm))

    assert result.text == "A real answer."
    assert len(fake_llm.requests) == 2


def test_only_empty_answers_fail_saying_the_answer_was_empty(fake_llm, store):
    fake_llm.script(Reply(content=""), Reply(content="   "))

    with pytest.raises(LLMCallError, match="the answer was empty"):
        complete(gateway(store), model(fake_llm))

    assert len(fake_llm.requests) == FAST.schema_retries + 1


# ---------------------------------------------------------------- 4. fitting


def knowledge(scores: dict[int, float]) -> KnowledgeBase:
    """Sources numbered 1.. with the given relevance scores."""
    kb = KnowledgeBase()
    kb.add([SearchResult(f"Title {n}", f"https://example.org/{n}", f"content of source {n} " * 5, score)
            for n, score in sorted(scores.items())])
    return kb


def speeches(*lengths: int) -> tuple[Speech, ...]:
    stages = ("constructive", "constructive", "rebuttal", "rebuttal", "summary", "summary")
    return tuple(Speech(stages[i], ("pro", "con")[i % 2], words_text(n, f"speech{i}")) for i, n in enumerate(lengths))


def material(kb: KnowledgeBase, spoken: tuple[Speech, ...]) -> Material:
    def render(cut: Cut) -> str:
        return f"Sources:\n{kb.render(drop=cut.sources)}\n\nDebate so far:\n{transcript.render(spoken, cut=cut)}"
    return Material(render, sources=len(kb.sources), speeches=transcript.words(spoken))


def shown(text: str) -> set[int]:
    return {n for n in range(1, 10) if f"[{n}] Title {n} " in text}


def test_fit_leaves_a_prompt_that_fits_whole():
    m = material(knowledge({1: 0.9, 2: 0.1}), speeches(50, 50))
    text, cut = fit(m, lambda t: True)
    assert cut.none and text == m.render(Cut())
    assert NOTE not in text


def test_fit_drops_the_lowest_ranked_sources_first_and_the_rest_keep_their_numbers():
    kb = knowledge({1: 0.5, 2: 0.1, 3: 0.9, 4: 0.05, 5: 0.7})
    assert kb.ranked() == [3, 5, 1, 2, 4]
    m = material(kb, speeches(40, 40))
    whole = m.render(Cut())
    limit = len(m.render(Cut(sources=2)))  # room for all but two sources

    text, cut = fit(m, lambda t: len(t) <= limit)

    assert len(whole) > limit
    assert cut == Cut(sources=2)
    assert shown(text) == {1, 3, 5}  # 4 (0.05) and 2 (0.1) went; the rest keep their numbers
    assert NOTE not in text  # no speech was touched while sources could still go
    assert transcript.render(speeches(40, 40)) in text


def test_fit_shortens_speeches_oldest_first_only_once_every_source_is_gone():
    kb = knowledge({1: 0.5, 2: 0.1, 3: 0.9})
    spoken = speeches(300, 300, 300)
    m = material(kb, spoken)
    limit = len(m.render(Cut(sources=3))) - 1000  # no source left, and still too long

    text, cut = fit(m, lambda t: len(t) <= limit)

    assert cut.sources == 3 and shown(text) == set()
    assert cut.speeches[0] is not None and cut.speeches[0] < 300  # the oldest speech is shortened
    assert cut.kept(1) is None and cut.kept(2) is None  # the later ones are whole
    assert NOTE in text
    assert spoken[2].text in text and spoken[1].text in text
    assert len(text) <= limit


def test_fit_moves_to_the_next_speech_when_the_oldest_is_all_gone():
    m = material(knowledge({1: 0.5}), speeches(300, 300, 300))
    limit = len(m.render(Cut(1, (0,)))) - 500

    text, cut = fit(m, lambda t: len(t) <= limit)

    assert cut.speeches[0] == 0 and 0 < cut.speeches[1] < 300
    assert cut.kept(2) is None
    assert text.count(NOTE) == 2


def test_fit_raises_prompt_too_long_when_nothing_fits():
    m = material(knowledge({1: 0.5, 2: 0.4}), speeches(30, 30))
    with pytest.raises(PromptTooLong):
        fit(m, lambda t: len(t) <= 10)


def debater_material(spoken: tuple[Speech, ...]) -> Material:
    """A prompt shaped like the direct debater's: instructions, then the debate so far, fitted by cutting it."""
    def render(cut: Cut) -> str:
        return (f"You are speaking for the PRO side. This is your summary speech.\n\n"
                f"{transcript.render(spoken, cut=cut)}\n\nWrite about 200 words.")
    return Material(render, speeches=transcript.words(spoken))


def handle(gw: LLMGateway, ref: ModelRef) -> LLMHandle:
    return LLMHandle(gw, ref, AgentLog(), match_id="m00001", stage="summary", side="pro")


def test_a_long_prompt_is_fitted_to_the_window_before_it_is_sent(fake_llm, store):
    spoken = speeches(600, 600, 600, 600)
    prompt = debater_material(spoken)
    gw = gateway(store)
    ref = model(fake_llm, context_window=2048)

    result = asyncio.run(handle(gw, ref).complete("writer", prompt, max_tokens=speech_tokens(Length(200, "words"))))

    assert result.text
    [body] = fake_llm.bodies
    sent = last_user(body)
    assert len(sent) < len(prompt.render(Cut()))
    assert NOTE in sent
    assert sent.startswith("You are speaking for the PRO side")  # the instructions are never cut
    assert spoken[3].text in sent  # the latest speech is kept whole
    [row] = calls(store)
    assert row["fitted"] == 1 and row["error"] is None


def test_a_prompt_that_fits_is_sent_whole_and_not_marked_fitted(fake_llm, store):
    prompt = debater_material(speeches(50, 50))
    asyncio.run(handle(gateway(store), model(fake_llm, context_window=2048)).complete("writer", prompt))
    assert last_user(fake_llm.bodies[0]) == prompt.render(Cut())
    assert calls(store)[0]["fitted"] == 0


CONTEXT_ERROR = ("This model's maximum context length is 2048 tokens. However, your messages resulted in "
                 "2300 tokens. Please reduce the length of the messages.")


def test_a_context_length_error_is_retried_once_with_a_tighter_budget(fake_llm, store):
    fake_llm.faults.enqueue(Reply(status=400, content=CONTEXT_ERROR))
    fake_llm.script("A summary that fits.")
    prompt = debater_material(speeches(600, 600, 600, 600))

    result = asyncio.run(handle(gateway(store), model(fake_llm, context_window=2048)).complete(
        "writer", prompt, max_tokens=speech_tokens(Length(200, "words"))))

    assert result.text == "A summary that fits."
    first, second = (last_user(b) for b in fake_llm.bodies)
    assert len(second) < len(first)
    assert NOTE in second
    refused, answered = calls(store)
    assert "maximum context length" in refused["error"]
    assert answered["error"] is None and answered["fitted"] == 1


def test_a_second_context_length_error_fails(fake_llm, store):
    fake_llm.faults.enqueue(Reply(status=400, content=CONTEXT_ERROR), Reply(status=400, content=CONTEXT_ERROR))
    prompt = debater_material(speeches(600, 600, 600, 600))

    with pytest.raises(LLMCallError, match="context"):
        asyncio.run(handle(gateway(store), model(fake_llm, context_window=2048)).complete(
            "writer", prompt, max_tokens=speech_tokens(Length(200, "words"))))

    assert len(fake_llm.requests) == 2


# ---------------------------------------------------------------- 5. redaction end to end


def test_an_echoed_key_is_redacted_everywhere_a_run_and_its_site_write_it(tmp_path, fake_llm, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    speech = debate_responder()

    def respond(body: dict):
        # gamma's model and the judge's model both leak the key they were sent in their 401s.
        if body["model"] == "gamma-model" or body.get("response_format"):
            return Reply(status=401, echo_authorization=True)
        return speech(body)

    fake_llm.responder = respond
    path = write_workspace(tmp_path / "ws", fake_llm.api_base, entries=("alpha", "beta", "gamma"), judge_runs=1)
    schedule(path)

    run = invoke("run", "-w", path)
    listed = invoke("match", "list", "-w", path, "--format", "json")
    published = invoke("publish", "-w", path)

    assert any(SECRET in h.get("authorization", "") for h in (r.headers for r in fake_llm.requests)), \
        "the key was never sent, so this test proves nothing"
    assert run.exit_code == 1, run.output
    assert published.exit_code == 0, published.output
    tail = SECRET[-12:]  # not even a fragment of the key is left behind
    for result in (run, listed, published):
        assert tail not in result.output
    texts = db_texts(path)
    assert not [t for t in texts if tail in t]
    errors = [r[0] for r in query(path, "SELECT error FROM matches WHERE error IS NOT NULL")]
    verdict_errors = [r[0] for r in query(path, "SELECT error FROM verdicts WHERE error IS NOT NULL")]
    call_errors = [r[0] for r in query(path, "SELECT error FROM calls WHERE error IS NOT NULL")]
    assert errors and verdict_errors and call_errors
    assert all("401" in e for e in errors + verdict_errors + call_errors)
    # The provider's answer, key and all, is not kept: the refused key is named by its variable.
    assert all("the key in OPENAI_API_KEY was refused (401 Unauthorized)" in e for e in call_errors)
    site = Path(published.output.strip()).parent
    files = [f for f in site.rglob("*") if f.is_file()]
    assert files
    assert not [f for f in files if tail in f.read_text(errors="replace")]


# ---------------------------------------------------------------- 6. arena check and the preflight


def test_check_reports_the_mode_that_works_and_the_window_the_server_names(tmp_path, fake_llm):
    fake_llm.models = [{"id": "judge-model", "object": "model", "max_model_len": 4096}]  # as vLLM lists it

    def respond(body: dict):
        return refusing("json_schema", answer='{"word": "ready"}')(body) if body.get("response_format") \
            else "ready"

    fake_llm.responder = respond
    path = unchecked_workspace(tmp_path / "ws", fake_llm.api_base)

    result = invoke("check", "-w", path, "--format", "json")

    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)
    # The direct entries never ask for JSON, so only the judge's model is probed for a structured mode.
    assert {r["name"]: r["structured"] for r in rows} == {"alpha": None, "beta": None, "j1": "json_object"}
    for row in rows:
        assert row["ok"] is True
        assert isinstance(row["latency_s"], (int, float))
        assert row["context_window"] == 4096
        assert row["error"] is None
    store = Store(path / DB_NAME)
    try:
        facts = store.model_facts("openai/judge-model", fake_llm.api_base)
    finally:
        store.close()
    assert (facts["ok"], facts["structured"], facts["context_window"]) == (True, "json_object", 4096)


def test_check_does_not_retry_a_refused_mode_as_if_the_server_were_down(tmp_path, fake_llm):
    """llama-cpp-python refuses json_schema with a 500 naming response_format. The gateway's own calls take that
    as a refusal and fall back at once; the probe asks each mode forced, so the refusal must not be retried
    like an overloaded server's 500 (with default settings: 5 requests and about 15 s of backoff per model)."""
    fake_llm.responder = lambda body: refusing("json_schema", answer='{"word": "ready"}')(body) \
        if body.get("response_format") else "ready"
    path = unchecked_workspace(tmp_path / "ws", fake_llm.api_base)  # [llm] retries = 1

    result = invoke("check", "j1", "-w", path, "--format", "json")

    assert result.exit_code == 0, result.output
    assert json.loads(result.output)[0]["structured"] == "json_object"
    refused = [b for b in fake_llm.bodies if (b.get("response_format") or {}).get("type") == "json_schema"]
    assert len(refused) == 1, (
        f"BUG arena/gateway/llm.py LLMGateway.call: the probe (arena/gateway/probe.py, _structured_mode) asks json_schema "
        f"with a forced ModelRef, so a refusal (a 500 whose message names response_format) skips the fallback "
        f"and is retried as a server error: json_schema was sent {len(refused)} times, with backoff in "
        f"between; a recognised refusal (arena.gateway.structured.refuses_format) of a structured mode should not be "
        f"retryable")


def test_check_of_a_model_that_answers_401_says_so_and_exits_1(tmp_path, fake_llm):
    fake_llm.responder = lambda body: Reply(status=401)
    path = unchecked_workspace(tmp_path / "ws", fake_llm.api_base)

    result = invoke("check", "j1", "-w", path, "--format", "json")

    assert result.exit_code == 1, result.output
    [row] = json.loads(result.output)
    assert row["name"] == "j1" and row["ok"] is False
    assert "401" in row["error"]


def test_check_of_an_unknown_name_exits_2(tmp_path, fake_llm):
    path = unchecked_workspace(tmp_path / "ws", fake_llm.api_base)
    result = invoke("check", "nobody", "-w", path)
    assert result.exit_code == 2, result.output
    assert "nobody" in result.output
    assert not fake_llm.requests


def test_run_refuses_to_play_when_the_judge_fails_the_probe(tmp_path, fake_llm):
    speech = probing(debate_responder())
    fake_llm.responder = lambda body: Reply(status=401) if body["model"] == "judge-model" else speech(body)
    path = unchecked_workspace(tmp_path / "ws", fake_llm.api_base)
    schedule(path)

    result = invoke("run", "-w", path)

    assert result.exit_code == 1, result.output
    assert "not usable" in result.output
    assert "j1" in result.output
    assert {s for (s,) in query(path, "SELECT status FROM matches")} == {"scheduled"}
    assert query(path, "SELECT COUNT(*) FROM speeches") == [(0,)]
    assert all(is_probe(r) for r in fake_llm.requests)  # nothing but probes was sent


def test_a_probe_killed_after_its_chat_answered_is_not_asked_it_again(tmp_path, fake_llm):
    """Each probe call's answer counts as soon as it is stored: `arena run` killed while the judge's structured
    probe is out (its chat answered) probes only what is left the next time, rather than paying for the chats
    again."""
    import signal
    import time

    from tests.support.running import start_run

    def structured_hangs(body):
        if 'whose "word" is "ready"' in last_user(body):
            return Reply(content='{"word": "ready"}', delay=60)
        return probing(debate_responder())(body)

    fake_llm.responder = structured_hangs
    path = unchecked_workspace(tmp_path / "ws", fake_llm.api_base)
    schedule(path)
    run = start_run(path)

    def chats() -> list[Recorded]:
        return [r for r in fake_llm.requests if is_probe(r) and last_user(r.body).startswith("Reply with one")]

    deadline = time.monotonic() + 60
    while not any('whose "word"' in last_user(r.body) for r in fake_llm.requests if r.path in FakeOpenAI.PATHS):
        assert time.monotonic() < deadline and run.poll() is None, run.poll()
        time.sleep(0.05)
    assert len(chats()) == 3  # alpha's, beta's and the judge's: all answered
    settled = "SELECT COUNT(*) FROM models WHERE json_extract(facts, '$.latency_s') IS NOT NULL"
    while query(path, settled) != [(3,)] and time.monotonic() < deadline:
        time.sleep(0.05)
    os.kill(run.pid, signal.SIGKILL)
    run.wait(timeout=30)

    fake_llm.responder = probing(debate_responder())
    fake_llm.clear()
    second = invoke("run", "-w", path)

    assert second.exit_code == 0, second.output
    assert chats() == []  # no chat probe paid twice
    assert any('whose "word"' in last_user(r.body) for r in fake_llm.requests if r.path in FakeOpenAI.PATHS)
    assert query(path, "SELECT COUNT(*) FROM matches WHERE status = 'done'") == [(2,)]


def test_a_probe_that_passes_is_remembered_and_the_next_run_sends_none(tmp_path, fake_llm):
    fake_llm.responder = probing(debate_responder())
    path = unchecked_workspace(tmp_path / "ws", fake_llm.api_base)
    schedule(path)

    first = invoke("run", "-w", path)

    assert first.exit_code == 0, first.output
    assert any(is_probe(r) for r in fake_llm.requests)
    store = Store(path / DB_NAME)
    try:
        for name in ("alpha", "beta", "judge"):
            assert store.model_facts(f"openai/{name}-model", fake_llm.api_base)["ok"] is True
    finally:
        store.close()
    schedule(path)
    fake_llm.clear()

    second = invoke("run", "-w", path)

    assert second.exit_code == 0, second.output
    assert fake_llm.bodies  # the new matches were played
    assert not [r for r in fake_llm.requests if is_probe(r)]


# ---------------------------------------------------------------- 7. cut speeches


def test_a_speech_cut_at_its_cap_is_stored_shown_and_published_as_cut(tmp_path, fake_llm):
    def respond(body: dict):
        if body.get("response_format"):
            return json.dumps(VERDICT)
        stage, side = stage_and_side(body)
        text = speech_text(f"SPEECH<{body['model']}|{stage}|{side}>") + " Our case is strong and"
        return Reply(content=text, finish_reason="length" if body["model"] == "alpha-model" else "stop")

    fake_llm.responder = respond
    path = write_workspace(tmp_path / "ws", fake_llm.api_base, judge_runs=1)
    schedule(path)

    assert invoke("run", "-w", path).exit_code == 0

    assert sorted(query(path, "SELECT m.pro = 'alpha' AND s.side = 'pro' OR m.con = 'alpha' AND s.side = 'con', "
                              "s.cut FROM speeches s JOIN matches m ON m.id = s.match_id")) == \
        [(0, 0)] * 6 + [(1, 1)] * 6
    shown = invoke("match", "show", "m00001", "-w", path, "--format", "json")
    data = json.loads(shown.output)
    alpha_side = "pro" if data["pro"] == "alpha" else "con"
    assert {(s["side"], s["cut"]) for s in data["speeches"]} == {(alpha_side, True),
                                                                 ({"pro": "con", "con": "pro"}[alpha_side], False)}
    published = invoke("publish", "-w", path)
    assert published.exit_code == 0, published.output
    page = (Path(published.output.strip()).parent / "matches" / "m00001.html").read_text()
    assert page.count("This speech was cut off") == 3


def test_raw_newlines_inside_json_strings_are_accepted():
    """Seen on the real local model: grammar-constrained JSON with a literal newline inside a string."""
    from arena.gateway.structured import parse_structured

    schema = {"type": "object", "properties": {"speech": {"type": "string"}}, "required": ["speech"]}
    data, problem = parse_structured('{"speech": "First line.\nSecond line."}', schema)
    assert problem == "" and data == {"speech": "First line.\nSecond line."}


def test_litellm_says_nothing_on_stderr_when_a_process_runs_several_event_loops(tmp_path):
    """`arena run` probes in one event loop and plays in another; litellm's logger warns about that."""
    script = tmp_path / "loops.py"
    script.write_text(
        "import asyncio\n"
        "from tests.support.fakes.openai_server import FakeOpenAI\n"
        "from arena.workspace.config import LLMSettings\n"
        "from arena.gateway.llm import CallTag, LLMGateway\n"
        "from arena.gateway.catalog import ModelRef\n"
        "with FakeOpenAI() as fake:\n"
        "    gateway, ref = LLMGateway(LLMSettings(cache=False)), ModelRef('openai/x', fake.api_base)\n"
        "    for i in range(3):\n"
        "        asyncio.run(gateway.complete(ref, [{'role': 'user', 'content': f'hi {i}'}], tag=CallTag('t')))\n"
        "print('done')\n")
    root = Path(__file__).resolve().parents[3]
    done = subprocess.run([sys.executable, str(script)], cwd=root, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(root)})
    assert done.returncode == 0 and done.stdout.strip() == "done", done.stderr
    assert done.stderr == ""
