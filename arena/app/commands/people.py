"""`arena ballots issue | status | close | import` and `arena debaters issue | status | extend`: people who judge
through private ballot links or collected ballots, and people who debate on the web."""
from __future__ import annotations

from pathlib import Path

from arena.app.people import ballot_links as people
from arena.app.people import debater_links as debating
from arena.app.shapes.reports import (BallotLink, BallotsClosed, BallotsImported, BallotStatus, DebaterExtended,
                                      DebaterLink, DebaterStatus)
from arena.domain.ballots import DEFAULT_BASE_URL
from arena.workspace.folder import Workspace


def ballots_issue(ws: Workspace, judge: str, base_url: str | None = None) -> list[BallotLink]:
    """`arena ballots issue`: a new private link per person of a judge of people (arena.app.people.ballot_links.issue)."""
    return people.issue(ws, judge, base_url or DEFAULT_BASE_URL)


def ballots_status(ws: Workspace, judge: str | None = None) -> list[BallotStatus]:
    """`arena ballots status`: ballots cast per person (arena.app.people.ballot_links.status)."""
    return people.status(ws, judge)


def ballots_close(ws: Workspace, judge: str) -> BallotsClosed:
    """`arena ballots close`: the judge's links take no more ballots and the site shows what it held back
    (arena.app.people.ballot_links.close)."""
    return people.close(ws, judge)


def ballots_import(ws: Workspace, path: Path, judge: str) -> BallotsImported:
    """`arena ballots import`: the ballots of a CSV, stored at once (arena.app.people.ballot_links.import_csv)."""
    return people.import_csv(ws, path, judge)


def debaters_issue(ws: Workspace, entry: str | None = None, base_url: str | None = None) -> list[DebaterLink]:
    """`arena debaters issue`: a new private link per web debater, or for the one named (arena.app.people.debater_links.issue)."""
    return debating.issue(ws, entry, base_url or DEFAULT_BASE_URL)


def debaters_status(ws: Workspace) -> list[DebaterStatus]:
    """`arena debaters status`: each web debater's turns, open, written and missed (arena.app.people.debater_links.status)."""
    return debating.status(ws)


def debaters_extend(ws: Workspace, entry: str, hours: float) -> DebaterExtended:
    """`arena debaters extend`: hours more for each of the web debater's open turns (arena.app.people.debater_links.extend)."""
    return debating.extend(ws, entry, hours)
