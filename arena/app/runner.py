"""Playing and judging: a match from the plan through its six speeches and its judges to one commit."""
from __future__ import annotations

import asyncio
import sys
import warnings
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, replace
from typing import Awaitable, Callable, Iterator, Sequence, TypeVar

from arena.app.check import preflight
from arena.app.progress import Progress
from arena.errors import ArenaError, UserError
from arena.judging import JudgeView, run_judge
from arena.llm import LLMGateway, ModelRef
from arena.protocol import AgentLog, DebateContext, LLMHandle, SearchHandle, play
from arena.records import JudgeSpec, Match, Verdict, simulated
from arena.search import SearchGateway
from arena.workspace import Workspace

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
class Arena:
    """The gateways of one open workspace."""

    ws: Workspace
    llm: LLMGateway
    search: SearchGateway

    @classmethod
    def of(cls, ws: Workspace) -> "Arena":
        cfg = ws.config
        return cls(ws, LLMGateway(cfg.llm, ws.store, seed=cfg.arena.seed),
                   SearchGateway(cfg.search, ws.store, cache=cfg.llm.cache, retries=cfg.llm.retries,
                                 backoff_s=cfg.llm.backoff_s))

    async def play_match(self, match: Match, judges: list[JudgeSpec], listener=None) -> Match:
        """Play one match and judge it; commit speeches and verdicts in one transaction; return it as stored.

        listener(tag, completion), when given, hears of every LLM call as it completes.
        """
        log = AgentLog(listener)
        return await self.judge_and_commit(await self.play(match, log), judges, log)

    async def play(self, match: Match, log: AgentLog) -> Match:
        """Mark the match running and play its six speeches: the match with them (nothing of them is stored yet)."""
        self.ws.store.mark_running(match.id)
        with self._settled(match.id):
            sides = {"pro": self.ws.config.entry(match.pro), "con": self.ws.config.entry(match.con)}
            debaters = {side: self.ws.debaters[entry.name] for side, entry in sides.items()}

            def context(side, stage, visible, memory) -> DebateContext:
                entry = sides[side]
                return DebateContext(
                    motion=match.motion, side=side, stage=stage, visible=visible, memory=memory,
                    llm=LLMHandle(self.llm, ModelRef.of(entry), log,
                                  match_id=match.id, stage=stage, side=side),
                    search=SearchHandle(self.search, match_id=match.id, stage=stage, side=side,
                                        offline=entry.simulated),
                    language=match.motion.language or self.ws.config.arena.language,
                )

            speeches = await play(match.motion, debaters, context)
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
            view = JudgeView(match.motion, match.speeches)
            async with slot or nullcontext():
                verdicts = [v for spec in judges for v in await self.judge(match.id, view, spec, log)]
            done = replace(match, status="done", error=None,
                           simulated=simulated(config.entry(match.pro), config.entry(match.con), *judges),
                           verdicts=tuple(sorted(verdicts, key=lambda v: (v.judge, v.run))))  # as the store orders them
            self.ws.store.commit_match(done.id, list(done.speeches), list(done.verdicts), log.messages,
                                       done.simulated)
        return done

    @contextmanager
    def _settled(self, match_id: str) -> Iterator[None]:
        """Leave no match 'running' behind: a failure is stored with its reason, an interruption is rescheduled."""
        try:
            yield
        except asyncio.CancelledError:
            self.ws.store.mark_scheduled(match_id)  # stopped, not failed: the next run plays it again
            raise
        except Exception as exc:  # a plug-in's bug fails its match with the reason, not the whole run
            self.ws.store.mark_failed(match_id, describe(exc))
            raise

    async def judge(self, match_id: str | None, view: JudgeView, spec: JudgeSpec,
                    log: AgentLog | None = None) -> list[Verdict]:
        """R runs of one judge, in parallel; each run is its own sample. match_id tags the ledger's calls."""
        judge = self.ws.judges[spec.name]
        log = log or AgentLog()
        ref = ModelRef.of(spec)
        return list(await asyncio.gather(*(
            run_judge(judge, view, LLMHandle(self.llm, ref, log, match_id=match_id, sample=run, judge=spec.name),
                      run)
            for run in range(spec.runs))))

    async def judge_stored(self, match: Match, spec: JudgeSpec) -> list[Verdict]:
        """Judge a completed match from its stored transcript, replacing this judge's verdicts of it at once."""
        verdicts = await self.judge(match.id, JudgeView(match.motion, match.speeches), spec)
        self.ws.store.replace_verdicts(match.id, spec.name, verdicts, match.simulated or simulated(spec))
        return verdicts


