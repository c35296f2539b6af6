"""The LLM and search gateways, exercised over REAL loopback HTTP.

Every LLM call here goes gateway -> real litellm -> openai SDK -> HTTP -> FakeOpenAI; every
search goes gateway -> real tavily-python -> httpx -> HTTP -> FakeTavily. Nothing inside
litellm or tavily is patched: behaviour is asserted from what the servers saw and from the
rows the gateways wrote to a temporary SQLite store.
"""
from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
import threading
import time
from dataclasses import replace
from pathlib import Path

import jsonschema
import pytest

from arena.workspace.config import LLMSettings, SearchSettings
from arena.base.errors import UserError
from arena.gateway.llm import AnswerError, CallTag, Completion, LLMCallError, LLMGateway
from arena.gateway.catalog import ModelRef
from arena.gateway.search import SearchGateway, SearchResult, SearchTag
from arena.store import Store
from tests.support.fakes.openai_server import Reply, last_user

# ----------------------------------------------------------------------------- helpers

FAST = LLMSettings(max_concurrency=4, retries=3, timeout_s=10.0, cache=True, backoff_s=0.01, schema_retries=2)
MESSAGES = [
    {"role": "system", "content": "You are the pro side of a debate."},
    {"role": "user", "content": "Motion: Cities should ban cars.\nGive your constructive speech."},
]
TAG = CallTag(role="speaker", match_id="m00001", stage="constructive", side="pro")
JUDGE_TAG = CallTag(role="judge", match_id="m00001")
VERDICT_SCHEMA = {
    "title": "verdict",
    "type": "object",
    "properties": {
        "winner": {"type": "string", "enum": ["pro", "con"]},
        "reason": {"type": "string"},
    },
    "required": ["winner", "reason"],
    "additionalProperties": False,
}
VALID_VERDICT = '{"winner": "pro", "reason": "Better evidence."}'
SECRET = "sk-secret-test-123"


def gateway(store, **overrides) -> LLMGateway:
    return LLMGateway(replace(FAST, **overrides), store)


def model(fake_llm, name: str = "fake-model") -> ModelRef:
    return ModelRef(f"openai/{name}", api_base=fake_llm.api_base)


def complete(gw: LLMGateway, ref: ModelRef, messages=MESSAGES, *, tag=TAG, **kw) -> Completion:
    return asyncio.run(gw.complete(ref, messages, tag=tag, **kw))


def calls(store: Store, kind: str = "llm") -> list[dict]:
    """The ledger rows of one kind, oldest first."""
    return [dict(r) for r in store.conn.execute("SELECT * FROM calls WHERE kind=? ORDER BY id", (kind,))]


def run_python(code: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=cwd, capture_output=True, text=True,
                          timeout=60)


# ----------------------------------------------------------------- 1. plain completion


def test_completion_returns_text_and_sends_messages_and_sampling_params(fake_llm, store):
    fake_llm.script(Reply(content="Cars choke our streets.", prompt_tokens=42, completion_tokens=5))

    result = complete(gateway(store), model(fake_llm), params={"temperature": 0.3, "top_p": 0.9})

    assert result.text == "Cars choke our streets."
    assert result.data is None and result.cached is False
    assert (result.usage.calls, result.usage.prompt_tokens, result.usage.completion_tokens) == (1, 42, 5)
    [request] = fake_llm.requests
    assert request.path == "/v1/chat/completions"
    assert request.body["model"] == "fake-model"
    assert request.body["messages"] == MESSAGES
    assert request.body["temperature"] == 0.3
    assert request.body["top_p"] == 0.9
    assert "response_format" not in request.body


def test_completion_writes_one_ledger_row_from_the_tag_and_usage(fake_llm, store):
    fake_llm.script(Reply(content="Cars choke our streets.", prompt_tokens=42, completion_tokens=5))

    complete(gateway(store), model(fake_llm))

    [row] = calls(store)
    assert row["model"] == "openai/fake-model"
    assert (row["role"], row["stage"], row["side"], row["match_id"]) == ("speaker", "constructive", "pro", "m00001")
    assert (row["prompt_tokens"], row["completion_tokens"]) == (42, 5)
    assert row["latency_s"] > 0
    assert row["cache_hit"] == 0
    assert row["simulated"] == 0
    assert row["error"] is None


