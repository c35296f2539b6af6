"""`arena serve`: people's private links to their queue, blind transcripts and ballot forms, over HTTP.

The app is driven with Starlette's TestClient on a workspace played offline; the last tests start `arena serve`
as a real uvicorn process and throw garbage at it. Links are made as `arena ballots issue` makes them:
store.issue_links with the hash of arena.domain.ballots.new_token().
"""
from __future__ import annotations

import re
import shutil
import signal
import socket
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

import pytest

from arena.domain.ballots import DEFAULT_BASE_URL, RATIONALE_MAX, new_token, queue, token_hash
from arena.domain.records import Verdict
from arena.store import DB_NAME, Store
from tests.support.helpers import TWO_OFFLINE, assert_user_error, invoke, new_workspace
from tests.support.serving import (BO_RATIONALE, DIMS, ENTRIES, FINE_URL, HOSTILE_MOTION, HOSTILE_SLIDE, HOSTILE_SPEECH,
                           HOSTILE_TITLE, IMG, LLM_RATIONALE, MODELS, ORDER, PEOPLE, SCRIPT, ZH_CON, ZH_MOTION, ZH_PRO,
                           Built, build_workspace, csrf, esc, finish, page_of, served, slow_post)

pytestmark = pytest.mark.filterwarnings("ignore:Using `httpx` with `starlette.testclient`")


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Built:
    return build_workspace(tmp_path_factory.mktemp("serve") / "ws")


@pytest.fixture
def built(template, tmp_path) -> Built:
    """A fresh copy of the played workspace for one test: tests cast ballots."""
    path = tmp_path / "ws"
    shutil.copytree(template.path, path)
    return Built(path, template.tokens, template.en, template.zh, template.hostile, template.scheduled)


@pytest.fixture
def client(built):
    from starlette.testclient import TestClient

    from arena.app.people.web import create_app

    with TestClient(create_app(built.path)) as test_client:
        yield test_client


def form(page: str, **fields) -> dict:
    """A complete, valid ballot with the page's CSRF token; fields override (None: leave it out)."""
    values = {"csrf": csrf(page), "overall": "pro", "argument": "pro", "source": "tie", "language": "con",
              "rationale": "PRO answered the base-rate point; CON never did."} | fields
    return {key: value for key, value in values.items() if value is not None}


def stored(built: Built) -> dict[tuple[str, int], Verdict]:
    """Every ballot of the experts, by (match, run)."""
    store = Store(built.path / DB_NAME)
    try:
        return {(m, run): store.ballot(m, "experts", run) for m in built.done for run in range(len(PEOPLE))
                if store.ballot(m, "experts", run)}
    finally:
        store.close()


def verdict_rows(built: Built) -> list[tuple]:
    store = Store(built.path / DB_NAME)
    try:
        return [tuple(r) for r in store.conn.execute("SELECT match_id, judge, run, overall, dimensions, rationale "
                                                     "FROM verdicts ORDER BY match_id, judge, run")]
    finally:
        store.close()


def queue_ids(page: str, section: str) -> list[str]:
    """The ballot ids a queue page links under section (todo | cast), in order."""
    found = re.search(rf'<ol class="queue" id="{section}">(.*?)</ol>', page, re.S)
    return re.findall(r'href="[^"]*/([0-9a-f]{24})"', found.group(1)) if found else []


# --- the queue ------------------------------------------------------------------------------------------------

def test_queue_lists_each_done_match_in_the_persons_order_and_only_their_own_ballots(built, client):
    token = built.tokens["ann"]
    page = client.get(f"/b/{token}")
    assert page.status_code == 200
    assert queue_ids(page.text, "todo") == built.ids("ann", queue("experts", "ann", built.done))
    assert queue_ids(page.text, "cast") == []  # bo's ballot is bo's
    assert built.scheduled not in page.text
    assert "<strong>3</strong> to judge · <strong>0</strong> cast" in page.text
    assert page.text.count("to judge</span>") == 3
    # Motion text only: never who debated, on which model, or who judges.
    for name in (*ENTRIES, *MODELS, "alpha-model", "experts", "bo", "cy"):
        assert not re.search(rf"\b{re.escape(name)}\b", page.text), name
    assert esc(HOSTILE_MOTION) in page.text and SCRIPT not in page.text
    assert f'<span lang="zh">{ZH_MOTION}</span>' in page.text

    bo = client.get(f"/b/{built.tokens['bo']}").text
    assert queue_ids(bo, "cast") == built.ids("bo", [built.en])
    assert queue_ids(bo, "todo") == built.ids("bo", [m for m in queue("experts", "bo", built.done) if m != built.en])
    assert "<strong>2</strong> to judge · <strong>1</strong> cast" in bo


