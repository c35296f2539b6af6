"""People debating on the web, end to end: a real `arena serve` process (tests/support/serving.py) and a real headless
Chromium (tests/support/browser.py), with `arena run` (arena.app.commands.run) in this process between the turns, as an
organiser runs it. The person ("ann", a human entry with via = "web") reads each turn's page through the private link
`arena debaters issue` gives, types the speech, saves a draft, reloads, submits; the offline entry "bot" answers.

What is checked: the page shows the motion, the side, the stage and the budget, and exactly the transcript the
agent4debate protocol lets that side see (never the other side's constructive while writing one's own, whoever
writes first); a speech is taken once (a second submit is a 409 and changes nothing); a kill -9 of the server while
drafts are being saved loses nothing submitted and leaves a whole draft; a turn past its deadline takes no speech
and the run forfeits that side; a zh workspace serves the pages in zh. Screenshots go to test-artifacts/.
"""
from __future__ import annotations

import html
import http.client
import re
import threading
import time
import urllib.parse
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Iterator

import pytest

from arena.app import commands as app
from arena.app.commands import open_workspace
from arena.app.people.web import turn_id
from arena.base.clock import now
from arena.domain.formats import AGENT4DEBATE
from arena.domain.records import HumanTurn
from arena.domain.speechchecks import length
from arena.workspace.folder import Workspace
from tests.support.browser import console_errors, dialogs, screenshot, wait_for
from tests.support.helpers import entry, judge, new_workspace, query, speech_text
from tests.support.serving import served
from tests.arena.app.people.test_serve_browser import ready_after_click, visit

pytestmark = pytest.mark.slow

WEB = {"via": "web"}
OTHER = {"pro": "con", "con": "pro"}
TITLES = {AGENT4DEBATE.title_of(stage): stage for stage in AGENT4DEBATE.stages}  # "Constructive" → constructive
# What each turn of agent4debate may see, in speaking order: nothing in the (blind) constructive stage; then every
# speech before it.
ALLOWED = {(t.stage, t.side): ([] if t.blind else [(u.stage, u.side) for u in AGENT4DEBATE.turns[:k]])
           for k, t in enumerate(AGENT4DEBATE.turns)}
assert ALLOWED[("constructive", "con")] == [] and ALLOWED[("rebuttal", "pro")] == [("constructive", "pro"),
                                                                                    ("constructive", "con")]
# The shown speeches of a turn's page: [class, heading, text] each, the text as the DOM holds it.
SHOWN = ("return Array.from(document.querySelectorAll('section.shown article.speech')).map(function (a) {"
         "  return [a.className, a.querySelector('h3').textContent, a.querySelector('.text').textContent]; });")


def quiet(line: str) -> None:
    pass


def workspace(path: Path, *, people: str = "", **settings) -> Path:
    """ann (a person on the web) and bot (offline), judged by an offline judge j; people: a [people] table's keys."""
    settings.setdefault("motions", ["builtin:en"])
    new_workspace(path, entries=[entry("ann", debater="human", model="human/ann", params=WEB),
                                 entry("bot", strength=0.5)], judges=[judge("j", runs=1)], **settings)
    if people:
        toml = path / "arena.toml"
        toml.write_text(toml.read_text(encoding="utf-8") + f"\n[people]\n{people}\n", encoding="utf-8")
    return path


