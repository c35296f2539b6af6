"""`arena serve` in a real headless Chromium: a person opens their link, judges a debate with the mouse and the
keyboard, revises the ballot, and hostile text stays text. The browser is Debian's chromium (tests/support/browser.py,
never a downloaded one); the server is a real `arena serve` process (tests/support/serving.py). Screenshots go to
test-artifacts/.
"""
from __future__ import annotations

import re

import pytest

from arena.domain.ballots import new_token, queue
from arena.store import DB_NAME, Store
from tests.support.browser import console_errors, dialogs, screenshot, wait_for
from tests.support.serving import (ENTRIES, HOSTILE_MOTION, HOSTILE_SPEECH, IMG, MODELS, PEOPLE, SCRIPT, ZH_CON, ZH_MOTION,
                           ZH_PRO, Built, build_workspace, served)

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> tuple[Built, str]:
    """A played workspace served by `arena serve`: (the workspace, its base URL)."""
    built = build_workspace(tmp_path_factory.mktemp("serve-browser") / "ws")
    with served(built.path) as (proc, base):
        yield built, base
        assert proc.poll() is None, "arena serve died during the tests"


def visit(driver, url: str, width: int = 1280, height: int = 900) -> None:
    """Open url at the given window size, with the console log emptied first."""
    driver.set_window_size(width, height)
    driver.get_log("browser")
    driver.get(url)
    assert wait_for(lambda: driver.execute_script("return document.readyState") == "complete")


def ready_after_click(driver, element) -> None:
    """Click element (a link or a submit button) and wait for the page it leads to."""
    old = driver.find_element("tag name", "html")
    element.click()
    assert wait_for(lambda: _stale(old)), "the page did not change"
    assert wait_for(lambda: driver.execute_script("return document.readyState") == "complete")


def _stale(element) -> bool:
    """Whether element's page is gone. Asked while that page is being left, chromedriver may answer with an error
    of its own ("unhandled inspector error", seen on a loaded machine): not known yet, so asked again."""
    from selenium.common.exceptions import StaleElementReferenceException, WebDriverException

    try:
        element.tag_name
        return False
    except StaleElementReferenceException:
        return True
    except WebDriverException:
        return False


def assert_inert(driver) -> None:
    """No dialog was opened, no script element exists, nothing markup-made (img, svg, handlers) is on the page."""
    assert driver.execute_script("return Array.isArray(window.__dialogs)"), "the dialog watcher is not installed"
    assert dialogs(driver) == []
    assert driver.execute_script("return document.scripts.length") == 0
    assert driver.execute_script("return document.querySelectorAll('img, svg, iframe, [onerror], [onload]').length") \
        == 0
    assert console_errors(driver) == []


def checked(driver) -> dict[str, str]:
    return driver.execute_script(
        "var out = {}; document.querySelectorAll('input[type=radio]:checked')"
        ".forEach(function (r) { out[r.name] = r.value; }); return out;")


def ballot_of(built: Built, match: str, person: str):
    store = Store(built.path / DB_NAME)
    try:
        return store.ballot(match, "experts", PEOPLE.index(person))
    finally:
        store.close()


