"""`arena check`: probe the models of entries and judges before a tournament spends money on them.

Each distinct model (name and endpoint) is probed once, each model of a jury's pool among them: a one-line
chat, the structured-output mode that works (only if some entry or judge on it asks for JSON: a kind that never
does says so with uses_json = False), its context window, latency, and whether litellm knows its price. What a
probe finds is remembered in the workspace, so calls go straight to the mode that works, and `arena run` probes
only models it has not seen work. Each row names the model's family (arena.domain.families).

A probe also measures how the server serves the model (arena.gateway.probe.measure): its slots (requests served at once:
the server's, measured once for every model behind it, whose probes take turns) and its throughput (completion and
prompt tokens a second). `arena run` sends a server at most its slots at once, whatever models it asks, and gives
each call the time its tokens take at that throughput (arena.gateway.llm); notes() says when the measured
figures mean the settings will hurt. The run's preflight measures a model seen working but not yet measured, so
a run never plays a model at [llm] max_concurrency that it could have measured in a few seconds.

Before any probe or call, the keys the models and the web search need are looked up in the environment
(require_keys, arena.gateway.credentials): a missing one is named with the entries and judges that need it, and nothing
is sent. `arena check` also probes the search provider when a real entry searches the web.

`arena check` and the start of `arena run` also warn (repeating_judges) of a judge whose R runs can only repeat
one another: evidence counted R times over, at R times the cost.
"""
from __future__ import annotations

import asyncio
import time
from typing import Iterable, Mapping

from arena.app.shapes.reports import CheckRow
from arena.gateway.credentials import Caller, missing, require
from arena.base.errors import ArenaError, UserError, plural
from arena.domain.families import family_of
from arena.gateway.llm import LLMGateway
from arena.gateway.catalog import ModelRef
from arena.gateway.probe import Probe, probe_server, serves_slots
from arena.domain.records import Entry, JudgeSpec, is_simulated
from arena.gateway.search import SearchGateway, SearchTag
from arena.workspace.folder import Workspace
from debaters.params import Length, speech_tokens


def targets(ws: Workspace, names: Iterable[str] = ()) -> list[tuple[str, ModelRef, bool]]:
    """(name, model, whether it asks for JSON) of the named entries and judges (default: all that call a model),
    in arena.toml's order; a jury's once per model of its pool."""
    cfg = ws.config
    specs: dict[str, Entry | JudgeSpec] = {e.name: e for e in cfg.entries if _calls_model(ws.debaters.get(e.name))}
    specs |= {j.name: j for j in cfg.judges if _calls_model(ws.judges.get(j.name))}
    names = list(dict.fromkeys(names))
    known = {e.name for e in cfg.entries} | {j.name for j in cfg.judges}
    for name in names:
        if name not in known:
            raise UserError(f"unknown entry or judge {name!r}; known: {', '.join(sorted(known)) or 'none'}")
    chosen = names or list(specs)
    kinds = {e.name: ws.debaters.get(e.name) for e in cfg.entries} | {j.name: ws.judges.get(j.name) for j in cfg.judges}
    return [(name, ModelRef.of(specs[name], model), _uses_json(kinds[name]))
            for name in chosen if name in specs for model in _models(specs[name])]


def check(ws: Workspace, names: Iterable[str] = ()) -> list[CheckRow]:
    """One row per named entry or judge (a jury's per pool model): {name, model, family, ok, structured,
    context_window, latency_s, error, priced}, and a row named "[search]" for the search provider when a real entry
    of them searches the web. A missing key is a UserError before any probe (require_keys)."""
    chosen = targets(ws, names)
    require_keys(ws, [name for name, _, _ in chosen])
    # Not capped at slots known from before: the measurement sends batches past them to measure them anew.
    found = asyncio.run(probe_all(LLMGateway(ws.config.llm, ws.store, ws.config.arena.seed, follow_slots=False),
                                  [(ref, asks_json) for _, ref, asks_json in chosen]))
    specs = {e.name: e for e in ws.config.entries} | {j.name: j for j in ws.config.judges}
    rows: list[CheckRow] = [
        {"name": name, "model": ref.model, "family": _family(specs[name], ref.model), "ok": p.ok,
         "structured": p.structured,
         "context_window": p.context_window, "latency_s": p.latency_s, "error": p.error, "priced": p.priced,
         "slots": p.slots, "tokens_per_s": p.tokens_per_s}
        for name, ref, _ in chosen for p in [found[ref.key]]]
    if ws.config.search.provider != "offline" and any(c.searches for c in callers(ws, [n for n, _, _ in chosen])):
        rows.append(probe_search(ws))
    return rows


