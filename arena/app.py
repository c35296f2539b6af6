"""The library behind the CLI: one function per command, each returning data to print."""
from __future__ import annotations

import asyncio
import shutil
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

from arena import registration, runner, scheduler
from arena.config import Config
from arena.errors import ArenaError, UserError
from arena.records import Entry, JudgeSpec, Match, score
from arena.results import results_rows
from arena.stats import agent_stats, judge_stats, match_outcome
from arena.store import now
from arena.workspace import Workspace, init_workspace
from debaters.registry import DEBATERS
from judges import bench

FORMATS = ("round-robin", "swiss", "random", "active", "onboard")


def entry_list(ws: Workspace) -> list[dict]:
    """Entries as INTERFACE.md's JSON: name, debater, model, matches, and strength for offline models."""
    counts = ws.store.match_counts()
    out = []
    for e in ws.config.entries:
        row = {"name": e.name, "debater": e.debater, "model": e.model, "matches": counts.get(e.name, 0),
               "simulated": e.simulated, "retired": e.retired}
        if e.simulated:
            row["strength"] = e.strength
        out.append(row)
    return out


def entry_add(ws: Workspace, name: str, *, debater: str, model: str, api_base: str | None = None,
              params: Mapping[str, Any] | None = None, strength: float | None = None) -> Entry:
    """Register an entry: check it, then append it to arena.toml (every existing byte kept)."""
    _reload(ws, registration.add_entry(ws.config, ws.store.entry_names(), DEBATERS, name=name, debater=debater,
                                       model=model, api_base=api_base, params=params, strength=strength))
    return ws.config.entry(name)


def entry_show(ws: Workspace, name: str) -> dict:
    """One entry's configuration, status and completed-match count."""
    e = ws.config.entry(name)
    row = {"name": e.name, "status": "retired" if e.retired else "active", "retired": e.retired,
           "debater": e.debater, "model": e.model, "simulated": e.simulated, "api_base": e.api_base}
    if e.simulated:
        row["strength"] = e.strength
    return {**row, "params": dict(e.params), "matches": ws.store.match_counts().get(e.name, 0)}


def entry_retire(ws: Workspace, name: str) -> None:
    """Mark an entry retired in arena.toml: it keeps its matches and rating, and is no longer scheduled."""
    _reload(ws, registration.retire_entry(ws.config, name))


def _reload(ws: Workspace, config: Config) -> None:
    """Carry an edit of arena.toml into the open workspace and the database at once, as opening would."""
    ws.config = config
    ws.store.sync_entries(config.entries)


def match_list(ws: Workspace) -> list[dict]:
    return [{"id": r["id"], "status": r["status"], "motion": r["motion_id"], "pro": r["pro"], "con": r["con"],
             "error": r["error"]} for r in ws.store.match_rows()]


def match_get(ws: Workspace, match_id: str) -> Match:
    match = ws.store.match(match_id)
    if match is None:
        raise UserError(f"no match {match_id!r} (see 'arena match list')")
    return match


def match_json(match: Match, judge: str | None = None) -> dict:
    """A match as INTERFACE.md's JSON; the score is the given judge's (default: the first that judged)."""
    judge = judge or next((v.judge for v in match.verdicts), None)
    pro, con = score([v for v in match.verdicts if v.judge == judge])
    return {
        "id": match.id, "status": match.status, "error": match.error, "simulated": match.simulated,
        "motion": {"id": match.motion.id, "text": match.motion.text, "category": match.motion.category,
                   "language": match.motion.language},
        "pro": match.pro, "con": match.con,
        "speeches": [{"stage": s.stage, "side": s.side, "text": s.text,
                      "references": [asdict(r) for r in s.references],
                      "started_at": s.started_at, "finished_at": s.finished_at,
                      "agents": {role: asdict(u) for role, u in s.agents.items()}} for s in match.speeches],
        "verdicts": [{"judge": v.judge, "run": v.run, "overall": v.overall, "dimensions": dict(v.dimensions),
                      "rationale": v.rationale, **({"error": v.error} if v.error else {})} for v in match.verdicts],
        "score": {"pro": pro, "con": con},
    }


def schedule(ws: Workspace, fmt: str, *, rounds: int = 1, matches: int | None = None, entry: str | None = None,
             seed: int | None = None) -> list[str]:
    """Store a tournament plan before anything runs; return its match ids."""
    if fmt != "round-robin":
        raise UserError(f"--format {fmt}: not available yet in this version (available: round-robin)")
    if matches is not None or entry is not None:
        raise UserError("--matches and --entry do not apply to round-robin (every pair meets on --rounds motions)")
    seed = ws.config.arena.seed if seed is None else seed
    language = ws.config.arena.language
    motions = [m for m in runner.load_motions(ws) if m.language == language]
    plan = scheduler.round_robin([e.name for e in ws.config.entries if not e.retired], motions, rounds=rounds,
                                 seed=seed)
    return ws.store.add_tournament(fmt, seed, {"rounds": rounds},
                                   [(p.motion_id, p.pro, p.con) for p in plan])


