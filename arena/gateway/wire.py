"""One chat request to a provider, through litellm.

Where litellm has the provider's request and response transforms (its provider config) and the request
uses only OpenAI's parameters, the request is built and parsed by those transforms and sent on litellm's
pooled HTTP client: the same request and the same answer as litellm.acompletion, at about a third of its
CPU per call, because acompletion's per-call machinery (a thread hop, a logging object, callbacks, pricing
twice, the OpenAI SDK) is what made one process top out near 40 calls a second. Every other provider and
request goes through litellm.acompletion, as does every request when [llm] litellm_path = "acompletion".
"""
from __future__ import annotations

import asyncio
import functools
import json
import os
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, TypeVar

from arena.gateway.chat import Params, Sent
from arena.gateway.credentials import stand_in_key
from arena.gateway.lazy import litellm
from arena.gateway.catalog import price, response_cost

PATHS = ("direct", "acompletion")  # [llm] litellm_path

# Providers whose chat litellm sends as OpenAI-style JSON over HTTP with the provider config's transforms,
# and whose key litellm reads from <PROVIDER>_API_KEY: each checked to send what acompletion sends.
_DIRECT = {"openai", "hosted_vllm", "mistral", "deepseek"}
# The defaults litellm.completion applies itself for these (get_llm_provider names the others' bases).
_DEFAULT_BASE = {"openai": "https://api.openai.com/v1"}
# OpenAI's chat parameters that every provider config maps; any other parameter (a provider's own, like
# top_k) is passed on by acompletion in ways the transforms alone do not reproduce, so it goes that way.
_MAPPED = {"max_tokens", "max_completion_tokens", "temperature", "top_p", "seed", "stop", "n", "presence_penalty",
           "frequency_penalty", "logit_bias", "user", "response_format"}


def preload() -> None:
    """Import litellm now: before forking worker processes, so that they share the import instead of each
    paying its seconds."""
    litellm()
    _internals()


# A forked process's copies of the parent's clients (litellm's cache: keys and clients untyped): kept, never used nor
# collected
_INHERITED: list[dict[Any, Any]] = []


def forget_clients() -> None:
    """In a forked process: set aside the HTTP clients litellm cached in the parent, whose connections and
    event loop belong to the parent; litellm makes new ones on first use. They are kept referenced, because
    collecting them would warn about unclosed sessions that are the parent's to close."""
    if litellm.cache_info().currsize:
        cache = litellm().in_memory_llm_clients_cache
        _INHERITED.append(dict(cache.cache_dict))
        cache.flush_cache()


# litellm's ModelResponse. mypy does not follow litellm (pyproject.toml), so an answer is untyped until read_reply reads
# what the arena uses of it; tests read the rest (its _hidden_params).
ModelResponse = Any


@dataclass(frozen=True)
class Reply:
    """What the arena reads of a provider's answer: its text, why it stopped, its tokens and its price."""

    text: str
    finish_reason: str | None
    prompt_tokens: int
    completion_tokens: int
    cost: float | None  # None when litellm's price map does not know the model
    cached_tokens: int = 0  # of prompt_tokens, those the provider read from its prompt cache


def read_reply(response: ModelResponse) -> Reply:
    """A chat answer as the arena reads it: the one place litellm's untyped response becomes typed. An answer
    without usage counts no tokens; one without text is empty."""
    choice = response.choices[0]
    usage = getattr(response, "usage", None)
    text: str = choice.message.content or ""
    finish: str | None = getattr(choice, "finish_reason", None)
    prompt: int = getattr(usage, "prompt_tokens", 0) or 0
    completion: int = getattr(usage, "completion_tokens", 0) or 0
    return Reply(text, finish, prompt, completion, response_cost(response), cached_tokens(usage))


