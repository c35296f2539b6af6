"""`arena schedule` (the plan) and `arena run` (playing it), with the dry run's report."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, cast

import click

from arena.app.cli.common import (CONCURRENCY, SEED, FiniteFloat, LazyChoice, echo, echo_json, formats, open_ws, table,
                                  text_format_option, workspace_option)
from arena.base import limits
from arena.base.errors import UserError, plural

if TYPE_CHECKING:  # the shapes of what the facade returns, for the renderers
    from arena.app.shapes.reports import DryRun, TimeEstimate, UntilDryRun


# What an active draw's p is, in --show's help and under its table.
SELECTION = ("the probability with which the active draw picked the match's pair (each pair's in proportion to "
             "how much one more match would shrink the variance of its rating difference)")


@click.command()
@click.option("--format", "fmt", type=LazyChoice(formats))
@click.option("--rounds", type=click.IntRange(1, limits.MAX_ROUNDS), default=None,
              help="round-robin: motions per pair (each played twice, sides swapped); swiss: rounds. Default 1.")
@click.option("--matches", type=click.IntRange(1, limits.MAX_PLAN_MATCHES), default=None,
              help="Matches to schedule (random, active; onboard: default 16).")
@click.option("--entry", "entry_name", default=None, help="The entry to onboard.")
@click.option("--seed", type=SEED, default=None, help="Default: [arena] seed.")
@click.option("--show", is_flag=True, help="List the stored plan instead of scheduling; when an active draw is "
              "among it, a column p: " + SELECTION + ".")
@workspace_option
def schedule(fmt: str | None, rounds: int | None, matches: int | None, entry_name: str | None, seed: int | None,
             show: bool, workspace: Path) -> None:
    """Plan a tournament; the plan is stored before anything runs, with flags for its anomalies."""
    from arena.app import commands as app

    if show:
        given = [o for o, v in (("--format", fmt), ("--rounds", rounds), ("--matches", matches),
                                ("--entry", entry_name), ("--seed", seed)) if v is not None]
        if given:
            raise UserError(f"--show lists the stored plan and takes no {given[0]}")
        plan = app.schedule_show(open_ws(workspace))
        drawn = any(r["probability"] is not None for r in plan["matches"])  # only active draws have one
        table([{**r, "p": None if r["probability"] is None else f"{r['probability']:.3f}"} for r in plan["matches"]],
              ["id", "tournament", "format", "round", "status", "motion", "pro", "con", *(["p"] if drawn else [])])
        if drawn:
            echo(f"p: {SELECTION}")
        for t in plan["tournaments"]:
            for flag in t["flags"]:
                echo(f"tournament {t['id']} ({t['format']}): {flag}")
        return
    if fmt is None:
        raise UserError("--format is required (or use --show)")
    done = app.schedule(open_ws(workspace), fmt, rounds=rounds, matches=matches, entry=entry_name, seed=seed)
    ids = done.match_ids
    span = "" if not ids else f" ({ids[0]})" if len(ids) == 1 else f" ({ids[0]}–{ids[-1]})"
    echo(f"scheduled {plural(len(ids), f'{fmt} match')}{span}")
    for flag in done.flags:
        echo(f"flag: {flag}")


@click.command()
@click.option("--concurrency", type=CONCURRENCY, default=None,
              help="Matches played at once, split over the workers (each at least one), each model sent up to "
              "[llm] max_concurrency calls at once.  [default: 4 matches, each model sent at most the calls its "
              "server serves at once, as 'arena check' measured]")
@click.option("--workers", type=click.IntRange(1, limits.MAX_WORKERS), default=1, show_default=True,
              help="Worker processes sharing the matches, each with its own event loop.")
@click.option("--budget", type=FiniteFloat(min=0), default=None, metavar="USD",
              help="Start no match once the ledger's cost reaches USD; matches under way finish.")
@click.option("--dry-run", is_flag=True, help="Play the plan on the offline simulator and print its projected calls, "
              "tokens and cost per model, and its wall time from the models `arena check` measured; write nothing.")
@click.option("--retry-failed", is_flag=True, help="Play failed matches again.")
@click.option("--until", "until", default=None, metavar="CRITERION",
              help="Go on past the plan until the board is settled: play active batches drawn among the pairs the "
              "criterion waits on, refitting the default judge's ratings after each, until top=K (each of the K best "
              "entries' 95% interval wholly above every entry's below it) or separability=X (a share X of entry "
              "pairs with intervals apart) holds, --max-matches are done or --budget is spent.")
@click.option("--batch", type=click.IntRange(1, limits.MAX_PLAN_MATCHES), default=None,
              help="--until: matches per batch.  [default: the number of active entries]")
@click.option("--max-matches", type=click.IntRange(1), default=None,
              help="--until: stop once the workspace holds this many done matches.")
@click.option("--wait", "wait_s", type=FiniteFloat(min=0.1), default=None, metavar="SECONDS", is_flag=False,
              flag_value=10.0, help="While matches await people's speeches on the web, look for them every SECONDS "
              "(default 10) and continue each as soon as it is in; Ctrl-C stops waiting.")
@text_format_option
@workspace_option
def run(concurrency: int | None, workers: int, budget: float | None, dry_run: bool, retry_failed: bool,
        until: str | None, batch: int | None, max_matches: int | None, wait_s: float | None, fmt: str,
        workspace: Path) -> None:
    """Play and judge every scheduled match not yet done; resumes after an interruption (exit 130 on Ctrl-C or
    SIGTERM). On a terminal, progress shows each match under way (stage, side, role, time, and why a call is asked
    again) and each retry as it happens; its calls count every try the ledger records. With --until, go on in
    batches until the board is settled (exit 0 whether the criterion was met or a limit stopped it)."""
    from arena.app import commands as app

    if until is None:
        given = [o for o, v in (("--batch", batch), ("--max-matches", max_matches)) if v is not None]
        if given:
            raise UserError(f"{given[0]} goes with --until (e.g. --until top=3)")
    criterion = None if until is None else app.parse_criterion(until)
    if fmt == "json" and not dry_run and criterion is None:
        raise UserError("--format json goes with --dry-run (the projection) or --until (the result); a run prints "
                        "its summary line")
    ws = open_ws(workspace)
    if dry_run:
        projected = app.dry_run(ws, retry_failed=retry_failed, concurrency=concurrency, until=criterion,
                                batch=batch, max_matches=max_matches)
        if fmt == "json":
            echo_json(projected)
        else:
            _projection(projected)
        return
    if criterion is not None:
        result = app.run_until(ws, criterion, batch=batch, max_matches=max_matches, concurrency=concurrency,
                               workers=workers, retry_failed=retry_failed, budget=budget, wait_s=wait_s,
                               progress=None if fmt == "text" else _to_stderr)
    else:
        result = app.run(ws, concurrency=concurrency, workers=workers, retry_failed=retry_failed, budget=budget,
                         wait_s=wait_s)
    if fmt == "json":
        echo_json(result)
    else:
        echo(app.run_summary(result, budget))
    if result["stopped"] == "interrupted":
        sys.exit(130)
    if result["failed"]:
        sys.exit(1)


def _to_stderr(line: str) -> None:
    """Progress beside JSON on stdout: on stderr."""
    echo(line, err=True)


def _projection(p: DryRun) -> None:
    """arena run --dry-run's report (as arena.app.commands.dry_run returns it)."""
    sampled = "played" if p["sampled"] == p["matches"] else (
        f"projected from {plural(p['sampled'], 'sampled match')} played")
    if "until" in p:  # --until: how many matches past the plan, and how sure
        u = cast("UntilDryRun", p)["until"]
        echo(f"until {u['criterion']}: about {plural(u['matches'], 'more match')} past the "
             f"{plural(u['done'], 'done match')} (10th–90th percentile {u['low']}–{u['high']}), the median of "
             f"{u['simulations']} simulations of the run on the current board (each entry's rating drawn from its "
             f"interval); the criterion held in {u['met_share']:.0%} of them within {plural(u['cap'], 'more match')}"
             + ("" if u["met_share"] == 1 else " (--max-matches sets that cap)"))
    what = plural(p["matches"], "match") + " (pending and projected)" if "until" in p else plural(p["matches"],
                                                                                                   "pending match")
    echo(f"dry run: {what} {sampled} on the offline simulator; nothing was written\n")
    if p["sampled"] < p["matches"]:  # say what a projection is, once, before its figures
        from arena.app.commands import DRY_RUN_EVERY

        echo(f"(one in {DRY_RUN_EVERY} of the matches alike in format, motion language and each side's debater "
             "kind is played; the others count as their like's mean)\n")
    table([{**r, "calls": f"{r['calls']:,}", "prompt_tokens": f"{r['prompt_tokens']:,}",
             "completion_tokens": f"{r['completion_tokens']:,}",
             "cost": "unknown" if r["cost"] is None else f"${r['cost']:.4f}"} for r in p["models"]],
           ["model", "calls", "prompt_tokens", "completion_tokens", "cost"])
    per, models = p["per_match"], len(p["models"])
    if p["unknown"]:  # a total over some models only says so, and why the others have no price
        echo(f"\nprojected cost: ${p['cost']:.4f} for {len(p['models']) - len(p['unknown'])} of "
             f"{plural(models, 'model')} (partial); {len(p['unknown'])} unpriced:")
        for row in p["why_unknown"]:
            echo(f"  {row['model']}: {row['reason']}")
    else:
        echo(f"\nprojected cost: ${p['cost']:.4f}")
    echo(f"per match: {per['calls']:,.1f} calls, {per['tokens']:,.0f} tokens, ${per['cost']:.4f}"
         + (" (priced models only)" if p["unknown"] else ""))
    if p["searches"] and p["search_provider"] != "offline":
        echo(f"plus {plural(p['searches'], p['search_provider'] + ' search')} (not priced here)")
    echo(_time_line(p["time_s"]))
    for failure in p["failed"]:
        echo(f"not counted (failed in the simulation): {failure['id']}: {failure['error']}")


