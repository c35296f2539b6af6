"""Honest labels (issue 35, part 3): an entry any of whose speeches or searches came from the simulator is simulated
in `arena rate --format json`, the results CSV, leaderboard.json and on every page, with the banner; a real model's
entry that only met a simulated opponent is not.

The entries run on real models behind the fake OpenAI server (real HTTP); only the search provider is the offline
one, which is what made a leaderboard of real models pass for real before."""
from __future__ import annotations

import json

import pytest

from arena.app import commands as app
from arena.app.commands import open_workspace
from leaderboard.results import ResultsError, read_results, simulated_entries
from leaderboard.site.render import page_name
from tests.support.helpers import entry, invoke, judge, mark_checked, new_workspace, query, requested_schema, \
    schema_instance, speech_text, stage_and_side

def respond(body: dict) -> str:
    """A judge's structured answer; else a debater's speech, marked with its model, stage and side."""
    schema = requested_schema(body)
    if schema is not None:
        return json.dumps(schema_instance(schema))
    turn = stage_and_side(body)
    assert turn is not None, body["messages"][0]["content"][:300]
    return speech_text(f"[{body['model']} {turn[0]} {turn[1]}]")  # prose of its own: no echo of the other side


def played(tmp_path, fake_llm, *, search: dict, offline_entry: bool = True):
    """A round-robin of a search-baseline entry "sb" and a direct entry "base" on the fake LLM server, and (with
    offline_entry) the simulated "sim", judged by a single judge on the fake server; search as given."""
    fake_llm.responder = respond
    base_url = fake_llm.api_base
    entries = [entry("sb", "search-baseline", "openai/sb", api_base=base_url),
               entry("base", model="openai/base", api_base=base_url)]
    if offline_entry:
        entries.append(entry("sim", strength=0.3))
    path = new_workspace(tmp_path / "ws", arena={"judge_runs": 1}, llm={"backoff_s": 0.01}, search=search,
                         motions=["builtin:en"], entries=entries,
                         judges=[judge("j", model="openai/judge", api_base=base_url)])
    mark_checked(path)
    ws = open_workspace(path)
    try:
        app.schedule(ws, "round-robin", rounds=1)
        counts = app.run(ws, concurrency=2, progress=lambda line: None)
        assert counts["failed"] == 0 and counts["done"] == (6 if offline_entry else 2), counts  # each pair, both sides
    finally:
        ws.close()
    return path


def rated(path) -> dict:
    result = invoke("rate", "-w", path, "--format", "json", "--bootstrap", "50")
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def published(path):
    result = invoke("publish", "-w", path)
    assert result.exit_code == 0, result.output
    return path / "site"


@pytest.fixture
def offline_search(tmp_path, fake_llm):
    return played(tmp_path, fake_llm, search={"provider": "offline"})


def test_offline_search_makes_the_searching_entry_and_its_matches_simulated_not_its_opponent(offline_search):
    path = offline_search
    # The ledger marks the offline provider's searches simulated, and only sb searched.
    assert query(path, "SELECT DISTINCT model, simulated FROM calls WHERE kind = 'search'") == [("offline", 1)]
    # Every match is simulated: sb's searches, or sim's model; base vs sb is simulated though no model is offline.
    flags = dict(((pro, con), flag) for pro, con, flag in query(path, "SELECT pro, con, simulated FROM matches"))
    assert set(flags.values()) == {1} and len(flags) == 6
    result = rated(path)
    assert {r["entry"]: r["simulated"] for r in result["ratings"]} == {"sb": True, "base": False, "sim": True}
    assert result["meta"]["simulated"] is True
    assert list(result["ratings"][0])[-1] == "simulated"  # last in each row, as docs/reference/json.md shows
    # The Python-facing facade says the same.
    ws = open_workspace(path)
    try:
        facade = app.rate(ws, bootstrap=20)
        assert {r["entry"]: r["simulated"] for r in facade["ratings"]} == {"sb": True, "base": False, "sim": True}
        by = app.rate(ws, bootstrap=20, by="dimension")["by"]
        assert all(r["simulated"] == (r["entry"] != "base") for fit in by.values() for r in fit["ratings"])
    finally:
        ws.close()


