"""`arena run`: every pending match played and judged, in this process or in worker processes, with a progress
display, a budget and a summary line."""
from __future__ import annotations

import sys
import time
from typing import Any, Callable

from arena.app.runner.check import keyless, preflight, repeating_judges
from arena.app.runner.engine import MatchRunner, play_claimed, stop_on_sigterm
from arena.app.runner.progress import Progress
from arena.app.runner.until import said
from arena.app.shapes.reports import RunResult, SkippedMatch
from arena.app.runner.workers import fan_out
from arena.match.claims import LEASE_S
from arena.base.errors import UserError, plural
from arena.gateway.credentials import missing_message
from arena.domain.records import Entry, JudgeSpec
from arena.domain.scheduler import GENERATORS
from arena.base import terminal
from arena.base.clock import now
from arena.gateway.wire import preload
from arena.workspace.folder import Workspace


MATCHES_AT_ONCE = 4  # a run's matches at once when the user does not say


def run(ws: Workspace, *, concurrency: int | None = None, workers: int = 1, retry_failed: bool = False,
        budget: float | None = None, progress: Callable[[str], None] | None = None,
        lease_s: float = LEASE_S) -> RunResult:
    """Play and judge every pending match; resumable after any interruption, and shared: any number of runs
    on one workspace, and the `workers` processes of this one, split the matches, each played once.

    The run plays `concurrency` matches at once, split over its processes (shares; no more workers than
    that), and holds at most twice as many under way (play_claimed). concurrency None: MATCHES_AT_ONCE, and each
    model is sent at most the requests its server serves at once (its slots, measured by the probe), so that no
    call waits in a server's queue; given, the user is in charge: each model is sent up to [llm] max_concurrency.
    A match is committed, speeches and verdicts together, when its judging ends; a failed match is stored with its
    reason. budget (USD): no match starts once the ledger's cost (every process's paid calls; unknown prices count
    0) reaches it; matches already started finish. Ctrl-C, or a SIGTERM, cancels the matches in flight (their
    requests' connections closed) and puts them back to 'scheduled'; their completed LLM calls are cached, so the
    next run does not pay twice.

    A match an entry of which lacks a key (OPENAI_API_KEY unset) is skipped, not refused with the rest: the run
    plays the others, names the skipped ones and why at its start (through progress, or on stderr) and in
    `skipped`, and they stay scheduled for a run that has the key. A judge that lacks one, or a plan of skipped
    matches alone, is a UserError naming the keys, with nothing played (keyless_plan).

    progress(line) hears a line per finished match and a summary; without it a live status line is
    drawn on stderr when that is a terminal (plain lines otherwise). Returns {done, failed, total,
    not_started, elsewhere (played, or being played, by other runs), stopped: None | "budget" |
    "interrupted", cost (this run's), ledger_cost, unpriced, cpu_s (CPU seconds its processes spent
    playing and judging, start-up not included)}; with nothing to play, also running (matches other runs
    play) and failed_waiting (failed matches that only --retry-failed plays). A judge whose runs can only
    repeat one another is warned of first (arena.app.runner.check.repeating_judges), through progress or on stderr.
    """
    failed_before = now() if retry_failed else None  # a match that fails in this run is not retried by it
    pending = ws.store.pending_matches(failed_before, lease_s=lease_s)
    if not pending:  # nothing to claim: no probe, no progress display, and the summary says why
        statuses = ws.store.status_counts()
        idle: RunResult = {"done": 0, "failed": 0, "total": 0, "not_started": 0, "elsewhere": 0, "stopped": None,
                           "cost": 0.0, "ledger_cost": ws.store.total_cost(), "unpriced": 0, "cpu_s": 0.0,
                           "running": statuses.get("running", 0), "failed_waiting": statuses.get("failed", 0)}
        # A judge added once the matches were played has judged none of them, and a run plays, not judges
        unjudged = {j.name: n for j in ws.config.automatic_judges if (n := len(ws.store.matches_to_judge(j.name)))}
        if unjudged:
            idle["unjudged"] = unjudged
        return _with_awaiting(ws, idle)
    follow_slots = concurrency is None
    concurrency = MATCHES_AT_ONCE if concurrency is None else concurrency
    entries = [e for e in ws.store.pending_entries(failed_before, lease_s=lease_s)  # not every match's row
               if e in ws.debaters]
    judges = [j.name for j in ws.config.automatic_judges]
    # A missing key skips the matches of the entries that lack it (a judge's: all of them), before any call.
    skipping, skipped = keyless_plan(ws, pending, entries, judges, failed_before=failed_before, lease_s=lease_s)
    if skipped:
        left = {s["id"] for s in skipped}
        pending = [m for m in pending if m not in left]
    runner = MatchRunner.of(ws, lease_s=lease_s, follow_slots=follow_slots, skipping=skipping)
    say = progress or terminal.say
    if skipped:  # once, at the start, before any call
        say(f"warning: {plural(len(skipped), 'match')} of {len(pending) + len(skipped)} cannot be played, "
            f"for want of keys, and stay scheduled: {skipped_note(skipped)}; export the keys (they are read only "
            "from the environment) and 'arena run' plays them")
    for warning in repeating_judges(ws, judges):  # once, at the start: a warning, not a refusal
        say(f"warning: {warning}")
    # A model that cannot answer would fail every match it is in: find out first, once.
    preflight(ws, runner.llm, [e for e in entries if e not in skipping] + judges)
    asked, workers = workers, max(1, min(workers, len(pending), concurrency))
    display = Progress(len(pending), concurrency, say=progress, live=progress is None and sys.stderr.isatty())
    if workers < asked and workers < len(pending):
        display.say(f"--workers {asked} with --concurrency {concurrency}: {plural(workers, 'worker')}, one match "
                    f"each at least, so that no more than {plural(2 * concurrency, 'match')} are under way")
    options: dict[str, Any] = {"failed_before": failed_before, "budget": budget}
    if workers == 1:
        cpu = time.process_time()
        with stop_on_sigterm():
            stopped = play_claimed(runner, display, concurrency=concurrency, **options)
        cpu = time.process_time() - cpu
    else:
        parties: tuple[Entry | JudgeSpec, ...] = (*ws.config.entries, *ws.config.judges)
        if any(not spec.simulated for spec in parties):
            preload()  # once, in the parent: forked workers share it
        with stop_on_sigterm():  # the parent passes it on to its workers as it does a Ctrl-C
            stopped, cpu = fan_out(ws.path, shares(concurrency, workers), display, lease_s=lease_s,
                                   follow_slots=follow_slots, skipping=skipping, **options)
    still = set(ws.store.pending_matches(lease_s=lease_s))
    not_started = sum(1 for m in pending if m in still)
    parked = len(set(pending) & ws.store.awaiting_matches())
    result: RunResult = {"done": display.done, "failed": display.failed, "total": len(pending),
                         "not_started": not_started,
                         "elsewhere": len(pending) - display.done - display.failed - not_started - parked,
                         "stopped": stopped, "cost": display.cost, "ledger_cost": ws.store.total_cost(),
                         "unpriced": display.unpriced, "cpu_s": cpu}
    if skipped:
        result["skipped"] = skipped
    display.close()
    return _with_awaiting(ws, result)


