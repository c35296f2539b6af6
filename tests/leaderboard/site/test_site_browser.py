"""The published site in a real headless Chromium, loaded from file://: no console errors, sorting by mouse
and keyboard, tabs, a match page of six speeches, phone width, print, and hostile text that stays text.

The browser is Debian's chromium, driven by Selenium (tests/support/browser.py: never a downloaded one; installed with
apt-get when missing, never skipped). Screenshots go to test-artifacts/ at the repository root.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from arena.app import commands as app

from arena.app.commands import open_workspace
from tests.support.browser import console_errors, dialogs, load, screenshot, wait_for
from tests.support.helpers import entry, judge, new_workspace
from tests.support.sites import long_names_data, people_workspace, shared_demo

pytestmark = pytest.mark.slow


# --- the demo site ------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def site(builds) -> Path:
    return shared_demo(builds) / "site"  # `arena demo`, once per test process; only read here


def entry_order(driver, view: str = "overall") -> list[str]:
    return driver.execute_script(
        "return Array.from(document.querySelectorAll('#panel-' + arguments[0] + ' .raw-view tbody tr'))"
        ".map(function (r) { return r.cells[1].getAttribute('data-value'); });", view)


def header_button(driver, label: str, view: str = "overall"):
    from selenium.webdriver.common.by import By

    for button in driver.find_elements(By.CSS_SELECTOR, f"#panel-{view} .raw-view thead th button"):
        if button.text.strip().rstrip("▲▼ ").strip() == label:
            return button
    raise AssertionError(f"no header button {label!r} in the {view} table")


def ratings(driver) -> list[float]:
    return driver.execute_script(
        "return Array.from(document.querySelectorAll('#panel-overall .raw-view tbody tr'))"
        ".map(function (r) { return parseFloat(r.cells[4].getAttribute('data-value')); });")


def test_index_loads_from_file_without_console_errors(browser, site):
    load(browser, site / "index.html")
    assert console_errors(browser) == []
    assert browser.title == "Debate Arena leaderboard"
    assert "Simulated results" in browser.find_element("css selector", ".banner").text
    assert len(entry_order(browser)) == 6
    # The charts are drawn inline.
    assert browser.execute_script("return document.querySelectorAll('#panel-overall svg.chart').length") == 2
    # Nothing was fetched but the page itself.
    fetched = browser.execute_script("return performance.getEntriesByType('resource').map(e => e.name)")
    assert fetched == []
    screenshot(browser, "index.png")


def test_clicking_a_header_sorts_the_table(browser, site):
    load(browser, site / "index.html")
    before = entry_order(browser)
    assert ratings(browser) == sorted(ratings(browser), reverse=True)  # best first as published
    header_button(browser, "Rating").click()
    after = entry_order(browser)
    assert after != before and after == before[::-1]
    assert ratings(browser) == sorted(ratings(browser))
    assert header_button(browser, "Rating").find_element("xpath", "..").get_attribute("aria-sort") == "ascending"
    header_button(browser, "Rating").click()
    assert entry_order(browser) == before
    header_button(browser, "Entry").click()
    assert entry_order(browser) == sorted(before)
    assert console_errors(browser) == []


def test_sorting_works_from_the_keyboard(browser, site):
    from selenium.webdriver.common.keys import Keys

    load(browser, site / "index.html")
    before = entry_order(browser)
    button = header_button(browser, "Entry")
    button.send_keys(Keys.ENTER)  # focuses the header's button and presses Enter
    assert browser.switch_to.active_element == button
    assert entry_order(browser) == sorted(before)
    button.send_keys(Keys.SPACE)
    assert entry_order(browser) == sorted(before, reverse=True)
    assert button.find_element("xpath", "..").get_attribute("aria-sort") == "descending"
    assert console_errors(browser) == []


def test_tabs_switch_panels_by_click_and_arrow_keys(browser, site):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    load(browser, site / "index.html")
    tabs = {t.text: t for t in browser.find_elements(By.CSS_SELECTOR, "[role=tab]")}
    assert list(tabs) == ["Overall", "Fact", "Value", "Policy", "Argument", "Source", "Language"]
    overall, value = browser.find_element(By.ID, "panel-overall"), browser.find_element(By.ID, "panel-value")
    assert overall.is_displayed() and not value.is_displayed()
    tabs["Value"].click()
    assert value.is_displayed() and not overall.is_displayed()
    assert tabs["Value"].get_attribute("aria-selected") == "true"
    assert tabs["Overall"].get_attribute("aria-selected") == "false"
    assert len(entry_order(browser, "value")) >= 2  # the value table has rows of its own

    browser.switch_to.active_element.send_keys(Keys.ARROW_RIGHT)
    assert browser.switch_to.active_element == tabs["Policy"]
    assert browser.find_element(By.ID, "panel-policy").is_displayed() and not value.is_displayed()
    browser.switch_to.active_element.send_keys(Keys.ARROW_LEFT)
    browser.switch_to.active_element.send_keys(Keys.ARROW_LEFT)
    assert browser.switch_to.active_element == tabs["Fact"]
    browser.switch_to.active_element.send_keys(Keys.ARROW_LEFT)
    browser.switch_to.active_element.send_keys(Keys.ARROW_LEFT)  # wraps round to the last tab
    assert browser.switch_to.active_element == tabs["Language"]
    assert browser.find_element(By.ID, "panel-language").is_displayed()
    # Only the selected tab is in the tab order.
    assert [t.get_attribute("tabindex") for t in tabs.values()].count("0") == 1
    assert console_errors(browser) == []


def test_the_toggle_between_raw_and_controlled_ratings_works_without_script(browser, site, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    # The page without its script: the toggle is radio buttons and CSS alone.
    html = (site / "index.html").read_text(encoding="utf-8")
    bare = tmp_path / "index.html"
    bare.write_text(re.sub(r"<script>.*?</script>", "", html, flags=re.S), encoding="utf-8")
    load(browser, bare)
    assert browser.execute_script("return document.scripts.length") == 0

    def shown(view: str = "overall") -> list[bool]:
        return [browser.find_element(By.CSS_SELECTOR, f"#panel-{view} .{mode}-view table").is_displayed()
                for mode in ("raw", "controlled")]

    assert shown() == [True, False]
    browser.find_element(By.CSS_SELECTOR, "label[for=mode-controlled]").click()
    assert shown() == [False, True]
    assert "Controlled for style" in browser.find_element(By.CSS_SELECTOR, "#panel-overall .controlled-view").text
    browser.find_element(By.CSS_SELECTOR, "label[for=mode-raw]").click()
    assert shown() == [True, False]
    # From the keyboard: the radio buttons take focus, and an arrow key moves the choice.
    browser.find_element(By.ID, "mode-raw").send_keys(Keys.ARROW_RIGHT)
    assert browser.switch_to.active_element.get_attribute("id") == "mode-controlled" and shown() == [False, True]
    screenshot(browser, "index-controlled.png")
    # With the page's script, the choice holds across the tabs.
    load(browser, site / "index.html")
    browser.find_element(By.CSS_SELECTOR, "label[for=mode-controlled]").click()
    browser.find_element(By.ID, "tab-value").click()
    assert shown("value") == [False, True]
    assert console_errors(browser) == []


def test_a_match_page_opened_from_the_match_list_shows_six_speeches_and_verdicts(browser, site):
    from selenium.webdriver.common.by import By

    load(browser, site / "matches.html")
    assert console_errors(browser) == []
    link = browser.find_element(By.CSS_SELECTOR, "tbody a[href^='matches/']")
    match_id = link.text
    link.click()
    assert wait_for(lambda: browser.current_url.endswith(f"/matches/{match_id}.html")), browser.current_url
    wait_for(lambda: browser.execute_script("return document.readyState") == "complete")
    speeches = browser.find_elements(By.CSS_SELECTOR, "section.speech")
    assert len(speeches) == 6
    headings = [s.find_element(By.TAG_NAME, "h2").text for s in speeches]
    assert [h.split(" · ")[:2] for h in headings] == [
        ["Constructive", "PRO"], ["Constructive", "CON"], ["Rebuttal", "PRO"], ["Rebuttal", "CON"],
        ["Summary", "CON"], ["Summary", "PRO"]]
    assert all(s.find_element(By.CSS_SELECTOR, ".text").text.strip() for s in speeches)
    tables = browser.find_elements(By.CSS_SELECTOR, "main table")
    # One table per judge, by name: sim-debatrix runs three times, the three people of sim-experts cast a ballot
    # each, sim-panel runs once.
    assert [len(t.find_elements(By.CSS_SELECTOR, "tbody tr")) for t in tables] == [3, 3, 1]
    runs = browser.find_elements(By.CSS_SELECTOR, "main table tbody tr")
    assert all(r.find_elements(By.TAG_NAME, "td")[-1].text.strip() for r in runs)  # each with its rationale
    assert "Score: PRO" in browser.find_element(By.CSS_SELECTOR, "p.score").text
    assert console_errors(browser) == []
    screenshot(browser, "match.png")
    # Its links lead on: the motion page and both entries' pages load without errors too.
    browser.find_element(By.CSS_SELECTOR, "main a[href^='../motions/']").click()
    assert wait_for(lambda: "/motions/" in browser.current_url)
    assert "Side balance" in browser.find_element(By.TAG_NAME, "main").text
    assert console_errors(browser) == []


def test_pages_fit_a_phone_screen(browser, site):
    match_page = sorted((site / "matches").glob("*.html"))[0]
    entry_page = sorted((site / "entries").glob("*.html"))[0]
    for page in (site / "index.html", site / "matches.html", match_page, entry_page, site / "methodology.html"):
        load(browser, page, 390, 844)
        assert browser.execute_script("return window.innerWidth") <= 400
        width, viewport = browser.execute_script(
            "return [document.documentElement.scrollWidth, window.innerWidth]")
        assert width <= viewport + 1, f"{page.name} overflows a phone screen: {width} > {viewport}"
        assert console_errors(browser) == []
    load(browser, site / "index.html", 390, 844)
    # The wide leaderboard scrolls inside its wrapper instead of widening the page.
    wrap = browser.execute_script(
        "var w = document.querySelector('#panel-overall .wrap');"
        "return [w.scrollWidth, w.clientWidth, getComputedStyle(w).overflowX];")
    assert wrap[0] > wrap[1] and wrap[2] in ("auto", "scroll")
    screenshot(browser, "index-phone.png")


def test_print_shows_every_view_and_hides_the_controls(browser, site):
    load(browser, site / "index.html")
    try:
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "print"})
        shown = browser.execute_script(
            "return Array.from(document.querySelectorAll('[role=tabpanel]'))"
            ".map(function (p) { return getComputedStyle(p).display !== 'none'; });")
        assert shown == [True] * 7
        assert browser.execute_script("return getComputedStyle(document.querySelector('[role=tablist]')).display") \
            == "none"
        assert browser.execute_script("return getComputedStyle(document.querySelector('nav.site')).display") == "none"
        pdf = browser.print_page()  # Chromium renders the printed document without complaint
        assert len(pdf) > 1000
    finally:
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": ""})
    assert console_errors(browser) == []


# --- hostile text through the whole path ----------------------------------------------------------------------

SCRIPT = "<script>alert(1)</script>"
IMG = '<img src=x onerror="alert(2)">'
BREAKOUT = '"><svg onload=alert(3)>'
HOSTILE_URL = "javascript:alert(4)"
HOSTILE_TITLE = f"Source {SCRIPT}"
MOTION = f"This house would ban {SCRIPT} tags"
SLIDE = f"Read this first {IMG}"
RATIONALE = f"PRO won {SCRIPT} {IMG} {BREAKOUT}"


def hostile_responder(body: dict) -> str:
    if body.get("response_format"):  # the judge
        return json.dumps({"rationale": RATIONALE, "argument": "pro", "source": "tie", "language": "con",
                           "overall": "pro"})
    return f"We argue {SCRIPT} and {IMG} and {BREAKOUT}, as the record shows [1]."


@pytest.fixture
def hostile_site(tmp_path, fake_llm, fake_tavily, monkeypatch) -> Path:
    """A workspace whose motion file, model answers and search results all carry markup, played and published."""
    monkeypatch.setenv("TAVILY_API_KEY", "tvly-test")
    fake_llm.responder = hostile_responder
    fake_tavily.results_for = lambda query, body: [
        {"title": HOSTILE_TITLE, "url": HOSTILE_URL, "content": f"Content {SCRIPT}"},
        {"title": "A fine source", "url": "https://example.org/fine?a=1&b=2", "content": "Plain."}]
    ws_path = tmp_path / "ws"
    ws_path.mkdir()
    (ws_path / "hostile.yaml").write_text(
        "- id: hx-value-001\n"
        f"  text: {json.dumps(MOTION)}\n"
        "  category: value\n"
        f"  info_slide: {json.dumps(SLIDE)}\n", encoding="utf-8")
    base = fake_llm.api_base
    # Speeches that are nothing but hostile markup are no debate speeches: the checks are off so they are shown.
    new_workspace(ws_path, arena={"language": "en", "judge_runs": 2, "speech_checks": False},
                  llm={"backoff_s": 0.01},
                  search={"provider": "tavily", "api_base_url": fake_tavily.base_url, "max_results": 2},
                  motions=["file:hostile.yaml"],
                  entries=[entry("searcher", "search-baseline", "openai/searcher", api_base=base),
                           entry("plain", model="openai/plain", api_base=base)],
                  judges=[judge("judge", model="openai/judge", api_base=base, runs=2)])
    ws = open_workspace(ws_path)
    try:
        app.play_one(ws, "hx-value-001", "searcher", "plain", progress=lambda line: None)
        app.play_one(ws, "hx-value-001", "plain", "searcher", progress=lambda line: None)
        stored = ws.store.match("m00001")
        assert stored.status == "done" and len(stored.speeches) == 6
        refs = [r for s in stored.speeches for r in s.references]
        assert HOSTILE_URL in [r.url for r in refs]  # the hostile reference really reached the transcript
        index = app.publish(ws)
    finally:
        ws.close()
    return index.parent


def test_hostile_text_renders_as_text_in_the_browser(browser, hostile_site):
    from selenium.webdriver.common.by import By

    from leaderboard.site.render import page_name

    pages = [hostile_site / "index.html", hostile_site / "matches.html", hostile_site / "methodology.html",
             hostile_site / page_name("matches", "m00001"), hostile_site / page_name("matches", "m00002"),
             hostile_site / page_name("entries", "searcher"), hostile_site / page_name("motions", "hx-value-001")]
    for page in pages:
        load(browser, page)
        where = page.relative_to(hostile_site).as_posix()
        assert dialogs(browser) == [], f"{where}: a dialog was opened by injected script"
        assert console_errors(browser) == [], where
        assert browser.execute_script("return document.querySelectorAll('main img, main svg:not(.chart)').length") == 0
        assert browser.execute_script(
            "return Array.from(document.querySelectorAll('[onerror], [onload]')).length") == 0, where
        assert browser.execute_script(
            "return Array.from(document.querySelectorAll('a')).filter(function (a) {"
            " return /^\\s*javascript:/i.test(a.getAttribute('href') || ''); }).length") == 0, where
        # Only the site's own script runs on the page.
        assert browser.execute_script("return document.scripts.length") == 1, where

    load(browser, hostile_site / page_name("matches", "m00001"))
    main = browser.find_element(By.TAG_NAME, "main")
    assert browser.find_element(By.TAG_NAME, "h1").text == MOTION
    assert f"Info slide: {SLIDE}" in main.text
    speeches = browser.find_elements(By.CSS_SELECTOR, "section.speech")
    assert len(speeches) == 6
    for speech in speeches:
        assert SCRIPT in speech.text and IMG in speech.text and BREAKOUT in speech.text
    # The searcher's reference: its markup title is text, its javascript: URL an inert link.
    titles = {a.text: a.get_attribute("href") for a in browser.find_elements(By.CSS_SELECTOR, "section.speech ol a")}
    assert HOSTILE_TITLE in titles
    assert titles[HOSTILE_TITLE].endswith("#")
    rationales = [row.find_elements(By.TAG_NAME, "td")[-1].text
                  for row in browser.find_elements(By.CSS_SELECTOR, "main table tbody tr")]
    # Run 1 read the sides exchanged (swap_sides): its "PRO won" names the real side, CON.
    assert rationales == [RATIONALE, RATIONALE.replace("PRO won", "CON won")]
    screenshot(browser, "hostile-match.png")
    # The motion text stays text on the list pages too.
    load(browser, hostile_site / "matches.html")
    assert MOTION in browser.find_element(By.TAG_NAME, "main").text
    assert dialogs(browser) == [] and console_errors(browser) == []


# --- the judge switcher and the consistency page ---------------------------------------------------------------


@pytest.fixture(scope="module")
def judges_site(tmp_path_factory) -> Path:
    """Two LLM judges and the people of a human judge, with ballots (tests.support.sites), published."""
    return people_workspace(tmp_path_factory.mktemp("judges") / "ws") / "site"


def test_the_judge_switcher_and_the_consistency_page_load_without_console_errors(browser, judges_site):
    from selenium.webdriver.common.by import By

    load(browser, judges_site / "index.html")
    nav = browser.find_element(By.CSS_SELECTOR, "nav.judges")
    assert [a.text for a in nav.find_elements(By.TAG_NAME, "a")] == ["j1", "experts", "j2", "How far the judges agree",
                                                                   "What the judges lean to"]
    nav.find_element(By.LINK_TEXT, "experts").click()
    assert wait_for(lambda: browser.current_url.endswith("/judges/experts.html")), browser.current_url
    wait_for(lambda: browser.execute_script("return document.readyState") == "complete")
    assert browser.find_element(By.TAG_NAME, "h1").text == "Ratings from judge experts"
    assert "Human-Elo (3 people)" in browser.find_element(By.TAG_NAME, "main").text
    assert len(entry_order(browser)) == 3
    browser.find_element(By.ID, "tab-argument").click()  # the tabs work on a judge's page too
    assert browser.find_element(By.ID, "panel-argument").is_displayed()
    assert not browser.find_element(By.ID, "panel-overall").is_displayed()
    assert console_errors(browser) == []

    browser.find_element(By.CSS_SELECTOR, "nav.site a[href$='consistency.html']").click()
    assert wait_for(lambda: browser.current_url.endswith("/consistency.html")), browser.current_url
    wait_for(lambda: browser.execute_script("return document.readyState") == "complete")
    assert browser.find_element(By.TAG_NAME, "h1").text == "Consistency of judges"
    tables = browser.find_elements(By.CSS_SELECTOR, "main table.sortable")
    assert len(tables) == 4  # judges; the people of experts, and against the judges; latecomers' one person
    first = tables[0]
    first.find_element(By.XPATH, ".//th[button[normalize-space()='Consistency']]/button").click()
    shown = [float(v) for v in browser.execute_script(
        "return Array.from(arguments[0].tBodies[0].rows).map(function (r) { return r.cells[3].getAttribute("
        "'data-value'); }).filter(function (v) { return v !== ''; });", first)]
    assert shown == sorted(shown) and len(shown) == 3  # blank (no match in common) sorts last
    assert console_errors(browser) == [] and dialogs(browser) == []
    screenshot(browser, "consistency.png")


# --- a Chinese tournament ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def chinese_site(builds) -> Path:
    return shared_demo(builds, "zh") / "site"  # `arena demo --language zh`, once per test process; only read here


def test_a_chinese_match_page_shows_its_chinese_text_marked_with_its_language(browser, chinese_site):
    page = chinese_site / "matches" / "m00001.html"
    load(browser, page)
    assert console_errors(browser) == []
    motion = browser.find_element("css selector", "h1")
    assert motion.get_attribute("lang") == "zh" and re.search(r"[\u4e00-\u9fff]{4}", motion.text)
    speeches = browser.find_elements("css selector", "section.speech .text")
    assert len(speeches) == 6 and all(s.get_attribute("lang") == "zh" for s in speeches)
    assert all(len(re.findall(r"[\u4e00-\u9fff]", s.text)) > 50 for s in speeches)  # the text is there, rendered
    font = browser.execute_script("return getComputedStyle(document.body).fontFamily")
    assert "Noto Sans CJK SC" in font and "Microsoft YaHei" in font  # a CJK-capable stack, whatever is installed
    assert browser.find_element("css selector", "html").get_attribute("lang") == "zh"  # the labels are in zh too
    assert browser.find_element("css selector", "h2").text.startswith("立论")
    rationale = browser.find_element("css selector", "td.rationale")
    assert rationale.value_of_css_property("white-space") == "pre-line"  # its paragraphs kept
    screenshot(browser, "site-match-zh.png")


# The cells of the leaderboard a reader on a phone came for: Rating, 95% CI and W–T–L (columns 5, 6 and 8).
NARROW_CELLS = """
var right = document.documentElement.clientWidth, out = [];
document.querySelectorAll('#panel-overall .raw-view table tr').forEach(function (row) {
  [4, 5, 7].forEach(function (i) {
    var box = row.cells[i].getBoundingClientRect();
    out.push([row.cells[i].textContent.trim(), box.left, box.right, right, box.width]);
  });
});
return out;
"""


@pytest.mark.parametrize("which", ["site", "chinese_site", "long_site"])
def test_the_leaderboard_keeps_rating_ci_and_record_on_screen_at_420_px(browser, which, request):
    site = request.getfixturevalue(which)
    load(browser, site / "index.html", 420, 900)
    assert browser.execute_script("return window.innerWidth") == 420
    cells = browser.execute_script(NARROW_CELLS)
    assert len(cells) == 3 * 7  # the header and six entries
    off = [c for c in cells if not (c[1] >= 0 and c[2] <= c[3] + 0.5 and c[4] > 0)]
    assert not off, f"cells outside the {cells[0][3]} px viewport: {off}"
    # Debater and model, whose columns make way, are still shown under each entry's name.
    under = browser.execute_script("return Array.from(document.querySelectorAll('#panel-overall small.narrow'))"
                                   ".filter(function (s) { return s.offsetHeight > 0; }).length")
    assert under == 6
    assert console_errors(browser) == []
    screenshot(browser, f"index-420-{which}.png")


# --- the board at desktop width, the matches list on a phone, en and zh ----------------------------------------

@pytest.fixture(scope="module")
def long_site(tmp_path_factory) -> Path:
    from leaderboard.site.render import publish

    return publish(tmp_path_factory.mktemp("long") / "site", long_names_data("en")).parent


@pytest.fixture(scope="module")
def long_site_zh(tmp_path_factory) -> Path:
    from leaderboard.site.render import publish

    return publish(tmp_path_factory.mktemp("long-zh") / "site", long_names_data("zh")).parent


# Per row of the overall board: the lines the text of Rating, 95% CI and W–T–L takes (its height over its line
# height), the CI as shown; then whether the board's wrapper scrolls sideways, and the legend's terms.
BOARD_FIGURES = """
var out = [];
document.querySelectorAll('#panel-overall .raw-view tbody tr').forEach(function (row) {
  out.push([4, 5, 7].map(function (i) {
    var cell = row.cells[i], range = document.createRange();
    range.selectNodeContents(cell);
    return [cell.textContent.trim(), range.getBoundingClientRect().height / parseFloat(getComputedStyle(cell).lineHeight)];
  }));
});
var wrap = document.querySelector('#panel-overall .raw-view .wrap');
var legend = document.getElementById('legend');
return {rows: out, scrolls: wrap.scrollWidth > wrap.clientWidth + 1,
        page: [document.documentElement.scrollWidth, window.innerWidth],
        legend: legend && legend.offsetHeight > 0 ? Array.from(legend.querySelectorAll('dt')).map(function (d) {
          return d.textContent; }) : null};