def test_cast_matches_move_below_those_still_to_judge(built, client):
    token = built.tokens["ann"]
    first = queue("experts", "ann", built.done)[0]
    page = client.get(built.ballot("ann", first)).text
    done = client.post(built.ballot("ann", first), data=form(page))
    assert done.status_code == 200 and done.url.path == f"/b/{token}"
    assert queue_ids(done.text, "todo") == built.ids("ann", queue("experts", "ann", built.done)[1:])
    assert queue_ids(done.text, "cast") == built.ids("ann", [first])
    assert 'class="badge cast">cast</span>' in done.text
    assert 'role="status">Your ballot on' in done.text  # the confirmation
    assert "<strong>2</strong> to judge · <strong>1</strong> cast" in done.text
    # A confirmation for a match the person did not cast is not shown.
    uncast = built.ids("ann", [built.hostile if first != built.hostile else built.zh])[0]
    other = client.get(f"/b/{token}?saved={uncast}").text
    assert 'role="status"' not in other


# --- the ballot page ------------------------------------------------------------------------------------------

def test_a_ballot_page_shows_the_motion_and_six_speeches_as_pro_and_con_only(built, client):
    page = client.get(built.ballot("ann", built.en))
    assert page.status_code == 200
    text = page.text
    assert esc("Social media has done more harm than good to teenagers' mental health") in text
    assert "Both sides bear an equal burden of proof." in text  # the info slide
    assert "PRO argues" not in text  # a one-sided motion: the motion is PRO's proposition
    headings = re.findall(r"<h3[^>]*>(\w+) · (PRO|CON)</h3>", text)
    assert headings == [(stage.capitalize(), side.upper()) for stage, side in ORDER]
    assert [h for h in re.findall(r'<h2 id="stage-(\w+)"', text)] == ["constructive", "rebuttal", "summary"]
    for name in (*ENTRIES, *MODELS, "alpha-model", "beta-model", "bot", "experts", "bo", "cy"):
        assert not re.search(rf"\b{re.escape(name)}\b", text), name
    assert "[simulated assessment]" not in text  # the offline judge's rationale
    assert BO_RATIONALE not in text and "BO-PRIVATE" not in text  # another person's ballot
    # The form: overall and each dimension as pro/con/tie radios in a fieldset, a rationale, a CSRF token.
    for name in ("overall", *DIMS):
        assert re.search(rf'<fieldset id="q-{name}">\s*<legend>', text)
        for value in ("pro", "con", "tie"):
            assert f'<label><input type="radio" name="{name}" value="{value}" required>' in text
    assert '<textarea id="rationale" name="rationale"' in text and '<label for="rationale">' in text
    assert len(csrf(text)) == 64 and "checked" not in text


def test_a_match_with_markup_everywhere_renders_it_as_text(built, client):
    page = client.get(built.ballot("ann", built.hostile)).text
    assert "<script" not in page.lower() and "<img" not in page and "<svg" not in page
    assert "onerror=" not in page.replace("onerror=&#34;", "")  # only as escaped text
    assert f"<h1>{esc(HOSTILE_MOTION)}</h1>" in page
    assert esc(HOSTILE_SLIDE) in page
    assert page.count(esc(HOSTILE_SPEECH)) == 6
    # References: the title as text, a javascript: URL made inert, an http(s) one kept, no referrer sent.
    assert f'<a href="#" rel="noreferrer noopener" target="_blank">{esc(HOSTILE_TITLE)}</a>' in page
    assert f'<a href="{esc(FINE_URL)}" rel="noreferrer noopener" target="_blank">A fine source</a>' in page
    assert "javascript:" not in page
    assert LLM_RATIONALE not in page and "LLM-VERDICT" not in page


def test_a_chinese_motion_marks_its_blocks_with_its_language(built, client):
    page = client.get(built.ballot("ann", built.zh)).text
    assert f'<header class="motion" lang="zh">\n<h1>{ZH_MOTION}</h1>' in page
    # Each side's own proposition, as the LLM judges are shown it.
    assert f'<dt lang="en">PRO argues</dt><dd>{ZH_PRO}</dd>' in page
    assert f'<dt lang="en">CON argues</dt><dd>{ZH_CON}</dd>' in page
    assert page.count('<article class="speech pro" lang="zh">') == 3
    assert page.count('<article class="speech con" lang="zh">') == 3
    assert '<html lang="en">' in page  # the page's own words stay English


# --- casting and revising -------------------------------------------------------------------------------------

