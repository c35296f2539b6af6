"""The published site per judge: a page of ratings for every judge with rated matches (Human-Elo beside the
LLM judges'), a judge switcher, and the consistency page, whose figures are `arena stats judges`'s."""
from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from dataclasses import replace
from pathlib import Path

import pytest

from arena.app import commands as app
from leaderboard.site.render import SiteData, page_name, publish
from tests.support.helpers import invoke
from tests.support.sites import MARKUP, check_site, people_workspace


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    return people_workspace(tmp_path_factory.mktemp("judges") / "ws")


class Tables(HTMLParser):
    """Each table's body rows as lists of cells, a cell being (data-value or None, text)."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tables: list[list[list[tuple[str | None, str]]]] = []
        self._cell: list | None = None
        self._in_body = False
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.tables.append([])
        elif tag == "tbody":
            self._in_body = True
        elif tag == "tr" and self._in_body:
            self.tables[-1].append([])
        elif tag == "td" and self._in_body:
            self._cell = [dict(attrs).get("data-value"), ""]

    def handle_endtag(self, tag):
        if tag == "tbody":
            self._in_body = False
        elif tag == "td" and self._cell is not None:
            self.tables[-1][-1].append((self._cell[0], " ".join(self._cell[1].split())))
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell[1] += data


def panel(html: str, view: str, mode: str = "raw") -> str:
    """One view's tab of a page, its raw board's part or its controlled board's (mode)."""
    section = html.split(f'id="panel-{view}"', 1)[1].split("</section>", 1)[0]
    raw, controlled = section.split('<div class="controlled-view">', 1)
    return raw if mode == "raw" else controlled


def board(html: str, view: str = "overall", mode: str = "raw") -> dict[str, float]:
    """entry → rating in one view's table of a page, raw or controlled (mode)."""
    (rows,) = Tables(panel(html, view, mode)).tables
    return {row[1][0]: float(row[4][0]) for row in rows}


# --- the pages ------------------------------------------------------------------------------------------------

def test_every_judge_with_rated_matches_has_a_page_with_its_own_ratings(workspace):
    site = workspace / "site"
    assert sorted(p.name for p in (site / "judges").glob("*.html")) == ["experts.html", "j1.html", "j2.html"]
    ws = app.open_workspace(workspace)
    try:
        for judge in ("j1", "experts", "j2"):
            html = (site / page_name("judges", judge)).read_text()
            rated = app.rate(ws, judge=judge, by="dimension", bootstrap=0)
            assert board(html) == {r["entry"]: r["rating"] for r in rated["ratings"]}, judge
            for dimension, fit in rated["by"].items():  # a tab per dimension the judge decided
                assert board(html, dimension) == {r["entry"]: r["rating"] for r in fit["ratings"]}
        # The index keeps the rating judge's (the first configured) ratings, the same as its page's.
        index = (site / "index.html").read_text()
        assert board(index) == board((site / "judges" / "j1.html").read_text())
        # The people's page has the dimension they decided, and no other.
        experts = (site / "judges" / "experts.html").read_text()
        assert re.findall(r'id="tab-(\w+)"', experts)[-1] == "argument"
        assert 'id="tab-source"' not in experts
    finally:
        ws.close()


def test_a_judges_page_names_its_kind_model_r_and_simulation(workspace):
    site = workspace / "site"
    j1 = (site / "judges" / "j1.html").read_text()
    assert '<h1>Ratings from judge j1 <span class="badge sim">simulated</span></h1>' in j1
    assert "<td>offline/j1</td>" in j1 and '<th scope="row">Runs (R)</th><td>3</td>' in j1
    assert "single · offline/j1" in j1
    experts = (site / "judges" / "experts.html").read_text()
    assert "<h1>Ratings from judge experts</h1>" in experts  # real ballots: no simulated label
    assert "Human-Elo (3 people)" in experts and "ann, bo, cy (3)" in experts
    assert "a match with none is not rated" in experts
    assert "ratings from judge <code>experts</code>" in experts  # the footer names the page's judge


def test_the_judge_switcher_links_every_judge_page_from_the_index_and_each_judge_page(workspace):
    site = workspace / "site"
    index = (site / "index.html").read_text()
    nav = index.split('<nav class="judges"', 1)[1].split("</nav>", 1)[0]
    assert re.findall(r'href="([^"]+)"', nav) == ["judges/j1.html", "judges/experts.html", "judges/j2.html",
                                                   "consistency.html", "bias.html"]
    assert "(shown here)" in nav.split("judges/experts.html")[0]  # the index shows j1's ratings
    experts = (site / "judges" / "experts.html").read_text()
    assert '<a href="../judges/experts.html" aria-current="page">experts</a>' in experts
    for page in site.rglob("*.html"):  # the consistency and bias pages are one click from anywhere
        assert 'consistency.html">Consistency of judges</a>' in page.read_text(), page
        assert "bias.html\">Judges' biases</a>" in page.read_text(), page
    assert check_site(site) == []