"""


@pytest.mark.parametrize("which", ["site", "chinese_site", "long_site", "long_site_zh"])
def test_the_board_keeps_each_figure_on_one_line_at_1280_px_with_its_legend(browser, which, request):
    site = request.getfixturevalue(which)
    load(browser, site / "index.html", 1280, 900)
    shown = browser.execute_script(BOARD_FIGURES)
    assert len(shown["rows"]) == 6
    for row in shown["rows"]:
        assert all(lines < 1.5 for _, lines in row), f"a figure wraps at 1280 px: {row}"
        low, high = re.fullmatch(r"(\d+)–(\d+)", row[1][0]).groups()  # the interval as low–high
        assert int(low) <= float(row[0][0]) <= int(high)
        assert re.fullmatch(r"\d+–\d+–\d+", row[2][0])
    assert not shown["scrolls"], "the board scrolls sideways at 1280 px"
    assert shown["page"][0] <= shown["page"][1], f"the page overflows: {shown['page']}"
    zh = "zh" in which or "chinese" in which
    assert shown["legend"] == (["评分", "95% 置信区间", "排名（上界）", "胜–平–负", "完赛率"] if zh else
                               ["Rating", "95% CI", "Rank (UB)", "W–T–L", "Reliability"])
    assert console_errors(browser) == []
    screenshot(browser, f"index-1280-{which}.png")


# Per row of the matches list: its match id, Pro, Con, score and winner as shown, the status, and whether the score
# and winner cells are on screen (displayed, inside the viewport's width).
LIST_ROWS = """
var right = document.documentElement.clientWidth;
function seen(cell) {
  var box = cell.getBoundingClientRect();
  return getComputedStyle(cell).display !== 'none' && box.width > 0 && box.left >= 0 && box.right <= right + 0.5;
}
return Array.from(document.querySelectorAll('main table.list tbody tr')).map(function (r) {
  var c = r.cells;
  return [c[0].textContent.trim(), c[1].textContent.trim(), c[2].textContent.trim(), c[3].textContent.trim(),
          c[4].textContent.trim(), c[5].textContent.trim(), seen(c[3]) && seen(c[4])];
});
"""


@pytest.mark.parametrize("which", ["site", "chinese_site", "long_site", "long_site_zh"])
def test_the_matches_list_at_420_px_shows_score_and_winner_and_filters_by_entry(browser, which, request):
    from selenium.webdriver.common.by import By

    site = request.getfixturevalue(which)
    zh = "zh" in which or "chinese" in which
    done, tie = ("已完成", "平局") if zh else ("done", "tie")
    load(browser, site / "matches.html", 420, 900)
    rows = browser.execute_script(LIST_ROWS)
    assert len(rows) in (24, 60)
    assert all(row[6] for row in rows), f"score or winner off screen at 420 px: {[r for r in rows if not r[6]]}"
    for match, pro, con, score, winner, status, _ in rows:
        if score == "—":
            assert winner == "—" and not status.startswith(done), match
            continue
        a, b = (float(x) for x in score.split("–"))
        assert winner == (pro if a > b else con if b > a else tie), match
    assert browser.execute_script("return document.documentElement.scrollWidth") <= 420
    screenshot(browser, f"matches-420-{which}.png")
    # The header counts the matches debated (done), not those scheduled.
    load(browser, site / "index.html", 420, 900)
    debated = int(re.search(r"\d+", browser.find_element(By.ID, "debated").text).group())
    assert debated == sum(row[5].startswith(done) for row in rows)
    # The filter: an entry's link leads to a list of its matches, and only its.
    load(browser, site / "matches.html", 420, 900)
    browser.find_element(By.CSS_SELECTOR, "nav.filter summary").click()
    name = sorted({row[1] for row in rows})[1]
    browser.find_element(By.LINK_TEXT, name).click()
    assert wait_for(lambda: browser.current_url.endswith("#matches")), browser.current_url
    wait_for(lambda: browser.execute_script("return document.readyState") == "complete")
    theirs = browser.execute_script(LIST_ROWS)
    assert sorted(r[0] for r in theirs) == sorted(r[0] for r in rows if name in (r[1], r[2])) != []
    assert all(r[6] for r in theirs), "a result off screen at 420 px on an entry's page"
    assert console_errors(browser) == []
    screenshot(browser, f"entry-matches-420-{which}.png")


# --- a phone 420 px wide: names whole, chart labels readable, the biases within the screen (issue 50) -----------

# Each word of the board's names, debaters and models (split where a line may wrap: spaces, after a hyphen or a
# slash): its text and the lines it is set on (a word broken mid-word is set on two).
WORD_LINES = """
var out = [];
document.querySelectorAll('#panel-overall .raw-view tbody td:nth-child(2)').forEach(function (cell) {
  var walk = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT), node;
  while ((node = walk.nextNode())) {
    if (node.parentElement.closest('.badge') || !node.parentElement.offsetHeight) { continue; }
    var re = /[^\\s\\-\\/·]+[\\-\\/]?/g, m;
    while ((m = re.exec(node.data))) {
      var range = document.createRange();
      range.setStart(node, m.index); range.setEnd(node, m.index + m[0].length);
      var tops = new Set(Array.from(range.getClientRects()).map(function (r) { return Math.round(r.top); }));
      out.push([m[0], tops.size]);
    }
  }
});
return out;
"""

# The rendered size of the ratings chart's labels: the font size times the SVG's scale on screen.
CHART_LABELS = """
var svg = document.querySelector('#panel-overall svg.chart');
var scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
return Array.from(svg.querySelectorAll('text')).map(function (t) {
  return [t.textContent, parseFloat(getComputedStyle(t).fontSize) * scale]; });
