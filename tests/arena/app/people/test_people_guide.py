"""docs/guides/people-debate.md's command list, run as written in a fresh folder: a person (ann) writes her speeches
on the pages `arena serve` serves while `arena run --wait` continues the matches, and the list ends with a rated
board, and with each debate's result on ann's page."""
from __future__ import annotations

import os
import re
import shlex
import subprocess
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from starlette.testclient import TestClient

from arena.app.people.web import create_app
from tests.support.helpers import invoke, speech_text
from tests.support.serving import ARENA, csrf

pytestmark = pytest.mark.filterwarnings("ignore:Using `httpx` with `starlette.testclient`")

GUIDE = Path(__file__).resolve().parents[4] / "docs" / "guides" / "people-debate.md"


def guide_commands() -> list[str]:
    """The commands of the guide's first code block, comments dropped, `a && b` as two."""
    block = re.search(r"```\n(arena .+?)\n```", GUIDE.read_text(encoding="utf-8"), re.S)
    assert block is not None
    lines = (line.split("#", 1)[0].strip() for line in block.group(1).splitlines())
    return [part.strip() for line in lines if line for part in line.split("&&")]


def write_open_turns(client: TestClient, path: str) -> int:
    """ann writes and submits each speech her page lists to write, each within its length; how many."""
    turns = re.findall(r'<ol class="queue" id="open">(.*?)</ol>', client.get(path).text, re.S)
    links = re.findall(r'href="[./]*(d/[^"]+)"', turns[0]) if turns else []
    for link in links:
        page = client.get(f"/{link}").text
        least, most = map(int, re.search(r"under (\d+) or over (\d+) words", page).groups())
        speech = speech_text(f"ANN-{link[-8:]}", size=(least + most) // 2)
        answer = client.post(f"/{link}", data={"csrf": csrf(page), "action": "submit", "speech": speech},
                             follow_redirects=False)
        assert answer.status_code == 303, answer.text
    return len(links)


@pytest.mark.slow
def test_the_guides_commands_run_as_written_and_end_in_a_rated_board(tmp_path, monkeypatch):
    """Costs about 8 s: two offline matches of six turns, ann's three speeches in each, in a real `arena run
    --wait` process beside the page she writes on."""
    monkeypatch.chdir(tmp_path)
    commands = guide_commands()
    assert any(c.startswith("arena judge add") for c in commands)  # else the board below is never rated
    client = link = None
    outputs: dict[str, str] = {}
    for command in commands:
        argv = shlex.split(command)
        if argv[0] == "cd":
            monkeypatch.chdir(argv[1])
            continue
        assert argv[0] == "arena", command
        args = argv[1:]
        if args == ["serve"]:  # the app `arena serve` runs, on a test client rather than a port of this machine
            client = TestClient(create_app(Path.cwd()))
            continue
        if args == ["run", "--wait"]:  # polled every 0.2 s rather than 10, and ann writes while it waits
            assert client is not None and link is not None
            run = subprocess.Popen([*ARENA, "run", "--wait", "0.2"], cwd=Path.cwd(), env=os.environ.copy(),
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            written, start = 0, time.monotonic()
            while run.poll() is None and time.monotonic() - start < 120:
                written += write_open_turns(client, link)
                time.sleep(0.1)
            out = run.communicate(timeout=30)[0]
            assert run.returncode == 0 and written == 6, out  # three speeches in each of two matches
            outputs[command] = out
            continue
        result = invoke(*args)
        assert result.exit_code == 0, (command, result.output)
        outputs[command] = result.output
        if args == ["debaters", "issue"]:
            url = re.search(r"(http://\S+/d/\S+)", result.output).group(1)
            link = urlsplit(url).path
    assert "2 done, 0 failed, of 2" in outputs["arena run --wait"]
    board = outputs["arena rate"]
    assert "ratings from judge 'judge'" in board and re.search(r"\bann\b.*\b2\b", board), board
    # ann's page: each debate once under its own title, with the judge's decision
    page = client.get(link).text
    results = re.search(r'<ol class="queue" id="results">(.*?)</ol>', page, re.S).group(1)
    assert results.count("Debate 1:") == 1 and results.count("Debate 2:") == 1
    assert len(re.findall(r"Judge judge: (you won|you lost|a tie), PRO \d – CON \d\.", results)) == 2