def play_one(ws: Workspace, motion_id: str, pro: str, con: str, judges: Iterable[str] = (),
             progress: Callable[[str], None] | None = None) -> Match:
    """Play one match now, judge it and store it as a one-match tournament; return the stored match.

    judges: judge names (none: every configured judge). progress(line) hears of each LLM call as
    it completes (default: stderr). Everything is checked before anything is written; a match that
    fails stays stored as failed and ArenaError says why.
    """
    motion = ws.store.motion(motion_id)
    if motion is None:
        known = ws.store.motion_ids()
        available = f"{len(known)} available, such as {known[0]}" if known else "none available"
        raise UserError(f"--motion {motion_id}: no such motion ({available}; see 'arena motion list')")
    for option, name in (("--pro", pro), ("--con", con)):
        try:
            entry = ws.config.entry(name)
        except UserError as exc:
            raise UserError(f"{option}: {exc}") from None
        if entry.retired:
            raise UserError(f"{option}: entry {name!r} is retired and plays no more matches")
    if pro == con:
        raise UserError(f"--pro and --con both name {pro!r}; a match needs two different entries")
    specs = _judge_specs(ws, judges)

    (match_id,) = ws.store.add_tournament("single", ws.config.arena.seed, {"motion": motion_id},
                                          [(motion_id, pro, con)])
    say = progress or (lambda line: print(line, file=sys.stderr))
    say(f"{match_id}: PRO {pro} vs CON {con} on {motion_id}: {motion.text}")

    def heard(tag, completion) -> None:
        where = " · ".join(part for part in (tag.stage, tag.side, tag.role) if part)
        say(f"{where}  ({completion.usage.completion_tokens} tokens{', cached' if completion.cached else ''})")

    try:
        asyncio.run(runner.Arena.of(ws).play_match(match_id, specs, listener=heard))
    except (ArenaError, UserError) as exc:
        # The match row is already stored (failed), so this is no longer a mistake in the input: exit 1.
        raise ArenaError(f"match {match_id} failed: {exc}") from None
    return ws.store.match(match_id)


def _judge_specs(ws: Workspace, names: Iterable[str]) -> list[JudgeSpec]:
    """The named judges, each once; every configured judge when none is named."""
    try:
        return [ws.config.judge(name) for name in dict.fromkeys(names)] or list(ws.config.judges)
    except UserError as exc:
        raise UserError(f"--judge: {exc}") from None


def judge(ws: Workspace, judges: Iterable[str] = (), *, rejudge: bool = False, concurrency: int = 4,
          progress: Callable[[str], None] | None = None) -> list[dict]:
    """Judge completed matches that lack verdicts of the named judges (none named: every configured judge).

    A match lacks them when the judge has no verdict of it or a failed run on it, so a rerun retries
    failed judgments; rejudge instead replaces every verdict of those judges. A judge's R runs on a
    match are written in one transaction, replacing its earlier ones. progress(line) hears of each
    match judged (default: stderr). Returns per judge {judge, matches, verdicts, failed_runs}.
    """
    specs = _judge_specs(ws, judges)
    if not specs:
        raise UserError(f"{ws.config.path.name}: no [[judges]] configured, so there is no one to judge")
    work = [(spec, m) for spec in specs for m in ws.store.matches_to_judge(spec.name, rejudge=rejudge)]
    arena = runner.Arena.of(ws)
    say = progress or (lambda line: print(line, file=sys.stderr))
    totals = {s.name: {"judge": s.name, "matches": 0, "verdicts": 0, "failed_runs": 0} for s in specs}

    async def one(spec: JudgeSpec, match_id: str, gate: asyncio.Semaphore) -> None:
        async with gate:
            verdicts = await arena.judge_stored(match_id, spec)
        failed = sum(v.failed for v in verdicts)
        total = totals[spec.name]
        total["matches"] += 1
        total["verdicts"] += len(verdicts)
        total["failed_runs"] += failed
        pro, con = score(verdicts)
        say(f"[{sum(t['matches'] for t in totals.values())}/{len(work)}] {match_id} {spec.name}: "
            + (f"{failed} of {len(verdicts)} runs failed" if failed else f"pro {pro:g} – con {con:g}"))

    async def main() -> None:
        gate = asyncio.Semaphore(concurrency)
        await asyncio.gather(*(one(spec, m, gate) for spec, m in work))

    asyncio.run(main())
    return list(totals.values())


def default_judge(ws: Workspace, judge: str | None) -> str:
    if judge is not None:
        return ws.config.judge(judge).name
    if not ws.config.judges:
        raise UserError(f"{ws.config.path.name}: no [[judges]] configured, so there are no verdicts to rate")
    return ws.config.judges[0].name


