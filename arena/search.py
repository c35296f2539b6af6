"""The search gateway: Tavily through tavily-python, cached and ledgered, with an offline fallback."""
from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import dataclass

from arena.config import SearchSettings
from arena.errors import ArenaError, UserError


@dataclass(frozen=True)
class SearchResult:
    title: str
    url: str
    content: str


@dataclass(frozen=True)
class SearchTag:
    role: str = "searcher"
    match_id: str | None = None
    stage: str | None = None
    side: str | None = None


class SearchGateway:
    def __init__(self, settings: SearchSettings, store=None, cache: bool = True):
        self.settings = settings
        self.store = store
        self.cache = cache and store is not None

    async def search(self, query: str, *, tag: SearchTag, max_results: int | None = None,
                     search_depth: str = "basic", offline: bool = False) -> list[SearchResult]:
        """Results for query. offline=True (or provider 'offline') answers without the network."""
        limit = max_results or self.settings.max_results
        provider = "offline" if offline else self.settings.provider
        key = hashlib.sha256(json.dumps([provider, self.settings.api_base_url, query, limit, search_depth]).encode())
        key = key.hexdigest()
        started = time.perf_counter()
        hit = self.store.cache_get(key) if self.cache and provider != "offline" else None
        if hit is not None:
            results = hit["results"]
        elif provider == "offline":
            results = _offline_results(query, limit)
        else:
            results = await self._tavily(query, limit, search_depth, tag, started)
            if self.cache:
                self.store.cache_put(key, "search", {"results": results})
        if self.store is not None:
            self.store.record_call(kind="search", model=provider, latency_s=time.perf_counter() - started,
                                   cache_hit=hit is not None, simulated=provider == "offline",
                                   match_id=tag.match_id, role=tag.role, stage=tag.stage, side=tag.side,
                                   cost=None if provider != "offline" else 0.0)
        return [SearchResult(**r) for r in results]

    async def _tavily(self, query, limit, depth, tag, started) -> list[dict]:
        from tavily import AsyncTavilyClient  # lazy, like litellm

        key = os.environ.get("TAVILY_API_KEY")
        if not key:
            raise UserError("TAVILY_API_KEY is not set: export it, or set [search] provider = \"offline\" in arena.toml")
        client = AsyncTavilyClient(api_key=key, api_base_url=self.settings.api_base_url or None)
        try:
            answer = await client.search(query, max_results=limit, search_depth=depth)
        except Exception as exc:  # tavily-python raises its own and httpx's errors
            if self.store is not None:
                self.store.record_call(kind="search", model="tavily", latency_s=time.perf_counter() - started,
                                       cache_hit=False, simulated=False, match_id=tag.match_id, role=tag.role,
                                       stage=tag.stage, side=tag.side, error=type(exc).__name__)
            raise ArenaError(f"search failed for {query!r}: {type(exc).__name__}: {exc}") from None
        return [{"title": r.get("title", ""), "url": r.get("url", ""), "content": r.get("content", "")}
                for r in answer.get("results", [])[:limit]]


def _offline_results(query: str, limit: int) -> list[dict]:
    """Deterministic stand-in sources, labelled as simulated in their titles and URLs."""
    slug = hashlib.sha1(query.encode()).hexdigest()[:10]
    return [{"title": f"[simulated source {i + 1}] {query}", "url": f"https://offline.invalid/{slug}/{i + 1}",
             "content": f"A simulated summary of findings relevant to: {query}."} for i in range(limit)]