# --------------------------------------------------------------------------- 2. retries


def test_retryable_errors_are_retried_until_success(fake_llm, store):
    fake_llm.faults.enqueue(Reply(status=429), Reply(status=500))
    fake_llm.script("Third time lucky.")

    result = complete(gateway(store), model(fake_llm))

    assert result.text == "Third time lucky."
    assert len(fake_llm.requests) == 3
    rows = calls(store)
    assert [r["error"] is None for r in rows] == [False, False, True]
    assert "429" in rows[0]["error"]
    assert "500" in rows[1]["error"]
    assert rows[2]["completion_tokens"] == 3


def test_retries_exhausted_raise_with_attempt_count_and_no_hidden_client_retries(fake_llm, store):
    fake_llm.faults.enqueue(Reply(status=500), Reply(status=500))
    fake_llm.script("never reached")

    with pytest.raises(LLMCallError, match=r"500.*2 tries"):
        complete(gateway(store, retries=1), model(fake_llm))

    # Exactly retries+1 requests: litellm's and the OpenAI SDK's own retries are off.
    assert len(fake_llm.requests) == 2
    assert [r["error"] is not None for r in calls(store)] == [True, True]


def test_non_retryable_error_raises_after_one_request(fake_llm, store):
    fake_llm.faults.enqueue(Reply(status=400, content="bad parameter"))

    with pytest.raises(LLMCallError, match="400"):
        complete(gateway(store), model(fake_llm))

    assert len(fake_llm.requests) == 1
    [row] = calls(store)
    assert "400" in row["error"]


def test_timeout_is_retried_and_a_fast_reply_then_succeeds(fake_llm, store):
    fake_llm.faults.enqueue(Reply(delay=2))  # pass-through: the normal answer, but too late
    fake_llm.script("Fast enough.")

    started = time.perf_counter()
    result = complete(gateway(store, timeout_s=0.3), model(fake_llm))
    elapsed = time.perf_counter() - started

    assert result.text == "Fast enough."
    assert len(fake_llm.requests) == 2
    assert elapsed < 1.8  # the client gave up on the slow reply rather than waiting it out
    first, second = calls(store)
    assert "timeout" in first["error"].lower()
    assert second["error"] is None


# --------------------------------------------------------------------------- 3. backoff


def test_backoff_doubles_between_retries(fake_llm, store):
    arrivals: list[float] = []
    lock = threading.Lock()

    def responder(body):
        with lock:
            arrivals.append(time.perf_counter())
            n = len(arrivals)
        return Reply(status=503) if n <= 2 else "Recovered."

    fake_llm.responder = responder
    started = time.perf_counter()
    result = complete(gateway(store, backoff_s=0.1), model(fake_llm))
    elapsed = time.perf_counter() - started

    assert result.text == "Recovered."
    assert len(arrivals) == 3
    # Jitter is uniform in [0.5, 1.5]: waits are >= 0.1*0.5 and then >= 0.2*0.5.
    tolerance = 0.005
    assert arrivals[1] - arrivals[0] >= 0.05 - tolerance
    assert arrivals[2] - arrivals[1] >= 0.10 - tolerance
    assert elapsed >= 0.15 - tolerance


# ----------------------------------------------------------------------------- 4. cache


def test_identical_request_is_served_from_the_cache(fake_llm, store):
    fake_llm.script(Reply(content="Cached speech.", prompt_tokens=11, completion_tokens=2))
    gw, ref = gateway(store), model(fake_llm)

    first = complete(gw, ref, params={"temperature": 0.5})
    second = complete(gw, ref, params={"temperature": 0.5})

    assert len(fake_llm.requests) == 1
    assert (first.cached, second.cached) == (False, True)
    assert second.text == first.text == "Cached speech."
    assert (second.usage.prompt_tokens, second.usage.completion_tokens) == (11, 2)
    live, hit = calls(store)
    assert live["cache_hit"] == 0
    assert hit["cache_hit"] == 1
    assert hit["cost"] == 0
    assert (hit["role"], hit["match_id"]) == ("speaker", "m00001")


