"""`arena run --dry-run`: what the pending plan would cost, projected from a sample played on the offline simulator.

Every entry and judge runs as the simulator `offline/<its name>` (a jury's pool models as `offline/<model>`,
which keep their families, arena.domain.families, so the simulated jury draws as the real one would), so the pending
matches fall into classes the simulator plays alike: the same debate format and motion language, and on each
side the same debater kind with the same settings. One match in EVERY of each class (at least one) is played in
a scratch workspace (a temporary folder, deleted afterwards), with search offline and nothing sent anywhere; the
workspace's own arena.db is only read. A played match counts as itself. Another counts, per side, as the mean
of the played sides of its kind, settings and side (pooled over the classes: a side's calls depend on its own
kind), and for its judges as the mean of its class's played matches (they read both sides). Each call is
attributed to the real model it stands for (the speaking side's entry, the judge, or the jury's panelist) and
its tokens priced at the per-token prices of litellm's bundled price map (arena.gateway.catalog.listed_price: read as
JSON, as importing litellm would cost more than the simulation). The simulator writes speeches of fixed lengths
and counts tokens roughly (words), so the projection shows the shape of the bill — calls per match, which model
dominates — rather than its exact amount; `every=1` plays every match. As a real model stops at a call's max_tokens
and the simulator does not, a simulated answer standing for a real model counts at most max_tokens, its prose cut
there (arena.gateway.llm.STANDING_IN): short speech budgets are projected as short.

The wall time (time_s) is projected from what `arena check` measured of each model (arena.app.runner.walltime).
"""
from __future__ import annotations

import re
import sys
import tempfile
from collections import defaultdict
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Sequence
from urllib.parse import urlparse

from arena.app.runner.engine import stored_match
from arena.app.runner.runs import run
from arena.app.runner.walltime import Clock, Role, Usage, bases, timed
from arena.app.setup.wiring import kinds_of
from arena.app.shapes.reports import DryRun, ModelCost, NotCounted, Projection
from arena.base.clock import now
from arena.domain.records import JURY, Entry, JudgeSpec, Match, is_simulated
from arena.gateway.catalog import listed_of, listed_price
from arena.gateway.llm import STANDING_IN
from arena.gateway.providers import OFFLINE_PREFIX
from arena.store import DB_NAME, Store
from arena.workspace.config import Config
from arena.workspace.folder import Workspace

HUMAN = "human"  # the debater kind whose speeches people write: no LLM bill, and no editor during a dry run
LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1", "0.0.0.0")
_USAGE = ("calls", "prompt_tokens", "completion_tokens", "cached_tokens", "searches")
# One match in EVERY of each class is played: the simulated Agent4Debate's research and review rounds vary from
# match to match (its calls per side spread by about a quarter of their mean), so a side's mean needs a few dozen
# played sides; pooled over the classes (_means), a tenth of the preset's 200 matches keeps its totals within a
# few per cent of playing every match at a tenth of the time (benchmarks/dryrun.py).
EVERY = 10
_NONE: Usage = dict.fromkeys(_USAGE, 0)  # a role that made no call in a match
AT_ONCE = 4  # the matches `arena run` plays at once by default (its --concurrency)
# What the simulator's calls for a match depend on: its format, its motion's language, each side's shape (_shape).
Class = tuple[str, str, str, str]
# What a side's calls depend on: its match's format and language, its own shape, its side.
SideClass = tuple[str, str, str, str]
Played = dict[str, dict[Role, Usage]]  # match id -> role -> what its calls used


@dataclass
class Means:
    """Mean usage of the played matches: each side's by its SideClass, each class's judges' by role."""

    sides: dict[SideClass, Usage] = field(default_factory=dict)
    judges: dict[Class, dict[Role, Usage]] = field(default_factory=dict)


