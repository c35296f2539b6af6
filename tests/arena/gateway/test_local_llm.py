"""The real local LLM (SmolLM2-135M-Instruct on llama.cpp's server), reached through real litellm.

No fake anywhere: litellm -> openai SDK -> HTTP -> llama_cpp.server -> llama.cpp. Generation is kept to a
few tokens, so the whole module takes seconds once the session's server is up.
"""
from __future__ import annotations

import asyncio

import pytest

pytestmark = pytest.mark.slow


def _complete(llm, messages, **kw):
    import litellm

    return asyncio.run(litellm.acompletion(model=llm.model, api_base=llm.api_base, api_key="no-key-needed",
                                           messages=messages, num_retries=0, max_retries=0, **kw))


def test_answers_a_chat_with_text_and_real_usage(local_llm):
    response = _complete(local_llm, [{"role": "user", "content": "Say hello in one short sentence."}],
                         max_tokens=16)

    choice = response.choices[0]
    assert choice.message.content.strip()
    assert choice.finish_reason in ("stop", "length")
    usage = response.usage
    assert usage.prompt_tokens > 0 and usage.completion_tokens > 0
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens
    assert usage.completion_tokens <= 16


def test_reports_length_when_max_tokens_is_hit(local_llm):
    response = _complete(local_llm, [{"role": "user", "content": "Write a long story about a debate."}],
                         max_tokens=2)

    assert response.choices[0].finish_reason == "length"
    assert response.usage.completion_tokens == 2


def test_json_object_with_schema_is_constrained_and_json_schema_is_rejected(local_llm):
    """What tests/support/local_llm.py's header says: the stock server grammar-constrains {"type": "json_object",
    "schema": ...} but fails {"type": "json_schema", ...} (what arena.gateway.llm sends) with HTTP 500."""
    import json

    import litellm

    schema = {"type": "object", "properties": {"winner": {"type": "string", "enum": ["pro", "con"]}},
              "required": ["winner"]}
    messages = [{"role": "user", "content": "Who won the debate, pro or con? Answer in JSON."}]

    response = _complete(local_llm, messages, max_tokens=40, response_format={"type": "json_object", "schema": schema})
    assert json.loads(response.choices[0].message.content)["winner"] in ("pro", "con")

    with pytest.raises(litellm.InternalServerError) as caught:
        _complete(local_llm, messages, max_tokens=24,
                  response_format={"type": "json_schema", "json_schema": {"name": "verdict", "schema": schema}})
    assert caught.value.status_code == 500
    assert "Input should be 'text' or 'json_object'" in str(caught.value)
