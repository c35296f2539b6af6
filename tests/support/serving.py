"""A played workspace for `arena serve` (three done matches: English, Chinese, and one with markup in every text;
one scheduled; a link per person) and a real `arena serve` process: shared by test_serve and test_serve_browser."""
from __future__ import annotations

import json
import re
import select
import signal
import socket
import subprocess
import urllib.request
import sys
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator, Mapping
from urllib.parse import urlsplit

from markupsafe import escape

from arena.app import commands as app
from arena.app.commands import open_workspace
from arena.domain.ballots import ballot_id, new_token, token_hash
from arena.domain.records import Ballot, Reference, Speech, Verdict
from arena.store import DB_NAME, Store
from tests.support.helpers import entry, judge, new_workspace, people

ENTRIES = ("alpha-entry", "beta-entry")
MODELS = ("offline/alpha-model", "offline/beta-model")
PEOPLE = ("ann", "bo", "cy")
DIMS = ("argument", "source", "language")
SCRIPT = "<script>alert(1)</script>"
IMG = '<img src=x onerror="alert(2)">'
HOSTILE_MOTION = f"This house would ban {SCRIPT} tags"
HOSTILE_SLIDE = f"Read this first {IMG}"
HOSTILE_SPEECH = f"We argue {SCRIPT} and {IMG} and \"><svg onload=alert(3)>, as the record shows [1]."
HOSTILE_TITLE = f"Source {SCRIPT}"
HOSTILE_URL = "javascript:alert(4)"
FINE_URL = "https://example.org/fine?a=1&b=2"
ZH_PRO, ZH_CON = "人性本善", "人性本恶"  # a two-sided Chinese motion: each side's own proposition
ZH_MOTION = f"{ZH_PRO} / {ZH_CON}"
LLM_RATIONALE = "LLM-VERDICT-RATIONALE: PRO carried it"
BO_RATIONALE = "BO-PRIVATE-RATIONALE: CON was clearer"
ORDER = [("constructive", "pro"), ("constructive", "con"), ("rebuttal", "pro"), ("rebuttal", "con"),
         ("summary", "con"), ("summary", "pro")]
ARENA = [sys.executable, "-m", "arena"]


@dataclass(frozen=True)
class Built:
    """A played workspace: its folder, each person's link token, and its matches by role."""

    path: Path
    tokens: dict[str, str]
    en: str  # done, English, played offline (an offline judge's verdict on it)
    zh: str  # done, Chinese
    hostile: str  # done, every text carrying markup, one LLM verdict
    scheduled: str  # not played

    @property
    def done(self) -> list[str]:
        return [self.en, self.zh, self.hostile]

    def ids(self, person: str, match_ids: Iterable[str]) -> list[str]:
        """The person's ballot ids of the matches (what their links name them by), from the workspace's secret."""
        store = Store(self.path / DB_NAME)
        try:
            key = store.ballot_secret()
        finally:
            store.close()
        return [ballot_id(key, "experts", person, m) for m in match_ids]

    def ballot(self, person: str, match_id: str) -> str:
        """The path of the person's ballot page on a match, as their queue links it: /b/TOKEN/BALLOT-ID."""
        return f"/b/{self.tokens[person]}/{self.ids(person, [match_id])[0]}"


def write_motions(path: Path) -> None:
    """path/motions.yaml: a motion with markup in its text and info slide, and a two-sided Chinese one."""
    (path / "motions.yaml").write_text(
        f"- id: hx-value-001\n  text: {json.dumps(HOSTILE_MOTION)}\n  category: value\n"
        f"  info_slide: {json.dumps(HOSTILE_SLIDE)}\n"
        f"- id: zh-two-001\n  text: {ZH_MOTION}\n  category: fact\n  language: zh\n"
        f"  pro_text: {ZH_PRO}\n  con_text: {ZH_CON}\n", encoding="utf-8")


def esc(text: str) -> str:
    """text as the pages' templates escape it."""
    return str(escape(text))


def csrf(page: str) -> str:
    """The CSRF token of a page's form."""
    return re.search(r'name="csrf" value="([0-9a-f]+)"', page).group(1)