def test_a_ballot_is_stored_as_the_persons_run_and_a_second_one_revises_it(built, client):
    token, match = built.tokens["cy"], built.en
    page = client.get(built.ballot("cy", match)).text
    cast = client.post(built.ballot("cy", match), data=form(page), follow_redirects=False)
    assert cast.status_code == 303
    assert cast.headers["location"] == f"../{token}?saved={built.ids('cy', [match])[0]}"
    assert client.get(cast.headers["location"].replace("..", "/b")).status_code == 200
    ballot = stored(built)[(match, 2)]  # cy is the third person: run 2
    assert (ballot.judge, ballot.overall, dict(ballot.dimensions), ballot.rationale) == (
        "experts", "pro", {"argument": "pro", "source": "tie", "language": "con"},
        "PRO answered the base-rate point; CON never did.")
    assert stored(built)[(match, 1)].rationale == BO_RATIONALE  # bo's ballot untouched

    # The page now holds the ballot, to revise.
    again = client.get(built.ballot("cy", match)).text
    assert 'id="cast-note"' in again
    checked = re.findall(r'name="(\w+)" value="(\w+)" required checked', again)
    assert checked == [("overall", "pro"), ("argument", "pro"), ("source", "tie"), ("language", "con")]
    assert ">PRO answered the base-rate point; CON never did.</textarea>" in again
    revised = client.post(built.ballot("cy", match), data=form(again, overall="tie", source="con",
                                                             rationale="On reflection, even."))
    assert revised.status_code == 200 and revised.url.path == f"/b/{token}"
    ballot = stored(built)[(match, 2)]
    assert (ballot.overall, ballot.dimensions["source"], ballot.rationale) == ("tie", "con", "On reflection, even.")
    rows = [r for r in verdict_rows(built) if r[1] == "experts" and r[0] == match]
    assert [r[2] for r in rows] == [1, 2]  # one row per person: the revision replaced cy's


def test_ballots_are_stored_as_written_markup_and_all(built, client):
    token, match = built.tokens["ann"], built.hostile
    rationale = f"PRO won {SCRIPT} {IMG}"
    page = client.get(built.ballot("ann", match)).text
    assert client.post(built.ballot("ann", match), data=form(page, rationale=rationale)).status_code == 200
    assert stored(built)[(match, 0)].rationale == rationale
    again = client.get(built.ballot("ann", match)).text
    assert f">{esc(rationale)}</textarea>" in again and SCRIPT not in again


@pytest.mark.parametrize("fields, field", [
    ({"overall": None}, "overall"),
    ({"overall": "maybe"}, "overall"),
    ({"argument": None}, "argument"),
    ({"language": "PRO!"}, "language"),
    ({"rationale": None}, "rationale"),
    ({"rationale": "   "}, "rationale"),
    ({"rationale": "x" * (RATIONALE_MAX + 1)}, "rationale"),
])
def test_a_bad_ballot_is_refused_naming_the_field_keeping_what_was_entered(built, client, fields, field):
    token, match = built.tokens["ann"], built.en
    page = client.get(built.ballot("ann", match)).text
    before = verdict_rows(built)
    refused = client.post(built.ballot("ann", match), data=form(page, **fields))
    assert refused.status_code == 400
    problem = re.search(r'<p class="error" role="alert" id="problem">(.*?)</p>', refused.text, re.S).group(1)
    assert f'<span class="field">{field}</span>:' in problem
    assert re.search(rf'<fieldset id="q-{field}" class="invalid"', refused.text) or field == "rationale"
    assert verdict_rows(built) == before
    # What was entered stays entered, and the form still posts.
    kept = dict(re.findall(r'name="(\w+)" value="(\w+)" required checked', refused.text))
    assert kept == {k: v for k, v in {"overall": "pro", "argument": "pro", "source": "tie", "language": "con",
                                      **fields}.items() if k != "rationale" and v in ("pro", "con", "tie")}
    if (fields.get("rationale") or "").startswith("x"):
        assert "x" * RATIONALE_MAX in refused.text
    assert csrf(refused.text) == csrf(page)


@pytest.mark.parametrize("token", ["missing", "wrong", "other match", "other person", "non-ascii"])
def test_a_post_without_its_forms_csrf_token_is_refused(built, client, token):
    ann, match = built.tokens["ann"], built.en
    page = client.get(built.ballot("ann", match)).text
    given = {"missing": None, "wrong": "0" * 64,
             "other match": csrf(client.get(built.ballot("ann", built.zh)).text),
             "other person": csrf(client.get(built.ballot("bo", match)).text),
             "non-ascii": "é" + csrf(page)[1:]}[token]
    before = verdict_rows(built)
    refused = client.post(built.ballot("ann", match), data=form(page, csrf=given))
    assert refused.status_code == 403
    assert "Form expired" in refused.text
    assert verdict_rows(built) == before