@dataclass
class Site:
    """A workspace opened in this process, served by `arena serve`, and ann's link."""

    ws: Workspace
    base: str
    token: str
    key: bytes

    def schedule(self, motion: str, side: str) -> str:
        """A match of ann against bot on the motion, ann on side: its id."""
        pro, con = ("ann", "bot") if side == "pro" else ("bot", "ann")
        (match_id,) = self.ws.store.add_tournament("single", 0, {}, [(motion, pro, con)])
        return match_id

    def run(self, match_id: str) -> str:
        """One `arena run`: the match's status after it (other matches of the workspace may be played too)."""
        result = app.run(self.ws, concurrency=1, progress=quiet)
        assert result["failed"] == 0, result
        status = self.ws.store.match(match_id).status
        assert status in ("awaiting", "done"), status
        assert (result.get("awaiting") or 0) >= (status == "awaiting")
        return status

    def open_turn(self, match_id: str) -> HumanTurn:
        """ann's one turn of the match with no speech yet."""
        (turn,) = [t for t in self.ws.store.turns_of("ann") if t.match_id == match_id and not t.submitted]
        return turn

    def turn(self, turn: HumanTurn) -> HumanTurn:
        """The turn as stored now."""
        found = self.ws.store.human_turn(turn.match_id, turn.stage, turn.side)
        assert found is not None
        return found

    def path(self, turn: HumanTurn) -> str:
        """The turn's page, as ann's list links it: /d/TOKEN/TURN-ID."""
        return f"/d/{self.token}/{turn_id(self.key, 'ann', turn)}"

    def listing(self) -> str:
        return f"{self.base}/d/{self.token}"


def opened(path: Path) -> tuple[Workspace, str, bytes]:
    """The workspace opened, ann's new link's token (as `arena debaters issue` gives it) and the workspace's secret."""
    ws = open_workspace(path)
    (link,) = app.debaters_issue(ws)
    assert link["entry"] == "ann"
    return ws, link["url"].rsplit("/d/", 1)[1], ws.store.ballot_secret()


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Iterator[Site]:
    """One English workspace, served, for the whole-match and resubmit tests (each schedules a match of its own)."""
    ws, token, key = opened(workspace(tmp_path_factory.mktemp("web-debate") / "ws"))
    try:
        with served(ws.path) as (proc, base):
            yield Site(ws, base, token, key)
            assert proc.poll() is None, "arena serve died during the tests"
    finally:
        ws.close()


# --- what a person does in the browser --------------------------------------------------------------------------

def open_from_list(browser, site: Site, turn: HumanTurn, section: str = "open") -> None:
    """Open ann's list of turns and click the turn's link, listed under section (open, done, missed)."""
    from selenium.webdriver.common.by import By

    visit(browser, site.listing())
    link = browser.find_element(By.CSS_SELECTOR, f'#{section} a[href$="/{turn_id(site.key, "ann", turn)}"]')
    ready_after_click(browser, link)
    assert browser.current_url == site.base + site.path(turn)


def budget(browser) -> int:
    """The words the page says the turn takes."""
    from selenium.webdriver.common.by import By

    shown = browser.find_element(By.ID, "budget").text
    found = re.fullmatch(r"(\d+) (words|characters); a speech under (\d+) or over (\d+) \2 is not taken\.", shown) \
        or re.fullmatch(r"(\d+) 字；不足 (\d+) 字或超过 (\d+) 字的发言不予接受。", shown)
    assert found, shown
    return int(found.group(1))


TYPED = 200  # characters of a speech typed key by key; the rest is pasted (key by key costs ~1 ms a character)


def type_speech(browser, text: str, language: str = "en") -> None:
    """Write text into the empty speech box as a person does: its start typed, the rest pasted at the caret
    (execCommand insertText: the editing a paste does, with its input event); the live count (count.js) follows."""
    from selenium.webdriver.common.by import By

    box = browser.find_element(By.ID, "speech")
    assert box.get_attribute("value") == ""
    box.send_keys(text[:TYPED])
    assert wait_for(lambda: browser.find_element(By.ID, "count-n").text == str(length(text[:TYPED], language)[0]))
    browser.execute_script("arguments[0].focus(); document.execCommand('insertText', false, arguments[1]);", box,
                           text[TYPED:])
    assert box.get_attribute("value") == text
    assert wait_for(lambda: browser.find_element(By.ID, "count-n").text == str(length(text, language)[0]))


def save_draft(browser) -> None:
    from selenium.webdriver.common.by import By

    ready_after_click(browser, browser.find_element(By.CSS_SELECTOR, 'button[value="save"]'))
    assert browser.find_elements(By.ID, "saved-note")