def test_a_person_judges_with_mouse_and_keyboard_then_revises(browser, server):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    built, base = server
    token = built.tokens["ann"]
    visit(browser, f"{base}/b/{token}")
    assert browser.find_element(By.TAG_NAME, "h1").text == "Your ballots"
    todo = browser.find_elements(By.CSS_SELECTOR, "#todo li")
    assert len(todo) == 3 and not browser.find_elements(By.CSS_SELECTOR, "#cast li")
    assert all(item.find_element(By.CSS_SELECTOR, ".badge").text == "to judge" for item in todo)
    main = browser.find_element(By.TAG_NAME, "main").text
    assert "3 to judge · 0 cast" in main
    for name in (*ENTRIES, *MODELS):
        assert name not in browser.page_source
    assert_inert(browser)
    screenshot(browser, "serve-queue.png")

    # The mouse opens the first debate to judge.
    first = queue("experts", "ann", built.done)[0]
    ready_after_click(browser, todo[0].find_element(By.TAG_NAME, "a"))
    assert browser.current_url == base + built.ballot("ann", first)
    headings = [h.text for h in browser.find_elements(By.CSS_SELECTOR, "article.speech h3")]
    assert len(headings) == 6 and {h.split(" · ")[1] for h in headings} == {"PRO", "CON"}
    assert_inert(browser)

    # Overall by mouse, on the label; the dimensions by keyboard: Tab into a group, Space picks the focused
    # choice, arrow keys move the choice along.
    browser.find_element(By.XPATH, "//fieldset[@id='q-overall']//label[normalize-space()='CON']").click()
    keys = browser.switch_to.active_element
    assert keys.get_attribute("name") == "overall" and keys.get_attribute("value") == "con"
    keys.send_keys(Keys.TAB)
    focused = browser.switch_to.active_element
    assert (focused.get_attribute("name"), focused.get_attribute("value")) == ("argument", "pro")
    # The keyboard's focus is visible.
    assert browser.execute_script("return getComputedStyle(document.activeElement).outlineStyle") != "none"
    focused.send_keys(Keys.SPACE)
    focused.send_keys(Keys.ARROW_RIGHT)  # argument: con
    browser.switch_to.active_element.send_keys(Keys.TAB)
    browser.switch_to.active_element.send_keys(Keys.SPACE)  # source: pro
    browser.switch_to.active_element.send_keys(Keys.ARROW_RIGHT, Keys.ARROW_RIGHT)  # source: tie
    browser.switch_to.active_element.send_keys(Keys.TAB)
    browser.switch_to.active_element.send_keys(Keys.SPACE)  # language: pro
    assert checked(browser) == {"overall": "con", "argument": "con", "source": "tie", "language": "pro"}
    browser.switch_to.active_element.send_keys(Keys.TAB)
    rationale = browser.switch_to.active_element
    assert rationale.get_attribute("id") == "rationale"
    rationale.send_keys("CON's rebuttal answered every point.")
    screenshot(browser, "serve-ballot.png")
    rationale.send_keys(Keys.TAB)
    submit = browser.switch_to.active_element
    assert submit.text == "Cast ballot"
    old = browser.find_element(By.TAG_NAME, "html")
    submit.send_keys(Keys.ENTER)
    assert wait_for(lambda: _stale(old))
    saved = f"{base}/b/{token}?saved={built.ids('ann', [first])[0]}"
    assert wait_for(lambda: browser.current_url == saved), browser.current_url

    # Back in the queue: confirmed, and listed as cast.
    assert "is saved" in browser.find_element(By.CSS_SELECTOR, "[role=status]").text
    cast = browser.find_elements(By.CSS_SELECTOR, "#cast li")
    assert len(cast) == 1 and cast[0].find_element(By.CSS_SELECTOR, ".badge").text == "cast"
    assert len(browser.find_elements(By.CSS_SELECTOR, "#todo li")) == 2
    assert "2 to judge · 1 cast" in browser.find_element(By.TAG_NAME, "main").text
    assert_inert(browser)
    ballot = ballot_of(built, first, "ann")
    assert (ballot.overall, dict(ballot.dimensions), ballot.rationale) == (
        "con", {"argument": "con", "source": "tie", "language": "pro"}, "CON's rebuttal answered every point.")

    # Revise it: the form comes back filled in.
    ready_after_click(browser, cast[0].find_element(By.TAG_NAME, "a"))
    assert checked(browser) == {"overall": "con", "argument": "con", "source": "tie", "language": "pro"}
    box = browser.find_element(By.ID, "rationale")
    assert box.get_attribute("value") == "CON's rebuttal answered every point."
    browser.find_element(By.XPATH, "//fieldset[@id='q-overall']//label[normalize-space()='Tie']").click()
    box.clear()
    box.send_keys("On reflection, a tie.")
    ready_after_click(browser, browser.find_element(By.CSS_SELECTOR, "form.ballot button[type=submit]"))
    assert "is saved" in browser.find_element(By.CSS_SELECTOR, "[role=status]").text
    ballot = ballot_of(built, first, "ann")
    assert (ballot.overall, ballot.dimensions["argument"], ballot.rationale) == ("tie", "con", "On reflection, a tie.")
    assert len(browser.find_elements(By.CSS_SELECTOR, "#cast li")) == 1
    assert_inert(browser)


