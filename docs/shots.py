"""Make the screenshots of docs/guides/people-debate.md: what a person who debates on the web sees.

It builds two small offline workspaces in a temporary folder with the real `arena` command line: one in English
(a web human entry `ann` against the offline entry `bot`, a round-robin of two matches) and one in Chinese
(`[arena] language = "zh"`). It runs each until its matches park at ann's turns, issues her link, starts
`arena serve` on a free port, and drives Debian's chromium (/usr/bin/chromium and /usr/bin/chromedriver,
headless, through Selenium; Selenium Manager is never consulted; a Chinese font such as Debian's fonts-noto-cjk)
to write, submit and photograph:

  turns.png               her list of turns (1280 px wide)
  write-constructive.png  the page of a constructive speech, a draft just saved (blind: nothing shown)
  write-narrow.png        the same page 420 px wide, opened again
  submitted.png           a submitted speech: read-only
  write-rebuttal.png      after `arena run` continues the match: her rebuttal, with the transcript she may see
  results.png             her list once that debate is done and judged: its result under Results
  write-zh.png            a writing page of a Chinese workspace

    python docs/shots.py    rewrite docs/guides/img/*.png (half a minute)
"""
from __future__ import annotations

import base64
import os
import re
import shutil
import subprocess
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(ROOT))  # tests.support.serving's `arena serve`, which the tests start too

from tests.support.serving import served  # noqa: E402

IMG = DOCS / "guides" / "img"
CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
FLAGS = ("--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage", "--hide-scrollbars")
MAX_HEIGHT = 1500  # px: a taller page is cut there

MOTION_EN = """\
- id: phones-001
  text: This house would ban smartphones in secondary schools
  category: policy
  info_slide: >-
    Several countries now restrict phones during the school day; others leave it to each school.
"""
MOTION_ZH = """\
- id: zh-phones-001
  text: 中学应当禁止学生在校使用智能手机
  category: policy
  language: zh
"""
OPENING = (
    "Schools exist to teach, and a smartphone in every pocket works against that purpose all day long. "
    "First, attention: every notification pulls a student out of the lesson, and research on classroom "
    "learning keeps finding that even a silent phone on the desk lowers how much students remember. "
    "Second, wellbeing: the break between lessons used to be time to talk, play and rest; now it is time "
    "to scroll, compare and be reached by the same group chats that follow teenagers home at night. "
    "Third, fairness: a ban is the one rule that protects the students whose families cannot or will not "
    "set limits, and it takes the pressure off those who feel they must own the newest model. "
    "A ban does not mean no technology in class. Schools provide computers for lessons that need them, "
    "and parents can still reach their children through the school office in an emergency, as they did "
    "for decades. We ask for a simple rule, easy to enforce, that gives young people six hours a day of "
    "undivided attention to learning and to each other. That is why we propose this ban.")
DRAFT = OPENING[:OPENING.index(" Third,")]
REBUTTAL = (
    "Our opponents say phones help students learn and keep them safe. Look at what they actually offered. "
    "The learning apps they praise run just as well on the school's own computers, in lessons a teacher "
    "plans, without a feed of messages beside them. The safety they promise comes from the school office "
    "and from adults on site, which is how emergencies were handled long before smartphones. And their "
    "claim that students must learn self-control ignores that these apps are designed by large teams to "
    "defeat exactly that self-control. Teaching restraint does not require leaving the temptation on every "
    "desk. Our case stands: attention, wellbeing and fairness all point to a clear, simple ban.")
SUMMARY = (
    "This debate came down to one question: does a phone in the pocket serve the purpose of school? We showed "
    "that it costs attention in every lesson, crowds out rest and friendship in every break, and puts the "
    "heaviest burden on the students with the least support at home. Our opponents answered with uses that "
    "school computers already serve and with safety that the school office already provides. Nothing they "
    "said explains why a student needs a smartphone during the six hours set aside for learning. A ban is "
    "simple to enforce and fair to everyone. We ask you to support the motion.")
OPENING_ZH = "我方认为，中学应当禁止学生在校使用智能手机。第一，课堂需要专注，手机的提示音和消息不断打断学生的思路。"


ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
       "LITELLM_LOCAL_MODEL_COST_MAP": "True"}  # this checkout's arena, and litellm's bundled price list