def submit(browser) -> None:
    """Submit the speech: the list comes back, saying so."""
    from selenium.webdriver.common.by import By

    ready_after_click(browser, browser.find_element(By.CSS_SELECTOR, 'button[value="submit"]'))
    assert browser.find_elements(By.ID, "submitted-note"), browser.page_source[-2000:]


def write_turn(browser, site: Site, match_id: str, marker: str) -> tuple[HumanTurn, str]:
    """The match's open turn opened from the list, a speech marked `marker` of 80% of its budget typed and
    submitted: (the turn, the speech)."""
    turn = site.open_turn(match_id)
    open_from_list(browser, site, turn)
    text = speech_text(marker, size=int(budget(browser) * 0.8))
    type_speech(browser, text)
    submit(browser)
    return turn, text


def shown(browser) -> list[tuple[str, str, str]]:
    """The speeches the page shows: (stage, side, text) each, in order; the stage read off its heading."""
    rows = []
    for classes, heading, text in browser.execute_script(SHOWN):
        side = classes.split()[-1]
        title, label = heading.split(" · ")[:2]
        assert label.split()[0] == side.upper(), heading
        rows.append((TITLES[title], side, text))
    return rows


def assert_clean(browser) -> None:
    assert console_errors(browser) == [] and dialogs(browser) == []


def post(base: str, path: str, fields: dict[str, str], conn: http.client.HTTPConnection | None = None
         ) -> tuple[int, str]:
    """POST a form as a browser sends it, without following a redirect: (status, body)."""
    parts = urllib.parse.urlsplit(base)
    own = conn is None
    conn = conn or http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
    try:
        conn.request("POST", path, urllib.parse.urlencode(fields),
                     {"Content-Type": "application/x-www-form-urlencoded"})
        response = conn.getresponse()
        return response.status, response.read().decode("utf-8")
    finally:
        if own:
            conn.close()