def rate(ws: Workspace, *, judge: str | None = None, bootstrap: int = 1000, seed: int = 0) -> dict:
    """Ratings from one judge's verdicts (default: the first configured judge)."""
    import pandas as pd
    from leaderboard.ratings import rate as fit

    judge = default_judge(ws, judge)
    rows = [r for r in results_rows(ws.store, judge) if r["dimension"] == "overall"]
    frame = pd.DataFrame(rows, columns=["match_id", "entry_a", "entry_b", "score_a", "score_b", "category",
                                        "dimension"])
    result = fit(frame, bootstrap=bootstrap, seed=seed)
    result["meta"]["judge"] = judge
    result["meta"]["simulated"] = any(e.simulated for e in ws.config.entries) or ws.config.judge(judge).simulated
    return result


def stats_agents(ws: Workspace) -> list[dict]:
    """Per debater kind, stage and role: calls per speech and tokens per call, over completed matches."""
    return agent_stats(ws.store.speech_usage())


def stats_judges(ws: Workspace) -> dict:
    """Per judge: matches, runs, failures, side bias, calls and cost; per pair: agreement and kappa."""
    return judge_stats([dict(r) for r in ws.store.verdict_rows()], [dict(r) for r in ws.store.judge_calls()],
                       [j.name for j in ws.config.judges])


def judge_bench(ws: Workspace, dataset: Path, judge: str, *, concurrency: int = 4,
                progress: Callable[[str], None] | None = None) -> dict:
    """Run a configured judge on human-labelled debates (layouts: judges.bench) and score it against them.

    Each debate is judged R times (the judge's runs); its outcome is the majority (match_outcome), and
    a debate with a failed run counts as failed, not scored. Nothing is stored but the LLM ledger and
    cache, whose calls carry match_id "bench:<id>".
    """
    spec = _judge_specs(ws, [judge])[0]
    items = bench.load_dataset(dataset, language=ws.config.arena.language)
    arena = runner.Arena.of(ws)
    say = progress or (lambda line: print(line, file=sys.stderr))
    rows: dict[str, dict] = {}

    async def one(item: bench.BenchItem, gate: asyncio.Semaphore) -> None:
        async with gate:
            verdicts = await arena.judge(f"bench:{item.id}", item.view, spec)
        failed = sum(v.failed for v in verdicts)
        pro, con = score(verdicts)
        rows[item.id] = {"id": item.id, "label": item.label, "outcome": None if failed else match_outcome(pro, con),
                         "score_pro": pro, "score_con": con, "failed_runs": failed}
        say(f"[{len(rows)}/{len(items)}] {item.id}: human {item.label}, {spec.name} "
            + (f"failed ({failed} of {len(verdicts)} runs)" if failed else rows[item.id]["outcome"]))

    async def main() -> None:
        gate = asyncio.Semaphore(concurrency)
        await asyncio.gather(*(one(item, gate) for item in items))

    asyncio.run(main())
    results = [rows[item.id] for item in items]
    return {"judge": spec.name, "dataset": str(dataset), "runs": spec.runs, "simulated": spec.simulated,
            **bench.metrics([r["label"] for r in results], [r["outcome"] for r in results]), "results": results}


def publish(ws: Workspace, out: Path | None = None) -> Path:
    """Write the static site (default <workspace>/site) from the first judge's verdicts; return its index."""
    from arena.site_data import site_data
    from leaderboard.site import publish as render

    judge = default_judge(ws, None) if ws.config.judges else None
    return render(Path(out) if out else ws.path / "site", site_data(ws, judge))


DEMO_CONFIG = '''\
# The `arena demo` workspace: six offline (simulated) entries of planted strengths and a simulated judge.
[arena]
language = "en"
seed = 0
judge_runs = 3

[search]
provider = "offline"

[motions]
sets = ["builtin:en"]
{entries}
[[judges]]
name = "sim-judge"
kind = "single"
model = "offline/judge"
runs = 3
'''
DEMO_ENTRIES = {"sim-ace": 1.5, "sim-bold": 0.9, "sim-calm": 0.3, "sim-deft": -0.3, "sim-eager": -0.9,
                "sim-faint": -1.5}


def demo(path: Path, *, rounds: int = 2, progress=None) -> Path:
    """A simulated tournament end to end: init, schedule, play, judge, rate, publish. Resumes if rerun."""
    path = Path(path)
    if not (path / "arena.toml").exists():
        entries = "".join(f'\n[[entries]]\nname = "{name}"\ndebater = "direct"\nmodel = "offline/{name}"\n'
                          f"strength = {strength}\n" for name, strength in DEMO_ENTRIES.items())
        init_workspace(path, DEMO_CONFIG.format(entries=entries))
    ws = runner.open_workspace(path)
    try:
        if not ws.store.match_rows():
            schedule(ws, "round-robin", rounds=rounds)
        runner.run(ws, concurrency=4, progress=progress)
        site = ws.path / "site"
        if site.exists():
            shutil.rmtree(site)
        return publish(ws, site)
    finally:
        ws.close()
