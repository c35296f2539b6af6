"""`arena serve` for people who debate on the web: a web human entry's private link to its turns, each turn's brief
(the motion, the side, the stage, the budget and exactly the speeches the protocol let that side see), drafts, and
the speech, checked before it is taken and then final.

The app is driven with Starlette's TestClient. Turns are opened as the engine opens them: store.open_turn with a
brief from arena.match.turns.brief; links are made as `arena debaters issue` makes them: store.issue_debater_link with the
hash of arena.domain.ballots.new_token().
"""
from __future__ import annotations

import re
import shutil
import subprocess
import threading
import time
from urllib.parse import urlencode
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Iterator

import pytest

from arena.app.commands import open_workspace
from arena.domain.ballots import new_token, token_hash
from arena.domain.formats import AGENT4DEBATE
from arena.domain.records import HumanTurn, Reference, Speech
from arena.domain.speechchecks import length
from arena.store import DB_NAME, Store
from arena.match.turns import brief
from tests.support.browser import console_errors, dialogs, screenshot, wait_for
from tests.support.helpers import TWO_OFFLINE, assert_user_error, entry, invoke, new_workspace
from tests.support.serving import (ARENA, FINE_URL, HOSTILE_MOTION, HOSTILE_SLIDE, HOSTILE_SPEECH, HOSTILE_TITLE,
                                   HOSTILE_URL, IMG, SCRIPT, ZH_CON, ZH_MOTION, ZH_PRO, answer, csrf, esc, finish,
                                   page_of, served, slow_post, write_motions)

pytestmark = pytest.mark.filterwarnings("ignore:Using `httpx` with `starlette.testclient`")

OWN_OPENING = "ANN-OPENING: teenagers gain more than they lose online, as our first point showed."
RIVAL_OPENING = f"RIVAL-OPENING {HOSTILE_SPEECH}"
HIDDEN = "RIVAL-ZH-CONSTRUCTIVE: 这段对方立论在盲写环节中不应被看到。"
# A rebuttal that passes every speech check: English, new words throughout, over a quarter of its 400 words.
GOOD = (f"Our opponents say {SCRIPT} proves the case, but a claim is not evidence. First, the studies they cite "
        "measure screen time, not harm, and the two are not the same thing at all. Second, teenagers who lose "
        "touch with friends offline often find them again through messages, which the other side never "
        "addresses. Third, every new medium, from novels to radio, was blamed for ruining the young, and each "
        "panic faded once the facts came in. The burden lies with those who would ban or restrict a tool that "
        "millions use to learn, organise and keep in touch with family far away. They must show the harm is "
        "large, caused by the platforms, and bigger than the benefits; they have shown none of these. Until "
        "then, we ask the judges to weigh what young people themselves report: support, community and a place "
        "to be heard. That is why we oppose their reading of the evidence and why our side should carry this "
        f"debate. {IMG}")


def future(hours: float = 72) -> str:
    return (datetime.now(timezone.utc) + timedelta(hours=hours)).isoformat(timespec="microseconds")


@dataclass(frozen=True)
class Debating:
    """A workspace whose web human entries ann and bo have turns: ann's opening (submitted) and rebuttal (open) in
    the hostile match, her blind constructive (open) in the Chinese one, one past its deadline; bo's opening."""

    path: Path
    tokens: dict[str, str]
    hostile: str
    zh: str
    late: str
    bos: str
    key: bytes

    def turn(self, match_id: str, stage: str, side: str) -> HumanTurn:
        store = Store(self.path / DB_NAME)
        try:
            found = store.human_turn(match_id, stage, side)
        finally:
            store.close()
        assert found is not None
        return found

    def url(self, person: str, match_id: str, stage: str, side: str) -> str:
        """The path of a turn's page as the person's list links it: /d/TOKEN/TURN-ID."""
        from arena.app.people.web import turn_id

        return f"/d/{self.tokens[person]}/{turn_id(self.key, person, self.turn(match_id, stage, side))}"