def test_a_different_sample_index_is_a_distinct_request(fake_llm, store):
    fake_llm.script("run 0", "run 1")
    gw, ref = gateway(store), model(fake_llm)

    run0 = complete(gw, ref, tag=JUDGE_TAG, sample=0)
    run1 = complete(gw, ref, tag=JUDGE_TAG, sample=1)
    again0 = complete(gw, ref, tag=JUDGE_TAG, sample=0)

    assert len(fake_llm.requests) == 2
    assert (run0.text, run1.text) == ("run 0", "run 1")
    assert not run1.cached
    assert again0.cached and again0.text == "run 0"


def test_a_different_temperature_is_a_distinct_request(fake_llm, store):
    gw, ref = gateway(store), model(fake_llm)

    complete(gw, ref, params={"temperature": 0.2})
    complete(gw, ref, params={"temperature": 0.7})

    assert [r.body["temperature"] for r in fake_llm.requests] == [0.2, 0.7]


def test_cache_off_sends_every_call(fake_llm, store):
    gw, ref = gateway(store, cache=False), model(fake_llm)

    results = [complete(gw, ref) for _ in range(3)]

    assert len(fake_llm.requests) == 3
    assert not any(r.cached for r in results)
    assert [r["cache_hit"] for r in calls(store)] == [0, 0, 0]


def test_cache_survives_reopening_the_store(fake_llm, tmp_path):
    fake_llm.script("Persisted.")
    path = tmp_path / "arena.db"
    first_store = Store(path)
    complete(gateway(first_store), model(fake_llm))
    first_store.close()

    reopened = Store(path)
    try:
        result = complete(gateway(reopened), model(fake_llm))
        assert result.cached and result.text == "Persisted."
        assert len(fake_llm.requests) == 1
        assert [r["cache_hit"] for r in calls(reopened)] == [0, 1]
    finally:
        reopened.close()


# ------------------------------------------------------------------ 5. structured answers


def test_schema_is_sent_as_json_schema_response_format(fake_llm, store):
    fake_llm.script(VALID_VERDICT)

    complete(gateway(store), model(fake_llm), tag=JUDGE_TAG, schema=VERDICT_SCHEMA)

    [request] = fake_llm.requests
    response_format = request.body["response_format"]
    assert response_format["type"] == "json_schema"
    assert response_format["json_schema"]["name"] == "verdict"
    assert response_format["json_schema"]["schema"] == VERDICT_SCHEMA


def test_valid_json_answer_is_parsed_into_data(fake_llm, store):
    fake_llm.script(VALID_VERDICT)

    result = complete(gateway(store), model(fake_llm), tag=JUDGE_TAG, schema=VERDICT_SCHEMA)

    assert result.data == {"winner": "pro", "reason": "Better evidence."}
    assert result.text == VALID_VERDICT


def test_json_in_code_fences_is_accepted(fake_llm, store):
    fake_llm.script(f"```json\n{VALID_VERDICT}\n```")

    result = complete(gateway(store), model(fake_llm), tag=JUDGE_TAG, schema=VERDICT_SCHEMA)

    assert result.data == {"winner": "pro", "reason": "Better evidence."}
    assert len(fake_llm.requests) == 1


def test_malformed_answer_is_shown_back_to_the_model_and_re_asked(fake_llm, store):
    bad = '{"winner": "pro", "reason": '
    fake_llm.script(bad, VALID_VERDICT)

    result = complete(gateway(store), model(fake_llm), tag=JUDGE_TAG, schema=VERDICT_SCHEMA)

    assert result.data["winner"] == "pro"
    assert len(fake_llm.requests) == 2
    retry_messages = fake_llm.requests[1].body["messages"]
    assert retry_messages[: len(MESSAGES)] == MESSAGES
    assert retry_messages[len(MESSAGES)] == {"role": "assistant", "content": bad}
    assert retry_messages[-1]["role"] == "user"
    assert "not JSON" in last_user(fake_llm.requests[1].body)
    # Both tries are counted in the usage.
    assert result.usage.calls == 2


