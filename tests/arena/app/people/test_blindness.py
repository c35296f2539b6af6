"""Blindness that survives publishing: people's links name matches by ballot ids of their own, and the published
site embargoes every match a judge of people still has ballots open on (no page, name, verdict or number of it)
until all its ballots are in or `arena ballots close` closes the judge; `arena ballots issue` reopens it."""
from __future__ import annotations

import json
import re
import shutil
import sqlite3
from pathlib import Path

import pytest
from markupsafe import escape

from arena.app import commands as app
from arena.domain.ballots import ballot_id, new_token, token_hash
from arena.domain.records import Ballot
from arena.store import DB_NAME, Store
from leaderboard.site.render import page_name
from tests.support.helpers import entry, invoke, judge, new_workspace, people, query, snapshot

pytestmark = pytest.mark.filterwarnings("ignore:Using `httpx` with `starlette.testclient`")

# Two pairs that never meet: whatever the site shows of the second pair's match would name that match.
SEEN, HIDDEN = ("alpha-seen", "beta-seen"), ("gamma-hidden", "delta-hidden")
LATER = ("alpha-seen", "gamma-hidden")  # scheduled, not played
MOTIONS = {"seen": "en-fact-001", "hidden": "en-value-001", "later": "en-policy-001"}


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    """j1 (an offline judge) judged the seen match and the hidden one; the people of experts, ann and bo, both
    cast a ballot on the seen match and only ann on the hidden one; a third match is scheduled."""
    path = new_workspace(tmp_path_factory.mktemp("blind") / "ws", motions=["builtin:en"],
                         entries=[entry(name, strength=s) for name, s in zip((*SEEN, *HIDDEN), (1.0, 0.0, 0.5, -0.5))],
                         judges=[judge("j1", runs=1), people("experts", "ann", "bo")])
    ws = app.open_workspace(path)
    try:
        seen = app.play_one(ws, MOTIONS["seen"], *SEEN, progress=lambda line: None).id
        hidden = app.play_one(ws, MOTIONS["hidden"], *HIDDEN, progress=lambda line: None).id
        ws.store.add_tournament("single", 0, {}, [(MOTIONS["later"], *LATER)])
        ws.store.cast_ballots("experts", ("ann", "bo"), [Ballot(seen, "ann", "pro", {}, "ann: PRO"),
                                                         Ballot(seen, "bo", "con", {}, "bo: CON"),
                                                         Ballot(hidden, "ann", "con", {}, "ann: CON")],
                              simulated=False)
    finally:
        ws.close()
    assert (seen, hidden) == ("m00001", "m00002")
    return path


SEEN_ID, HIDDEN_ID, LATER_ID = "m00001", "m00002", "m00003"


@pytest.fixture
def ws(template, tmp_path) -> Path:
    path = tmp_path / "ws"
    shutil.copytree(template, path)
    return path


def publish(path: Path) -> dict[str, str]:
    """`arena publish`, then every file of the site as text, by path."""
    published = invoke("publish", "-w", path)
    assert published.exit_code == 0, published.output
    return {name: data.decode("utf-8") for name, data in snapshot(path / "site").items()}


def traces(path: Path, match_id: str) -> list[str]:
    """What would give a match away: its id, its motion's text, every speech, each as a page escapes it."""
    shown = json.loads(invoke("match", "show", match_id, "--format", "json", "-w", path).output)
    return [str(escape(text)) for text in (match_id, shown["motion"]["text"], *(s["text"] for s in shown["speeches"]))]


def rated(site: dict[str, str]) -> set[str]:
    return {r["entry"] for r in json.loads(site["leaderboard.json"])["views"]["overall"]["ratings"]}


