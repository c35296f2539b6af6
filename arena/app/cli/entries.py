"""`arena entry list | add | show | retire | remove`: the debater entries of arena.toml."""
from __future__ import annotations

from pathlib import Path

import click

from arena.app.cli.common import (echo, echo_json, format_option, key_values, open_ws, table, text_format_option,
                                  workspace_option)


@click.group()
def entry() -> None:
    """Registered debater entries."""


@entry.command("list")
@workspace_option
@format_option
def entry_list(workspace: Path, fmt: str) -> None:
    """List entries with their match counts, and a warning where an entry's family is doubtful: a declared family
    that the family table says otherwise of, or one only guessed from the model's name where a jury seats by it."""
    from arena.app import commands as app

    ws = open_ws(workspace)
    rows = app.entry_list(ws)
    if fmt == "json":
        echo_json(rows)
        return
    warned = any(r["family_warning"] for r in rows)  # the column only when there is something in it
    table([{**r, "status": "retired" if r["retired"] else "imported" if r["debater"] == "imported" else "active",
            "warning": r["family_warning"]} for r in rows],
          ["name", "debater", "model", "family", "matches", "forfeits", "strength", "status"]
          + ["warning"] * warned)


@entry.command("add")
@click.argument("name")
@click.option("--debater", required=True, help="The debater kind (direct, ... or a plug-in).")
@click.option("--model", required=True, help="PROVIDER/MODEL, e.g. openai/gpt-4o; offline/NAME is the simulator.")
@click.option("--api-base", default=None, help="http(s) URL of the model's server, e.g. a local one.")
@click.option("--param", "params", multiple=True, metavar="KEY=VALUE", callback=key_values,
              help="A param of the debater kind; VALUE is read as TOML (0.5, 200, true), else as text. Repeatable.")
@click.option("--strength", type=float, default=None, help="Planted strength (offline models only).")
@click.option("--family", default=None, help="Who made the model, e.g. meta for a Llama fine-tune (default: derived "
              "from --model); a jury seats no model of a debater's family.")
@workspace_option
def entry_add(name: str, debater: str, model: str, api_base: str | None, params: dict[str, object],
              strength: float | None, family: str | None, workspace: Path) -> None:
    """Register an entry: append an [[entries]] table to arena.toml, keeping the rest of the file as is. Warns
    (exit 0) of a key the entry needs that the environment lacks: 'arena run' skips its matches until it is set."""
    from arena.app import commands as app

    ws = open_ws(workspace)
    e = app.entry_add(ws, name, debater=debater, model=model, api_base=api_base, params=params, strength=strength,
                      family=family)
    echo(f"added entry {e.name!r} ({e.debater} on {e.model}) to {ws.config.path}")
    for warning in app.entry_key_warnings(ws, e.name):
        echo(f"warning: {warning}", err=True)


@entry.command("show")
@click.argument("name")
@workspace_option
@text_format_option
def entry_show(name: str, workspace: Path, fmt: str) -> None:
    """Show one entry: configuration, status and completed matches."""
    from arena.app import commands as app

    data = app.entry_show(open_ws(workspace), name)
    if fmt == "json":
        echo_json(data)
        return
    for key, value in data.items():
        if key == "params":
            value = ", ".join(f"{k} = {v!r}" for k, v in data["params"].items())
        if key != "retired":  # status says it
            echo(f"{key}: {'(none)' if value == '' else value}")


@entry.command("retire")
@click.argument("name")
@workspace_option
def entry_retire(name: str, workspace: Path) -> None:
    """Retire an entry: it keeps its matches and rating but is no longer scheduled."""
    from arena.app import commands as app

    app.entry_retire(open_ws(workspace), name)
    echo(f"retired entry {name!r}: its matches still count, and new schedules leave it out")


@entry.command("remove")
@click.argument("name")
@workspace_option
def entry_remove(name: str, workspace: Path) -> None:
    """Remove an entry that is in no match: its [[entries]] table leaves arena.toml, the rest of the file as is.
    An entry that has played or is scheduled is retired instead (arena entry retire)."""
    from arena.app import commands as app

    ws = open_ws(workspace)
    app.entry_remove(ws, name)
    echo(f"removed entry {name!r} from {ws.config.path}")