def test_schema_violation_names_the_field_in_the_re_ask(fake_llm, store):
    fake_llm.script('{"winner": "draw", "reason": "Even."}', VALID_VERDICT)

    result = complete(gateway(store), model(fake_llm), tag=JUDGE_TAG, schema=VERDICT_SCHEMA)

    assert result.data["winner"] == "pro"
    problem = last_user(fake_llm.requests[1].body)
    assert "winner" in problem and "draw" in problem


def test_always_invalid_answer_raises_after_schema_retries(fake_llm, store):
    fake_llm.script("I think pro won.")

    with pytest.raises(LLMCallError, match="no valid structured answer after 3 tries"):
        complete(gateway(store, schema_retries=2), model(fake_llm), tag=JUDGE_TAG, schema=VERDICT_SCHEMA)

    assert len(fake_llm.requests) == 3


def test_a_settled_call_always_has_its_answer_cached(fake_llm, store, monkeypatch):
    """The answer's ledger row is settled in the transaction that caches it: a process stopped between the two
    (here, the cache write failing) leaves the row in flight, never a settled, paid call whose answer the next run
    must pay for again. An answer not kept (re-asked) is settled at once, with nothing cached."""
    from arena.store import IN_FLIGHT

    fake_llm.script("not json at all", VALID_VERDICT)
    gw, ref = gateway(store), model(fake_llm)

    def stopped(*args, **kwargs):
        raise KeyboardInterrupt  # as a Ctrl-C landing just there would

    monkeypatch.setattr(store, "cache_put", stopped)
    with pytest.raises(KeyboardInterrupt):
        complete(gw, ref, tag=JUDGE_TAG, schema=VERDICT_SCHEMA)
    rejected, kept = calls(store)
    assert rejected["error"] is None and rejected["completion_tokens"] > 0  # settled: it was not to be cached
    assert kept["error"] == IN_FLIGHT and kept["completion_tokens"] == 0  # rolled back with the cache write
    assert store.conn.execute("SELECT COUNT(*) FROM cache").fetchone()[0] == 0

    monkeypatch.undo()
    fake_llm.script(VALID_VERDICT)
    complete(gw, ref, tag=JUDGE_TAG, schema=VERDICT_SCHEMA)
    settled = [c for c in calls(store) if c["error"] is None and c["completion_tokens"] > 0]
    assert len(settled) == 2 and store.conn.execute("SELECT COUNT(*) FROM cache").fetchone()[0] == 1


def test_invalid_answer_is_not_cached(fake_llm, store):
    fake_llm.script("not json at all")
    gw, ref = gateway(store, schema_retries=0), model(fake_llm)
    with pytest.raises(LLMCallError):
        complete(gw, ref, tag=JUDGE_TAG, schema=VERDICT_SCHEMA)

    fake_llm.script(VALID_VERDICT)
    result = complete(gw, ref, tag=JUDGE_TAG, schema=VERDICT_SCHEMA)

    assert not result.cached
    assert result.data["winner"] == "pro"
    assert len(fake_llm.requests) == 2


def test_a_callers_check_re_asks_an_unusable_answer_and_never_reuses_a_cached_one(fake_llm, store):
    """check(text, data) -> problem: the answer is shown back with the problem and asked again, like an invalid
    one; after the tries, AnswerError carries the problem; a cached answer that fails the check is asked anew."""
    def no_placeholder(text, data):
        return "placeholder: it is a placeholder" if text.startswith("<") else ""

    fake_llm.script("<the full speech>", "A real speech at last.")
    gw, ref = gateway(store), model(fake_llm)
    first = complete(gw, ref, check=no_placeholder)
    assert first.text == "A real speech at last." and len(fake_llm.requests) == 2
    assert fake_llm.requests[1].body["messages"][-2:] == [
        {"role": "assistant", "content": "<the full speech>"},
        {"role": "user", "content": "That answer cannot be used: placeholder: it is a placeholder. Answer again as "
                                    "first asked."}]
    # The cached answer passes a lenient check and fails a stricter one: then it is asked for anew.
    assert complete(gw, ref, check=no_placeholder).cached
    fake_llm.script("<still a placeholder>")
    with pytest.raises(AnswerError) as failed:
        complete(gw, ref, check=lambda text, data: "too-short: one line" if len(text) < 100 else "")
    assert failed.value.checked == "too-short: one line" and len(fake_llm.requests) == 2 + 3


