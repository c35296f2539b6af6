"""Prompt caching at providers, end to end on real HTTP through real litellm: the tokens a provider says it read from
its prompt cache reach the ledger, the cost, `arena match show` and the run's summary; a provider that caches only
where it is told (Anthropic) is told where the prompt's shared part ends, and no other provider is told anything.
"""
from __future__ import annotations

import asyncio
import json
import re

import pytest

from arena.app import commands as app
from arena.base.prompts import CACHE_BREAK
from arena.gateway.caching import openai_cached
from arena.gateway.catalog import ModelRef
from arena.gateway.chat import user
from arena.gateway.lazy import litellm
from arena.gateway.llm import CallTag, LLMGateway
from arena.store import DB_NAME, Store
from arena.workspace.config import LLMSettings
from arena.app.commands import open_workspace
from tests.support.fakes.openai_server import FakeOpenAI, cache_marks, count_words, messages_text
from tests.support.helpers import (VERDICT, entry, invoke, judge, mark_checked, new_workspace, query, speech_text,
                                   stage_and_side)

PRICED = "openai/gpt-4o-mini"  # a model litellm's price map prices, cache reads included
CLAUDE = "anthropic/claude-sonnet-4-5"


def long_speeches(body: dict) -> str:
    """Speeches long enough that a judge's prompt (the whole transcript) passes the 1,024 tokens a cache needs; a
    verdict for a judge."""
    if body.get("response_format"):
        return json.dumps(VERDICT)
    stage, side = stage_and_side(body)
    return speech_text(f"SPEECH<{stage}|{side}> Our case is strong.", size=420)


def cost_of(model: str, prompt: int, completion: int, cached: int) -> float:
    """The arena's cost formula on litellm's listed prices: (prompt − cached) × input + cached × cache read +
    completion × output."""
    info = litellm().get_model_info(model)
    return ((prompt - cached) * info["input_cost_per_token"] + cached * info["cache_read_input_token_cost"]
            + completion * info["output_cost_per_token"])


@pytest.mark.parametrize("path", ["direct", "acompletion"])
def test_cached_tokens_reach_the_ledger_the_cost_match_show_and_the_summary(tmp_path, monkeypatch, path):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with FakeOpenAI(long_speeches, automatic_cache=True) as server:
        ws_path = new_workspace(tmp_path / "ws", arena={"judge_runs": 3}, llm={"litellm_path": path},
                                motions=["builtin:en"],
                                entries=[entry(n, model=PRICED, api_base=server.api_base) for n in ("alpha", "beta")],
                                judges=[judge("j1", model=PRICED, api_base=server.api_base)])
        mark_checked(ws_path)
        ws = open_workspace(ws_path)
        ids = app.schedule(ws, "round-robin", rounds=1).match_ids
        ws.close()

        result = invoke("run", "-w", ws_path)
        reported = [u for u in server.reported]

    assert result.exit_code == 0, result.output
    # Every answer's prompt and cached tokens, as the server reported them, are a ledger row's.
    rows = query(ws_path, "SELECT prompt_tokens, completion_tokens, cached_tokens, cost FROM calls WHERE kind='llm'")
    assert sorted((p, c) for p, _, c, _ in rows) == sorted(
        (u["prompt_tokens"], u["prompt_tokens_details"]["cached_tokens"]) for u in reported)
    cached = sum(c for _, _, c, _ in rows)
    assert cached > 0  # a judge's runs read one transcript: the later runs' prompts are in the cache
    for prompt, completion, read, cost in rows:  # each call's cost counts its cached tokens at the cache-read price
        assert cost == pytest.approx(cost_of(PRICED, prompt, completion, read), rel=1e-9)

    for match_id in ids:
        shown = json.loads(invoke("match", "show", match_id, "-w", ws_path, "--format", "json").output)
        sides = query(ws_path, "SELECT COALESCE(SUM(cached_tokens), 0) FROM calls WHERE match_id=? AND side IS NOT NULL",
                      match_id)[0][0]
        judged = query(ws_path, "SELECT COALESCE(SUM(cached_tokens), 0) FROM calls WHERE match_id=? AND judge='j1'",
                       match_id)[0][0]
        assert sum(u["cached_tokens"] for s in shown["speeches"] for u in s["agents"].values()) == sides
        assert sum(v["cached_tokens"] for v in shown["verdicts"]) == judged > 0
        assert all(v["cached_tokens"] >= 0 for v in shown["verdicts"])

    prompt = sum(p for p, _, _, _ in rows)
    summary = result.stderr.splitlines()[-1]
    assert re.search(rf"\(cached {cached / prompt:.0%} of prompt tokens\)", summary), summary