def test_the_site_leaves_out_every_trace_of_matches_people_are_still_judging(ws):
    site = publish(ws)
    assert len(traces(ws, HIDDEN_ID)) == 8  # its id, motion and six speeches
    for trace in traces(ws, SEEN_ID):  # the search finds a match the site shows
        assert trace in site[page_name("matches", SEEN_ID)], trace
    for match_id in (HIDDEN_ID, LATER_ID):
        for trace in traces(ws, match_id):
            assert not [name for name, text in site.items() if trace in text], (match_id, trace)
        assert page_name("matches", match_id) not in site
    assert page_name("motions", MOTIONS["hidden"]) not in site and page_name("motions", MOTIONS["later"]) not in site
    # The hidden match's entries appear only on their own pages, which show no match and no rating of theirs.
    for name in HIDDEN:
        assert [path for path, text in site.items() if name in text] == [page_name("entries", name)]
        assert "Not rated yet." in site[page_name("entries", name)]
        assert "No matches yet." in site[page_name("entries", name)]
    # Nor does it count in any figure: fits, W-T-L, results, history, the judges' agreement.
    assert rated(site) == set(SEEN)
    assert [line.split(",")[0] for line in site["results.csv"].splitlines()[1:]] == [SEEN_ID] * 4
    assert [s["matches"] for s in json.loads(site["history.json"])] == [1]
    assert '<span id="debated">1 match debated</span>' in site["index.html"]
    # The judges' biases count the votes cast on the matches shown: experts' two ballots on the seen match, not
    # ann's on the hidden one.
    opened = app.open_workspace(ws)
    try:
        every, shown = ({r["judge"]: r["votes"] for r in app.stats_bias(opened, withheld=withheld)}
                        for withheld in ((), (HIDDEN_ID, LATER_ID)))
    finally:
        opened.close()
    assert every["experts"] == 3 and shown["experts"] == 2
    votes = dict(re.findall(r'<tr><td data-value="([^"]+)">.*?</td>\n<td data-label="Panelist"></td>\n'
                            r'<td class="num" data-label="Votes">(\d+)</td>',
                            site["bias.html"]))
    assert votes == {name: str(n) for name, n in shown.items()}
    # The seen match is there, whole.
    assert all(name in site[page_name("matches", SEEN_ID)] for name in (*SEEN, "j1", "ann: PRO", "bo: CON"))
    # The site says how many it holds back, and never which.
    for page in ("index.html", "matches.html"):
        note = re.search(r'<p class="banner" role="note" id="embargo">(.*?)</p>', site[page], re.S).group(1)
        assert "<strong>1 match awaiting ballots</strong>" in note and "1 match still to be played" in note
    # The operator sees everything: the embargo is the published site's only.
    ratings = json.loads(invoke("rate", "--judge", "j1", "--bootstrap", "0", "--format", "json", "-w", ws).output)
    assert ratings["meta"]["matches"] == 2


def test_a_match_is_published_once_all_its_ballots_are_in(ws, tmp_path):
    csv = tmp_path / "ballots.csv"
    csv.write_text(f"match_id,person,overall\n{HIDDEN_ID},bo,pro\n", encoding="utf-8")  # a public match id
    assert invoke("ballots", "import", csv, "--judge", "experts", "-w", ws).exit_code == 0
    site = publish(ws)
    page = site[page_name("matches", HIDDEN_ID)]
    assert all(name in page for name in (*HIDDEN, "j1", "ann: CON", *traces(ws, HIDDEN_ID)))
    assert rated(site) == {*SEEN, *HIDDEN}
    assert "awaiting ballots" not in site["index.html"]
    # The judge of people is still open: the match still to play stays out, as it will have ballots to cast.
    assert page_name("matches", LATER_ID) not in site and "1 match still to be played" in site["matches.html"]


def test_closing_the_ballots_publishes_what_they_held_and_new_links_reopen_them(ws):
    site = publish(ws)
    assert page_name("matches", HIDDEN_ID) not in site
    closed = invoke("ballots", "close", "--judge", "experts", "-w", ws)
    assert closed.exit_code == 0, closed.output
    assert "closed the ballots of judge 'experts'" in closed.output and "the 1 match awaiting them left the embargo" in closed.output
    again = invoke("ballots", "close", "--judge", "experts", "-w", ws)
    assert again.exit_code == 0 and "were closed already" in again.output
    site = publish(ws)
    assert all(name in site[page_name("matches", HIDDEN_ID)] for name in HIDDEN)
    assert "scheduled" in site[page_name("matches", LATER_ID)]
    assert rated(site) == {*SEEN, *HIDDEN} and 'id="embargo"' not in site["index.html"]
    # New links reopen the judge: the matches are held back again, and their pages from before are taken down.
    assert invoke("ballots", "issue", "--judge", "experts", "-w", ws).exit_code == 0
    site = publish(ws)
    assert page_name("matches", HIDDEN_ID) not in site and page_name("matches", LATER_ID) not in site
    assert page_name("motions", MOTIONS["hidden"]) not in site
    assert rated(site) == set(SEEN) and "1 match awaiting ballots" in site["index.html"]


def test_a_new_judge_of_people_embargoes_a_site_published_before_it(ws):
    closed = invoke("ballots", "close", "--judge", "experts", "-w", ws)
    assert closed.exit_code == 0
    assert page_name("matches", HIDDEN_ID) in publish(ws)
    toml = ws / "arena.toml"
    toml.write_text(toml.read_text(encoding="utf-8") + '\n[[judges]]\nname = "panel"\nkind = "human"\n'
                    '[judges.options]\npeople = ["cy"]\n', encoding="utf-8")
    site = publish(ws)
    assert [name for name in site if name.startswith("matches/")] == []  # cy has judged nothing yet
    assert "2 matches awaiting ballots" in site["index.html"]


