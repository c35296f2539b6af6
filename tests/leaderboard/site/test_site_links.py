"""A link check over the whole published site: every internal link resolves, nothing is loaded from outside,
every page is a proper document (lang, title) and every table has header cells."""
from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest


from arena.app.commands import open_workspace
from leaderboard.site.render import publish
from tests.support.sites import check_site, hostile_data, parse, shared_demo


@pytest.fixture(scope="module")
def demo_workspace(builds) -> Path:
    return shared_demo(builds)  # `arena demo`, once per test process; only read here


def test_every_internal_link_of_the_demo_site_resolves(demo_workspace):
    site = demo_workspace / "site"
    pages = list(site.rglob("*.html"))
    # index, matches, matrix, methodology; 60 matches, 6 entries, and the motions played
    assert len(list((site / "matches").glob("*.html"))) == 60
    assert len(list((site / "entries").glob("*.html"))) == 6
    assert list((site / "motions").glob("*.html"))
    assert {"index.html", "matches.html", "matrix.html", "methodology.html"} <= {p.name for p in pages}
    assert check_site(site) == []
    # Every page is reachable: the links from the index and the match list reach every other page.
    linked = set()
    for path in pages:
        for href in parse(path).links:
            parts = urlsplit(href)
            if not parts.scheme and parts.path:
                linked.add((path.parent / unquote(parts.path)).resolve())
    assert {p.resolve() for p in pages if p.name != "index.html"} <= linked


def test_downloads_are_linked_and_present(demo_workspace):
    site = demo_workspace / "site"
    links = parse(site / "index.html").links
    for name in ("results.csv", "leaderboard.csv", "leaderboard.json"):
        assert name in links and (site / name).stat().st_size > 0


def test_hostile_ids_still_give_working_links(tmp_path):
    """Ids with slashes, dots and markup become hashed file names; the links must use the same names."""
    site = tmp_path / "site"
    publish(site, hostile_data())
    assert check_site(site) == []


def test_the_checker_finds_broken_links_and_outside_resources(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text(
        '<!doctype html><html><head><title>x</title><script src="https://cdn.example/x.js"></script></head>'
        '<body><a href="gone.html">x</a><a href="#nowhere">y</a><a href="javascript:alert(1)">z</a>'
        '<table><tr><td>1</td></tr></table><img src="pic.png"></body></html>')
    problems = "\n".join(check_site(site))
    for needle in ("no lang", "x.js", "gone.html", "#nowhere", "javascript", "no <th>", "pic.png"):
        assert needle in problems, (needle, problems)


def test_bulk_match_loading_equals_one_by_one(demo_workspace):
    ws = open_workspace(demo_workspace)
    try:
        assert ws.store.matches() == [ws.store.match(m.id) for m in ws.store.match_states()]
    finally:
        ws.close()


def test_entry_and_motion_pages_show_each_result(demo_workspace):
    """Per entry and per motion, each match's result under the rating judge, not just that it was played."""
    site = demo_workspace / "site"
    entry = (site / "entries" / "sim-ace.html").read_text()
    outcomes = sum(entry.count(f'">{word} ') for word in ("won", "lost", "tied"))
    assert outcomes == 20  # every demo entry plays 20 matches
    motion = next((site / "motions").glob("*.html")).read_text()
    assert "Side balance" in motion and "PRO share" in motion
    assert motion.count("–") >= motion.count('href="../matches/')  # a score beside every match
    listing = (site / "matches.html").read_text()
    assert listing.count('<td class="num" data-value="') == 60