def build_workspace(path: Path) -> Built:
    """A workspace with three done matches (English, Chinese, hostile), one scheduled, a link per person,
    and a ballot of bo's on the English match."""
    path.mkdir(parents=True)
    write_motions(path)
    new_workspace(path, motions=["builtin:en", "file:motions.yaml"],
                  entries=[entry(name, model=model, strength=strength)
                           for name, model, strength in zip(ENTRIES, MODELS, (0.5, -0.5))],
                  judges=[judge("bot", model="offline/judge", runs=1), people("experts", *PEOPLE)])
    ws = open_workspace(path)
    try:
        en = app.play_one(ws, "en-fact-001", *ENTRIES, progress=lambda line: None).id
        zh = app.play_one(ws, "zh-two-001", *ENTRIES, progress=lambda line: None).id
        hostile, scheduled = ws.store.add_tournament("single", 0, {}, [("hx-value-001", *ENTRIES),
                                                                     ("en-fact-002", *ENTRIES)])
        refs = (Reference(HOSTILE_TITLE, HOSTILE_URL, "text", 1), Reference("A fine source", FINE_URL, "", 2))
        ws.store.commit_match(hostile, [Speech(stage, side, f"{stage} {side}: {HOSTILE_SPEECH}", refs)
                                        for stage, side in ORDER],
                              [Verdict("bot", 0, "pro", {"argument": "pro"}, LLM_RATIONALE)], [], simulated=True)
        tokens = {person: new_token() for person in PEOPLE}
        ws.store.issue_links("experts", {person: token_hash(token) for person, token in tokens.items()})
        ws.store.cast_ballots("experts", PEOPLE, [Ballot(en, "bo", "con", {d: "con" for d in DIMS}, BO_RATIONALE)],
                              simulated=False)
    finally:
        ws.close()
    return Built(path, tokens, en, zh, hostile, scheduled)


@contextmanager
def served(path: Path, *args: str, env: Mapping[str, str] | None = None) -> Iterator[tuple[subprocess.Popen, str]]:
    """`arena serve` on a free port as a subprocess (in env, default this process's): (the process, its base URL)
    once it listens; stopped after. Shared by the tests, benchmarks/debate_page.py and docs/shots.py."""
    proc = subprocess.Popen([*ARENA, "serve", "-w", str(path), "--port", "0", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=None if env is None else dict(env))
    try:
        ready, _, _ = select.select([proc.stdout], [], [], 30)
        line = proc.stdout.readline() if ready else ""
        found = re.search(r"serving (?:ballots|debaters) at (http://[\d.]+:\d+) ", line)
        assert found, f"no address from arena serve: {line!r} {proc.stderr.read() if proc.poll() is not None else ''}"
        yield proc, found.group(1)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        proc.stdout.close()
        proc.stderr.close()


# --- a slow client on a raw socket: a request whose body comes in two parts ---------------------------------------

FIRST = 12  # bytes of a slow request's body sent with its headers


def page_of(base: str, path: str) -> str:
    with urllib.request.urlopen(base + path, timeout=10) as answer:
        return answer.read().decode("utf-8")


def slow_post(base: str, path: str, body: bytes) -> socket.socket:
    """A POST of body to path over a fresh socket: its headers and the first FIRST bytes of the body sent, the rest
    held back (finish sends it)."""
    address = urlsplit(base)
    conn = socket.create_connection((address.hostname, address.port), timeout=30)
    head = (f"POST {path} HTTP/1.1\r\nHost: {address.netloc}\r\nContent-Type: application/x-www-form-urlencoded\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n")
    conn.sendall(head.encode("ascii") + body[:FIRST])
    return conn


def answer(conn: socket.socket) -> tuple[int, str]:
    """The status and the whole answer the server sends on conn, read until it closes."""
    got = b""
    while chunk := conn.recv(65536):
        got += chunk
    conn.close()
    return int(got.split(b" ", 2)[1]), got.decode("utf-8", "replace")


def finish(conn: socket.socket, body: bytes) -> tuple[int, str]:
    """The rest of a slow POST's body sent: the answer."""
    conn.sendall(body[FIRST:])
    return answer(conn)
