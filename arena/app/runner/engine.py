"""The match engine: a match from the plan through its speeches and its judges to one commit, claimed first so
that it is played once however many processes share the workspace; and, in one process, claiming and playing
until no match is left (play_claimed). Runs and workers (arena.app.runner.runs, arena.app.runner.workers) build on it."""
from __future__ import annotations

import asyncio
import signal
import threading
import warnings
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field, replace
from types import FrameType
from typing import Any, Awaitable, Callable, Iterator, Mapping, Protocol, Sequence, TypeVar

from arena.match.claims import LEASE_S, ClaimLost, Holder
from arena.base.errors import ArenaError, UserError
from arena.base.files import no_space
from arena.domain.formats import Format, get_format
from arena.domain.transcript import marker_key, match_keys
from arena.match.judging import UNSEATED, JudgeView, Sitting, Unseated, replaces, run_judge, unseated
from arena.gateway.llm import CallEvent, CallTag, Completion, LLMGateway
from arena.gateway.catalog import ModelRef
from arena.match.protocol import AgentLog, DebateContext, Forfeited, LLMHandle, SearchHandle, play
from arena.domain.records import Entry, JudgeSpec, Match, Side, Speech, Stage, Verdict, simulated
from arena.gateway.search import SearchGateway
from arena.match.turns import AwaitingPerson, Desk
from arena.store import Store
from arena.workspace.folder import Workspace, check_format

T = TypeVar("T")
R = TypeVar("R")


def run_bounded(items: Sequence[T], work: Callable[[T], Awaitable[R]], *, concurrency: int,
                done: Callable[[int, T, R], None] | None = None) -> list[R]:
    """work(item) for every item in one event loop, at most `concurrency` at once; the results in item order.

    done(finished, item, result) hears of each item as it finishes; finished counts them so far.
    """
    finished = 0

    async def one(item: T, gate: asyncio.Semaphore) -> R:
        nonlocal finished
        async with gate:
            result = await work(item)
        finished += 1
        if done is not None:
            done(finished, item, result)
        return result

    async def main() -> list[R]:
        gate = asyncio.Semaphore(concurrency)
        return list(await asyncio.gather(*(one(item, gate) for item in items)))

    return asyncio.run(main())


