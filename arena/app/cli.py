"""The `arena` command line: each command parses, calls one library function, and prints.

Heavy imports (litellm, pandas, the rating code) happen inside commands, so `arena --help`
stays fast.
"""
from __future__ import annotations

import functools
import json
import math
import os
import sys
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Mapping, Sequence

import click

from arena.base import limits
from arena.base.errors import ArenaError, UserError, plural
from arena.gateway.redact import redact

if TYPE_CHECKING:  # the shapes of what the facade returns (arena.app.commands), for the renderers
    from arena.app.commands import RateOptions
    from arena.app.shapes.figures import (Coefficient, EntryPoints, JudgeConsistency, KindPoints, MotionShare, PairPoints,
                                   PaperFigures, PeopleConsistency, PeopleScope, RatingRow, RatingsMeta, SameFamily,
                                   ScopeConsistency, SideFit)
    from arena.app.shapes.reports import DryRun, OpenTurn, TimeEstimate
    from arena.app.shapes.records import MatchJson, Playing


class ArenaGroup(click.Group):
    """Maps our errors to exit codes: a user's mistake is 2, any other failure 1; never a traceback."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except UserError as exc:
            click.echo(f"error: {redact(str(exc))}", err=True)
            sys.exit(2)
        except ArenaError as exc:  # a provider's message may echo the key it was sent
            click.echo(f"error: {redact(str(exc))}", err=True)
            sys.exit(1)
        except KeyboardInterrupt:  # Ctrl-C outside a run's own handling (e.g. while opening): still no traceback
            click.echo("interrupted", err=True)
            sys.exit(130)
        except Exception as exc:
            from arena.base.files import no_space, no_space_message  # lazy: `arena --help` stays fast

            if not no_space(exc):
                raise
            click.echo(f"error: {no_space_message(exc)}", err=True)  # a full disk: the path, and what to do
            sys.exit(1)


class LazyChoice(click.Choice):
    """A click.Choice whose values come from their one home when first needed, so `arena --help` does not
    import that home."""

    def __init__(self, load: Callable[[], Sequence[str]]):
        self._load, self.case_sensitive = load, True

    @functools.cached_property  # click's attribute, made lazy
    def choices(self) -> tuple[str, ...]:  # type: ignore[override]
        return tuple(self._load())


class FiniteFloat(click.FloatRange):
    """A click.FloatRange that also refuses NaN and the infinities: a NaN passes its bounds (it fails every
    comparison), and a budget of NaN or infinity would never stop a run."""

    name = "finite float"

    def convert(self, value, param, ctx):
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number.", param, ctx)
        return number


# The bounds of every number an option takes (arena.base.limits, documented under Limits in docs/reference/index.md).
SEED = click.IntRange(0, limits.MAX_SEED)
CONCURRENCY = click.IntRange(1, limits.MAX_CONCURRENCY)
HOURS = FiniteFloat(0, limits.MAX_TURN_HOURS, min_open=True)


def _formats() -> list[str]:
    from arena.domain.scheduler import GENERATORS

    return list(GENERATORS)


def _categories() -> tuple[str, ...]:
    from arena.domain.records import CATEGORIES

    return CATEGORIES


workspace_option = click.option("-w", "--workspace", "workspace", type=click.Path(file_okay=False, path_type=Path),
                                default=Path("."), show_default="current folder", help="Workspace folder.")
format_option = click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table",
                             show_default=True)
text_format_option = click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
                                  show_default=True)  # for commands that show one thing


def _open(workspace: Path):
    """Open (and check) the workspace; it is closed when the command ends, checkpointing the WAL."""
    from arena.app.commands import open_workspace

    ws = open_workspace(workspace)
    click.get_current_context().call_on_close(ws.close)
    return ws


def _table(rows: Sequence[Mapping[str, object]], columns: list[str]) -> None:
    if not rows:
        click.echo("(none)")
        return
    cells = [[("" if r.get(c) is None else str(r.get(c))) for c in columns] for r in rows]
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(columns)]
    click.echo("  ".join(c.ljust(w) for c, w in zip(columns, widths)).rstrip())
    for row in cells:
        click.echo("  ".join(v.ljust(w) for v, w in zip(row, widths)).rstrip())


def _json(data: object) -> None:
    click.echo(json.dumps(data, indent=2, ensure_ascii=False))


@click.group(cls=ArenaGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="debate-arena")
def main():
    """Debate Arena: LLM debaters, LLM judges, Bradley–Terry ratings, static leaderboards."""
    from arena.gateway.credentials import drop_empty_keys

    drop_empty_keys(os.environ)  # ANTHROPIC_API_KEY="" is named as not set, and no request is sent without it


@main.command()
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path), default=Path("."))
@click.option("--preset", default=None, metavar="NAME",
              help="Set up a published arena instead of the template: agent4debate (the paper's Chinese arena); or "
                   "verbose, a simulated arena whose judge likes long speeches.")
def init(directory: Path, preset: str | None):
    """Create DIRECTORY/arena.toml (a commented template, or a preset's) and DIRECTORY/arena.db."""
    from arena.app import commands as app

    if preset is None:
        click.echo(app.init(directory))
        return
    config_path, scheduled = app.init_preset(directory, preset)
    click.echo(config_path)
    click.echo(f"preset {preset}: {len(scheduled.match_ids)} matches scheduled ({scheduled.format}); "
               f"'arena run --dry-run -w {directory}' projects their calls and cost", err=True)


@main.command()
@click.option("-w", "--workspace", "workspace", type=click.Path(file_okay=False, path_type=Path),
              default=Path("arena-demo"), show_default=True, help="Workspace folder for the demo.")
@click.option("--language", type=click.Choice(["en", "zh"]), default="en", show_default=True,
              help="Language of the motions, prompts and simulated speeches.")
def demo(workspace: Path, language: str):
    """Run a simulated tournament end to end (offline), publish the site, print its path."""
    from arena.app import commands as app

    click.echo(app.demo(workspace, language=language))


@main.command()
@format_option
def kinds(fmt: str):
    """List the debater, judge and importer kinds (built-in and plug-in) with their params, defaults and help."""
    from arena.app import commands as app

    rows = app.kinds()
    if fmt == "json":
        _json(rows)
        return
    for k, row in enumerate(rows):
        where = "" if row["source"] == "built-in" else f"  (plug-in: {row['source']})"
        click.echo(f"{'' if k == 0 else chr(10)}{row['family']} kind {row['kind']}{where}")
        _table([{**p, "default": json.dumps(p["default"], ensure_ascii=False)} for p in row["params"]],
               ["name", "default", "accepts", "help"])


@main.group()
def entry():
    """Registered debater entries."""


@entry.command("list")
@workspace_option
@format_option
def entry_list(workspace: Path, fmt: str):
    """List entries with their match counts."""
    from arena.app import commands as app

    ws = _open(workspace)
    rows = app.entry_list(ws)
    if fmt == "json":
        _json(rows)
        return
    _table([{**r, "status": "retired" if r["retired"] else "imported" if r["debater"] == "imported" else "active"}
            for r in rows],
           ["name", "debater", "model", "family", "matches", "forfeits", "strength", "status"])


def _params(ctx, option, pairs: tuple[str, ...]) -> dict:
    from arena.workspace.registration import parse_params

    try:
        return parse_params(pairs)
    except UserError as exc:
        raise click.BadParameter(str(exc)) from None


@entry.command("add")
@click.argument("name")
@click.option("--debater", required=True, help="The debater kind (direct, ... or a plug-in).")
@click.option("--model", required=True, help="PROVIDER/MODEL, e.g. openai/gpt-4o; offline/NAME is the simulator.")
@click.option("--api-base", default=None, help="http(s) URL of the model's server, e.g. a local one.")
@click.option("--param", "params", multiple=True, metavar="KEY=VALUE", callback=_params,
              help="A param of the debater kind; VALUE is read as TOML (0.5, 200, true), else as text. Repeatable.")
@click.option("--strength", type=float, default=None, help="Planted strength (offline models only).")
@click.option("--family", default=None, help="Who made the model, e.g. meta for a Llama fine-tune (default: derived "
              "from --model); a jury seats no model of a debater's family.")
@workspace_option
def entry_add(name: str, debater: str, model: str, api_base: str | None, params: dict, strength: float | None,
              family: str | None, workspace: Path):
    """Register an entry: append an [[entries]] table to arena.toml, keeping the rest of the file as is."""
    from arena.app import commands as app

    ws = _open(workspace)
    e = app.entry_add(ws, name, debater=debater, model=model, api_base=api_base, params=params, strength=strength,
                      family=family)
    click.echo(f"added entry {e.name!r} ({e.debater} on {e.model}) to {ws.config.path}")


@entry.command("show")
@click.argument("name")
@workspace_option
@text_format_option
def entry_show(name: str, workspace: Path, fmt: str):
    """Show one entry: configuration, status and completed matches."""
    from arena.app import commands as app

    data = app.entry_show(_open(workspace), name)
    if fmt == "json":
        _json(data)
        return
    for key, value in data.items():
        if key == "params":
            value = ", ".join(f"{k} = {v!r}" for k, v in data["params"].items())
        if key != "retired":  # status says it
            click.echo(f"{key}: {'(none)' if value == '' else value}")


@entry.command("retire")
@click.argument("name")
@workspace_option
def entry_retire(name: str, workspace: Path):
    """Retire an entry: it keeps its matches and rating but is no longer scheduled."""
    from arena.app import commands as app

    app.entry_retire(_open(workspace), name)
    click.echo(f"retired entry {name!r}: its matches still count, and new schedules leave it out")


@entry.command("remove")
@click.argument("name")
@workspace_option
def entry_remove(name: str, workspace: Path):
    """Remove an entry that is in no match: its [[entries]] table leaves arena.toml, the rest of the file as is.
    An entry that has played or is scheduled is retired instead (arena entry retire)."""
    from arena.app import commands as app

    ws = _open(workspace)
    app.entry_remove(ws, name)
    click.echo(f"removed entry {name!r} from {ws.config.path}")


@main.group()
def motion():
    """The motion library: the sets [motions] sets names in arena.toml."""


@motion.command("list")
@click.option("--category", type=LazyChoice(_categories), default=None, help="Only this category.")
@workspace_option
@format_option
def motion_list(category: str | None, workspace: Path, fmt: str):
    """List the motions of the configured sets."""
    from arena.app import commands as app

    rows = app.motion_list(_open(workspace), category)
    _json(rows) if fmt == "json" else _table(rows, ["id", "category", "language", "set", "text"])


@motion.command("show")
@click.argument("motion_id")
@workspace_option
@text_format_option
def motion_show(motion_id: str, workspace: Path, fmt: str):
    """Show one motion: text, category, language, info slide, set and stored matches."""
    from arena.app import commands as app

    data = app.motion_show(_open(workspace), motion_id)
    if fmt == "json":
        _json(data)
        return
    for key, value in data.items():
        click.echo(f"{key}: {'(none)' if value is None else value}")


@motion.command("import")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@workspace_option
def motion_import(file: Path, workspace: Path):
    """Copy a YAML or JSONL motion file into the workspace (motions/) and add it to [motions] sets."""
    from arena.app import commands as app

    done = app.motion_import(_open(workspace), file)
    click.echo(f"imported {plural(done['motions'], 'motion')} from {file} as {done['set']} (copied to {done['path']})")
    for note in done["notes"]:
        click.echo(f"note: {note}")


@main.command("import")
@click.argument("kind")
@click.argument("folder", metavar="DIR", type=click.Path(path_type=Path))
@click.option("--judge", default=None, metavar="NAME",
              help="Name of the imported judge whose runs are the source's verdicts (default: the importer's).")
@workspace_option
@text_format_option
def import_(kind: str, folder: Path, judge: str | None, workspace: Path, fmt: str):
    """Import debates held elsewhere: KIND is an importer (lechmazur, arena, or a plug-in; see 'arena kinds')."""
    from arena.app import commands as app

    done = app.import_debates(_open(workspace), kind, folder, judge=judge)
    if fmt == "json":
        _json(done)
        return
    judges = plural(len(done["judges"]), "judge") + (f" ({', '.join(done['judges'])})" if done["judges"] else "")
    added = (f"{plural(done['matches'], 'match')}, {plural(done['entries'], 'entry')}, {judges}, "
             f"{plural(done['runs'], 'judge run')}, {plural(done['motions'], 'motion')}")
    known = done["known"]
    click.echo(f"imported from {done['source']}: {added}" if done["matches"] or done["entries"] or done["judges"]
               else f"nothing new from {done['source']}: its {plural(known['matches'], 'match')}, "
                    f"{plural(known['entries'], 'entry')} and {plural(known['judges'], 'judge')} are in the workspace "
                    "already")
    checked = done["speech_checks"]
    if checked and checked["flagged"]:
        counts = Counter(f["problem"].split(":", 1)[0] for f in checked["flagged"])
        click.echo(f"speech checks: {len(checked['flagged'])} of {plural(checked['speeches'], 'speech')} would "
                   f"forfeit if played here ({', '.join(f'{k} {v}' for k, v in counts.most_common())}); imported "
                   "debates are reported, not forfeited:")
        for f in checked["flagged"][:5]:
            click.echo(f"  {f['match']} {f['stage']} {f['side'].upper()}: {f['problem']}")
        if len(checked["flagged"]) > 5:
            click.echo(f"  ... and {len(checked['flagged']) - 5} more (--format json lists them all)")
    skipped = done["skipped"]
    if skipped:
        click.echo(f"skipped {len(skipped)}:")
        for s in skipped[:5]:
            click.echo(f"  {s['path']}: {s['reason']}")
        if len(skipped) > 5:
            click.echo(f"  ... and {len(skipped) - 5} more (--format json lists them all)")


@main.group()
def match():
    """Matches: play one, list them, show one."""


@match.command("list")
@workspace_option
@format_option
def match_list(workspace: Path, fmt: str):
    """List matches with their status."""
    from arena.app import commands as app

    rows = app.match_list(_open(workspace))
    _json(rows) if fmt == "json" else _table(rows, ["id", "status", "motion", "pro", "con", "forfeit", "error"])


@match.command("show")
@click.argument("match_id")
@workspace_option
@text_format_option
def match_show(match_id: str, workspace: Path, fmt: str):
    """Show one match: motion, speeches in its format's order, verdicts, score; for a running match, what it is
    doing (stage, side and role of its call in flight, its calls so far, since when)."""
    from arena.app import commands as app

    data = app.match_show(_open(workspace), match_id)
    _json(data) if fmt == "json" else _match_text(data)


@match.command("messages")
@click.argument("match_id")
@workspace_option
@text_format_option
def match_messages(match_id: str, workspace: Path, fmt: str):
    """Show what each agent of a completed match was sent and answered, in order, as stored."""
    from arena.app import commands as app

    messages = app.match_messages(_open(workspace), match_id)
    if fmt == "json":
        _json(messages)
        return
    for k, m in enumerate(messages, start=1):
        where = " · ".join(x for x in (m["stage"], (m["side"] or "").upper(), m["role"]) if x)
        click.echo(f"=== {k}. {where} · {m['created_at']} ===\n--- prompt ---\n{m['prompt']}\n"
                   f"--- response ---\n{m['response']}\n")


@match.command("play")
@click.option("--motion", "motion_id", required=True, help="Motion id (see 'arena motion list').")
@click.option("--pro", required=True, help="Entry speaking for the motion.")
@click.option("--con", required=True, help="Entry speaking against it.")
@click.option("--judge", "judges", multiple=True, help="A judge to use; repeat for more (default: all configured).")
@workspace_option
def match_play(motion_id: str, pro: str, con: str, judges: tuple[str, ...], workspace: Path):
    """Play one match now, showing progress; store it, then print its transcript and score."""
    from arena.app import commands as app

    _match_text(app.match_play(_open(workspace), motion_id, pro, con, judges,
                               progress=lambda line: click.echo(line, err=True)))


def _playing(p: Playing) -> str:
    """A running match's step for reading: 'rebuttal · PRO writer · 14 calls · since 22:41:05 (3m12s)', local time."""
    from datetime import datetime

    from arena.base.clock import span

    step = " · ".join(x for x in (p["stage"], " ".join(y for y in ((p["side"] or "").upper(), p["role"]) if y)) if x)
    since = datetime.fromisoformat(p["since"])
    return (f"{step or 'starting'} · {plural(p['calls'], 'call')} · since {since.astimezone():%H:%M:%S} "
            f"({span((datetime.now(since.tzinfo) - since).total_seconds())})")


def _match_text(data: MatchJson) -> None:
    """A match (as `arena match show --format json` gives it) for reading: motion, speeches by stage, verdicts,
    score."""
    click.echo(f"{data['id']}  [{data['status']}]{'  SIMULATED' if data['simulated'] else ''}")
    click.echo(f"Motion ({data['motion']['category']}): {data['motion']['text']}")
    click.echo(f"Pro: {data['pro']}   Con: {data['con']}   Format: {data['format']}")
    if "awaiting" in data:
        turn = data["awaiting"]
        click.echo(f"Awaiting {turn['entry']}'s {turn['side'].upper()} {turn['stage']} speech (its turn open since "
                   f"{turn['since']}) until {turn['deadline']}")
    if "progress" in data:
        click.echo(f"Playing: {_playing(data['progress'])}")
    for s in data["speeches"]:
        click.echo(f"\n--- {s['title']} · {s['side'].upper()} ---\n{s['text']}")
        for k, ref in enumerate(s["references"], start=1):
            click.echo(f"  [{ref.get('number') or k}] {ref['title']} <{ref['url']}>")
    for v in data["verdicts"]:
        click.echo(f"\n{v['judge']} run {v['run'] + 1}: {v['overall'] or 'FAILED'} {v['dimensions']}\n  "
                   f"{v.get('error') or v['rationale']}")
    if data["forfeit"]:
        winner = "con" if data["forfeit"] == "pro" else "pro"
        click.echo(f"\nForfeit: {data['forfeit'].upper()} forfeited, so {winner.upper()} takes every run of every "
                   f"judge.\n  {data['forfeit_reason']}")
        return
    if data["status"] != "running":  # nothing is judged before the match is committed: no score to show yet
        click.echo(f"\nScore: pro {data['score']['pro']} – con {data['score']['con']}")


@main.command()
@click.option("--format", "fmt", type=LazyChoice(_formats))
@click.option("--rounds", type=click.IntRange(1, limits.MAX_ROUNDS), default=None,
              help="round-robin: motions per pair (each played twice, sides swapped); swiss: rounds. Default 1.")
@click.option("--matches", type=click.IntRange(1, limits.MAX_PLAN_MATCHES), default=None,
              help="Matches to schedule (random, active; onboard: default 16).")
@click.option("--entry", "entry_name", default=None, help="The entry to onboard.")
@click.option("--seed", type=SEED, default=None, help="Default: [arena] seed.")
@click.option("--show", is_flag=True, help="List the stored plan instead of scheduling.")
@workspace_option
def schedule(fmt: str | None, rounds: int | None, matches: int | None, entry_name: str | None, seed: int | None,
             show: bool, workspace: Path):
    """Plan a tournament; the plan is stored before anything runs, with flags for its anomalies."""
    from arena.app import commands as app

    if show:
        given = [o for o, v in (("--format", fmt), ("--rounds", rounds), ("--matches", matches),
                                ("--entry", entry_name), ("--seed", seed)) if v is not None]
        if given:
            raise UserError(f"--show lists the stored plan and takes no {given[0]}")
        plan = app.schedule_show(_open(workspace))
        _table([{**r, "p": None if r["probability"] is None else f"{r['probability']:.3f}"} for r in plan["matches"]],
               ["id", "tournament", "format", "round", "status", "motion", "pro", "con", "p"])
        for t in plan["tournaments"]:
            for flag in t["flags"]:
                click.echo(f"tournament {t['id']} ({t['format']}): {flag}")
        return
    if fmt is None:
        raise UserError("--format is required (or use --show)")
    done = app.schedule(_open(workspace), fmt, rounds=rounds, matches=matches, entry=entry_name, seed=seed)
    ids = done.match_ids
    span = "" if not ids else f" ({ids[0]})" if len(ids) == 1 else f" ({ids[0]}–{ids[-1]})"
    click.echo(f"scheduled {plural(len(ids), f'{fmt} match')}{span}")
    for flag in done.flags:
        click.echo(f"flag: {flag}")


@main.command()
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
@click.option("--wait", "wait_s", type=FiniteFloat(min=0.1), default=None, metavar="SECONDS", is_flag=False,
              flag_value=10.0, help="While matches await people's speeches on the web, look for them every SECONDS "
              "(default 10) and continue each as soon as it is in; Ctrl-C stops waiting.")
@text_format_option
@workspace_option
def run(concurrency: int | None, workers: int, budget: float | None, dry_run: bool, retry_failed: bool,
        wait_s: float | None, fmt: str, workspace: Path):
    """Play and judge every scheduled match not yet done; resumes after an interruption (exit 130 on Ctrl-C or
    SIGTERM). On a terminal, progress shows each match under way (stage, side, role, time) and each retry as it
    happens."""
    from arena.app import commands as app

    if fmt == "json" and not dry_run:
        raise UserError("--format json goes with --dry-run (the projection); a run prints its summary line")
    ws = _open(workspace)
    if dry_run:
        projected = app.dry_run(ws, retry_failed=retry_failed, concurrency=concurrency)
        if fmt == "json":
            _json(projected)
        else:
            _projection(projected)
        return
    result = app.run(ws, concurrency=concurrency, workers=workers, retry_failed=retry_failed, budget=budget,
                     wait_s=wait_s)
    click.echo(app.run_summary(result, budget))
    if result["stopped"] == "interrupted":
        sys.exit(130)
    if result["failed"]:
        sys.exit(1)


@main.command()
@click.argument("names", nargs=-1)
@format_option
@workspace_option
def check(names: tuple[str, ...], fmt: str, workspace: Path):
    """Probe the models of the named entries and judges (default: all): a one-line chat, the structured-output
    mode that works, the context window, latency, the server's slots (requests served at once) and throughput
    (tokens/s), measured, and whether the price is known; then the search provider (row "[search]") when an entry
    searches the web. Warns (stderr) of a judge whose runs can only repeat one another, and notes what the
    measured figures mean for a run. Exit 2 if a key is missing, 1 if any is unusable."""
    from arena.app import commands as app

    ws = _open(workspace)
    for warning in app.check_warnings(ws, names):  # a warning, not a failure: the exit code is the probes'
        click.echo(f"warning: {warning}", err=True)
    rows = app.check(ws, names)
    if fmt == "json":
        _json(rows)
    else:
        _table([{**r, "ok": "yes" if r["ok"] else "NO", "structured": r["structured"] or "-",
                 "context_window": r["context_window"] or "unknown",
                 "latency_s": "-" if r["latency_s"] is None else f"{r['latency_s']:.2f}",
                 "priced": "yes" if r["priced"] else "no", "slots": r["slots"] or "-",
                 "tokens_per_s": "-" if r["tokens_per_s"] is None else f"{r['tokens_per_s']:g}",
                 "error": r["error"] or ""} for r in rows],
               ["name", "model", "family", "ok", "structured", "context_window", "latency_s", "slots", "tokens_per_s",
                "priced", "error"])
    for note in app.check_notes(ws, rows):  # what the measured figures mean for a run: advice, not a failure
        click.echo(f"note: {note}", err=True)
    if not all(r["ok"] for r in rows):
        sys.exit(1)


def _projection(p: DryRun) -> None:
    """arena run --dry-run's report (as arena.app.commands.dry_run returns it)."""
    sampled = "played" if p["sampled"] == p["matches"] else (
        f"projected from {plural(p['sampled'], 'sampled match')} played")
    click.echo(f"dry run: {plural(p['matches'], 'pending match')} {sampled} on the offline simulator; "
               "nothing was written\n")
    if p["sampled"] < p["matches"]:  # say what a projection is, once, before its figures
        from arena.app.commands import DRY_RUN_EVERY

        click.echo(f"(one in {DRY_RUN_EVERY} of the matches alike in format, motion language and each side's debater "
                   "kind is played; the others count as their like's mean)\n")
    _table([{**r, "calls": f"{r['calls']:,}", "prompt_tokens": f"{r['prompt_tokens']:,}",
             "completion_tokens": f"{r['completion_tokens']:,}",
             "cost": "unknown" if r["cost"] is None else f"${r['cost']:.4f}"} for r in p["models"]],
           ["model", "calls", "prompt_tokens", "completion_tokens", "cost"])
    per, models = p["per_match"], len(p["models"])
    if p["unknown"]:  # a total over some models only says so, and why the others have no price
        click.echo(f"\nprojected cost: ${p['cost']:.4f} for {len(p['models']) - len(p['unknown'])} of {models} "
                   f"models (partial); {len(p['unknown'])} unpriced:")
        for row in p["why_unknown"]:
            click.echo(f"  {row['model']}: {row['reason']}")
    else:
        click.echo(f"\nprojected cost: ${p['cost']:.4f}")
    click.echo(f"per match: {per['calls']:,.1f} calls, {per['tokens']:,.0f} tokens, ${per['cost']:.4f}"
               + (" (priced models only)" if p["unknown"] else ""))
    if p["searches"] and p["search_provider"] != "offline":
        click.echo(f"plus {p['searches']:,} {p['search_provider']} searches (not priced here)")
    click.echo(_time_line(p["time_s"]))
    for failure in p["failed"]:
        click.echo(f"not counted (failed in the simulation): {failure['id']}: {failure['error']}")


def _time_line(t: TimeEstimate) -> str:
    """The dry run's projected wall time in a line: the estimate, each timed model's part, the models not timed."""
    from arena.base.clock import span as duration

    parts = [f"{m['model']} at {plural(m['slots'], 'slot')}, {m['tokens_per_s']:,.0f} tokens/s: "
             f"{duration(m['work_s'])} of work" for server in t["basis"]["servers"] for m in server["models"]]
    if t["basis"]["bound"] == "matches" and t["basis"]["servers"]:
        parts.append(f"a match's calls in turn take {duration(t['basis']['match_s'])}, "
                     f"{t['basis']['at_once']} matches at once")
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


# A group that also runs by itself: `arena judge` judges, `arena judge add|remove` edit the registry.
@main.group("judge", invoke_without_command=True, subcommand_metavar="[add|remove ...]")
@click.option("--judge", "judges", multiple=True, help="A judge to run; repeat for more (default: all configured).")
@click.option("--rejudge", is_flag=True, help="Replace these judges' verdicts (all runs) of every completed match.")
@click.option("--concurrency", type=CONCURRENCY, default=None,
              help="Matches judged at once, each model sent up to [llm] max_concurrency calls at once.  [default: 4 "
              "matches, each model sent at most the calls its server serves at once, as 'arena check' measured]")
@workspace_option
@click.pass_context
def judge(ctx: click.Context, judges: tuple[str, ...], rejudge: bool, concurrency: int | None, workspace: Path):
    """Judge completed matches that lack the judges' verdicts or have a failed run of theirs; or register (add)
    and remove judges."""
    from arena.app import commands as app

    if ctx.invoked_subcommand is not None:
        given = [p.opts[-1] for p in ctx.command.params
                 if ctx.get_parameter_source(p.name) is not click.core.ParameterSource.DEFAULT]
        if given:  # e.g. `arena judge -w DIR add ...` would edit another workspace than meant
            raise UserError(f"{given[0]} is an option of 'arena judge' itself; 'arena judge "
                            f"{ctx.invoked_subcommand}' takes its own options after its name")
        return
    totals = app.judge(_open(workspace), judges, rejudge=rejudge, concurrency=concurrency,
                       progress=lambda line: click.echo(line, err=True))
    for t in totals:
        click.echo(f"judged {plural(t['matches'], 'match')} with {t['judge']}: {plural(t['verdicts'], 'verdict')}, "
                   f"{plural(t['failed_runs'], 'failed run')}"
                   + (f" ({t['elsewhere']} judged by another process)" if t["elsewhere"] else ""))
    failed = sum(t["failed_runs"] for t in totals)
    if failed:
        raise ArenaError(f"{plural(failed, 'judge run')} failed (see 'arena match show ID'); "
                         f"run 'arena judge' again to retry them")


def _people(ctx, option, value: str | None) -> list[str] | None:
    """--people a,b,c as names, in order; the config's checks of each name apply after."""
    return None if value is None else [p.strip() for p in value.split(",")]


@judge.command("add")
@click.argument("name")
@click.option("--kind", required=True, help="The judge kind (single, debatrix, panel, ... or a plug-in); "
              "'arena kinds' lists them with their options.")
@click.option("--model", default=None, help="PROVIDER/MODEL, e.g. openai/gpt-4o-mini; offline/NAME is the "
              "simulator. Judges of people need none (an offline one simulates their ballots).")
@click.option("--api-base", default=None, help="http(s) URL of the model's server, e.g. a local one.")
@click.option("--runs", type=int, default=None, help="R, runs per match (default: [arena] judge_runs); a judge of "
              "people's R is its number of people.")
@click.option("--option", "options", multiple=True, metavar="KEY=VALUE", callback=_params,
              help="An option of the judge kind; VALUE is read as TOML (0.5, 200, true), else as text. Repeatable.")
@click.option("--people", default=None, metavar="A,B,C", callback=_people,
              help="Judges of people (--kind human): the people who vote, by name, comma-separated.")
@click.option("--family", default=None, help="Who made the judge's model (default: derived from --model).")
@workspace_option
def judge_add(name: str, kind: str, model: str | None, api_base: str | None, runs: int | None, options: dict,
              people: list[str] | None, family: str | None, workspace: Path):
    """Register a judge: append a [[judges]] table to arena.toml, keeping the rest of the file as is."""
    from arena.app import commands as app
    from arena.domain.records import JURY

    ws = _open(workspace)
    j = app.judge_add(ws, name, kind=kind, model=model, api_base=api_base, runs=runs, options=options, people=people,
                      family=family)
    on = (f"people {', '.join(j.people)}" if j.casts_ballots else
          f"{plural(j.runs, 'model')} a match drawn from a pool of {len(j.models)}" if j.kind == JURY else
          f"on {j.model}, {plural(j.runs, 'run')} a match")
    click.echo(f"added judge {j.name!r} ({j.kind}, {on}) to {ws.config.path}")


@judge.command("remove")
@click.argument("name")
@workspace_option
def judge_remove(name: str, workspace: Path):
    """Remove a judge with no verdicts or ballot links: its [[judges]] table leaves arena.toml, the rest as is."""
    from arena.app import commands as app

    ws = _open(workspace)
    app.judge_remove(ws, name)
    click.echo(f"removed judge {name!r} from {ws.config.path}")


@main.command("judge-bench")
@click.argument("dataset", type=click.Path(exists=True, path_type=Path))
@click.option("--judge", "judge_name", required=True, help="The configured judge to benchmark.")
@click.option("--concurrency", type=CONCURRENCY, default=4, show_default=True, help="Debates judged at once.")
@format_option
@workspace_option
def judge_bench(dataset: Path, judge_name: str, concurrency: int, fmt: str, workspace: Path):
    """Score a judge against human labels: DATASET is a JSONL file, a folder, or PanelBench's DebateArt folder
    (see docs/guides/judges.md and docs/reference/formats.md)."""
    from arena.app import commands as app

    result = app.judge_bench(_open(workspace), dataset, judge_name, concurrency=concurrency,
                             progress=lambda line: click.echo(line, err=True))
    if fmt == "json":
        _json(result)
        return
    click.echo(f"judge {result['judge']!r} on {result['dataset']}: {result['items']} debates, {result['judged']} "
               f"judged, {result['failed']} failed{' — SIMULATED' if result['simulated'] else ''}")
    click.echo(f"accuracy {_num(result['accuracy'], 3)}  kappa {_num(result['kappa'], 3)}\n")
    # Rows: the human label; columns: the judge's outcome.
    _table([{"human/judge": label, **counts} for label, counts in result["confusion"].items()],
           ["human/judge", "pro", "con", "tie"])
    if "dimensions" in result:
        click.echo()
        _table([{"dimension": name, "judged as": d["judge_dimension"] or "(not judged)", "items": d["items"],
                 "judged": d["judged"], "failed": d["failed"], "accuracy": _num(d["accuracy"], 3),
                 "kappa": _num(d["kappa"], 3)} for name, d in result["dimensions"].items()],
               ["dimension", "judged as", "items", "judged", "failed", "accuracy", "kappa"])


def _num(value: float | None, digits: int) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def _anchor(ctx, option, value: str | None) -> tuple[str, float] | None:
    """--anchor ENTRY=RATING as (entry, rating); the entry may itself contain '='."""
    if value is None:
        return None
    name, _, rating = value.rpartition("=")
    try:
        number = float(rating)
    except ValueError:
        number = math.nan
    if not name or not math.isfinite(number):
        raise click.BadParameter(f"{value!r} is not ENTRY=RATING with a finite number, e.g. gpt-4o=1200")
    return name, number


def _control(ctx, option, value: str | None) -> tuple[str, ...] | None:
    """--control FEATURE[,...] as a tuple of distinct features; "none" as no control (overriding arena.toml)."""
    from arena.domain.features import FEATURES

    if value is None:
        return None
    if value.strip() == "none":
        return ()
    names = [name.strip() for name in value.split(",")]
    for name in names:
        if name not in FEATURES:
            raise click.BadParameter(f"{name!r} is not a feature: expected a comma-separated list of "
                                     f"{', '.join(FEATURES)}, or none")
    if len(set(names)) != len(names):
        raise click.BadParameter(f"{value!r} names a feature twice")
    return tuple(names)


@main.command()
@click.option("--results", "results_file", type=click.Path(path_type=Path), default=None, metavar="FILE.csv",
              help="Rate the rows of this results CSV instead of a workspace's verdicts (no workspace needed).")
@click.option("--judge", default=None, help="Rate from this judge's verdicts (default: the first configured).")
@click.option("--by", type=click.Choice(["category", "dimension"]), default=None,
              help="Also fit each category (of the overall rows) or each judged dimension on its own.")
@click.option("--ci", type=click.Choice(["bootstrap", "sandwich"]), default="bootstrap", show_default=True,
              help="95% intervals: bootstrap percentiles over matches, or robust (sandwich) normal intervals.")
@click.option("--bootstrap", type=click.IntRange(0, limits.MAX_BOOTSTRAP), default=1000, show_default=True)
@click.option("--seed", type=SEED, default=0, show_default=True)
@click.option("--weighting", type=click.Choice(["paper", "none"]), default="paper", show_default=True,
              help="paper: a match weighs 1/(1+exp(-|score_a-score_b|)); none: every match weighs 1.")
@click.option("--anchor", default=None, metavar="ENTRY=RATING", callback=_anchor,
              help="Pin ENTRY at RATING (default: ratings average 1000).")
@click.option("--side", type=click.Choice(["fit", "ignore"]), default=None,
              help="fit: a Pro advantage (Elo, like home advantage) fitted with the ratings; ignore: the paper's "
                   "side-blind fit. Default: [rating] side of arena.toml, else fit.")
@click.option("--control", default=None, metavar="FEATURE[,...]", callback=_control,
              help="Fit style features with the ratings, which are then net of them: length, citations, markdown "
                   "(each side's total over the match's speeches); none for no control. Default: [rating] control of "
                   "arena.toml, else none.")
@click.option("--history", is_flag=True,
              help="Ratings after every N matches in the order they finished (with --results: the file's row "
                   "order), each snapshot a fit of the matches so far; intervals default to sandwich.")
@click.option("--every", type=click.IntRange(min=1), default=None, metavar="N",
              help="With --history: matches between snapshots (default: the smallest N giving at most 25).")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "csv"]), default="table", show_default=True,
              help="csv: the results rows themselves (every dimension), to re-rate later with --results.")
