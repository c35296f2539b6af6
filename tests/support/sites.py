"""Published sites for the site tests: a SiteData whose every supplied text is hostile, the demo workspace,
a workspace judged by LLM judges and by people, and a checker of a whole site's links, resources and documents."""
from __future__ import annotations

import subprocess
import sys
from dataclasses import replace
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

from arena.app import commands as app
from arena.domain.records import Ballot, Forfeit, Match, Motion, Reference, Speech, Verdict
from leaderboard.site.render import SiteData
from tests.support.fixtures import Builds
from tests.support.helpers import entry, judge, new_workspace, people

ARENA = [sys.executable, "-m", "arena"]


def demo_workspace(path: Path, *args: str) -> Path:
    """`arena demo -w path` (with args), as a user runs it: a simulated tournament, published to path/site (the
    path of whose index it prints)."""
    done = subprocess.run([*ARENA, "demo", "-w", str(path), *args], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(path / "site" / "index.html")
    return path


def _demo_builder(language: str):
    return lambda path: demo_workspace(path, *(() if language == "en" else ("--language", language)))


def shared_demo(builds: Builds, language: str = "en") -> Path:
    """demo_workspace in language (`--language`), run once per test process (tests/support/fixtures.py) and shared by every
    test that asks: read it only (the site above all); a test that writes takes copied_demo."""
    return builds.get(f"demo:{language}", _demo_builder(language)).path


def copied_demo(builds: Builds, dest: Path, language: str = "en") -> Path:
    """A private copy at dest of the demo workspace in language (run once per test process)."""
    return builds.copy(f"demo:{language}", _demo_builder(language), dest).path


HOSTILE = '<script>alert("x")</script>'


def hostile_data(simulated: bool = True) -> SiteData:
    """A site of one match whose every id, name and text carries markup or a path."""
    motion = Motion(f"../m{HOSTILE}", f"Motion {HOSTILE}", "value", info_slide=f"slide {HOSTILE}")
    speeches = tuple(Speech(stage, side, f"{side} says {HOSTILE} & <img src=x onerror=alert(1)>",
                            (Reference(f"title {HOSTILE}", "javascript:alert(1)"),
                             Reference("fine", "https://example.org/a?b=1&c=2")))
                     for stage in ("constructive", "rebuttal", "summary") for side in ("pro", "con"))
    verdicts = (Verdict("judge<i>", 0, "pro", {"argument": "pro"}, f"because {HOSTILE}"),)
    match = Match("../../etc/x", motion, f"pro-{HOSTILE}", "con", "done", None, simulated, speeches, verdicts)
    row = {"entry": f"pro-{HOSTILE}", "rating": 1010.0, "ci_low": 990.0, "ci_high": 1030.0, "matches": 1, "wins": 1,
           "ties": 0, "losses": 0, "rank_ub": 1, "provisional": True}
    entries = [{"name": f"pro-{HOSTILE}", "debater": "direct", "model": f"offline/{HOSTILE}", "simulated": simulated,
                "retired": False, "params": {f"k{HOSTILE}": HOSTILE}, "matches": 1, "cost": 0.0, "cost_per_match": 0.0,
                "cost_unknown": False, "roles": {}}]
    return SiteData(title=f"T {HOSTILE}", generated_at="2026-01-01T00:00:00", judge="judge<i>", simulated=simulated,
                    boards={"overall": {"ratings": [row], "meta": {}}}, matrices={}, entries=entries,
                    matches=[match], results=[], judges=[{"name": f"j{HOSTILE}", "kind": "single", "model": "m",
                                                          "runs": 1, "options": {"x": HOSTILE}}],
                    scores={match.id: {"judge<i>": (1.0, 0.0)}})


# Realistic worst cases of a board's row: the longest names, models and figures a real arena shows.
LONG = [f"agent4debate-claude-3-5-sonnet-20241022-{k}" for k in "abc"] + \
       [f"search-baseline-gpt-4o-2024-08-06-temp07-{k}" for k in "def"]


def long_names_data(language: str = "en") -> SiteData:
    """A site of six entries with the longest realistic names, models and records (3-digit W–T–L, forfeits, unknown
    costs), whose 24 matches are 16 judged (a tie among them), 2 forfeited, 4 still scheduled, 1 running, 1 failed."""
    motion = Motion("long-1", "This house believes that long names must not break a leaderboard", "value", language)
    matches, scores = [], {}
    for k in range(24):
        pro, con = LONG[k % 6], LONG[(k + 1 + k // 6) % 6]
        status = "done" if k < 18 else "scheduled" if k < 22 else "running" if k == 22 else "failed"
        forfeit = Forfeit("con", "too-short: 3 words") if k in (16, 17) else None
        outcome = "tie" if k == 3 else "pro" if k % 3 else "con"
        verdicts = (Verdict("j", 0, outcome),) if status == "done" else ()
        matches.append(Match(f"m{k + 1:05d}", motion, pro, con, status, "timeout" if status == "failed" else None,
                             True, (), verdicts, forfeit))
        if verdicts:
            scores[matches[-1].id] = {"j": {"pro": (1.0, 0.0), "con": (0.0, 1.0), "tie": (0.5, 0.5)}[outcome]}
    rows = [{"entry": name, "rating": 1345.0 - 97 * i, "ci_low": 1118.0 - 97 * i, "ci_high": 1545.0 - 97 * i,
             "matches": 250, "wins": 118, "ties": 12, "losses": 120, "rank_ub": 1 + i, "provisional": i % 2 == 0}
            for i, name in enumerate(LONG)]
    entries = [{"name": name, "debater": name.split("-")[0] if i < 3 else "search-baseline",
                "model": "openrouter/anthropic/claude-3.5-sonnet-20241022" if i < 3 else "openai/gpt-4o-2024-08-06",
                "simulated": True, "retired": False, "params": {}, "matches": 250, "forfeits": 38, "cost": 123.4,
                "cost_per_match": 0.4936, "cost_unknown": True, "roles": {}} for i, name in enumerate(LONG)]
    return replace(hostile_data(), title="Debate Arena leaderboard", judge="j", judges=[], language=language,
                   boards={"overall": {"ratings": rows, "meta": {}}}, entries=entries, matches=matches, scores=scores)


THREE_OFFLINE = (entry("ace", strength=1.0), entry("bold", strength=0.0), entry("calm", strength=-1.0))
PEOPLE = ("ann", "bo", "cy")
MARKUP = "<script>alert(1)</script>"  # in ann's rationales


def ballots_for(match_ids: list[str]) -> list[Ballot]:
    """ann and bo on every match, cy on the first three only (partial ballots); rationales carry markup."""
    out = []
    for k, m in enumerate(match_ids):
        out.append(Ballot(m, "ann", "pro" if k % 2 else "con", {"argument": "pro"}, f"ann on {m}: {MARKUP}"))
        out.append(Ballot(m, "bo", "pro" if k % 3 else "tie", {}, "bo"))
        if k < 3:
            out.append(Ballot(m, "cy", "tie" if k == 0 else "con", {"argument": "con"}))
    return out


def people_workspace(path: Path) -> Path:
    """Three offline entries, 12 matches judged by j1 (R = 3) and j2 (R = 1); the people of judge experts
    cast (real, not simulated) ballots; judge latecomers has none. Both judges' ballots closed (nothing
    embargoed), then published to path/site."""
    new_workspace(path, entries=THREE_OFFLINE,
                  judges=[judge("j1", runs=3), people("experts", *PEOPLE), judge("j2", runs=1),
                          people("latecomers", "dee")])
    ws = app.open_workspace(path)
    try:
        app.schedule(ws, "round-robin", rounds=2)
        assert app.run(ws, progress=lambda line: None)["failed"] == 0
        debated = ws.store.debated_match_ids()
        ws.store.cast_ballots("experts", PEOPLE, ballots_for(debated), simulated=False)
        for name in ("experts", "latecomers"):
            app.ballots_close(ws, name)
        app.publish(ws)
    finally:
        ws.close()
    return path


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
