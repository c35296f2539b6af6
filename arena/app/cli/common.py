"""What the command groups share: the option types and options, opening the workspace, and printing: text and
tables (echo, table), which a terminal is sent with its control characters escaped (arena.base.terminal), and
JSON or CSV (echo_json, echo_data), exact. Every command prints through these alone (a test holds the CLI to it).

Heavy imports happen inside functions, so `arena --help` stays fast.
"""
from __future__ import annotations

import functools
import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Mapping, Sequence

import click

from arena.base import limits
from arena.base.errors import UserError
from arena.base.terminal import one_line, shown

if TYPE_CHECKING:
    from arena.workspace.folder import Workspace


class LazyChoice(click.Choice[str]):
    """A click.Choice whose values come from their one home when first needed, so `arena --help` does not
    import that home."""

    def __init__(self, load: Callable[[], Sequence[str]]) -> None:
        self._load, self.case_sensitive = load, True

    @functools.cached_property  # click's attribute, made lazy
    def choices(self) -> tuple[str, ...]:  # type: ignore[override]  # click declares an attribute; this computes it
        return tuple(self._load())


class FiniteFloat(click.FloatRange):
    """A click.FloatRange that also refuses NaN and the infinities: a NaN passes its bounds (it fails every
    comparison), and a budget of NaN or infinity would never stop a run."""

    name = "finite float"

    def convert(self, value: float, param: click.Parameter | None, ctx: click.Context | None) -> float:
        # value: click's declared input type (a FloatRange's); from the command line it is the option's text
        number: float = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number.", param, ctx)
        return number


# The bounds of every number an option takes (arena.base.limits, documented under Limits in docs/reference/index.md).
SEED = click.IntRange(0, limits.MAX_SEED)
CONCURRENCY = click.IntRange(1, limits.MAX_CONCURRENCY)
HOURS = FiniteFloat(0, limits.MAX_TURN_HOURS, min_open=True)


def formats() -> list[str]:
    """The tournament formats `arena schedule --format` takes: the scheduler's generators."""
    from arena.domain.scheduler import GENERATORS

    return list(GENERATORS)


def categories() -> tuple[str, ...]:
    """The motion categories `arena motion list --category` takes."""
    from arena.domain.records import CATEGORIES

    return CATEGORIES


workspace_option = click.option("-w", "--workspace", "workspace", type=click.Path(file_okay=False, path_type=Path),
                                default=Path("."), show_default="current folder", help="Workspace folder.")
format_option = click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table",
                             show_default=True)
text_format_option = click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
                                  show_default=True)  # for commands that show one thing


def open_ws(workspace: Path) -> Workspace:
    """Open (and check) the workspace; it is closed when the command ends, checkpointing the WAL."""
    from arena.app.commands import open_workspace

    ws = open_workspace(workspace)
    click.get_current_context().call_on_close(ws.close)
    return ws


def key_values(ctx: click.Context, option: click.Parameter, pairs: tuple[str, ...]) -> dict[str, object]:
    """--param/--option KEY=VALUE pairs as a kind's params, each VALUE read as TOML; a bad pair is a bad option."""
    from arena.workspace.registration import parse_params

    try:
        return parse_params(pairs)
    except UserError as exc:
        raise click.BadParameter(str(exc)) from None


def echo(text: object = "", *, err: bool = False, nl: bool = True) -> None:
    """Text a command shows (on stderr with err): a speech, an error, a name may hold control characters that would
    drive the terminal, so each but newline and tab is shown as its escape (arena.base.terminal.shown)."""
    click.echo(shown(str(text)), err=err, nl=nl)


def echo_data(text: str, *, nl: bool = True) -> None:
    """Machine-readable output (JSON, CSV) exactly as it is: its format escapes (JSON) or quotes (CSV) what it
    holds, and a program reading it must get the text as it was written."""
    click.echo(text, nl=nl)


def table(rows: Sequence[Mapping[str, object]], columns: list[str]) -> None:
    """Rows as a table of these columns, each as wide as its widest cell, each cell on one line as a terminal may
    be sent it (arena.base.terminal.one_line); "(none)" when there is no row."""
    if not rows:
        echo("(none)")
        return
    cells = [[("" if r.get(c) is None else one_line(str(r.get(c)))) for c in columns] for r in rows]
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(columns)]
    echo("  ".join(c.ljust(w) for c, w in zip(columns, widths)).rstrip())
    for row in cells:
        echo("  ".join(v.ljust(w) for v, w in zip(row, widths)).rstrip())


def echo_json(data: object) -> None:
    """What a command prints with --format json: indented, non-ASCII as it is, control characters escaped by JSON."""
    echo_data(json.dumps(data, indent=2, ensure_ascii=False))


def fixed(value: float | None, digits: int) -> str:
    """A figure to so many decimals, or n/a when there is none."""
    return "n/a" if value is None else f"{value:.{digits}f}"
