"""`arena check`'s probe: try a model as a tournament will before a tournament spends money on it, and remember
what works (the structured-output mode, the window the server names) so that later calls go straight to it;
and measure how the server serves it (measure: its slots and its throughput), so that runs neither queue more
calls on it than it serves at once nor time out a slow server that is working."""
from __future__ import annotations

import asyncio
import itertools
import secrets
import time
from dataclasses import dataclass, replace
from typing import Awaitable, Callable, Sequence, TypedDict

from arena.gateway.chat import Message
from arena.gateway.lazy import litellm
from arena.gateway.llm import Answer, CallTag, LLMCallError, LLMGateway
from arena.gateway.catalog import ModelRef, priced, served_window, stated_window
from arena.gateway.structured import STRUCTURED_MODES, parse_structured

_SCHEMA = {"title": "probe", "type": "object", "properties": {"word": {"type": "string"}},
           "required": ["word"], "additionalProperties": False}


@dataclass(frozen=True)
class Probe:
    """What `arena check` finds out about a model."""

    ok: bool
    structured: str | None = None  # the structured-output mode that worked
    context_window: int | None = None
    latency_s: float | None = None
    error: str | None = None
    priced: bool = False  # whether litellm knows the model's price
    slots: int | None = None  # requests the server serves at once, measured (at most [llm] max_concurrency)
    tokens_per_s: float | None = None  # completion tokens a second, one request alone
    prompt_tokens_per_s: float | None = None  # prompt tokens read a second


# The measurement (measure): answers cut at a fixed length (the model asked to count far beyond it), a short one and
# a long one alone, then the long one in batches of 2, 4, ... at once; and a long prompt with a one-token answer.
SHORT_TOKENS, GEN_TOKENS = 8, 48
# Answers of one batch that come within TOGETHER × one answer's service time of one another were served together;
# ones APART × it or more apart, one after the other (a one-slot server's come a whole service time apart); between
# the two, unsure. The service time is the long answer's tokens at the rate measured alone (its connection and its
# prompt left out: a slow connection does not widen it), and never more than the batch's first answer took.
TOGETHER, APART = 0.25, 0.5
REPEATS = 2  # batches measured again, at most: one unsure, or a count that no other batch has shown yet
TIMED_S = 0.05  # a difference of times under this is too small to time: the server is not the bottleneck
PROMPT_NUMBERS = 300  # the long prompt: this many numbers, some 600-1,000 tokens as tokenizers count them
# Prompts that differ from their start, so that a server reusing the last prompt's evaluation reuses none of it;
# the batches' each count from a number of its own, from FIRST_OWN on (the answers alone count from 1, 2 and 3).
FIRST_OWN = 10
COUNT_PROMPT = "Count from {} to 500 in words (one, two, three, ...), one number a line, and nothing else."
READ_PROMPT = "Read this list, then reply with the word ok and nothing else: "