def run(ws: Workspace, *, concurrency: int = 4, retry_failed: bool = False, budget: float | None = None,
        progress: Callable[[str], None] | None = None) -> dict:
    """Play and judge every pending match, `concurrency` playing at once; resumable after any interruption.

    A match's judging overlaps the next matches' play: once its six speeches are in, it frees its
    play slot and waits for one of `concurrency` judging slots. Each match is committed, speeches
    and verdicts together, when its judging ends; a failed match is stored with its reason.
    budget (USD): no match starts once the ledger's cost (paid calls; unknown prices count 0)
    reaches it; matches already started finish. Ctrl-C cancels the matches in flight and puts them
    back to 'scheduled'; their completed LLM calls are cached, so the next run does not pay twice.

    progress(line) hears a line per finished match and a summary; without it a live status line is
    drawn on stderr when that is a terminal (plain lines otherwise). Returns {done, failed, total,
    not_started, stopped: None | "budget" | "interrupted", cost (this run's), ledger_cost, unpriced}.
    """
    pending = ws.store.pending_matches(retry_failed=retry_failed)
    arena = Arena.of(ws)
    if pending:  # a model that cannot answer would fail every match it is in: find out first, once
        waiting = set(pending)
        entries = {r[side] for r in ws.store.match_rows() if r["id"] in waiting for side in ("pro", "con")}
        preflight(ws, arena.llm, [e for e in entries if e in ws.debaters] + [j.name for j in ws.config.judges])
    judges = list(ws.config.judges)
    display = Progress(len(pending), concurrency, say=progress, live=progress is None and sys.stderr.isatty())
    stopped: str | None = None

    async def one(match_id: str, playing: asyncio.Semaphore, judging: asyncio.Semaphore) -> None:
        nonlocal stopped
        log = AgentLog(display.call)
        try:
            async with playing:
                if budget is not None and ws.store.total_cost() >= budget:
                    stopped = "budget"
                    return
                display.started(match_id)
                played = await arena.play(ws.store.match(match_id), log)
            await arena.judge_and_commit(played, judges, log, slot=judging)
        except asyncio.CancelledError:  # Ctrl-C: rescheduled, neither done nor failed
            display.dropped(match_id)
            raise
        except Exception as exc:  # already stored as failed, with this reason
            display.finished(match_id, describe(exc))
        else:
            display.finished(match_id)

    async def main() -> None:
        playing, judging = asyncio.Semaphore(max(1, concurrency)), asyncio.Semaphore(max(1, concurrency))
        await asyncio.gather(*(one(m, playing, judging) for m in pending))

    try:
        with warnings.catch_warnings():
            # Cancelling litellm mid-call drops coroutines it had created but not yet awaited; that is expected.
            warnings.filterwarnings("ignore", "coroutine .* was never awaited", RuntimeWarning)
            asyncio.run(main())
    except KeyboardInterrupt:  # asyncio.run has cancelled every match in flight, and they are rescheduled
        stopped = "interrupted"
    result = {"done": display.done, "failed": display.failed, "total": len(pending),
              "not_started": len(pending) - display.done - display.failed, "stopped": stopped,
              "cost": display.cost, "ledger_cost": ws.store.total_cost(), "unpriced": display.unpriced}
    display.close()
    return result


def summary(result: dict, budget: float | None = None) -> str:
    """How a run ended, in one line for people."""
    line = f"{result['done']} done, {result['failed']} failed, of {result['total']}"
    left = result["not_started"]
    matches = f"{left} match{'es' if left != 1 else ''}"
    if result["stopped"] == "interrupted":
        line += f"; interrupted: {matches} not done are scheduled again, and 'arena run' resumes them"
    elif result["stopped"] == "budget":
        line += (f"; budget reached: the ledger's cost ${result['ledger_cost']:.4f} is at or over the budget "
                 f"${budget:.4f}, so {matches} stay scheduled")
    if budget is not None and result["unpriced"]:
        line += (f" (note: {result['unpriced']} calls had no known price and counted as $0 against the budget)")
    return line


def describe(exc: BaseException) -> str:
    """Why a match failed: our errors say it in words; anything else also names its type."""
    return str(exc) if isinstance(exc, (ArenaError, UserError)) else f"{type(exc).__name__}: {exc}"