"""


@pytest.mark.parametrize("which", ["site", "long_site"])
def test_at_420_px_names_wrap_between_words_and_the_chart_labels_read_at_11_px(browser, which, request):
    site = request.getfixturevalue(which)
    load(browser, site / "index.html", 420, 900)
    words = browser.execute_script(WORD_LINES)
    assert any(w.startswith("agent4debate") for w, _ in words), words
    broken = [w for w, lines in words if lines > 1]
    assert not broken, f"words broken mid-word at 420 px: {broken}"
    labels = browser.execute_script(CHART_LABELS)
    assert len(labels) >= 6
    small = [(text, round(px, 1)) for text, px in labels if px < 10.5]
    assert not small, f"chart labels under 11 px at 420 px: {small}"
    assert browser.execute_script("return document.documentElement.scrollWidth") <= 420
    assert console_errors(browser) == []
    screenshot(browser, f"index-420-words-{which}.png")


def test_at_420_px_the_biases_table_fits_the_screen(browser, site):
    load(browser, site / "bias.html", 420, 900)
    table, box, page = browser.execute_script(
        "var t = document.querySelector('main table');"
        "return [t.getBoundingClientRect().width, t.parentElement.clientWidth, document.documentElement.scrollWidth];")
    assert table <= box + 1, f"the biases table is {table:.0f} px wide in a {box} px box"
    assert page <= 420
    # Each figure still says what it is, and sorting still works from its header.
    named = browser.execute_script(
        "return Array.from(document.querySelector('main table tbody tr').cells).map(function (c) {"
        "  return getComputedStyle(c, '::before').content; });")
    assert {'"Votes: "', '"Pro share: "', '"Length (Elo per unit of x): "'} <= set(named), named
    assert console_errors(browser) == []
    screenshot(browser, "bias-420.png")