def test_ballots_status_shows_each_judge_open_or_closed_and_what_it_embargoes(ws):
    def status() -> list[tuple]:
        rows = json.loads(invoke("ballots", "status", "--format", "json", "-w", ws).output)
        return [(r["judge"], r["person"], r["assigned"], r["cast"], r["state"], r["embargoed"]) for r in rows]

    assert status() == [("experts", "ann", 2, 2, "open", 1), ("experts", "bo", 2, 1, "open", 1)]
    text = invoke("ballots", "status", "-w", ws).output
    assert re.search(r"^experts\s+open\s+ann\s+2\s+2$", text, re.M)
    assert "experts: open: 1 match embargoed on the published site" in text
    assert invoke("ballots", "close", "--judge", "experts", "-w", ws).exit_code == 0
    assert status() == [("experts", "ann", 2, 2, "closed", 0), ("experts", "bo", 2, 1, "closed", 0)]
    text = invoke("ballots", "status", "-w", ws).output
    assert "experts: closed" in text and "'arena ballots issue --judge experts' reopens it" in text
    assert query(ws, "SELECT judge FROM ballot_closures") == [("experts",)]  # kept in the workspace
    assert invoke("ballots", "issue", "--judge", "experts", "-w", ws).exit_code == 0
    assert status() == [("experts", "ann", 2, 2, "open", 1), ("experts", "bo", 2, 1, "open", 1)]


def test_closing_an_unknown_or_llm_judge_exits_2_and_writes_nothing(ws):
    before = (ws / DB_NAME).read_bytes()
    result = invoke("ballots", "close", "--judge", "j1", "-w", ws)
    assert result.exit_code == 2 and "--judge" in result.output and "'j1'" in result.output
    result = invoke("ballots", "close", "--judge", "nobody", "-w", ws)
    assert result.exit_code == 2 and "unknown judge 'nobody'" in result.output
    assert (ws / DB_NAME).read_bytes() == before


# --- the web app -----------------------------------------------------------------------------------------------

def links(path: Path) -> dict[str, str]:
    """A new link per person, as `arena ballots issue` makes them: person → token."""
    tokens = {person: new_token() for person in ("ann", "bo")}
    store = Store(path / DB_NAME)
    try:
        store.issue_links("experts", {person: token_hash(token) for person, token in tokens.items()})
    finally:
        store.close()
    return tokens


def client_of(path: Path):
    from starlette.testclient import TestClient

    from arena.app.people.web import create_app

    return TestClient(create_app(path))


def hrefs(page: str) -> list[str]:
    """The ids a queue page's items link to, in order."""
    return re.findall(r'<li><a href="[^"]*b/[^/"]+/([^"]+)">', page)


def test_ballot_pages_name_matches_by_ids_of_each_persons_own(ws):
    tokens = links(ws)
    with client_of(ws) as client:
        queues = {person: client.get(f"/b/{token}").text for person, token in tokens.items()}
        ids = {person: hrefs(page) for person, page in queues.items()}
        assert all(len(found) == 2 for found in ids.values())
        for person, page in queues.items():
            assert not re.search(r"m\d{5}", page)  # no public id anywhere on the queue
            for ballot in ids[person]:
                opened = client.get(f"/b/{tokens[person]}/{ballot}")
                assert opened.status_code == 200 and not re.search(r"m\d{5}", opened.text)
        # Per person: the same match has another id in each person's links, and the other's id opens nothing.
        assert not set(ids["ann"]) & set(ids["bo"])
        assert client.get(f"/b/{tokens['ann']}/{ids['bo'][0]}").status_code == 404
        # The public id, as links named matches before, opens nothing either.
        for match_id in (SEEN_ID, HIDDEN_ID):
            assert client.get(f"/b/{tokens['ann']}/{match_id}").status_code == 404
            assert client.post(f"/b/{tokens['ann']}/{match_id}", data={"overall": "pro"}).status_code == 404
    # Stable for the person: a restarted app and a new link keep them.
    again = links(ws)
    with client_of(ws) as client:
        assert sorted(hrefs(client.get(f"/b/{again['ann']}").text)) == sorted(ids["ann"])


