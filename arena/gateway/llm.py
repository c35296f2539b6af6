"""The LLM gateway: the one async call every agent and judge makes.

litellm underneath (imported on first real call, never at start-up), a concurrency cap per
server (ModelRef.server: its api_base, or the provider of a hosted API), whatever the model names behind it: the
server's measured slots, when arena check measured them, lowered while a run goes when the server is seen to serve
fewer at once (ServerLimit); a timeout that bounds the whole call and follows the model's measured throughput,
retries (arena.gateway.retry), a response cache keyed by the whole request, a ledger row per call, and JSON-schema
answers (arena.gateway.structured) validated and re-asked when invalid.
Models named offline/<name> go to the built-in simulator and never touch the network.
"""
from __future__ import annotations

import asyncio
import contextvars
import hashlib
import json
import time
import weakref
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable, Literal, Mapping, TypedDict

from arena.gateway import credentials
from arena.gateway import catalog as models
from arena.gateway import offline
from arena.gateway import retry
from arena.gateway.caching import PrefixCache, marked, prompt_text
from arena.workspace.config import LLMSettings
from arena.base.errors import ArenaError
from arena.base.limits import MAX_TIMEOUT_S
from arena.gateway.catalog import ModelRef, prompt_tokens
from arena.domain.records import AgentUsage
from arena.store import IN_FLIGHT, Store
from arena.gateway.structured import (STRUCTURED_MODES, answer_tokens, next_mode, parse_structured, refuses_format,
                              response_format, with_schema)
from arena.gateway.chat import Message, Params, Schema
from arena.gateway.wire import CallTimeout, ModelResponse, read_reply, send

# The simulator's models that stand in for real ones, each with the real model it stands for (arena.app.runner.dryrun
# sets them while it plays its sample): their answers count as a real model would send them, within the call's
# max_tokens, which the simulator alone ignores; and of their prompts, the tokens a provider's automatic prompt cache
# would read are counted as cached (arena.gateway.caching.PrefixCache, per real model in call order).
STANDING_IN: contextvars.ContextVar[Mapping[str, str]] = contextvars.ContextVar("standing_in", default={})


@dataclass(frozen=True)
class CallTag:
    """Who is calling, for the ledger: the match, the agent's role, the stage and side, or the judge."""

    role: str
    match_id: str | None = None
    stage: str | None = None
    side: str | None = None
    judge: str | None = None  # the configured judge's name: several judges judge one match


@dataclass(frozen=True)
class CallEvent:
    """What the gateway tells its listeners (LLMGateway.listeners) as a call goes: a request waiting for a slot of its
    server ("queued"), sent ("sent"), answered ("answered": its usage), or a try that failed and will be made again
    ("retry": the error in short, the try that failed of how many, the wait); an unusable answer asked again
    ("reask": error says why in short, attempt is the re-ask's number, tries the re-asks it may have); a call answered
    from the cache ("cached": its usage); and, once, that the call's server serves fewer requests at once than it
    was sent, so that it is sent fewer from now on ("capped": error holds the line that says so). Simulated calls
    are "sent" and "answered" only. Each ledger row of a call is told once, as "sent" or "cached", so that a
    listener counting them counts what the ledger holds."""

    kind: Literal["queued", "sent", "answered", "retry", "reask", "cached", "capped"]
    tag: CallTag
    model: str
    error: str = ""
    attempt: int = 0  # retry: the failed try, counted from 1; reask: the re-ask, counted from 1
    tries: int = 0  # retry: the tries a call has in all; reask: the re-asks it may have
    wait_s: float = 0.0  # retry: the backoff before the next try
    usage: AgentUsage = AgentUsage()  # answered, cached: the try's tokens and cost


@dataclass(frozen=True)
class Completion:
    text: str
    data: Any = None  # the parsed answer when a schema was asked for
    usage: AgentUsage = AgentUsage()
    cached: bool = False
    cut: bool = False  # the answer stopped at its max_tokens (free text only: cut JSON is re-asked)


@dataclass(frozen=True)
class Answer:
    """One answer as the model gave it: unchecked, uncached."""

    text: str
    usage: AgentUsage
    finish_reason: str | None
    settlement: Settlement | None = None  # its ledger row's settling, left to the caller (call(settle=False))


