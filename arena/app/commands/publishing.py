"""`arena publish`, `arena export` and `arena serve`: the static site, the open-data tables and the web app where
people cast ballots and write speeches."""
from __future__ import annotations

from pathlib import Path
from typing import Callable

from arena.app.commands.names import first_judge
from arena.app.commands.stats import stats_bias, stats_judges
from arena.app.people import ballot_links as people
from arena.app.shapes.reports import ExportResult
from arena.analysis.tally import match_features
from arena.base.errors import UserError
from arena.base.files import replace_folder, tidy_beside
from arena.base.limits import SERVE_PORT
from arena.domain.records import JudgeSpec
from arena.workspace.folder import Workspace


def publish(ws: Workspace, out: Path | None = None, *, keep_others: bool = True) -> Path:
    """Write the static site (default <workspace>/site) from the first judge's verdicts; return its index. The
    matches people are still judging blind are left out of it (arena.app.people.ballot_links.embargo).

    The site is built beside out and swapped in at once (arena.base.files.replace_folder): a reader sees the old site
    or the new one, never a mix. Files in out the publish did not write stay (keep_others), withdrawn pages
    excepted.

    Incremental: when nothing the site is made from has changed since the last publish to out (site_state), and
    its files are as that publish left them, the site stays as it is; otherwise the pages of unchanged matches are
    hard links to the old site's (leaderboard.site.render)."""
    # Lazy: the renderer and the rating code (pandas) cost every other command, and a publish that finds nothing
    # new, half a second to import.
    from arena.app.site_data import site_data, site_state, withdrawn_pages
    from leaderboard.site.published import unchanged

    out = Path(out) if out else ws.path / "site"
    if ws.path.resolve().is_relative_to(out.resolve()):  # the swap would take the workspace's files with the site
        raise UserError(f"--out {out}: holds the workspace {ws.path}; publish to a folder of its own")
    tidy_beside(out)  # a killed publish's leftovers go, also when there is nothing new to publish
    # One state of the database for all it reads, the embargo first: a match a run finishes meanwhile is not on
    # this site, rather than on it though the embargo, decided before it existed, did not know to hold it back.
    with ws.store.snapshot():
        embargo = people.embargo(ws)
        state = site_state(ws, embargo.awaiting, embargo.unplayed)
        if unchanged(out, state, others=keep_others, withdrawn=withdrawn_pages(ws, embargo.withheld)):
            return out / "index.html"
        from leaderboard.site.render import publish as render

        features = match_features(ws.store)  # every speech read once, for the bias report and controlled boards
        judges = stats_judges(ws, embargo.withheld)
        bias = stats_bias(ws, withheld=embargo.withheld, features=features)
        data = site_data(ws, first_judge(ws), judges, bias=bias, features=features, awaiting=embargo.awaiting,
                         unplayed=embargo.unplayed)
        withdrawn = set(data.withdrawn)
        replace_folder(out, lambda folder: render(folder, data, previous=out, state=state),
                       keep=lambda name: keep_others and name not in withdrawn)
    return out / "index.html"


def export(ws: Workspace, out: Path | None = None, *, public: bool = False) -> ExportResult:
    """`arena export`: the workspace as Parquet tables with a dataset card (arena.opendata.exports) in out (default
    <workspace>/export), built beside it and swapped in; {path, public, rows: {table: rows}}. A public export
    also leaves out what the published site embargoes (arena.app.people.ballot_links.embargo)."""
    from arena.opendata.exports import export_workspace  # lazy: pyarrow, for this command only

    out = Path(out) if out else ws.path / "export"
    if ws.path.resolve().is_relative_to(out.resolve()):  # the swap would take the workspace's files with it
        raise UserError(f"--out {out}: holds the workspace {ws.path}; export to a folder of its own")
    blocked = next((p for p in (out, *out.parents) if p.exists() and not p.is_dir()), None)
    if blocked is not None:
        raise UserError(f"--out {out}: {blocked} is a file, not a folder")
    if public:
        ws.store.ballot_secret()  # made the first time it is needed: a write, which the snapshot below cannot hold
    with ws.store.snapshot():  # the embargo and every table from one state of the database, as publish reads
        withheld = people.embargo(ws).withheld if public else frozenset()
        rows = export_workspace(ws, out, public=public, withheld=withheld)
    return {"path": str(out), "public": public, "rows": rows}


def serve(path: Path, host: str = "127.0.0.1", port: int = SERVE_PORT,
          ready: Callable[[str, list[JudgeSpec], list[str], bool], None] = lambda *told: None) -> None:
    """`arena serve`: the web app of the workspace at path on host:port until Ctrl-C or SIGTERM (arena.app.people.web);
    ready(url, judges of people, web debaters, private: whether host is reachable from this computer only) once
    listening."""
    from arena.app.people import web  # lazy: Starlette, for this command only

    web.serve(path, host, port,
              ready=lambda url, judges, debaters: ready(url, judges, debaters, web.is_loopback(host)))