async def probe(gateway: LLMGateway, ref: ModelRef, *, structured: bool = True, resume: bool = False,
                slots: int | None = None) -> Probe:
    """A one-line chat, a structured answer (unless `structured` is False: no caller of the model asks for
    JSON), the window; what it finds is remembered in the workspace, each step's answer as soon as it comes.
    resume: a step whose answer the workspace already holds (a probe stopped part way, a mode a run fell back to)
    is not asked again, so no probe call is paid twice; `arena check` asks every step. slots: the server's, measured
    on another of its models (probe_server), taken as they are rather than measured again."""
    if ref.simulated:  # the simulator serves any number at once, at no cost in time: nothing to measure
        return Probe(True, "json_schema", None, 0.0, None, True)
    tag = CallTag(role="probe")
    known = gateway.facts(ref) if resume else {}
    litellm()  # imported before the clock starts: the latency is the model's, not the import's

    latency = known.get("latency_s")
    if latency is None:
        started = time.perf_counter()
        try:
            await gateway.call(ref, [{"role": "user", "content": "Reply with one word: ready"}],
                               {"max_tokens": 16, "temperature": 0}, tag=tag)
        except LLMCallError as exc:
            return _remembered(gateway, ref, Probe(False, None, None, None, str(exc), priced(ref.model)))
        latency = round(time.perf_counter() - started, 3)
        gateway.remember(ref, latency_s=latency)  # the chat answered: counted now, whatever stops the probe next
    if not structured:
        mode, problem = None, ""
    elif known.get("structured") and ref.structured in ("auto", known["structured"]):
        mode, problem = known["structured"], ""
    else:
        mode, problem = await _structured_mode(gateway, ref, tag)
    window = stated_window(ref) or await served_window(ref, gateway.settings.timeout_s)
    usable = mode is not None or not structured
    if usable:
        gateway.remember(ref, ok=True)  # the measurement below may be stopped; what is known so far counts
        if "measured_at" in known:
            speed = Speed(slots=known.get("slots"), tokens_per_s=known.get("tokens_per_s"),
                          prompt_tokens_per_s=known.get("prompt_tokens_per_s"))
        else:
            speed = await measure(gateway, ref, tag, slots=slots)
    else:
        speed = Speed(slots=None, tokens_per_s=None, prompt_tokens_per_s=None)  # Probe's defaults
    return _remembered(gateway, ref, Probe(usable, mode, window, latency, None if usable else problem,
                                           priced(ref.model), **speed))


class Speed(TypedDict):
    """How a server serves a model (measure), each None when it could not be measured: Probe's last three fields."""

    slots: int | None
    tokens_per_s: float | None
    prompt_tokens_per_s: float | None


async def probe_server(gateway: LLMGateway, refs: list[tuple[ModelRef, bool]], *,
                       resume: bool = False) -> list[Probe]:
    """The models of one server (ModelRef.server), each with whether JSON is asked of it, probed one after another:
    a server's slots are its own, whatever the names of the models it serves, and models probed at once would each
    see the others' requests in its timings. The slots are measured once, on the first model that answers, and
    are every model's of the server (remembered with each)."""
    found: list[Probe] = []
    slots: int | None = None
    for ref, asks_json in refs:
        found.append(await probe(gateway, ref, structured=asks_json, resume=resume, slots=slots))
        slots = slots or found[-1].slots
    if slots is not None:
        for k, (ref, _) in enumerate(refs):
            if found[k].ok and found[k].slots != slots:  # remembered before, from another measurement
                gateway.remember(ref, slots=slots)
                found[k] = replace(found[k], slots=slots)
    return found


