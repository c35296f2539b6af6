"""The LLM gateway: the one async call every agent and judge makes.

litellm underneath (imported on first real call, never at start-up), a concurrency cap per
model, retries with exponential backoff and jitter, a response cache keyed by the whole
request, a ledger row per call, and JSON-schema answers validated and re-asked when invalid.
Models named offline/<name> go to the built-in simulator and never touch the network.
"""
from __future__ import annotations

import asyncio
import functools
import hashlib
import json
import random
import re
import time
import weakref
from dataclasses import dataclass
from typing import Any

from arena import offline
from arena.config import LLMSettings
from arena.errors import ArenaError
from arena.records import STRUCTURED_MODES, AgentUsage, Entry, JudgeSpec, is_simulated
from arena.redact import redact
from arena.wire import litellm, send

_RETRYABLE_STATUS = {408, 409, 429, 500, 502, 503, 504, 529}
DEFAULT_WINDOW = 8192  # tokens, when neither arena.toml, litellm nor a probe knows the model's window
TEXT_TOKENS = 512  # answer cap of a free-text call that states none
MIN_ANSWER_TOKENS = 64  # below this a call is not worth sending


@dataclass(frozen=True)
class ModelRef:
    """Which model to call, how to reach it, and what is known of it."""

    model: str
    api_base: str = ""
    strength: float = 0.0  # planted strength, read only by the offline simulator
    context_window: int | None = None  # arena.toml's context_window; None: find out
    structured: str = "auto"  # arena.toml's structured_output

    @classmethod
    def of(cls, spec: Entry | JudgeSpec) -> "ModelRef":
        return cls(spec.model, spec.api_base, getattr(spec, "strength", 0.0), spec.context_window,
                   spec.structured_output)

    @property
    def simulated(self) -> bool:
        return is_simulated(self.model)

    @property
    def key(self) -> tuple[str, str]:
        """What the workspace remembers facts by: one model behind one endpoint."""
        return self.model, self.api_base


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
    cut: bool = False  # the answer stopped at its max_tokens (free text only: cut JSON is re-asked)


@dataclass(frozen=True)
class Probe:
    """What `arena check` finds out about a model before a tournament spends money on it."""

    ok: bool
    structured: str | None = None  # the structured-output mode that worked
    context_window: int | None = None
    latency_s: float | None = None
    error: str | None = None
    priced: bool = False  # whether litellm knows the model's price


@dataclass(frozen=True)
class _Answer:
    text: str
    usage: AgentUsage
    finish_reason: str | None


class LLMCallError(ArenaError):
    """A call that failed for good: retries spent, a non-retryable error, or no valid structured answer."""


class ContextLengthError(LLMCallError):
    """The provider said the prompt and the answer's room exceed the model's context window."""