@dataclass
class MatchRunner:
    """Plays and judges the matches of one open workspace: its gateways, and the holder in whose name it claims
    matches to play and judge."""

    ws: Workspace
    llm: LLMGateway
    search: SearchGateway
    holder: Holder = field(default_factory=Holder.here)
    lease_s: float = LEASE_S
    skipping: frozenset[str] = frozenset()  # entries whose matches it does not claim (their keys are missing)
    _beat: asyncio.Task[None] | None = field(default=None, repr=False)

    @classmethod
    def of(cls, ws: Workspace, *, lease_s: float = LEASE_S, follow_slots: bool = True,
           skipping: frozenset[str] = frozenset()) -> "MatchRunner":
        """A runner of ws; follow_slots: send each model at most its measured slots at once (arena.gateway.llm);
        skipping: entries none of whose matches it claims."""
        cfg = ws.config
        return cls(ws, LLMGateway(cfg.llm, ws.store, seed=cfg.arena.seed, follow_slots=follow_slots),
                   SearchGateway(cfg.search, ws.store, cache=cfg.llm.cache, retries=cfg.llm.retries,
                                 backoff_s=cfg.llm.backoff_s, timeout_s=cfg.llm.timeout_s), lease_s=lease_s,
                   skipping=skipping)

    # --- claims --------------------------------------------------------------------------
    def claim(self, *, failed_before: str | None = None, only: str | None = None) -> str | None:
        """Claim the next match to play (or only that one) for this runner's holder: its id, or None."""
        match_id = self.ws.store.claim_match(self.holder, failed_before=failed_before, only=only,
                                             lease_s=self.lease_s, skipping=self.skipping)
        if match_id is not None:
            self._keep_alive()
        return match_id

    def _keep_alive(self) -> None:
        """Renew the holder's claims every lease_s / 4 while the event loop runs (one heartbeat per loop)."""
        loop = asyncio.get_running_loop()
        if self._beat is not None and self._beat.get_loop() is loop and not self._beat.done():
            return

        async def beat() -> None:
            while True:
                await asyncio.sleep(self.lease_s / 4)
                self.ws.store.heartbeat(self.holder)

        self._beat = loop.create_task(beat())  # asyncio.run cancels it when the loop ends

    # --- playing and judging ---------------------------------------------------------------
    async def play_match(self, match: Match, judges: list[JudgeSpec],
                         listener: Callable[[CallTag, Completion], None] | None = None) -> Match:
        """Claim one match, play it and judge it; commit speeches and verdicts in one transaction; return it
        as stored. listener(tag, completion), when given, hears of every LLM call as it completes."""
        if self.claim(only=match.id) is None:
            raise ArenaError(f"match {match.id} is not there to play: it is done, or another process holds it")
        log = AgentLog(listener)
        return await self.judge_and_commit(await self.play(match, log), judges, log)

    async def play(self, match: Match, log: AgentLog) -> Match:
        """Play a claimed match's speeches in its format: the match with them (nothing of them is stored yet). A
        side that cannot debate forfeits (the match with the speeches made before, and its forfeit) when the
        workspace allows forfeits; otherwise the match fails, as it does in a format unknown or one of its
        debaters cannot play."""
        with self._settled(match.id):
            fmt = get_format(match.format, self.ws.config.formats)
            sides: dict[Side, Entry] = {"pro": self.ws.config.entry(match.pro), "con": self.ws.config.entry(match.con)}
            debaters = {side: self.ws.debaters[entry.name] for side, entry in sides.items()}
            for side, entry in sides.items():
                check_format(entry, debaters[side], fmt)
            settings = self.ws.config.arena
            secret = self.ws.store.ballot_secret()  # the transcripts' keys are made under it

            def context(side: Side, stage: Stage, visible: tuple[Speech, ...],
                        memory: dict[str, Any]) -> DebateContext:
                entry = sides[side]
                return DebateContext(
                    motion=match.motion, side=side, stage=stage, visible=visible, memory=memory,
                    llm=LLMHandle(self.llm, ModelRef.of(entry), log,
                                  match_id=match.id, stage=stage, side=side),
                    search=SearchHandle(self.search, match_id=match.id, stage=stage, side=side,
                                        offline=entry.simulated),
                    language=match.motion.language or self.ws.config.arena.language, format=fmt,
                    min_share=settings.min_speech_share if settings.speech_checks else None,
                    desk=desk, key=marker_key(secret, match.id, side), keys=match_keys(secret, match.id),
                )

            desk = Desk(self.ws.store, match.id, self.ws.config.people.turn_deadline_h)

            try:
                speeches = await play(match.motion, debaters, context, fmt)
            except Forfeited as forfeited:
                if not self.ws.config.arena.forfeits:
                    raise
                return replace(match, status="running", error=None, speeches=tuple(forfeited.speeches),
                               forfeit=forfeited.forfeit)
        return replace(match, status="running", error=None, speeches=tuple(speeches))

    async def judge_and_commit(self, match: Match, judges: list[JudgeSpec], log: AgentLog,
                               slot: asyncio.Semaphore | None = None) -> Match:
        """Judge a played match and write it — speeches, messages, verdicts, status — in one transaction.

        slot, when given, is held while judging (the runner's judging slots); waiting for it is part
        of the match, so an interruption while waiting also puts the match back in the plan.
        Returns the match as committed.
        """
        config = self.ws.config
        with self._settled(match.id):
            view = judge_view(match, self.ws.config.formats, self.ws.store.ballot_secret())
            verdicts: list[Verdict] = []
            if match.forfeit is None:  # a forfeit is not judged: the other side takes every run (arena.analysis.tally)
                async with slot or nullcontext():
                    verdicts = [v for spec in judges
                                for v in await self.judge(match.id, view, spec, log, sitting=self.sitting(match))]
            done = replace(match, status="done", error=None,
                           simulated=simulated(config.entry(match.pro), config.entry(match.con), *judges,
                                               simulated_calls=bool(self.ws.store.simulated_sides(match.id))),
                           verdicts=tuple(sorted(verdicts, key=lambda v: (v.judge, v.run))))  # as the store orders them
            self.ws.store.commit_match(done.id, list(done.speeches), list(done.verdicts), log.messages,
                                       done.simulated, holder=self.holder, forfeit=done.forfeit)
        return done

    @contextmanager
    def _settled(self, match_id: str) -> Iterator[None]:
        """Leave no match 'running' behind: a failure is stored with its reason, an interruption is rescheduled."""
        try:
            yield
        except asyncio.CancelledError:
            self.ws.store.mark_scheduled(match_id, self.holder)  # stopped, not failed: the next run plays it again
            raise
        except ClaimLost:  # another process plays it now: leave it be
            raise
        except AwaitingPerson:  # a person's turn: parked, the run goes on, a later run continues it
            self.ws.store.park_match(match_id, self.holder)
            raise
        except Exception as exc:  # a plug-in's bug fails its match with the reason, not the whole run
            if not no_space(exc):  # a full disk is no fault of the match: its claim lapses and a resumed run plays it
                self.ws.store.mark_failed(match_id, failure_reason(exc), self.holder)
            raise

    def sitting(self, match: Match) -> Sitting:
        """What a judge is told of a match before judging it (arena.match.judging.Sitting): the debaters' families."""
        config = self.ws.config
        return Sitting(match.id, config.entry(match.pro).family, config.entry(match.con).family, config.arena.seed)

    async def judge(self, match_id: str | None, view: JudgeView, spec: JudgeSpec, log: AgentLog | None = None, *,
                    sitting: Sitting | None = None) -> list[Verdict]:
        """R runs of one judge, in parallel, each where the judge seats it (arena.match.judging.Seat); each run is its own
        sample. match_id tags the ledger's calls; sitting tells the judge of the match (default: no debaters, as
        in judge-bench). A judge that cannot sit on the match fails each run with the reason (Unseated)."""
        judge = self.ws.judges[spec.name]
        log = log or AgentLog()
        try:
            seats = judge.seats(sitting or Sitting(match_id, seed=self.ws.config.arena.seed))
        except Unseated as exc:
            return [Verdict(spec.name, run, None, error=str(exc), extra={UNSEATED: True}) for run in range(spec.runs)]
        return list(await asyncio.gather(*(
            run_judge(seat.judge, view, LLMHandle(self.llm, seat.ref, log, match_id=match_id, sample=run,
                                                  judge=spec.name), run, seat.extra)
            for run, seat in enumerate(seats))))

    async def judge_stored(self, match_id: str, spec: JudgeSpec, *,
                           rejudged_before: str | None = None) -> Judging | None:
        """Claim judging a completed match and judge it from its stored transcript, replacing this judge's
        verdicts of it at once, unless a run failed where a stored run of it is valid (arena.match.judging.replaces):
        then the stored verdicts stay, and the judging says so (kept). None when there is nothing to do (judged
        meanwhile, or another process is on it)."""
        store = self.ws.store
        if not store.claim_judging(self.holder, match_id, spec.name, rejudged_before=rejudged_before,
                                   lease_s=self.lease_s):
            return None
        self._keep_alive()
        try:
            match = stored_match(store, match_id)
            view = judge_view(match, self.ws.config.formats, self.ws.store.ballot_secret())
            verdicts = await self.judge(match.id, view, spec, sitting=self.sitting(match))
        except BaseException:
            store.release(self.holder, match_id, spec.name)
            raise
        stored = [v for v in match.verdicts if v.judge == spec.name]
        if not replaces(stored, verdicts):
            store.release(self.holder, match_id, spec.name)
            return Judging(verdicts, kept=len(stored))
        store.replace_verdicts(match.id, spec.name, verdicts, match.simulated or simulated(spec), holder=self.holder)
        return Judging(verdicts)


