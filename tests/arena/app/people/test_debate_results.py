"""A web debater's page once their debates are done: each debate under a title of its own (two on one motion read
apart, never by a public match id or the opponent), and its result as the published site would show it: each
judge's decision and reasons, escaped, a forfeit, or word that people still judge it blind."""
from __future__ import annotations

import re
import time
from urllib.parse import urlsplit

import pytest
from starlette.testclient import TestClient

from arena.app import commands as app
from arena.app.commands import open_workspace
from arena.app.people.web import create_app
from arena.base.clock import now
from arena.domain.records import Ballot
from tests.support.helpers import entry, judge, new_workspace, people, speech_text
from tests.support.serving import SCRIPT

pytestmark = pytest.mark.filterwarnings("ignore:Using `httpx` with `starlette.testclient`")


def play_out(ws) -> None:
    """Run until every match is done, ann writing each speech her turns ask for."""
    for _ in range(10):
        app.run(ws, concurrency=2, progress=lambda line: None)
        turns = [t for t in ws.store.turns_of("ann") if not t.submitted]
        if not turns:
            return
        for t in turns:
            size = int(t.brief.budget.amount * 0.8)
            assert ws.store.submit_speech(t.match_id, t.stage, t.side, speech_text(f"ANN-{t.match_id}-{t.stage}", size=size))


def results(client: TestClient, link: str) -> list[str]:
    """The items of the page's results, their markup as sent."""
    page = client.get(link).text
    found = re.search(r'<ol class="queue" id="results">(.*?)</ol>', page, re.S)
    return re.findall(r"<li class=\"result\">(.*?)</li>", found.group(1), re.S) if found else []


def test_a_debaters_page_shows_each_finished_debate_once_with_its_result_once_people_have_judged(tmp_path):
    path = new_workspace(tmp_path / "ws", entries=[entry("ann", debater="human", model="human/ann",
                                                        params={"via": "web"}), entry("bot", strength=0.5)],
                         judges=[judge("j", runs=1), people("experts", "cy")])
    ws = open_workspace(path)
    try:
        motion = ws.store.motion_ids()[0]
        first, second = ws.store.add_tournament("single", 0, {}, [(motion, "ann", "bot"), (motion, "bot", "ann")])
        play_out(ws)
        (link,) = [urlsplit(row["url"]).path for row in app.debaters_issue(ws)]
        client = TestClient(create_app(path))
        held = results(client, link)
        # both on one motion, each under its own title; neither its public id nor the opponent's name shown
        assert [re.search(r"Debate \d", item).group(0) for item in held] == ["Debate 1", "Debate 2"]
        assert all(first not in item and second not in item and "bot" not in item for item in held)
        assert ["you argued PRO" in held[0], "you argued CON" in held[1]] == [True, True]
        # cy, a judge of people, has not judged them: the site holds their results back, and so does the page
        assert all("held back while people still judge it" in item and "Judge" not in item for item in held), held
        ws.store.cast_ballots("experts", ("cy",), [Ballot(first, "cy", "con", rationale=f"CON was sharper {SCRIPT}"),
                                                   Ballot(second, "cy", "tie", rationale="Even.")], simulated=False)
        shown = results(client, link)
        verdict = {v.judge: v for v in ws.store.match(first).verdicts}["j"]
        mine = "you won" if verdict.overall == "pro" else "you lost" if verdict.overall == "con" else "a tie"
        pro, con = (1, 0) if verdict.overall == "pro" else (0, 1) if verdict.overall == "con" else (0.5, 0.5)
        assert f"Judge j: {mine}, PRO {pro:g} – CON {con:g}." in shown[0]
        assert "Judge experts: you lost, PRO 0 – CON 1." in shown[0]
        assert "CON was sharper &lt;script&gt;alert(1)&lt;/script&gt;" in shown[0] and SCRIPT not in shown[0]
        assert "Judge experts: a tie, PRO 0.5 – CON 0.5." in shown[1]
    finally:
        ws.close()


def test_a_forfeited_debate_says_who_forfeited(tmp_path):
    path = new_workspace(tmp_path / "ws", entries=[entry("ann", debater="human", model="human/ann",
                                                        params={"via": "web"}), entry("bot")],
                         judges=[judge("j", runs=1)])
    toml = path / "arena.toml"
    toml.write_text(toml.read_text(encoding="utf-8") + "\n[people]\nturn_deadline_h = 0.0003\n", encoding="utf-8")
    ws = open_workspace(path)
    try:
        ws.store.add_tournament("single", 0, {}, [(ws.store.motion_ids()[0], "ann", "bot")])
        app.run(ws, concurrency=1, progress=lambda line: None)
        (turn,) = ws.store.turns_of("ann")
        while now() <= turn.deadline:  # about a second after the turn opened
            time.sleep(0.05)
        app.run(ws, concurrency=1, progress=lambda line: None)  # ann's side forfeits
        (link,) = [urlsplit(row["url"]).path for row in app.debaters_issue(ws)]
        (item,) = results(TestClient(create_app(path)), link)
        assert "You lost: your side forfeited" in item and "Judge" not in item
    finally:
        ws.close()
