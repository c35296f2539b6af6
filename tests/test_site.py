"""The published site: every supplied text escaped, file names safe, simulation labelled."""
from __future__ import annotations

from arena.records import Match, Motion, Reference, Speech, Verdict
from leaderboard.site import SiteData, page_name, publish

EVIL = '<script>alert("x")</script>'


def hostile_data(simulated: bool = True) -> SiteData:
    motion = Motion(f"../m{EVIL}", f"Motion {EVIL}", "value", info_slide=f"slide {EVIL}")
    speeches = tuple(Speech(stage, side, f"{side} says {EVIL} & <img src=x onerror=alert(1)>",
                            (Reference(f"title {EVIL}", "javascript:alert(1)"),
                             Reference("fine", "https://example.org/a?b=1&c=2")))
                     for stage in ("constructive", "rebuttal", "summary") for side in ("pro", "con"))
    verdicts = (Verdict("judge<i>", 0, "pro", {"argument": "pro"}, f"because {EVIL}"),)
    match = Match("../../etc/x", motion, f"pro-{EVIL}", "con", "done", None, simulated, speeches, verdicts)
    row = {"entry": f"pro-{EVIL}", "rating": 1010.0, "ci_low": 990.0, "ci_high": 1030.0, "matches": 1, "wins": 1,
           "ties": 0, "losses": 0, "rank_ub": 1, "provisional": True}
    entries = [{"name": f"pro-{EVIL}", "debater": "direct", "model": f"offline/{EVIL}", "simulated": simulated,
                "retired": False, "params": {f"k{EVIL}": EVIL}, "matches": 1, "cost": 0.0, "cost_per_match": 0.0,
                "cost_unknown": False, "roles": {}}]
    return SiteData(title=f"T {EVIL}", generated_at="2026-01-01T00:00:00", judge="judge<i>", simulated=simulated,
                    boards={"overall": {"ratings": [row], "meta": {}}}, matrices={}, entries=entries,
                    matches=[match], results=[], judges=[{"name": f"j{EVIL}", "kind": "single", "model": "m",
                                                          "runs": 1, "options": {"x": EVIL}}],
                    scores={match.id: {"judge<i>": (1.0, 0.0)}})


def test_hostile_text_renders_as_text(tmp_path):
    site = tmp_path / "site"
    publish(site, hostile_data())
    pages = list(site.rglob("*.html"))
    assert len(pages) >= 7  # index, matches, matrix, methodology, one match, one entry, one motion
    assert all(site in p.resolve().parents for p in pages)  # hostile ids cannot write outside the site
    for page in pages:
        html = page.read_text()
        assert "<script>alert" not in html and "<img" not in html and "<i>" not in html
        assert "Simulated results" in html
    match_html = (site / page_name("matches", "../../etc/x")).read_text()
    assert "&lt;script&gt;" in match_html
    assert 'href="javascript:' not in match_html and 'href="#"' in match_html
    assert 'href="https://example.org/a?b=1&amp;c=2"' in match_html
    assert match_html.count('<section class="speech') == 6


def test_page_names_are_safe_and_distinct():
    assert page_name("matches", "m00001") == "matches/m00001.html"
    hostile = page_name("matches", "../x")
    assert "/" not in hostile.split("/", 1)[1] and not hostile.split("/", 1)[1].startswith(".")
    assert page_name("motions", "a b") != page_name("motions", "a_b")


def test_no_banner_when_nothing_is_simulated(tmp_path):
    index = publish(tmp_path / "site", SiteData("T", "now", None, False, {"overall": {"ratings": [], "meta": {}}},
                                                {}, [], []))
    assert "Simulated results" not in index.read_text()
    assert "No judged matches yet" in index.read_text()


CUSTOM = '''[search]
provider = "offline"
''' + "".join(f'[[entries]]\nname = "{n}"\ndebater = "direct"\nmodel = "offline/{n}"\nstrength = {s}\n'
              for n, s in (("ace", 1.0), ("bold", 0.0), ("calm", -1.0))) + '''
[[judges]]
name = "dx"
kind = "debatrix"
model = "offline/dx"
runs = 2
[judges.options.dimensions.argument]
[judges.options.dimensions.source]
[judges.options.dimensions.language]
[judges.options.dimensions.clash]
definition = "how directly each side meets the other's strongest points"
'''


def test_a_custom_dimension_flows_to_rate_the_csv_export_and_the_site(tmp_path):
    """A debatrix judge with a fourth dimension, offline models, end to end through the command line."""
    import csv
    import json

    from arena.workspace import init_workspace
    from tests.test_cli import invoke

    path = tmp_path / "ws"
    init_workspace(path, CUSTOM)
    assert invoke("schedule", "--format", "round-robin", "-w", path).exit_code == 0
    ran = invoke("run", "-w", path)
    assert ran.exit_code == 0, ran.output
    matches = len(json.loads(invoke("match", "list", "--format", "json", "-w", path).output))

    rated = invoke("rate", "--by", "dimension", "--format", "json", "--bootstrap", "0", "-w", path)
    assert rated.exit_code == 0, rated.output
    by = json.loads(rated.output)["by"]
    assert list(by) == ["argument", "source", "language", "clash"]  # the default three first, then the others
    assert by["clash"]["meta"]["matches"] == matches and {r["entry"] for r in by["clash"]["ratings"]} == {
        "ace", "bold", "calm"}

    exported = invoke("rate", "--format", "csv", "-w", path)
    assert exported.exit_code == 0, exported.output
    rows = list(csv.DictReader(exported.output.splitlines()))
    assert [r["dimension"] for r in rows[:5]] == ["overall", "argument", "source", "language", "clash"]
    clash = [r for r in rows if r["dimension"] == "clash"]
    assert len(clash) == matches and all(float(r["score_a"]) + float(r["score_b"]) == 2 for r in clash)

    published = invoke("publish", "-w", path)
    assert published.exit_code == 0, published.output
    site = path / "site"
    index = (site / "index.html").read_text()
    assert 'id="panel-clash"' in index and "Clash (dimension)" in index
    assert index.index('id="tab-language"') < index.index('id="tab-clash"')
    match_page = (site / page_name("matches", clash[0]["match_id"])).read_text()
    assert '<th scope="col">Language</th><th scope="col">Clash</th>' in match_page
    assert {r["view"] for r in csv.DictReader((site / "leaderboard.csv").read_text().splitlines())} >= {
        "overall", "argument", "source", "language", "clash"}
    assert sum(r["dimension"] == "clash" for r in csv.DictReader((site / "results.csv").read_text().splitlines())) \
        == matches
    assert "clash" in json.loads((site / "leaderboard.json").read_text())["views"]
