"""`arena check`'s probe: try a model as a tournament will before a tournament spends money on it, and remember
what works (the structured-output mode, the window the server names) so that later calls go straight to it."""
from __future__ import annotations

import time
from dataclasses import dataclass

from arena.lazy import litellm
from arena.llm import CallTag, LLMCallError, LLMGateway
from arena.models import ModelRef, priced, served_window, stated_window
from arena.structured import STRUCTURED_MODES, parse_structured

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


async def probe(gateway: LLMGateway, ref: ModelRef, *, structured: bool = True, resume: bool = False) -> Probe:
    """A one-line chat, a structured answer (unless `structured` is False: no caller of the model asks for
    JSON), the window; what it finds is remembered in the workspace, each step's answer as soon as it comes.
    resume: a step whose answer the workspace already holds (a probe stopped part way, a mode a run fell back to)
    is not asked again, so no probe call is paid twice; `arena check` asks every step."""
    if ref.simulated:
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
    return _remembered(gateway, ref, Probe(usable, mode, window, latency, None if usable else problem,
                                           priced(ref.model)))


async def _structured_mode(gateway: LLMGateway, ref: ModelRef, tag: CallTag) -> tuple[str | None, str]:
    """The first mode (only the configured one, unless auto) in which the model gives a valid answer."""
    messages = [{"role": "user", "content": 'Reply with a JSON object whose "word" is "ready".'}]
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