async def measure(gateway: LLMGateway, ref: ModelRef, tag: CallTag, *, slots: int | None = None) -> Speed:
    """How ref's server serves it, remembered in the workspace: {slots, tokens_per_s, prompt_tokens_per_s}, each
    None when it could not be measured (a call failed, the model stopped early, the server too quick to time).

    tokens_per_s: answers alone, cut at SHORT_TOKENS and at GEN_TOKENS (each twice, the quicker kept): the
    completion tokens the server reports beyond the short one's, over the time beyond its time (what a request
    costs besides, its connection and its prompt, cancels out). slots: the long answer 2, 4, 8, ... at once, up to
    [llm] max_concurrency, read from when each answer of a batch came (_slots, served_at_once): a one-slot server
    answers them one after another, a service time apart, however late the first came; one of s slots in groups of s.
    Within one batch, so that a shared machine's load, which changes between requests, hardly moves it; a count taken
    once two batches show it, a batch that leaves it unsure measured again, and the lower count kept; slots =
    max_concurrency means at least that many. prompt_tokens_per_s: a long prompt (PROMPT_NUMBERS numbers) with a
    one-token answer: its prompt tokens beyond the short answer's, over its time beyond that answer's (less that
    answer's tokens). Cheap: 5 answers alone, then batches of 2, 4, ... until one is not all served together (a
    one-slot server: one batch of 2), and one sent again, at most REPEATS times, when it leaves the count unsure or
    shows one no other batch has. A provider's own API is not measured for slots (serves_slots); slots given (the
    server's, measured on another of its models) are taken as they are."""
    limit = max(1, gateway.settings.max_concurrency)
    speed = Speed(slots=None, tokens_per_s=None, prompt_tokens_per_s=None)

    fresh = itertools.count()

    async def timed(k: int, max_tokens: int, start: int = 1, content: str = "", own: bool = False) -> _Timed | None:
        """k requests at once; None if one failed. own: each with a prompt of its own, never sent before, so that
        each is evaluated (a server's slot that kept a prompt's evaluation would answer that one sooner, and
        answers served together would come apart, or ones served in turn come together)."""
        starts = [FIRST_OWN + next(fresh) % 400 for _ in range(k)] if own else [start] * k
        started = time.perf_counter()

        async def one(begin: int) -> tuple[float, Answer]:
            messages: list[Message] = [{"role": "user", "content": content or COUNT_PROMPT.format(begin)}]
            answer = await gateway.call(ref, messages, {"max_tokens": max_tokens, "temperature": 0}, tag=tag)
            return time.perf_counter() - started, answer

        try:
            done = await asyncio.gather(*(one(begin) for begin in starts))
        except LLMCallError:
            return None
        times = tuple(sorted(t for t, _ in done))
        return _Timed(times[0], times[-1], min(a.usage.completion_tokens for _, a in done),
                      done[0][1].usage.prompt_tokens, times)

    # Each alone twice, and the quicker kept: a request may pay for more than its tokens (a new connection, a busy
    # moment of a shared machine, whose other processes can stall a CPU server's threads for seconds).
    short = await timed(1, SHORT_TOKENS, start=2)
    alone = await timed(1, GEN_TOKENS) if short is not None else None
    if short is not None and alone is not None:
        short = _quicker(short, await timed(1, SHORT_TOKENS, start=2))
        alone = _quicker(alone, await timed(1, GEN_TOKENS, start=3))
    if short is not None and alone is not None and alone.tokens - short.tokens >= SHORT_TOKENS \
            and alone.last - short.last >= TIMED_S:
        speed["tokens_per_s"] = round((alone.tokens - short.tokens) / (alone.last - short.last), 1)
    if slots is not None and serves_slots(ref):
        speed["slots"] = slots
    elif speed["tokens_per_s"] and alone is not None and serves_slots(ref):  # a rate is measured on alone
        service = alone.tokens / speed["tokens_per_s"]
        speed["slots"] = await _slots(lambda k: timed(k, GEN_TOKENS, own=True), alone.tokens, service, limit)
    # A list of its own each time (a mark of its own before the numbers): a server that keeps the prompts it read
    # (llama-cpp-python's with a RAM cache, llama-server's slots) would answer a list it read before without reading it.
    numbers = f"(list {secrets.token_hex(4)}) " + " ".join(str(n) for n in range(1, PROMPT_NUMBERS + 1))
    rate = speed["tokens_per_s"]
    read = await timed(1, 1, content=READ_PROMPT + numbers) if rate else None
    if read is not None and short is not None and rate:
        extra = read.prompt - short.prompt
        spent = read.last - short.last + (short.tokens - read.tokens) / rate
        if extra > 0 and spent >= TIMED_S:  # a server that reads it in no time is not timed
            speed["prompt_tokens_per_s"] = round(extra / spent, 1)
    gateway.remember(ref, **speed, measured_at=time.time())
    return speed


def serves_slots(ref: ModelRef) -> bool:
    """Whether ref's server is measured for slots: one named by an api_base (a server of yours: llama.cpp, vLLM,
    Ollama, a gateway), not a provider's own API, which serves many at once and meets a burst with its rate limits
    (retried), and whose answers' spread in time would read as a few slots and cap a run for nothing."""
    return bool(ref.api_base)


@dataclass(frozen=True)
class _Timed:
    """Requests sent at once: when the first and the last were answered (seconds after they were sent), the fewest
    completion tokens of their answers and the prompt's tokens, as the server counts them; and when each was."""

    first: float
    last: float
    tokens: int
    prompt: int
    times: tuple[float, ...] = ()  # when each was answered, in the order they came