# ---------------------------------------------------------------- 6. concurrency cap


def test_concurrency_cap_limits_requests_in_flight(fake_llm, store):
    lock = threading.Lock()
    state = {"now": 0, "peak": 0}

    def responder(body):
        with lock:
            state["now"] += 1
            state["peak"] = max(state["peak"], state["now"])
        time.sleep(0.3)
        with lock:
            state["now"] -= 1
        return f"answer to {last_user(body)}"

    fake_llm.responder = responder
    gw, ref = gateway(store, max_concurrency=2), model(fake_llm)

    async def fire():
        return await asyncio.gather(*(
            gw.complete(ref, [{"role": "user", "content": f"question {i}"}], tag=TAG) for i in range(6)
        ))

    results = asyncio.run(fire())

    assert [r.text for r in results] == [f"answer to question {i}" for i in range(6)]
    assert len(fake_llm.requests) == 6
    assert state["peak"] == 2  # the cap was reached, and never exceeded
    assert not fake_llm.errors


def test_gateway_can_be_reused_under_a_new_event_loop(fake_llm, store):
    def responder(body):
        time.sleep(0.05)
        return "ok"

    fake_llm.responder = responder
    gw, ref = gateway(store, max_concurrency=1, cache=False), model(fake_llm)

    async def two_at_once():
        return await asyncio.gather(*(
            gw.complete(ref, [{"role": "user", "content": f"question {i}"}], tag=TAG) for i in range(2)
        ))

    asyncio.run(two_at_once())
    second_run = asyncio.run(two_at_once())  # e.g. a library user playing two batches

    assert [r.text for r in second_run] == ["ok", "ok"]


# ------------------------------------------------------------------ 7. offline models


def test_offline_model_makes_no_request_and_is_deterministic(fake_llm, store):
    ref = ModelRef("offline/x", api_base=fake_llm.api_base, strength=1.0)
    gw = gateway(store)

    first = complete(gw, ref)
    second = complete(LLMGateway(FAST, store), ref)

    assert fake_llm.requests == []
    assert first.text and first.text == second.text
    assert not first.cached and not second.cached
    rows = calls(store)
    assert len(rows) == 2
    assert all(r["simulated"] == 1 and r["cache_hit"] == 0 and r["model"] == "offline/x" for r in rows)
    assert rows[0]["completion_tokens"] > 0


def test_offline_schema_answers_are_valid_and_vary_by_sample(fake_llm, store):
    ref = ModelRef("offline/x", strength=1.0)
    gw = gateway(store)

    answers = [complete(gw, ref, tag=JUDGE_TAG, schema=VERDICT_SCHEMA, sample=k) for k in range(8)]
    repeat = complete(gw, ref, tag=JUDGE_TAG, schema=VERDICT_SCHEMA, sample=0)

    for answer in answers:
        jsonschema.validate(answer.data, VERDICT_SCHEMA)
        assert json.loads(answer.text) == answer.data
    assert repeat.data == answers[0].data
    assert len({a.text for a in answers}) > 1
    assert fake_llm.requests == []
    assert all(r["simulated"] == 1 for r in calls(store))


# --------------------------------------------------------------------------- 8. secrets