def build(path: Path) -> Debating:
    path.mkdir(parents=True)
    write_motions(path)
    web = {"via": "web"}
    new_workspace(path, motions=["builtin:en", "file:motions.yaml"],
                  entries=[entry("ann", debater="human", model="human/ann", params=web),
                           entry("bo", debater="human", model="human/bo", params=web),
                           entry("cid", debater="human", model="human/cid"),  # writes in an editor
                           entry("rival", strength=0.5)])
    ws = open_workspace(path)
    try:
        store = ws.store
        hostile, zh, late, bos = store.add_tournament("single", 0, {}, [
            ("hx-value-001", "ann", "rival"), ("zh-two-001", "rival", "ann"), ("en-fact-002", "ann", "rival"),
            ("en-fact-001", "bo", "rival")])

        def opened(match_id, stage, side, who, visible=(), deadline=None):
            match = store.match(match_id)
            language = match.motion.language
            shown = brief(match.motion, AGENT4DEBATE, stage, side, tuple(visible), language,
                          AGENT4DEBATE.turn(stage, side).budget(language))
            return store.open_turn(match_id, stage, side, who, shown, deadline or future())

        opened(hostile, "constructive", "pro", "ann")
        store.submit_speech(hostile, "constructive", "pro", OWN_OPENING)
        refs = (Reference(HOSTILE_TITLE, HOSTILE_URL, "text", 1), Reference("A fine source", FINE_URL, "", 2))
        opened(hostile, "rebuttal", "pro", "ann", [Speech("constructive", "pro", OWN_OPENING),
                                                   Speech("constructive", "con", RIVAL_OPENING, refs)])
        opened(zh, "constructive", "con", "ann")  # blind: the rival's constructive (HIDDEN) is not shown
        opened(late, "constructive", "pro", "ann", deadline=future(-1))
        opened(bos, "constructive", "pro", "bo")
        tokens = {who: new_token() for who in ("ann", "bo", "cid")}
        for who, token in tokens.items():
            store.issue_debater_link(who, token_hash(token))
        key = store.ballot_secret()
    finally:
        ws.close()
    return Debating(path, tokens, hostile, zh, late, bos, key)


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Debating:
    return build(tmp_path_factory.mktemp("debaters") / "ws")


@pytest.fixture
def debating(template, tmp_path) -> Debating:
    """A fresh copy for one test: tests save drafts and submit speeches."""
    path = tmp_path / "ws"
    shutil.copytree(template.path, path)
    return Debating(path, template.tokens, template.hostile, template.zh, template.late, template.bos, template.key)


@pytest.fixture
def client(debating):
    from starlette.testclient import TestClient

    from arena.app.people.web import create_app

    with TestClient(create_app(debating.path)) as test_client:
        yield test_client


def textarea(page: str) -> str:
    """The speech form's text as a browser reads it (the newline after the tag is not part of it)."""
    return re.search(r'<textarea id="speech" name="speech"[^>]*>\n(.*?)</textarea>', page, re.S).group(1)


def ids_under(page: str, section: str) -> list[str]:
    found = re.search(rf'<ol class="queue" id="{section}">(.*?)</ol>', page, re.S)
    return re.findall(r'href="[^"]*/([0-9a-f]{24})"', found.group(1)) if found else []


# --- serving debaters ---------------------------------------------------------------------------------------------

def test_a_workspace_with_web_debaters_and_no_judge_of_people_is_served(debating):
    from arena.app.people.web import create_app

    app = create_app(debating.path)
    assert app.state.judges == [] and app.state.debaters == ["ann", "bo"]  # cid writes in an editor


def test_serve_with_neither_judge_nor_web_debater_exits_2_naming_both_ways(tmp_path):
    ws = new_workspace(tmp_path / "ws", entries=TWO_OFFLINE)
    result = invoke("serve", "-w", ws, "--port", "0")
    assert_user_error(result, "no judge of people", 'kind = "human"', "people = [", 'debater = "human"',
                      "[entries.params]", 'via = "web"')


# --- the list and the page -----------------------------------------------------------------------------------------

