"""`arena check`: probe the models of entries and judges before a tournament spends money on them.

Each distinct model (name and endpoint) is probed once: a one-line chat, the structured-output
mode that works (only if some entry or judge on it asks for JSON: a kind that never does says so
with uses_json = False), its context window, latency, and whether litellm knows its price. What a probe
finds is remembered in the workspace, so calls go straight to the mode that works, and
`arena run` probes only models it has not seen work.
"""
from __future__ import annotations

import asyncio
from typing import Iterable

from arena.errors import ArenaError, UserError
from arena.llm import LLMGateway
from arena.models import ModelRef
from arena.probe import Probe, probe
from arena.workspace import Workspace


def targets(ws: Workspace, names: Iterable[str] = ()) -> list[tuple[str, ModelRef, bool]]:
    """(name, model, whether it asks for JSON) of the named entries and judges (default: all that call a model),
    in arena.toml's order."""
    cfg = ws.config
    specs = {e.name: e for e in cfg.entries if _calls_model(ws.debaters.get(e.name))}
    specs |= {j.name: j for j in cfg.judges if _calls_model(ws.judges.get(j.name))}
    names = list(dict.fromkeys(names))
    known = {e.name for e in cfg.entries} | {j.name for j in cfg.judges}
    for name in names:
        if name not in known:
            raise UserError(f"unknown entry or judge {name!r}; known: {', '.join(sorted(known)) or 'none'}")
    chosen = names or list(specs)
    kinds = {e.name: ws.debaters.get(e.name) for e in cfg.entries} | {j.name: ws.judges.get(j.name) for j in cfg.judges}
    return [(name, ModelRef.of(specs[name]), _uses_json(kinds[name])) for name in chosen if name in specs]


def check(ws: Workspace, names: Iterable[str] = ()) -> list[dict]:
    """One row per named entry or judge: {name, model, ok, structured, context_window, latency_s, error}."""
    chosen = targets(ws, names)
    found = asyncio.run(probe_all(LLMGateway(ws.config.llm, ws.store, ws.config.arena.seed),
                                  [(ref, asks_json) for _, ref, asks_json in chosen]))
    return [{"name": name, "model": ref.model, "ok": p.ok, "structured": p.structured,
             "context_window": p.context_window, "latency_s": p.latency_s, "error": p.error, "priced": p.priced}
            for name, ref, _ in chosen for p in [found[ref.key]]]


async def probe_all(gateway: LLMGateway, refs: Iterable[tuple[ModelRef, bool]]) -> dict[tuple[str, str], Probe]:
    """Each distinct model probed once, all at once: for JSON if any (ref, asks for JSON) of it does."""
    unique: dict[tuple[str, str], ModelRef] = {}
    asked: dict[tuple[str, str], bool] = {}
    for ref, asks_json in refs:
        unique.setdefault(ref.key, ref)
        asked[ref.key] = asked.get(ref.key, False) or asks_json
    probes = await asyncio.gather(*(probe(gateway, ref, structured=asked[key]) for key, ref in unique.items()))
    return dict(zip(unique, probes))


def preflight(ws: Workspace, gateway: LLMGateway, names: Iterable[str]) -> None:
    """Before a run: probe, through the run's own gateway, each model of these entries and judges that has not
    been seen to work; refuse (ArenaError) if any is unusable."""
    pending = [(name, ref, asks_json) for name, ref, asks_json in targets(ws, names)
               if not ref.simulated and not _seen_working(gateway.facts(ref), asks_json)]
    if not pending:
        return
    found = asyncio.run(probe_all(gateway, [(ref, asks_json) for _, ref, asks_json in pending]))
    broken = [f"{name} ({ref.model}): {found[ref.key].error}" for name, ref, _ in pending if not found[ref.key].ok]
    if broken:
        raise ArenaError("these models are not usable, so nothing was played (see 'arena check'):\n  "
                         + "\n  ".join(broken))


def _seen_working(facts: dict, asks_json: bool) -> bool:
    """Whether a model has been seen to work: its chat, and a structured-output mode if JSON is asked of it."""
    return bool(facts.get("ok")) and (not asks_json or bool(facts.get("structured")))


def _calls_model(kind) -> bool:
    """Kinds that call no model (people) say so with uses_model = False."""
    return getattr(kind, "uses_model", True)


def _uses_json(kind) -> bool:
    """Kinds that never ask their model for JSON (direct, search-baseline) say so with uses_json = False."""
    return getattr(kind, "uses_json", True)
