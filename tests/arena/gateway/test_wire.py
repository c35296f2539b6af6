"""The two ways a request reaches a provider through litellm send the same request and give the same answer.

"direct" (litellm's provider transforms on its pooled HTTP client) is checked against "acompletion" (the
OpenAI SDK under litellm.acompletion) on real loopback HTTP: what the server saw, what came back, and which
error each failure became, for every provider the direct path takes.
"""
from __future__ import annotations

import asyncio
import time

import pytest

from arena.workspace.config import LLMSettings
from arena.gateway.llm import CallTag, ContextLengthError, LLMCallError, LLMGateway
from arena.gateway.catalog import ModelRef
from arena.gateway.retry import describe, retryable
from arena.gateway.wire import preload, send
from tests.support.fakes.openai_server import Reply

PROVIDERS = ["openai", "hosted_vllm", "mistral", "deepseek"]
MESSAGES = [{"role": "system", "content": "You argue for the motion."},
            {"role": "user", "content": "Motion: Cities should ban cars. Your constructive, please."}]
SCHEMA = {"title": "verdict", "type": "object", "properties": {"winner": {"type": "string", "enum": ["pro", "con"]}},
          "required": ["winner"], "additionalProperties": False}
PARAMS = [
    {"max_tokens": 200, "temperature": 0.3, "top_p": 0.9, "seed": 7, "stop": ["END"]},
    {"max_tokens": 64, "response_format": {"type": "json_schema", "json_schema": {"name": "verdict", "schema": SCHEMA}}},
    {"max_tokens": 64, "response_format": {"type": "json_object", "schema": SCHEMA}},
]


def sent(fake_llm, provider: str, params: dict, path: str, monkeypatch):
    """(what the server received, what send returned) for one request by path."""
    monkeypatch.setenv(f"{provider.upper()}_API_KEY", "sk-test-key")
    fake_llm.clear()
    response = asyncio.run(send(f"{provider}/some-model", MESSAGES, params, api_base=fake_llm.api_base,
                                timeout_s=10, path=path))
    [request] = fake_llm.requests
    return request, response


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("params", PARAMS, ids=["sampling", "json_schema", "json_object"])
def test_direct_sends_what_acompletion_sends_and_reads_the_same_answer(fake_llm, provider, params, monkeypatch):
    fake_llm.script(*[Reply(content='{"winner": "pro"}', prompt_tokens=31, completion_tokens=6)] * 2)

    direct, got = sent(fake_llm, provider, params, "direct", monkeypatch)
    sdk, want = sent(fake_llm, provider, params, "acompletion", monkeypatch)

    assert direct.path == sdk.path
    assert direct.body == sdk.body
    assert direct.headers["authorization"] == sdk.headers["authorization"] == "Bearer sk-test-key"
    assert not any(h.startswith("x-stainless") for h in direct.headers)
    if provider == "openai":  # acompletion sends through the OpenAI SDK, which adds its x-stainless headers
        assert any(h.startswith("x-stainless") for h in sdk.headers)
    assert got.choices[0].message.content == want.choices[0].message.content == '{"winner": "pro"}'
    assert got.choices[0].finish_reason == want.choices[0].finish_reason == "stop"
    assert (got.usage.prompt_tokens, got.usage.completion_tokens) == (31, 6)
    assert (want.usage.prompt_tokens, want.usage.completion_tokens) == (31, 6)


def test_the_price_is_litellms_for_a_priced_model_and_none_for_an_unknown_one(fake_llm, monkeypatch):
    fake_llm.script(*[Reply(content="Yes.", prompt_tokens=1000, completion_tokens=500)] * 4)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-key")

    def cost(model, path):
        response = asyncio.run(send(model, MESSAGES, {"max_tokens": 16}, api_base=fake_llm.api_base, timeout_s=10,
                                    path=path))
        return response._hidden_params["response_cost"]

    direct, sdk = cost("openai/gpt-4o-mini", "direct"), cost("openai/gpt-4o-mini", "acompletion")
    assert direct == pytest.approx(sdk) and direct == pytest.approx(1000 * 0.15e-6 + 500 * 0.6e-6)
    assert cost("openai/no-such-model", "direct") is None


