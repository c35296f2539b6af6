"""Local servers that serve one request at a time (issue 41): `arena check` measures a server's slots and
throughput, `arena run` sends a model no more than its slots at once and gives each call the time its tokens take,
and a Ctrl-C or a kill closes the connections of the calls in flight, so that the server stops on them.

All on FakeOpenAI with limited slots (tests/support/fakes/openai_server.py), which serves requests in line as llama.cpp's
server does, takes the time the tokens take at its rates, and records the clients that leave.
"""
from __future__ import annotations

import asyncio
import json
import signal
import time
from pathlib import Path

import pytest

from arena.workspace.config import LLMSettings
from arena.base.limits import MAX_TIMEOUT_S
from arena.gateway.llm import TIMEOUT_MARGIN, BYTES_PER_TOKEN, CallTag, LLMCallError, LLMGateway
from arena.gateway.catalog import ModelRef
from arena.gateway.probe import COUNT_PROMPT, READ_PROMPT, REPEATS
from arena.store import DB_NAME, Store
from tests.support.fakes.openai_server import FakeOpenAI, Reply, last_user
from tests.support.helpers import debate_responder, entry, invoke, judge, mark_checked, new_workspace, query
from tests.support.running import round_robin, start_run, statuses

MODEL = "openai/smol"  # every entry and the judge on one model of one server, as with one local model


def serving(answer=debate_responder(), most: int = 1_000_000):
    """A model that answers the probe as a healthy model does (its chat, its JSON, counting cut at max_tokens)
    and everything else with answer; every answer taking its max_tokens (up to most) to generate, as a small model
    that pads does."""

    def respond(body: dict):
        text = last_user(body)
        if text.startswith("Reply with one word"):
            return "ready"
        if 'whose "word" is "ready"' in text:
            return '{"word": "ready"}'
        if text.startswith(COUNT_PROMPT.split("{}")[0]):
            return " ".join(["one"] * body["max_tokens"])
        if text.startswith(READ_PROMPT):
            return "ok"
        return Reply(content=answer(body), completion_tokens=min(most, body["max_tokens"]))

    return respond


def workspace(path: Path, api_base: str, *, entries=("alpha", "beta"), llm: dict | None = None,
              params: dict | None = None, checked: bool = False) -> Path:
    """Direct entries (with params) and a single judge (R = 1), all on MODEL at api_base; a round-robin."""
    new_workspace(path, arena={"judge_runs": 1}, llm={"backoff_s": 0.01, "retries": 1, **(llm or {})},
                  motions=["builtin:en"],
                  entries=[entry(name, model=MODEL, api_base=api_base, params=params) for name in entries],
                  judges=[judge("j1", model=MODEL, api_base=api_base)])
    if checked:
        mark_checked(path)
    return round_robin(path, rounds=1)


def facts(path: Path, api_base: str) -> dict:
    store = Store(path / DB_NAME)
    try:
        return store.model_facts(MODEL, api_base) or {}
    finally:
        store.close()


# --- 1. arena check measures slots and throughput ---------------------------------------------------------------


@pytest.mark.parametrize("slots", [1, 4])
def test_check_measures_the_servers_slots_and_throughput_and_remembers_them(tmp_path, slots):
    """~1.5 s each."""
    with FakeOpenAI(serving(), slots=slots, tokens_per_s=400, prompt_tokens_per_s=4000) as fake:
        path = workspace(tmp_path / "ws", fake.api_base, llm={"max_concurrency": 8})

        result = invoke("check", "-w", path, "--format", "json")

        assert result.exit_code == 0, result.output
        rows = json.loads(result.stdout)
        assert {r["name"] for r in rows} == {"alpha", "beta", "j1"}
        for row in rows:
            assert row["slots"] == slots  # 8 at once took longer than 1.5 × one alone on the 4-slot server
            assert row["tokens_per_s"] == pytest.approx(400, rel=0.25)
        assert fake.peak == slots  # what the server saw: never more than its slots generating at once
        measured = [b for b in fake.bodies if last_user(b).startswith(COUNT_PROMPT.split("{}")[0])]
        least = 4 + sum(k for k in (2, 4, 8) if k <= 2 * slots)  # cheap: short answers, few
        assert least <= len(measured) <= least + REPEATS * min(8, 2 * slots)  # a batch left unsure: once more
        known = facts(path, fake.api_base)
        assert known["slots"] == slots
        assert known["tokens_per_s"] == pytest.approx(400, rel=0.25)
        assert known["prompt_tokens_per_s"] == pytest.approx(4000, rel=0.35)
        if slots == 1:  # the run's 4 matches at once would queue on it: the check says so, and what helps
            assert "serves 1 request at once" in result.stderr and "--concurrency" in result.stderr
        else:
            assert "at once" not in result.stderr