def test_the_list_shows_open_submitted_and_missed_turns_by_their_ids_only(debating, client):
    page = client.get(f"/d/{debating.tokens['ann']}")
    assert page.status_code == 200
    text = page.text
    rebuttal, blind, opening, late = (debating.url("ann", *key).rsplit("/", 1)[1]
                                      for key in ((debating.hostile, "rebuttal", "pro"),
                                                  (debating.zh, "constructive", "con"),
                                                  (debating.hostile, "constructive", "pro"),
                                                  (debating.late, "constructive", "pro")))
    assert ids_under(text, "open") == [rebuttal, blind]  # in schedule order
    assert ids_under(text, "done") == [opening] and ids_under(text, "missed") == [late]
    assert esc(HOSTILE_MOTION) in text and "<script" not in text and f">{ZH_MOTION}</span>" in text
    assert '<span lang="en">Rebuttal</span> · PRO' in text and '<span lang="zh">立论</span> · CON' in text
    deadline = debating.turn(debating.hostile, "rebuttal", "pro").deadline
    shown = datetime.fromisoformat(deadline).strftime("%Y-%m-%d %H:%M")
    assert f'due <time datetime="{deadline}">{shown} UTC</time>' in text
    # No public match id, no opponent, no model: the links name turns by the person's own ids.
    for word in (r"m0000\d", "rival", "offline/", "human/", r"bo\b"):
        assert not re.search(rf"\b{word}", text), word
    assert client.get(f"/d/{debating.tokens['bo']}").text.count('href="../d/') == 1


def test_the_page_shows_the_brief_and_exactly_the_speeches_that_side_may_see(debating, client):
    page = client.get(debating.url("ann", debating.hostile, "rebuttal", "pro"))
    assert page.status_code == 200
    text = page.text
    assert f"<h1>{esc(HOSTILE_MOTION)}</h1>" in text and esc(HOSTILE_SLIDE) in text
    assert "PRO argues" not in text  # a one-sided motion: PRO argues the motion itself
    assert '<dd id="side">PRO: you argue for the motion.</dd>' in text
    assert '<dd id="place"><span lang="en">Rebuttal</span>, turn 3 of 6 of the debate</dd>' in text
    assert '<dd id="budget">400 words; a speech under 100 or over 600 words is not taken.</dd>' in text
    assert 'id="purpose"' not in text  # agent4debate's stages say nothing of what they are for
    # Exactly the two constructives, in order, each as text: markup escaped, references' links made safe.
    assert re.findall(r'<article class="speech (\w+)"', text) == ["pro", "con"]
    assert [esc(OWN_OPENING), esc(RIVAL_OPENING)] == re.findall(r'<div class="text">(.*?)</div>', text, re.S)
    assert re.findall(r"<h3><span lang=\"en\">(\w+)</span> · (PRO|CON)", text) == [("Constructive", "PRO"),
                                                                                 ("Constructive", "CON")]
    assert f'<a href="#" rel="noreferrer noopener" target="_blank">{esc(HOSTILE_TITLE)}</a>' in text
    assert f'<a href="{esc(FINE_URL)}" rel="noreferrer noopener" target="_blank">A fine source</a>' in text
    assert "javascript:" not in text and "<img" not in text and "<svg" not in text
    assert text.count("<script") == 1 and '<script src="../../count.js" defer></script>' in text
    # The form: an empty speech (no draft yet), its count, a CSRF token, save and submit.
    assert textarea(text) == "" and len(csrf(text)) == 64
    assert '<p class="hint" id="count" data-unit="words"><span id="count-n">0</span> of 400 words</p>' in text
    assert '<button type="submit" name="action" value="save"' in text
    assert '<button type="submit" name="action" value="submit">' in text
    for word in ("m0000", "rival", "offline/", "human/"):
        assert word not in text, word


def test_a_blind_constructive_shows_none_of_the_other_sides_and_both_propositions(debating, client):
    text = client.get(debating.url("ann", debating.zh, "constructive", "con")).text
    assert '<article class="speech' not in text and HIDDEN not in text
    assert "write this stage's speeches independently" in text and 'id="nothing-shown"' in text
    assert f'<dt lang="en">PRO argues</dt><dd>{ZH_PRO}</dd>' in text and f"<dd>{ZH_CON}</dd>" in text
    assert f'CON: you argue “<span lang="zh">{ZH_CON}</span>”.' in text
    assert '1200 characters; a speech under 300 or over 1800 characters is not taken.' in text
    assert 'data-unit="characters"' in text and '<textarea id="speech" name="speech" rows="18" lang="zh"' in text