def test_the_consistency_page_shows_the_figures_of_arena_stats_judges(workspace):
    stats = json.loads(invoke("stats", "judges", "--format", "json", "-w", workspace).output)
    html = (workspace / "site" / "consistency.html").read_text()
    pairs, people, versus, late = Tables(html.split("<main>", 1)[1]).tables

    def figures(row):
        return [int(row[-3][1])] + [None if value == "" else float(value) for value, _ in row[-2:]]

    assert len(stats["pairs"]) == 6  # four judges
    assert [[cell[1].split()[0] for cell in row[:2]] + figures(row) for row in pairs] == [
        [p["a"], p["b"], p["matches"], p["agreement"], p["kappa"]] for p in stats["pairs"]]
    assert [[row[0][1], row[1][1]] + figures(row) for row in people] == [
        [p["a"], p["b"], p["matches"], p["agreement"], p["kappa"]] for p in stats["people"]]
    assert [[row[0][1], row[1][1]] + figures(row) for row in versus] == [
        [p["person"], p["vs"], p["matches"], p["agreement"], p["kappa"]] for p in stats["people_vs_judges"]
        if p["judge"] == "experts"]
    # Shown rounded to two places; undefined figures (no match in common) as a dash.
    latecomers = next(row for row in pairs if row[1][1].startswith("latecomers") and row[0][1].startswith("j1"))
    assert latecomers[-3:] == [(None, "0"), ("", "—"), ("", "—")]
    assert "0.66" in html and "0.74" in html  # the paper's reference values
    # The people of latecomers: one person, no pair; and dee, who cast no ballot, has no match in common with any.
    assert "The people of judge latecomers" in html and "One person: there is no pair to compare." in html
    assert [[cell[1] for cell in row] for row in late] == [["dee", "j1", "0", "—", "—"],
                                                             ["dee", "j2", "0", "—", "—"]]


def test_the_bias_page_shows_the_rows_of_arena_stats_bias(workspace):
    stats = json.loads(invoke("stats", "bias", "--format", "json", "-w", workspace).output)
    html = (workspace / "site" / "bias.html").read_text()
    (rows,) = Tables(html.split("<main>", 1)[1]).tables
    assert [row[0][0] for row in rows] == [r["judge"] for r in stats] == ["j1", "experts", "j2", "latecomers"]
    for row, r in zip(rows, stats):
        assert int(row[2][1]) == r["votes"]
        for cell, key in ((row[3], "pro"), (row[4], "longer")):  # the share, with its interval beside it
            if r[f"{key}_share"] is None:
                assert cell == ("", "—")
            else:
                assert float(cell[0]) == pytest.approx(r[f"{key}_share"])
                assert cell[1] == (f"{r[f'{key}_share']:.2f} ({r[f'{key}_ci_low']:.2f}–{r[f'{key}_ci_high']:.2f})")
        assert row[5][0] == ("" if r["length_coef"] is None else str(r["length_coef"]))
    # The simulated judges are labelled so; the people of experts cast real ballots.
    assert [("simulated" in row[0][1]) for row in rows] == [True, False, True, False]
    assert '<a href="judges/experts.html">experts</a>' in html  # a judge with a page links to it
    assert "What the judges lean to</a>" in html and 'href="bias.html" aria-current="page"' in html


def test_every_board_has_a_toggle_between_raw_and_controlled_ratings(workspace):
    site = workspace / "site"
    ws = app.open_workspace(workspace)
    try:
        for page, judge in (("index.html", "j1"), (page_name("judges", "j2"), "j2")):
            html = (site / page).read_text()
            # Without script: two radio buttons before the tabs, the raw one checked (no [rating] control here).
            assert '<input type="radio" class="sr" name="ratings-mode" id="mode-raw" checked>' in html
            assert '<input type="radio" class="sr" name="ratings-mode" id="mode-controlled">' in html
            assert '<label for="mode-controlled">controlled for length</label>' in html
            assert html.index('id="mode-controlled"') < html.index('role="tablist"')
            controlled = app.rate(ws, judge=judge, control=("length",), ci="sandwich", by="dimension")
            assert board(html, mode="controlled") == {r["entry"]: r["rating"] for r in controlled["ratings"]}
            assert board(html, "argument", "controlled") == {r["entry"]: r["rating"]
                                                             for r in controlled["by"]["argument"]["ratings"]}
            coef = controlled["control"]["length"]
            assert f"length {coef['coef']:+.0f} Elo (95% CI {coef['ci_low']:+.0f} to {coef['ci_high']:+.0f})" in \
                panel(html, "overall", "controlled")
            assert board(html) != board(html, mode="controlled")  # the fits differ
        methodology = (site / "methodology.html").read_text()
        assert '<h2 id="control">Controlled ratings</h2>' in methodology
        assert "x = (PRO − CON) / (PRO + CON)" in methodology and "sets no\n<code>[rating] control</code>" in methodology
        css = (site / "index.html").read_text()
        assert "#mode-controlled:checked ~ [role=tabpanel] .raw-view { display: none; }" in css
    finally:
        ws.close()