@workspace_option
def rate(results_file: Path | None, judge: str | None, by: str | None, ci: str, bootstrap: int, seed: int,
         weighting: str, anchor: tuple[str, float] | None, side: str | None, control: tuple[str, ...] | None,
         history: bool, every: int | None, fmt: str, workspace: Path):
    """Weighted Bradley–Terry ratings (Elo scale) with 95% intervals, from a workspace or a results CSV."""
    from arena.app import commands as app

    if results_file is not None and judge is not None:
        raise UserError("--judge picks a workspace judge's verdicts; it does not apply to --results")
    if every is not None and not history:
        raise UserError("--every N spaces the snapshots of --history; add --history")
    if history and fmt == "csv":
        raise UserError("--format csv exports the results rows, not ratings; with --history use json or table")
    if fmt == "csv":
        frame = app.read_results(results_file) if results_file else app.results_frame(_open(workspace), judge)
        click.echo(app.results_csv(frame), nl=False)
        return
    options: RateOptions = {"by": by, "ci": ci, "bootstrap": bootstrap, "seed": seed, "weighting": weighting,
                            "anchor": anchor, "side": side, "control": control}
    if history:
        _rate_history(results_file, judge, workspace, every, fmt, options)
        return
    # With --results the workspace is never opened: the file is all there is to rate.
    result = (app.rate_results(results_file, **options) if results_file
              else app.rate(_open(workspace), judge=judge, **options))
    if fmt == "json":
        _json(result)
        return
    meta = result["meta"]
    source, intervals = _fitted(meta)
    settings = "".join([f", weighting {weighting}" if weighting != "paper" else "",
                        f", {anchor[0]} anchored at {anchor[1]:g}" if anchor else "",
                        ", side ignored" if meta["side"] == "ignore" else "",
                        f", controlled for {', '.join(meta['control'])}" if meta.get("control") else ""])
    click.echo(f"ratings from {source}, {meta['matches']} matches, {intervals}{settings}"
               f"{' — SIMULATED' if meta.get('simulated') else ''}")
    _rating_table(result["ratings"], result["side"], result.get("control"))
    for group, fit in result.get("by", {}).items():
        click.echo(f"\n{by} {group!r}: {fit['meta']['matches']} matches")
        _rating_table(fit["ratings"], fit["side"], fit.get("control"))


