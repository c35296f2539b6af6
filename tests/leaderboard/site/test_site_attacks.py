"""The published site and `arena judge-attacks`: a judge's page shows its last attack run with its intervals, the
methodology explains the measure and each attack in the attack's own two sentences, and a workspace never attacked
shows no such table."""
from __future__ import annotations

import html
import re
from dataclasses import replace
from pathlib import Path

import pytest

from arena.app import commands as app
from arena.match.attacks import ATTACKS
from leaderboard.site.render import page_name, publish
from tests.leaderboard.site.test_site_judges import Tables
from tests.support.sites import HOSTILE, check_site, copied_demo, hostile_data, shared_demo

ATTACKED = "sim-panel"


@pytest.fixture(scope="module")
def attacked(builds, tmp_path_factory) -> tuple[Path, list]:
    """A copy of the demo whose judge sim-panel was attacked on three matches, then published; the rows
    judge-attacks gave."""
    path = copied_demo(builds, tmp_path_factory.mktemp("attacked") / "ws")
    ws = app.open_workspace(path)
    try:
        rows = app.judge_attacks(ws, ATTACKED, matches=3, progress=lambda line: None)
        app.publish(ws)
    finally:
        ws.close()
    return path, rows


def attack_section(page: str) -> str:
    """A judge page's part about its last attack run: from its heading to the end of its table."""
    return page.split('<h2 id="attacks">', 1)[1].split("</table>", 1)[0]


def test_the_attacked_judges_page_shows_its_last_run_with_intervals(attacked):
    path, rows = attacked
    page = (path / "site" / page_name("judges", ATTACKED)).read_text()
    section = attack_section(page)
    (shown,) = Tables(section).tables

    def rate(row) -> str:
        return f"{row['flip_rate']:.2f} ({row['ci_low']:.2f}–{row['ci_high']:.2f})"

    # A row per attack, in the run's order: trials, flips, the flip rate and its 95% interval, speeches caught.
    assert [[text for _, text in cells] for cells in shown] == [
        [r["attack"], str(r["trials"]), str(r["flips"]), rate(r), str(r["caught"])] for r in rows]
    assert [r["attack"] for r in rows] == list(ATTACKS) and all(r["trials"] for r in rows)
    # The simulator judged: labelled so, beside the heading and in a banner.
    assert section.startswith('Under attack <span class="badge sim">simulated</span></h2>')
    assert "these flip rates test the pipeline and say nothing about any real judge" in section
    # When the run began, and a link to what the attacks are, each attack to its own explanation.
    (began,) = {r.ran_at for r in _stored(path)}
    assert began[:10] in section and "<code>arena judge-attacks</code>" in section
    assert 'href="../methodology.html#attacks"' in section
    assert re.findall(r'href="\.\./methodology\.html#attack-([\w-]+)"', section) == list(ATTACKS)
    assert check_site(path / "site") == []  # every link lands on an id of its page


def test_a_judge_never_attacked_shows_no_table(attacked, builds):
    path, _ = attacked
    others = [p for p in (path / "site" / "judges").glob("*.html") if p.name != f"{ATTACKED}.html"]
    assert len(others) == 2
    for page in others:
        assert 'id="attacks"' not in page.read_text(), page.name
    # The demo as made attacks its sim-panel (arena.app.setup.demo.ATTACKED) and no other judge: only its page has one.
    made = shared_demo(builds) / "site" / "judges"
    assert len(list(made.glob("*.html"))) == 3
    assert [p.name for p in made.glob("*.html") if 'id="attacks"' in p.read_text()] == [f"{ATTACKED}.html"]


def test_the_methodology_explains_the_measure_and_each_attack_in_its_own_words(attacked):
    path, _ = attacked
    page = (path / "site" / "methodology.html").read_text()
    section = page.split('<h2 id="attacks">Judges under attack</h2>', 1)[1].split("<h2", 1)[0]
    text = " ".join(html.unescape(re.sub(r"<[^>]+>", "", section)).split())
    for said in ("A flip is a verdict (the majority of the runs) that went to the attacked side",
                 "Wilson score interval", "Caught counts the attacked speeches the arena's speech checks"):
        assert said in text
    found = dict(re.findall(r'<dt id="attack-([\w-]+)"><code>[\w-]+</code></dt><dd>([^<]*)</dd>', section))
    assert {name: html.unescape(summary) for name, summary in found.items()} == {
        name: attack.summary for name, attack in ATTACKS.items()}
    assert all(summary.count(". ") >= 1 for summary in found.values())  # two sentences each


def test_attack_rows_and_summaries_render_as_text_in_any_language(tmp_path):
    """Whatever a stored row or an attack's text holds is escaped; the labels follow the site's language."""
    judge = "judge<i>"
    board = {"ratings": hostile_data().boards["overall"]["ratings"], "meta": {"matches": 1}}
    row = {"judge": judge, "attack": HOSTILE, "trials": 2, "flips": 1, "flip_rate": 0.5, "ci_low": 0.09,
           "ci_high": 0.91, "caught": 1, "simulated": False, "ran_at": "2026-12-02T10:15:00+00:00"}
    for language, heading in (("en", "Under attack"), ("zh", "受攻击时的表现")):
        site = tmp_path / language
        publish(site, replace(hostile_data(), language=language, judge_boards={judge: {"overall": board}},
                              consistency={"robustness": [row]}, attacks={HOSTILE: f"It adds {HOSTILE}. It keeps."}))
        for page in site.rglob("*.html"):
            assert "<script>alert" not in page.read_text() and "<i>" not in page.read_text(), page
        section = attack_section((site / page_name("judges", judge)).read_text())
        assert section.startswith(f"{heading}</h2>")  # not simulated: no badge
        assert "&lt;script&gt;" in section and "0.50 <small>(0.09–0.91)</small>" in section
        assert "It adds &lt;script&gt;" in (site / "methodology.html").read_text()


def _stored(path: Path) -> list:
    ws = app.open_workspace(path)
    try:
        return ws.store.attack_results(ATTACKED)
    finally:
        ws.close()