def test_the_count_script_is_the_apps_own_and_only_the_open_form_may_run_it(debating, client):
    script = client.get("/count.js")
    assert script.status_code == 200 and script.headers["content-type"].startswith("text/javascript")
    assert "count-n" in script.text and "data-unit" in script.text
    writing = client.get(debating.url("ann", debating.hostile, "rebuttal", "pro"))
    listing = client.get(f"/d/{debating.tokens['ann']}")
    submitted = client.get(debating.url("ann", debating.hostile, "constructive", "pro"))
    missing = client.get(f"/d/{debating.tokens['ann']}/{'0' * 24}")
    assert "script-src 'self'" in writing.headers["content-security-policy"]
    assert "default-src 'none'" in writing.headers["content-security-policy"]
    for r in (script, listing, submitted, missing):
        assert "script-src" not in r.headers["content-security-policy"] and "<script" not in r.text
    for r in (script, writing, listing, submitted, missing):
        assert r.headers["referrer-policy"] == "no-referrer" and r.headers["cache-control"] == "no-store"
        assert r.headers["x-content-type-options"] == "nosniff" and r.headers["x-frame-options"] == "DENY"


# --- drafts and speeches -----------------------------------------------------------------------------------------

def test_a_draft_is_saved_and_comes_back_in_the_form(debating, client):
    url = debating.url("ann", debating.hostile, "rebuttal", "pro")
    page = client.get(url).text
    draft = f"Half a thought {SCRIPT}\r\nand a second line"
    saved = client.post(url, data={"csrf": csrf(page), "speech": draft, "action": "save"}, follow_redirects=False)
    assert saved.status_code == 303 and saved.headers["location"] == f"{url.rsplit('/', 1)[1]}?saved=draft"
    turn = debating.turn(debating.hostile, "rebuttal", "pro")
    assert turn.draft == draft.replace("\r\n", "\n") and turn.draft_at and not turn.submitted
    again = client.get(f"{url}?saved=draft").text
    assert textarea(again) == esc(turn.draft) and 'id="saved-note"' in again
    assert '<span id="count-n">11</span> of 400 words' in again  # the count without the script
    assert 'id="saved-note"' not in client.get(url).text
    assert "draft saved" in client.get(f"/d/{debating.tokens['ann']}").text


@pytest.mark.parametrize("speech, reason", [
    ("", "It is 0 words long; this turn takes at least 100."),
    ("   \r\n  ", "It is 0 words long; this turn takes at least 100."),
    ("[Your speech here]", "It is a placeholder or filler where the speech should be"),
    ("Lorem ipsum dolor sit amet " + SCRIPT, "It is a placeholder or filler where the speech should be"),
    (OWN_OPENING, "It is 14 words long; this turn takes at least 100."),
])
def test_a_speech_that_fails_a_check_is_refused_with_the_reason_and_nothing_is_stored(debating, client, speech,
                                                                                        reason):
    url = debating.url("ann", debating.hostile, "rebuttal", "pro")
    before = debating.turn(debating.hostile, "rebuttal", "pro")
    refused = client.post(url, data={"csrf": csrf(client.get(url).text), "speech": speech, "action": "submit"})
    assert refused.status_code == 400
    assert re.search(r'<p class="error" role="alert" id="problem"><strong>Your speech is not submitted yet.</strong> '
                     + re.escape(reason), refused.text)
    assert textarea(refused.text) == esc(speech.replace("\r\n", "\n"))  # kept, to be mended
    assert 'class="invalid"' in refused.text and "<script src=" in refused.text and SCRIPT not in refused.text
    assert debating.turn(debating.hostile, "rebuttal", "pro") == before