def test_check_rows_of_simulated_models_have_no_figures(tmp_path):
    """Offline models are not measured: slots and tokens_per_s null (they serve any number at once, instantly)."""
    path = tmp_path / "ws"
    new_workspace(path, motions=["builtin:en"], entries=[entry("sim", model="offline/a")],
                  judges=[judge("j", model="offline/j")])
    rows = json.loads(invoke("check", "-w", path, "--format", "json").stdout)
    assert [(r["slots"], r["tokens_per_s"]) for r in rows] == [(None, None), (None, None)]


# --- 2. a run respects the slots -----------------------------------------------------------------------------------


def timeouts(path: Path) -> int:
    return query(path, "SELECT COUNT(*) FROM calls WHERE error LIKE '%imeout%'")[0][0]


def test_a_round_robin_on_a_one_slot_server_completes_without_timeouts_by_default(tmp_path):
    """The run's preflight measures the model (one slot, 400 tokens/s), then sends it one call at a time, each given
    the time its max_tokens take: every match done, nothing timed out, though a call (124 tokens: 0.31 s) takes
    longer than timeout_s (0.3 s). With --concurrency 4, as before, 8 speeches are sent at once and queue in the
    server past their timeouts. ~12 s."""
    speech = {"max_tokens": 124}
    with FakeOpenAI(serving(most=124), slots=1, tokens_per_s=400) as fake:
        path = workspace(tmp_path / "default", fake.api_base, llm={"timeout_s": 0.3}, params=speech)

        result = invoke("run", "-w", path)

        assert result.exit_code == 0, result.output
        assert statuses(path) == {"done": 2}
        assert timeouts(path) == 0
        assert fake.peak == 1 and not fake.disconnects  # one at a time, and no call abandoned
        assert facts(path, fake.api_base)["slots"] == 1

        fake.clear()
        explicit = workspace(tmp_path / "explicit", fake.api_base, entries=("alpha", "beta", "gamma"),
                             llm={"timeout_s": 0.3}, params=speech)
        invoke("run", "-w", explicit, "--concurrency", "4")
        assert timeouts(explicit) > 0  # queued behind one another in the server: timed out
        assert {d.phase for d in fake.disconnects} >= {"waiting"}  # each timeout closed its connection


# --- 3. the timeout follows throughput -----------------------------------------------------------------------------


def test_the_timeout_of_a_call_follows_the_measured_throughput():
    gateway = LLMGateway(LLMSettings(timeout_s=10.0), None)
    ref = ModelRef(MODEL, "http://127.0.0.1:1/v1")
    messages = [{"role": "user", "content": "x" * 3000}]
    assert gateway.timeout(ref, messages, 1000) == 10.0  # not measured: timeout_s

    gateway.remember(ref, latency_s=0.5, tokens_per_s=20.0, prompt_tokens_per_s=100.0)
    need = TIMEOUT_MARGIN * (0.5 + 3000 / BYTES_PER_TOKEN / 100.0 + 1000 / 20.0)
    assert gateway.timeout(ref, messages, 1000) == pytest.approx(need)
    assert gateway.timeout(ref, [{"role": "user", "content": "x"}], 10) == 10.0  # never under timeout_s
    gateway.remember(ref, tokens_per_s=0.01)
    assert gateway.timeout(ref, messages, 1000) == MAX_TIMEOUT_S


def test_a_slow_server_that_works_is_not_timed_out_once_measured():
    """A 2 s answer against timeout_s = 0.5: timed out (and retried) unmeasured; answered once measured. ~3 s."""
    with FakeOpenAI(lambda body: Reply(content="word " * 100, completion_tokens=body["max_tokens"]),
                    slots=1, tokens_per_s=100) as fake:
        ref = ModelRef(MODEL, fake.api_base)
        messages = [{"role": "user", "content": "Speak."}]

        async def ask(gateway: LLMGateway):
            return await gateway.call(ref, messages, {"max_tokens": 200}, tag=CallTag("speech"))

        unmeasured = LLMGateway(LLMSettings(timeout_s=0.5, retries=0), None)
        with pytest.raises(LLMCallError, match="(?i)timeout"):
            asyncio.run(ask(unmeasured))
        measured = LLMGateway(LLMSettings(timeout_s=0.5, retries=0), None)
        measured.remember(ref, latency_s=0.01, tokens_per_s=100.0)
        answer = asyncio.run(ask(measured))
        assert answer.usage.completion_tokens == 200
        assert [d.phase for d in fake.disconnects] == ["generating"]  # the first call's, at its timeout


