"""Runs you can watch: the live display of `arena run` (what a terminal shows, redrawn in place), the gateway's events
of calls queued, sent and retried as a real run against the fake provider makes them (in one process and relayed by
worker processes), and `arena match show` of a match while it is being played, read from another process, with the
ledger's account of a match's progress it rests on."""
from __future__ import annotations

import io
import json
import re
import subprocess
import sys
import threading
from collections import Counter
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from arena.app import commands as app
from arena.app.commands import open_workspace
from arena.app.runner.engine import MatchRunner, play_claimed
from arena.app.runner.progress import Progress
from arena.app.runner.workers import fan_out
from arena.match.claims import LEASE_S
from arena.base.clock import now
from arena.gateway.llm import CallEvent, CallTag
from arena.domain.records import AgentUsage, Step
from arena.gateway.wire import preload
from tests.support.fakes.openai_server import Reply
from tests.support.helpers import debate_responder, entry, invoke, judge, new_workspace, query, stage_and_side
from tests.support.running import ROOT, scheduled


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def screen(written: str, width: int) -> list[str]:
    """What a terminal shows after `written`: the few controls the display uses (\\r, \\n, erase to the end of the
    line or of the screen, cursor up) applied to a screen of lines; a line longer than width would wrap, and
    fails the test instead."""
    rows, row, col = [""], 0, 0
    for token in re.findall(r"\x1b\[\d*[A-Z]|\r|\n|[^\x1b\r\n]+", written):
        if token == "\r":
            col = 0
        elif token == "\n":
            row, col = row + 1, 0
            rows += [""] * (row + 1 - len(rows))
        elif token == "\x1b[K":
            rows[row] = rows[row][:col]
        elif token == "\x1b[J":
            rows[row] = rows[row][:col]
            del rows[row + 1:]
        elif token.endswith("A"):
            row = max(0, row - int(token[2:-1] or 1))
            col = min(col, len(rows[row]))
        else:
            line = rows[row]
            rows[row] = line[:col] + token + line[col + len(token):]
            col += len(token)
            assert len(rows[row]) <= width, f"a line wider than the terminal wraps: {rows[row]!r}"
    return rows


def sent(match_id: str, role: str, stage: str | None = None, side: str | None = None, judge: str | None = None):
    return CallEvent("sent", CallTag(role, match_id, stage, side, judge), "openai/local")