def test_a_speech_longer_than_its_turn_takes_is_refused_with_its_count_and_kept_to_shorten(debating, client):
    """13,505 words were once taken against a 450-word budget: a speech over 1.5 × its budget (600 of this turn's
    400 words) is refused naming the field and its length; the text stays in the form, and as a draft it is kept."""
    url = debating.url("ann", debating.hostile, "rebuttal", "pro")
    before = debating.turn(debating.hostile, "rebuttal", "pro")
    long = " ".join([GOOD] * 4)
    count = length(long, "en")[0]
    assert count > 600
    refused = client.post(url, data={"csrf": csrf(client.get(url).text), "speech": long, "action": "submit"})
    assert refused.status_code == 400
    assert (f'<strong>Your speech is not submitted yet.</strong> It is {count} words long; this turn takes at most '
            f'600. <span class="detail" lang="en">(speech: {count} words, over the 600 this turn takes (1.5 × its '
            f'budget of 400))</span>') in refused.text
    assert textarea(refused.text) == esc(long) and 'class="invalid"' in refused.text
    assert f'<span id="count-n">{count}</span> of 400 words' in refused.text
    assert debating.turn(debating.hostile, "rebuttal", "pro") == before
    saved = client.post(url, data={"csrf": csrf(refused.text), "speech": long, "action": "save"},
                        follow_redirects=False)
    assert saved.status_code == 303 and debating.turn(debating.hostile, "rebuttal", "pro").draft == long
    assert debating.turn(debating.hostile, "rebuttal", "pro").speech is None


def test_a_speech_is_taken_once_then_shown_read_only(debating, client):
    url = debating.url("ann", debating.hostile, "rebuttal", "pro")
    token = csrf(client.get(url).text)
    taken = client.post(url, data={"csrf": token, "speech": GOOD.replace("\n", "\r\n"), "action": "submit"},
                        follow_redirects=False)
    assert taken.status_code == 303, taken.text
    named = url.rsplit("/", 1)[1]
    assert taken.headers["location"] == f"../{debating.tokens['ann']}?submitted={named}"
    turn = debating.turn(debating.hostile, "rebuttal", "pro")
    assert turn.speech == GOOD and turn.submitted_at
    listing = client.get(f"/d/{debating.tokens['ann']}?submitted={named}").text
    assert 'id="submitted-note"' in listing and "next run the arena" in listing
    assert named in ids_under(listing, "done") and named not in ids_under(listing, "open")
    page = client.get(url)
    assert page.status_code == 200 and "<form" not in page.text and "<textarea" not in page.text
    assert "<script" not in page.text and esc(GOOD) in page.text
    assert "A submitted speech cannot be changed." in page.text
    for action in ("submit", "save"):
        again = client.post(url, data={"csrf": token, "speech": "Something else entirely", "action": action})
        assert again.status_code == 409 and "A submitted speech cannot be changed." in again.text
    assert debating.turn(debating.hostile, "rebuttal", "pro") == turn


def test_a_forged_or_missing_csrf_token_or_an_unknown_action_stores_nothing(debating, client):
    url = debating.url("ann", debating.hostile, "rebuttal", "pro")
    other = csrf(client.get(debating.url("ann", debating.zh, "constructive", "con")).text)
    before = debating.turn(debating.hostile, "rebuttal", "pro")
    for token in ("0" * 64, other, "", "é"):
        got = client.post(url, data={"csrf": token, "speech": GOOD, "action": "submit"})
        assert got.status_code == 403 and "copy what you wrote" in got.text
    assert client.post(url, data={"speech": GOOD, "action": "save"}).status_code == 403
    real = csrf(client.get(url).text)
    for action in (None, "publish"):
        assert client.post(url, data={"csrf": real, "speech": GOOD, **({"action": action} if action else {})}
                           ).status_code == 400
    assert debating.turn(debating.hostile, "rebuttal", "pro") == before


def set_deadline(debating: Debating, match_id: str, deadline: str) -> None:
    store = Store(debating.path / DB_NAME)
    try:
        store.conn.execute("UPDATE turns SET deadline=? WHERE match_id=?", (deadline, match_id))
        store.conn.commit()
    finally:
        store.close()


def test_a_turn_past_its_deadline_takes_no_speech(debating, client):
    url = debating.url("ann", debating.late, "constructive", "pro")
    page = client.get(url)
    assert page.status_code == 200 and "<form" not in page.text and 'id="deadline-passed"' in page.text
    # A form opened before the deadline and sent after it.
    set_deadline(debating, debating.late, future())
    token = csrf(client.get(url).text)
    set_deadline(debating, debating.late, future(-1))
    for action in ("submit", "save"):
        late = client.post(url, data={"csrf": token, "speech": GOOD, "action": action})
        assert late.status_code == 410 and "The deadline of this speech has passed" in late.text
    turn = debating.turn(debating.late, "constructive", "pro")
    assert turn.speech is None and turn.draft == ""


