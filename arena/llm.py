"""The LLM gateway: the one async call every agent and judge makes.

litellm underneath (imported on first real call, never at start-up), a concurrency cap per
model, retries with exponential backoff and jitter, a response cache keyed by the whole
request, a ledger row per call, and JSON-schema answers validated and re-asked when invalid.
Models named offline/<name> go to the built-in simulator and never touch the network.
"""
from __future__ import annotations

import asyncio
import hashlib
import json
import os
import random
import re
import time
import weakref
from dataclasses import dataclass
from typing import Any

from arena import offline
from arena.config import LLMSettings
from arena.errors import ArenaError
from arena.records import AgentUsage, is_simulated

# Importing litellm must never fetch its price map over the network.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

_RETRYABLE_STATUS = {408, 409, 429, 500, 502, 503, 504, 529}


@dataclass(frozen=True)
class ModelRef:
    """Which model to call and how to reach it."""

    model: str
    api_base: str = ""
    strength: float = 0.0  # planted strength, read only by the offline simulator

    @property
    def simulated(self) -> bool:
        return is_simulated(self.model)


@dataclass(frozen=True)
class CallTag:
    """Who is calling, for the ledger: the match, the agent's role, the stage and side, or the judge."""

    role: str
    match_id: str | None = None
    stage: str | None = None
    side: str | None = None
    judge: str | None = None  # the configured judge's name: several judges judge one match


@dataclass(frozen=True)
class Completion:
    text: str
    data: Any = None  # the parsed answer when a schema was asked for
    usage: AgentUsage = AgentUsage()
    cached: bool = False


class LLMCallError(ArenaError):
    """A call that failed for good: retries spent, a non-retryable error, or no valid structured answer."""


class LLMGateway:
    def __init__(self, settings: LLMSettings, store=None, seed: int = 0):
        self.settings = settings
        self.store = store
        self.seed = seed
        # Semaphores belong to one event loop; keep a set per loop so a gateway outlives asyncio.run.
        self._limits: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    async def complete(
        self,
        ref: ModelRef,
        messages: list[dict],
        *,
        tag: CallTag,
        params: dict | None = None,
        schema: dict | None = None,
        sample: int = 0,
    ) -> Completion:
        """Answer messages with ref's model; with a schema, return the validated JSON in .data.

        sample distinguishes repeated runs of one prompt (judge runs): each index is its own
        cache entry, so the runs are distinct samples rather than cache hits of one another.
        """
        params = dict(params or {})
        key = _cache_key(ref, messages, params, schema, sample)
        use_cache = self.settings.cache and self.store is not None and not ref.simulated
        if use_cache and (hit := self.store.cache_get(key)) is not None:
            usage = AgentUsage(1, hit["prompt_tokens"], hit["completion_tokens"], 0.0)
            self._ledger(ref, tag, usage, latency=0.0, cache_hit=True)
            return Completion(hit["text"], hit.get("data"), usage, cached=True)

        conversation = list(messages)
        total = AgentUsage()
        problem = ""
        for _ in range(self.settings.schema_retries + 1 if schema else 1):
            text, usage = await self._call(ref, conversation, params, schema, sample, tag)
            total = total + usage
            if schema is None:
                data = None
                break
            data, problem = parse_structured(text, schema)
            if not problem:
                break
            # Show the model its own answer and what is wrong with it, then ask again.
            conversation += [
                {"role": "assistant", "content": text},
                {"role": "user", "content": f"That answer is not valid: {problem}. Reply again with only a JSON "
                                            f"object that matches the required schema."},
            ]
        else:
            raise LLMCallError(f"{ref.model}: no valid structured answer after "
                               f"{self.settings.schema_retries + 1} tries: {problem}")
        if use_cache:
            self.store.cache_put(key, "llm", {"text": text, "data": data, "prompt_tokens": total.prompt_tokens,
                                              "completion_tokens": total.completion_tokens})
        return Completion(text, data, total, cached=False)

    async def _call(self, ref, messages, params, schema, sample, tag) -> tuple[str, AgentUsage]:
        if ref.simulated:
            started = time.perf_counter()
            text, prompt_tokens, completion_tokens = offline.respond(
                ref.model, ref.strength, messages, schema=schema, sample=sample, seed=self.seed, role=tag.role,
                stage=tag.stage, judging=tag.side is None)
            usage = AgentUsage(1, prompt_tokens, completion_tokens, 0.0)
            self._ledger(ref, tag, usage, time.perf_counter() - started, cache_hit=False)
            return text, usage

        per_loop = self._limits.setdefault(asyncio.get_running_loop(), {})
        limit = per_loop.setdefault(ref.model, asyncio.Semaphore(self.settings.max_concurrency))
        attempt = 0
        while True:
            started = time.perf_counter()
            try:
                async with limit:
                    response = await _litellm_call(ref, messages, params, schema, self.settings.timeout_s)
            except Exception as exc:  # litellm raises many types; classify below
                latency = time.perf_counter() - started
                retryable = _retryable(exc)
                self._ledger(ref, tag, AgentUsage(), latency, cache_hit=False, error=_describe(exc))
                if not retryable or attempt >= self.settings.retries:
                    raise LLMCallError(f"{ref.model}: {_describe(exc)}"
                                       + (f" (after {attempt + 1} tries)" if retryable else "")) from None
                await asyncio.sleep(self.settings.backoff_s * 2 ** attempt * random.uniform(0.5, 1.5))
                attempt += 1
                continue
            latency = time.perf_counter() - started
            text = response.choices[0].message.content or ""
            u = getattr(response, "usage", None)
            usage = AgentUsage(1, getattr(u, "prompt_tokens", 0) or 0, getattr(u, "completion_tokens", 0) or 0,
                               _cost(response))
            self._ledger(ref, tag, usage, latency, cache_hit=False)
            return text, usage

    def _ledger(self, ref, tag, usage, latency, cache_hit, error=None) -> None:
        if self.store is None:
            return
        self.store.record_call(kind="llm", model=ref.model, latency_s=latency, cache_hit=cache_hit,
                               simulated=ref.simulated, match_id=tag.match_id, role=tag.role, stage=tag.stage,
                               side=tag.side, judge=tag.judge, prompt_tokens=usage.prompt_tokens,
                               completion_tokens=usage.completion_tokens, cost=usage.cost, error=error)


