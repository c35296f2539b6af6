"""Commands on a workspace as a whole: `arena init`, `arena demo`, `arena kinds`, `arena import` and `arena check`."""
from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

import click

from arena.app.cli.common import echo, echo_json, format_option, open_ws, table, text_format_option, workspace_option
from arena.base.errors import plural


@click.command()
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path), default=Path("."))
@click.option("--preset", default=None, metavar="NAME",
              help="Set up a published arena instead of the template: agent4debate (the paper's Chinese arena); or "
                   "verbose, a simulated arena whose judge likes long speeches.")
def init(directory: Path, preset: str | None) -> None:
    """Create DIRECTORY/arena.toml (a commented template, or a preset's) and DIRECTORY/arena.db."""
    from arena.app import commands as app

    if preset is None:
        echo(app.init(directory))
        return
    config_path, scheduled = app.init_preset(directory, preset)
    echo(config_path)
    echo(f"preset {preset}: {plural(len(scheduled.match_ids), 'match')} scheduled ({scheduled.format}); "
         f"'arena run --dry-run -w {directory}' projects their calls and cost", err=True)


@click.command()
@click.option("-w", "--workspace", "workspace", type=click.Path(file_okay=False, path_type=Path),
              default=Path("arena-demo"), show_default=True, help="Workspace folder for the demo.")
@click.option("--language", type=click.Choice(["en", "zh"]), default="en", show_default=True,
              help="Language of the motions, prompts and simulated speeches.")
def demo(workspace: Path, language: str) -> None:
    """Run a simulated tournament end to end (offline), publish the site, print its path. Ctrl-C or SIGTERM stops it
    as it does 'arena run' (exit 130) and publishes nothing; run it again to resume."""
    from arena.app import commands as app

    done = app.demo(workspace, language=language)
    if done.site is None:  # stopped part way: no site of some of the matches, which would pass for the result
        echo(f"{app.run_summary(done.run)}\ninterrupted: no site was published; 'arena demo -w {workspace}"
             f"{'' if language == 'en' else ' --language ' + language}' resumes the demo and publishes it", err=True)
        sys.exit(130)
    echo(done.site)


@click.command()
@format_option
def kinds(fmt: str) -> None:
    """List the debater, judge and importer kinds (built-in and plug-in) with their params, defaults and help."""
    from arena.app import commands as app

    rows = app.kinds()
    if fmt == "json":
        echo_json(rows)
        return
    for k, row in enumerate(rows):
        where = "" if row["source"] == "built-in" else f"  (plug-in: {row['source']})"
        echo(f"{'' if k == 0 else chr(10)}{row['family']} kind {row['kind']}{where}")
        table([{**p, "default": json.dumps(p["default"], ensure_ascii=False)} for p in row["params"]],
               ["name", "default", "accepts", "help"])


@click.command("import")
@click.argument("kind")
@click.argument("folder", metavar="DIR", type=click.Path(path_type=Path))
@click.option("--judge", default=None, metavar="NAME",
              help="Name of the imported judge whose runs are the source's verdicts (default: the importer's).")
@workspace_option
@text_format_option
def import_(kind: str, folder: Path, judge: str | None, workspace: Path, fmt: str) -> None:
    """Import debates held elsewhere: KIND is an importer (lechmazur, arena, or a plug-in; see 'arena kinds')."""
    from arena.app import commands as app

    done = app.import_debates(open_ws(workspace), kind, folder, judge=judge)
    if fmt == "json":
        echo_json(done)
        return
    judges = plural(len(done["judges"]), "judge") + (f" ({', '.join(done['judges'])})" if done["judges"] else "")
    added = (f"{plural(done['matches'], 'match')}, {plural(done['entries'], 'entry')}, {judges}, "
             f"{plural(done['runs'], 'judge run')}, {plural(done['motions'], 'motion')}")
    known = done["known"]
    echo(f"imported from {done['source']}: {added}" if done["matches"] or done["entries"] or done["judges"]
         else f"nothing new from {done['source']}: its {plural(known['matches'], 'match')}, "
              f"{plural(known['entries'], 'entry')} and {plural(known['judges'], 'judge')} are in the workspace "
              "already")
    checked = done["speech_checks"]
    if checked and checked["flagged"]:
        counts = Counter(f["problem"].split(":", 1)[0] for f in checked["flagged"])
        echo(f"speech checks: {len(checked['flagged'])} of {plural(checked['speeches'], 'speech')} would "
             f"forfeit if played here ({', '.join(f'{k} {v}' for k, v in counts.most_common())}); imported "
             "debates are reported, not forfeited:")
        for f in checked["flagged"][:5]:
            echo(f"  {f['match']} {f['stage']} {f['side'].upper()}: {f['problem']}")
        if len(checked["flagged"]) > 5:
            echo(f"  ... and {len(checked['flagged']) - 5} more (--format json lists them all)")
    skipped = done["skipped"]
    if skipped:
        echo(f"skipped {len(skipped)}:")
        for s in skipped[:5]:
            echo(f"  {s['path']}: {s['reason']}")
        if len(skipped) > 5:
            echo(f"  ... and {len(skipped) - 5} more (--format json lists them all)")


@click.command()
@click.argument("names", nargs=-1)
@format_option
@workspace_option
def check(names: tuple[str, ...], fmt: str, workspace: Path) -> None:
    """Probe the models of the named entries and judges (default: all): a one-line chat, the structured-output
    mode that works, the context window, latency, the server's slots (requests served at once) and throughput
    (tokens/s), measured, and whether the price is known; then the search provider (row "[search]") when an entry
    searches the web. Warns (stderr) of a judge whose runs can only repeat one another, and notes what the
    measured figures mean for a run. Exit 2 if a key is missing, 1 if any is unusable."""
    from arena.app import commands as app

    ws = open_ws(workspace)
    for warning in app.check_warnings(ws, names):  # a warning, not a failure: the exit code is the probes'
        echo(f"warning: {warning}", err=True)
    rows = app.check(ws, names)
    if fmt == "json":
        echo_json(rows)
    else:
        table([{**r, "ok": "yes" if r["ok"] else "NO", "structured": r["structured"] or "-",
                 "context_window": r["context_window"] or "unknown",
                 "latency_s": "-" if r["latency_s"] is None else f"{r['latency_s']:.2f}",
                 "priced": "yes" if r["priced"] else "no", "slots": r["slots"] or "-",
                 "tokens_per_s": "-" if r["tokens_per_s"] is None else f"{r['tokens_per_s']:g}",
                 "error": r["error"] or ""} for r in rows],
               ["name", "model", "family", "ok", "structured", "context_window", "latency_s", "slots", "tokens_per_s",
                "priced", "error"])
    for note in app.check_notes(ws, rows):  # what the measured figures mean for a run: advice, not a failure
        echo(f"note: {note}", err=True)
    if not all(r["ok"] for r in rows):
        sys.exit(1)
