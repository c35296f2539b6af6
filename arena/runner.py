"""Wiring: open a workspace with its kinds checked, play matches, judge them, commit them."""
from __future__ import annotations

import asyncio
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from arena.config import Config, load_config
from arena.errors import ArenaError, UserError
from arena.llm import LLMGateway, ModelRef
from arena.protocol import AgentLog, DebateContext, LLMHandle, SearchHandle, play
from arena.records import Entry, JudgeSpec, Verdict
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
        store, config = self.ws.store, self.ws.config
        match = store.match(match_id)
        if match is None:
            raise UserError(f"no match {match_id!r}")
        store.mark_running(match_id)
        try:
            pro, con = config.entry(match.pro), config.entry(match.con)
            log = AgentLog(listener)
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

            speeches = await play(match.motion, debaters, context)
            view = JudgeView(match.motion, tuple(speeches))
            verdicts = [v for spec in judges for v in await self.judge(match_id, view, spec, log)]
        except (ArenaError, UserError) as exc:
            store.mark_failed(match_id, str(exc))
            raise
        simulated = pro.simulated or con.simulated or any(j.simulated for j in judges)
        store.commit_match(match_id, speeches, verdicts, log.messages, simulated)

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


def run(ws: Workspace, *, concurrency: int = 4, retry_failed: bool = False,
        progress: Callable[[str], None] | None = None) -> dict:
    """Play and judge every pending match, `concurrency` at a time. Returns counts."""
    pending = ws.store.pending_matches(retry_failed=retry_failed)
    arena = Arena.of(ws)
    judges = list(ws.config.judges)
    say = progress or (lambda line: print(line, file=sys.stderr))
    counts = {"done": 0, "failed": 0, "total": len(pending)}
    started = time.perf_counter()

    async def one(match_id: str, gate: asyncio.Semaphore) -> None:
        async with gate:
            try:
                await arena.play_match(match_id, judges)
                counts["done"] += 1
                state = "done"
            except (ArenaError, UserError) as exc:
                counts["failed"] += 1
                state = f"failed: {exc}"
            say(f"[{counts['done'] + counts['failed']}/{counts['total']}] {match_id} {state}"
                f" ({time.perf_counter() - started:.1f}s)")

    async def main() -> None:
        gate = asyncio.Semaphore(max(1, concurrency))
        await asyncio.gather(*(one(m, gate) for m in pending))

    asyncio.run(main())
    return counts
