"""What leaves the workspace: `arena publish` (the site), `arena export` (the open-data tables) and
`arena serve` (the web app of people's private links)."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from arena.app.cli.common import echo, open_ws, workspace_option
from arena.base.errors import plural
from arena.base.limits import SERVE_PORT

if TYPE_CHECKING:
    from arena.domain.records import JudgeSpec


@click.command()
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Output folder (default: <workspace>/site).")
@workspace_option
def publish(out: Path | None, workspace: Path) -> None:
    """Write the static HTML site; print the path of its index."""
    from arena.app import commands as app

    echo(app.publish(open_ws(workspace), out))


@click.command()
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Output folder (default: <workspace>/export).")
@click.option("--public", is_flag=True,
              help="For publishing: people's names as pseudonyms, no error texts, no match people judge blind.")
@workspace_option
def export(out: Path | None, public: bool, workspace: Path) -> None:
    """Write the workspace as Parquet tables (entries, motions, matches, speeches, verdicts, ballots, calls,
    judges) with a dataset card (README.md); print the folder."""
    from arena.app import commands as app

    done = app.export(open_ws(workspace), out, public=public)
    echo(done["path"])
    echo(", ".join(f"{rows} {table}" for table, rows in done["rows"].items())
         + (" (public: pseudonyms, no error texts)" if public else ""), err=True)


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on; the default is reachable from this computer only.")
@click.option("--port", type=click.IntRange(0, 65535), default=SERVE_PORT, show_default=True,
              help="Port to listen on (0: any free port).")
@workspace_option
def serve(host: str, port: int, workspace: Path) -> None:
    """Serve the private links of the judges of people ('arena ballots issue' hands them out: each person's queue,
    blind transcripts (PRO/CON only) and the ballot form) and of web debaters ('arena debaters issue': their turns
    and the page to write each speech). Ctrl-C stops it."""
    from arena.app import commands as app

    def ready(url: str, judges: list[JudgeSpec], debaters: list[str], private: bool) -> None:
        people = sum(len(j.people) for j in judges)
        served = [f"ballots at {url} for {plural(len(judges), 'human judge')} "
                  f"({plural(people, 'person', 'people')}: "
                  f"{'; '.join(f'{j.name}: ' + ', '.join(j.people) for j in judges)})"] if judges else []
        served += [f"debaters at {url} for {plural(len(debaters), 'web debater')} ({', '.join(debaters)})"] \
            if debaters else []
        echo(f"serving {'; '.join(served)}; Ctrl-C stops")
        if not private:
            echo(f"note: {host} may be reachable from other computers, over plain HTTP: anyone who sees a "
                 "link can use it", err=True)

    app.serve(workspace, host, port, ready=ready)
    echo("stopped")