def arena(workspace: Path, *args: str) -> str:
    """Run `arena ARGS -w WORKSPACE` (`arena init DIR` as it is); its standard output. An error stops the script."""
    where = () if args[0] == "init" else ("-w", str(workspace))
    done = subprocess.run([sys.executable, "-m", "arena", *args, *where], capture_output=True, text=True, env=ENV,
                          timeout=300)
    if done.returncode != 0:
        raise SystemExit(f"arena {' '.join(args)} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    return done.stdout


def workspace(path: Path, language: str, motions: str) -> str:
    """A workspace of ann (a web human entry) against bot (offline), two matches parked at her turns; her link."""
    arena(path, "init", str(path))
    (path / "motions.yaml").write_text(motions, encoding="utf-8")
    toml = (path / "arena.toml").read_text(encoding="utf-8")
    toml = toml.replace('language = "en"', f'language = "{language}"', 1)
    toml = toml.replace('sets = ["builtin:en"]', 'sets = ["file:motions.yaml"]', 1)
    (path / "arena.toml").write_text(toml, encoding="utf-8")
    arena(path, "entry", "add", "ann", "--debater", "human", "--model", "human/ann", "--param", "via=web")
    arena(path, "entry", "add", "bot", "--debater", "direct", "--model", "offline/bot")
    arena(path, "judge", "add", "judge", "--kind", "single", "--model", "offline/judge")
    arena(path, "schedule", "--format", "round-robin")
    arena(path, "run")
    issued = arena(path, "debaters", "issue", "--format", "json")
    found = re.search(r'"url": "[^"]*(/d/[\w-]+)"', issued)
    assert found, issued
    return found.group(1)


@contextmanager
def chromium() -> Iterator:
    """Debian's headless chromium through its chromedriver; Selenium Manager may not download anything."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.selenium_manager import SeleniumManager

    def no_download(*args, **kwargs):
        raise RuntimeError("Selenium Manager was consulted: install Debian's chromium and chromium-driver")

    if not (os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)):
        raise SystemExit(f"{CHROMIUM} or {CHROMEDRIVER} is missing: apt-get install chromium chromium-driver")
    fonts = subprocess.run(["fc-list", ":lang=zh", "family"], capture_output=True, text=True).stdout
    if not fonts.strip():
        raise SystemExit("no Chinese font: the zh page would show boxes; apt-get install fonts-noto-cjk")
    os.environ["SE_OFFLINE"] = "true"
    SeleniumManager.binary_paths = no_download  # type: ignore[method-assign]
    profile = tempfile.mkdtemp(prefix="arena-shots-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (*FLAGS, f"--user-data-dir={profile}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def shoot(driver, url: str, name: str, width: int = 1280, draft: str | None = None) -> None:
    """Open url at `width` CSS px (the textarea holding `draft`, as if typed) and save the page, cut at
    MAX_HEIGHT, as docs/guides/img/NAME."""
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": width, "height": 100, "deviceScaleFactor": 1, "mobile": width < 600})
    driver.get(url)
    if draft is not None:
        driver.execute_script("var s = document.getElementById('speech'); s.value = arguments[0];"
                              "s.dispatchEvent(new Event('input'));", draft)
    height = min(MAX_HEIGHT, driver.execute_script("return document.documentElement.scrollHeight"))
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600})
    shot = driver.execute_cdp_cmd("Page.captureScreenshot", {"format": "png"})
    (IMG / name).write_bytes(base64.b64decode(shot["data"]))
    print(f"{name}: {width}x{height}, {(IMG / name).stat().st_size // 1024} KB")


def turn_link(driver, url: str, stage: str, motion: int = 0) -> str:
    """The link of the person's open turn at `stage` in the match of the list's `motion`-th such turn."""
    from selenium.webdriver.common.by import By

    driver.get(url)
    items = [li for li in driver.find_elements(By.CSS_SELECTOR, "#open li") if stage in li.text.lower()]
    return items[motion].find_element(By.TAG_NAME, "a").get_attribute("href")


def press(driver, url: str, text: str, button: str, note: str) -> None:
    """Write text on the turn's page and press its button (save or submit), as a person would; wait for the
    page that answers to show the element `note`."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.wait import WebDriverWait

    driver.get(url)
    driver.execute_script("document.getElementById('speech').value = arguments[0];", text)
    driver.find_element(By.CSS_SELECTOR, f"button[value={button}]").click()
    WebDriverWait(driver, 20).until(expected_conditions.presence_of_element_located((By.ID, note)))


def main() -> None:
    IMG.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="arena-shots-") as tmp, chromium() as driver:
        en = Path(tmp) / "en"
        link = workspace(en, "en", MOTION_EN)
        with served(en, env=ENV) as (_, base):
            shoot(driver, base + link, "turns.png")
            first = turn_link(driver, base + link, "constructive")
            press(driver, first, DRAFT, "save", "saved-note")
            shoot(driver, driver.current_url, "write-constructive.png")  # the page after "Save draft"
            shoot(driver, first, "write-narrow.png", width=420)
            press(driver, first, OPENING, "submit", "submitted-note")
            shoot(driver, first, "submitted.png")
            arena(en, "run")  # the match goes on: bot's constructive, then ann's rebuttal opens
            rebuttal = turn_link(driver, base + link, "rebuttal")
            shoot(driver, rebuttal, "write-rebuttal.png")
            press(driver, rebuttal, REBUTTAL, "submit", "submitted-note")
            arena(en, "run")  # on to her summary
            press(driver, turn_link(driver, base + link, "summary"), SUMMARY, "submit", "submitted-note")
            arena(en, "run")  # the debate ends and the judge gives its verdict
            shoot(driver, base + link, "results.png")
        zh = Path(tmp) / "zh"
        link = workspace(zh, "zh", MOTION_ZH)
        with served(zh, env=ENV) as (_, base):
            shoot(driver, turn_link(driver, base + link, "立论"), "write-zh.png", draft=OPENING_ZH)


if __name__ == "__main__":
    main()