class Settlement(TypedDict):
    """A call's ledger row as it is settled (LLMGateway._ledger's arguments), when its answer is in."""

    ref: ModelRef
    tag: CallTag
    usage: AgentUsage
    latency: float
    cache_hit: bool
    structured: str | None
    fitted: bool
    finish_reason: str | None
    call_id: int | None


class LLMCallError(ArenaError):
    """A call that failed for good: retries spent, a non-retryable error, or no valid structured answer."""


class AnswerError(LLMCallError):
    """The model answered, but not usably: empty, refused, or no valid structured answer after the re-asks.

    Unlike a provider's failure, asking later will not help: a debater that gets this cannot speak (a
    forfeit), and an agent's optional step falls back to its neutral value. `checked` is the caller's own
    check's problem when that is what the last answer failed (see LLMGateway.complete's check)."""

    def __init__(self, message: str, checked: str = ""):
        super().__init__(message)
        self.checked = checked


# A caller's check of an answer that parsed: (text, data) -> "" when usable, else the problem, told to the
# model on the re-ask as a schema error is (a speech that is a placeholder, a verdict that contradicts itself).
Check = Callable[[str, Any], str]


class ContextLengthError(LLMCallError):
    """The provider said the prompt and the answer's room exceed the model's context window."""


# A call's timeout on a measured model: this many times what its prompt and answer take at the measured rates (one
# call alone), so that a busy shared machine, or a call that waits behind another, is not taken for a dead server.
TIMEOUT_MARGIN = 3.0
BYTES_PER_TOKEN = 3  # a prompt's tokens for its timeout, from its size: more than most tokenizers count, as is safe
# A server serving fewer at once than it is sent queues the rest: a call that took QUEUED × the time its tokens take at
# the measured rates (or timed out) while others were in flight on its server waited in its queue. QUEUED_IN_A_ROW such
# calls, none served in time between them, lower the server's cap (one slow moment of a shared machine does not).
QUEUED = 1.5
QUEUED_IN_A_ROW = 3


@dataclass
class ServerLimit:
    """The requests sent to one server at once, in one event loop: at most cap, first come first served. The cap is
    lowered, never raised, while the loop goes: by a model of the server measured to serve fewer, or by calls seen
    waiting in the server's queue (LLMGateway._watch)."""

    cap: int
    busy: int = 0
    waiting: deque[asyncio.Future[None]] = field(default_factory=deque)
    queued: list[tuple[int, str]] = field(default_factory=list)  # calls seen queued in a row: (served at once, why)
    lowered: bool = False  # by calls seen queued: the cap is the server's slots, for every model of it

    async def acquire(self) -> int:
        """Wait for a slot; the requests in flight on the server, this one among them."""
        if self.busy < self.cap and not self.waiting:
            self.busy += 1
            return self.busy
        turn = asyncio.get_running_loop().create_future()
        self.waiting.append(turn)
        try:
            await turn
        except asyncio.CancelledError:
            if turn.done() and not turn.cancelled():  # handed a slot as it was cancelled: hand it on
                self.release()
            elif turn in self.waiting:
                self.waiting.remove(turn)
            raise
        return self.busy

    def release(self) -> None:
        self.busy -= 1
        while self.waiting and self.busy < self.cap:
            turn = self.waiting.popleft()
            if not turn.done():
                self.busy += 1  # handed over: the slot is the waiter's before another caller can take it
                turn.set_result(None)