def _rate_history(results_file: Path | None, judge: str | None, workspace: Path, every: int | None, fmt: str,
                  options: RateOptions) -> None:
    """`arena rate --history`: one fit per snapshot, so intervals are sandwich unless --ci is given."""
    from click.core import ParameterSource

    from arena.app import commands as app

    if click.get_current_context().get_parameter_source("ci") is ParameterSource.DEFAULT:
        options = {**options, "ci": "sandwich"}
    snapshots = (app.history_results(results_file, every=every, **options) if results_file
                 else app.rate_history(_open(workspace), judge=judge, every=every, **options))
    if fmt == "json":
        _json(snapshots)
        return
    if not snapshots:
        click.echo("no rated matches yet: no history")
        return
    meta = snapshots[-1]["meta"]
    source, intervals = _fitted(meta)
    order = "in the order they finished" if "judge" in meta else "in the file's row order"
    click.echo(f"ratings from {source} after every {every or snapshots[0]['matches']} of {meta['matches']} matches "
               f"{order}, {intervals}{' — SIMULATED' if meta.get('simulated') else ''}")
    for snapshot in snapshots:
        click.echo(f"\nafter {snapshot['matches']} matches (the last {snapshot['last_match']}):")
        _rating_table(snapshot["ratings"], snapshot.get("side"))