def test_the_published_results_carry_each_sides_style_counts(workspace):
    from arena.analysis.tally import match_features

    lines = (workspace / "site" / "results.csv").read_text().splitlines()
    header = lines[0].split(",")
    assert header[-6:] == ["words_a", "words_b", "citations_a", "citations_b", "markdown_a", "markdown_b"]
    ws = app.open_workspace(workspace)
    try:
        counts = match_features(ws.store)
    finally:
        ws.close()
    for line in lines[1:]:
        row = dict(zip(header, line.split(",")))
        sides = counts[row["match_id"]]
        assert [int(row[c]) for c in header[-6:]] == [sides["pro"]["length"], sides["con"]["length"],
                                                     sides["pro"]["citations"], sides["con"]["citations"],
                                                     sides["pro"]["markdown"], sides["con"]["markdown"]]
    assert any(int(line.split(",")[-6]) > 0 for line in lines[1:])


def test_ballot_rationales_render_escaped_on_match_pages_with_each_persons_name(workspace):
    html = (workspace / "site" / page_name("matches", "m00001")).read_text()
    assert MARKUP not in html and "ann on m00001: &lt;script&gt;alert(1)&lt;/script&gt;" in html
    experts = html.split("<h3>experts", 1)[1].split("</table>", 1)[0]
    assert '<th scope="col">Person</th>' in experts
    assert [row[0][1] for row in Tables(experts + "</table>").tables[0]] == ["ann", "bo", "cy"]


# --- the renderer alone -------------------------------------------------------------------------------------

def test_simulated_ballots_are_labelled_on_their_judges_page(tmp_path):
    row = {"entry": "a", "rating": 1010.0, "ci_low": 990.0, "ci_high": 1030.0, "matches": 1, "wins": 1, "ties": 0,
           "losses": 0, "rank_ub": 1, "provisional": True}
    boards = {"overall": {"ratings": [row], "meta": {"matches": 1}}}
    data = SiteData("T", "now", "crowd", True, boards, {}, [], [],
                    judges=[{"name": "crowd", "kind": "human", "model": "offline/crowd", "runs": 2, "options": {},
                             "people": ["ann", "bo"], "simulated": True}],
                    judge_boards={"crowd": boards}, consistency={"pairs": [], "people": [], "people_vs_judges": []})
    site = tmp_path / "site"
    publish(site, data)
    html = (site / "judges" / "crowd.html").read_text()
    assert '<span class="badge sim">simulated</span></h1>' in html
    assert "ballots cast for the tests, not by people" in html and "Human-Elo (2 people)" in html
    consistency = (site / "consistency.html").read_text()
    assert "Only one judge: there is no pair to compare." in consistency
    assert check_site(site) == []


def test_a_site_without_judges_has_no_judge_pages_and_an_empty_consistency_page(tmp_path):
    site = tmp_path / "site"
    publish(site, SiteData("T", "now", None, False, {"overall": {"ratings": [], "meta": {}}}, {}, [], []))
    assert list((site / "judges").iterdir()) == []
    assert 'class="judges"' not in (site / "index.html").read_text()
    assert "Only one judge" in (site / "consistency.html").read_text()
    assert check_site(site) == []


def test_hostile_names_on_the_bias_page_and_the_controlled_board_render_as_text(tmp_path):
    from tests.support.sites import HOSTILE, hostile_data

    data = hostile_data()
    row = data.boards["overall"]["ratings"][0]
    controlled = {"overall": {"ratings": [{**row, "rating": 1020.0}], "side": None, "meta": {"ci": "sandwich"},
                              "control": {"length": {"coef": 55.5, "ci_low": 10.0, "ci_high": 99.0}}}}
    bias = [{"judge": f"j{HOSTILE}", "panelist": f"p{HOSTILE}", "votes": 3, "pro_share": 1.0, "pro_ci_low": 0.4,
             "pro_ci_high": 1.0, "longer_share": None, "longer_ci_low": None, "longer_ci_high": None,
             "length_coef": None, "length_ci_low": None, "length_ci_high": None,
             "same_family": {"votes": 2, "own_share": 0.5, "others_share": None}}]
    site = tmp_path / "site"
    publish(site, replace(data, control=("length",), controlled=controlled, controlled_first=True, bias=bias))
    html = (site / "bias.html").read_text()
    assert HOSTILE not in html and "p&lt;script&gt;" in html and "j&lt;script&gt;" in html
    assert "0.50 vs — <small>(2 votes)</small>" in html
    index = (site / "index.html").read_text()
    assert HOSTILE not in index
    # [rating] control set: the controlled board is shown first.
    assert '<input type="radio" class="sr" name="ratings-mode" id="mode-controlled" checked>' in index
    assert "length +56 Elo (95% CI +10 to +99)" in index and board(index, mode="controlled") == {row["entry"]: 1020.0}
    assert "This workspace controls for them in all its ratings" in (site / "methodology.html").read_text()
    assert check_site(site) == []
