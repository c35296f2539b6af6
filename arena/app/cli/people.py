"""People on the web: `arena ballots issue | status | close | import` (people judging) and
`arena debaters issue | status | extend` (people debating)."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Sequence

import click

from arena.app.cli.common import HOURS, echo, echo_json, format_option, open_ws, table, workspace_option
from arena.base.errors import plural
from arena.base.limits import SERVE_PORT

if TYPE_CHECKING:  # the shapes of what the facade returns, for the renderers
    from arena.app.shapes.reports import OpenTurn


@click.group()
def ballots() -> None:
    """People judging: private ballot links, their progress, and ballots collected elsewhere."""


@ballots.command("issue")
@click.option("--judge", "judge", required=True, help="A judge of kind human.")
@click.option("--base-url", default=None, help=f"Where 'arena serve' is reached (default http://127.0.0.1:{SERVE_PORT}).")
@workspace_option
@format_option
def ballots_issue(judge: str, base_url: str | None, workspace: Path, fmt: str) -> None:
    """A new private link per person (their earlier links stop working); send each person theirs."""
    from arena.app import commands as app

    rows = app.ballots_issue(open_ws(workspace), judge, base_url)
    if fmt == "json":
        echo_json(rows)
        return
    table(rows, ["person", "assigned", "cast", "url"])
    echo("Each link is shown once and opens that person's queue: send it privately. "
         "Serve them with 'arena serve'.", err=True)


@ballots.command("status")
@click.option("--judge", "judge", default=None, help="A judge of kind human (default: all of them).")
@workspace_option
@format_option
def ballots_status(judge: str | None, workspace: Path, fmt: str) -> None:
    """Ballots cast per person, of the done matches assigned to them; whether each judge is open or closed, and
    how many matches it embargoes on the published site."""
    from arena.app import commands as app

    rows = app.ballots_status(open_ws(workspace), judge)
    if fmt == "json":
        echo_json(rows)
        return
    table(rows, ["judge", "state", "person", "assigned", "cast"])
    for row in {r["judge"]: r for r in rows}.values():  # one line per judge
        name = row["judge"]
        echo(f"{name}: closed: its links take no ballots ('arena ballots issue --judge {name}' reopens it)"
             if row["state"] == "closed" else
             f"{name}: open: {plural(row['embargoed'], 'match')} embargoed on the published site until all their "
             f"ballots are in or 'arena ballots close --judge {name}'")


@ballots.command("close")
@click.option("--judge", "judge", required=True, help="A judge of kind human.")
@workspace_option
def ballots_close(judge: str, workspace: Path) -> None:
    """Close a judge of people's ballots: its links take no more, and the next 'arena publish' shows the matches
    it held back. 'arena ballots issue' reopens it."""
    from arena.app import commands as app

    result = app.ballots_close(open_ws(workspace), judge)
    if result["already"]:
        echo(f"the ballots of judge {result['judge']!r} were closed already, at {result['closed_at']}; "
             f"'arena ballots issue --judge {result['judge']}' reopens them")
        return
    echo(f"closed the ballots of judge {result['judge']!r}: its links take no more ballots, and the "
         f"{plural(result['held'], 'match')} awaiting them left the embargo ({result['embargoed']} still await "
         f"another judge of people); 'arena publish' puts them on the site")


@ballots.command("import")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--judge", "judge", required=True, help="A judge of kind human.")
@workspace_option
def ballots_import(file: Path, judge: str, workspace: Path) -> None:
    """Store ballots collected on paper or in forms: a CSV with columns
    match_id,person,overall[,argument][,source][,language][,rationale]."""
    from arena.app import commands as app

    result = app.ballots_import(open_ws(workspace), file, judge)
    echo(f"stored {plural(result['ballots'], 'ballot')} of {plural(result['people'], 'person', 'people')} for "
         f"judge {result['judge']!r}")


@click.group()
def debaters() -> None:
    """People debating on the web (human entries with via = "web"): private links, their turns, more time."""


@debaters.command("issue")
@click.option("--entry", "entry_name", default=None, help="A web debater (default: all of them).")
@click.option("--base-url", default=None, help=f"Where 'arena serve' is reached (default http://127.0.0.1:{SERVE_PORT}).")
@workspace_option
@format_option
def debaters_issue(entry_name: str | None, base_url: str | None, workspace: Path, fmt: str) -> None:
    """A new private link per web debater (their earlier links stop working); send each person theirs."""
    from arena.app import commands as app

    rows = app.debaters_issue(open_ws(workspace), entry_name, base_url)
    if fmt == "json":
        echo_json(rows)
        return
    table(rows, ["entry", "pending", "done", "url"])
    if rows:
        echo("Each link is shown once and opens that person's turns: send it privately. "
             "Serve them with 'arena serve'.", err=True)


def _open_turns(rows: Sequence[tuple[str, OpenTurn]]) -> None:
    """A table of open turns: whose, which, since and until when."""
    table([{"entry": entry, **t, "side": t["side"].upper(), "lapsed": "yes" if t["lapsed"] else ""}
            for entry, t in rows], ["entry", "match", "stage", "side", "since", "deadline", "lapsed"])


@debaters.command("status")
@workspace_option
@format_option
def debaters_status(workspace: Path, fmt: str) -> None:
    """Each web debater's turns: open (with their deadlines), written, and missed."""
    from arena.app import commands as app

    rows = app.debaters_status(open_ws(workspace))
    if fmt == "json":
        echo_json(rows)
        return
    table(rows, ["entry", "pending", "done", "missed"])
    turns = [(r["entry"], t) for r in rows for t in r["open"]]
    if turns:
        echo("\nopen turns (lapsed: past the deadline, so the next 'arena run' forfeits that side unless "
             "'arena debaters extend' gives more time):")
        _open_turns(turns)


@debaters.command("extend")
@click.option("--entry", "entry_name", required=True, help="A web debater.")
@click.option("--hours", type=HOURS, required=True,
              help="Hours more for each open turn (from now, for a turn past its deadline).")
@workspace_option
def debaters_extend(entry_name: str, hours: float, workspace: Path) -> None:
    """More time for a web debater's open turns: each deadline moves --hours later."""
    from arena.app import commands as app

    done = app.debaters_extend(open_ws(workspace), entry_name, hours)
    if not done["extended"]:
        echo(f"entry {done['entry']!r} has no turn to write: nothing to extend")
        return
    echo(f"gave entry {done['entry']!r} {done['hours']:g} more hours on {plural(done['extended'], 'turn')}; "
         "its open turns now:")
    _open_turns([(done["entry"], t) for t in done["open"]])
