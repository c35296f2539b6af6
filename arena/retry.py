"""Trying a provider again: which failures may pass on a later try, how long to wait first, and how a failure
is told. One rule for the LLM gateway (litellm's errors) and the search gateway (tavily-python's and httpx's)."""
from __future__ import annotations

import random

from arena.redact import redact

# Worth another try: a request timeout (408), a conflict (409), a rate limit (429), any server error (5xx,
# Anthropic's 529 "overloaded" among them). A bad key (401), a bad request (400) or a plan limit (403, Tavily's
# 432/433) will fail the same way again.
_RETRYABLE_STATUS = frozenset({408, 409, 429})
# litellm's failures without a status, by name, so that classifying them does not import litellm: timeouts,
# lost connections, overloads.
_RETRYABLE_NAMES = frozenset({"Timeout", "APIConnectionError", "TimeoutError", "ServiceUnavailableError",
                              "InternalServerError", "RateLimitError"})


def retryable(exc: Exception) -> bool:
    """Whether the call that raised exc may succeed if tried again unchanged."""
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
    return backoff_s * 2 ** attempt * random.uniform(0.5, 1.5)


def describe(exc: Exception) -> str:
    """The error in one line, 'TypeName status: first line of its message', with any secret it echoes redacted
    (providers echo keys; httpx adds a line of advice after the first)."""
    status = getattr(exc, "status_code", None)
    message = str(exc).splitlines()[0][:300] if str(exc) else ""
    return redact(f"{type(exc).__name__}" + (f" {status}" if status else "") + (f": {message}" if message else ""))


def given_up(described: str, attempt: int, worth_retrying: bool) -> str:
    """What a failed call says last: its error, and the tries spent on it when the error was worth retrying."""
    return described + (f" (after {attempt + 1} tries)" if worth_retrying else "")