def answered(match_id: str, role: str, stage: str | None = None, side: str | None = None, judge: str | None = None,
             cost: float | None = None, tokens: int = 1200):
    """A call's answer in: its tokens, and its cost (None: a model litellm has no price for)."""
    return CallEvent("answered", CallTag(role, match_id, stage, side, judge), "openai/local",
                     usage=AgentUsage(1, tokens // 2, tokens - tokens // 2, cost))


def live(width: int = 72, height: int = 20) -> tuple[Progress, io.StringIO, Clock]:
    stream, clock = io.StringIO(), Clock()
    return Progress(4, 2, say=lambda line: None, live=True, clock=clock, stream=stream,
                    size=lambda: (width, height)), stream, clock


# --- the display ------------------------------------------------------------------------------------------------

def test_a_terminal_shows_each_match_under_way_and_an_eta_that_unpriced_calls_do_not_push_off():
    display, stream, clock = live(width=72)
    display.started("m00001")
    display.started("m00002")
    for _ in range(17):  # the match's calls before, on a local model litellm has no price for
        display.told(sent("m00001", "searcher", "rebuttal", "pro"))
        display.told(answered("m00001", "searcher", "rebuttal", "pro"))
    display.told(sent("m00001", "writer", "rebuttal", "pro"))
    clock.now = 5.0
    display.told(sent("m00002", "judge", judge="debatrix-mini"))
    display.told(answered("m00001", "writer", "rebuttal", "pro"))
    display.told(answered("m00002", "judge", judge="debatrix-mini"))
    clock.now = 125.0
    display.tick()
    status, first, second = screen(stream.getvalue(), 71)
    # The ETA comes before the costs, which the width cuts; before a match has finished it says when it will know.
    assert status.startswith("0/4 done, 2 running, 0 failed · ETA after the 1st match · 19 calls")
    assert status.endswith("…") and len(status) == 71
    assert first == "  m00001   2m05s  rebuttal · PRO writer, 2m05s"
    assert second == "  m00002   2m05s  judging · debatrix-mini, 2m00s"

    display.finished("m00001")
    clock.now = 130.0
    display.tick()
    shown = screen(stream.getvalue(), 71)  # redrawn in place: the finished match's line is gone
    # 125 s a match, 3 left, 2 at once
    assert shown[0].startswith("1/4 done, 1 running, 0 failed · ETA 3m08s · 19 calls")
    assert shown[1:] == ["  m00002   2m10s  judging · debatrix-mini, 2m05s"]


def test_a_retry_is_printed_above_the_frame_as_it_happens_and_its_match_shows_the_try():
    display, stream, clock = live(width=100)
    display.started("m00003")
    writer = CallTag("writer", "m00003", "summary", "con")
    display.told(CallEvent("queued", writer, "openai/local"))
    display.told(CallEvent("sent", writer, "openai/local"))
    clock.now = 3.0
    display.told(CallEvent("retry", writer, "openai/local", "RateLimitError 429: slow\ndown", 1, 5, 2.0))
    clock.now = 5.5
    display.told(CallEvent("queued", writer, "openai/local"))  # the next try of the same call
    display.told(CallEvent("sent", writer, "openai/local"))
    display.draw(force=True)
    assert screen(stream.getvalue(), 99) == [
        "retry: m00003 summary · CON writer: RateLimitError 429: slow down (try 1 of 5 failed; next in 2s)",
        # Both tries are calls, as the ledger has a row for each.
        "0/4 done, 1 running, 0 failed · ETA after the 1st match · 2 calls (1 retry), 0 tokens, $0.0000",
        # The call's time counts from its first try; the try says what the one before met.
        "  m00003      6s  summary · CON writer, 6s, try 2 of 5 after RateLimitError 429"]

    display.told(CallEvent("sent", CallTag("writer", "m00003", "summary", "pro"), "openai/local"))  # moved on
    display.draw(force=True)
    assert screen(stream.getvalue(), 99)[-1] == "  m00003      6s  summary · PRO writer, 0s"


def test_a_call_waiting_for_a_slot_of_its_model_says_so_until_it_is_sent():
    display, stream, clock = live(width=100)
    display.started("m00001")
    judge = CallTag("judge", "m00001", judge="j1")
    display.told(CallEvent("queued", judge, "openai/local"))  # the model's one slot is taken
    clock.now = 40.0
    display.tick()
    assert screen(stream.getvalue(), 99)[-1] == "  m00001     40s  judging · j1, 40s waiting for the model"
    display.told(CallEvent("sent", judge, "openai/local"))
    clock.now = 50.0
    display.tick()
    assert screen(stream.getvalue(), 99)[-1] == "  m00001     50s  judging · j1, 50s"  # its time counts from the wait
    display.told(CallEvent("queued", judge, "openai/local"))  # the next call of the judge: its own time
    display.told(CallEvent("sent", judge, "openai/local"))
    display.draw(force=True)
    assert screen(stream.getvalue(), 99)[-1] == "  m00001     50s  judging · j1, 0s"


def test_the_frame_is_bounded_by_the_terminal_and_by_max_shown():
    display, stream, clock = live(width=40, height=6)
    for k in range(12):
        display.started(f"m{k:05d}")
        display.told(sent(f"m{k:05d}", "searcher", "constructive", "pro"))
    display.draw(force=True)
    shown = screen(stream.getvalue(), 39)
    assert len(shown) == 5 and shown[-1] == "  +9 more under way"  # a line fewer than the terminal's 6
    assert [line.split()[0] for line in shown[1:-1]] == ["m00000", "m00001", "m00002"]  # the longest-running first
    display.close()
    assert screen(stream.getvalue(), 39) == [""]  # the frame erased; the summary goes to say


def test_off_a_terminal_a_retry_is_a_line_and_calls_sent_are_not():
    lines = []
    display = Progress(2, 1, say=lines.append)
    display.started("m00001")
    tag = CallTag("writer", "m00001", "constructive", "pro")
    display.told(CallEvent("sent", tag, "openai/x"))
    display.told(CallEvent("retry", tag, "openai/x", "Timeout 408: Timeout passed=120.0", 2, 5, 4.0))
    display.finished("m00001")
    assert lines == ["retry: m00001 constructive · PRO writer: Timeout 408: Timeout passed=120.0 (try 2 of 5 failed; "
                     "next in 4s)", "[1/2] m00001 done (0.0s)"]


# --- the events of a real run -----------------------------------------------------------------------------------

class Heard(Progress):
    """A display that also keeps every gateway event it is told."""

    def __init__(self, total: int):
        self.said: list[str] = []
        super().__init__(total, 2, say=self.said.append)
        self.events: list[CallEvent] = []

    def told(self, event: CallEvent) -> None:
        self.events.append(event)
        super().told(event)


@pytest.mark.parametrize("workers", [1, 2], ids=["one process", "two workers"])
def test_a_run_tells_of_each_call_sent_and_of_a_retry_with_its_match_and_role(tmp_path, fake_llm, workers):
    fake_llm.responder = debate_responder()
    fake_llm.faults.enqueue(Reply(status=429, content="slow down"))  # the run's first request; its retry succeeds
    path = scheduled(tmp_path, fake_llm.api_base, entries=("alpha", "beta"), judge_runs=1)
    heard = Heard(2)
    if workers == 1:
        ws = open_workspace(path)
        try:
            assert play_claimed(MatchRunner.of(ws), heard, concurrency=2) is None
        finally:
            ws.close()
    else:  # each worker relays its events to this process's display
        preload()  # litellm imported once, before the fork, as `arena run --workers` does
        assert fan_out(path, [1, 1], heard, lease_s=LEASE_S, failed_before=None, budget=None)[0] is None
    assert heard.done == 2

    # One event per request the server saw, for the speech (or the judge) the request was for.
    sent_events = [e for e in heard.events if e.kind == "sent"]
    # Each try is told first as waiting for a slot of its model (the 429's retry too), and answered but the 429.
    assert Counter(e.kind for e in heard.events) == {"queued": len(sent_events), "sent": len(sent_events),
                                                     "answered": len(sent_events) - 1, "retry": 1}
    assert heard.calls == len(fake_llm.requests) == query(path, "SELECT COUNT(*) FROM calls")[0][0]
    asked = Counter(stage_and_side(r.body) or ("judging", None) for r in fake_llm.requests)
    assert Counter(("judging", None) if e.tag.judge else (e.tag.stage, e.tag.side) for e in sent_events) == asked
    (retry,) = [e for e in heard.events if e.kind == "retry"]
    failed = query(path, "SELECT match_id, role, stage, side FROM calls WHERE error LIKE '%429%'")
    assert failed == [(retry.tag.match_id, retry.tag.role, retry.tag.stage, retry.tag.side)]
    assert (retry.tag.stage, retry.tag.side) == stage_and_side(fake_llm.requests[0].body)
    assert (retry.attempt, retry.tries) == (1, 3) and "429" in retry.error  # retries = 2 in this workspace
    assert [line for line in heard.said if line.startswith("retry:")] == [
        f"retry: {retry.tag.match_id} {retry.tag.stage} · {retry.tag.side.upper()} writer: RateLimitError 429: slow "
        f"down (try 1 of 3 failed; next in 0s)"]  # the error in short: its type, status and the provider's message


# --- arena match show of a match being played -------------------------------------------------------------------

def test_match_show_of_a_running_match_says_what_it_is_doing_from_another_process(tmp_path, fake_llm):
    answer = debate_responder()
    held = {"rebuttal": threading.Event(), "judging": threading.Event()}
    arrived: dict[str, tuple[str, list]] = {}  # which call is held: when it arrived, and the requests until it
    go = threading.Event()

    def responder(body):
        which = "judging" if body.get("response_format") else "rebuttal" if stage_and_side(body) == (
            "rebuttal", "pro") else None
        if which and which not in arrived:  # the first such call waits until the test has looked
            arrived[which] = (now(), [r.body for r in fake_llm.requests])
            held[which].set()
            assert go.wait(60)
            go.clear()
        return answer(body)

    fake_llm.responder = responder
    path = scheduled(tmp_path, fake_llm.api_base, entries=("alpha", "beta"), judge_runs=1)
    said: list[str] = []
    run = threading.Thread(target=lambda: _run(path, said))
    run.start()
    try:
        assert held["rebuttal"].wait(60)
        (match_id, started, pro, con), = query(path, "SELECT id, started_at, pro, con FROM matches "
                                                     "WHERE status='running'")

        def calls(bodies: list) -> int:
            """The requests of this match: its debaters' speeches (the other match's play overlaps its judging),
            and judge requests (the first is the one held)."""
            return sum(1 for b in bodies if b.get("response_format")
                       or b["model"] == f"{pro if stage_and_side(b)[1] == 'pro' else con}-model")

        shown = subprocess.run([sys.executable, "-m", "arena", "match", "show", match_id, "-w", str(path), "--format",
                                "json"], capture_output=True, text=True, env={"PYTHONPATH": str(ROOT)}, timeout=60)
        assert shown.returncode == 0, shown.stderr
        progress = json.loads(shown.stdout)["progress"]
        at, before = arrived["rebuttal"][0], calls(arrived["rebuttal"][1])
        # The call the server holds: PRO's rebuttal, its writer; the calls it had before, this one too.
        assert {k: progress[k] for k in ("stage", "side", "role", "calls")} == {
            "stage": "rebuttal", "side": "pro", "role": "writer", "calls": before}
        assert started <= progress["since"] <= at  # sent after the match began, before the server had it
        text = invoke("match", "show", match_id, "-w", path)
        assert text.exit_code == 0, text.output
        assert re.search(rf"Playing: rebuttal · PRO writer · {before} calls · since \d\d:\d\d:\d\d \(\d+s\)",
                         text.output)
        assert "Score:" not in text.output  # nothing judged yet: no score of 0 – 0 to mislead
        go.set()

        assert held["judging"].wait(60)
        at, before = arrived["judging"][0], calls(arrived["judging"][1])
        ws = open_workspace(path)
        try:
            progress = app.match_show(ws, match_id)["progress"]
        finally:
            ws.close()
        # A judge's call: the stage "judging", no side, the judge's name as the role; every call before it counted.
        assert {k: progress[k] for k in ("stage", "side", "role", "calls")} == {
            "stage": "judging", "side": None, "role": "j1", "calls": before}
        assert progress["since"] <= at
        go.set()
    finally:
        go.set()
        run.join(60)
    assert said[-1].startswith("after ") and "2/2 done" in said[-1]
    ws = open_workspace(path)
    try:
        assert "progress" not in app.match_show(ws, match_id)  # done: no progress key
    finally:
        ws.close()


def _run(path: Path, said: list[str]) -> None:
    ws = open_workspace(path)
    try:
        app.run(ws, concurrency=1, progress=said.append)
    finally:
        ws.close()


def test_match_play_prints_a_retry_as_it_happens(tmp_path, fake_llm):
    fake_llm.responder = debate_responder()
    fake_llm.faults.enqueue(Reply(status=503, content="overloaded"))
    path = scheduled(tmp_path, fake_llm.api_base, entries=("alpha", "beta"), judge_runs=1)
    result = invoke("match", "play", "--motion", "en-fact-001", "--pro", "alpha", "--con", "beta", "-w", path)
    assert result.exit_code == 0, result.output
    (match_id, stage, side), = query(path, "SELECT match_id, stage, side FROM calls WHERE error LIKE '%503%'")
    assert (stage, side) == stage_and_side(fake_llm.requests[0].body)  # the request that met the fault
    retries = [line for line in result.stderr.splitlines() if line.startswith("retry:")]
    assert len(retries) == 1 and retries[0].startswith(f"retry: {match_id} {stage} · {side.upper()} writer: ")
    assert retries[0].endswith(" 503: overloaded (try 1 of 3 failed; next in 0s)")  # the provider's message


def test_a_matchs_progress_counts_its_current_play_and_dates_a_settled_call_from_its_start(tmp_path):
    from arena.match.claims import Holder
    from arena.store import IN_FLIGHT

    path = new_workspace(tmp_path / "ws", entries=[entry("a"), entry("b")], judges=[judge("j1")],
                         motions=["builtin:en"], init="cli")
    ws = open_workspace(path)
    try:
        store, holder = ws.store, Holder.here()
        match_id = app.schedule(ws, "round-robin").match_ids[0]
        assert store.match_progress(match_id) is None  # never started

        def call(role: str, **tag) -> int:
            return store.record_call(kind="llm", model="openai/x", latency_s=0.0, cache_hit=False, simulated=False,
                                     match_id=match_id, role=role, error=IN_FLIGHT, **tag)

        store.claim_match(holder, only=match_id)
        call("writer", stage="constructive", side="pro")  # a play cut short: its calls are not the next play's
        store.mark_scheduled(match_id, holder)
        store.claim_match(holder, only=match_id)
        (started,), = query(path, "SELECT started_at FROM matches WHERE id=?", match_id)
        before = store.match_progress(match_id)
        assert (before.step, before.calls, before.since) == (Step(None, None, None), 0, started)

        first = call("writer", stage="constructive", side="con")
        settled = store.record_call(kind="llm", model="openai/x", latency_s=2.5, cache_hit=False, simulated=False,
                                    match_id=match_id, role="writer", stage="constructive", side="con", call_id=first)
        (ended,), = query(path, "SELECT created_at FROM calls WHERE id=?", settled)
        store.record_call(kind="search", model="tavily", latency_s=0.1, cache_hit=False, simulated=False,
                          match_id=match_id, role="searcher", stage="constructive", side="con")  # no LLM call
        latest = store.match_progress(match_id)
        assert (latest.step, latest.calls) == (Step("constructive", "con", "writer"), 1)
        assert datetime.fromisoformat(ended) - datetime.fromisoformat(latest.since) == timedelta(seconds=2.5)

        call("judge", judge="j1")  # in flight: shown before any later settled call
        store.record_call(kind="llm", model="openai/x", latency_s=0.0, cache_hit=True, simulated=False,
                          match_id=match_id, role="writer", stage="summary", side="pro")  # a cache hit counts
        judging = store.match_progress(match_id)
        assert (judging.step, judging.calls) == (Step("judging", None, "j1"), 3)
    finally:
        ws.close()


# --- what it is told, shown and not obeyed ---------------------------------------------------------------------

HOSTILE = "\x1b]0;pwned\x07 \x1b[2J down \x9b31m"  # a window title, the screen cleared, a C1 CSI
ESCAPED = "\\x1b]0;pwned\\x07 \\x1b[2J down \\x9b31m"


def test_off_a_terminal_a_servers_error_is_shown_escaped_in_every_line():
    lines = []
    display = Progress(2, 1, say=lines.append)
    display.started("m00001")
    tag = CallTag("writer", "m00001", "constructive", "pro")
    display.told(CallEvent("retry", tag, "openai/x", f"BadRequestError 400: {HOSTILE}", 1, 5, 4.0))
    display.finished("m00001", f"openai/x: BadRequestError 400: {HOSTILE}\rOVERWRITTEN")
    display.say(f"a worker stopped: {HOSTILE}")
    assert lines == [f"retry: m00001 constructive · PRO writer: BadRequestError 400: {ESCAPED} (try 1 of 5 failed; "
                     "next in 4s)", f"[1/2] m00001 failed: openai/x: BadRequestError 400: {ESCAPED}\\x0dOVERWRITTEN",
                     f"a worker stopped: {ESCAPED}"]


def test_on_a_terminal_a_failure_is_shown_escaped_above_a_frame_that_still_redraws():
    display, stream, clock = live(width=100)
    display.started("m00001")
    display.started("m00002")
    display.finished("m00001", f"openai/x: {HOSTILE}\rOVERWRITTEN")
    clock.now = 1.0
    display.tick()
    # screen() reads the frame's own sequences alone: any other control would be taken as text and fail below
    assert screen(stream.getvalue(), 99) == [
        f"[1/4] m00001 failed: openai/x: {ESCAPED}\\x0dOVERWRITTEN",
        "0/4 done, 1 running, 1 failed · ETA 0s · 0 calls, 0 tokens, $0.0000",
        "  m00002      1s  starting"]
