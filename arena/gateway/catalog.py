"""What is known of a model: which one to call and where, its context window, its token counts and its price.

A fact comes from arena.toml first, then litellm's model map, then what the server itself says.
"""
from __future__ import annotations

import asyncio
import functools
import importlib.util
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from arena.gateway.chat import Message
from arena.gateway.lazy import litellm
from arena.domain.records import Entry, JudgeSpec, is_simulated
from arena.gateway.redact import public_url

DEFAULT_WINDOW = 8192  # tokens, when neither arena.toml, litellm nor the server knows the model's window


@dataclass(frozen=True)
class ModelRef:
    """Which model to call, how to reach it, and what is known of it."""

    model: str
    api_base: str = ""
    strength: float = 0.0  # planted strength, read only by the offline simulator
    context_window: int | None = None  # arena.toml's context_window; None: find out
    structured: str = "auto"  # arena.toml's structured_output
    # Planted too, for offline models only (the kinds refuse them on others): an entry's `verbosity` param and a
    # judge's `length_bias` option, read only by the offline simulator.
    verbosity: float = 1.0
    length_bias: float = 0.0

    @classmethod
    def of(cls, spec: Entry | JudgeSpec, model: str | None = None) -> "ModelRef":
        """The entry's or judge's model, or another of its models (model: one of a jury's pool), reached and asked
        as the entry or judge says."""
        if isinstance(spec, Entry):
            return cls(spec.model, spec.api_base, spec.strength, spec.context_window, spec.structured_output,
                       verbosity=spec.params.get("verbosity", 1.0))
        return cls(model or spec.model, spec.api_base, context_window=spec.context_window,
                   structured=spec.structured_output, length_bias=spec.options.get("length_bias", 0.0))

    @property
    def simulated(self) -> bool:
        return is_simulated(self.model)

    @property
    def key(self) -> tuple[str, str]:
        """What the workspace remembers facts by: one model behind one endpoint (its address without the user,
        password or query that may carry a credential: arena.db keeps none)."""
        return self.model, public_url(self.api_base)

    @property
    def server(self) -> str:
        """Who serves the model, and whose slots its requests take: its endpoint (without credentials), or for a
        provider's own API the provider (openai/gpt-4o and openai/gpt-4o-mini: openai). Several model names behind
        one server share its slots, whatever they are called."""
        return public_url(self.api_base).rstrip("/") if self.api_base else self.model.partition("/")[0]


# --- the context window ----------------------------------------------------------------------------------
def window(ref: ModelRef, facts: Mapping[str, Any]) -> int:
    """The model's context window: what arena.toml or litellm's map states, else what `arena check` heard from
    the server (facts' context_window), else 8,192; never more than the server named when it refused a prompt
    as too long (facts' refused_beyond)."""
    size = stated_window(ref) or facts.get("context_window") or DEFAULT_WINDOW
    return min(size, facts.get("refused_beyond") or size)


def stated_window(ref: ModelRef) -> int | None:
    """The window arena.toml's context_window or litellm's model map states; None: only the server can tell."""
    return ref.context_window or _litellm_window(ref.model)


@functools.lru_cache(maxsize=None)
def _litellm_window(model: str) -> int | None:
    """The model's input window by litellm's model info; None for models litellm does not know."""
    if is_simulated(model):
        return None
    try:
        info = litellm().get_model_info(model)
    except Exception:  # unmapped models raise
        return None
    window = info.get("max_input_tokens") or info.get("max_tokens")
    return int(window) if window else None


async def served_window(ref: ModelRef, timeout_s: float) -> int | None:
    """Ask a local server its window: its /models answer (vLLM's max_model_len) or /props (llama.cpp's n_ctx).
    None when neither tells, as with llama-cpp-python's server: calls then assume the default."""
    if not ref.api_base:
        return None
    import httpx

    base = ref.api_base.rstrip("/")
    async with httpx.AsyncClient(timeout=min(timeout_s, 10)) as client:
        for url in (f"{base}/models", f"{base.removesuffix('/v1')}/props"):
            try:
                # httpx's timeout bounds each read; this, the whole answer (a server may trickle it)
                async with asyncio.timeout(min(timeout_s, 10)):
                    found = _window_in((await client.get(url)).json())
            except Exception:  # not every server has these, or answers them in JSON, or in time
                continue
            if found:
                return found
    return None


def _window_in(data: Any) -> int | None:
    """A window size in a server's JSON: vLLM's max_model_len, llama.cpp's n_ctx, or a context_length."""
    if isinstance(data, dict):
        for key in ("max_model_len", "n_ctx", "context_length", "context_window"):
            if isinstance(size := data.get(key), int) and size > 0:
                return size
        values: Iterable[Any] = data.values()
    elif isinstance(data, list):
        values = data
    else:
        return None
    for value in values:
        if (found := _window_in(value)) is not None:
            return found
    return None


_CONTEXT_WORDS = re.compile(r"context.{0,20}(length|window)|maximum context|too many tokens|prompt is too long",
                            re.IGNORECASE)
_WINDOW_NAMED = re.compile(r"(?:context window of|maximum context length is|context length of)\s*(\d{3,8})",
                           re.IGNORECASE)


def context_exceeded(exc: Exception) -> bool:
    """Whether the provider refused the prompt and the answer's room as more than the model's window."""
    return type(exc).__name__ == "ContextWindowExceededError" or bool(_CONTEXT_WORDS.search(str(exc)))