@dataclass(frozen=True)
class Judging:
    """What judging a stored match came to: the runs given, and how many stored verdicts were kept in their place
    (0: the runs were stored), because a run failed where a stored run was valid."""

    verdicts: list[Verdict]
    kept: int = 0


def judging_failure(match: Match) -> str | None:
    """Why a committed match counts as failed in judging, None if it does not: a judge that could not sit on it
    (arena.match.judging.unseated). The match is stored, speeches and failed runs, and `arena judge` judges it
    again."""
    reason = unseated(match.verdicts)
    return None if reason is None else (f"judging failed (the match is stored; 'arena judge' judges it again): "
                                        f"{reason}")


TICK_S = 1.0  # how often a run lets its display move its elapsed times on when nothing else happens


class Events(Protocol):
    """What a run reports as it goes: arena.app.runner.progress.Progress, or a worker's relay to its parent. told hears
    the gateway's events of the run's calls (sent, answered, retried, re-asked, cached), which count them; tick,
    that time passed."""

    def started(self, match_id: str) -> None: ...

    def finished(self, match_id: str, error: str | None = None) -> None: ...

    def dropped(self, match_id: str) -> None: ...

    def told(self, event: CallEvent) -> None: ...

    def tick(self) -> None: ...


def play_claimed(runner: MatchRunner, events: Events, *, concurrency: int, failed_before: str | None = None,
                 budget: float | None = None) -> str | None:
    """Claim and play matches until none is left to claim, `concurrency` playing at once. Returns how it
    stopped: None (none left), "budget", or "interrupted" (Ctrl-C or cancelled; the matches in flight are
    put back to 'scheduled').

    A match's judging overlaps the next matches' play: once its six speeches are in, it frees its play
    slot and waits for one of `concurrency` judging slots. At most 2 × concurrency matches are under way
    (claimed and not yet committed), whatever the judges' pace: what a kill can throw away, and what the
    run holds in memory, stays bounded. budget (USD): no match is claimed once the ledger's cost, every
    process's calls included, reaches it.
    """
    store, judges = runner.ws.store, list(runner.ws.config.automatic_judges)
    stopped: str | None = None
    full: list[Exception] = []  # a full disk a match met: the run stops and raises it (the match's claim lapses)

    async def one(match_id: str, playing: asyncio.Semaphore, judging: asyncio.Semaphore,
                  under_way: asyncio.Semaphore) -> None:
        log = AgentLog()
        events.started(match_id)
        try:
            try:
                played = await runner.play(stored_match(store, match_id), log)
            finally:
                playing.release()
            done = await runner.judge_and_commit(played, judges, log, slot=judging)
        except asyncio.CancelledError:  # rescheduled, neither done nor failed
            events.dropped(match_id)
            raise
        except (ClaimLost, AwaitingPerson):  # another process commits it; or parked for a person, for a later run
            events.dropped(match_id)
        except Exception as exc:  # already stored as failed with this reason, or lost to another process
            if no_space(exc):  # every match after it would fail too: the run stops, and says why
                full.append(exc)
            else:
                events.finished(match_id, failure_reason(exc))
        else:
            events.finished(match_id, judging_failure(done))  # a judge that could not sit fails it, as it says
        finally:
            under_way.release()

    async def main() -> None:
        nonlocal stopped
        playing, judging = asyncio.Semaphore(max(1, concurrency)), asyncio.Semaphore(max(1, concurrency))
        under_way = asyncio.Semaphore(2 * max(1, concurrency))  # a match frees it once committed (or dropped)
        tasks: set[asyncio.Task[None]] = set()
        ticker = asyncio.create_task(tick())
        try:
            while True:
                await under_way.acquire()
                await playing.acquire()  # each match releases its slot once its speeches are in
                if full:
                    raise full[0]
                if budget is not None and store.spent() >= budget:
                    stopped = "budget"
                    break
                match_id = runner.claim(failed_before=failed_before)
                if match_id is None:
                    break
                task = asyncio.create_task(one(match_id, playing, judging, under_way))
                tasks.add(task)
                task.add_done_callback(tasks.discard)  # a long plan keeps no trail of finished tasks
            await asyncio.gather(*tasks)
            if full:
                raise full[0]
        finally:  # cancelled: so is every match in flight, each waited for while it reschedules itself
            ticker.cancel()
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    async def tick() -> None:
        while True:
            await asyncio.sleep(TICK_S)
            events.tick()

    def told(event: CallEvent) -> None:
        if event.tag.match_id is not None:
            events.told(event)

    runner.llm.listeners.append(told)
    try:
        with warnings.catch_warnings():
            # Cancelling litellm mid-call drops coroutines it had created but not yet awaited; that is expected.
            warnings.filterwarnings("ignore", "coroutine .* was never awaited", RuntimeWarning)
            asyncio.run(main())
    except KeyboardInterrupt:  # asyncio.run has cancelled main, and with it every match in flight
        stopped = "interrupted"
    finally:
        runner.llm.listeners.remove(told)
    return stopped