def test_no_cached_tokens_no_share_in_the_summary(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with FakeOpenAI(long_speeches) as server:  # a provider that caches nothing (or says nothing of it)
        ws_path = new_workspace(tmp_path / "ws", arena={"judge_runs": 2}, motions=["builtin:en"],
                                entries=[entry(n, model=PRICED, api_base=server.api_base) for n in ("alpha", "beta")],
                                judges=[judge("j1", model=PRICED, api_base=server.api_base)])
        mark_checked(ws_path)
        ws = open_workspace(ws_path)
        app.schedule(ws, "round-robin", rounds=1)
        ws.close()
        result = invoke("run", "-w", ws_path)
    assert result.exit_code == 0, result.output
    assert query(ws_path, "SELECT SUM(cached_tokens) FROM calls")[0][0] == 0
    summary = result.stderr.splitlines()[-1]
    assert summary.startswith("after ") and "tokens, $" in summary and "cached" not in summary, summary


def test_the_fake_reports_what_openais_rule_reads_from_a_prefix_per_model(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    shared = " ".join(f"w{i}" for i in range(1300))
    prompts = [("m1", shared + " first"), ("m1", shared + " second"), ("m2", shared + " third"),
               ("m1", shared[:3000] + " a short one")]
    with FakeOpenAI(automatic_cache=True) as server:
        async def ask(model: str, text: str) -> None:
            await litellm().acompletion(model=f"openai/{model}", api_base=server.api_base,
                                        messages=[{"role": "user", "content": text}], max_tokens=8)
        for model, text in prompts:
            asyncio.run(ask(model, text))
        bodies, reported = server.bodies, server.reported
    got = [u["prompt_tokens_details"]["cached_tokens"] for u in reported]
    # What an earlier prompt to the same model shared, by OpenAI's rule: a first prompt of its model reads nothing.
    earlier: dict[str, list[str]] = {}
    want = []
    for body in bodies:
        text = messages_text(body)
        common = max((len(_prefix(text, e)) for e in earlier.get(body["model"], [])), default=0)
        want.append(openai_cached(count_words(text[:common]), count_words(text)))
        earlier.setdefault(body["model"], []).append(text)
    assert got == want and got[0] == got[2] == 0 and got[1] > 0 and got[3] == 0  # the short one: under 1,024 shared


def _prefix(a: str, b: str) -> str:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return a[:n]


# --- where a request tells its provider to cache ----------------------------------------------------------------

SHARED = speech_text("The motion and the debate so far, which every call of this match reads first.", size=1400)


def sent(tmp_path, model: str, api_base: str, tails: list[str], path: str = "direct") -> Store:
    """Each prompt SHARED + CACHE_BREAK + tail sent in turn to model through the gateway; the store of its ledger."""
    folder = tmp_path / f"{model.replace('/', '-')}-{path}"
    folder.mkdir()
    store = Store(folder / DB_NAME)
    gateway = LLMGateway(LLMSettings(cache=False, retries=0, litellm_path=path), store)
    ref = ModelRef(model, api_base)

    async def ask() -> None:
        for tail in tails:
            await gateway.complete(ref, [user(SHARED + CACHE_BREAK + tail)], tag=CallTag("writer"), max_tokens=64)
    asyncio.run(ask())
    return store


def test_anthropic_is_told_to_cache_exactly_the_shared_part_and_the_ledger_counts_its_reads(tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    tails = ["\n\nYour task: the PRO constructive.", "\n\nYour task: the CON constructive."]
    with FakeOpenAI(lambda body: "A short answer.") as server:
        store = sent(tmp_path, CLAUDE, server.base_url, tails)
        requests, reported = server.requests, server.reported
    assert [r.path for r in requests] == ["/v1/messages"] * 2
    for request, tail in zip(requests, tails):
        [message] = request.body["messages"]
        # One breakpoint, on the part that is the shared part whole, and the call's own part after it unmarked.
        assert cache_marks(request.body) == [(0, 0, {"type": "ephemeral"})]
        assert [part["text"] for part in message["content"]] == [SHARED, tail]
        assert "shared" not in json.dumps(request.body)
    calls = store.ledger()
    # The first call writes the cache, the second reads it: the ledger keeps what the provider reported.
    assert [c.cached_tokens for c in calls] == [u["cache_read_input_tokens"] for u in reported]
    assert reported[0]["cache_read_input_tokens"] == 0 < reported[0]["cache_creation_input_tokens"]
    assert reported[1]["cache_read_input_tokens"] == reported[0]["cache_creation_input_tokens"]
    info = litellm().get_model_info(CLAUDE)
    for call, usage in zip(calls, reported):  # a read at the cache-read price, a write at the cache-write price
        assert call.prompt_tokens == (usage["input_tokens"] + usage["cache_read_input_tokens"]
                                      + usage["cache_creation_input_tokens"])
        assert call.cost == pytest.approx(usage["input_tokens"] * info["input_cost_per_token"]
                                          + usage["cache_read_input_tokens"] * info["cache_read_input_token_cost"]
                                          + usage["cache_creation_input_tokens"]
                                          * info["cache_creation_input_token_cost"]
                                          + usage["output_tokens"] * info["output_cost_per_token"], rel=1e-9)
    store.close()


@pytest.mark.parametrize("path", ["direct", "acompletion"])
def test_an_openai_compatible_model_gets_plain_text_and_no_marker(tmp_path, monkeypatch, path):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    tail = "\n\nYour task: the PRO constructive."
    with FakeOpenAI(lambda body: "A short answer.") as server:
        sent(tmp_path, PRICED, server.api_base, [tail], path).close()
        [request] = server.requests
    [message] = request.body["messages"]
    assert message == {"role": "user", "content": SHARED + tail}  # no parts, no cache_control, no `shared`
    assert cache_marks(request.body) == []
