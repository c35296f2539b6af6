"""A link check over the whole published site: every internal link resolves, nothing is loaded from outside,
every page is a proper document (lang, title) and every table has header cells."""
from __future__ import annotations

import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest


from arena.app.commands import open_workspace
from leaderboard.site import publish
from tests.test_site import hostile_data

ARENA = [sys.executable, "-m", "arena"]


class Page(HTMLParser):
    """What the checks need from one page: links, loaded resources, ids, lang, title, tables and their headers."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.links: list[str] = []  # href of <a> and <area>
        self.loads: list[tuple[str, str, str]] = []  # (tag, attribute, value) the browser would fetch
        self.ids: set[str] = set()
        self.lang: str | None = None
        self.title = ""
        self.tables: list[int] = []  # header cells per table, in document order
        self._open_tables: list[int] = []
        self._in_title = False
        self.styles = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if "id" in a:
            self.ids.add(a["id"])
        if tag == "html":
            self.lang = a.get("lang")
        elif tag == "title":
            self._in_title = True
        elif tag in ("a", "area") and "href" in a:
            self.links.append(a["href"])
        elif tag == "link" and "href" in a:
            self.loads.append((tag, "href", a["href"]))
        elif tag == "table":
            self._open_tables.append(len(self.tables))
            self.tables.append(0)
        elif tag == "th" and self._open_tables:
            self.tables[self._open_tables[-1]] += 1
        for attr in ("src", "srcset", "poster", "data", "action", "formaction"):
            if attr in a:
                self.loads.append((tag, attr, a[attr]))
        if tag == "svg" or tag == "image" or tag == "use":
            for attr in ("href", "xlink:href"):
                if attr in a:
                    self.loads.append((tag, attr, a[attr]))

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        elif tag == "table" and self._open_tables:
            self._open_tables.pop()

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
        if self.lasttag == "style":
            self.styles += data


def parse(path: Path) -> Page:
    page = Page()
    page.feed(path.read_text(encoding="utf-8"))
    page.close()
    return page


def check_site(site: Path) -> list[str]:
    """Every problem found in the site under `site`; the empty list when it is sound."""
    problems: list[str] = []
    pages = {p: parse(p) for p in sorted(site.rglob("*.html"))}
    for path, page in pages.items():
        where = path.relative_to(site).as_posix()
        if not page.lang:
            problems.append(f"{where}: <html> has no lang")
        if not page.title.strip():
            problems.append(f"{where}: no <title>")
        problems += [f"{where}: table {i + 1} has no <th> header cells" for i, n in enumerate(page.tables) if not n]
        for tag, attr, value in page.loads:
            problems.append(f"{where}: <{tag} {attr}={value!r}> loads a resource; the site must inline everything")
        if "url(" in page.styles or "@import" in page.styles:
            problems.append(f"{where}: the stylesheet fetches something (url() or @import)")
        for href in page.links:
            parts = urlsplit(href)
            if parts.scheme in ("http", "https", "mailto"):
                continue
            if parts.scheme:
                problems.append(f"{where}: link with scheme {parts.scheme!r}: {href!r}")
                continue
            if href == "#":
                continue  # an inert link: a reference whose URL was not http(s)
            if not parts.path:  # a fragment on this page
                if unquote(parts.fragment) not in page.ids:
                    problems.append(f"{where}: {href!r} names no id on the page")
                continue
            target = (path.parent / unquote(parts.path)).resolve()
            if site.resolve() not in target.parents:
                problems.append(f"{where}: {href!r} points outside the site")
            elif not target.is_file():
                problems.append(f"{where}: {href!r} does not exist")
            elif parts.fragment and target in pages and unquote(parts.fragment) not in pages[target].ids:
                problems.append(f"{where}: {href!r} names no id on its page")
    return problems


@pytest.fixture(scope="module")
def demo_workspace(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("links") / "ws"
    done = subprocess.run([*ARENA, "demo", "-w", str(path)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return path


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
        assert ws.store.matches() == [ws.store.match(r["id"]) for r in ws.store.match_rows()]
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
