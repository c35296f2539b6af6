"""`arena run --dry-run`: what the pending plan would cost, found by playing it on the offline simulator.

Every pending match is played in a scratch workspace (a temporary folder, deleted afterwards)
in which each entry and judge runs as the simulator `offline/<its name>`, with search offline
and nothing sent anywhere; the workspace's own arena.db is only read. Each simulated call is
then attributed to the real model it stands for (the speaking side's entry, or the judge) and
its tokens priced with litellm's price map. The simulator writes speeches of fixed lengths and
counts tokens roughly (words), so the projection shows the shape of the bill — calls per match,
which model dominates — rather than its exact amount.
"""
from __future__ import annotations

import tempfile
from dataclasses import replace
from pathlib import Path

from arena.app.runs import run
from arena.app.wiring import kinds_of
from arena.models import price
from arena.records import OFFLINE_PREFIX, Entry, JudgeSpec
from arena.store import DB_NAME, Store, now
from arena.workspace import Workspace

HUMAN = "human"  # the debater kind whose speeches people write: no LLM bill, and no editor during a dry run


def dry_run(ws: Workspace, *, retry_failed: bool = False) -> dict:
    """Project calls, tokens and cost of the matches `arena run` would play; write nothing.

    Returns {"matches", "failed": [{id, error}] (matches the simulator could not play), "models": [{model,
    calls, prompt_tokens, completion_tokens, cost (None: price unknown)}], "unknown" (models
    without a price), "searches", "search_provider", "cost" (of the priced models), "per_match":
    {calls, tokens, cost}}.
    """
    config = ws.config
    pending = [ws.store.match(match_id) for match_id in ws.store.pending_matches(now() if retry_failed else None)]
    simulated = replace(config, entries=tuple(_offline_entry(e) for e in config.entries),
                        judges=tuple(_offline_judge(j) for j in config.automatic_judges),
                        search=replace(config.search, provider="offline"), llm=replace(config.llm, cache=False))
    with tempfile.TemporaryDirectory(prefix="arena-dry-run-") as scratch:
        store = Store(Path(scratch) / DB_NAME)
        try:
            store.sync_entries(simulated.entries)
            store.add_motions({m.motion.id: m.motion for m in pending}.values())
            # Each match in its own debate format: a tournament per format, the pending matches in that order.
            formats = list(dict.fromkeys(m.format for m in pending))
            pending.sort(key=lambda m: formats.index(m.format))
            ids = [match_id for fmt in formats
                   for match_id in store.add_tournament("dry-run", config.arena.seed, {},
                                                        [(m.motion.id, m.pro, m.con) for m in pending
                                                         if m.format == fmt], debate_format=fmt)]
            scratch_ws = Workspace(Path(scratch), simulated, store, ws.motions, *kinds_of(simulated))
            outcome = run(scratch_ws, concurrency=8, progress=lambda line: None)
            if outcome["stopped"] == "interrupted":
                raise KeyboardInterrupt  # a partial projection would understate the bill
            calls = store.call_sides()
            real = {scratch_id: m.id for scratch_id, m in zip(ids, pending)}
            failed = [{"id": real[match_id], "error": error} for match_id, error in store.failed_matches()]
        finally:
            store.close()
    return {**_project(ws, calls, len(pending)), "failed": failed}


def _offline_entry(entry: Entry) -> Entry:
    if entry.simulated:
        return entry
    if entry.debater == HUMAN:
        return replace(entry, debater="direct", model=OFFLINE_PREFIX + entry.name, api_base="", params={})
    return replace(entry, model=OFFLINE_PREFIX + entry.name, api_base="", strength=0.0)


def _offline_judge(spec: JudgeSpec) -> JudgeSpec:
    return spec if spec.simulated else replace(spec, model=OFFLINE_PREFIX + spec.name, api_base="")


def _project(ws: Workspace, calls, matches: int) -> dict:
    """Sum the simulated calls per real model and price them."""
    config = ws.config
    entries = {e.name: e for e in config.entries}
    judges = {j.name: j.model for j in config.judges}
    totals: dict[str, dict] = {}
    searches = 0
    for kind, side, judge, pro, con, prompt_tokens, completion_tokens in calls:
        if kind == "search":
            searches += 1
            continue
        if kind != "llm":  # a degraded step's ledger row: no call
            continue
        if judge is not None:
            model = judges[judge]
        else:
            entry = entries.get(pro if side == "pro" else con)
            if entry is None or entry.debater == HUMAN:
                continue  # a person's speech calls no model
            model = entry.model
        row = totals.setdefault(model, {"model": model, "calls": 0, "prompt_tokens": 0, "completion_tokens": 0})
        row["calls"] += 1
        row["prompt_tokens"] += prompt_tokens
        row["completion_tokens"] += completion_tokens
    models = [{**row, "cost": price(row["model"], row["prompt_tokens"], row["completion_tokens"])}
              for row in sorted(totals.values(), key=lambda r: r["model"])]
    cost = sum(r["cost"] for r in models if r["cost"] is not None)
    calls_total = sum(r["calls"] for r in models)
    tokens = sum(r["prompt_tokens"] + r["completion_tokens"] for r in models)
    per = max(1, matches)
    return {"matches": matches, "models": models,
            "unknown": [r["model"] for r in models if r["cost"] is None],
            "searches": searches, "search_provider": config.search.provider, "cost": cost,
            "per_match": {"calls": calls_total / per, "tokens": tokens / per, "cost": cost / per}}