@contextmanager
def stop_on_sigterm() -> Iterator[None]:
    """Within: a SIGTERM (kill's default signal, a supervisor's stop) stops the process as Ctrl-C does, through
    whatever handles SIGINT then (asyncio.run's: the work in flight is cancelled, its connections closed, its
    matches put back), rather than ending it with matches left running until their claims lapse. Only in the main
    thread, where signals are handled; elsewhere nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def as_interrupt(signum: int, frame: FrameType | None) -> None:
        handler = signal.getsignal(signal.SIGINT)
        if callable(handler):
            handler(signal.SIGINT, frame)
        else:  # SIGINT ignored or left to the system: stop as its default would
            raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, as_interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def judge_view(match: Match, declared: Mapping[str, Format] | None = None, secret: bytes = b"") -> JudgeView:
    """What a judge reads of a played match: its speeches in its format's order, under its format's titles
    (declared: the workspace's own formats, by name), marked with the judges' key of the match under the workspace's
    secret (arena.domain.transcript.marker_key)."""
    fmt = get_format(match.format, declared)
    key = marker_key(secret, match.id, "judges") if secret else ""
    return JudgeView(match.motion, tuple(fmt.ordered(match.speeches)), format=fmt, key=key)


def stored_match(store: Store, match_id: str) -> Match:
    """A match claimed or listed by the store, as stored; ArenaError if it is not there (no match is ever deleted)."""
    match = store.match(match_id)
    if match is None:
        raise ArenaError(f"match {match_id} is not in the workspace database")
    return match


def failure_reason(exc: BaseException) -> str:
    """Why a match failed: our errors say it in words; anything else also names its type."""
    return str(exc) if isinstance(exc, (ArenaError, UserError)) else f"{type(exc).__name__}: {exc}"
