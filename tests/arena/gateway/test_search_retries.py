"""Search calls retry like LLM calls (one rule, arena.gateway.retry): 408, 409, 429, 5xx, timeouts and lost
connections are tried again with backoff; a bad key, a bad request, a plan limit or a refused connection fails
at once. Every try is a ledger row.

Real loopback HTTP: gateway -> real tavily-python -> httpx -> FakeTavily; nothing is patched.
"""
from __future__ import annotations

import asyncio
import re
import socket
import time

import pytest

from arena.workspace.config import SearchSettings
from arena.base.errors import ArenaError
from arena.gateway.search import SearchGateway, SearchTag
from tests.support.fakes.tavily_server import Reply


@pytest.fixture(autouse=True)
def tavily_key(monkeypatch):
    monkeypatch.setenv("TAVILY_API_KEY", "tvly-test")


def gateway(store, base_url: str, **options) -> SearchGateway:
    return SearchGateway(SearchSettings(api_base_url=base_url, max_results=3), store,
                         **{"retries": 3, "backoff_s": 0, **options})


def search(gw: SearchGateway, query: str = "car bans"):
    return asyncio.run(gw.search(query, tag=SearchTag(match_id="m00001", side="pro")))


def errors(store) -> list[str | None]:
    """The error column of the search ledger rows, oldest first."""
    return [r[0] for r in store.conn.execute("SELECT error FROM calls WHERE kind='search' ORDER BY id")]


def test_a_rate_limit_then_success_succeeds_with_two_ledger_rows(fake_tavily, store):
    fake_tavily.faults.enqueue(Reply(status=429))

    results = search(gateway(store, fake_tavily.base_url))

    assert len(results) == 3
    assert len(fake_tavily.requests) == 2
    first, second = errors(store)
    assert first == "UsageLimitExceededError: Rate limit exceeded. Please retry later."
    assert second is None
    rows = store.conn.execute("SELECT model, match_id, side, cache_hit FROM calls WHERE kind='search'").fetchall()
    assert [tuple(r) for r in rows] == [("tavily", "m00001", "pro", 0)] * 2


def test_server_errors_twice_then_success_succeeds(fake_tavily, store):
    fake_tavily.faults.enqueue(Reply(status=503), Reply(status=500))

    assert len(search(gateway(store, fake_tavily.base_url))) == 3

    assert len(fake_tavily.requests) == 3
    first, second, third = errors(store)
    assert first.startswith("HTTPStatusError: Server error '503 Service Unavailable'")
    assert second.startswith("HTTPStatusError: Server error '500 Internal Server Error'")
    assert third is None


@pytest.mark.parametrize("status", [408, 409])
def test_a_request_timeout_or_conflict_is_retried_as_for_llm_calls(fake_tavily, store, status):
    """One rule for both gateways (arena.gateway.retry): 408 and 409 are worth another try, which tavily-python reports
    as httpx's HTTPStatusError."""
    fake_tavily.faults.enqueue(Reply(status=status))

    assert len(search(gateway(store, fake_tavily.base_url))) == 3

    assert len(fake_tavily.requests) == 2
    first, second = errors(store)
    assert first.startswith(f"HTTPStatusError: Client error '{status} ")
    assert second is None


@pytest.mark.parametrize("status, name", [(401, "the key in TAVILY_API_KEY was refused"), (400, "BadRequestError"),
                                          (403, "ForbiddenError"), (432, "ForbiddenError"),
                                          (404, "HTTPStatusError")])
def test_a_non_retryable_error_fails_at_once(fake_tavily, store, status, name):
    fake_tavily.faults.enqueue(Reply(status=status))

    with pytest.raises(ArenaError, match=f"^search failed for 'car bans': {re.escape(name)}") as ei:
        search(gateway(store, fake_tavily.base_url))

    assert "tries" not in str(ei.value)
    assert len(fake_tavily.requests) == 1
    assert len(errors(store)) == 1


def test_retries_spent_fails_naming_the_tries(fake_tavily, store):
    fake_tavily.faults.enqueue(*[Reply(status=429, content="Rate limit exceeded")] * 3)

    with pytest.raises(ArenaError) as ei:
        search(gateway(store, fake_tavily.base_url, retries=2))

    assert str(ei.value) == "search failed for 'car bans': UsageLimitExceededError: Rate limit exceeded (after 3 tries)"
    assert len(fake_tavily.requests) == 3
    assert errors(store) == ["UsageLimitExceededError: Rate limit exceeded"] * 3


def test_a_timeout_is_retried(fake_tavily, store):
    fake_tavily.faults.enqueue(Reply(delay=2))  # beyond the client's timeout: tavily-python raises its TimeoutError

    assert len(search(gateway(store, fake_tavily.base_url, timeout_s=0.2))) == 3

    assert len(fake_tavily.requests) == 2
    assert errors(store) == ["CallTimeout: no whole answer within 0.2 s (the search's timeout, connection to last "
                             "byte)", None]


def test_a_trickling_search_server_cannot_stretch_a_try_past_its_timeout(fake_tavily, store):
    # Headers at once, then a byte every 0.3 s: each read meets tavily-python's own timeout, the whole answer
    # (about 600 bytes) would take minutes. Each try ends at the search's timeout; the retry gets a real answer.
    fake_tavily.faults.enqueue(Reply(trickle_s=0.3))
    began = time.monotonic()

    assert len(search(gateway(store, fake_tavily.base_url, timeout_s=1.0))) == 3

    assert time.monotonic() - began < 4
    assert errors(store)[0].startswith("CallTimeout: no whole answer within 1 s") and errors(store)[1] is None


def test_a_refused_connection_is_named_and_not_retried(store):
    with socket.socket() as s:  # a port nothing listens on once the socket is closed
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]

    with pytest.raises(ArenaError) as ei:
        search(gateway(store, f"http://127.0.0.1:{port}", retries=3))

    assert str(ei.value) == f"search failed for 'car bans': cannot reach 127.0.0.1:{port}: connection refused"
    assert errors(store) == [f"cannot reach 127.0.0.1:{port}: connection refused"]  # one try, not four


def test_backoff_waits_between_tries(fake_tavily, store):
    fake_tavily.faults.enqueue(Reply(status=429), Reply(status=429))
    started = time.perf_counter()

    search(gateway(store, fake_tavily.base_url, backoff_s=0.05))

    # delays are backoff_s * 2**attempt * uniform(0.5, 1.5): at least 0.025 + 0.05
    assert time.perf_counter() - started >= 0.075
    assert len(fake_tavily.requests) == 3


def test_offline_sources_are_labelled_simulated_and_in_the_querys_language(store):
    gw = SearchGateway(SearchSettings(provider="offline"), store)
    english = asyncio.run(gw.search("car bans", tag=SearchTag(), max_results=2))
    chinese = asyncio.run(gw.search("城市禁车", tag=SearchTag(), max_results=2))
    assert [r.title for r in english] == ["[simulated source 1] car bans", "[simulated source 2] car bans"]
    assert [r.title for r in chinese] == ["[模拟来源 1] 城市禁车", "[模拟来源 2] 城市禁车"]
    assert all("城市禁车" in r.content and r.url.startswith("https://offline.invalid/") for r in chinese)