def test_the_results_csv_carries_each_matchs_flag_and_reads_back(offline_search, tmp_path):
    path = offline_search
    exported = invoke("rate", "-w", path, "--format", "csv")
    assert exported.exit_code == 0, exported.output
    lines = exported.output.splitlines()
    column = lines[0].split(",").index("simulated")  # the style counts follow it
    assert {line.split(",")[column] for line in lines[1:]} == {"true"}
    csv_file = tmp_path / "results.csv"
    csv_file.write_text(exported.output)
    frame = read_results(csv_file)
    assert frame["simulated"].dtype == bool and frame["simulated"].all()
    # From a file, which records simulation per match, an entry is simulated when any of its matches is.
    from_file = json.loads(invoke("rate", "--results", csv_file, "--format", "json", "--bootstrap", "20").output)
    assert all(r["simulated"] for r in from_file["ratings"])
    again = invoke("rate", "--results", csv_file, "--format", "csv")
    assert again.output == exported.output  # read and written back unchanged
    # A results CSV without the column still reads, and then says nothing is simulated.
    plain = tmp_path / "plain.csv"
    plain.write_text("\n".join(",".join(v for k, v in enumerate(line.split(",")) if k != column) for line in lines)
                     + "\n")
    without = json.loads(invoke("rate", "--results", plain, "--format", "json", "--bootstrap", "20").output)
    assert not any(r["simulated"] for r in without["ratings"])


def test_leaderboard_json_and_every_page_label_the_simulated_entries(offline_search):
    site = published(offline_search)
    board = json.loads((site / "leaderboard.json").read_text())
    assert board["simulated"] is True
    overall = board["views"]["overall"]["ratings"]
    assert {r["entry"]: r["simulated"] for r in overall} == {"sb": True, "base": False, "sim": True}
    assert all(r["simulated"] == (r["entry"] != "base") for view in board["views"].values() for r in view["ratings"])
    assert "simulated" in (site / "leaderboard.csv").read_text().splitlines()[0]
    assert ",simulated," in (site / "results.csv").read_text().splitlines()[0]
    pages = list(site.rglob("*.html"))
    assert len(pages) > 10
    for page in pages:
        assert "Simulated results" in page.read_text(), page
    sb, base = ((site / page_name("entries", name)).read_text() for name in ("sb", "base"))
    badge = '<span class="badge sim">simulated</span>'
    assert badge in sb.split("</h1>")[0] and badge not in base.split("</h1>")[0]
    assert "offline search provider" in (site / "index.html").read_text()


def test_real_search_leaves_everything_real(tmp_path, fake_llm, fake_tavily, monkeypatch):
    """The same entries with Tavily (the fake server) and no simulated entry: nothing is labelled simulated."""
    monkeypatch.setenv("TAVILY_API_KEY", "tvly-test")
    path = played(tmp_path, fake_llm, offline_entry=False,
                  search={"provider": "tavily", "api_base_url": fake_tavily.base_url, "max_results": 3})
    assert query(path, "SELECT DISTINCT model, simulated FROM calls WHERE kind = 'search'") == [("tavily", 0)]
    assert query(path, "SELECT DISTINCT simulated FROM matches") == [(0,)]
    result = rated(path)
    assert {r["entry"]: r["simulated"] for r in result["ratings"]} == {"sb": False, "base": False}
    assert result["meta"]["simulated"] is False
    exported = invoke("rate", "-w", path, "--format", "csv").output.splitlines()
    column = exported[0].split(",").index("simulated")
    assert {line.split(",")[column] for line in exported[1:]} == {"false"}
    site = published(path)
    board = json.loads((site / "leaderboard.json").read_text())
    assert board["simulated"] is False
    assert not any(r["simulated"] for r in board["views"]["overall"]["ratings"])
    assert not any("Simulated results" in page.read_text() for page in site.rglob("*.html"))


