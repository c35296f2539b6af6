"""`arena run --workers N`: N processes, each with its own event loop, play one workspace's matches.

They share the plan through claims (arena.match.claims), so no match is played twice; each relays what it
does to the parent, whose one progress display counts them all. Ctrl-C at the terminal reaches the
parent only (the workers have their own process group); the parent passes it on to each worker once,
and each stops as a single-process run does: its matches in flight go back to the plan.

A worker never outlives its parent: were the parent killed (kill -9, the OOM killer, a supervisor), its
workers would go on playing the plan against paid models with nobody watching. On Linux the kernel sends
a worker SIGINT the moment its parent dies (the parent-death signal); everywhere, a watchdog thread
notices the parent gone within WATCH_S. Either way the worker stops as at Ctrl-C, and one that has not
stopped GRACE_S later exits at once (its claims then lapse, and the next run plays those matches).
"""
from __future__ import annotations

import ctypes
import multiprocessing
import os
import queue
import signal
import sys
import threading
import time
from pathlib import Path
from multiprocessing.context import ForkContext, SpawnContext
from multiprocessing.queues import Queue
from typing import Literal, TypedDict, Union

from arena.app.runner.engine import MatchRunner, failure_reason, play_claimed
from arena.app.runner.progress import Progress
from arena.app.setup.wiring import open_workspace
from arena.base.files import no_space, no_space_error
from arena.gateway.llm import CallEvent
from arena.store import DB_NAME
from arena.gateway.wire import forget_clients

POLL_S = 0.1
WATCH_S = 0.5  # how often a worker looks for its parent
GRACE_S = 5.0  # how long an orphaned worker may take to put its matches back before it exits regardless
PR_SET_PDEATHSIG = 1  # prctl(2)

# What a worker tells its parent, a small tuple each (it pickles): a match started, finished (with its failure) or
# dropped; a gateway event (the calls' counts among them); how it stopped and its CPU seconds; why it failed; the
# full disk it met.
Event = Union[tuple[Literal["started"], str], tuple[Literal["finished"], str, Union[str, None]],
              tuple[Literal["dropped"], str],
              tuple[Literal["told"], CallEvent], tuple[Literal["stopped"], Union[str, None], float],
              tuple[Literal["error"], str], tuple[Literal["full"], OSError]]


class Options(TypedDict):
    """How a worker claims and plays (MatchRunner.of's and play_claimed's settings)."""

    concurrency: int
    lease_s: float
    follow_slots: bool
    failed_before: str | None
    budget: float | None
    skipping: frozenset[str]


class Relay:
    """A worker's Events: each event goes to the parent as a small tuple."""

    def __init__(self, channel: Queue[Event]) -> None:
        self.channel = channel

    def started(self, match_id: str) -> None:
        self.channel.put(("started", match_id))

    def finished(self, match_id: str, error: str | None = None) -> None:
        self.channel.put(("finished", match_id, error))

    def dropped(self, match_id: str) -> None:
        self.channel.put(("dropped", match_id))

    def told(self, event: CallEvent) -> None:
        self.channel.put(("told", event))  # a frozen record of plain fields: it pickles

    def tick(self) -> None:
        """Nothing to relay: the parent keeps its own time."""


def die_with(parent: int) -> None:
    """Stop this process (SIGINT, then exit GRACE_S later) when the process parent is gone."""
    kernel = False  # whether the kernel sends the SIGINT (a second one would cut short the worker's stopping)
    if sys.platform.startswith("linux"):
        kernel = ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGINT, 0, 0, 0) == 0

    def watch() -> None:
        while os.getppid() == parent:  # an orphan is adopted by another process: its parent id changes
            time.sleep(WATCH_S)
        if not kernel:
            os.kill(os.getpid(), signal.SIGINT)
        time.sleep(GRACE_S)
        os._exit(1)

    threading.Thread(target=watch, name="arena-watchdog", daemon=True).start()
    if kernel and os.getppid() != parent:  # gone before the kernel was asked to tell us
        os.kill(os.getpid(), signal.SIGINT)