def repeating_judges(ws: Workspace, names: Iterable[str] | None = None) -> list[str]:
    """A warning per named judge (default: every judge) whose R runs can only repeat one another: an LLM judge
    (not people, not imported, not the simulator, whose runs are seeded apart) with runs ≥ 2 at temperature 0 and
    without swap_sides, since nothing else differs between its runs' requests. Each names the judge and what to
    change."""
    chosen = None if names is None else set(names)
    warnings = []
    for spec in ws.config.judges:
        kind = ws.judges.get(spec.name)
        if (chosen is not None and spec.name not in chosen) or not _calls_model(kind) or is_simulated(spec.model):
            continue
        options = getattr(kind, "options", spec.options)
        if spec.runs >= 2 and options.get("temperature") == 0 and not options.get("swap_sides", False):
            warnings.append(f"judge {spec.name!r} ({spec.kind} judge): its {plural(spec.runs, 'run')} can only "
                            "repeat one another (temperature 0 and swap_sides = false: nothing differs between them), "
                            f"so a match counts one answer {spec.runs} times over; set swap_sides = true in its "
                            "[judges.options] (odd runs read the sides exchanged), or a temperature above 0, "
                            "or runs = 1")
    return warnings


def callers(ws: Workspace, names: Iterable[str]) -> list[Caller]:
    """The named entries and judges that call a real model, as arena.gateway.credentials sees them: model, endpoint, and
    whether the entry's kind searches the web (uses_search)."""
    names = set(names)
    cfg = ws.config
    found = [Caller("entry", e.name, e.model, e.api_base, getattr(ws.debaters.get(e.name), "uses_search", False))
             for e in cfg.entries if e.name in names and _calls_model(ws.debaters.get(e.name))]
    found += [Caller("judge", j.name, model, j.api_base) for j in cfg.judges
              if j.name in names and _calls_model(ws.judges.get(j.name)) for model in j.models]
    return [c for c in found if not is_simulated(c.model)]


def require_keys(ws: Workspace, names: Iterable[str]) -> None:
    """Before any call: a UserError naming each key the environment lacks and the entries and judges (of names)
    that need it (arena.gateway.credentials.require)."""
    require(callers(ws, names), ws.config.search.provider, ws.config.path.name)


def keyless(ws: Workspace, names: Iterable[str]) -> dict[str, list[Caller]]:
    """Each variable the environment lacks → the entries and judges of names that need it
    (arena.gateway.credentials.missing); empty when none lacks one."""
    return missing(callers(ws, names), ws.config.search.provider)


def probe_search(ws: Workspace) -> CheckRow:
    """`arena check`'s row for the search provider: one uncached search, not retried."""
    gateway = SearchGateway(ws.config.search, ws.store, cache=False, timeout_s=ws.config.llm.timeout_s)
    started = time.perf_counter()
    error = None
    try:
        asyncio.run(gateway.search("debate", tag=SearchTag(role="probe"), max_results=1))
    except (ArenaError, UserError) as exc:
        error = str(exc)
    return {"name": "[search]", "model": ws.config.search.provider, "family": None, "ok": error is None,
            "structured": None,
            "context_window": None, "latency_s": None if error else round(time.perf_counter() - started, 3),
            "error": error, "priced": False, "slots": None, "tokens_per_s": None}


async def probe_all(gateway: LLMGateway, refs: Iterable[tuple[ModelRef, bool]], *,
                    resume: bool = False) -> dict[tuple[str, str], Probe]:
    """Each distinct model probed once, for JSON if any (ref, asks for JSON) of it does; resume as
    arena.gateway.probe.probe's. Servers at once, the models of one server of yours one after another, its slots
    measured once for them all (arena.gateway.probe.probe_server); a provider's own API's models at once (their
    slots are not measured)."""
    unique: dict[tuple[str, str], ModelRef] = {}
    asked: dict[tuple[str, str], bool] = {}
    for ref, asks_json in refs:
        unique.setdefault(ref.key, ref)
        asked[ref.key] = asked.get(ref.key, False) or asks_json
    servers: dict[str, list[tuple[str, str]]] = {}
    for key, ref in unique.items():
        servers.setdefault(ref.server if serves_slots(ref) else repr(key), []).append(key)
    probes = await asyncio.gather(*(probe_server(gateway, [(unique[key], asked[key]) for key in keys], resume=resume)
                                    for keys in servers.values()))
    return {key: found for keys, server in zip(servers.values(), probes) for key, found in zip(keys, server)}