# --- who may open what --------------------------------------------------------------------------------------------

def test_only_the_turns_own_live_link_opens_it_every_other_path_is_a_bare_404(debating, client):
    ann, bo, cid = debating.tokens["ann"], debating.tokens["bo"], debating.tokens["cid"]
    mine = debating.url("ann", debating.hostile, "rebuttal", "pro").rsplit("/", 1)[1]
    bos = debating.url("bo", debating.bos, "constructive", "pro").rsplit("/", 1)[1]
    paths = [f"/d/{bo}/{mine}", f"/d/{ann}/{bos}", f"/d/{new_token()}", f"/d/{new_token()}/{mine}", f"/d/{cid}",
             f"/d/{ann}x", f"/d/{token_hash(ann)}", f"/d/{ann}/{debating.hostile}", f"/d/{ann}/{mine.upper()}",
             f"/d/{ann}/{mine}/more", "/d", "/d/", f"/b/{ann}", f"/b/{ann}/{mine}"]
    bodies = set()
    for path in paths:
        got = client.get(path, follow_redirects=False)
        assert got.status_code == 404, path
        bodies.add(re.sub(r'href="[./]*ballot.css"', "", got.text).replace("Debate Arena debates",
                                                                          "Debate Arena ballots"))
    for path in (f"/d/{bo}/{mine}", f"/d/{ann}/{bos}"):
        got = client.post(path, data={"csrf": "0", "speech": GOOD, "action": "submit"})
        assert got.status_code == 404
    assert len(bodies) == 1
    assert re.search(r"<main>\s*<h1>Not found</h1>\s*<p>There is nothing here.</p>\s*</main>", bodies.pop())
    assert debating.turn(debating.hostile, "rebuttal", "pro").speech is None
    assert debating.turn(debating.bos, "constructive", "pro").speech is None


def test_an_oversized_or_unreadable_body_is_refused_in_a_speechs_words(debating, client):
    url = debating.url("ann", debating.hostile, "rebuttal", "pro")
    token = csrf(client.get(url).text)
    big = client.post(url, data={"csrf": token, "speech": "word " * 30_000, "action": "save"})
    assert big.status_code == 413 and "A speech is at most 100 KB" in big.text
    urlencoded = {"content-type": "application/x-www-form-urlencoded"}
    bad = client.post(url, content=f"csrf={token}&action=save&speech=".encode() + b"\xff\xfe", headers=urlencoded)
    assert bad.status_code == 400 and "could not be read as a speech" in bad.text
    assert client.post(url, json={"csrf": token, "action": "save"}).status_code == 400
    assert debating.turn(debating.hostile, "rebuttal", "pro").draft == ""


# --- in the workspace's language ------------------------------------------------------------------------------------