def test_ballot_ids_come_from_a_secret_kept_in_the_workspace(ws, tmp_path):
    """Not from anything a person holds: the same judge, person, match and link, with another workspace secret,
    give other ids (so a person cannot work out their ids' public matches by hashing what they know)."""
    tokens = links(ws)
    with client_of(ws) as client:
        before = hrefs(client.get(f"/b/{tokens['ann']}").text)
    store = Store(ws / DB_NAME)
    key = store.ballot_secret()
    store.close()
    assert sorted(before) == sorted(ballot_id(key, "experts", "ann", m) for m in (SEEN_ID, HIDDEN_ID))
    assert query(ws, "SELECT length(value) FROM meta WHERE key='ballot_secret'") == [(64,)]  # 256 bits
    db = sqlite3.connect(ws / DB_NAME)
    db.execute("DELETE FROM meta WHERE key='ballot_secret'")
    db.commit()
    db.close()
    with client_of(ws) as client:
        after = hrefs(client.get(f"/b/{tokens['ann']}").text)
    assert len(after) == 2 and not set(after) & set(before)


def test_a_closed_judges_links_take_no_ballots_until_links_are_issued_again(ws):
    tokens = links(ws)
    with client_of(ws) as client:
        ballot = hrefs(client.get(f"/b/{tokens['bo']}").text)[0]
        page = client.get(f"/b/{tokens['bo']}/{ballot}").text
        csrf = re.search(r'name="csrf" value="([0-9a-f]+)"', page).group(1)
        assert invoke("ballots", "close", "--judge", "experts", "-w", ws).exit_code == 0
        before = query(ws, "SELECT * FROM verdicts ORDER BY match_id, judge, run")
        form = {"csrf": csrf, "overall": "pro", "argument": "pro", "source": "pro", "language": "pro",
                "rationale": "late"}
        for response in (client.get(f"/b/{tokens['bo']}"), client.get(f"/b/{tokens['bo']}/{ballot}"),
                         client.post(f"/b/{tokens['bo']}/{ballot}", data=form)):
            assert response.status_code == 410
            assert "<h1>Ballots closed</h1>" in response.text and "no more ballots are taken" in response.text
        assert query(ws, "SELECT * FROM verdicts ORDER BY match_id, judge, run") == before
        assert client.get(f"/b/{new_token()}").status_code == 404  # a forged link learns nothing more
        fresh = json.loads(invoke("ballots", "issue", "--judge", "experts", "--format", "json", "-w", ws).output)
        token = fresh[1]["url"].rsplit("/", 1)[1]
        assert client.get(f"/b/{tokens['bo']}").status_code == 404  # the old link is gone
        assert client.post(f"/b/{token}/{ballot}", data=form).status_code == 403  # open again (a new form needed)
        page = client.get(f"/b/{token}/{ballot}").text
        csrf = re.search(r'name="csrf" value="([0-9a-f]+)"', page).group(1)
        assert client.post(f"/b/{token}/{ballot}", data=form | {"csrf": csrf}).status_code == 200
    assert query(ws, "SELECT run FROM verdicts WHERE judge='experts' AND rationale='late'") == [(1,)]


@pytest.mark.parametrize("surface", ["publish", "export"])
def test_a_match_finished_while_the_site_or_export_is_made_is_not_in_it(ws, monkeypatch, tmp_path, surface):
    """A run beside `arena publish` (or `export --public`) finishes a match once the embargo is decided: what is
    made reads one state of the database, the embargo's, so the match is not in it (ballots are open: it would be
    embargoed), rather than in it with its speeches and names."""
    from arena.app.people import ballot_links as people_module
    from arena.domain.records import Match, Speech, Verdict

    decided = people_module.embargo

    def embargo_then_a_run_finishes_a_match(workspace):
        found = decided(workspace)
        other = Store(Path(ws) / DB_NAME)  # another process's connection, as a run's
        try:
            motion = other.motion(MOTIONS["later"])
            other.import_matches([Match("m00009", motion, *HIDDEN, "done",
                                        speeches=(Speech("constructive", "pro", "LEAKED-SPEECH words"),),
                                        verdicts=(Verdict("j1", 0, "pro"),))])
        finally:
            other.close()
        return found

    monkeypatch.setattr(people_module, "embargo", embargo_then_a_run_finishes_a_match)
    opened = app.open_workspace(ws)
    try:
        if surface == "publish":
            made = app.publish(opened).parent
        else:
            made = Path(app.export(opened, tmp_path / "out", public=True)["path"])
    finally:
        opened.close()
    assert query(ws, "SELECT status FROM matches WHERE id = 'm00009'") == [("done",)]  # it did finish
    assert not any(b"LEAKED-SPEECH" in data or b"m00009" in data for data in snapshot(made).values())