def work(path: str, channel: Queue[Event], options: Options, parent: int) -> None:
    """One worker process: open the workspace, claim and play until nothing is left; report how it stopped."""
    os.setpgrp()  # out of the terminal's foreground group: a Ctrl-C there reaches the parent alone
    signal.signal(signal.SIGINT, signal.default_int_handler)  # started ignored (fan_out); the parent's SIGINT stops us
    forget_clients()  # forked: the parent's HTTP clients are not ours to use

    stopped: str | None = "interrupted"
    cpu = time.process_time()
    try:
        die_with(parent)  # within the try: a parent gone already stops us as a Ctrl-C would
        ws = open_workspace(Path(path))
        try:
            runner = MatchRunner.of(ws, lease_s=options["lease_s"], follow_slots=options["follow_slots"],
                                    skipping=options["skipping"])
            cpu = time.process_time()  # what playing costs, without the start-up (imports, opening)
            stopped = play_claimed(runner, Relay(channel), concurrency=options["concurrency"],
                                   failed_before=options["failed_before"], budget=options["budget"])
        finally:
            ws.close()
    except KeyboardInterrupt:
        stopped = "interrupted"
    except Exception as exc:  # the parent says why; the matches this worker held lapse with it
        # A full disk is the run's error, as in one process: the parent raises it (an OSError naming the path).
        if no_space(exc):
            channel.put(("full", no_space_error(exc, getattr(exc, "filename", None) or Path(path) / DB_NAME)))
        else:
            channel.put(("error", failure_reason(exc)))
        stopped = "failed"
    channel.put(("stopped", stopped, time.process_time() - cpu))


def fan_out(path: Path, shares: list[int], events: Progress, *, lease_s: float, follow_slots: bool = True,
            failed_before: str | None = None, budget: float | None = None,
            skipping: frozenset[str] = frozenset()) -> tuple[str | None, float]:
    """Run a worker process per share (the matches it plays at once) on the workspace at path until all are
    done, feeding their events to events. Returns how the run stopped (None, "budget", or "interrupted":
    Ctrl-C, or a worker that failed) and the CPU seconds the workers spent playing."""
    workers = len(shares)
    # Forked where the system can: workers start at once, sharing what the parent imported (litellm's import
    # would cost each ~2 s of CPU). Each opens its own database connection and HTTP clients, never the parent's.
    context: ForkContext | SpawnContext = (multiprocessing.get_context("fork")
                                           if "fork" in multiprocessing.get_all_start_methods()
                                           else multiprocessing.get_context("spawn"))
    channel: Queue[Event] = context.Queue()
    procs = [context.Process(target=work, name=f"arena-worker-{k + 1}",
                             args=(str(path), channel,
                                   Options(concurrency=share, lease_s=lease_s, follow_slots=follow_slots,
                                           failed_before=failed_before, budget=budget, skipping=skipping),
                                   os.getpid()))
             for k, share in enumerate(shares)]
    # Workers start with SIGINT ignored, so a Ctrl-C before they leave the terminal's group cannot kill them.
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        for proc in procs:
            proc.start()
    finally:
        signal.signal(signal.SIGINT, previous)
    outcomes: list[str | None] = []
    cpu = 0.0
    errors: list[str] = []
    full: list[OSError] = []

    def handle(event: Event) -> None:
        nonlocal cpu
        match event:
            case ("stopped", stopped, spent):
                outcomes.append(stopped)
                cpu += spent
            case ("error", reason):
                errors.append(reason)
            case ("full", error):
                full.append(error)
            case ("started", match_id):
                events.started(match_id)
            case ("finished", match_id, failure):
                events.finished(match_id, failure)
            case ("dropped", match_id):
                events.dropped(match_id)
            case ("told", told):
                events.told(told)

    def drain(until_exit: bool) -> None:
        while True:
            try:
                handle(channel.get(timeout=POLL_S))
            except queue.Empty:
                events.tick()
                if not until_exit or not any(p.is_alive() for p in procs):
                    break

    interrupted = False
    try:
        drain(until_exit=True)
    except KeyboardInterrupt:
        interrupted = True
        for proc in procs:
            if proc.is_alive() and proc.pid is not None:  # alive, so started: it has a pid
                os.kill(proc.pid, signal.SIGINT)  # the worker reschedules its matches in flight and exits
        try:
            drain(until_exit=True)
        except KeyboardInterrupt:  # a second Ctrl-C: stop waiting; unfinished claims lapse with their holders
            for proc in procs:
                proc.kill()
    for proc in procs:
        proc.join()
    drain(until_exit=False)
    if full:
        raise full[0]
    for error in errors:
        events.say(f"a worker stopped: {error}")
    for proc in procs:
        if proc.exitcode and not interrupted:  # killed from outside: its matches in flight lapse with it
            events.say(f"{proc.name} exited with code {proc.exitcode}; its unfinished matches are played "
                       f"by the next run")
    if interrupted or "interrupted" in outcomes or errors or len(outcomes) < workers:
        return "interrupted", cpu
    return ("budget" if "budget" in outcomes else None), cpu
