"""A real Tavily-compatible ``POST /search`` HTTP server on 127.0.0.1, for tests.

tavily-python 0.8.5 builds its URL as ``api_base_url + "/search"`` (sync client:
``requests`` session; async client: ``httpx.AsyncClient(base_url=api_base_url)``),
sends ``Authorization: Bearer <key>`` (when a key is given), ``X-Client-Source``,
``Content-Type: application/json`` and a JSON body with ``query`` plus every
non-None option (``max_results``, ``search_depth``, ``topic``, ``include_answer``...).

    with FakeTavily() as tv:
        client = TavilyClient(api_key="tvly-test", api_base_url=tv.base_url)
        client.search("motion", max_results=2)
        assert tv.requests[0].body["max_results"] == 2

Errors use Tavily's shape ``{"detail": {"error": "..."}}`` which tavily-python turns
into UsageLimitExceededError (429), InvalidAPIKeyError (401), ForbiddenError
(403/432/433), BadRequestError (400), or ``requests``/``httpx`` HTTPStatusError (others).
``Reply(status=401, echo_authorization=True)`` appends the request's Authorization
header to the error message, as a server that leaks the key it was sent would.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from typing import Callable, Optional

from http.server import BaseHTTPRequestHandler

from .openai_server import Recorded, Reply, _BaseFakeServer, with_authorization

__all__ = ["FakeTavily", "Recorded", "Reply", "default_results"]

ResultsFor = Callable[[str, dict], list]

_TAVILY_ERRORS = {
    400: "Bad request.",
    401: "Unauthorized: missing or invalid API key.",
    403: "Forbidden.",
    429: "Rate limit exceeded. Please retry later.",
    432: "This request exceeds your plan's set usage limit.",
    433: "This request exceeds the pay-as-you-go limit.",
    500: "Internal server error.",
    503: "Service unavailable.",
}


def _slug(text: str) -> str:
    s = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return s[:60] or "query"


def default_results(query: str, body: dict) -> list[dict]:
    """Three deterministic results derived from the query (URLs under https://example.org/)."""
    slug = _slug(query)
    digest = hashlib.sha1(query.encode("utf-8")).hexdigest()[:8]
    return [
        {
            "title": f"Result {i} for {query}",
            "url": f"https://example.org/{slug}/{digest}/{i}",
            "content": f"Source {i} discusses {query}. Deterministic fake snippet #{i}.",
            "score": round(0.9 - 0.1 * (i - 1), 2),
        }
        for i in (1, 2, 3)
    ]


class FakeTavily(_BaseFakeServer):
    """Tavily ``POST /search``. Use ``base_url`` as tavily-python's ``api_base_url``.

    ``results_for(query, body)`` scripts the results; like the real API the list is
    cut to the request's ``max_results``. ``faults.enqueue(Reply(status=..., delay=...))``
    injects errors/latency (a pass-through ``Reply(delay=s)`` delays a normal answer).
    """

    PATHS = ("/search",)

    def __init__(self, results_for: Optional[ResultsFor] = None) -> None:
        super().__init__()
        self.results_for: ResultsFor = results_for or default_results

    @property
    def api_base_url(self) -> str:
        return self.base_url

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        started = time.monotonic()
        path, headers, body, parse_error = self._read_request(handler)
        self._record(Recorded(path=path, headers=headers, body=body))

        if handler.command != "POST" or path not in self.PATHS:
            self._send(handler, 404, json.dumps({"detail": {"error": f"Unknown path {handler.command} {path}"}}))
            return
        if parse_error:
            self._send(handler, 400, json.dumps({"detail": {"error": parse_error}}))
            return

        fault = self.faults.pop()
        reply = fault if fault is not None else Reply()
        self._sleep(reply.delay)
        extra = dict(reply.headers)
        if reply.status == 429:
            extra.setdefault("retry-after", "0")

        if reply.raw is not None:
            self._send(handler, reply.status, reply.raw, extra)
            return
        if reply.status >= 400:
            msg = with_authorization(reply.content or _TAVILY_ERRORS.get(reply.status, f"HTTP {reply.status}"),
                                     reply, headers)
            self._send(handler, reply.status, json.dumps({"detail": {"error": msg}}), extra)
            return

        query = body.get("query")
        if not isinstance(query, str) or not query.strip():
            self._send(handler, 400, json.dumps({"detail": {"error": "Query is missing."}}))
            return
        try:
            results = list(self.results_for(query, body))
            max_results = body.get("max_results")
            if isinstance(max_results, int) and max_results >= 0:
                results = results[:max_results]  # like the real API
        except Exception as e:
            self.errors.append(e)
            self._send(handler, 500, json.dumps(
                {"detail": {"error": f"FakeTavily results_for raised {type(e).__name__}: {e}"}}))
            return
        payload = {
            "query": query,
            "follow_up_questions": None,
            "answer": None,
            "images": [],
            "results": results,
            "response_time": round(time.monotonic() - started, 3),
        }
        self._send(handler, reply.status, json.dumps(payload), extra, trickle_s=reply.trickle_s)