class LLMGateway:
    def __init__(self, settings: LLMSettings, store=None, seed: int = 0):
        self.settings = settings
        self.store = store
        self.seed = seed
        # Semaphores belong to one event loop; keep a set per loop so a gateway outlives asyncio.run.
        self._limits: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._facts: dict[tuple[str, str], dict] = {}  # per model and endpoint: structured mode, window

    # --- what is known of a model --------------------------------------------------------
    def facts(self, ref: ModelRef) -> dict:
        """What the workspace remembers of ref's model (arena check, fallbacks taken), read once."""
        if ref.key not in self._facts:
            self._facts[ref.key] = (self.store.model_facts(*ref.key) if self.store is not None else None) or {}
        return self._facts[ref.key]

    def remember(self, ref: ModelRef, **facts) -> None:
        """Add facts about ref's model, in memory and in the workspace; writes only what changed."""
        if all(self.facts(ref).get(k) == v for k, v in facts.items()):
            return
        self._facts[ref.key].update(facts)
        if self.store is not None:
            self.store.remember_model(*ref.key, **facts)

    def window(self, ref: ModelRef) -> int:
        """The model's context window: arena.toml's, else litellm's model info, else probed, else 8,192;
        never more than the server itself named when it refused a prompt as too long."""
        facts = self.facts(ref)
        window = ref.context_window or _litellm_window(ref.model) or facts.get("context_window") or DEFAULT_WINDOW
        return min(window, facts.get("refused_beyond") or window)

    def mode(self, ref: ModelRef) -> str:
        """How structured answers are asked of ref: the configured mode, else the one remembered, else the best."""
        if ref.structured != "auto":
            return ref.structured
        return self.facts(ref).get("structured") or STRUCTURED_MODES[0]

    def answer_cap(self, ref: ModelRef, params: dict, schema: dict | None, max_tokens: int | None) -> int:
        """max_tokens for a call: the caller's need (or the schema's), under the entry's cap and half the window."""
        need = max_tokens or (answer_tokens(schema) if schema else TEXT_TOKENS)
        caps = [need, params.get("max_tokens") or need]
        if not ref.simulated:
            caps.append(self.window(ref) // 2)
        return max(1, min(caps))

    def budget(self, ref: ModelRef, answer: int, *, tight: bool = False) -> int:
        """Prompt tokens a call may send: the window less the answer's room and a reserve for token estimates
        (other tokenizers, chat templates), a larger reserve on the retry after a context-length error."""
        window = self.window(ref)
        return window - answer - (window // 4 if tight else window // 16 + 32)

    def fits(self, ref: ModelRef, messages: list[dict], budget: int) -> bool:
        """Whether messages fit in budget tokens, counted with litellm's token counter only when in doubt."""
        size = sum(len(str(m.get("content", "")).encode()) + 8 for m in messages)
        if size <= budget:  # a token covers at least one byte: surely fits, no counting needed
            return True
        return prompt_tokens(ref.model, messages) <= budget

    # --- the call ------------------------------------------------------------------------
    async def complete(
        self,
        ref: ModelRef,
        messages: list[dict],
        *,
        tag: CallTag,
        params: dict | None = None,
        schema: dict | None = None,
        sample: int = 0,
        max_tokens: int | None = None,
        tight: bool = False,
        fitted: bool = False,
    ) -> Completion:
        """Answer messages with ref's model; with a schema, return the validated JSON in .data.

        sample distinguishes repeated runs of one prompt (judge runs): each index is its own
        cache entry, so the runs are distinct samples rather than cache hits of one another.
        max_tokens is the caller's need for the answer; every call sends a cap (answer_cap).
        tight and fitted come from a caller that fitted its prompt (LLMHandle): the budget it
        fitted to, and whether anything was left out, for the ledger.
        """
        params = dict(params or {})
        ceiling = params.get("max_tokens")  # the entry's own cap, which no re-ask goes over
        params["max_tokens"] = self.answer_cap(ref, params, schema, max_tokens)
        key = _cache_key(ref, messages, params, schema, sample)
        use_cache = self.settings.cache and self.store is not None and not ref.simulated
        if use_cache and (hit := self.store.cache_get(key)) is not None:
            usage = AgentUsage(1, hit["prompt_tokens"], hit["completion_tokens"], 0.0)
            self._ledger(ref, tag, usage, latency=0.0, cache_hit=True)
            return Completion(hit["text"], hit.get("data"), usage, cached=True, cut=hit.get("cut", False))
        if not ref.simulated and not self.fits(ref, messages, self.budget(ref, params["max_tokens"], tight=tight)):
            raise LLMCallError(f"{ref.model}: the prompt (about {prompt_tokens(ref.model, messages)} tokens) does not "
                               f"fit its context window of {self.window(ref)} tokens with {params['max_tokens']} "
                               f"left for the answer; set context_window in arena.toml if the model takes more")

        conversation = list(messages)
        total = AgentUsage()
        tries = self.settings.schema_retries + 1
        problem = ""
        for _ in range(tries):
            answer = await self._call(ref, conversation, params, schema, sample, tag, fitted)
            total = total + answer.usage
            cut = answer.finish_reason == "length"
            if not answer.text.strip():
                problem = "the answer was empty"  # ask the same again: empty answers are usually a fluke
                continue
            if schema is None:
                data = None
                break
            if cut:  # cut JSON cannot parse: ask again, once, with room to finish
                if problem.startswith("the answer was cut off"):
                    # Cut again with twice the room: a model that fills any room (small models pad JSON
                    # with whitespace) would only take longer each time.
                    raise LLMCallError(f"{ref.model}: no valid structured answer: the answer was cut off twice, "
                                       f"the second time at {params['max_tokens']} tokens")
                problem = f"the answer was cut off at {params['max_tokens']} tokens"
                room = self._more_room(ref, conversation, params["max_tokens"])
                params = {**params, "max_tokens": min(room, ceiling or room)}
                continue
            data, problem = parse_structured(answer.text, schema)
            if not problem:
                cut = False
                break
            # Show the model its own answer and what is wrong with it, then ask again.
            conversation += [
                {"role": "assistant", "content": answer.text},
                {"role": "user", "content": f"That answer is not valid: {problem}. Reply again with only a JSON "
                                            f"object that matches the required schema."},
            ]
        else:
            wanted = "valid structured answer" if schema is not None else "usable answer"
            raise LLMCallError(f"{ref.model}: no {wanted} after {tries} tries: {problem}")
        if use_cache:
            self.store.cache_put(key, "llm", {"text": answer.text, "data": data, "cut": cut,
                                              "prompt_tokens": total.prompt_tokens,
                                              "completion_tokens": total.completion_tokens})
        return Completion(answer.text, data, total, cached=False, cut=cut)

    def _more_room(self, ref: ModelRef, messages: list[dict], current: int) -> int:
        """Twice the answer's room, as far as the window allows once the prompt is in."""
        if ref.simulated:
            return current * 2
        room = self.window(ref) - prompt_tokens(ref.model, messages) - self.window(ref) // 16
        return max(current, min(current * 2, room))

    async def _call(self, ref, messages, params, schema, sample, tag, fitted) -> _Answer:
        if ref.simulated:
            started = time.perf_counter()
            text, prompt_tokens, completion_tokens = offline.respond(
                ref.model, ref.strength, messages, schema=schema, sample=sample, seed=self.seed, role=tag.role,
                stage=tag.stage, judging=tag.side is None)
            usage = AgentUsage(1, prompt_tokens, completion_tokens, 0.0)
            self._ledger(ref, tag, usage, time.perf_counter() - started, cache_hit=False)
            return _Answer(text, usage, "stop")

        per_loop = self._limits.setdefault(asyncio.get_running_loop(), {})
        limit = per_loop.setdefault(ref.model, asyncio.Semaphore(self.settings.max_concurrency))
        mode = self.mode(ref) if schema is not None else None
        attempt = 0
        while True:
            started = time.perf_counter()
            try:
                async with limit:
                    response = await _litellm_call(ref, messages, params, schema, mode, self.settings)
            except Exception as exc:  # litellm raises many types; classify below
                latency = time.perf_counter() - started
                described = _describe(exc)
                refused = mode is not None and _refuses_format(exc)
                fallback = _next_mode(mode) if refused and ref.structured == "auto" else None
                if fallback:
                    # The provider refused this way of asking for JSON: remember the next one and ask again.
                    self._ledger(ref, tag, AgentUsage(), latency, cache_hit=False, structured=mode, fitted=fitted,
                                 error=f"structured output {mode} refused, falling back to {fallback}: {described}")
                    mode = fallback
                    self.remember(ref, structured=mode)
                    continue
                self._ledger(ref, tag, AgentUsage(), latency, cache_hit=False, structured=mode, fitted=fitted,
                             error=described)
                if _context_exceeded(exc):
                    if told := _window_named(str(exc)):  # the server knows its window best: believe it from now on
                        self.remember(ref, refused_beyond=told)
                    raise ContextLengthError(f"{ref.model}: {described} (the prompt and the answer's room exceed "
                                             f"the model's context window)") from None
                retryable = _retryable(exc) and not refused  # asking the same way again gets the same refusal
                if not retryable or attempt >= self.settings.retries:
                    raise LLMCallError(f"{ref.model}: {described}"
                                       + (f" (after {attempt + 1} tries)" if retryable else "")) from None
                await asyncio.sleep(self.settings.backoff_s * 2 ** attempt * random.uniform(0.5, 1.5))
                attempt += 1
                continue
            latency = time.perf_counter() - started
            choice = response.choices[0]
            text = choice.message.content or ""
            u = getattr(response, "usage", None)
            usage = AgentUsage(1, getattr(u, "prompt_tokens", 0) or 0, getattr(u, "completion_tokens", 0) or 0,
                               _cost(response))
            finish = getattr(choice, "finish_reason", None)
            self._ledger(ref, tag, usage, latency, cache_hit=False, structured=mode, fitted=fitted,
                         finish_reason=finish)
            if mode is not None and ref.structured == "auto":
                self.remember(ref, structured=mode)  # writes only the first time
            return _Answer(text, usage, finish)

    def _ledger(self, ref, tag, usage, latency, cache_hit, error=None, structured=None, fitted=False,
                finish_reason=None) -> None:
        if self.store is None:
            return
        self.store.record_call(kind="llm", model=ref.model, latency_s=latency, cache_hit=cache_hit,
                               simulated=ref.simulated, match_id=tag.match_id, role=tag.role, stage=tag.stage,
                               side=tag.side, judge=tag.judge, prompt_tokens=usage.prompt_tokens,
                               completion_tokens=usage.completion_tokens, cost=usage.cost, error=error,
                               structured=structured, fitted=fitted, finish_reason=finish_reason)

    # --- the probe -----------------------------------------------------------------------
    async def probe(self, ref: ModelRef) -> Probe:
        """Try ref's model as a tournament will: a one-line chat, a structured answer, its window.

        What it finds is remembered in the workspace, so later calls go straight to the mode that works.
        """
        if ref.simulated:
            return Probe(True, "json_schema", None, 0.0, None, True)
        tag = CallTag(role="probe")
        litellm()  # imported before the clock starts: the latency is the model's, not the import's

        started = time.perf_counter()
        try:
            await self._call(ref, [{"role": "user", "content": "Reply with one word: ready"}],
                             {"max_tokens": 16, "temperature": 0}, None, 0, tag, False)
        except LLMCallError as exc:
            return self._probed(ref, Probe(False, None, None, None, str(exc), _priced(ref.model)))
        latency = round(time.perf_counter() - started, 3)
        structured, problem = await self._structured_mode(ref, tag)
        window = ref.context_window or _litellm_window(ref.model) or await _served_window(ref, self.settings)
        return self._probed(ref, Probe(structured is not None, structured, window, latency,
                                       None if structured else problem, _priced(ref.model)))

    async def _structured_mode(self, ref: ModelRef, tag: CallTag) -> tuple[str | None, str]:
        """The first mode (only the configured one, unless auto) in which the model gives a valid answer."""
        schema = {"title": "probe", "type": "object", "properties": {"word": {"type": "string"}},
                  "required": ["word"], "additionalProperties": False}
        messages = [{"role": "user", "content": 'Reply with a JSON object whose "word" is "ready".'}]
        modes = STRUCTURED_MODES if ref.structured == "auto" else (ref.structured,)
        problem = ""
        for mode in modes:
            forced = ModelRef(ref.model, ref.api_base, context_window=ref.context_window, structured=mode)
            try:
                answer = await self._call(forced, messages, {"max_tokens": 64}, schema, 0, tag, False)
            except LLMCallError as exc:
                problem = str(exc)
                continue
            _, problem = parse_structured(answer.text, schema)
            if not problem:
                return mode, ""
            problem = f"{mode}: {problem}"
        return None, f"no structured-output mode worked ({problem})"

    def _probed(self, ref: ModelRef, probe: Probe) -> Probe:
        facts = {"ok": probe.ok, "latency_s": probe.latency_s, "error": probe.error, "priced": probe.priced,
                 "context_window": probe.context_window, "checked_at": time.time()}
        if probe.structured:
            facts["structured"] = probe.structured
        self.remember(ref, **facts)
        return probe


def answer_tokens(schema: dict) -> int:
    """A cap for a JSON answer of this schema: room for free text in each string, a little for the rest."""
    def need(node: dict, depth: int) -> int:
        kind = node.get("type")
        kinds = kind if isinstance(kind, list) else [kind]
        if "object" in kinds:
            return 8 + sum(8 + need(sub, depth) for sub in node.get("properties", {}).values())
        if "array" in kinds:
            return 8 + min(node.get("maxItems", 4), 8) * need(node.get("items", {}), depth + 1)
        if "string" in kinds and "enum" not in node:
            return node.get("maxLength", 300 if depth == 0 else 100)
        return 8
    return 128 + need(schema, 0)


def prompt_tokens(model: str, messages: list[dict]) -> int:
    """Tokens of messages by litellm's counter (the model's own tokenizer where litellm has it)."""
    return int(litellm().token_counter(model=model, messages=messages))


def _with_schema(messages: list[dict], schema: dict | None, mode: str | None) -> list[dict]:
    """Messages as sent in mode: without json_schema the schema is spelled out in the last message."""
    if schema is None or mode == "json_schema":
        return messages
    instruction = ("\n\nAnswer with only a JSON object, no other text, that matches this JSON schema:\n"
                   + json.dumps(schema, ensure_ascii=False))
    last = messages[-1]
    return [*messages[:-1], {**last, "content": f"{last.get('content', '')}{instruction}"}]


def _next_mode(mode: str | None) -> str | None:
    if mode is None or mode == STRUCTURED_MODES[-1]:
        return None
    return STRUCTURED_MODES[STRUCTURED_MODES.index(mode) + 1]


def _cache_key(ref: ModelRef, messages, params, schema, sample) -> str:
    request = {"model": ref.model, "api_base": ref.api_base, "messages": messages, "params": params,
               "schema": schema, "sample": sample}
    return hashlib.sha256(json.dumps(request, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


async def _litellm_call(ref: ModelRef, messages, params, schema, mode, settings: LLMSettings):
    kwargs: dict[str, Any] = dict(params)
    if mode == "json_schema":
        kwargs["response_format"] = {"type": "json_schema",
                                     "json_schema": {"name": schema.get("title", "answer"), "schema": schema}}
    elif mode == "json_object":
        # OpenAI's JSON mode; llama.cpp-style servers also constrain the answer to the schema given here.
        kwargs["response_format"] = {"type": "json_object", "schema": schema}
    return await send(ref.model, _with_schema(messages, schema, mode), kwargs, api_base=ref.api_base,
                      timeout_s=settings.timeout_s, path=settings.litellm_path)


def _retryable(exc: Exception) -> bool:
    status = getattr(exc, "status_code", None)
    if isinstance(status, int):
        return status in _RETRYABLE_STATUS or status >= 500
    name = type(exc).__name__
    return name in {"Timeout", "APIConnectionError", "TimeoutError", "ServiceUnavailableError",
                    "InternalServerError", "RateLimitError"}


_FORMAT_WORDS = re.compile(r"response_format|json_schema|json_object|schema|grammar|structured", re.IGNORECASE)
_CONTEXT_WORDS = re.compile(r"context.{0,20}(length|window)|maximum context|too many tokens|prompt is too long",
                            re.IGNORECASE)


def _refuses_format(exc: Exception) -> bool:
    """Whether the provider refused the way a JSON answer was asked for (not the request as a whole)."""
    if type(exc).__name__ == "UnsupportedParamsError":
        return True
    return getattr(exc, "status_code", None) in (400, 422, 500) and bool(_FORMAT_WORDS.search(str(exc)))


def _context_exceeded(exc: Exception) -> bool:
    return type(exc).__name__ == "ContextWindowExceededError" or bool(_CONTEXT_WORDS.search(str(exc)))


_WINDOW_NAMED = re.compile(r"(?:context window of|maximum context length is|context length of)\s*(\d{3,8})",
                           re.IGNORECASE)


def _window_named(message: str) -> int | None:
    """The window a context-length error names (llama.cpp: 'exceed context window of 8192'; OpenAI, vLLM:
    'maximum context length is 8192 tokens'), if it names one."""
    found = _WINDOW_NAMED.search(message)
    return int(found.group(1)) if found else None


def _describe(exc: Exception) -> str:
    """The error in one line, with any secret a provider echoed redacted."""
    status = getattr(exc, "status_code", None)
    message = str(exc).splitlines()[0][:300] if str(exc) else ""
    return redact(f"{type(exc).__name__}" + (f" {status}" if status else "") + (f": {message}" if message else ""))


def _cost(response) -> float | None:
    """Cost from litellm's price map; None when the model's price is unknown."""
    # litellm has priced the response already (None when unknown); pricing it again costs ~4 ms of CPU per call.
    hidden = getattr(response, "_hidden_params", None) or {}
    if "response_cost" in hidden:
        return None if hidden["response_cost"] is None else float(hidden["response_cost"])
    try:
        return float(litellm().completion_cost(completion_response=response))
    except Exception:  # unknown model: litellm raises rather than guessing
        return None


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


def _priced(model: str) -> bool:
    return price(model, 1000, 1000) is not None


async def _served_window(ref: ModelRef, settings: LLMSettings) -> int | None:
    """Ask a local server its window: its /models answer (vLLM's max_model_len) or /props (llama.cpp's n_ctx).
    None when neither tells, as with llama-cpp-python's server: calls then assume the default."""
    if not ref.api_base:
        return None
    import httpx

    base = ref.api_base.rstrip("/")
    async with httpx.AsyncClient(timeout=min(settings.timeout_s, 10)) as client:
        for url in (f"{base}/models", f"{base.removesuffix('/v1')}/props"):
            try:
                found = _window_in((await client.get(url)).json())
            except Exception:  # not every server has these, or answers them in JSON
                continue
            if found:
                return found
    return None


def _window_in(data: Any) -> int | None:
    """A window size in a server's JSON: vLLM's max_model_len, llama.cpp's n_ctx, or a context_length."""
    if isinstance(data, dict):
        for key in ("max_model_len", "n_ctx", "context_length", "context_window"):
            if isinstance(data.get(key), int) and data[key] > 0:
                return data[key]
        values = data.values()
    elif isinstance(data, list):
        values = data
    else:
        return None
    for value in values:
        if (found := _window_in(value)) is not None:
            return found
    return None


def price(model: str, prompt_tokens: int, completion_tokens: int) -> float | None:
    """What litellm's price map says these tokens cost on model; 0 for the offline simulator; None if unknown."""
    if is_simulated(model):
        return 0.0
    try:  # an unknown model is an answer here (None), not a reason to print help
        prompt_cost, completion_cost = litellm().cost_per_token(model=model, prompt_tokens=prompt_tokens,
                                                              completion_tokens=completion_tokens)
    except Exception:  # litellm raises for models missing from its map
        return None
    return float(prompt_cost) + float(completion_cost)


_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.DOTALL)


def parse_structured(text: str, schema: dict) -> tuple[Any, str]:
    """(data, "") for an answer that is JSON matching schema, else (None, what is wrong)."""
    import jsonschema

    fenced = _FENCE.match(text)
    body = fenced.group(1) if fenced else text
    # strict=False: models (grammar-constrained ones too) write raw newlines inside strings.
    try:
        data = json.loads(body, strict=False)
    except json.JSONDecodeError as exc:
        # Asked by prompt alone, models wrap the object in prose: take the outermost braces.
        first, last = body.find("{"), body.rfind("}")
        try:
            data = json.loads(body[first:last + 1], strict=False) if 0 <= first < last else None
        except json.JSONDecodeError:
            data = None
        if data is None:
            return None, f"not JSON ({exc.msg} at position {exc.pos})"
    error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(schema).iter_errors(data))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "the top level"
        return None, f"at {where}: {error.message}"
    return data, ""
