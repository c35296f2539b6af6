"""The published site: self-contained pages, every supplied text escaped, simulation labelled."""
from __future__ import annotations

from arena.records import Match, Motion, Reference, Speech, Verdict
from leaderboard.site import publish

EVIL = '<script>alert("x")</script>'


def hostile_match() -> Match:
    motion = Motion("m-1", f"Motion {EVIL}", "value")
    speeches = tuple(Speech(stage, side, f"{side} says {EVIL} & <img src=x onerror=alert(1)>",
                            (Reference(f"title {EVIL}", "javascript:alert(1)"),
                             Reference("fine", "https://example.org/a?b=1&c=2")))
                     for stage in ("constructive", "rebuttal", "summary") for side in ("pro", "con"))
    verdicts = (Verdict("judge<i>", 0, "pro", {"argument": "pro"}, f"because {EVIL}"),)
    return Match("../../etc/x", motion, f"pro-{EVIL}", "con", "done", None, True, speeches, verdicts)


def test_hostile_text_renders_as_text(tmp_path):
    board = {"ratings": [{"entry": f"pro-{EVIL}", "rating": 1010.0, "ci_low": 990.0, "ci_high": 1030.0,
                          "matches": 1, "wins": 1, "ties": 0, "losses": 0, "rank_ub": 1, "provisional": True}],
             "meta": {"bootstrap": 10}}
    index = publish(tmp_path / "site", title=f"T {EVIL}", leaderboard=board,
                    entries=[{"name": f"pro-{EVIL}", "debater": "direct", "model": "offline/x", "simulated": True}],
                    matches=[hostile_match()], judge="j<b>", simulated=True, generated_at="now")
    pages = [index] + list((tmp_path / "site" / "matches").glob("*.html"))
    assert len(pages) == 2
    # The hostile id cannot write outside the site folder.
    assert all((tmp_path / "site") in p.resolve().parents for p in pages)
    for page in pages:
        html = page.read_text()
        assert "<script>" not in html and "<img" not in html and "<i>" not in html and "<b>" not in html
        assert "&lt;script&gt;" in html
        assert "Simulated results" in html
    match_html = pages[1].read_text()
    assert 'href="javascript:' not in match_html and 'href="#"' in match_html
    assert 'href="https://example.org/a?b=1&amp;c=2"' in match_html
    assert match_html.count('<section class="speech') == 6


def test_no_banner_when_nothing_is_simulated(tmp_path):
    index = publish(tmp_path / "site", title="T", leaderboard={"ratings": [], "meta": {"bootstrap": 0}},
                    entries=[], matches=[], judge=None, simulated=False, generated_at="now")
    assert "Simulated results" not in index.read_text()
    assert "No judged matches yet" in index.read_text()