def test_the_csrf_secret_is_made_anew_with_each_app(built, client):
    from starlette.testclient import TestClient

    from arena.app.people.web import create_app

    page = client.get(built.ballot("ann", built.en)).text
    with TestClient(create_app(built.path)) as restarted:
        assert csrf(restarted.get(built.ballot("ann", built.en)).text) != csrf(page)
        assert restarted.post(built.ballot("ann", built.en), data=form(page)).status_code == 403


# --- links, paths and what a refusal shows ---------------------------------------------------------------------

def test_a_bad_link_or_path_is_a_bare_404(built, client):
    ann = built.tokens["ann"]
    forged = new_token()
    mine, bos = built.ballot("ann", built.en).rsplit("/", 1)[1], built.ids("bo", [built.en])[0]
    paths = [f"/b/{forged}", f"/b/{forged}/{mine}", f"/b/{ann}x", f"/b/{ann[:-1]}", f"/b/{ann.upper()}",
             f"/b/{token_hash(ann)}", "/b/", "/b", "/", "/admin", "/b/%00", f"/b/{ann}/{built.scheduled}",
             f"/b/{ann}/{built.ids('ann', [built.scheduled])[0]}", f"/b/{ann}/m99999", f"/b/{ann}/{mine}/more",
             f"/b/{ann}/..%2F{mine}", f"/b/{ann}/{mine.upper()}", "/ballot.css/x",
             # A public match id, as links named matches before, and another person's ballot id of the same match.
             f"/b/{ann}/{built.en}", f"/b/{ann}/{bos}"]
    bodies = set()
    for path in paths:
        got = client.get(path, follow_redirects=False)
        assert got.status_code == 404, path
        bodies.add(got.text)
    for path in (f"/b/{forged}/{mine}", f"/b/{ann}/{built.en}", f"/b/{ann}/{bos}"):
        posted = client.post(path, data={"overall": "pro"})
        assert posted.status_code == 404
        bodies.add(posted.text)
    # Each says the same nothing: no names, no motion, no hint of why.
    assert len({re.sub(r'href="[./]*ballot.css"', "", b) for b in bodies}) == 1
    body = bodies.pop()
    assert re.search(r"<main>\s*<h1>Not found</h1>\s*<p>There is nothing here.</p>\s*</main>", body)
    for word in (*ENTRIES, *MODELS, *PEOPLE, "experts", "bot", "Social"):
        assert not re.search(rf"\b{re.escape(word)}\b", body, re.I), word


def test_an_old_link_stops_working_once_the_person_is_given_a_new_one(built, client):
    old = built.tokens["ann"]
    page = client.get(built.ballot("ann", built.en)).text
    assert client.post(built.ballot("ann", built.en), data=form(page)).status_code == 200
    new = new_token()
    store = Store(built.path / DB_NAME)
    store.issue_links("experts", {"ann": token_hash(new)})
    store.close()
    assert client.get(f"/b/{old}").status_code == 404
    assert client.get(built.ballot("ann", built.zh)).status_code == 404
    assert client.post(built.ballot("ann", built.zh), data=form(page)).status_code == 404
    fresh = client.get(f"/b/{new}")
    # The ballots stay hers, under the same ballot ids.
    assert fresh.status_code == 200 and queue_ids(fresh.text, "cast") == built.ids("ann", [built.en])
    assert client.get(f"/b/{built.tokens['bo']}").status_code == 200  # others' links are untouched


@pytest.mark.slow
def test_a_ballot_in_flight_when_links_are_issued_again_is_refused_and_stores_nothing(built):
    """A ballot whose headers came before `arena ballots issue` replaced ann's link, and the rest of its body after:
    404, as any request by the old link is, and nothing is stored. Costs about 3 s: `arena serve` and `arena ballots
    issue` are processes of their own."""
    import subprocess
    import sys

    path = built.ballot("ann", built.zh)
    before = verdict_rows(built)
    with served(built.path) as (_, base):
        body = urllib.parse.urlencode(form(page_of(base, path))).encode()
        conn = slow_post(base, path, body)
        time.sleep(0.3)  # the server has the request's headers, and found the link live
        issued = subprocess.run([sys.executable, "-m", "arena", "ballots", "issue", "--judge", "experts", "-w",
                                 str(built.path)], capture_output=True, text=True, timeout=60)
        assert issued.returncode == 0, issued.stderr
        status, text = finish(conn, body)
    assert status == 404 and "There is nothing here." in text
    assert verdict_rows(built) == before