def _cache_key(ref: ModelRef, messages, params, schema, sample) -> str:
    request = {"model": ref.model, "api_base": ref.api_base, "messages": messages, "params": params,
               "schema": schema, "sample": sample}
    return hashlib.sha256(json.dumps(request, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


async def _litellm_call(ref: ModelRef, messages, params, schema, timeout_s):
    import litellm  # lazy: seconds of import time that commands without models must not pay

    litellm.suppress_debug_info = True
    kwargs: dict[str, Any] = dict(params)
    if ref.api_base:
        kwargs["api_base"] = ref.api_base
        # Local OpenAI-compatible servers (vLLM, Ollama, llama.cpp) need no key, but the client insists on one.
        if ref.model.startswith("openai/") and not os.environ.get("OPENAI_API_KEY"):
            kwargs["api_key"] = "no-key-needed"
    if schema is not None:
        kwargs["response_format"] = {"type": "json_schema",
                                     "json_schema": {"name": schema.get("title", "answer"), "schema": schema}}
    # Our own loop retries; litellm's and the OpenAI client's retries would multiply the attempts.
    return await litellm.acompletion(model=ref.model, messages=messages, timeout=timeout_s, num_retries=0,
                                     max_retries=0, drop_params=True, **kwargs)


def _retryable(exc: Exception) -> bool:
    status = getattr(exc, "status_code", None)
    if isinstance(status, int):
        return status in _RETRYABLE_STATUS or status >= 500
    name = type(exc).__name__
    return name in {"Timeout", "APIConnectionError", "TimeoutError", "ServiceUnavailableError",
                    "InternalServerError", "RateLimitError"}


def _describe(exc: Exception) -> str:
    status = getattr(exc, "status_code", None)
    message = str(exc).splitlines()[0][:300] if str(exc) else ""
    return f"{type(exc).__name__}" + (f" {status}" if status else "") + (f": {message}" if message else "")


def _cost(response) -> float | None:
    """Cost from litellm's price map; None when the model's price is unknown."""
    import litellm

    # litellm has priced the response already (None when unknown); pricing it again costs ~4 ms of CPU per call.
    hidden = getattr(response, "_hidden_params", None) or {}
    if "response_cost" in hidden:
        return None if hidden["response_cost"] is None else float(hidden["response_cost"])
    try:
        return float(litellm.completion_cost(completion_response=response))
    except Exception:  # unknown model: litellm raises rather than guessing
        return None


def price(model: str, prompt_tokens: int, completion_tokens: int) -> float | None:
    """What litellm's price map says these tokens cost on model; 0 for the offline simulator; None if unknown."""
    if is_simulated(model):
        return 0.0
    import litellm

    litellm.suppress_debug_info = True  # an unknown model is an answer here, not a reason to print help
    try:
        prompt_cost, completion_cost = litellm.cost_per_token(model=model, prompt_tokens=prompt_tokens,
                                                              completion_tokens=completion_tokens)
    except Exception:  # litellm raises for models missing from its map
        return None
    return float(prompt_cost) + float(completion_cost)


_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.DOTALL)


def parse_structured(text: str, schema: dict) -> tuple[Any, str]:
    """(data, "") for an answer that is JSON matching schema, else (None, what is wrong)."""
    import jsonschema

    fenced = _FENCE.match(text)
    try:
        data = json.loads(fenced.group(1) if fenced else text)
    except json.JSONDecodeError as exc:
        return None, f"not JSON ({exc.msg} at position {exc.pos})"
    error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(schema).iter_errors(data))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "the top level"
        return None, f"at {where}: {error.message}"
    return data, ""