def run_waiting(ws: Workspace, poll_s: float, **options: Any) -> RunResult:
    """run, then, while matches await people's speeches, look every poll_s seconds for a match a speech (or a
    deadline) has made playable and run again: the result of them all (done, failed and costs added up, each match
    counted once in total). A speech that comes in while a run goes on is played at once, not after a wait.
    Ctrl-C while waiting ends it as an interrupted run."""
    result = run(ws, **options)
    say = options.get("progress") or terminal.say
    told = 0
    while result["stopped"] is None:
        skipping = {name for s in result.get("skipped", ()) for names in s["missing"].values() for name in names}
        if not ws.store.pending_matches(skipping=skipping):
            waiting = len(ws.store.awaiting_matches())
            if not waiting:
                break
            if waiting != told:  # said once each time what it waits for changes
                told = waiting
                say(f"waiting for people's speeches on the web: {plural(told, 'match')} ('arena debaters "
                    f"status'); looking every {poll_s:g} s, Ctrl-C stops")
            try:
                time.sleep(poll_s)
            except KeyboardInterrupt:
                result["stopped"] = "interrupted"
            continue
        later = run(ws, **options)
        later["done"] += result["done"]
        later["failed"] += result["failed"]
        later["unpriced"] += result["unpriced"]
        later["cost"] += result["cost"]
        later["cpu_s"] += result["cpu_s"]
        # Each match once, however many runs continued it.
        later["total"] = (later["done"] + later["failed"] + later["not_started"] + later["elsewhere"]
                          + later.get("awaiting", 0))
        result = later
    return result


def keyless_plan(ws: Workspace, pending: list[str], entries: list[str], judges: list[str], *,
                 failed_before: str | None, lease_s: float) -> tuple[frozenset[str], list[SkippedMatch]]:
    """The entries (of entries) whose matches a run must skip, their keys being missing, and the pending matches
    skipped for it, each with the variables its entries lack. A UserError naming the keys when nothing could be
    played: a judge (of judges) lacks one, as every match is judged by every judge, or every pending match has an
    entry that does."""
    needs = keyless(ws, [*entries, *judges])
    if not needs:
        return frozenset(), []
    judging = sorted({c.name for callers in needs.values() for c in callers if c.table == "judge"})
    if judging:
        raise UserError(missing_message(needs, ws.config.path.name, f"every match is judged by "
                                        f"{'judge' if len(judging) == 1 else 'judges'} {', '.join(judging)}"))
    lacking = frozenset(c.name for callers in needs.values() for c in callers)
    playable = set(ws.store.pending_matches(failed_before, lease_s=lease_s, skipping=lacking))
    if not playable:
        raise UserError(missing_message(needs, ws.config.path.name,
                                        "every match to play has an entry that lacks a key"))
    skipped: list[SkippedMatch] = []
    for match_id in pending:
        pairing = ws.store.pairing(match_id)
        if match_id in playable or pairing is None:
            continue
        _, pro, con = pairing
        missing = {name: [c.name for c in callers if c.name in (pro, con)] for name, callers in needs.items()}
        skipped.append({"id": match_id, "pro": pro, "con": con,
                        "missing": {name: names for name, names in missing.items() if names}})
    return lacking, skipped