def test_a_link_of_a_person_no_longer_configured_is_a_404(built, client):
    store = Store(built.path / DB_NAME)
    store.issue_links("experts", {"dee": token_hash("dee-token-" + "x" * 30)})
    store.issue_links("gone-judge", {"ann": token_hash("gone-token-" + "x" * 30)})
    store.close()
    assert client.get("/b/dee-token-" + "x" * 30).status_code == 404
    assert client.get("/b/gone-token-" + "x" * 30).status_code == 404


def test_a_trailing_slash_redirects_relative_to_the_page_never_to_the_requests_host(built, client):
    token, ballot = built.tokens["ann"], built.ballot("ann", built.en)
    for path in (f"/b/{token}/", f"/b/{token}/?saved=x", f"{ballot}/", "/ballot.css/"):
        for method in (client.get, client.post):
            got = method(path, headers={"host": "evil.example"}, follow_redirects=False)
            assert got.status_code == 307, path
            location = got.headers["location"]
            assert location.startswith("../") and "evil" not in location, location
            assert got.headers["referrer-policy"] == "no-referrer"
        # It leads to the page without the slash, wherever the app sits.
        for root in ("http://testserver", "https://proxy.example/ballots"):
            stem, _, query = path.partition("?")
            assert urllib.parse.urljoin(root + path, location) == root + stem[:-1] + (f"?{query}" if query else "")
        assert client.get(path).status_code == 200
    for path in (f"/b/{token}//", "/b/", f"/b/{token}/{built.en}/more/"):
        assert client.get(path, follow_redirects=False).status_code == 404, path


def test_every_response_carries_the_security_headers(built, client):
    ann, url = built.tokens["ann"], built.ballot("ann", built.en)
    page = client.get(url)
    responses = [client.get(f"/b/{ann}"), page, client.get("/ballot.css"), client.get("/nowhere"),
                 client.post(url, data=form(page.text, overall=None)),
                 client.post(url, data=form(page.text, csrf="0")),
                 client.post(url, data=form(page.text), follow_redirects=False),
                 client.put(url), client.head(f"/b/{ann}")]
    assert [r.status_code for r in responses] == [200, 200, 200, 404, 400, 403, 303, 405, 200]
    for r in responses:
        csp = r.headers["content-security-policy"]
        assert "default-src 'none'" in csp and "style-src 'self'" in csp and "form-action 'self'" in csp
        assert "frame-ancestors 'none'" in csp and "script-src" not in csp
        assert r.headers["referrer-policy"] == "no-referrer"
        assert r.headers["cache-control"] == "no-store"
        assert r.headers["x-content-type-options"] == "nosniff"
    assert responses[2].headers["content-type"].startswith("text/css")
    assert "GET" in responses[7].headers["allow"]
    # Nothing from elsewhere: the one style sheet is the app's own (linked relative to the page), and no script.
    for r, root in ((responses[0], "../"), (responses[1], "../../")):
        head = r.text.split("<main>")[0]
        assert re.findall(r'(?:href|src)="([^"]+)"', head) == [f"{root}ballot.css"]
        assert "<script" not in r.text


# --- bodies that are not ballots ----------------------------------------------------------------------------------

def test_an_oversized_body_is_refused_and_stores_nothing(built, client):
    url = built.ballot("ann", built.en)
    page = client.get(url).text
    before = verdict_rows(built)
    big = client.post(url, data=form(page, rationale="y" * 120_000))
    assert big.status_code == 413
    # A body that declares no length (chunked) is cut off as it comes.
    body = "&".join(f"{k}={v}" for k, v in form(page).items()) + "&pad=" + "z" * 150_000

    def chunks():
        for k in range(0, len(body), 8192):
            yield body[k:k + 8192].encode()

    chunked = client.post(url, content=chunks(),
                          headers={"content-type": "application/x-www-form-urlencoded"})
    assert chunked.status_code == 413
    assert verdict_rows(built) == before


def test_bodies_that_are_not_a_form_are_refused_and_store_nothing(built, client):
    match, url = built.en, built.ballot("ann", built.en)
    page = client.get(url).text
    before = verdict_rows(built)
    urlencoded = {"content-type": "application/x-www-form-urlencoded"}
    valid = f"csrf={csrf(page)}&argument=pro&source=pro&language=pro&rationale=ok"
    bad_utf8 = client.post(url, content=valid.encode() + b"&overall=pro\xff\xfe", headers=urlencoded)
    assert bad_utf8.status_code == 400 and '<span class="field">overall</span>' in bad_utf8.text
    assert client.post(url, json={"csrf": csrf(page), "overall": "pro"}).status_code == 400
    assert client.post(url, files={"rationale": ("r.txt", b"file")}, data=form(page)).status_code == 400
    assert client.post(url, content=b"&".join([b"f%d=1" % k for k in range(100)]),
                       headers=urlencoded).status_code == 400
    assert client.post(url, content=b"\x00\xff" * 50, headers=urlencoded).status_code == 400
    assert verdict_rows(built) == before