def test_a_bad_simulated_cell_names_its_line(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text("match_id,entry_a,entry_b,score_a,score_b,simulated\nm1,a,b,1,0,TRUE\nm2,a,b,0,1,\n"
                    "m3,b,a,1,0,maybe\n")
    with pytest.raises(ResultsError, match=r"r\.csv:4: simulated 'maybe' is not true, false or empty"):
        read_results(path)
    path.write_text("match_id,entry_a,entry_b,score_a,score_b,simulated\nm1,a,b,1,0,TRUE\nm2,c,b,0,1,\n")
    frame = read_results(path)
    assert frame["simulated"].tolist() == [True, False] and simulated_entries(frame) == {"a", "b"}


def banner(page) -> dict[str, str]:
    """The simulation banner of a published page: each line's part → its text, tags stripped."""
    import re

    html = page.read_text()
    found = re.search(r'<div class="banner" role="note" id="simulation">(.*?)</div>', html, re.S)
    assert found, f"no simulation banner on {page.name}"
    return {part: re.sub(r"<[^>]+>", "", text).strip()
            for part, text in re.findall(r'<li data-part="(\w+)">(.*?)</li>', found.group(1), re.S)}


def test_the_banner_says_what_was_simulated_and_what_was_not(offline_search):
    """Real models' speeches beside the offline search provider's sources (issue 50): the match of two real models
    says its search was simulated and its speeches and verdicts were not; the board counts each part; an entry's
    page tells its own speeches and searches from its opponents'."""
    site = published(offline_search)
    rows = query(offline_search, "SELECT id, pro, con FROM matches")
    real = [m for m, pro, con in rows if "sim" not in (pro, con)]
    against_sim = [(m, "PRO" if pro == "sim" else "CON") for m, pro, con in rows if "sim" in (pro, con)]
    assert len(real) == 2 and len(against_sim) == 4
    for match in real:
        sb = "PRO" if dict((m, p) for m, p, _ in rows)[match] == "sb" else "CON"
        lines = banner(site / page_name("matches", match))
        assert lines["search"].startswith(f"Web search: simulated ({sb}) — the offline search provider's"), lines
        assert lines["speeches"] == "Speeches: not simulated — written by the entries' models.", lines
        assert lines["verdicts"].startswith("Verdicts: not simulated"), lines
        assert "not by an LLM" not in (site / page_name("matches", match)).read_text()
    for match, side in against_sim:
        lines = banner(site / page_name("matches", match))
        assert lines["speeches"].startswith(f"Speeches: simulated ({side}) — written by the simulator"), lines
        assert lines["verdicts"].startswith("Verdicts: not simulated"), lines
    board = banner(site / "index.html")
    assert board["speeches"].startswith("Speeches: simulated in 4 of 6 matches"), board
    assert board["search"].startswith("Web search: simulated in 4 of 6 matches"), board  # sb's four
    assert board["verdicts"].startswith("Verdicts: not simulated"), board
    base, sb = (banner(site / page_name("entries", name)) for name in ("base", "sb"))
    assert base["speeches"].startswith("Its speeches: not simulated") and base["search"] == \
        "Its web search: not simulated." and base["opponents"] == \
        "Its opponents' speeches and searches: simulated in 4 of 4 matches.", base
    assert sb["speeches"].startswith("Its speeches: not simulated"), sb
    assert sb["search"].startswith("Its web search: simulated in 4 of 4 matches"), sb
    # The judge is a real model: its verdicts are its own, on debates the simulator had a part in.
    judge = (site / page_name("judges", "j")).read_text()
    assert "This judge's verdicts are its model's own, but debates it judged are simulated in part" in judge
    assert "This judge's verdicts are simulated" not in judge