def dry_run(ws: Workspace, *, retry_failed: bool = False, every: int = EVERY, concurrency: int | None = None,
            progress: Callable[[str], None] | None = None, planned: Sequence[Match] = ()) -> DryRun:
    """Project calls, tokens, cost and wall time of the matches `arena run` would play; write nothing.

    every: one match in `every` of each class is played, at least one (1: every match). concurrency: the matches
    the run would play at once (None: its default, AT_ONCE). progress(line) hears a line per simulated match;
    without it a line is redrawn on stderr when that is a terminal. Returns {"matches", "sampled" (matches played
    on the simulator), "failed": [{id, error}] (matches not counted: the simulator could not play them, or every
    played match like them), "models": [{model, calls, prompt_tokens, completion_tokens, cost (None: price
    unknown)}], "unknown" (models without a price), "why_unknown": [{model, reason}], "searches",
    "search_provider", "cost" (of the priced models), "per_match": {calls, tokens, cost}, "time_s" (TimeEstimate:
    the wall time from the models' measured throughput, see arena.app.runner.walltime.timed)}. planned: matches
    not stored that the run would also play (`--until`'s batches to come), projected with the pending ones.
    """
    config = ws.config
    pending = [stored_match(ws.store, match_id)
               for match_id in ws.store.pending_matches(now() if retry_failed else None)] + list(planned)
    simulated = replace(config, entries=tuple(_offline_entry(e) for e in config.entries),
                        judges=tuple(_offline_judge(j) for j in config.automatic_judges),
                        search=replace(config.search, provider="offline"), llm=replace(config.llm, cache=False))
    shapes = {e.name: _shape(e) for e in simulated.entries}
    groups = classes(pending, shapes)
    played = [m for group in groups for m in spread(group, -(-len(group) // max(1, every)))]
    usage, failed = _simulate(ws, simulated, played, progress or _ticker(len(played)))
    clock = Clock(ws)
    projection = _project(ws, groups, shapes, usage, failed, len(pending), clock)
    return {**projection, "sampled": len(played),
            "time_s": timed(ws, projection["models"], clock, max(1, concurrency or AT_ONCE))}


def classes(matches: list[Match], shapes: dict[str, str]) -> list[list[Match]]:
    """The matches grouped by what the simulator's calls depend on, each group in schedule order."""
    groups: dict[Class, list[Match]] = defaultdict(list)
    for m in matches:
        groups[_class(m, shapes)].append(m)
    return list(groups.values())


def _class(match: Match, shapes: dict[str, str]) -> Class:
    return match.format, match.motion.language, shapes[match.pro], shapes[match.con]


def spread(group: list[Match], k: int) -> list[Match]:
    """k members of group evenly spaced through it (all of it when k >= its size)."""
    n = len(group)
    return group if k >= n else [group[i * n // k] for i in range(k)]


def _shape(entry: Entry) -> str:
    # Name and model only seed the simulator's wording, and the family only a jury's draw; the kind and its
    # settings decide the calls.
    # params as a sorted list, not a Mapping: a repr the same whatever the order of the keys
    params: Any = sorted(entry.params.items())
    return repr(replace(entry, name="", model="", family="", params=params))


def _simulate(ws: Workspace, simulated: Config, played: list[Match],
              progress: Callable[[str], None]) -> tuple[Played, dict[str, str]]:
    """Play the matches in a scratch workspace: ({match id: {role: usage}}, {match id: error of a failed one}). The
    simulator's models standing in for real ones answer within each call's max_tokens, as a real model would: the
    simulator writes its own lengths, whatever the cap (arena.gateway.llm.STANDING_IN)."""
    stand_ins = _stand_ins(ws.config, simulated)
    with tempfile.TemporaryDirectory(prefix="arena-dry-run-") as scratch:
        store = Store(Path(scratch) / DB_NAME)
        try:
            store.sync_entries(simulated.entries)
            store.add_motions({m.motion.id: m.motion for m in played}.values())
            # Each match in its own debate format: a tournament per format, the played matches in that order.
            formats = list(dict.fromkeys(m.format for m in played))
            ordered = sorted(played, key=lambda m: formats.index(m.format))
            ids = [match_id for fmt in formats
                   for match_id in store.add_tournament("dry-run", ws.config.arena.seed, {},
                                                        [(m.motion.id, m.pro, m.con) for m in ordered
                                                         if m.format == fmt], debate_format=fmt)]
            real = {scratch_id: m.id for scratch_id, m in zip(ids, ordered)}
            scratch_ws = Workspace(Path(scratch), simulated, store, ws.motions, *kinds_of(simulated))
            standing = STANDING_IN.set(stand_ins)
            try:
                outcome = run(scratch_ws, concurrency=8, progress=progress)
            finally:
                STANDING_IN.reset(standing)
            if outcome["stopped"] == "interrupted":
                raise KeyboardInterrupt  # a partial projection would understate the bill
            usage: Played = {real[i]: {} for i in ids}
            for match_id, kind, side, judge, _pro, _con, prompt_tokens, completion_tokens, model, cached \
                    in store.call_sides():
                if kind not in ("llm", "search"):  # a degraded step's ledger row: no call
                    continue
                # A judge's calls by the model asked: a jury's panelists are models of their own. Any other call of
                # a match is a side's, which the ledger names (a side of "" would count as con's, as None did).
                asked: Role = ("judge", judge, model) if judge else ("side", side or "")
                role = usage[real[match_id]].setdefault(asked, dict.fromkeys(_USAGE, 0))
                if kind == "search":
                    role["searches"] += 1
                else:
                    role["calls"] += 1
                    role["prompt_tokens"] += prompt_tokens
                    role["completion_tokens"] += completion_tokens
                    role["cached_tokens"] += cached
            failed = {real[match_id]: error for match_id, error in store.failed_matches()}
        finally:
            store.close()
    return usage, failed


def _ticker(total: int) -> Callable[[str], None]:
    """A status line redrawn on stderr as simulated matches finish, when stderr is a terminal; else silence."""
    if not sys.stderr.isatty():
        return lambda line: None

    def say(line: str) -> None:
        finished = re.match(r"\[(\d+)/", line)  # Progress's line per finished match: "[k/N] ID done (..)"
        if finished:
            sys.stderr.write(f"\rdry run: simulating {finished[1]}/{total} sampled matches\x1b[K")
        else:  # the run's closing summary: the status line has had its say
            sys.stderr.write("\r\x1b[K")
        sys.stderr.flush()
    return say


def _offline_entry(entry: Entry) -> Entry:
    if entry.simulated:
        return entry
    # The entry keeps its family (replace does not derive it anew): a jury seats by it.
    if entry.debater == HUMAN:
        return replace(entry, debater="direct", model=OFFLINE_PREFIX + entry.name, api_base="", params={})
    return replace(entry, model=OFFLINE_PREFIX + entry.name, api_base="", strength=0.0)


def _offline_judge(spec: JudgeSpec) -> JudgeSpec:
    if spec.kind == JURY:
        return replace(spec, api_base="", options={**spec.options, "pool": [_stand_in(m) for m in spec.models]})
    return spec if spec.simulated else replace(spec, model=OFFLINE_PREFIX + spec.name, api_base="")


def judge_stand_in(spec: JudgeSpec) -> tuple[JudgeSpec, dict[str, str]]:
    """The judge as the simulator plays it (a jury's pool models each by a stand-in of its family), and each
    simulator model it asks with the real model it stands for (as arena.gateway.llm.STANDING_IN holds them)."""
    offline = _offline_judge(spec)
    if spec.kind == JURY:
        return offline, {_stand_in(m): m for m in spec.models}
    return offline, {offline.model: spec.model}


def _stand_in(model: str) -> str:
    """The simulator standing in for a jury's pool model: offline/<model>, of the model's family."""
    return model if is_simulated(model) else OFFLINE_PREFIX + model


def _project(ws: Workspace, groups: list[list[Match]], shapes: dict[str, str], usage: Played,
             failed: dict[str, str], matches: int, clock: Clock) -> Projection:
    """Sum each match's calls per real model and price them: a played match's own, another's estimated (_means);
    clock adds up each match's calls in turn (Clock.in_turn)."""
    config = ws.config
    entries = {e.name: e for e in config.entries}
    judges = {j.name: j for j in config.judges}
    means = _means(groups, shapes, usage, failed)
    totals: dict[str, Usage] = defaultdict(lambda: dict.fromkeys(_USAGE, 0.0))
    not_counted: list[NotCounted] = []
    for group in groups:
        sample = next((m.id for m in group if m.id in usage), None)
        for m in group:
            if m.id in failed:
                not_counted.append({"id": m.id, "error": failed[m.id]})
                continue
            if m.id in usage:
                used = usage[m.id]
            elif _class(m, shapes) in means.judges:
                used = {**{("side", side): means.sides[_side(m, side, shapes)] for side in ("pro", "con")},
                        **means.judges[_class(m, shapes)]}
            else:  # every played match of its class failed
                not_counted.append({"id": m.id, "error": f"not played: {sample}, a match like it, failed"})
                continue
            clock.in_turn(m, {role: (_model_of(role, m, entries, judges), row) for role, row in used.items()},
                          judges)
            for role, row in used.items():
                model = _model_of(role, m, entries, judges)
                total = totals["" if model is None else model]  # "": a person's side, which calls no model
                for key in _USAGE:
                    total[key] += row[key]
    searches = round(sum(row["searches"] for row in totals.values()))
    rows = {model: {k: round(v) for k, v in row.items()} for model, row in totals.items() if model}
    models: list[ModelCost] = [{"model": model, "calls": row["calls"], "prompt_tokens": row["prompt_tokens"],
                                "completion_tokens": row["completion_tokens"], "cached_tokens": row["cached_tokens"],
                                "cost": listed_price(model, row["prompt_tokens"], row["completion_tokens"],
                                                     row["cached_tokens"])}
                               for model, row in sorted(rows.items()) if row["calls"]]
    cost = sum(r["cost"] for r in models if r["cost"] is not None)
    calls_total = sum(r["calls"] for r in models)
    tokens = sum(r["prompt_tokens"] + r["completion_tokens"] for r in models)
    per = max(1, matches)
    unknown = [r["model"] for r in models if r["cost"] is None]
    api_bases = bases(config)
    return {"matches": matches, "models": models, "unknown": unknown,
            "why_unknown": [{"model": m, "reason": why_unpriced(m, api_bases.get(m, ""))} for m in unknown],
            "searches": searches, "search_provider": config.search.provider, "cost": cost,
            "per_match": {"calls": calls_total / per, "tokens": tokens / per, "cost": cost / per},
            "failed": not_counted}


def _means(groups: list[list[Match]], shapes: dict[str, str], usage: Played, failed: dict[str, str]) -> Means:
    """Mean usage of the played matches: per side by (format, language, debater shape, side), pooled over the
    classes, as a side's calls depend on its own kind and settings; the judges' per class, as they read both."""
    pooled: dict[SideClass, list[Usage]] = defaultdict(list)
    means = Means()
    for group in groups:
        played = [usage[m.id] for m in group if m.id in usage and m.id not in failed]
        if not played:
            continue
        judging = {role for used in played for role in used if role[0] == "judge"}
        for m in group:
            if m.id in usage and m.id not in failed:
                for side in ("pro", "con"):
                    pooled[_side(m, side, shapes)].append(usage[m.id].get(("side", side), _NONE))
        means.judges[_class(group[0], shapes)] = {
            role: _mean([used.get(role, _NONE) for used in played]) for role in judging}
    means.sides = {key: _mean(rows) for key, rows in pooled.items()}
    return means


def _side(match: Match, side: str, shapes: dict[str, str]) -> SideClass:
    return match.format, match.motion.language, shapes[match.pro if side == "pro" else match.con], side


def _mean(rows: list[Usage]) -> Usage:
    """The mean of usage rows ({calls, prompt_tokens, completion_tokens, searches})."""
    return {k: sum(row[k] for row in rows) / len(rows) for k in _USAGE}


def _model_of(role: Role, match: Match, entries: dict[str, Entry], judges: dict[str, JudgeSpec]) -> str | None:
    """The real model a call of the simulation stands for (role: ("side", side) or ("judge", name, the model
    asked)); None for a person's speech."""
    if role[0] == "judge":
        _, name, asked = role
        spec = judges[name]
        return {_stand_in(m): m for m in spec.models}.get(asked, asked) if spec.kind == JURY else spec.model
    entry = entries.get(match.pro if role[1] == "pro" else match.con)
    return None if entry is None or entry.debater == HUMAN else entry.model


def why_unpriced(model: str, api_base: str = "") -> str:
    """Why litellm's price map gives no price for model, in a few words."""
    host = urlparse(api_base).hostname or ""
    if host in LOCAL_HOSTS or host.endswith(".local"):
        return f"a local server ({api_base}): no per-token price"
    if api_base:
        return f"served at {api_base}, which litellm's price map does not cover"
    provider = model.partition("/")[0]
    listed = listed_of(provider)
    if listed is None:
        return "not in litellm's price map"
    if not listed:
        return f"litellm's price map lists no model of the provider {provider}/"
    # A name the map lacks among the provider's others: a retired model (dropped from the map) or a misspelling.
    return f"not in litellm's price map, which lists {listed} other {provider}/ models (retired or misspelt?)"


def _stand_ins(config: Config, simulated: Config) -> dict[str, str]:
    """The simulator's models of the sample that stand in for real ones, each with the real model it stands for (an
    entry's, a judge's, a jury's pool model): what arena.gateway.llm.STANDING_IN holds while the sample plays."""
    real = _models(config)
    pairs = [(_offline_entry(e).model, e.model) for e in config.entries]
    pairs += [(_stand_in(m), m) for j in config.automatic_judges if j.kind == JURY for m in j.models]
    pairs += [(_offline_judge(j).model, j.model) for j in config.automatic_judges if j.kind != JURY]
    stand_ins = {offline: model for offline, model in reversed(pairs) if offline not in real}  # the first named wins
    return {m: stand_ins.get(m, m) for m in _models(simulated) - real}


def _models(config: Config) -> set[str]:
    """The models of a config's entries and judges (a jury's pool models each)."""
    return {e.model for e in config.entries} | {m for j in config.judges for m in j.models}