def test_a_local_server_without_a_key_gets_a_placeholder_key_on_both_paths(fake_llm, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    fake_llm.script("One.", "Two.")
    for path in ("direct", "acompletion"):
        asyncio.run(send("openai/local", MESSAGES, {"max_tokens": 8}, api_base=fake_llm.api_base, timeout_s=10,
                         path=path))
    assert [r.headers["authorization"] for r in fake_llm.requests] == ["Bearer no-key-needed"] * 2


def test_a_provider_specific_parameter_goes_through_acompletion_and_reaches_the_server(fake_llm, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-key")
    fake_llm.script("Fine.")
    asyncio.run(send("openai/local", MESSAGES, {"max_tokens": 8, "top_k": 40}, api_base=fake_llm.api_base,
                     timeout_s=10, path="direct"))
    [request] = fake_llm.requests
    assert request.body["top_k"] == 40
    assert any(h.startswith("x-stainless") for h in request.headers)  # acompletion carried it


FAULTS = {
    "rate limited": Reply(status=429, content="Rate limit reached"),
    "server error": Reply(status=500, content="internal error"),
    "overloaded": Reply(status=503, content="overloaded"),
    "bad request": Reply(status=400, content="bad parameter temperature"),
    "no key": Reply(status=401, content="invalid api key"),
    "no model": Reply(status=404, content="model not found"),
    "format refused": Reply(status=400, content="response_format json_schema is not supported"),
    "window": Reply(status=400, content="This model's maximum context length is 8192 tokens. However, you "
                                        "requested 9000 tokens."),
}


@pytest.mark.parametrize("fault", FAULTS, ids=list(FAULTS))
def test_a_failure_becomes_the_same_litellm_error_on_both_paths(fake_llm, fault, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-key")
    caught = {}
    for path in ("direct", "acompletion"):
        fake_llm.faults.enqueue(FAULTS[fault])
        with pytest.raises(Exception) as info:
            asyncio.run(send("openai/m", MESSAGES, {"max_tokens": 8}, api_base=fake_llm.api_base, timeout_s=10,
                             path=path))
        caught[path] = info.value
    direct, sdk = caught["direct"], caught["acompletion"]
    assert type(direct) is type(sdk)
    assert direct.status_code == sdk.status_code == FAULTS[fault].status
    assert retryable(direct) == retryable(sdk)
    assert FAULTS[fault].content in str(direct)


def test_an_answer_that_is_not_json_is_a_retryable_server_error_on_both_paths(fake_llm, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-key")
    caught = []
    for path in ("direct", "acompletion"):
        fake_llm.faults.enqueue(Reply(raw="{not json"))
        with pytest.raises(Exception) as info:
            asyncio.run(send("openai/m", MESSAGES, {"max_tokens": 8}, api_base=fake_llm.api_base, timeout_s=10,
                             path=path))
        caught.append(info.value)
    assert [type(e).__name__ for e in caught] == ["InternalServerError"] * 2
    assert [e.status_code for e in caught] == [500, 500] and all(retryable(e) for e in caught)


def test_a_timeout_is_the_calls_deadline_on_both_paths(fake_llm, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-key")
    kinds = []
    for path in ("direct", "acompletion"):
        fake_llm.faults.enqueue(Reply(delay=1.5))
        fake_llm.script("Too late.")
        with pytest.raises(Exception) as info:
            asyncio.run(send("openai/m", MESSAGES, {"max_tokens": 8}, api_base=fake_llm.api_base, timeout_s=0.3,
                             path=path))
        kinds.append(type(info.value).__name__)
        assert retryable(info.value)
    assert kinds == ["CallTimeout", "CallTimeout"]  # the deadline of the whole call, before the clients' own


@pytest.mark.parametrize("path", ["direct", "acompletion"])
def test_a_trickling_server_meets_the_whole_calls_deadline_on_both_paths(fake_llm, store, path):
    """Headers at once, then a byte of the answer every 0.5 s (some 150 s in all): every read comes within the
    clients' read timeout, but the call's 2 s bound the whole call. Told as a timeout; its connection closed. ~2 s."""
    fake_llm.trickle_s = 0.5
    gateway = LLMGateway(LLMSettings(retries=0, timeout_s=2, cache=False, litellm_path=path), store)
    ref = ModelRef("openai/m", api_base=fake_llm.api_base)
    preload()  # litellm's import, seconds of this machine's, not part of the call

    started = time.monotonic()
    with pytest.raises(LLMCallError, match="CallTimeout: no whole answer within 2 s") as failed:
        asyncio.run(gateway.call(ref, MESSAGES, {"max_tokens": 8}, tag=CallTag(role="judge")))
    took = time.monotonic() - started

    assert 1.9 < took < 3.5, took
    assert "after 1 tries" in str(failed.value)  # a timeout is worth another try, though none was left
    assert store.conn.execute("SELECT error FROM calls").fetchone()[0].startswith("CallTimeout")


@pytest.mark.parametrize("path", ["direct", "acompletion"])
def test_the_gateway_retries_falls_back_and_reads_windows_alike_on_both_paths(fake_llm, store, path):
    gateway = LLMGateway(LLMSettings(retries=2, backoff_s=0.01, timeout_s=10, cache=False, litellm_path=path), store)
    ref = ModelRef("openai/m", api_base=fake_llm.api_base)
    tag = CallTag(role="judge")

    fake_llm.faults.enqueue(FAULTS["rate limited"], FAULTS["format refused"])
    fake_llm.script('{"winner": "con"}')
    answer = asyncio.run(gateway.complete(ref, MESSAGES, tag=tag, schema=SCHEMA))
    assert answer.data == {"winner": "con"}
    formats = [r.body.get("response_format", {}).get("type") for r in fake_llm.requests]
    assert formats == ["json_schema", "json_schema", "json_object"]  # retried the 429, fell back on the refusal

    fake_llm.faults.enqueue(FAULTS["window"])
    with pytest.raises(ContextLengthError):
        asyncio.run(gateway.complete(ref, MESSAGES, tag=tag))
    assert gateway.facts(ref)["refused_beyond"] == 8192

    fake_llm.faults.enqueue(FAULTS["no key"])
    with pytest.raises(LLMCallError, match="401") as info:
        asyncio.run(gateway.complete(ref, MESSAGES, tag=tag, max_tokens=9))
    assert "tries" not in str(info.value)  # not retried
    assert len(fake_llm.requests) == 5


def test_a_refused_connection_is_named_and_not_retried_on_both_paths(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-key")
    for path in ("direct", "acompletion"):
        with pytest.raises(Exception) as info:
            asyncio.run(send("openai/m", MESSAGES, {"max_tokens": 8}, api_base="http://127.0.0.1:9/v1",
                             timeout_s=5, path=path))
        # litellm calls it a 500 on both paths; the cause down the chain says what happened, and asking again soon
        # will not change it.
        assert describe(info.value) == "cannot reach 127.0.0.1:9: connection refused"
        assert not retryable(info.value)

