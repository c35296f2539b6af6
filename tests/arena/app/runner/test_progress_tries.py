"""The progress of `arena run` counts every try the ledger records: first tries, retries after a server's error or a
timeout, re-asks after an answer that failed its schema or its speech check; its summary's calls are the ledger's
rows, and a call asked again says so, and why, while it runs. Real runs against the fake provider, whose server
answers a speech with its own prompt, a verdict with prose, and a request with a 500 or too late, once each."""
from __future__ import annotations

import io
import re
import threading

import pytest

from arena.app.commands import open_workspace
from arena.app.runner.engine import MatchRunner, play_claimed
from arena.app.runner.progress import Progress
from tests.support.fakes.openai_server import Reply, last_user, messages_text
from tests.support.helpers import debate_responder, entry, invoke, judge, mark_checked, new_workspace, query, stage_and_side
from tests.support.running import round_robin

TIMEOUT_S = 1.5  # the workspace's [llm] timeout_s: the late answer comes after it, every other at once


def workspace(tmp_path, api_base: str):
    """alpha and beta (direct debaters) on the fake server, judged once by j1: a match each way."""
    path = new_workspace(tmp_path / "ws", arena={"judge_runs": 1},
                         llm={"backoff_s": 0.01, "retries": 2, "timeout_s": TIMEOUT_S}, motions=["builtin:en"],
                         entries=[entry(name, model=f"openai/{name}-model", api_base=api_base)
                                  for name in ("alpha", "beta")],
                         judges=[judge("j1", model="openai/judge-model", api_base=api_base)])
    return round_robin(mark_checked(path), rounds=1)


def unusable_first(server, held_s: float = 0.0, stuck: str = ""):
    """debate_responder, but PRO's constructive is first answered with its own prompt (the speech check's echo) and
    the first verdict with prose (not its schema); their re-asks, and a request sent again after a failed try,
    answered well held_s seconds later. The model stuck answers its CON summary with its prompt every time (it
    forfeits, as a small model did)."""
    answer, lock, judged = debate_responder(), threading.Lock(), []

    def respond(body: dict):
        reask = len(body["messages"]) > 1  # the first answer and what was wrong with it, then the ask again
        again = reask or sum(r.body == body for r in server.requests) > 1
        if body["model"] == stuck and stage_and_side(body) == ("summary", "con"):
            return messages_text(body)
        if body.get("response_format") and not reask:
            with lock:
                first = not judged
                judged.append(body)
            if first:
                return "I think PRO won this one, on balance."
        elif stage_and_side(body) == ("constructive", "pro") and not reask:
            return last_user(body)
        return Reply(content=answer(body), delay=held_s if again else 0.0)

    return respond


def tokens(n: int) -> str:
    """A token count as the progress line shows it."""
    return f"{n / 1e3:.1f}k" if n >= 1e4 else str(n)


@pytest.mark.parametrize("workers", [1, 2], ids=["one process", "two workers"])
def test_the_summary_counts_every_try_the_ledger_records_and_each_reask_is_said(tmp_path, fake_llm, workers):
    fake_llm.responder = unusable_first(fake_llm, stuck="beta-model")
    # The run's first request fails with a 500; its second comes after the call's timeout. Each is tried again.
    fake_llm.faults.enqueue(Reply(status=500, content="overloaded"), Reply(delay=TIMEOUT_S + 1.5))
    path = workspace(tmp_path, fake_llm.api_base)

    result = invoke("run", "-w", path, "--workers", workers)

    assert result.exit_code == 0, result.output
    assert query(path, "SELECT status, COUNT(*) FROM matches GROUP BY status") == [("done", 2)]
    assert query(path, "SELECT pro, forfeit FROM matches ORDER BY id") in (
        [("alpha", "con"), ("beta", None)], [("beta", None), ("alpha", "con")])  # beta's CON summary forfeited
    lines = result.stderr.splitlines()
    # Every request the server saw is a row of the ledger, and a call of the summary; every answer's tokens too.
    rows, used = query(path, "SELECT COUNT(*), SUM(prompt_tokens + completion_tokens) FROM calls WHERE kind='llm'")[0]
    # The match played out: 6 speeches, PRO's constructive asked again, a verdict asked again. The forfeited one: 4
    # speeches, PRO's constructive asked again, then the CON summary (its stage's first) asked 3 times. 2 retries.
    assert rows == len(fake_llm.requests) == (6 + 1 + 2) + (4 + 1 + 3) + 2
    summary = lines[-1]
    assert re.fullmatch(rf"after \d+s: 2/2 done, 0 running, 0 failed · {rows} calls \(5 re-asks, 2 retries\), "
                        rf"{re.escape(tokens(used))} tokens, \$0\.0000 \(\+{rows - 2} calls of unknown price\)",
                        summary), summary
    # Each re-ask is a line of its own, with why it was made: the speech check the answer failed, or its schema.
    reasks = sorted(re.sub(r"m0000\d", "ID", line) for line in lines if line.startswith("re-ask:"))
    assert reasks == ["re-ask: ID constructive · PRO writer: speech check: echo (re-ask 1 of 2)",
                      "re-ask: ID constructive · PRO writer: speech check: echo (re-ask 1 of 2)",
                      "re-ask: ID judging · j1: did not match its schema (re-ask 1 of 2)",
                      "re-ask: ID summary · CON writer: speech check: echo (re-ask 1 of 2)",
                      "re-ask: ID summary · CON writer: speech check: echo (re-ask 2 of 2)"]
    retries = [line for line in lines if line.startswith("retry:")]
    assert len(retries) == 2
    assert any("InternalServerError 500: overloaded (try 1 of 3 failed" in line for line in retries), retries
    assert any("CallTimeout: no whole answer within 1.5 s" in line for line in retries), retries