# --- a whole match ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("side", ["pro", "con"])
def test_a_person_debates_a_whole_match_in_the_browser(browser, site, side):
    """ann plays a whole agent4debate match against bot on one side, each of her three turns in the browser: the
    page's brief and exactly the speeches her side may see (in the constructive stage none: bot's constructive,
    written before hers when she is CON, is on her rebuttal page only), the live count, a draft kept over a reload,
    the speech submitted; a run between the turns. Measured: 2.6-3.9 s a side, and once 1.5-2.2 s for Chromium, the
    workspace and `arena serve` (the fixtures).
    """
    from selenium.webdriver.common.by import By

    match_id = site.schedule("en-fact-003", side)
    motion = site.ws.store.match(match_id).motion
    typed: dict[str, str] = {}  # stage → ann's speech
    pages: dict[str, tuple[str, list[tuple[str, str, str]]]] = {}  # stage → (the page's HTML, what it showed)
    while site.run(match_id) == "awaiting":
        turn = site.open_turn(match_id)
        assert turn.side == side and turn.stage not in typed
        open_from_list(browser, site, turn)
        # The brief.
        assert browser.find_element(By.TAG_NAME, "h1").text == motion.text
        own = {"pro": "PRO: you argue for the motion.", "con": "CON: you argue against the motion."}[side]
        assert browser.find_element(By.ID, "side").text == own
        assert browser.find_element(By.ID, "place").text == \
            f"{AGENT4DEBATE.title_of(turn.stage)}, turn {AGENT4DEBATE.number(turn.stage, side)} of 6 of the debate"
        amount = budget(browser)
        assert amount == AGENT4DEBATE.turn(turn.stage, side).words
        assert browser.find_element(By.CSS_SELECTOR, "#deadline time").get_attribute("datetime") == turn.deadline
        # Exactly the speeches the protocol lets this side see, in order.
        seen = shown(browser)
        assert [(stage, s) for stage, s, _ in seen] == ALLOWED[(turn.stage, side)]
        if turn.stage == "constructive":
            assert browser.find_elements(By.ID, "nothing-shown")
            assert "write this stage's speeches independently" in browser.find_element(By.ID, "shown-title")\
                .find_element(By.XPATH, "..").text
        pages[turn.stage] = (browser.page_source, seen)
        # Write it: a draft, kept over a reload, then the speech.
        text = speech_text(f"ANN-{side.upper()}-{turn.stage.upper()}", size=int(amount * 0.8))
        type_speech(browser, text)
        save_draft(browser)
        assert site.turn(turn).draft == text and not site.turn(turn).submitted
        browser.refresh()
        assert wait_for(lambda: browser.execute_script("return document.readyState") == "complete")
        assert browser.find_element(By.ID, "speech").get_attribute("value") == text
        assert browser.find_element(By.ID, "count-n").text == str(length(text, "en")[0])
        if turn.stage == "rebuttal":
            screenshot(browser, f"web-debate-{side}-rebuttal.png")
        submit(browser)
        named = turn_id(site.key, "ann", turn)
        assert browser.current_url == f"{site.listing()}?submitted={named}"
        assert browser.find_elements(By.CSS_SELECTOR, f'#done a[href$="/{named}"]')
        assert not browser.find_elements(By.CSS_SELECTOR, f'#open a[href$="/{named}"]')
        assert_clean(browser)
        assert site.turn(turn).speech == text
        typed[turn.stage] = text

    match = site.ws.store.match(match_id)
    assert match.status == "done" and match.forfeit is None
    assert [(s.stage, s.text) for s in match.speeches if s.side == side] == list(typed.items())
    assert list(typed) == ["constructive", "rebuttal", "summary"]
    assert [v.judge for v in match.verdicts] == ["j"] and match.verdicts[0].overall in ("pro", "con", "tie")
    said = {(s.stage, s.side): s.text for s in match.speeches}
    # What ann was shown is what was debated: each shown speech is the stored one, to the character.
    for stage, (_, seen) in pages.items():
        assert all(text == said[(st, s)] for st, s, text in seen), stage
    # bot's constructive is nowhere on her constructive page, and on her rebuttal page.
    rival = said[("constructive", OTHER[side])]
    constructive, rebuttal = pages["constructive"][0], pages["rebuttal"][0]
    for piece in (rival, rival[:60], rival[-60:]):
        assert html.escape(piece, quote=False) not in constructive
    assert html.escape(rival, quote=False) in rebuttal