# --- 4. Ctrl-C and kill close the connections ----------------------------------------------------------------------


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_stopped_run_closes_its_calls_connections_and_puts_its_matches_back(tmp_path, signum):
    """The server sees the call it is generating (and any waiting) dropped at once, not answered minutes later;
    the match is scheduled again. ~3 s each (the process's start-up)."""
    with FakeOpenAI(serving(), slots=1, tokens_per_s=20) as fake:  # a speech of ~900 tokens: 45 s
        path = workspace(tmp_path / "ws", fake.api_base, checked=True)
        run = start_run(path)
        deadline = time.monotonic() + 60
        while not fake.peak:  # a speech is being generated
            assert run.poll() is None and time.monotonic() < deadline, run.communicate()
            time.sleep(0.05)
        time.sleep(0.3)  # some calls in line behind the one generating

        stopped = time.monotonic()
        run.send_signal(signum)
        out, err = run.communicate(timeout=30)

        assert run.returncode == 130, err
        assert "interrupted" in out, out + err
        assert fake.disconnects, "the server never saw its clients leave"
        assert {d.phase for d in fake.disconnects} >= {"generating"}
        assert all(d.at - stopped < 5 for d in fake.disconnects)
        assert statuses(path) == {"scheduled": 2}


def test_only_a_server_named_by_an_api_base_is_measured_for_slots():
    """A provider's own API serves many at once and meets bursts with rate limits: its answers' spread in time would
    read as a few slots and cap every run on it, so it is not measured for them; a server of yours is."""
    from arena.gateway.probe import serves_slots

    assert not serves_slots(ModelRef("openai/gpt-4o"))
    assert not serves_slots(ModelRef("anthropic/claude-sonnet-4"))
    assert serves_slots(ModelRef(MODEL, "http://127.0.0.1:8000/v1"))
    assert serves_slots(ModelRef("hosted_vllm/llama", "http://gpu-box:8000/v1"))


# --- 5. slots belong to a server, whatever the model names (issue 49) ------------------------------------------------


def one_server(path: Path, api_base: str, *, names=("a", "b"), llm: dict | None = None) -> Path:
    """Entries openai/<name> (a and b) and the judge openai/j, names behind one server; a round-robin."""
    new_workspace(path, arena={"judge_runs": 1}, llm={"backoff_s": 0.01, "retries": 1, **(llm or {})},
                  motions=["builtin:en"],
                  entries=[entry(name, model=f"openai/{name}", api_base=api_base) for name in names],
                  judges=[judge("j", model="openai/j", api_base=api_base)])
    return round_robin(path, rounds=1)


def test_a_one_slot_server_behind_three_model_names_is_measured_once_and_sent_one_request_at_a_time(tmp_path):
    """arena check probes the names one after another and measures the server's slots once: 1 for every name (probed
    at once, they measured 2/4/None); the run then sends the server one request at a time, whatever model it asks
    (a cap per name let 4 in flight). ~10 s."""
    with FakeOpenAI(serving(most=40), slots=1, tokens_per_s=400) as fake:
        path = one_server(tmp_path / "ws", fake.api_base, llm={"max_concurrency": 8})

        result = invoke("check", "-w", path, "--format", "json")

        assert result.exit_code == 0, result.output
        rows = json.loads(result.stdout)
        assert {(r["name"], r["model"], r["slots"]) for r in rows} == {
            ("a", "openai/a", 1), ("b", "openai/b", 1), ("j", "openai/j", 1)}
        measured = [b for b in fake.bodies if last_user(b).startswith(COUNT_PROMPT.split("{}")[0])]
        assert sum(1 for b in measured if b["model"] == "a") == 4 + 2  # the first name: alone, then a batch of 2
        assert all(sum(1 for b in measured if b["model"] == m) == 4 for m in "bj")  # the others: throughput alone
        assert fake.most_in_flight == 2  # the one batch of 2: never two names' probes at once

        fake.clear()
        fake.most_in_flight = 0
        played = invoke("run", "-w", path)

        assert played.exit_code == 0, played.output
        assert statuses(path) == {"done": 2}
        assert {b["model"] for b in fake.bodies} == {"a", "b", "j"}
        assert fake.most_in_flight == 1  # what the server saw: one request at a time, all names together


