"""`arena check` measures a server's slots (issue 50): on a loaded machine, a one-slot server is still measured as one,
and servers of 2 and 4 slots never as more than they have.

The servers are FakeOpenAI with limited slots and a real CPU server's ways: each slot keeps the last prompt it
evaluated (as llama-cpp-python's does: of one-slot requests sent at once with one prompt, only the first pays for it)
and its answers take up to 10 % longer at random; while busy processes spin on every CPU of the machine.
"""
from __future__ import annotations

import asyncio
import multiprocessing
import os
from collections.abc import Iterator

import pytest

from arena.gateway.catalog import ModelRef
from arena.gateway.lazy import litellm
from arena.gateway.llm import CallTag, LLMGateway
from arena.gateway.probe import COUNT_PROMPT, READ_PROMPT, measure
from arena.workspace.config import LLMSettings
from tests.support.fakes.openai_server import FakeOpenAI, Reply, last_user

COUNTING = COUNT_PROMPT.split("{}")[0]


def counting(body: dict):
    """A model that counts as asked, cut at max_tokens; the long prompt (READ_PROMPT) said to be 40 tokens, so that
    reading it takes a moment, not seconds, whatever the prompt rate."""
    text = last_user(body)
    if text.startswith(READ_PROMPT):
        return Reply(content="ok", prompt_tokens=40)
    assert text.startswith(COUNTING), text
    return " ".join(["one"] * body["max_tokens"])


def spin() -> None:  # pragma: no cover - runs in the busy processes, killed at the test's end
    while True:
        pass


@pytest.fixture
def loaded() -> Iterator[None]:
    """A busy process on every CPU for the test's length (forked: they start at once); litellm imported first, as
    `arena check` does before it times anything."""
    litellm()
    context = multiprocessing.get_context("fork")
    busy = [context.Process(target=spin, daemon=True) for _ in range(os.cpu_count() or 2)]
    for process in busy:
        process.start()
    try:
        yield
    finally:
        for process in busy:
            process.terminate()
        for process in busy:
            process.join(5)


def measured(fake: FakeOpenAI, times: int) -> list[int | None]:
    """`times` measurements of the fake's slots, each by a new gateway (nothing remembered), with max_concurrency 8."""
    found = []
    for _ in range(times):
        gateway = LLMGateway(LLMSettings(max_concurrency=8, retries=0), None)
        speed = asyncio.run(measure(gateway, ModelRef("openai/m", fake.api_base), CallTag(role="probe")))
        found.append(speed["slots"])
    return found


def test_a_one_slot_server_on_a_loaded_machine_is_measured_as_one(loaded):
    """500 tokens/s, its ~17-token prompt read at 120 tokens/s and kept: sent the same prompt twice at once, the first
    answer takes the prompt's 0.14 s and the answer's 0.1 s, the second 0.1 s more. Before, the second within half
    of one answer's time alone (which reads its prompt) of the first, and within 1.5 × the first's time, read as
    served together: slots 2, and the run sent the server 2 at once. Now each of 3 measurements reads 1 (a
    measurement the load leaves without a rate, so without slots, is no count; most have one). ~6 s."""
    with FakeOpenAI(counting, slots=1, tokens_per_s=500, prompt_tokens_per_s=120, prompt_cache=True,
                    jitter=0.1) as fake:
        found = measured(fake, 3)
        assert all(count in (1, None) for count in found) and found.count(1) >= 2, found
        assert fake.peak == 1


@pytest.mark.parametrize("slots", [2, 4])
def test_servers_of_several_slots_on_a_loaded_machine_are_never_measured_above_them(loaded, slots):
    """The same load, 200 tokens/s (0.24 s an answer): 2 and 4 slots are measured as they are, or, when the load
    leaves a batch unsure, fewer; never more. ~4 s each."""
    with FakeOpenAI(counting, slots=slots, tokens_per_s=200, prompt_tokens_per_s=400, prompt_cache=True,
                    jitter=0.1) as fake:
        found = measured(fake, 2)
        assert all(count is not None and 1 <= count <= slots for count in found), found
        assert slots in found, found  # a slot lost to the load now and then, not every time


def test_the_fakes_prompt_cache_charges_a_prompt_once_in_a_row():
    """prompt_cache: the same prompt again takes no prompt time; another takes it. ~0.6 s."""
    with FakeOpenAI(lambda body: "ok", slots=1, prompt_tokens_per_s=50, prompt_cache=True) as fake:
        gateway = LLMGateway(LLMSettings(retries=0), None)
        ref = ModelRef("openai/m", fake.api_base)

        async def ask(text: str) -> None:
            await gateway.call(ref, [{"role": "user", "content": text}], {"max_tokens": 4}, tag=CallTag(role="t"))

        asyncio.run(ask("one two three four five six seven eight nine ten"))  # 10 words: 0.2 s
        first = fake.busy_s
        asyncio.run(ask("one two three four five six seven eight nine ten"))
        again = fake.busy_s - first
        asyncio.run(ask("ten nine eight seven six five four three two one"))
        other = fake.busy_s - first - again
        assert first == pytest.approx(0.2, abs=0.05) and again < 0.05 and other == pytest.approx(0.2, abs=0.05)


# --- the rule, on times given ------------------------------------------------------------------------------------


@pytest.mark.parametrize("times, count, sure", [
    ((0.17, 0.34, 0.51, 0.66), 1, True),  # the llama-cpp-python: one at a time, a service time apart
    ((0.47, 0.64), 1, True),  # the first late (its prompt, a busy moment): still a service time apart
    ((0.20, 0.21, 0.40, 0.41), 2, True),  # in pairs
    ((0.20, 0.21, 0.22, 0.41), 3, True),
    ((0.20, 0.21, 0.22, 0.23), 4, True),
    ((0.17, 0.34, 0.345, 0.51), 1, False),  # two that came together by chance (the client busy): unsure
    ((0.20, 0.26), 1, False),  # 0.06 apart of 0.17: neither together nor a service time apart
])
def test_served_at_once_reads_the_groups_in_which_answers_come(times, count, sure):
    from arena.gateway.probe import served_at_once  # the rule's own test (new): the others run on any probe

    assert served_at_once(times, 0.17) == (count, sure)