def _fitted(meta: RatingsMeta) -> tuple[str, str]:
    """What a fit's meta says it rated (a judge's verdicts or a file) and how its intervals were drawn."""
    source = f"judge {meta['judge']!r}" if "judge" in meta else meta["results"]
    return source, "sandwich intervals" if meta["ci"] == "sandwich" else f"{meta['bootstrap']} bootstrap replicates"


def _rating_table(ratings: list[RatingRow], side: SideFit | None = None,
                  control: dict[str, Coefficient] | None = None) -> None:
    """The ratings, then the Pro advantage (when fitted) and each controlled feature's coefficient on a line of
    its own."""
    _table([{**r, "95% CI": f"{r['ci_low']:.0f}–{r['ci_high']:.0f}", "W-T-L": f"{r['wins']}-{r['ties']}-{r['losses']}",
             "rating": f"{r['rating']:.0f}", "provisional": "yes" if r["provisional"] else ""}
            for r in ratings],
           ["rank_ub", "entry", "rating", "95% CI", "matches", "W-T-L", "provisional"])
    if side:
        click.echo(f"Pro advantage {side['pro_advantage']:+.0f} Elo (95% CI {side['ci_low']:+.0f} to "
                   f"{side['ci_high']:+.0f})")
    for name, fit in (control or {}).items():
        click.echo(f"{name} {fit['coef']:+.0f} Elo per unit of (pro - con)/(pro + con) (95% CI {fit['ci_low']:+.0f} "
                   f"to {fit['ci_high']:+.0f})")


