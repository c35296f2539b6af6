"""A real headless Chromium for the browser tests (the fixtures `chromium_installed` and `browser` in conftest.py
use it): Debian's chromium and chromium-driver (/usr/bin/chromium, /usr/bin/chromedriver), driven by Selenium;
Selenium Manager is never consulted and nothing is downloaded. When the packages are missing the session installs
them with apt-get (as CI does in .ci/run); if that fails, the browser tests fail — they are never skipped.
Screenshots go to test-artifacts/ at the repository root."""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
FLAGS = ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage")
# Installed before any page script runs: a call to alert/confirm/prompt is recorded instead of shown.
WATCH_DIALOGS = ("window.__dialogs = [];"
                 "['alert', 'confirm', 'prompt'].forEach(function (name) {"
                 "  window[name] = function (message) { window.__dialogs.push(name + ':' + message); }; });")


def install_chromium() -> None:
    """Debian's chromium and its driver, installed with apt-get when missing (we run as root, as CI does)."""
    if os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER):
        return
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        pytest.fail(f"{CHROMIUM} or {CHROMEDRIVER} is missing and cannot be installed here: "
                    "install Debian's chromium and chromium-driver packages")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for command in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", "chromium", "chromium-driver"]):
        done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=900)
        if done.returncode != 0:
            pytest.fail(f"{' '.join(command)} failed ({done.returncode}):\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    if not (os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)):
        pytest.fail(f"apt-get installed chromium, but {CHROMIUM} or {CHROMEDRIVER} is still missing")


@contextmanager
def chromium() -> Iterator:
    """A headless Chromium driven by Selenium from Debian's chromedriver, recording dialogs instead of showing
    them (see WATCH_DIALOGS); Selenium Manager is never consulted."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.selenium_manager import SeleniumManager

    def no_download(*args, **kwargs):
        raise AssertionError("Selenium Manager was consulted: it may download a browser or a driver")

    profile = tempfile.mkdtemp(prefix="arena-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (*FLAGS, f"--user-data-dir={profile}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SE_OFFLINE", "true")
        patch.setattr(SeleniumManager, "binary_paths", no_download)
        driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    try:
        driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": WATCH_DIALOGS})
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def load(driver, page: Path, width: int = 1280, height: int = 900) -> None:
    """Open page from file:// at the given window size, with the console log emptied first."""
    driver.set_window_size(width, height)
    driver.get_log("browser")
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get(page.resolve().as_uri())
    # get() returns once the load event fires, as a rule; on a loaded machine it was seen to return a moment before
    # readyState turned "complete" (the page still loaded): wait for it a while rather than read it once.
    WebDriverWait(driver, 30).until(lambda d: d.execute_script("return document.readyState") == "complete")


def console_errors(driver) -> list[dict]:
    return [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]


def dialogs(driver) -> list[str]:
    return driver.execute_script("return window.__dialogs || []")


def wait_for(condition, timeout: float = 10.0):
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.05)


def screenshot(driver, name: str) -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / name
    assert driver.save_screenshot(str(path)), f"could not save {path}"
    assert path.stat().st_size > 1000
    return path
