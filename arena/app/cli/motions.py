"""`arena motion list | show | import`: the motion library, the sets arena.toml names."""
from __future__ import annotations

from pathlib import Path

import click

from arena.app.cli.common import (LazyChoice, categories, echo, echo_json, format_option, open_ws, table,
                                  text_format_option, workspace_option)
from arena.base.errors import plural


@click.group()
def motion() -> None:
    """The motion library: the sets [motions] sets names in arena.toml."""


@motion.command("list")
@click.option("--category", type=LazyChoice(categories), default=None, help="Only this category.")
@workspace_option
@format_option
def motion_list(category: str | None, workspace: Path, fmt: str) -> None:
    """List the motions of the configured sets."""
    from arena.app import commands as app

    rows = app.motion_list(open_ws(workspace), category)
    echo_json(rows) if fmt == "json" else table(rows, ["id", "category", "language", "set", "text"])


@motion.command("show")
@click.argument("motion_id")
@workspace_option
@text_format_option
def motion_show(motion_id: str, workspace: Path, fmt: str) -> None:
    """Show one motion: text, category, language, info slide, set and stored matches."""
    from arena.app import commands as app

    data = app.motion_show(open_ws(workspace), motion_id)
    if fmt == "json":
        echo_json(data)
        return
    for key, value in data.items():
        echo(f"{key}: {'(none)' if value is None else value}")


@motion.command("import")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@workspace_option
def motion_import(file: Path, workspace: Path) -> None:
    """Copy a YAML or JSONL motion file into the workspace (motions/) and add it to [motions] sets."""
    from arena.app import commands as app

    done = app.motion_import(open_ws(workspace), file)
    echo(f"imported {plural(done['motions'], 'motion')} from {file} as {done['set']} (copied to {done['path']})")
    for note in done["notes"]:
        echo(f"note: {note}")