def test_a_second_submit_of_a_turn_is_refused_and_changes_nothing(browser, site):
    """ann has her turn open in two tabs: she submits in one and goes back to the form to submit it again, then
    submits in the other (its form, CSRF token and all): a 409 page, "Already submitted", each time; the same form
    posted again over HTTP is a 409 too; the stored speech stays the first. Measured: 1.4-1.8 s (the served workspace shared)."""
    from selenium.webdriver.common.by import By

    match_id = site.schedule("en-fact-004", "pro")
    assert site.run(match_id) == "awaiting"
    turn = site.open_turn(match_id)
    open_from_list(browser, site, turn)
    first_tab = browser.current_window_handle
    browser.switch_to.new_window("tab")
    try:
        visit(browser, site.base + site.path(turn))
        form = {"csrf": browser.find_element(By.NAME, "csrf").get_attribute("value"), "action": "submit"}
        later = speech_text("ANN-SECOND-TRY", size=360)
        type_speech(browser, later)
        second_tab = browser.current_window_handle

        browser.switch_to.window(first_tab)
        first = speech_text("ANN-FIRST", size=int(budget(browser) * 0.8))
        type_speech(browser, first)
        submit(browser)
        taken = site.turn(turn)
        assert taken.speech == first and taken.submitted_at
        # Back: Chromium (156) restores the page with its form and text from its back/forward cache, no-store
        # notwithstanding; sent again, it is refused. (A browser that fetches the page again gets it read-only.)
        browser.back()
        assert wait_for(lambda: browser.execute_script("return document.readyState") == "complete")
        if browser.find_elements(By.TAG_NAME, "form"):
            assert browser.find_element(By.ID, "speech").get_attribute("value") == first
            ready_after_click(browser, browser.find_element(By.CSS_SELECTOR, 'button[value="submit"]'))
            assert browser.find_element(By.TAG_NAME, "h1").text == "Already submitted"
        else:
            assert browser.find_elements(By.ID, "submitted-note")

        browser.switch_to.window(second_tab)
        ready_after_click(browser, browser.find_element(By.CSS_SELECTOR, 'button[value="submit"]'))
        assert browser.find_element(By.TAG_NAME, "h1").text == "Already submitted"
        assert browser.find_element(By.TAG_NAME, "main").text == \
            "Already submitted\nA submitted speech cannot be changed."
        assert not browser.find_elements(By.TAG_NAME, "form")
        status, page = post(site.base, site.path(turn), {**form, "speech": later})
        assert status == 409 and "A submitted speech cannot be changed." in page
        status, _ = post(site.base, site.path(turn), {**form, "action": "save", "speech": later})
        assert status == 409
        assert site.turn(turn) == taken
        # Its page now shows the speech read-only.
        visit(browser, site.base + site.path(turn))
        assert not browser.find_elements(By.TAG_NAME, "form") and browser.find_elements(By.ID, "submitted-note")
        assert browser.execute_script("return document.querySelector('section.submitted .text').textContent") == first
        assert_clean(browser)
    finally:
        for handle in browser.window_handles:
            if handle != first_tab:
                browser.switch_to.window(handle)
                browser.close()
        browser.switch_to.window(first_tab)


# --- kill -9 ------------------------------------------------------------------------------------------------------

DRAFTS = 100_000  # more than are sent before the kill
BLOCK = speech_text("A-DRAFT", size=120) + " "


