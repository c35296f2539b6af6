"""Wiring: open a workspace with its kinds checked, play matches, judge them, commit them."""
from __future__ import annotations

import asyncio
import sys
import warnings
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

from arena.config import Config, load_config
from arena.errors import ArenaError, UserError
from arena.llm import LLMGateway, ModelRef
from arena.protocol import AgentLog, DebateContext, LLMHandle, SearchHandle, play
from arena.progress import Progress
from arena.records import Entry, JudgeSpec, Speech, Verdict
from arena.search import SearchGateway
from arena.store import DB_NAME, Store
from arena.workspace import Workspace
from debaters.registry import DEBATERS
from judges.base import JudgeView, run_judge
from judges.registry import JUDGES
from motions.library import load_sets


def open_workspace(path: Path) -> Workspace:
    """Load and check everything in arena.toml before touching the database."""
    path = Path(path)
    config = load_config(path)
    for i, entry in enumerate(config.entries):
        _construct(DEBATERS, entry, config, f"entries[{i}]", "debater", "params")
    for i, spec in enumerate(config.judges):
        _construct(JUDGES, spec, config, f"judges[{i}]", "kind", "options")
    try:
        motions = load_sets(list(config.motions.sets), path)
    except UserError as exc:
        raise UserError(f"{config.where('motions.sets')}: {exc}") from None
    store = Store(path / DB_NAME)
    try:
        _check_played_unchanged(config, store)
        store.sync_entries(config.entries)
        store.add_motions(motions)
    except BaseException:
        store.close()  # checkpoints and removes the WAL, so a refused open leaves no trace
        raise
    return Workspace(path, config, store)


_FIXED = ("debater", "model", "api_base", "strength", "params")  # not `retired`: retiring is always allowed


def _check_played_unchanged(config: Config, store: Store) -> None:
    """An entry that has played is what it played as: its ratings would otherwise mix two configurations."""
    played = store.played_entries()
    for i, entry in enumerate(config.entries):
        recorded = played.get(entry.name)
        if recorded is None:
            continue
        changes = [f"{key} {getattr(recorded, key)!r} → {getattr(entry, key)!r}" for key in _FIXED
                   if getattr(recorded, key) != getattr(entry, key)]
        if changes:
            matches = store.match_counts().get(entry.name, 0)
            raise UserError(f"{config.where(f'entries[{i}]')}: entry {entry.name!r} has played {matches} "
                            f"match{'es' if matches != 1 else ''}, so its configuration is fixed, but it changed: "
                            f"{'; '.join(changes)}. Put the old configuration back and register the new one under "
                            f"a new name instead (arena entry add NEW-NAME ...).")


def _construct(registry, spec, config, prefix: str, kind_key: str, options_key: str):
    """Build a kind once, so unknown kinds and bad params are reported before anything runs."""
    kind = getattr(spec, kind_key)
    if not registry.has(kind):
        raise UserError(f"{config.where(f'{prefix}.{kind_key}')}: unknown {registry.family} kind {kind!r} "
                        f"(known: {', '.join(registry.names())})")
    try:
        return registry.get(kind)(spec)
    except UserError as exc:
        raise UserError(f"{config.where(f'{prefix}.{options_key}')}: {exc}") from None


def load_motions(ws: Workspace):
    """The motions of the sets arena.toml names, in order."""
    return load_sets(list(ws.config.motions.sets), ws.path)


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
                   SearchGateway(cfg.search, ws.store, cache=cfg.llm.cache))

    async def play_match(self, match_id: str, judges: list[JudgeSpec], listener=None) -> None:
        """Play one match and judge it; commit speeches and verdicts in one transaction.

        listener(tag, completion), when given, hears of every LLM call as it completes.
        """
        log = AgentLog(listener)
        speeches = await self.play(match_id, log)
        await self.judge_and_commit(match_id, speeches, judges, log)

    async def play(self, match_id: str, log: AgentLog) -> list[Speech]:
        """Mark the match running and play its six speeches (nothing of them is stored yet)."""
        store, config = self.ws.store, self.ws.config
        match = store.match(match_id)
        if match is None:
            raise UserError(f"no match {match_id!r}")
        store.mark_running(match_id)
        with self._settled(match_id):
            pro, con = config.entry(match.pro), config.entry(match.con)
            debaters = {"pro": DEBATERS.get(pro.debater)(pro), "con": DEBATERS.get(con.debater)(con)}
            sides = {"pro": pro, "con": con}

            def context(side, stage, visible, memory) -> DebateContext:
                entry: Entry = sides[side]
                return DebateContext(
                    motion=match.motion, side=side, stage=stage, visible=visible, memory=memory,
                    llm=LLMHandle(self.llm, ModelRef(entry.model, entry.api_base, entry.strength), log,
                                  match_id=match_id, stage=stage, side=side),
                    search=SearchHandle(self.search, match_id=match_id, stage=stage, side=side,
                                        offline=entry.simulated),
                    language=match.motion.language or config.arena.language,
                )

            return await play(match.motion, debaters, context)

    async def judge_and_commit(self, match_id: str, speeches: list[Speech], judges: list[JudgeSpec],
                               log: AgentLog, slot: asyncio.Semaphore | None = None) -> None:
        """Judge a played match and write it — speeches, messages, verdicts, status — in one transaction.

        slot, when given, is held while judging (the runner's judging slots); waiting for it is part
        of the match, so an interruption while waiting also puts the match back in the plan.
        """
        store, config = self.ws.store, self.ws.config
        match = store.match(match_id)
        with self._settled(match_id):
            view = JudgeView(match.motion, tuple(speeches))
            async with slot or nullcontext():
                verdicts = [v for spec in judges for v in await self.judge(match_id, view, spec, log)]
            simulated = (config.entry(match.pro).simulated or config.entry(match.con).simulated
                         or any(j.simulated for j in judges))
            store.commit_match(match_id, speeches, verdicts, log.messages, simulated)

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
        judge = JUDGES.get(spec.kind)(spec)
        log = log or AgentLog()
        ref = ModelRef(spec.model, spec.api_base)
        return list(await asyncio.gather(*(
            run_judge(judge, view, LLMHandle(self.llm, ref, log, match_id=match_id, sample=run, judge=spec.name),
                      run)
            for run in range(spec.runs))))

    async def judge_stored(self, match_id: str, spec: JudgeSpec) -> list[Verdict]:
        """Judge a completed match from its stored transcript, replacing this judge's verdicts of it at once."""
        match = self.ws.store.match(match_id)
        verdicts = await self.judge(match_id, JudgeView(match.motion, match.speeches), spec)
        self.ws.store.replace_verdicts(match_id, spec.name, verdicts, match.simulated or spec.simulated)
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
                speeches = await arena.play(match_id, log)
            await arena.judge_and_commit(match_id, speeches, judges, log, slot=judging)
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