@main.group()
def ballots():
    """People judging: private ballot links, their progress, and ballots collected elsewhere."""


@ballots.command("issue")
@click.option("--judge", "judge", required=True, help="A judge of kind human.")
@click.option("--base-url", default=None, help="Where 'arena serve' is reached (default http://127.0.0.1:8000).")
@workspace_option
@format_option
def ballots_issue(judge: str, base_url: str | None, workspace: Path, fmt: str):
    """A new private link per person (their earlier links stop working); send each person theirs."""
    from arena.app import commands as app

    rows = app.ballots_issue(_open(workspace), judge, base_url)
    if fmt == "json":
        _json(rows)
        return
    _table(rows, ["person", "assigned", "cast", "url"])
    click.echo("Each link is shown once and opens that person's queue: send it privately. "
               "Serve them with 'arena serve'.", err=True)


@ballots.command("status")
@click.option("--judge", "judge", default=None, help="A judge of kind human (default: all of them).")
@workspace_option
@format_option
def ballots_status(judge: str | None, workspace: Path, fmt: str):
    """Ballots cast per person, of the done matches assigned to them; whether each judge is open or closed, and
    how many matches it embargoes on the published site."""
    from arena.app import commands as app

    rows = app.ballots_status(_open(workspace), judge)
    if fmt == "json":
        _json(rows)
        return
    _table(rows, ["judge", "state", "person", "assigned", "cast"])
    for row in {r["judge"]: r for r in rows}.values():  # one line per judge
        name = row["judge"]
        click.echo(f"{name}: closed: its links take no ballots ('arena ballots issue --judge {name}' reopens it)"
                   if row["state"] == "closed" else
                   f"{name}: open: {row['embargoed']} match(es) embargoed on the published site until all their "
                   f"ballots are in or 'arena ballots close --judge {name}'")