def cached_tokens(usage: Any) -> int:
    """The prompt tokens a provider read from its prompt cache, as litellm's Usage gives them: OpenAI's
    prompt_tokens_details.cached_tokens, where litellm also puts Anthropic's cache_read_input_tokens and DeepSeek's
    prompt_cache_hit_tokens; Anthropic's own field when only it is there. 0 when the provider says nothing; never
    more than the prompt's tokens."""
    details = getattr(usage, "prompt_tokens_details", None)
    found = getattr(details, "cached_tokens", None) if details is not None else None
    if not isinstance(found, int):
        found = getattr(usage, "cache_read_input_tokens", None)
    prompt = getattr(usage, "prompt_tokens", 0) or 0
    return max(0, min(found, prompt)) if isinstance(found, int) else 0


BACKSTOP_S = 1.0  # a client's own timeout is the deadline's and this much more: a backstop, never the one that fires
T = TypeVar("T")


class CallTimeout(TimeoutError):
    """No whole answer within the call's timeout: the deadline of the whole call, connection to last byte, which a
    server that keeps sending (a byte now and then) cannot stretch; retried as any timeout is (arena.gateway.retry)."""


async def send(model: str, messages: list[Sent], params: Params, *, api_base: str = "",
               timeout_s: float, path: str = "direct") -> ModelResponse:
    """litellm's ModelResponse to one chat request, without retries (the gateway retries), unknown parameters
    dropped; errors are litellm's exception types, and CallTimeout when the whole answer has not come within
    timeout_s; response._hidden_params["response_cost"] is the price from litellm's map (None when the model is
    not in it)."""
    # The clients' own timeouts bound each read (and connect), not the call: a server that sends a byte a second
    # would never meet them. The deadline cancels the request, which closes its connection; the clients' timeouts,
    # a little later, are a backstop, so that every timeout is the deadline's, on both paths.
    litellm()  # imported before the clock starts (once): seconds of the machine's, not the server's
    return await within(timeout_s, "call", _send(model, messages, params, api_base=api_base,
                                                 timeout_s=timeout_s + BACKSTOP_S, path=path))


async def within(timeout_s: float, what: str, work: Awaitable[T]) -> T:
    """work's result, or CallTimeout when timeout_s has passed before it came (what: the timeout's name in the
    message); a failure of work's own within the time is raised as it came. Every call's deadline, a model's or a
    search's: the clients' own timeouts bound each read, which a server that trickles its answer meets."""
    deadline = asyncio.timeout(timeout_s)
    try:
        async with deadline:
            return await work
    except Exception:
        if not deadline.expired():  # the call's own failure (a client's own timeout among them): as it came
            raise
        raise CallTimeout(f"no whole answer within {timeout_s:g} s (the {what}'s timeout, connection to last "
                          f"byte)") from None


async def _send(model: str, messages: list[Sent], params: Params, *, api_base: str,
                timeout_s: float, path: str) -> ModelResponse:
    api_key = None
    if stand_in_key(model, api_base):  # local OpenAI-compatible servers need no key; the clients insist on one
        api_key = "no-key-needed"
    route = _route(model, api_base) if path == "direct" and params.keys() <= _MAPPED else None
    if route is None:
        kwargs = dict(params, api_base=api_base) if api_base else dict(params)
        # Our own loop retries; litellm's and the OpenAI client's retries would multiply the attempts.
        return await litellm().acompletion(model=model, messages=messages, timeout=timeout_s, num_retries=0,
                                           max_retries=0, drop_params=True, api_key=api_key, **kwargs)
    return await _direct(route, model, messages, params, api_key, timeout_s)


@functools.lru_cache(maxsize=None)
def _route(model: str, api_base: str) -> _Route | None:
    """(name, provider, config, base, key from the provider's settings) for the direct path; None: acompletion."""
    get_llm_provider, ProviderConfigManager, LlmProviders = _internals()[:3]
    try:
        name, provider, dynamic_key, dynamic_base = get_llm_provider(model=model, api_base=api_base or None)
        config = ProviderConfigManager.get_provider_chat_config(model=name, provider=LlmProviders(provider))
    except Exception:  # a name litellm cannot place: acompletion says why, in its own words
        return None
    base = api_base or dynamic_base or _DEFAULT_BASE.get(provider)
    if provider not in _DIRECT or config is None or not base or getattr(config, "uses_async_transform_request",
                                                                        False):
        return None
    return name, provider, config, base, dynamic_key