def _time_line(t: TimeEstimate) -> str:
    """The dry run's projected wall time in a line: the estimate, each timed model's part, the models not timed."""
    from arena.base.clock import span as duration

    parts = [f"{m['model']} at {plural(m['slots'], 'slot')}, {m['tokens_per_s']:,.0f} tokens/s: "
             f"{duration(m['work_s'])} of work" for server in t["basis"]["servers"] for m in server["models"]]
    if t["basis"]["bound"] == "matches" and t["basis"]["servers"]:
        parts.append(f"a match's calls in turn take {duration(t['basis']['match_s'])}, "
                     f"{plural(t['basis']['at_once'], 'match')} at once")
    if t["simulated"]:
        parts.append(f"{', '.join(t['simulated'])}: simulated, no time")
    if t["unmeasured"]:
        names = sorted({n for row in t["unmeasured"] for n in row["names"]})
        check = "arena check" + (f" {' '.join(names)}" if len(names) <= 4 else "")  # past a few: check them all
        parts.append(f"not timed: {', '.join(row['model'] for row in t['unmeasured'])} — run "
                     f"'{check}' to measure {'it' if len(t['unmeasured']) == 1 else 'them'}")
    head = "time: unknown" if t["estimate"] is None else f"time: about {duration(t['estimate'])}"
    if t["estimate"] is not None and t["unmeasured"]:
        head += " for the measured models"
    return f"{head} ({'; '.join(parts)})" if parts else head
