"""Tests of the loopback test doubles, exercised through the REAL clients
(litellm -> openai SDK -> HTTP, tavily-python -> requests/httpx -> HTTP)."""

import asyncio
import json
import time
import urllib.error
import urllib.request

import pytest

from tests.support.fakes.openai_server import FakeOpenAI, Reply, last_user, messages_text
from tests.support.fakes.tavily_server import FakeTavily, default_results

# litellm's own retries off: the project's gateway does the retrying.
NO_RETRY = {"num_retries": 0, "max_retries": 0}
MESSAGES = [
    {"role": "system", "content": "You are a debater."},
    {"role": "user", "content": "Argue for the motion."},
]


@pytest.fixture(scope="session")
def litellm():
    import litellm as _litellm  # slow import (~5 s): once per session

    _litellm.suppress_debug_info = True
    return _litellm


def _acall(litellm, server, model="openai/fake-model", messages=MESSAGES, **kw):
    return asyncio.run(
        litellm.acompletion(model=model, api_base=server.api_base, api_key="sk-test", messages=messages, **kw)
    )


def _post(url, payload, timeout=5):
    """Plain HTTP POST (no client library) -> (status, headers, parsed-or-raw body)."""
    req = urllib.request.Request(url, data=json.dumps(payload).encode(), method="POST",
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            status, headers, raw = resp.status, dict(resp.headers), resp.read()
    except urllib.error.HTTPError as e:
        status, headers, raw = e.code, dict(e.headers), e.read()
    try:
        return status, {k.lower(): v for k, v in headers.items()}, json.loads(raw)
    except ValueError:
        return status, {k.lower(): v for k, v in headers.items()}, raw.decode()


# ----------------------------------------------------------------- FakeOpenAI


def test_litellm_returns_scripted_content_and_usage(litellm, fake_llm):
    fake_llm.script("First speech, four words.", Reply(content="second", prompt_tokens=100, completion_tokens=7))

    r1 = _acall(litellm, fake_llm, **NO_RETRY)
    r2 = _acall(litellm, fake_llm, **NO_RETRY)
    r3 = _acall(litellm, fake_llm, **NO_RETRY)  # script repeats its last entry

    assert r1.choices[0].message.content == "First speech, four words."
    assert r1.choices[0].finish_reason == "stop"
    # default usage = word counts: prompt "You are a debater." + "Argue for the motion." = 8 words
    assert (r1.usage.prompt_tokens, r1.usage.completion_tokens, r1.usage.total_tokens) == (8, 4, 12)
    assert r2.choices[0].message.content == "second"
    assert (r2.usage.prompt_tokens, r2.usage.completion_tokens, r2.usage.total_tokens) == (100, 7, 107)
    assert r3.choices[0].message.content == "second"
    assert r1.model.endswith("fake-model")
    assert len(fake_llm.requests) == 3


def test_request_is_recorded_with_messages_and_parameters(litellm, fake_llm):
    _acall(litellm, fake_llm, temperature=0.3, max_tokens=50,
           response_format={"type": "json_object"}, **NO_RETRY)

    [rec] = fake_llm.requests
    assert rec.path == "/v1/chat/completions"
    assert rec.headers["authorization"] == "Bearer sk-test"
    assert rec.body["model"] == "fake-model"
    assert rec.body["messages"] == MESSAGES
    assert rec.body["temperature"] == 0.3
    assert rec.body["max_tokens"] == 50
    assert rec.body["response_format"] == {"type": "json_object"}
    assert not rec.body.get("stream")
    assert messages_text(rec.body) == "You are a debater.\nArgue for the motion."
    assert last_user(rec.body) == "Argue for the motion."


def test_responder_sees_request_body(litellm, fake_llm):
    fake_llm.responder = lambda body: f"echo: {last_user(body)} (t={body.get('temperature')})"
    r = _acall(litellm, fake_llm, temperature=0.0, **NO_RETRY)
    assert r.choices[0].message.content == "echo: Argue for the motion. (t=0.0)"


@pytest.mark.parametrize(
    "status, exc_name",
    [(500, "InternalServerError"), (429, "RateLimitError"), (503, "ServiceUnavailableError"),
     (400, "BadRequestError"), (401, "AuthenticationError")],
)
def test_enqueued_error_surfaces_as_litellm_exception_without_litellm_retry(litellm, fake_llm, status, exc_name):
    fake_llm.faults.enqueue(Reply(status=status))
    with pytest.raises(getattr(litellm, exc_name)) as ei:
        _acall(litellm, fake_llm, **NO_RETRY)
    assert ei.value.status_code == status
    assert len(fake_llm.requests) == 1  # litellm did not retry
    # the fault was consumed: the next request gets the responder's answer
    r = _acall(litellm, fake_llm, **NO_RETRY)
    assert r.choices[0].message.content
    assert len(fake_llm.requests) == 2


def test_faults_are_fifo_before_responder(litellm, fake_llm):
    fake_llm.script("ok")
    fake_llm.faults.enqueue(Reply(status=429), Reply(status=500))
    with pytest.raises(litellm.RateLimitError):
        _acall(litellm, fake_llm, **NO_RETRY)
    with pytest.raises(litellm.InternalServerError):
        _acall(litellm, fake_llm, **NO_RETRY)
    assert _acall(litellm, fake_llm, **NO_RETRY).choices[0].message.content == "ok"
    assert len(fake_llm.faults) == 0
    assert len(fake_llm.requests) == 3  # errored requests are recorded too


def test_error_bodies_are_openai_style_and_429_has_retry_after(fake_llm):
    fake_llm.faults.enqueue(Reply(status=429), Reply(status=503, content="overloaded!"))
    url = fake_llm.api_base + "/chat/completions"
    status, headers, body = _post(url, {"model": "m", "messages": []})
    assert status == 429 and headers["retry-after"] == "0"
    assert set(body["error"]) >= {"message", "type", "code"}
    assert body["error"]["code"] == "rate_limit_exceeded"
    status, _, body = _post(url, {"model": "m", "messages": []})
    assert status == 503 and body["error"]["message"] == "overloaded!"


def test_litellm_default_retries_are_visible_on_the_server(litellm, fake_llm):
    # Documents why the gateway must pass NO_RETRY: by default the openai SDK retries twice.
    fake_llm.faults.enqueue(*[Reply(status=500)] * 5)
    with pytest.raises(litellm.InternalServerError):
        _acall(litellm, fake_llm)
    assert len(fake_llm.requests) == 3


def test_delay_is_observed(litellm, fake_llm):
    fake_llm.script("slow answer")
    fake_llm.faults.enqueue(Reply(delay=0.6))  # pass-through fault: delay, then responder
    t0 = time.monotonic()
    r = _acall(litellm, fake_llm, **NO_RETRY)
    assert time.monotonic() - t0 >= 0.6
    assert r.choices[0].message.content == "slow answer"


def test_delay_beyond_timeout_raises_litellm_timeout(litellm, fake_llm):
    fake_llm.faults.enqueue(Reply(delay=5))
    t0 = time.monotonic()
    with pytest.raises(litellm.Timeout) as ei:
        _acall(litellm, fake_llm, timeout=0.3, **NO_RETRY)
    assert time.monotonic() - t0 < 3
    assert ei.value.status_code == 408
    assert len(fake_llm.requests) == 1


def test_malformed_raw_body_raises(litellm, fake_llm):
    fake_llm.faults.enqueue(Reply(raw="{this is not json"))
    with pytest.raises(litellm.InternalServerError):
        _acall(litellm, fake_llm, **NO_RETRY)
    assert len(fake_llm.requests) == 1


def test_malformed_json_content_is_returned_verbatim(litellm, fake_llm):
    fake_llm.script('{"verdict": "pro", ')
    r = _acall(litellm, fake_llm, response_format={"type": "json_object"}, **NO_RETRY)
    assert r.choices[0].message.content == '{"verdict": "pro", '


def test_stream_true_is_rejected_with_400(fake_llm):
    status, _, body = _post(fake_llm.api_base + "/chat/completions",
                            {"model": "m", "messages": [], "stream": True})
    assert status == 400 and "stream" in body["error"]["message"]
    assert fake_llm.requests[0].body["stream"] is True


def test_unknown_path_is_404_and_recorded(fake_llm):
    status, _, _ = _post(fake_llm.base_url + "/v1/embeddings", {"input": "x"})
    assert status == 404
    assert [r.path for r in fake_llm.requests] == ["/v1/embeddings"]


def test_responder_exception_becomes_500_and_is_kept(fake_llm):
    def boom(body):
        raise ValueError("bad script")

    fake_llm.responder = boom
    status, _, body = _post(fake_llm.api_base + "/chat/completions", {"model": "m", "messages": []})
    assert status == 500 and "bad script" in body["error"]["message"]
    assert isinstance(fake_llm.errors[0], ValueError)


def test_start_stop_and_stop_does_not_wait_for_delayed_handler():
    server = FakeOpenAI().start()
    try:
        assert server.api_base.startswith("http://127.0.0.1:") and server.api_base.endswith("/v1")
        server.faults.enqueue(Reply(delay=30))
        import threading

        t = threading.Thread(target=_post, args=(server.api_base + "/chat/completions",
                                                 {"model": "m", "messages": []}, 10), daemon=True)
        t.start()
        deadline = time.monotonic() + 5
        while not server.requests and time.monotonic() < deadline:
            time.sleep(0.01)
        assert server.requests
    finally:
        t0 = time.monotonic()
        server.stop()
        assert time.monotonic() - t0 < 3
    server.stop()  # idempotent


def test_concurrent_requests_all_recorded(litellm, fake_llm):
    fake_llm.responder = lambda body: f"answer to {last_user(body)}"

    async def many():
        return await asyncio.gather(*[
            litellm.acompletion(model="openai/fake-model", api_base=fake_llm.api_base, api_key="sk-test",
                                messages=[{"role": "user", "content": f"q{i}"}], **NO_RETRY)
            for i in range(8)
        ])

    results = asyncio.run(many())
    assert sorted(r.choices[0].message.content for r in results) == sorted(f"answer to q{i}" for i in range(8))
    assert sorted(last_user(r.body) for r in fake_llm.requests) == sorted(f"q{i}" for i in range(8))


def test_a_one_slot_server_answers_in_line_at_its_rate_and_sees_clients_leave(litellm):
    """FakeOpenAI(slots=1): two requests at once are generated one after the other, each for its completion tokens
    at tokens_per_s; a client that closes its connection while waiting, or while its answer is generated, is
    recorded and dropped. ~1 s."""
    with FakeOpenAI(lambda body: Reply(content="ok", completion_tokens=20), slots=1, tokens_per_s=100) as fake:
        async def timed():
            started = time.perf_counter()
            await litellm.acompletion(model="openai/m", api_base=fake.api_base, api_key="sk-test",
                                      messages=MESSAGES, **NO_RETRY)
            return time.perf_counter() - started

        async def two():
            return await asyncio.gather(timed(), timed())

        first, second = sorted(asyncio.run(two()))
        assert first == pytest.approx(0.2, abs=0.15) and second == pytest.approx(0.4, abs=0.15)
        assert fake.peak == 1 and fake.busy_s == pytest.approx(0.4, abs=0.1) and not fake.disconnects

        fake.responder = lambda body: Reply(content="ok", completion_tokens=100)  # 1 s each

        async def leave():
            calls = [asyncio.create_task(_acall_async(litellm, fake)) for _ in range(2)]
            await asyncio.sleep(0.3)  # one generating, one waiting
            for call in calls:
                call.cancel()
            await asyncio.gather(*calls, return_exceptions=True)

        asyncio.run(leave())
        deadline = time.monotonic() + 5
        while len(fake.disconnects) < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert sorted(d.phase for d in fake.disconnects) == ["generating", "waiting"]


async def _acall_async(litellm, server):
    return await litellm.acompletion(model="openai/m", api_base=server.api_base, api_key="sk-test",
                                     messages=MESSAGES, **NO_RETRY)


def test_cost_known_and_unknown_models(litellm, fake_llm):
    # Known (bundled price map) model name: cost computed from the fake's usage.
    r = _acall(litellm, fake_llm, model="openai/gpt-4o-mini", **NO_RETRY)
    assert r._hidden_params["response_cost"] > 0
    assert litellm.completion_cost(completion_response=r) == pytest.approx(r._hidden_params["response_cost"])
    # Unknown model name: no exception from the call, response_cost is None, completion_cost raises.
    r = _acall(litellm, fake_llm, model="openai/fake-unpriced-model", **NO_RETRY)
    assert r._hidden_params["response_cost"] is None
    with pytest.raises(Exception, match="isn't mapped yet"):
        litellm.completion_cost(completion_response=r)


# ----------------------------------------------------------------- FakeTavily


def test_tavily_sync_client_gets_scripted_results(fake_tavily):
    from tavily import TavilyClient

    scripted = [{"title": "T", "url": "https://example.org/t", "content": "C", "score": 0.5}]
    fake_tavily.results_for = lambda query, body: scripted
    client = TavilyClient(api_key="tvly-test", api_base_url=fake_tavily.base_url)
    out = client.search("nuclear power", max_results=3)

    assert out["results"] == scripted
    assert out["query"] == "nuclear power"
    assert out["answer"] is None and out["images"] == [] and isinstance(out["response_time"], float)
    [rec] = fake_tavily.requests
    assert rec.path == "/search"
    assert rec.body["query"] == "nuclear power" and rec.body["max_results"] == 3
    assert rec.headers["authorization"] == "Bearer tvly-test"


def test_tavily_async_client_gets_default_results(fake_tavily):
    from tavily import AsyncTavilyClient

    async def go():
        client = AsyncTavilyClient(api_key="tvly-test", api_base_url=fake_tavily.base_url)
        try:
            return await client.search("Should zoos exist?", max_results=5, search_depth="basic")
        finally:
            await client.close()

    out = asyncio.run(go())
    assert out["results"] == default_results("Should zoos exist?", {})
    assert len(out["results"]) == 3
    assert all(r["url"].startswith("https://example.org/") for r in out["results"])
    assert set(out["results"][0]) == {"title", "url", "content", "score"}
    [rec] = fake_tavily.requests
    assert rec.body["query"] == "Should zoos exist?"
    assert rec.body["max_results"] == 5 and rec.body["search_depth"] == "basic"


def test_tavily_default_results_are_deterministic_and_capped(fake_tavily):
    from tavily import TavilyClient

    client = TavilyClient(api_key="tvly-test", api_base_url=fake_tavily.base_url)
    a = client.search("same query", max_results=5)["results"]
    b = client.search("same query", max_results=5)["results"]
    c = client.search("other query", max_results=5)["results"]
    assert a == b and a != c
    assert len(client.search("same query", max_results=2)["results"]) == 2


def test_tavily_faults(fake_tavily):
    import requests
    from tavily import TavilyClient
    from tavily.errors import TimeoutError as TavilyTimeout
    from tavily.errors import UsageLimitExceededError

    client = TavilyClient(api_key="tvly-test", api_base_url=fake_tavily.base_url)
    fake_tavily.faults.enqueue(Reply(status=429), Reply(status=500), Reply(delay=0.4), Reply(delay=5))
    with pytest.raises(UsageLimitExceededError):
        client.search("q")
    with pytest.raises(requests.HTTPError) as ei:
        client.search("q")
    assert ei.value.response.status_code == 500
    t0 = time.monotonic()
    assert len(client.search("q")["results"]) == 3  # delayed but fine
    assert time.monotonic() - t0 >= 0.4
    with pytest.raises(TavilyTimeout):
        client.search("q", timeout=0.3)
    assert len(fake_tavily.requests) == 4


def test_tavily_async_fault(fake_tavily):
    from tavily import AsyncTavilyClient
    from tavily.errors import UsageLimitExceededError

    fake_tavily.faults.enqueue(Reply(status=429, content="slow down"))

    async def go():
        client = AsyncTavilyClient(api_key="tvly-test", api_base_url=fake_tavily.base_url)
        try:
            await client.search("q")
        finally:
            await client.close()

    with pytest.raises(UsageLimitExceededError, match="slow down"):
        asyncio.run(go())
    assert len(fake_tavily.requests) == 1


def test_tavily_context_manager_usage():
    with FakeTavily(results_for=lambda q, b: [{"title": q, "url": "https://example.org/x",
                                               "content": "", "score": 1.0}]) as tv:
        status, _, body = _post(tv.base_url + "/search", {"query": "hi"})
        assert status == 200 and body["results"][0]["title"] == "hi"
        status, _, body = _post(tv.base_url + "/search", {"max_results": 1})
        assert status == 400 and "error" in body["detail"]