def test_a_zh_workspace_serves_every_debater_page_in_zh(debating):
    from starlette.testclient import TestClient

    from arena.app.people.web import create_app
    from tests.leaderboard.site.test_site_language import shown_texts
    from leaderboard.site import labels

    toml = debating.path / "arena.toml"
    toml.write_text('[arena]\nlanguage = "zh"\n' + toml.read_text(encoding="utf-8"), encoding="utf-8")
    english = {m for m in labels.ZH if re.search(r"[A-Za-z]{2}", m) and "{" not in m} - set(labels.WORDS)
    url = debating.url("ann", debating.zh, "constructive", "con")
    with TestClient(create_app(debating.path)) as client:
        listing = client.get(f"/d/{debating.tokens['ann']}")
        page = client.get(url)
        refused = client.post(url, data={"csrf": csrf(page.text), "speech": "", "action": "submit"})
        saved = client.post(url, data={"csrf": csrf(page.text), "speech": "草稿", "action": "save"})
        submitted = client.get(debating.url("ann", debating.hostile, "constructive", "pro"))
        late = client.get(debating.url("ann", debating.late, "constructive", "pro"))
        forged = client.post(url, data={"csrf": "0", "speech": "", "action": "save"})
        missing = client.get(f"/d/{debating.tokens['ann']}/{'0' * 24}")
    pages = (listing, page, refused, saved, submitted, late, forged, missing)
    assert [p.status_code for p in pages] == [200, 200, 400, 200, 200, 200, 403, 404]
    for got in pages:
        assert got.text.startswith('<!doctype html>\n<html lang="zh">')
        left = [t for t in shown_texts(got.text) if t in english or t.rstrip(".:") in english]
        assert not left, f"English labels on a zh page: {left}"
    assert "<h1>你的辩论</h1>" in listing.text and "待撰写" in listing.text
    assert f'你是 CON 方：你主张“<span lang="zh">{ZH_CON}</span>”。' in page.text
    assert "1200 字；不足 300 字或超过 1800 字的发言不予接受。" in page.text and "提交发言" in page.text
    assert "发言只有 0 字；本次发言至少需要 300 字。" in refused.text
    assert "你的草稿已保存" in saved.text and "发言一经提交便不能修改" in submitted.text
    assert "截止时间已过" in late.text and "<h1>表单已过期</h1>" in forged.text and "<h1>未找到</h1>" in missing.text


# --- in a real browser ------------------------------------------------------------------------------------------------

@contextmanager
def serving(path: Path, **options: float) -> Iterator[str]:
    """The app under uvicorn, as `arena serve` runs it, in a thread (options: create_app's): its base URL."""
    import uvicorn

    from arena.app.people import web

    server = uvicorn.Server(web.uvicorn_config(web.create_app(path, **options)))
    sock = web._listen("127.0.0.1", 0)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]})
    thread.start()
    try:
        assert wait_for(lambda: server.started, timeout=15)
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(timeout=15)
        sock.close()


@pytest.mark.slow
def test_a_person_writes_saves_and_submits_a_speech_in_a_real_browser(debating, browser):
    """Chromium, with the app's CSP: the count follows the typing (count.js runs, nothing else does), a draft comes
    back, the speech is taken, and the hostile texts stay text."""
    from selenium.webdriver.common.by import By

    with serving(debating.path) as base:
        browser.set_window_size(1000, 900)
        browser.get_log("browser")
        browser.get(f"{base}/d/{debating.tokens['ann']}")
        first = browser.find_element(By.CSS_SELECTOR, "#open a")
        first.click()
        assert wait_for(lambda: browser.find_elements(By.ID, "speech"))
        speech = browser.find_element(By.ID, "speech")
        speech.send_keys("Three words here")
        assert wait_for(lambda: browser.find_element(By.ID, "count-n").text == "3")
        browser.find_element(By.CSS_SELECTOR, 'button[value="save"]').click()
        assert wait_for(lambda: browser.find_elements(By.ID, "saved-note"))
        assert browser.find_element(By.ID, "speech").get_attribute("value") == "Three words here"
        assert browser.find_element(By.ID, "count-n").text == "3"
        speech = browser.find_element(By.ID, "speech")
        speech.clear()
        browser.execute_script("arguments[0].value = arguments[1]; arguments[0].dispatchEvent(new Event('input'))",
                               speech, GOOD)
        assert wait_for(lambda: browser.find_element(By.ID, "count-n").text == str(length(GOOD, "en")[0]))
        screenshot(browser, "debater-turn.png")
        browser.find_element(By.CSS_SELECTOR, 'button[value="submit"]').click()
        assert wait_for(lambda: browser.find_elements(By.ID, "submitted-note"))
        assert console_errors(browser) == [] and dialogs(browser) == []
    assert debating.turn(debating.hostile, "rebuttal", "pro").speech == GOOD


# --- requests in flight: a real server, a slow client on a raw socket ------------------------------------------------