def _quicker(one: _Timed, other: _Timed | None) -> _Timed:
    """The quicker of two timings of one request alone (other None: it failed)."""
    return other if other is not None and other.tokens == one.tokens and other.last < one.last else one


async def _slots(batch: Callable[[int], Awaitable[_Timed | None]], tokens: int, service: float, limit: int) -> int:
    """How many requests the server serves at once, from batches of the long answer sent at once (batch(k): k of
    them, None when one failed), each answer of `tokens` taking `service` seconds alone. A batch of 2 first; a batch
    all served together is followed by one twice its size (up to limit); a count is taken once two batches have shown
    it (a count of 1 at once: it is the least); a batch that leaves it unsure, or a count not seen before, is measured
    again (REPEATS at most). Then, or when a batch fails, the most that two batches showed: noise that brings two
    answers of a one-slot server together in one batch does not make it two."""
    counts: list[int] = []
    k, repeats = min(2, limit), 0
    while k >= 2:
        timing = await batch(k)
        if timing is None or timing.tokens < tokens:  # a failed or cut answer: measured no further
            break
        count, sure = served_at_once(timing.times, min(service, timing.first))
        seen = max(counts, default=0) >= count
        counts.append(count)
        if count == k < limit:
            k = min(2 * k, limit)
        elif sure and (count == 1 or seen):
            return count
        elif repeats < REPEATS:
            repeats += 1
        else:
            break
    return sorted(counts)[-2] if len(counts) >= 2 else 1


def served_at_once(times: Sequence[float], service: float) -> tuple[int, bool]:
    """From when the answers of one batch came (in order) and one answer's service time: how many the server served at
    once, and whether the times were clear. All within TOGETHER × service of the first: all of them. Otherwise the
    answers fall in groups, split where one comes apart from the one before it: APART × the step or more, the step
    being the service time, or the widest gap if narrower (a server of s slots answers in groups of s, a whole step
    apart; a one-slot server one at a time, each a step after the other, however late the first came); a gap between
    TOGETHER and APART × it is unsure, and splits. The count is the smallest group but the last (which may be what
    was left over); unsure, too, when the groups differ."""
    span = times[-1] - times[0]
    if span < TOGETHER * service:
        return len(times), True
    gaps = [later - earlier for earlier, later in zip(times, times[1:])]
    step = min(service, max(gaps))
    groups, sure = [1], span >= APART * service
    for gap in gaps:
        if gap < TOGETHER * step:
            groups[-1] += 1
        else:
            sure = sure and gap >= APART * step
            groups.append(1)
    count = min(groups[:-1])
    return count, sure and all(g == count for g in groups[:-1]) and groups[-1] <= count


async def _structured_mode(gateway: LLMGateway, ref: ModelRef, tag: CallTag) -> tuple[str | None, str]:
    """The first mode (only the configured one, unless auto) in which the model gives a valid answer."""
    messages: list[Message] = [{"role": "user", "content": 'Reply with a JSON object whose "word" is "ready".'}]
    modes = STRUCTURED_MODES if ref.structured == "auto" else (ref.structured,)
    problem = ""
    for mode in modes:
        forced = ModelRef(ref.model, ref.api_base, context_window=ref.context_window, structured=mode)
        try:
            answer = await gateway.call(forced, messages, {"max_tokens": 64}, schema=_SCHEMA, tag=tag)
        except LLMCallError as exc:
            problem = str(exc)
            continue
        _, problem = parse_structured(answer.text, _SCHEMA)
        if not problem:
            gateway.remember(ref, structured=mode)  # counted now, as the chat's answer is
            return mode, ""
        problem = f"{mode}: {problem}"
    return None, f"no structured-output mode worked ({problem})"


def _remembered(gateway: LLMGateway, ref: ModelRef, probe: Probe) -> Probe:
    facts = {"ok": probe.ok, "latency_s": probe.latency_s, "error": probe.error, "priced": probe.priced,
             "context_window": probe.context_window, "checked_at": time.time()}
    if probe.structured:
        facts["structured"] = probe.structured
    gateway.remember(ref, **facts)
    return probe