def window_named(message: str) -> int | None:
    """The window a context-length error names (llama.cpp: 'exceed context window of 8192'; OpenAI, vLLM:
    'maximum context length is 8192 tokens'), if it names one."""
    found = _WINDOW_NAMED.search(message)
    return int(found.group(1)) if found else None


# --- tokens and price ------------------------------------------------------------------------------------
def prompt_tokens(model: str, messages: list[Message]) -> int:
    """Tokens of messages by litellm's counter (the model's own tokenizer where litellm has it)."""
    return int(litellm().token_counter(model=model, messages=messages))


def price(model: str, prompt_tokens: int, completion_tokens: int, cached_tokens: int = 0) -> float | None:
    """What litellm's price map says these tokens cost on model, cached_tokens of the prompt's read from the provider's
    prompt cache (at the model's cache-read price where the map lists one, else at its input price); 0 for the
    offline simulator; None if unknown."""
    if is_simulated(model):
        return 0.0
    try:  # an unknown model is an answer here (None), not a reason to print help
        prompt_cost, completion_cost = litellm().cost_per_token(model=model, prompt_tokens=prompt_tokens,
                                                              completion_tokens=completion_tokens,
                                                              cache_read_input_tokens=cached_tokens)
    except Exception:  # litellm raises for models missing from its map
        return None
    return float(prompt_cost) + float(completion_cost)


@functools.lru_cache(maxsize=None)
def unit_prices(model: str) -> tuple[float, float] | None:
    """USD per prompt token and per answer token on model by litellm's price map; None if unknown."""
    prompt, answer = price(model, 1_000_000, 0), price(model, 0, 1_000_000)
    return None if prompt is None or answer is None else (prompt / 1e6, answer / 1e6)


def most_cost(model: str, messages: list[Message], max_tokens: int) -> float | None:
    """The most a call can cost before its answer is known: every byte of the prompt a token (a token is at
    least a byte) at the full input price (none of it read from a prompt cache: a cache may have let it go) and
    the answer's whole room used; None if the price is unknown."""
    unit = unit_prices(model)
    if unit is None:
        return None
    sent = sum(len(str(m.get("content", "")).encode()) for m in messages)
    return sent * unit[0] + max_tokens * unit[1]


def listed_price(model: str, prompt_tokens: int, completion_tokens: int, cached_tokens: int = 0) -> float | None:
    """Tokens at the flat USD per-token prices litellm's bundled price map lists for model (under its name, or
    under its name after the provider in that provider's row), cached_tokens of the prompt's at its cache-read price
    (cache_read_input_token_cost; the input price where the row lists none); 0 for the offline simulator; None if the
    map lists none. Read as JSON, without importing litellm (~6 s of CPU, most of a dry run); when litellm is to fetch
    its map (LITELLM_LOCAL_MODEL_COST_MAP not true), litellm prices it (price)."""
    if is_simulated(model):
        return 0.0
    table = _bundled_map()
    if table is None:
        return price(model, prompt_tokens, completion_tokens, cached_tokens)
    provider, _, name = model.partition("/")
    row = table.get(model) or (table.get(name) if table.get(name, {}).get("litellm_provider") == provider else None)
    if not isinstance(row, dict) or not all(isinstance(row.get(k), (int, float))
                                            for k in ("input_cost_per_token", "output_cost_per_token")):
        return None
    read = row.get("cache_read_input_token_cost")
    cached = min(cached_tokens, prompt_tokens)
    cost: float = ((prompt_tokens - cached) * row["input_cost_per_token"] + completion_tokens
                   * row["output_cost_per_token"] + cached * (read if isinstance(read, (int, float))
                                                               else row["input_cost_per_token"]))
    return cost


def listed_of(provider: str) -> int | None:
    """How many models of provider litellm's bundled price map lists; None when it is not read (listed_price)."""
    table = _bundled_map()
    return None if table is None else sum(1 for row in table.values()
                                          if isinstance(row, dict) and row.get("litellm_provider") == provider)


@functools.lru_cache(maxsize=1)
def _bundled_map() -> dict[str, Any] | None:
    """The price map litellm ships and reads when LITELLM_LOCAL_MODEL_COST_MAP is true; None otherwise."""
    if os.environ.get("LITELLM_LOCAL_MODEL_COST_MAP", "").lower() != "true":
        return None
    spec = importlib.util.find_spec("litellm")  # where the package is, without running it
    for folder in (spec.submodule_search_locations or []) if spec else []:
        path = Path(folder) / "model_prices_and_context_window_backup.json"
        if path.is_file():
            table: dict[str, Any] = json.loads(path.read_bytes())  # model name → its row: litellm's JSON
            return table
    return None


def priced(model: str) -> bool:
    """Whether litellm's price map knows model's price."""
    return price(model, 1000, 1000) is not None


def response_cost(response: Any) -> float | None:
    """What a response cost by litellm's price map; None when the model's price is unknown."""
    # Sent either way (arena.gateway.wire), the response is priced already (None when unknown); pricing it again costs
    # ~4 ms of CPU per call.
    hidden = getattr(response, "_hidden_params", None) or {}
    if "response_cost" in hidden:
        return None if hidden["response_cost"] is None else float(hidden["response_cost"])
    try:
        return float(litellm().completion_cost(completion_response=response))
    except Exception:  # unknown model: litellm raises rather than guessing
        return None