@pytest.mark.slow
def test_a_request_in_flight_when_the_link_is_issued_again_is_refused_and_stores_nothing(debating):
    """A draft and a speech whose headers came before `arena debaters issue` replaced ann's link, and the rest of
    their bodies after: both are refused 404, as any request by the old link is, and nothing is stored. Costs about
    3 s: `arena serve` and `arena debaters issue` are processes of their own."""
    path = debating.url("ann", debating.hostile, "rebuttal", "pro")
    before = debating.turn(debating.hostile, "rebuttal", "pro")
    with served(debating.path) as (_, base):
        token = csrf(page_of(base, path))
        bodies = {action: urlencode({"csrf": token, "speech": GOOD, "action": action}).encode()
                  for action in ("save", "submit")}
        slow = {action: slow_post(base, path, body) for action, body in bodies.items()}
        time.sleep(0.3)  # the server has the requests' headers, and found the link live
        issued = subprocess.run([*ARENA, "debaters", "issue", "--entry", "ann", "--base-url", base, "--format",
                                 "json", "-w", str(debating.path)], capture_output=True, text=True, timeout=60)
        assert issued.returncode == 0, issued.stderr
        answers = {action: finish(conn, bodies[action]) for action, conn in slow.items()}
        assert {action: status for action, (status, _) in answers.items()} == {"save": 404, "submit": 404}
        assert all("There is nothing here." in text for _, text in answers.values())
        assert debating.turn(debating.hostile, "rebuttal", "pro") == before
        # The new link opens the same turn and takes the speech.
        new = re.search(r'"url": "[^"]*/d/([^"]+)"', issued.stdout).group(1)
        again = path.replace(debating.tokens["ann"], new)
        body = urlencode({"csrf": csrf(page_of(base, again)), "speech": GOOD, "action": "submit"}).encode()
        taken = finish(slow_post(base, again, body), body)
    assert taken[0] == 303 and debating.turn(debating.hostile, "rebuttal", "pro").speech == GOOD


@pytest.mark.slow
def test_a_deadline_that_passes_while_the_body_comes_refuses_it_410(debating):
    """The turn open when the request's headers came, its deadline passed before the rest of its body: 410, nothing
    stored. Costs about 3 s (`arena serve` a process of its own; the deadline 1.5 s after the headers)."""
    path = debating.url("ann", debating.hostile, "rebuttal", "pro")
    before = debating.turn(debating.hostile, "rebuttal", "pro")
    with served(debating.path) as (_, base):
        token = csrf(page_of(base, path))
        deadline = future(1.5 / 3600)
        set_deadline(debating, debating.hostile, deadline)
        slow = {action: slow_post(base, path, urlencode({"csrf": token, "speech": GOOD, "action": action}).encode())
                for action in ("save", "submit")}
        while datetime.now(timezone.utc).isoformat(timespec="microseconds") <= deadline:
            time.sleep(0.05)
        answers = {action: finish(conn, urlencode({"csrf": token, "speech": GOOD, "action": action}).encode())
                   for action, conn in slow.items()}
    assert {action: status for action, (status, _) in answers.items()} == {"save": 410, "submit": 410}
    assert all("The deadline of this speech has passed" in text for _, text in answers.values())
    assert debating.turn(debating.hostile, "rebuttal", "pro") == replace(before, deadline=deadline)


def test_a_body_slower_than_the_read_deadline_is_refused_408_and_nothing_is_stored(debating):
    """A body that has not all come within the app's read deadline (half a second here; arena.app.people.forms.READ_S when
    served) is refused 408 and the connection closed, whatever comes after; the server goes on serving. Costs about
    a second."""
    path = debating.url("ann", debating.hostile, "rebuttal", "pro")
    before = debating.turn(debating.hostile, "rebuttal", "pro")
    with serving(debating.path, read_s=0.5) as base:
        token = csrf(page_of(base, path))
        started = time.monotonic()
        conns = [slow_post(base, path, urlencode({"csrf": token, "speech": GOOD, "action": action}).encode())
                 for action in ("save", "submit")]
        answers = [answer(conn) for conn in conns]
        waited = time.monotonic() - started
        assert [status for status, _ in answers] == [408, 408] and 0.5 <= waited < 5
        assert all("Your speech took too long to arrive" in text and "connection: close" in text.lower()
                   for _, text in answers)
        assert debating.turn(debating.hostile, "rebuttal", "pro") == before
        assert "<textarea" in page_of(base, path)  # still serving