UTF8 = "Überzeugend — 很好"


@pytest.mark.parametrize("rationale, encode", [
    ("plain", lambda text: urllib.parse.quote_plus(text).encode()),  # as browsers send it
    ("raw", lambda text: text.encode("utf-8")),  # bytes beyond ASCII unescaped, as some clients send them
])
def test_a_form_is_read_as_utf8_escaped_or_raw(built, client, rationale, encode):
    url = built.ballot("ann", built.en)
    page = client.get(url).text
    body = f"csrf={csrf(page)}&overall=pro&argument=pro&source=tie&language=con&rationale=".encode()
    got = client.post(url, content=body + encode(UTF8) + b"+%zz", follow_redirects=False,
                      headers={"content-type": "application/x-www-form-urlencoded"})
    assert got.status_code == 303
    assert stored(built)[(built.en, 0)].rationale == UTF8 + " %zz"  # an escape that is no escape stays as written


@pytest.mark.parametrize("fields, field", [
    (b"&overall=pro&rationale=%ff%fe", "rationale"),  # escapes of no UTF-8
    (b"&overall=pro&rationale=caf%C3", "rationale"),  # a character cut short
    (b"&overall=pro&rationale=%ED%A0%80", "rationale"),  # a surrogate, which UTF-8 does not encode
    (b"&overall=p\xc3(&rationale=ok", "overall"),  # raw bytes of no UTF-8
])
def test_a_field_that_is_not_utf8_is_a_400_naming_it_and_stores_nothing(built, client, fields, field):
    url = built.ballot("ann", built.en)
    page = client.get(url).text
    before = verdict_rows(built)
    body = f"csrf={csrf(page)}&argument=pro&source=pro&language=pro".encode() + fields
    got = client.post(url, content=body, headers={"content-type": "application/x-www-form-urlencoded"})
    assert got.status_code == 400
    assert f'<span class="field">{field}</span>: not UTF-8 text' in got.text
    assert "\ufffd" not in got.text and "Ã" not in got.text
    assert verdict_rows(built) == before


# --- people at once -----------------------------------------------------------------------------------------------

def test_concurrent_ballots_are_all_stored(built, client):
    pages = {(p, m): client.get(built.ballot(p, m)).text for p in PEOPLE for m in built.done}
    errors: list[str] = []
    start = threading.Barrier(len(pages) + 2)

    def cast(person: str, match: str, overall: str) -> None:
        start.wait()
        got = client.post(built.ballot(person, match), follow_redirects=False,
                          data=form(pages[(person, match)], overall=overall, rationale=f"{person} on {match}"))
        if got.status_code != 303:
            errors.append(f"{person} {match}: {got.status_code} {got.text[:200]}")

    jobs = [(p, m, "con") for p, m in pages]
    jobs += [("ann", built.zh, "tie")]  # ann posts the same match twice at once: one of the two wins whole
    threads = [threading.Thread(target=cast, args=job) for job in jobs]
    for t in threads:
        t.start()
    start.wait()
    for t in threads:
        t.join(timeout=30)
    assert errors == []
    ballots = stored(built)
    assert len(ballots) == len(pages)
    for (match, run), ballot in ballots.items():
        assert ballot.rationale == f"{PEOPLE[run]} on {match}"
        assert ballot.overall == "con" or (match, run, ballot.overall) == (built.zh, 0, "tie")
    assert len([r for r in verdict_rows(built) if r[1] == "experts"]) == len(pages)


# --- the command -----------------------------------------------------------------------------------------------

def test_serve_without_a_judge_of_people_exits_2_saying_how_to_add_one(tmp_path):
    ws = new_workspace(tmp_path / "ws", entries=TWO_OFFLINE)
    result = invoke("serve", "-w", ws, "--port", "0")
    assert_user_error(result, "no judge of people", 'kind = "human"', "people = [")


def test_links_point_where_serve_listens_by_default_which_is_not_a_local_model_servers_port():
    shown = invoke("serve", "--help").output
    port = re.search(r"\[default:\s+(\d+)", shown[shown.index("--port"):]).group(1)
    assert DEFAULT_BASE_URL == f"http://127.0.0.1:{port}" and port not in ("8000", "8080")  # llama.cpp's, vLLM's