@ballots.command("close")
@click.option("--judge", "judge", required=True, help="A judge of kind human.")
@workspace_option
def ballots_close(judge: str, workspace: Path):
    """Close a judge of people's ballots: its links take no more, and the next 'arena publish' shows the matches
    it held back. 'arena ballots issue' reopens it."""
    from arena.app import commands as app

    result = app.ballots_close(_open(workspace), judge)
    if result["already"]:
        click.echo(f"the ballots of judge {result['judge']!r} were closed already, at {result['closed_at']}; "
                   f"'arena ballots issue --judge {result['judge']}' reopens them")
        return
    click.echo(f"closed the ballots of judge {result['judge']!r}: its links take no more ballots, and the "
               f"{result['held']} match(es) awaiting them leave the embargo ({result['embargoed']} still await "
               f"another judge of people); 'arena publish' puts them on the site")


@ballots.command("import")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--judge", "judge", required=True, help="A judge of kind human.")
@workspace_option
def ballots_import(file: Path, judge: str, workspace: Path):
    """Store ballots collected on paper or in forms: a CSV with columns
    match_id,person,overall[,argument][,source][,language][,rationale]."""
    from arena.app import commands as app

    result = app.ballots_import(_open(workspace), file, judge)
    click.echo(f"stored {plural(result['ballots'], 'ballot')} of {plural(result['people'], 'person', 'people')} for "
               f"judge {result['judge']!r}")