def skipped_note(skipped: list[SkippedMatch]) -> str:
    """Why matches were skipped, by variable: 'OPENAI_API_KEY is not set for entry gpt (m00001, m00002)'."""
    by: dict[str, tuple[dict[str, None], list[str]]] = {}
    for s in skipped:
        for name, entries in s["missing"].items():
            who, ids = by.setdefault(name, ({}, []))
            who.update(dict.fromkeys(entries))
            ids.append(s["id"])
    return "; ".join(f"{name} is not set for {'entry' if len(who) == 1 else 'entries'} {', '.join(who)} "
                     f"({', '.join(ids[:6])}{', ...' if len(ids) > 6 else ''})" for name, (who, ids) in by.items())


def _with_awaiting(ws: Workspace, result: RunResult) -> RunResult:
    """result, and how many matches wait for people's speeches on the web, when any do."""
    awaiting = len(ws.store.awaiting_matches())
    if awaiting:
        result["awaiting"] = awaiting
    return result


def shares(concurrency: int, workers: int) -> list[int]:
    """The run's matches at once split over its workers, as evenly as whole matches go (8 over 3: 3, 3, 2).

    Were each worker to play `concurrency`, the first to start would claim a small plan whole and leave the
    others idle, and the run would hold workers × 2N matches under way rather than 2N."""
    return [concurrency // workers + (k < concurrency % workers) for k in range(workers)]


def summary(result: RunResult, budget: float | None = None) -> str:
    """How a run ended, in one line for people; a run that found nothing to play says how to schedule, and what
    there is to judge. An --until run says first how it ended; having played nothing, nothing more."""
    if "until" in result:
        played: RunResult = {**result}
        del played["until"]
        idle = not played["total"] and not any(played.get(k) for k in ("unjudged", "running", "failed_waiting",
                                                                        "awaiting"))
        return said(result["until"]) if idle else f"{said(result['until'])}; {summary(played, budget)}"
    if not result["total"] and (unjudged := result.get("unjudged")):
        rest: RunResult = {**result}
        del rest["unjudged"]
        lacking = ", ".join(f"{plural(n, 'done match')} {'has' if n == 1 else 'have'} no verdict of judge {judge!r}"
                            for judge, n in unjudged.items())
        if rest.get("running") or rest.get("failed_waiting") or rest.get("awaiting"):
            return f"{summary(rest, budget)}; {lacking}: 'arena judge' judges them"
        # not "schedule some": what is left to do is judging what was played before the judge came
        return f"nothing to play: every scheduled match is done, but {lacking}: 'arena judge' judges them"
    if not result["total"]:
        running, waiting = result.get("running", 0), result.get("failed_waiting", 0)
        if result.get("awaiting"):
            return (f"{'stopped waiting' if result['stopped'] == 'interrupted' else 'nothing to play'}: "
                    f"{plural(result['awaiting'], 'match')} "
                    f"{'awaits' if result['awaiting'] == 1 else 'await'} people's speeches on the web ('arena "
                    "debaters status'); 'arena run' continues each once its speech is in")
        if running:
            return f"nothing to play: {plural(running, 'match')} under way in other runs on this workspace"
        if waiting:
            return (f"nothing to play: no scheduled matches, and {plural(waiting, 'failed match')} "
                    f"{'waits' if waiting == 1 else 'wait'} for 'arena run --retry-failed'")
        return ("nothing to play: no scheduled matches. Schedule some with 'arena schedule --format round-robin' "
                f"(or {', '.join(f for f in GENERATORS if f != 'round-robin')}), then 'arena run'")
    line = f"{result['done']} done, {result['failed']} failed, of {result['total']}"
    if result.get("elsewhere"):
        line += f" ({result['elsewhere']} played or being played by other runs on this workspace)"
    left = result["not_started"]
    matches = plural(left, "match")
    if result["stopped"] == "interrupted":
        line += f"; interrupted: {matches} not done are scheduled again, and 'arena run' resumes them"
    elif result["stopped"] == "budget":
        line += (f"; budget reached: the ledger's cost ${result['ledger_cost']:.4f} is at or over the budget "
                 f"${budget:.4f}, so {matches} stay scheduled")
    if result.get("skipped"):
        skipped = result.get("skipped", [])
        line += (f"; {plural(len(skipped), 'match')} skipped for want of keys, still scheduled: "
                 f"{skipped_note(skipped)}; 'arena run' plays them once the keys are exported")
    if result.get("awaiting"):
        line += (f"; {plural(result['awaiting'], 'match')} {'awaits' if result['awaiting'] == 1 else 'await'} "
                 "people's speeches on the web ('arena debaters status'); a later 'arena run' continues each once "
                 "its speech is in")
    if budget is not None and result["unpriced"]:
        line += (f" (note: {plural(result['unpriced'], 'call')} had no known price and counted as $0 against the "
                 "budget)")
    return line