def draft(i: int) -> str:
    """The i-th draft sent: about 50 KB, its number at both ends, so that a torn or mixed one shows."""
    return f"DRAFT-{i:05d} " + BLOCK * (50_000 // len(BLOCK)) + f"END-{i:05d}"


def test_a_kill_9_while_drafts_are_saved_loses_nothing_submitted(browser, tmp_path):
    """ann submits her constructive; on her rebuttal she saves a draft, then drafts keep coming (a client posting
    the form again and again, 50 KB each, and her own click on save) when `arena serve` is killed with SIGKILL. Served
    again on the same workspace: the database is whole, the constructive is as submitted and read-only, the rebuttal's
    draft is one of those sent since the last one the server acknowledged, whole; the runs go on to the match's end.
    Measured: 4.4-6.4 s."""
    from selenium.webdriver.common.by import By

    ws, token, key = opened(workspace(tmp_path / "ws"))
    try:
        with served(ws.path) as (proc, base):
            site = Site(ws, base, token, key)
            match_id = site.schedule("en-fact-001", "pro")
            assert site.run(match_id) == "awaiting"
            constructive, submitted = write_turn(browser, site, match_id, "ANN-KILL-CONSTRUCTIVE")
            assert site.run(match_id) == "awaiting"
            rebuttal = site.open_turn(match_id)
            assert rebuttal.stage == "rebuttal"
            open_from_list(browser, site, rebuttal)
            type_speech(browser, "An old draft of the rebuttal.")
            save_draft(browser)
            fields = {"csrf": browser.find_element(By.NAME, "csrf").get_attribute("value"), "action": "save"}

            # Draft after draft, each acknowledged (303) before the next is sent.
            acknowledged: list[int] = []
            unexpected: list[object] = []  # anything but a 303 while the server lives

            def keep_saving() -> None:
                parts = urllib.parse.urlsplit(base)
                conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
                try:
                    for i in range(DRAFTS):
                        status, _ = post(base, site.path(rebuttal), {**fields, "speech": draft(i)}, conn)
                        if status != 303:
                            unexpected.append(status)
                            return
                        acknowledged.append(i)
                except (OSError, http.client.HTTPException):
                    pass  # the server is gone
                finally:
                    conn.close()

            saver = threading.Thread(target=keep_saving)
            saver.start()
            assert wait_for(lambda: len(acknowledged) >= 5 or not saver.is_alive())
            mine = "The newest draft of the rebuttal, from the browser."
            box = browser.find_element(By.ID, "speech")
            box.clear()
            box.send_keys(mine)
            browser.find_element(By.CSS_SELECTOR, 'button[value="save"]').click()
            proc.kill()  # SIGKILL
            proc.wait(timeout=10)
            saver.join(timeout=10)
            assert not saver.is_alive() and unexpected == [] and 5 <= len(acknowledged) < DRAFTS
        last = acknowledged[-1]

        # Nothing torn: the database is whole, the speech as submitted, the draft one of those sent.
        assert query(ws.path, "PRAGMA integrity_check") == [("ok",)]
        assert site.turn(constructive).speech == submitted
        kept = site.turn(rebuttal)
        numbered = re.match(r"DRAFT-(\d{5}) ", kept.draft)
        assert kept.speech is None
        assert kept.draft == mine or (numbered and int(numbered.group(1)) >= last
                                      and kept.draft == draft(int(numbered.group(1)))), \
            (kept.draft[:20], kept.draft[-20:], len(kept.draft))

        with served(ws.path) as (proc, base):
            site = Site(ws, base, token, key)
            open_from_list(browser, site, constructive, "done")
            assert not browser.find_elements(By.TAG_NAME, "form")
            assert browser.execute_script("return document.querySelector('section.submitted .text').textContent") \
                == submitted
            open_from_list(browser, site, rebuttal)
            box = browser.find_element(By.ID, "speech")
            assert box.get_attribute("value") == kept.draft
            speech = speech_text("ANN-KILL-REBUTTAL", size=int(budget(browser) * 0.8))
            browser.execute_script("arguments[0].value = ''", box)
            type_speech(browser, speech)
            submit(browser)
            assert site.run(match_id) == "awaiting"
            _, closing = write_turn(browser, site, match_id, "ANN-KILL-SUMMARY")
            assert site.run(match_id) == "done"
            assert_clean(browser)
            assert proc.poll() is None
        match = ws.store.match(match_id)
        assert [s.text for s in match.speeches if s.side == "pro"] == [submitted, speech, closing]
        assert match.forfeit is None and len(match.verdicts) == 1
    finally:
        ws.close()


# --- the deadline -------------------------------------------------------------------------------------------------

def test_a_turn_past_its_deadline_shows_no_form_and_the_run_forfeits_that_side(browser, tmp_path):
    """[people] turn_deadline_h = 0.0003 (about a second): the run parks the match at ann's constructive (CON); once
    its deadline has passed, her list shows it under "Deadline passed" and its page says so, with no form; the next
    run finishes the match with CON forfeited, the reason beginning "deadline:". Measured: 2.4-3.0 s, 1.1 s of it
    waiting for the deadline."""
    from selenium.webdriver.common.by import By

    ws, token, key = opened(workspace(tmp_path / "ws", people="turn_deadline_h = 0.0003"))
    try:
        with served(ws.path) as (proc, base):
            site = Site(ws, base, token, key)
            match_id = site.schedule("en-fact-002", "con")
            assert site.run(match_id) == "awaiting"
            turn = site.open_turn(match_id)
            deadline = datetime.fromisoformat(turn.deadline)
            assert 0.5 < (deadline - datetime.fromisoformat(turn.opened_at)).total_seconds() < 1.5
            while now() <= turn.deadline:
                time.sleep(max(0.01, (deadline - datetime.fromisoformat(now())).total_seconds()))
            open_from_list(browser, site, turn, "missed")
            assert "The deadline of this speech has passed" in browser.find_element(By.ID, "deadline-passed").text
            assert not browser.find_elements(By.CSS_SELECTOR, "form, textarea, script")
            assert browser.find_element(By.ID, "side").text == "CON: you argue against the motion."
            screenshot(browser, "web-debate-deadline.png")
            assert_clean(browser)
            assert site.run(match_id) == "done"
            visit(browser, site.listing())
            assert browser.find_elements(By.CSS_SELECTOR, f'#missed a[href$="/{turn_id(key, "ann", turn)}"]')
            assert not browser.find_elements(By.CSS_SELECTOR, "#open a")
        match = ws.store.match(match_id)
        assert match.forfeit is not None and match.forfeit.side == "con"
        assert match.forfeit.reason.startswith("deadline:"), match.forfeit.reason
        assert site.turn(turn).speech is None
    finally:
        ws.close()


# --- in zh ----------------------------------------------------------------------------------------------------------

def assert_zh(browser) -> None:
    """The page is in zh: <html lang="zh"> and none of the app's English labels (as test_serve checks its pages)."""
    from tests.leaderboard.site.test_site_language import shown_texts
    from leaderboard.site import labels

    assert browser.execute_script("return document.documentElement.lang") == "zh"
    english = {m for m in labels.ZH if re.search(r"[A-Za-z]{2}", m) and "{" not in m} - set(labels.WORDS)
    left = [t for t in shown_texts(browser.page_source) if t in english or t.rstrip(".:") in english]
    assert not left, f"English labels on a zh page: {left}"


def test_a_zh_workspace_serves_the_debaters_pages_in_zh(browser, tmp_path):
    """[arena] language = "zh", motions builtin:zh (a two-sided motion): ann's list, her constructive (立论, a
    budget in characters, both propositions), the list after she submits, and her rebuttal (驳论, showing both
    立论 speeches), all with <html lang="zh"> and no English label of the app. Measured: 2.1-2.5 s."""
    from selenium.webdriver.common.by import By

    ws, token, key = opened(workspace(tmp_path / "ws", motions=["builtin:zh"], arena={"language": "zh"}))
    try:
        with served(ws.path) as (proc, base):
            site = Site(ws, base, token, key)
            match_id = site.schedule("zh-fact-006", "pro")
            motion = ws.store.match(match_id).motion
            assert motion.pro_text and motion.con_text
            assert site.run(match_id) == "awaiting"
            turn = site.open_turn(match_id)
            visit(browser, site.listing())
            assert_zh(browser)
            assert browser.find_element(By.TAG_NAME, "h1").text == "你的辩论"
            assert "立论 · PRO" in browser.find_element(By.CSS_SELECTOR, "#open li").text
            open_from_list(browser, site, turn)
            assert_zh(browser)
            assert browser.find_element(By.TAG_NAME, "h1").text == motion.text
            assert browser.find_element(By.ID, "side").text == f"你是 PRO 方：你主张“{motion.pro_text}”。"
            assert browser.find_element(By.ID, "place").text.startswith("立论")
            amount = budget(browser)
            assert amount == AGENT4DEBATE.turn("constructive", "pro").chars
            assert browser.find_element(By.ID, "count").get_attribute("data-unit") == "characters"
            text = speech_text("安的立论", "zh", size=int(amount * 0.8) // 3)
            type_speech(browser, text, "zh")
            screenshot(browser, "web-debate-zh.png")
            submit(browser)
            assert_zh(browser)
            assert site.turn(turn).speech == text
            assert site.run(match_id) == "awaiting"
            rebuttal = site.open_turn(match_id)
            open_from_list(browser, site, rebuttal)
            assert_zh(browser)
            assert browser.find_element(By.ID, "place").text.startswith("驳论")
            headings = browser.execute_script(
                "return Array.from(document.querySelectorAll('article.speech h3')).map(h => h.textContent)")
            assert headings == ["立论 · PRO （我方）", "立论 · CON"], headings
            assert browser.execute_script(SHOWN)[0][2] == text
            assert_clean(browser)
    finally:
        ws.close()