def test_serve_where_it_cannot_listen_exits_2(built):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = invoke("serve", "-w", built.path, "--port", port)
    # a port taken (llama.cpp's server on 8000 was the newcomer's): which option moves off it, and the links with it
    assert_user_error(result, f"--port {port}: another program already listens on 127.0.0.1:{port}",
                      f"'arena serve --port {port + 1}'", f"--base-url http://127.0.0.1:{port + 1}")
    for host in ("no-such-host.invalid", "é" * 100):
        result = invoke("serve", "-w", built.path, "--host", host, "--port", "0")
        assert_user_error(result, f"--host {host}", "cannot listen")


# --- a real server ----------------------------------------------------------------------------------------------

def get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def raw(base: str, data: bytes, *, wait: float = 2.0) -> bytes:
    """Send data over a fresh socket and return whatever comes back before the server closes or wait passes."""
    host, port = base.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=wait) as conn:
        try:
            conn.sendall(data)
            conn.shutdown(socket.SHUT_WR)
        except OSError:  # the server may hang up before all of the garbage is sent
            pass
        out = b""
        try:
            while chunk := conn.recv(65536):
                out += chunk
        except OSError:
            pass
        return out


@pytest.mark.slow
def test_the_server_survives_garbage_and_stops_cleanly_on_sigint_and_sigterm(built):
    token = built.tokens["ann"]
    with served(built.path) as (proc, base):
        assert base.startswith("http://127.0.0.1:")  # loopback by default
        assert get(f"{base}/b/{token}")[0] == 200
        garbage = [
            bytes(range(256)) * 64,  # not HTTP at all
            b"\r\n\r\n\x00\x00GARBAGE\r\n\r\n",
            b"GET /b/" + token.encode() + b" HTTP/9.9\r\n\r\n",
            b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 200_000 + b"\r\n\r\n",  # huge header
            b"GET / HTTP/1.1\r\n" + b"".join(b"X-%d: y\r\n" % k for k in range(5000)) + b"\r\n",
            b"POST " + built.ballot("ann", built.en).encode() + b" HTTP/1.1\r\nHost: x\r\n"
            b"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 40\r\n\r\noverall=\xff\xfe\xfd",
            b"POST " + built.ballot("ann", built.en).encode() + b" HTTP/1.1\r\nHost: x\r\n"
            b"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 21\r\n\r\n"
            b"overall=\xff\xfe&csrf=\xc3(",  # bad UTF-8, whole
            b"POST /b/x HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n",
            b"POST /b/x HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzzzz\r\n",
            "GET /b/\u00e9\u4e2d HTTP/1.1\r\nHost: x\r\n\r\n".encode(),
            b"GET /b/%ff%fe%00 HTTP/1.1\r\nHost: x\r\n\r\n",
        ]
        for data in garbage:
            answer = raw(base, data)
            assert b" 500 " not in answer.split(b"\r\n", 1)[0], (data[:60], answer[:200])
        # A connection opened and left silent does not stop others.
        with socket.create_connection(("127.0.0.1", int(base.rsplit(":", 1)[1]))):
            status, page = get(base + built.ballot("ann", built.en))
        assert status == 200 and "Your ballot" in page
        assert get(f"{base}/b/{new_token()}")[0] == 404
        assert get(f"{base}/b/%ff%fe%00")[0] == 404
        assert proc.poll() is None
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=15) == 0
        out, err = proc.stdout.read(), proc.stderr.read()
        assert "stopped" in out and "Traceback" not in err, err
        assert token not in out + err  # no access log keeps the links
    with served(built.path) as (proc, base):
        assert get(f"{base}/b/{token}")[0] == 200
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=15) == 0
        assert "Traceback" not in proc.stderr.read()


def head(base: str, data: bytes) -> tuple[int, dict[str, list[str]]]:
    """Send data over a fresh socket, keeping it open for the answer: the answer's status and its headers (names
    lowercased, each with every value it was sent with)."""
    host, port = base.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as conn:
        conn.sendall(data)
        answer = b""
        while b"\r\n\r\n" not in answer and (chunk := conn.recv(65536)):
            answer += chunk
    status, *lines = answer.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")
    headers: dict[str, list[str]] = {}
    for line in lines:
        name, _, value = line.partition(":")
        headers.setdefault(name.strip().lower(), []).append(value.strip())
    return int(status.split()[1]), headers