def test_a_call_asked_again_says_so_and_why_while_it_runs(tmp_path, fake_llm):
    # Held longer than a second: the display, redrawn every second, shows each re-ask while it runs.
    fake_llm.responder = unusable_first(fake_llm, held_s=1.3)
    fake_llm.faults.enqueue(Reply(status=500, content="overloaded"))
    path = workspace(tmp_path, fake_llm.api_base)
    stream = io.StringIO()
    display = Progress(2, 2, say=lambda line: None, live=True, stream=stream, size=lambda: (120, 20))
    ws = open_workspace(path)
    try:
        assert play_claimed(MatchRunner.of(ws), display, concurrency=2) is None
    finally:
        ws.close()

    drawn = {line.strip() for line in re.split(r"\x1b\[K\n|\r|\x1b\[\d*[A-Z]", stream.getvalue())}
    # The match's line: its id, its time, the call's step and time, and that it is a re-ask, and why.
    assert any(re.fullmatch(r"m0000\d +\d+s +constructive · PRO writer, \d+s, re-ask 1 \(speech check: echo\)", line)
               for line in drawn), sorted(drawn)
    assert any(re.fullmatch(r"m0000\d +\d+s +judging · j1, \d+s, re-ask 1 \(did not match its schema\)", line)
               for line in drawn), sorted(drawn)
    # The retried try says which try it is and what the one before met.
    assert any(re.fullmatch(r"m0000\d +\d+s +(constructive · (PRO|CON) writer|judging · j1), \d+s, try 2 of 3 after "
                            r"InternalServerError 500", line) for line in drawn), sorted(drawn)
    # The last status line counts the calls the ledger holds.
    rows = query(path, "SELECT COUNT(*) FROM calls WHERE kind='llm'")[0][0]
    assert rows == len(fake_llm.requests) == 2 * 7 + 3 + 1
    assert f"· {rows} calls (3 re-asks, 1 retry), " in display.status()


def test_a_run_again_counts_its_cache_hits_among_its_calls_and_says_how_many(tmp_path, fake_llm):
    answer = debate_responder()
    # Every CON summary refused: both matches fail, their speeches before it answered and cached.
    fake_llm.responder = lambda body: (Reply(status=400, content="bad request") if stage_and_side(body) == (
        "summary", "con") else answer(body))
    path = workspace(tmp_path, fake_llm.api_base)
    assert invoke("run", "-w", path).exit_code == 1
    (before,), = query(path, "SELECT MAX(id) FROM calls")

    fake_llm.responder = answer
    fake_llm.faults.enqueue(Reply(status=500, content="overloaded"))
    result = invoke("run", "-w", path, "--retry-failed")

    assert result.exit_code == 0, result.output
    # The rows this run wrote: each match's 4 speeches before its summaries from the cache; 2 summaries and a verdict
    # asked; one of them tried again.
    rows, cached = query(path, "SELECT COUNT(*), SUM(cache_hit) FROM calls WHERE id > ?", before)[0]
    assert (rows, cached) == (2 * 7 + 1, 2 * 4)
    assert re.fullmatch(rf"after \d+s: 2/2 done, 0 running, 0 failed · {rows} calls \({cached} cached, 1 retry\), "
                        r".* \(\+6 calls of unknown price\)", result.stderr.splitlines()[-1])
