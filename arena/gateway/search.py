"""The search gateway: Tavily through tavily-python, cached, retried and ledgered, with an offline fallback."""
from __future__ import annotations

import asyncio
import hashlib
import json
import os
import re
import time
from dataclasses import dataclass
from typing import Any

from arena.gateway import retry
from arena.gateway.wire import BACKSTOP_S, within
from arena.workspace.config import SearchSettings
from arena.gateway.credentials import SEARCH_KEY, search_refused
from arena.base.errors import ArenaError, UserError
from arena.gateway.redact import redact
from arena.store import IN_FLIGHT, Store


@dataclass(frozen=True)
class SearchResult:
    title: str
    url: str
    content: str
    score: float = 0.0  # the provider's relevance score, where it gives one


# A result as cached: SearchResult's fields (the offline ones without a score), JSON as the workspace keeps it
_Found = dict[str, Any]


@dataclass(frozen=True)
class SearchTag:
    role: str = "searcher"
    match_id: str | None = None
    stage: str | None = None
    side: str | None = None


class SearchGateway:
    def __init__(self, settings: SearchSettings, store: Store | None = None, cache: bool = True, *, retries: int = 0,
                 backoff_s: float = 1.0, timeout_s: float = 60.0):
        """retries and backoff_s work as for LLM calls ([llm] retries, backoff_s); timeout_s bounds each try
        (tavily-python's default; it caps it at 120 s)."""
        self.settings = settings
        self.store = store
        self.cache = cache and store is not None
        self.retries = retries
        self.backoff_s = backoff_s
        self.timeout_s = timeout_s

    async def search(self, query: str, *, tag: SearchTag, max_results: int | None = None,
                     search_depth: str = "basic", offline: bool = False) -> list[SearchResult]:
        """Results for query. offline=True (or provider 'offline') answers without the network."""
        limit = max_results or self.settings.max_results
        provider = "offline" if offline else self.settings.provider
        digest = hashlib.sha256(json.dumps([provider, self.settings.api_base_url, query, limit, search_depth]).encode())
        key = digest.hexdigest()
        started = time.perf_counter()
        kept = self.store if self.cache else None  # where results are cached, if they are
        hit = kept.cache_get(key) if kept is not None and provider != "offline" else None
        if hit is None and provider != "offline":
            results = await self._tavily(query, limit, search_depth, tag)  # ledgers each of its tries
            if kept is not None:
                kept.cache_put(key, "search", {"results": results})
        else:
            results = hit["results"] if hit is not None else _offline_results(query, limit)
            self._ledger(provider, tag, time.perf_counter() - started, cache_hit=hit is not None)
        return [SearchResult(**r) for r in results]

    async def _tavily(self, query: str, limit: int, depth: str, tag: SearchTag) -> list[_Found]:
        """Tavily's results; a retryable failure is tried again up to `retries` times, and every try is ledgered."""
        from tavily import AsyncTavilyClient  # lazy, like litellm

        key = os.environ.get(SEARCH_KEY)
        if not key:
            raise UserError("TAVILY_API_KEY is not set: export it, or set [search] provider = \"offline\" in arena.toml")
        async with AsyncTavilyClient(api_key=key, api_base_url=self.settings.api_base_url or None) as client:
            for attempt in range(self.retries + 1):
                started = time.perf_counter()
                sent = self._ledger("tavily", tag, 0.0, error=IN_FLIGHT)  # settled below; a kill leaves it in flight
                try:  # the whole try within timeout_s, however the server trickles its answer
                    answer = await within(self.timeout_s, "search", client.search(
                        query, max_results=limit, search_depth=depth, timeout=self.timeout_s + BACKSTOP_S))
                except Exception as exc:  # tavily-python raises its own and httpx's errors; classified by retry
                    denied = retry.auth_status(exc)  # named by its variable: the server's answer may echo the key
                    retryable = retry.retryable(exc) and not denied
                    described = search_refused(denied) if denied else retry.describe(exc)
                    self._ledger("tavily", tag, time.perf_counter() - started, error=described, call_id=sent)
                    if not retryable or attempt == self.retries:
                        failure = retry.given_up(described, attempt, retryable)
                        raise ArenaError(redact(f"search failed for {query!r}: {failure}")) from None
                    await asyncio.sleep(retry.delay(self.backoff_s, attempt))
                else:
                    self._ledger("tavily", tag, time.perf_counter() - started, call_id=sent)
                    return [{"title": r.get("title", ""), "url": r.get("url", ""), "content": r.get("content", ""),
                             "score": _score(r.get("score"))} for r in answer.get("results", [])[:limit]]
        raise AssertionError("unreachable: the last try returns or raises")

    def _ledger(self, provider: str, tag: SearchTag, latency_s: float, cache_hit: bool = False,
                error: str | None = None, call_id: int | None = None) -> int | None:
        """Write a search's row (or settle call_id's, written when it was sent); the row's id."""
        if self.store is None:
            return None
        offline = provider == "offline"
        return self.store.record_call(kind="search", model=provider, latency_s=latency_s, cache_hit=cache_hit,
                                      simulated=offline, match_id=tag.match_id, role=tag.role, stage=tag.stage,
                                      side=tag.side, cost=0.0 if offline else None, error=error, call_id=call_id)


def _score(value: object) -> float:
    """A result's relevance score as a number (0 when the provider gives none)."""
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


def _offline_results(query: str, limit: int) -> list[_Found]:
    """Deterministic stand-in sources, labelled as simulated in their titles and URLs."""
    slug = hashlib.sha1(query.encode()).hexdigest()[:10]
    if re.search(r"[\u4e00-\u9fff]", query):  # a Chinese query gets Chinese sources, as a real engine gives
        return [{"title": f"[模拟来源 {i + 1}] {query}", "url": f"https://offline.invalid/{slug}/{i + 1}",
                 "content": f"一份模拟的研究摘要，与“{query}”相关。"} for i in range(limit)]
    return [{"title": f"[simulated source {i + 1}] {query}", "url": f"https://offline.invalid/{slug}/{i + 1}",
             "content": f"A simulated summary of findings relevant to: {query}."} for i in range(limit)]