def test_api_key_comes_from_the_environment_and_never_reaches_the_database(fake_llm, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    db = tmp_path / "arena.db"
    store = Store(db)
    try:
        gw, ref = gateway(store, retries=0), model(fake_llm)
        complete(gw, ref)
        # A failed call too: error text goes into the ledger, the key must not.
        fake_llm.faults.enqueue(Reply(status=401))
        with pytest.raises(LLMCallError):
            complete(gw, ref, params={"temperature": 0.1})
        assert [r.headers["authorization"] for r in fake_llm.requests] == [f"Bearer {SECRET}"] * 2
        written = b"".join(p.read_bytes() for p in (db, Path(f"{db}-wal")) if p.exists())
    finally:
        store.close()
    written += b"".join(p.read_bytes() for p in (db, Path(f"{db}-wal")) if p.exists())
    assert written
    assert SECRET.encode() not in written
    assert b"secret-test" not in written


# ------------------------------------------------------- 9. no litellm for cheap commands


def test_help_does_not_import_litellm(tmp_path):
    proc = run_python("""
        import sys
        from arena.app.cli import main
        main(["--help"], standalone_mode=False)
        print("litellm" in sys.modules)
    """, tmp_path)

    assert proc.returncode == 0, proc.stderr
    assert "Debate Arena" in proc.stdout
    assert proc.stdout.strip().splitlines()[-1] == "False"


def test_entry_list_does_not_import_litellm(tmp_path):
    init = subprocess.run([sys.executable, "-c", "from arena.app.cli import main; main()", "init", "ws"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert init.returncode == 0, init.stderr

    proc = run_python("""
        import sys
        from arena.app.cli import main
        main(["entry", "list", "-w", "ws"], standalone_mode=False)
        print("litellm" in sys.modules)
    """, tmp_path)

    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "False"


# ------------------------------------------------------------------ 10. search gateway


def test_tavily_search_parses_results_and_sends_query(fake_tavily, store, monkeypatch):
    monkeypatch.setenv("TAVILY_API_KEY", "tvly-test")
    search = SearchGateway(SearchSettings(provider="tavily", api_base_url=fake_tavily.base_url, max_results=3), store)
    tag = SearchTag(match_id="m00001", stage="constructive", side="con")

    results = asyncio.run(search.search("car bans in cities", tag=tag))

    assert len(results) == 3
    assert all(isinstance(r, SearchResult) for r in results)
    assert results[0].title == "Result 1 for car bans in cities"
    assert results[0].url.startswith("https://example.org/car-bans-in-cities/")
    assert "car bans in cities" in results[0].content
    [request] = fake_tavily.requests
    assert request.path == "/search"
    assert request.body["query"] == "car bans in cities"
    assert request.body["max_results"] == 3
    assert request.headers["authorization"] == "Bearer tvly-test"
    [row] = calls(store, "search")
    assert (row["model"], row["cache_hit"], row["simulated"]) == ("tavily", 0, 0)
    assert (row["role"], row["match_id"], row["side"]) == ("searcher", "m00001", "con")


def test_repeated_search_is_a_cache_hit(fake_tavily, store, monkeypatch):
    monkeypatch.setenv("TAVILY_API_KEY", "tvly-test")
    search = SearchGateway(SearchSettings(provider="tavily", api_base_url=fake_tavily.base_url, max_results=3), store)

    async def twice():
        return [await search.search("car bans", tag=SearchTag()) for _ in range(2)]

    first, second = asyncio.run(twice())

    assert first == second
    assert len(fake_tavily.requests) == 1
    assert [r["cache_hit"] for r in calls(store, "search")] == [0, 1]
    assert calls(store, "llm") == []


def test_offline_search_provider_makes_no_request(fake_tavily, store):
    search = SearchGateway(SearchSettings(provider="offline", api_base_url=fake_tavily.base_url, max_results=3), store)

    results = asyncio.run(search.search("car bans", tag=SearchTag()))

    assert len(results) == 3
    assert all("simulated" in r.title for r in results)
    assert fake_tavily.requests == []
    [row] = calls(store, "search")
    assert (row["model"], row["simulated"]) == ("offline", 1)


def test_tavily_without_api_key_is_a_user_error(fake_tavily, store, monkeypatch):
    monkeypatch.delenv("TAVILY_API_KEY", raising=False)
    search = SearchGateway(SearchSettings(provider="tavily", api_base_url=fake_tavily.base_url, max_results=3), store)

    with pytest.raises(UserError, match="TAVILY_API_KEY"):
        asyncio.run(search.search("car bans", tag=SearchTag()))

    assert fake_tavily.requests == []