def preflight(ws: Workspace, gateway: LLMGateway, names: Iterable[str]) -> None:
    """Before a run: refuse (UserError) if a key is missing (require_keys), then probe, through the run's own
    gateway, each model of these entries and judges that has not been seen to work or not been measured (only
    what is missing is asked); refuse (ArenaError) if any is unusable."""
    chosen = targets(ws, names)
    require_keys(ws, [name for name, _, _ in chosen])
    # A model seen working but not measured (checked before measuring was) is measured too: a few short calls.
    pending = [(name, ref, asks_json) for name, ref, asks_json in chosen
               if not ref.simulated and not (_seen_working(gateway.facts(ref), asks_json)
                                             and "measured_at" in gateway.facts(ref))]
    if not pending:
        return
    # resume: what a probe stopped part way found is not paid for again
    found = asyncio.run(probe_all(gateway, [(ref, asks_json) for _, ref, asks_json in pending], resume=True))
    broken = [f"{name} ({ref.model}): {found[ref.key].error}" for name, ref, _ in pending if not found[ref.key].ok]
    if broken:
        raise ArenaError("these models are not usable, so nothing was played (see 'arena check'):\n  "
                         + "\n  ".join(broken))


def notes(ws: Workspace, rows: Iterable[CheckRow]) -> list[str]:
    """What `arena check` says of the measured figures, a line each, where they mean the settings will hurt: a
    model serving fewer requests at once than a run's matches, or whose longest call takes longer than [llm]
    timeout_s at its measured throughput; each with the settings that help."""
    llm, said = ws.config.llm, []
    seen: set[str] = set()
    for row in rows:
        if not row["ok"] or row["model"] in seen or row["name"] == "[search]":
            continue
        seen.add(row["model"])
        slots, rate = row["slots"], row["tokens_per_s"]
        if slots is not None and slots < RUN_MATCHES:
            said.append(f"{row['model']} serves {plural(slots, 'request')} at once (measured): 'arena run' sends it "
                        f"no more than that at once, and other calls wait their turn in the arena, not in the "
                        f"server's queue; with --concurrency N the run sends up to [llm] max_concurrency "
                        f"({llm.max_concurrency}) at once, and calls queued in the server may time out: keep N at "
                        f"{slots} there, or raise [llm] timeout_s")
        longest = max((_answer_tokens(ws, name) for name in _names_of(ws, row["model"])), default=0)
        if rate and longest and longest / rate > llm.timeout_s / 2:
            said.append(f"{row['model']} writes {rate:g} tokens/s (measured), so a speech of up to {longest} tokens "
                        f"takes some {longest / rate:.0f} s against [llm] timeout_s = {llm.timeout_s:g}: 'arena run' "
                        f"gives each call the time its tokens take at that rate, so it does not time out, but a "
                        f"tournament takes long; shorter speeches (the entry's words_<stage> params, or max_tokens) "
                        f"make it quicker")
    return said


RUN_MATCHES = 4  # the matches `arena run` plays at once by default (arena.app.runner.runs)


def _names_of(ws: Workspace, model: str) -> list[str]:
    """The entries whose model is model."""
    return [e.name for e in ws.config.entries if e.model == model]


def _answer_tokens(ws: Workspace, name: str) -> int:
    """The most tokens an entry's speech may be given: its longest words budget's answer cap, under its
    max_tokens (0 for a kind without such params)."""
    params = getattr(ws.debaters.get(name), "params", None) or {}
    words = [v for k, v in params.items() if k.startswith("words_") and isinstance(v, int)]
    longest = speech_tokens(Length(max(words), "words")) if words else 0
    return min(longest, params.get("max_tokens") or longest)


def _models(spec: Entry | JudgeSpec) -> tuple[str, ...]:
    """The models an entry or judge calls: a jury's pool, else its model."""
    return spec.models if isinstance(spec, JudgeSpec) else (spec.model,)


def _family(spec: Entry | JudgeSpec, model: str) -> str:
    """The family of one of its models: its own `family` for its model, family_of's for a pool model."""
    return spec.family if model == spec.model else family_of(model)


def _seen_working(facts: Mapping[str, object], asks_json: bool) -> bool:
    """Whether a model has been seen to work: its chat, and a structured-output mode if JSON is asked of it."""
    return bool(facts.get("ok")) and (not asks_json or bool(facts.get("structured")))


def _calls_model(kind: object) -> bool:
    """Kinds that call no model (people) say so with uses_model = False."""
    uses: bool = getattr(kind, "uses_model", True)
    return uses


def _uses_json(kind: object) -> bool:
    """Kinds that never ask their model for JSON (direct, search-baseline) say so with uses_json = False."""
    uses: bool = getattr(kind, "uses_json", True)
    return uses