class LLMGateway:
    def __init__(self, settings: LLMSettings, store: Store | None = None, seed: int = 0, *,
                 follow_slots: bool = True):
        self.settings = settings
        self.store = store
        self.seed = seed
        # Send each model at most its measured slots at once (cap); False: [llm] max_concurrency alone, as when
        # the user sets the run's concurrency, or when arena check measures the slots.
        self.follow_slots = follow_slots
        # Limits wait on futures of one event loop; keep a set per loop so a gateway outlives asyncio.run. Per server.
        self._limits: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, ServerLimit]] = (
            weakref.WeakKeyDictionary())
        self._served: dict[str, dict[tuple[str, str], ModelRef]] = {}  # per server, the models called on it
        # per model and endpoint: structured mode, window, measured speed (JSON as the workspace keeps it)
        self._facts: dict[tuple[str, str], dict[str, Any]] = {}
        self.listeners: list[Callable[[CallEvent], None]] = []  # told of each try, re-ask and cache hit (a live display)
        self._prefixes = PrefixCache()  # the prompts of the simulator's stand-ins (STANDING_IN), per real model

    # --- what is known of a model --------------------------------------------------------
    def facts(self, ref: ModelRef) -> dict[str, Any]:
        """What the workspace remembers of ref's model (arena check, fallbacks taken), read once."""
        if ref.key not in self._facts:
            self._facts[ref.key] = (self.store.model_facts(*ref.key) if self.store is not None else None) or {}
        return self._facts[ref.key]

    def remember(self, ref: ModelRef, **facts: Any) -> None:
        """Add facts about ref's model, in memory and in the workspace; writes only what changed."""
        if all(self.facts(ref).get(k) == v for k, v in facts.items()):
            return
        self._facts[ref.key].update(facts)
        if self.store is not None:
            self.store.remember_model(*ref.key, **facts)

    def window(self, ref: ModelRef) -> int:
        """ref's context window (arena.gateway.catalog.window), by what this workspace has learnt of it."""
        return models.window(ref, self.facts(ref))

    def mode(self, ref: ModelRef) -> str:
        """How structured answers are asked of ref: the configured mode, else the one remembered, else the best."""
        if ref.structured != "auto":
            return ref.structured
        remembered: str | None = self.facts(ref).get("structured")
        return remembered or STRUCTURED_MODES[0]

    def cap(self, ref: ModelRef) -> int:
        """Calls sent to ref's server at once, whatever models they ask: [llm] max_concurrency, or the slots its
        server was measured to serve at once (remembered with each of its models) when fewer (follow_slots)."""
        most = self.settings.max_concurrency
        slots: int | None = self.facts(ref).get("slots") if self.follow_slots else None
        return max(1, min(most, slots or most))

    def timeout(self, ref: ModelRef, messages: list[Message], max_tokens: int) -> float:
        """A call's timeout: [llm] timeout_s, or on a model whose throughput was measured TIMEOUT_MARGIN × (its
        latency + the prompt's tokens at its prompt rate + max_tokens at its completion rate) when longer, up to
        arena.base.limits.MAX_TIMEOUT_S; so a slow server that works is given the time its answer takes."""
        facts = self.facts(ref)
        rate: float | None = facts.get("tokens_per_s")
        if not rate:
            return self.settings.timeout_s
        reading = 0.0
        if facts.get("prompt_tokens_per_s"):
            size = sum(len(str(m.get("content", "")).encode()) for m in messages)
            reading = size / BYTES_PER_TOKEN / float(facts["prompt_tokens_per_s"])
        latency: float = facts.get("latency_s") or 0.0
        need = TIMEOUT_MARGIN * (latency + reading + max_tokens / rate)
        return min(MAX_TIMEOUT_S, max(self.settings.timeout_s, need))

    def answer_cap(self, ref: ModelRef, params: Params, schema: Schema | None, max_tokens: int | None) -> int:
        """max_tokens for a call: the caller's need (or the schema's), under the entry's cap and half the window."""
        need = max_tokens or answer_tokens(schema)
        caps = [need, params.get("max_tokens") or need]
        if not ref.simulated:
            caps.append(self.window(ref) // 2)
        return max(1, min(caps))

    def prompt_budget(self, ref: ModelRef, answer: int, *, tight: bool = False) -> int:
        """Prompt tokens a call may send: the window less the answer's room and a reserve for token estimates
        (other tokenizers, chat templates), a larger reserve on the retry after a context-length error."""
        window = self.window(ref)
        return window - answer - (window // 4 if tight else window // 16 + 32)

    def fits(self, ref: ModelRef, messages: list[Message], budget: int) -> bool:
        """Whether messages fit in budget tokens, counted with litellm's token counter only when in doubt."""
        size = sum(len(str(m.get("content", "")).encode()) + 8 for m in messages)
        if size <= budget:  # a token covers at least one byte: surely fits, no counting needed
            return True
        return prompt_tokens(ref.model, messages) <= budget

    # --- the call ------------------------------------------------------------------------
    async def complete(
        self,
        ref: ModelRef,
        messages: list[Message],
        *,
        tag: CallTag,
        params: Params | None = None,
        schema: Schema | None = None,
        sample: int = 0,
        max_tokens: int | None = None,
        tight: bool = False,
        fitted: bool = False,
        check: Check | None = None,
    ) -> Completion:
        """Answer messages with ref's model; with a schema, return the validated JSON in .data.

        sample distinguishes repeated runs of one prompt (judge runs): each index is its own
        cache entry, so the runs are distinct samples rather than cache hits of one another.
        max_tokens is the caller's need for the answer; every call sends a cap (answer_cap).
        tight and fitted come from a caller that fitted its prompt (LLMHandle): the budget it
        fitted to, and whether anything was left out, for the ledger. check judges an answer that parsed:
        one it finds a problem with is re-asked like an invalid one, and a cached one is not reused.
        """
        params = dict(params or {})
        ceiling = params.get("max_tokens")  # the entry's own cap, which no re-ask goes over
        params["max_tokens"] = self.answer_cap(ref, params, schema, max_tokens)
        cache = self.store if self.settings.cache and not ref.simulated else None  # where answers are kept, if they are
        use_cache = cache is not None
        key = _cache_key(ref, messages, params, schema, sample) if use_cache else ""  # hashing 8 KB costs: only if used
        if cache is not None and (hit := cache.cache_get(key)) is not None and not (
                check is not None and check(hit["text"], hit.get("data"))):
            usage = AgentUsage(1, hit["prompt_tokens"], hit["completion_tokens"], 0.0)
            self._ledger(ref, tag, usage, latency=0.0, cache_hit=True)
            self._tell(CallEvent("cached", tag, ref.model, usage=usage))
            return Completion(hit["text"], hit.get("data"), usage, cached=True, cut=hit.get("cut", False))
        if not ref.simulated and not self.fits(ref, messages,
                                               self.prompt_budget(ref, params["max_tokens"], tight=tight)):
            raise LLMCallError(f"{ref.model}: the prompt (about {prompt_tokens(ref.model, messages)} tokens) does not "
                               f"fit its context window of {self.window(ref)} tokens with {params['max_tokens']} "
                               f"left for the answer; set context_window in arena.toml if the model takes more")

        conversation = list(messages)
        total = AgentUsage()
        tries = self.settings.schema_retries + 1
        problem = checked = why = ""  # why: the problem in short, for the listeners' re-ask events
        # With the cache, each answer's ledger row is settled here: one not kept at once, the one kept in the
        # transaction that caches it, so that a kill never leaves a settled (paid) call whose answer is not cached.
        pending: Settlement | None = None
        try:
            for asked in range(tries):
                checked = ""  # the caller's check's problem, when that is what this try failed
                if pending is not None:  # the answer before, not kept
                    self._ledger(**pending)
                if asked:
                    self._tell(CallEvent("reask", tag, ref.model, why, asked, tries - 1))
                answer = await self.call(ref, conversation, params, schema=schema, sample=sample, tag=tag,
                                         fitted=fitted, settle=not use_cache)
                pending = answer.settlement
                total = total + answer.usage
                cut = answer.finish_reason == "length"
                if answer.finish_reason == "content_filter":
                    raise AnswerError(f"{ref.model}: the answer was withheld by the provider's content filter")
                if not answer.text.strip():
                    problem = why = "the answer was empty"  # ask the same again: empty answers are usually a fluke
                    continue
                if schema is None:
                    data = None
                elif cut:  # cut JSON cannot parse: ask again, once, with room to finish
                    if problem.startswith("the answer was cut off"):
                        # Cut again with twice the room: a model that fills any room (small models pad JSON
                        # with whitespace) would only take longer each time.
                        raise AnswerError(f"{ref.model}: no valid structured answer: the answer was cut off "
                                           f"twice, the second time at {params['max_tokens']} tokens")
                    problem = f"the answer was cut off at {params['max_tokens']} tokens"
                    why = f"cut off at {params['max_tokens']} tokens"
                    room = self._more_room(ref, conversation, params["max_tokens"])
                    params = {**params, "max_tokens": min(room, ceiling or room)}
                    continue
                else:
                    data, problem = parse_structured(answer.text, schema)
                    if problem:
                        why = "did not match its schema"
                        # Show the model its own answer and what is wrong with it, then ask again.
                        conversation += [
                            {"role": "assistant", "content": answer.text},
                            {"role": "user", "content": f"That answer is not valid: {problem}. Reply again with "
                                                        f"only a JSON object that matches the required schema."},
                        ]
                        continue
                    cut = False
                problem = checked = check(answer.text, data) if check is not None else ""
                if not problem:
                    break
                why = "check: " + problem.partition(":")[0][:40]  # the check's name ("echo"), as its problem starts
                conversation += [
                    {"role": "assistant", "content": answer.text},
                    {"role": "user", "content": f"That answer cannot be used: {problem}. Answer again as first "
                                                "asked" + (", with only a JSON object that matches the required "
                                                           "schema." if schema is not None else ".")},
                ]
            else:
                wanted = "valid structured answer" if schema is not None and not checked else "usable answer"
                raise AnswerError(f"{ref.model}: no {wanted} after {tries} tries: {problem}", checked)
            if cache is not None and pending is not None:
                with cache.transaction():
                    self._ledger(**pending)
                    pending = None
                    cache.cache_put(key, "llm", {"text": answer.text, "data": data, "cut": cut,
                                                      "prompt_tokens": total.prompt_tokens,
                                                      "completion_tokens": total.completion_tokens})
        finally:
            if pending is not None:  # an answer not kept, and the error on its way up
                self._ledger(**pending)
        return Completion(answer.text, data, total, cached=False, cut=cut)

    def _more_room(self, ref: ModelRef, messages: list[Message], current: int) -> int:
        """Twice the answer's room, as far as the window allows once the prompt is in."""
        if ref.simulated:
            return current * 2
        room = self.window(ref) - prompt_tokens(ref.model, messages) - self.window(ref) // 16
        return max(current, min(current * 2, room))

    async def call(self, ref: ModelRef, messages: list[Message], params: Params, *, tag: CallTag,
                   schema: Schema | None = None, sample: int = 0, fitted: bool = False, settle: bool = True) -> Answer:
        """One answer of ref's model, as it came: retried while the failure is worth it, the structured mode
        fallen back while the provider refuses it, every try ledgered; no cache, no re-asks, no checks. settle
        False: the answer's ledger row stays in flight, its settling (Answer.settlement, for _ledger) left to the
        caller, which stores it with what it keeps of the answer."""
        if ref.simulated:
            self._tell(CallEvent("sent", tag, ref.model))
            started = time.perf_counter()
            text, asked, answered = offline.respond(
                ref.model, ref.strength, messages, schema=schema, sample=sample, seed=self.seed, role=tag.role,
                stage=tag.stage, judging=tag.side is None, verbosity=ref.verbosity, length_bias=ref.length_bias)
            cached = 0
            if (real := STANDING_IN.get().get(ref.model)) is not None:
                text, answered = offline.as_sent(text, answered, params["max_tokens"], prose=schema is None)
                tokens, read = self._prefixes.send(real, prompt_text(messages))
                cached = round(asked * read / tokens) if tokens else 0  # the cache's share, of the simulator's count
            usage = AgentUsage(1, asked, answered, 0.0, cached)
            self._ledger(ref, tag, usage, time.perf_counter() - started, cache_hit=False)
            self._tell(CallEvent("answered", tag, ref.model, usage=usage))
            return Answer(text, usage, "stop")

        limit = self._limit(ref)
        timeout_s = self.timeout(ref, messages, params["max_tokens"])
        mode = self.mode(ref) if schema is not None else None
        attempt = 0
        while True:
            started = time.perf_counter()
            sent, ledgered = None, False
            self._tell(CallEvent("queued", tag, ref.model))  # it may wait here for one of the model's slots
            at_once = 0  # the requests in flight on the server as this one is sent, this one among them
            try:
                at_once = await limit.acquire()
                try:
                    started = time.perf_counter()  # the call's latency is the server's, not its wait for a slot here
                    # In the ledger before it leaves: a kill mid-call must not hide a paid call from --budget.
                    sent = self._ledger(ref, tag, AgentUsage(cost=models.most_cost(ref.model, messages,
                                                                                   params["max_tokens"])),
                                        0.0, cache_hit=False, structured=mode, fitted=fitted, error=IN_FLIGHT)
                    ledgered = True
                    self._tell(CallEvent("sent", tag, ref.model))
                    response = await self._send(ref, messages, params, schema, mode, timeout_s)
                finally:
                    limit.release()
            except Exception as exc:  # litellm raises many types; classify below
                if not ledgered:  # the workspace's failure (a full disk), not the provider's: nothing was sent
                    raise
                latency = time.perf_counter() - started
                if isinstance(exc, CallTimeout):  # waited in the server's queue, perhaps: it serves half as many, say
                    self._watch(ref, tag, limit, at_once, at_once // 2,
                                f"a call timed out with {at_once} in flight")
                denied = retry.auth_status(exc)
                # A refused key is named by its variable; the provider's answer (raw JSON, part of the key) is not kept.
                described = credentials.refused(ref.model, ref.api_base, denied) if denied else retry.describe(exc)
                refused = mode is not None and refuses_format(exc)
                fallback = next_mode(mode) if refused and ref.structured == "auto" else None
                if fallback:
                    # The provider refused this way of asking for JSON: remember the next one and ask again.
                    self._ledger(ref, tag, AgentUsage(), latency, cache_hit=False, structured=mode, fitted=fitted,
                                 error=f"structured output {mode} refused, falling back to {fallback}: {described}",
                                 call_id=sent)
                    mode = fallback
                    self.remember(ref, structured=mode)
                    continue
                self._ledger(ref, tag, AgentUsage(), latency, cache_hit=False, structured=mode, fitted=fitted,
                             error=described, call_id=sent)
                if retry.refused_content(exc):  # the request was fine; the model will not answer it
                    raise AnswerError(f"{ref.model}: {described}") from None
                if models.context_exceeded(exc):
                    if told := models.window_named(str(exc)):  # the server knows its window best: believe it
                        self.remember(ref, refused_beyond=told)
                    raise ContextLengthError(f"{ref.model}: {described} (the prompt and the answer's room exceed "
                                             f"the model's context window)") from None
                retryable = retry.retryable(exc) and not refused  # asking the same way again gets the same refusal
                if not retryable or attempt >= self.settings.retries:
                    raise LLMCallError(f"{ref.model}: {retry.given_up(described, attempt, retryable)}") from None
                wait = retry.delay(self.settings.backoff_s, attempt)
                self._tell(CallEvent("retry", tag, ref.model, described, attempt + 1, self.settings.retries + 1, wait))
                await asyncio.sleep(wait)
                attempt += 1
                continue
            latency = time.perf_counter() - started
            reply = read_reply(response)
            text, finish = reply.text, reply.finish_reason
            usage = AgentUsage(1, reply.prompt_tokens, reply.completion_tokens, reply.cost, reply.cached_tokens)
            self._timed(ref, tag, limit, at_once, latency, usage)
            settlement = Settlement(ref=ref, tag=tag, usage=usage, latency=latency, cache_hit=False, structured=mode,
                                    fitted=fitted, finish_reason=finish, call_id=sent)
            if settle:
                self._ledger(**settlement)
            self._tell(CallEvent("answered", tag, ref.model, usage=usage))
            if mode is not None and ref.structured == "auto":
                self.remember(ref, structured=mode)  # writes only the first time
            return Answer(text, usage, finish, None if settle else settlement)

    # --- a server's slots --------------------------------------------------------------------
    def _limit(self, ref: ModelRef) -> ServerLimit:
        """ref's server's limit in this event loop, its cap lowered to ref's when that is lower (a model of the
        server measured to serve fewer: the server's slots are its fewest)."""
        per_loop = self._limits.setdefault(asyncio.get_running_loop(), {})
        self._served.setdefault(ref.server, {})[ref.key] = ref
        limit = per_loop.get(ref.server)
        if limit is None:  # the cap as known when the loop first calls the server (a run's probe comes before)
            limit = per_loop[ref.server] = ServerLimit(self.cap(ref))
        limit.cap = min(limit.cap, self.cap(ref))
        if limit.lowered and self.cap(ref) > limit.cap:  # a model of the server first called since: its slots too
            self.remember(ref, slots=limit.cap)
        return limit

    def _timed(self, ref: ModelRef, tag: CallTag, limit: ServerLimit, at_once: int, latency: float,
               usage: AgentUsage) -> None:
        """Weigh an answer's time against what its tokens take at the model's measured rates (unmeasured: nothing
        to weigh): QUEUED × that or more, with others in flight on the server, is a call that waited in the
        server's queue (_watch); less is one served at once, which clears the calls seen queued before it."""
        facts = self.facts(ref)
        rate: float | None = facts.get("tokens_per_s")
        if not rate or not self._watches(ref, tag, at_once):
            return
        reading: float | None = facts.get("prompt_tokens_per_s")
        need = ((facts.get("latency_s") or 0.0) + usage.completion_tokens / rate
                + (usage.prompt_tokens / reading if reading else 0.0))
        if latency < QUEUED * need:
            limit.queued.clear()
            return
        self._watch(ref, tag, limit, at_once, int(at_once * need / latency),
                    f"a call took {latency / need:.1f}× its measured time with {at_once} in flight")

    def _watches(self, ref: ModelRef, tag: CallTag, at_once: int) -> bool:
        """Whether a call tells how many its server serves at once: one sent with others in flight on a server of
        yours (a provider's API meets a burst with its rate limits), by a run that follows the slots (not the
        probe, which measures them, nor a run whose --concurrency the user set)."""
        return self.follow_slots and at_once >= 2 and bool(ref.api_base) and tag.role != "probe"

    def _watch(self, ref: ModelRef, tag: CallTag, limit: ServerLimit, at_once: int, served: int, why: str) -> None:
        """A call sent with at_once in flight on its server waited in its queue: the server serves some `served` at
        once. QUEUED_IN_A_ROW of them lower the server's cap to the most they saw served (the least lowering they
        agree on, at least 1), remembered with each model of the server called here, and told to the listeners (a
        line naming the server and the new cap)."""
        served = max(1, served)
        if served >= limit.cap or not self._watches(ref, tag, at_once):
            return
        limit.queued.append((served, why))
        if len(limit.queued) < QUEUED_IN_A_ROW:
            return
        was, limit.cap, limit.lowered = limit.cap, max(1, max(n for n, _ in limit.queued)), True
        reason = limit.queued[-1][1]
        limit.queued.clear()
        for known in self._served.get(ref.server, {}).values():
            self.remember(known, slots=limit.cap)
        self._tell(CallEvent("capped", tag, ref.model,
                             f"{ref.server} serves fewer requests at once than the {was} the run sends it ({reason}): "
                             f"sending it at most {limit.cap} at once from now on"))

    def degraded(self, ref: ModelRef, tag: CallTag, reason: str) -> None:
        """Ledger an optional step that went on with its neutral value because ref's answers were unusable
        (a row of kind 'degraded': no tokens, no cost, the reason as its error)."""
        if self.store is not None:
            self.store.record_call(kind="degraded", model=ref.model, latency_s=0.0, cache_hit=False,
                                   simulated=ref.simulated, match_id=tag.match_id, role=tag.role, stage=tag.stage,
                                   side=tag.side, judge=tag.judge, error=reason)

    def _tell(self, event: CallEvent) -> None:
        for listener in self.listeners:
            listener(event)

    def _ledger(self, ref: ModelRef, tag: CallTag, usage: AgentUsage, latency: float, cache_hit: bool,
                error: str | None = None, structured: str | None = None, fitted: bool = False,
                finish_reason: str | None = None, call_id: int | None = None) -> int | None:
        """Write a call's row (or settle call_id's, written when it was sent); the row's id."""
        if self.store is None:
            return None
        return self.store.record_call(kind="llm", model=ref.model, latency_s=latency, cache_hit=cache_hit,
                                      simulated=ref.simulated, match_id=tag.match_id, role=tag.role,
                                      stage=tag.stage, side=tag.side, judge=tag.judge,
                                      prompt_tokens=usage.prompt_tokens, completion_tokens=usage.completion_tokens,
                                      cost=usage.cost, error=error, structured=structured, fitted=fitted,
                                      finish_reason=finish_reason, call_id=call_id,
                                      cached_tokens=usage.cached_tokens)

    async def _send(self, ref: ModelRef, messages: list[Message], params: Params, schema: Schema | None,
                    mode: str | None, timeout_s: float) -> ModelResponse:
        """One request to ref's model, a structured answer asked for in mode, given timeout_s to answer."""
        kwargs: dict[str, Any] = dict(params)
        if (asked := response_format(schema, mode)) is not None:
            kwargs["response_format"] = asked
        return await send(ref.model, marked(ref.model, with_schema(messages, schema, mode)), kwargs,
                          api_base=ref.api_base, timeout_s=timeout_s, path=self.settings.litellm_path)


def _cache_key(ref: ModelRef, messages: list[Message], params: Params, schema: Schema | None, sample: int) -> str:
    request = {"model": ref.model, "api_base": ref.api_base, "messages": messages, "params": params,
               "schema": schema, "sample": sample}
    return hashlib.sha256(json.dumps(request, sort_keys=True, ensure_ascii=False).encode()).hexdigest()
