"""Trying a provider again: which failures may pass on a later try, how long to wait first, and how a failure
is told. One rule for the LLM gateway (litellm's errors) and the search gateway (tavily-python's and httpx's)."""
from __future__ import annotations

import random
from typing import Any, cast

from arena.gateway.redact import redact

# Worth another try: a request timeout (408), a conflict (409), a rate limit (429), any server error (5xx,
# Anthropic's 529 "overloaded" among them). A bad key (401), a bad request (400) or a plan limit (403, Tavily's
# 432/433) will fail the same way again.
_RETRYABLE_STATUS = frozenset({408, 409, 429})
# litellm's failures without a status, by name, so that classifying them does not import litellm: timeouts (the
# wire's own deadline, CallTimeout, among them), lost connections, overloads.
_RETRYABLE_NAMES = frozenset({"Timeout", "CallTimeout", "APIConnectionError", "TimeoutError",
                              "ServiceUnavailableError", "InternalServerError", "RateLimitError"})


def retryable(exc: Exception) -> bool:
    """Whether the call that raised exc may succeed if tried again unchanged."""
    if unreachable(exc):  # a name that does not resolve, a port nobody listens on: seconds later, the same
        return False
    status = _status(exc)
    if status is not None:
        return status in _RETRYABLE_STATUS or status >= 500
    if type(exc).__name__ in _RETRYABLE_NAMES:
        return True
    import httpx
    from tavily.errors import TimeoutError as TavilyTimeout, UsageLimitExceededError

    # tavily-python's rate limit (its 429) and timeout, and the timeouts and lost connections it lets through.
    return isinstance(exc, (UsageLimitExceededError, TavilyTimeout, TimeoutError, httpx.TimeoutException,
                            httpx.NetworkError, httpx.RemoteProtocolError))


def refused_content(exc: Exception) -> bool:
    """Whether the provider refused to answer on content grounds (litellm's ContentPolicyViolationError): the
    model's refusal, not a failure of the provider, and the same again on any later try."""
    return type(exc).__name__ == "ContentPolicyViolationError"


def _status(exc: Exception) -> int | None:
    """The HTTP status exc reports: litellm's status_code, or the response of httpx's HTTPStatusError (how
    tavily-python reports the statuses it has no class for)."""
    status = getattr(exc, "status_code", None)
    if isinstance(status, int):
        return status
    import httpx

    return exc.response.status_code if isinstance(exc, httpx.HTTPStatusError) else None


def delay(backoff_s: float, attempt: int) -> float:
    """Seconds to wait after failed try number attempt (from 0): doubling from backoff_s, jittered by ±50% so
    that calls refused together do not come back together."""
    return backoff_s * 2.0 ** attempt * random.uniform(0.5, 1.5)


def describe(exc: Exception) -> str:
    """The error in one line, 'TypeName status: first line of its message', with any secret it echoes redacted
    (providers echo keys; httpx adds a line of advice after the first); a failed connection as unreachable tells it."""
    if found := unreachable(exc):
        return redact(found)
    status = getattr(exc, "status_code", None)
    message = str(exc).splitlines()[0][:300] if str(exc) else ""
    return redact(f"{type(exc).__name__}" + (f" {status}" if status else "") + (f": {message}" if message else ""))


def given_up(described: str, attempt: int, worth_retrying: bool) -> str:
    """What a failed call says last: its error, and the tries spent on it when the error was worth retrying."""
    return described + (f" (after {attempt + 1} tries)" if worth_retrying else "")


def unreachable(exc: BaseException) -> str | None:
    """'cannot reach HOST: name not resolved' (or ': connection refused') when exc, or an exception it was raised
    from, is a DNS failure or a refused connection; None otherwise. litellm reports both as a 500 (its
    InternalServerError) around aiohttp's or httpx's error, so the cause is sought down the chain."""
    import socket

    chain = _chain(exc)
    reason = next(("name not resolved" if isinstance(e, socket.gaierror) else "connection refused"
                   for e in chain if isinstance(e, (socket.gaierror, ConnectionRefusedError))), None)
    if reason is None:
        return None
    # Deepest first: litellm's own exceptions carry stand-in requests (api.openai.com) whatever the real host.
    host = next((h for h in map(_host, reversed(chain)) if h), None)
    return f"cannot reach {host}: {reason}" if host else f"cannot connect: {reason}"


def auth_status(exc: Exception) -> int | None:
    """401 or 403 when the provider refused the credentials (litellm's status, tavily-python's own errors)."""
    status = _status(exc)
    if status in (401, 403):
        return status
    # tavily-python's 401; its ForbiddenError stands for plan limits (432, 433) as well as 403, so it is left as is.
    named = type(exc).__name__ in ("InvalidAPIKeyError", "MissingAPIKeyError")
    return 401 if named and type(exc).__module__.startswith("tavily") else None


def _chain(exc: BaseException | None) -> list[BaseException]:
    """exc and the exceptions it was raised from or while handling, each once."""
    found: list[BaseException] = []
    while exc is not None and all(exc is not e for e in found):
        found.append(exc)
        exc = exc.__cause__ or exc.__context__
    return found


def _host(exc: BaseException) -> str | None:
    """The 'host:port' a connection error names: aiohttp's connector errors carry it; httpx's, their request."""
    host, port = getattr(exc, "host", None), getattr(exc, "port", None)
    if isinstance(host, str) and host:
        return f"{host}:{port}" if port and port not in (80, 443) else host
    try:
        url = cast(Any, exc).request.url  # httpx's errors; accessing a missing request raises RuntimeError
    except Exception:
        return None
    host = getattr(url, "host", None)
    return (f"{host}:{url.port}" if url.port else host) if host else None