@main.group()
def debaters():
    """People debating on the web (human entries with via = "web"): private links, their turns, more time."""


@debaters.command("issue")
@click.option("--entry", "entry_name", default=None, help="A web debater (default: all of them).")
@click.option("--base-url", default=None, help="Where 'arena serve' is reached (default http://127.0.0.1:8000).")
@workspace_option
@format_option
def debaters_issue(entry_name: str | None, base_url: str | None, workspace: Path, fmt: str):
    """A new private link per web debater (their earlier links stop working); send each person theirs."""
    from arena.app import commands as app

    rows = app.debaters_issue(_open(workspace), entry_name, base_url)
    if fmt == "json":
        _json(rows)
        return
    _table(rows, ["entry", "pending", "done", "url"])
    if rows:
        click.echo("Each link is shown once and opens that person's turns: send it privately. "
                   "Serve them with 'arena serve'.", err=True)


def _open_turns(rows: Sequence[tuple[str, OpenTurn]]) -> None:
    """A table of open turns: whose, which, since and until when."""
    _table([{"entry": entry, **t, "side": t["side"].upper(), "lapsed": "yes" if t["lapsed"] else ""}
            for entry, t in rows], ["entry", "match", "stage", "side", "since", "deadline", "lapsed"])


@debaters.command("status")
@workspace_option
@format_option
def debaters_status(workspace: Path, fmt: str):
    """Each web debater's turns: open (with their deadlines), written, and missed."""
    from arena.app import commands as app

    rows = app.debaters_status(_open(workspace))
    if fmt == "json":
        _json(rows)
        return
    _table(rows, ["entry", "pending", "done", "missed"])
    turns = [(r["entry"], t) for r in rows for t in r["open"]]
    if turns:
        click.echo("\nopen turns (lapsed: past the deadline, so the next 'arena run' forfeits that side unless "
                   "'arena debaters extend' gives more time):")
        _open_turns(turns)


@debaters.command("extend")
@click.option("--entry", "entry_name", required=True, help="A web debater.")
@click.option("--hours", type=HOURS, required=True,
              help="Hours more for each open turn (from now, for a turn past its deadline).")
@workspace_option
def debaters_extend(entry_name: str, hours: float, workspace: Path):
    """More time for a web debater's open turns: each deadline moves --hours later."""
    from arena.app import commands as app

    done = app.debaters_extend(_open(workspace), entry_name, hours)
    if not done["extended"]:
        click.echo(f"entry {done['entry']!r} has no turn to write: nothing to extend")
        return
    click.echo(f"gave entry {done['entry']!r} {done['hours']:g} more hours on {plural(done['extended'], 'turn')}; "
               "its open turns now:")
    _open_turns([(done["entry"], t) for t in done["open"]])


@main.group()
def stats():
    """Statistics over completed matches."""


@stats.command("agents")
@workspace_option
@format_option
def stats_agents(workspace: Path, fmt: str):
    """Per debater kind, stage and role: calls per speech and tokens per call (Agent4Debate Tables 8-9)."""
    from arena.app import commands as app

    rows = app.stats_agents(_open(workspace))
    if fmt == "json":
        _json(rows)
        return

    def num(value: float | None, digits: int = 1) -> str | None:
        return None if value is None else f"{value:.{digits}f}"

    _table([{**r, "calls/speech": num(r["calls_per_speech"], 2),
             "completion tok/call": num(r["completion_tokens_per_call"]),
             "prompt tok/call": num(r["prompt_tokens_per_call"]), "cost/speech": num(r["cost_per_speech"], 4)}
            for r in rows],
           ["debater", "stage", "role", "speeches", "calls/speech", "completion tok/call", "prompt tok/call",
            "cost/speech"])


@stats.command("judges")
@workspace_option
@format_option
def stats_judges(workspace: Path, fmt: str):
    """Per judge: failures, Pro win rate with a binomial side-bias test, the share of matches whose runs were
    identical, runs that contradicted their own scores, calls and cost per match; per pair of judges: agreement
    on the overall winner and Cohen's kappa; for judges of people, the same per pair of their people and per
    person against each other judge."""
    from arena.app import commands as app

    data = app.stats_judges(_open(workspace))
    if fmt == "json":
        _json(data)
        return
    _table([{**r, "pro win rate": _num(r["pro_win_rate"], 3), "side-bias p": _num(r["side_bias_p"], 3),
             "identical runs": _num(r["identical_runs"], 3), "calls/match": _num(r["calls_per_match"], 2),
             "cost/match": _num(r["cost_per_match"], 4)}
            for r in data["judges"]],
           ["judge", "matches", "runs", "failed_runs", "pro_wins", "ties", "con_wins", "pro win rate", "side-bias p",
            "identical runs", "self_contradictions", "calls/match", "cost/match"])
    figures = lambda rows: [{**r, "agreement": _num(r["agreement"], 3), "kappa": _num(r["kappa"], 3)}  # noqa: E731
                            for r in rows]
    # Each table only when it has rows: the people's two only with judges of people (of two or more people).
    for rows, columns in ((data["pairs"], ["a", "b"]), (data["people"], ["judge", "a", "b"]),
                          (data["people_vs_judges"], ["judge", "person", "vs"])):
        if rows:
            click.echo("")
            _table(figures(rows), [*columns, "matches", "agreement", "kappa"])


@stats.command("sides")
@workspace_option
@format_option
def stats_sides(workspace: Path, fmt: str):
    """Pro/Con sides per entry; per motion and overall the Pro score share with a binomial side-bias test."""
    from arena.app import commands as app

    data = app.stats_sides(_open(workspace))
    if fmt == "json":
        _json(data)
        return
    _table(data["entries"], ["entry", "pro", "con"])
    click.echo(f"\nPro score share by motion (judge {data['judge'] or 'none configured'}):")
    overall: MotionShare = {"motion": "overall", **data["overall"]}
    share = [{**r, "pro share": _num(r["pro_share"], 3), "p": _num(r["p_value"], 3)}
             for r in [*data["motions"], overall]]
    _table(share, ["motion", "matches", "pro share", "pro_wins", "con_wins", "ties", "p"])