@pytest.mark.slow
def test_every_answer_of_the_real_server_carries_the_security_headers_once_and_no_host_of_the_request(built):
    from arena.app.people.web import SECURITY_HEADERS

    token = built.tokens["ann"].encode()
    requests = {  # what is sent → the status it gets
        bytes(range(256)) * 4: 400,  # not HTTP: uvicorn answers before the app sees anything
        b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 200_000 + b"\r\n\r\n": 400,  # a header too large
        "GET /b/\u00e9 HTTP/1.1\r\nHost: x\r\n\r\n".encode(): 400,  # a target that is not ASCII
        b"POST /b/x HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n": 400,
        b"GET /b/" + token + b"/ HTTP/1.1\r\nHost: evil.example\r\n\r\n": 307,
        b"GET /b/" + token + b" HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
        b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n": 200,  # no websockets
        b"GET /b/" + token + b" HTTP/1.1\r\nHost: evil.example\r\n\r\n": 200,
    }
    with served(built.path) as (proc, base):
        for data, expected in requests.items():
            status, headers = head(base, data)
            assert status == expected, data[:60]
            for name, value in SECURITY_HEADERS.items():
                assert headers.get(name.lower()) == [value], (data[:60], name)
            assert "evil" not in " ".join(v for values in headers.values() for v in values)
            if status == 307:
                assert headers["location"] == [f"../{token.decode()}"]


def test_served_connections_send_without_waiting_tcp_nodelay(built):
    import uvicorn

    from arena.app.people import web

    server = uvicorn.Server(web.uvicorn_config(web.create_app(built.path)))
    sock = web._listen("127.0.0.1", 0)  # as `arena serve` listens
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]})
    thread.start()
    try:
        deadline = time.monotonic() + 15
        while not server.started and time.monotonic() < deadline:
            time.sleep(0.01)
        with socket.create_connection(sock.getsockname(), timeout=10) as conn:
            conn.sendall(b"GET /ballot.css HTTP/1.1\r\nHost: x\r\n\r\n")
            assert conn.recv(65536).startswith(b"HTTP/1.1 200 ")
            served_sockets = [p.transport.get_extra_info("socket") for p in server.server_state.connections]
            assert len(served_sockets) == 1
            assert served_sockets[0].getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
    finally:
        server.should_exit = True
        thread.join(timeout=15)
        sock.close()


def test_a_zh_workspace_serves_every_page_in_zh(built):
    """The web app speaks the workspace's language ([arena] language), from the site's catalogue: the queue, a
    ballot (its questions as the Debatrix judge's zh prompts define them, the stages' zh titles), a refused
    ballot's problem, and a refusal, each with lang="zh" and none of the app's English labels."""
    from starlette.testclient import TestClient

    from arena.app.people.web import create_app
    from tests.leaderboard.site.test_site_language import shown_texts
    from leaderboard.site import labels

    toml = built.path / "arena.toml"
    text = toml.read_text(encoding="utf-8")
    toml.write_text(text.replace("[arena]\n", '[arena]\nlanguage = "zh"\n', 1) if "[arena]\n" in text
                    else '[arena]\nlanguage = "zh"\n' + text, encoding="utf-8")
    english = {m for m in labels.ZH if re.search(r"[A-Za-z]{2}", m) and "{" not in m} - set(labels.WORDS)
    with TestClient(create_app(built.path)) as client:
        queue = client.get(f"/b/{built.tokens['cy']}")
        ballot = client.get(built.ballot("cy", built.zh))
        refused = client.post(built.ballot("cy", built.zh), data=form(ballot.text, rationale=""))
        missing = client.get(f"/b/{built.tokens['cy']}/{'0' * 24}")
    assert (queue.status_code, ballot.status_code, refused.status_code, missing.status_code) == (200, 200, 400, 404)
    for page in (queue, ballot, refused, missing):
        assert page.text.startswith('<!doctype html>\n<html lang="zh">')
        left = [t for t in shown_texts(page.text) if t in english or t.rstrip(".:") in english]
        assert not left, f"English labels on a zh page: {left}"
    assert "<h1>你的评判</h1>" in queue.text and "待评判 <strong>3</strong> 场" in queue.text
    assert "PRO 方主张" in ballot.text and "<h2 id=\"stage-constructive\">立论</h2>" in ballot.text
    assert "<legend>哪一方赢得了这场辩论？</legend>" in ballot.text and "<legend>论证</legend>" in ballot.text
    assert "双方各自提出的论点" in ballot.text  # the Debatrix judge's zh definition of argument, as the hint
    assert '<span class="field">理由</span>: 未填写：请用几句话说明理由' in refused.text
    assert "<h1>未找到</h1>" in missing.text and "这里什么也没有。" in missing.text