def test_a_forged_link_shows_nothing(browser, server):
    from selenium.webdriver.common.by import By

    built, base = server
    for url in (f"{base}/b/{new_token()}", f"{base}/b/{new_token()}/{built.en}", f"{base}/b/{built.tokens['bo']}x",
                f"{base}/b/{built.tokens['bo']}/{built.en}"):  # a public match id names no ballot
        visit(browser, url)
        assert browser.find_element(By.TAG_NAME, "main").text == "Not found\nThere is nothing here."
        assert not browser.find_elements(By.CSS_SELECTOR, "a, form, input")
        assert dialogs(browser) == []
    screenshot(browser, "serve-forged.png")


def test_script_in_a_motion_a_speech_and_a_rationale_stays_inert(browser, server):
    from selenium.webdriver.common.by import By

    built, base = server
    token, match = built.tokens["bo"], built.hostile
    visit(browser, f"{base}/b/{token}")
    assert HOSTILE_MOTION in browser.find_element(By.TAG_NAME, "main").text
    assert_inert(browser)
    visit(browser, base + built.ballot("bo", match))
    assert browser.find_element(By.TAG_NAME, "h1").text == HOSTILE_MOTION
    texts = [t.text for t in browser.find_elements(By.CSS_SELECTOR, "article.speech .text")]
    assert len(texts) == 6 and all(HOSTILE_SPEECH in t for t in texts)
    assert_inert(browser)
    rationale = f"PRO won {SCRIPT} {IMG} \"><svg onload=alert(3)>"
    for name in ("overall", "argument", "source", "language"):
        browser.find_element(By.XPATH, f"//fieldset[@id='q-{name}']//label[normalize-space()='PRO']").click()
    browser.find_element(By.ID, "rationale").send_keys(rationale)
    ready_after_click(browser, browser.find_element(By.CSS_SELECTOR, "form.ballot button[type=submit]"))
    assert_inert(browser)
    assert ballot_of(built, match, "bo").rationale == rationale
    visit(browser, base + built.ballot("bo", match))
    assert browser.find_element(By.ID, "rationale").get_attribute("value") == rationale
    assert_inert(browser)
    screenshot(browser, "serve-hostile.png")


def test_a_chinese_debate_is_marked_as_chinese_and_fits_a_phone(browser, server):
    from selenium.webdriver.common.by import By

    built, base = server
    visit(browser, base + built.ballot("cy", built.zh), 390, 844)
    header = browser.find_element(By.CSS_SELECTOR, "header.motion")
    assert header.get_attribute("lang") == "zh" and header.find_element(By.TAG_NAME, "h1").text == ZH_MOTION
    assert [d.text for d in header.find_elements(By.CSS_SELECTOR, ".sides dd")] == [ZH_PRO, ZH_CON]
    speeches = browser.find_elements(By.CSS_SELECTOR, "article.speech")
    assert [s.get_attribute("lang") for s in speeches] == ["zh"] * 6
    texts = [s.find_element(By.CSS_SELECTOR, ".text").text for s in speeches]
    assert all(len(re.findall("[\u4e00-\u9fff]", text)) > 50 for text in texts)  # Chinese speeches, shown whole
    assert browser.find_element(By.TAG_NAME, "html").get_attribute("lang") == "en"
    width, viewport = browser.execute_script("return [document.documentElement.scrollWidth, window.innerWidth]")
    assert width <= viewport + 1, f"the ballot page overflows a phone screen: {width} > {viewport}"
    assert_inert(browser)
    screenshot(browser, "serve-zh-phone.png")
    visit(browser, f"{base}/b/{built.tokens['cy']}", 390, 844)
    width, viewport = browser.execute_script("return [document.documentElement.scrollWidth, window.innerWidth]")
    assert width <= viewport + 1
    assert browser.find_element(By.CSS_SELECTOR, 'a span[lang="zh"]').text == ZH_MOTION