def test_a_run_lowers_the_cap_of_a_server_that_serves_fewer_than_measured_and_says_so(tmp_path):
    """The workspace believes the server serves 4 at once (a probe it fooled); it serves 1. The run sees its calls wait
    in the server's queue (latencies several times what their tokens take at the measured rates, with others in
    flight) and lowers the server's cap, with a line naming the server and the new cap, remembered: the next run sends
    no more than that at once. ~15 s."""
    with FakeOpenAI(serving(most=40), slots=1, tokens_per_s=400) as fake:
        path = one_server(tmp_path / "ws", fake.api_base, names=("a", "b", "c"))
        store = Store(path / DB_NAME)
        for model in ("openai/a", "openai/b", "openai/c", "openai/j"):  # as a fooled `arena check` leaves them
            store.remember_model(model, fake.api_base, ok=True, structured="json_schema", measured_at=1.0, slots=4,
                                 latency_s=0.01, tokens_per_s=400.0)
        store.close()

        played = invoke("run", "-w", path)

        assert played.exit_code == 0, played.output
        assert fake.most_in_flight > 1  # believed at first
        said = [line for line in played.stderr.splitlines() if "serves fewer requests at once" in line]
        assert len(said) >= 1, played.stderr
        assert said[0].startswith(f"{fake.api_base} serves fewer requests at once than the 4 the run sends it")
        cap = int(said[-1].split("sending it at most ")[1].split()[0])
        assert cap < 4
        assert {facts_of(path, fake.api_base, m)["slots"] for m in ("openai/a", "openai/j")} == {cap}

        round_robin(path, rounds=1)
        fake.clear()
        fake.most_in_flight = 0
        again = invoke("run", "-w", path)
        assert again.exit_code == 0, again.output
        assert fake.most_in_flight <= cap


def facts_of(path: Path, api_base: str, model: str) -> dict:
    store = Store(path / DB_NAME)
    try:
        return store.model_facts(model, api_base) or {}
    finally:
        store.close()


# --- 6. every call has a deadline (issue 49) ------------------------------------------------------------------------


def test_a_trickling_server_cannot_stretch_arena_checks_timeout(tmp_path):
    """The server sends its headers at once, then a byte every 0.5 s: some 150 s for an answer, every read within the
    clients' read timeout. With timeout_s = 2 (and one retry) the probe's chat times out twice, and `arena check`
    ends in about 4 s with the timeout as its error. ~6 s."""
    with FakeOpenAI(lambda body: "ready", trickle_s=0.5) as fake:
        path = tmp_path / "ws"
        new_workspace(path, llm={"timeout_s": 2, "retries": 1, "backoff_s": 0.01}, motions=["builtin:en"],
                      entries=[entry("a", model="openai/a", api_base=fake.api_base)],
                      judges=[judge("j", model="openai/a", api_base=fake.api_base)])

        started = time.monotonic()
        result = invoke("check", "-w", path, "--format", "json")
        took = time.monotonic() - started

        assert took < 12, took  # two tries of 2 s each, not the trickle's 150
        rows = json.loads(result.stdout)
        assert [r["ok"] for r in rows] == [False, False]
        assert "timeout" in rows[0]["error"].lower() and "after 2 tries" in rows[0]["error"]
        assert len([r for r in fake.requests if r.path.endswith("/chat/completions")]) == 2


def test_a_trickling_server_cannot_stretch_a_runs_timeout(tmp_path):
    """`arena run` on models seen working, against the same trickling server: every call ends at its 2 s deadline, and
    the run ends with its matches failed, the timeouts in the ledger. ~10 s."""
    with FakeOpenAI(lambda body: "A speech.", trickle_s=0.5) as fake:
        path = workspace(tmp_path / "ws", fake.api_base, llm={"timeout_s": 2, "retries": 0}, checked=True)

        started = time.monotonic()
        played = invoke("run", "-w", path)
        took = time.monotonic() - started

        assert took < 30, took
        assert statuses(path) == {"failed": 2}, played.output
        assert timeouts(path) >= 2
        assert query(path, "SELECT MAX(latency_s) FROM calls WHERE error LIKE '%imeout%'")[0][0] < 3