# The direct path's route: (litellm's name of the model, its provider, the provider's config, the base URL, the key
# from the provider's settings); the config is litellm's, untyped here.
_Route = tuple[str, str, Any, str, str | None]


async def _direct(route: _Route, model: str, messages: list[Sent], params: Params, api_key: str | None,
                  timeout_s: float) -> ModelResponse:
    import httpx

    get_llm_provider, ProviderConfigManager, LlmProviders, get_client, ModelResponse, exception_type = _internals()
    name, provider, config, base, dynamic_key = route
    api_key = api_key or dynamic_key or os.environ.get(f"{provider.upper()}_API_KEY")
    litellm_params = {"custom_llm_provider": provider, "api_base": base}
    try:
        optional = config.map_openai_params(non_default_params=dict(params), optional_params={}, model=name,
                                            drop_params=True)
        json_mode = optional.pop("json_mode", False)
        optional.pop("fake_stream", None)
        headers = config.validate_environment(headers={}, model=name, messages=messages, optional_params=optional,
                                              litellm_params=litellm_params, api_key=api_key, api_base=base)
        url = config.get_complete_url(api_base=base, api_key=api_key, model=name, optional_params=optional,
                                      litellm_params=litellm_params, stream=False)
        data = config.transform_request(model=name, messages=messages, optional_params=optional,
                                        litellm_params=litellm_params, headers=headers)
        data.update(data.pop("extra_body", None) or {})  # e.g. mistral's random_seed: sent at the top, as litellm does
        client = get_client(llm_provider=LlmProviders(provider))  # cached per event loop, pooled
        raw = await client.post(url=url, headers=headers, data=json.dumps(data), timeout=timeout_s)
        response = config.transform_response(model=name, raw_response=raw, model_response=ModelResponse(),
                                             logging_obj=_NoLogging(), request_data=data, messages=messages,
                                             optional_params=optional, litellm_params=litellm_params,
                                             encoding=None, api_key=api_key, json_mode=json_mode)
    except Exception as exc:
        # Into litellm's exception types (RateLimitError, BadRequestError, ...), as acompletion raises them.
        if isinstance(exc, httpx.HTTPStatusError):
            exc = config.get_error_class(error_message=exc.response.text, status_code=exc.response.status_code,
                                         headers=exc.response.headers)
        elif not isinstance(status := getattr(exc, "status_code", None), int) or status < 400:
            # A transport failure, or a 2xx answer that cannot be read: a server error, as acompletion says.
            exc = config.get_error_class(error_message=str(exc), status_code=500, headers={})
        raise exception_type(model=name, original_exception=exc, custom_llm_provider=provider) from None
    # As acompletion does: the response carries its price (None when litellm's map has no price for the model), the
    # prompt tokens the provider read from its cache at the model's cache-read price.
    response._hidden_params["response_cost"] = price(model, response.usage.prompt_tokens,
                                                     response.usage.completion_tokens, cached_tokens(response.usage))
    return response


@functools.lru_cache(maxsize=None)
def _internals() -> tuple[Callable[..., Any], Any, Any, Callable[..., Any], Any, Callable[..., Exception]]:
    """The parts of litellm the direct path uses, imported once: get_llm_provider, ProviderConfigManager, LlmProviders,
    get_async_httpx_client, ModelResponse, exception_type (untyped: mypy does not follow litellm)."""
    litellm()
    from litellm.litellm_core_utils.exception_mapping_utils import exception_type
    from litellm.llms.custom_httpx.http_handler import get_async_httpx_client
    from litellm.types.utils import LlmProviders, ModelResponse
    from litellm.utils import ProviderConfigManager, get_llm_provider

    return get_llm_provider, ProviderConfigManager, LlmProviders, get_async_httpx_client, ModelResponse, exception_type


class _NoLogging:
    """What transform_response calls on acompletion's logging object, doing nothing: the gateway keeps its
    own ledger."""

    model_call_details: dict[str, Any] = {}

    def pre_call(self, *args: object, **kwargs: object) -> None:
        pass

    def post_call(self, *args: object, **kwargs: object) -> None:
        pass

    def __getattr__(self, name: str) -> None:
        return None