@stats.command("bias")
@click.option("--judge", default=None, help="This judge's rows alone (default: every judge).")
@workspace_option
@format_option
def stats_bias(judge: str | None, workspace: Path, fmt: str):
    """Per judge, and per panelist where its verdicts name one (a jury's, an imported panel's): the Pro share of
    its decided votes, the share won by the side with more words, the length coefficient of a controlled fit of
    its votes (Elo per unit of (Pro's words - Con's) / (Pro's + Con's)), each with a 95% interval, and its
    preference for a debater of its own model family against other judges' votes on the same matches."""
    from arena.app import commands as app

    rows = app.stats_bias(_open(workspace), judge)
    if fmt == "json":
        _json(rows)
        return

    def share(value: float | None, low: float | None, high: float | None) -> str:
        if value is None:
            return "n/a"
        return f"{value:.2f} ({low:.2f}-{high:.2f})"

    def coefficient(value: float | None, low: float | None, high: float | None) -> str:
        if value is None or low is None or high is None:  # all three or none (arena.analysis.stats.bias_row)
            return "n/a"
        return f"{round(value):+d} ({round(low):+d} to {round(high):+d})"

    def family(same: SameFamily | None) -> str:
        if same is None:
            return ""
        return f"{same['own_share']:.2f} vs {_num(same['others_share'], 2)} ({plural(same['votes'], 'vote')})"

    _table([{**r, "pro share (95% CI)": share(r["pro_share"], r["pro_ci_low"], r["pro_ci_high"]),
             "longer side's share": share(r["longer_share"], r["longer_ci_low"], r["longer_ci_high"]),
             "length coef (Elo)": coefficient(r["length_coef"], r["length_ci_low"], r["length_ci_high"]),
             "own family vs others": family(r["same_family"])} for r in rows],
           ["judge", "panelist", "votes", "pro share (95% CI)", "longer side's share", "length coef (Elo)",
            "own family vs others"])


@stats.command("paper")
@click.option("--judge", default=None,
              help="Whose S/L/A/O points (default: the first judge the arena runs; people's ballots count too).")
@workspace_option
@format_option
def stats_paper(judge: str | None, workspace: Path, fmt: str):
    """The Agent4Debate paper's tables: mean Source/Language/Argument/Overall points out of 3 per entry and
    category, head to head and per debater kind (Tables 1, 2, 5); consistency of the judges with the judges of
    people, without the matches of human debaters and over all (Table 6); the paper's figures beside ours in a
    workspace made by `arena init --preset agent4debate`."""
    from arena.app import commands as app

    data = app.stats_paper(_open(workspace), judge)
    if fmt == "json":
        _json(data)
        return
    people = f"; human: the overall points of the people of {data['people']!r}" if data["people"] else ""
    click.echo(f"mean points out of 3 under judge {data['judge']!r} (S source, L language, A argument, O overall"
               f"{people}){' — SIMULATED' if data['simulated'] else ''}")

    def points(r: EntryPoints | PairPoints | KindPoints, paper: PaperFigures | None = None) -> dict[str, object]:
        return {**r, "S": _num(r["source"], 2), "L": _num(r["language"], 2), "A": _num(r["argument"], 2),
                "O": _num(r["overall"], 2), "human": _num(r["people_overall"], 2),
                "paper S/L/A/O (human)": "/".join(f"{x:.2f}" for x in (paper["source"], paper["language"],
                                                                       paper["argument"], paper["overall"]))
                + (f" ({paper['people_overall']:.2f})" if "people_overall" in paper else "") if paper else ""}

    columns = ["matches", "S", "L", "A", "O", "people_matches", "human"]
    paper = ["paper S/L/A/O (human)"] if data["preset"] else []
    _table([points(r) for r in data["entries"]], ["entry", "debater", "category", *columns])
    compared: list[tuple[str, list[PairPoints] | list[KindPoints], list[str]]] = [
        ("head to head (Tables 1, 2)", data["pairs"], ["entry", "opponent"]),
        ("by debater kind, against each other kind (Table 5)", data["kinds"], ["debater", "opponent"])]
    for title, rows, keys in compared:
        click.echo(f"\n{title}:")
        _table([points(r, r["paper"]) for r in rows], [*keys, *columns, *paper])

    def of(scope: ScopeConsistency | PeopleScope) -> str:
        return f"{_num(scope['consistency'], 2)} of {scope['matches']}"

    def split(r: JudgeConsistency | PeopleConsistency) -> dict[str, object]:
        figures = r["paper"]
        theirs = ({"paper without humans": f"{figures['excluding_human_debaters']:.2f}",
                   "paper all": f"{figures['all']:.2f}"} if figures else {})
        return {**r, "without humans": of(r["excluding_human_debaters"]), "all": of(r["all"]), **theirs}

    scopes = ["without humans", "all"]
    click.echo("\nconsistency, matches without a human debater and all (Table 6):")
    _table([split(r) for r in data["consistency"]["judges"]],
           ["judge", "people", *scopes, *[f"paper {s}" for s in scopes if paper]])
    click.echo("\namong the people of each judge of people:")
    _table([split(r) for r in data["consistency"]["among_people"]],
           ["people", *scopes, *[f"paper {s}" for s in scopes if paper]])


@main.command()
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Output folder (default: <workspace>/site).")
@workspace_option
def publish(out: Path | None, workspace: Path):
    """Write the static HTML site; print the path of its index."""
    from arena.app import commands as app

    click.echo(app.publish(_open(workspace), out))


@main.command()
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Output folder (default: <workspace>/export).")
@click.option("--public", is_flag=True,
              help="For publishing: people's names as pseudonyms, no error texts, no match people judge blind.")
@workspace_option
def export(out: Path | None, public: bool, workspace: Path):
    """Write the workspace as Parquet tables (entries, motions, matches, speeches, verdicts, ballots, calls,
    judges) with a dataset card (README.md); print the folder."""
    from arena.app import commands as app

    done = app.export(_open(workspace), out, public=public)
    click.echo(done["path"])
    click.echo(", ".join(f"{rows} {table}" for table, rows in done["rows"].items())
               + (" (public: pseudonyms, no error texts)" if public else ""), err=True)


@main.command()
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on; the default is reachable from this computer only.")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True,
              help="Port to listen on (0: any free port).")
@workspace_option
def serve(host: str, port: int, workspace: Path):
    """Serve the private links of the judges of people ('arena ballots issue' hands them out: each person's queue,
    blind transcripts (PRO/CON only) and the ballot form) and of web debaters ('arena debaters issue': their turns
    and the page to write each speech). Ctrl-C stops it."""
    from arena.app import commands as app

    def ready(url: str, judges: list, debaters: list[str], private: bool) -> None:
        people = sum(len(j.people) for j in judges)
        served = [f"ballots at {url} for {plural(len(judges), 'human judge')} "
                  f"({plural(people, 'person', 'people')}: "
                  f"{'; '.join(f'{j.name}: ' + ', '.join(j.people) for j in judges)})"] if judges else []
        served += [f"debaters at {url} for {plural(len(debaters), 'web debater')} ({', '.join(debaters)})"] \
            if debaters else []
        click.echo(f"serving {'; '.join(served)}; Ctrl-C stops")
        if not private:
            click.echo(f"note: {host} may be reachable from other computers, over plain HTTP: anyone who sees a "
                       "link can use it", err=True)

    app.serve(workspace, host, port, ready=ready)
    click.echo("stopped")
