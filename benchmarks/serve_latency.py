"""Serve latency: requests one after another on one kept-alive connection to the ballot app, as a person's browser
sends them, with `arena serve`'s uvicorn set-up beside the one it had before issue 24.

Both servers run the same app (arena.app.people.web.create_app on a small workspace: one done match played offline, one
person with a link) on a listening socket made by arena.app.people.web._listen, in this process:
    now:    arena.app.people.web.uvicorn_config, whose protocol sets TCP_NODELAY on each connection;
    before: uvicorn's own h11 protocol, as `arena serve` configured it before. asyncio sets TCP_NODELAY only on
            sockets made with proto IPPROTO_TCP, and _listen's are not, so Nagle's algorithm holds a response's
            second write (its body) until the client ACKs the first, which a client delays by up to ~40 ms.
Per path: the median and 90th percentile of N GETs, in ms, and TCP_NODELAY as getsockopt reads it on the served
connection. Target: the median well under the ~40 ms of a delayed ACK.

Run: .venv/bin/python benchmarks/serve_latency.py [--requests 100]
"""
from __future__ import annotations

import argparse
import http.client
import os
import socket
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import uvicorn  # noqa: E402

from arena.app import commands as app  # noqa: E402
from arena.app.people import web  # noqa: E402
from arena.app.commands import open_workspace  # noqa: E402
from arena.domain.ballots import new_token, token_hash  # noqa: E402
from arena.workspace.folder import init_workspace  # noqa: E402
from tests.support.helpers import entry, people, workspace_toml  # noqa: E402

TOML = workspace_toml(motions=["builtin:en"], entries=[entry("alpha"), entry("beta")],
                      judges=[people("experts", "ann")])
BEFORE = dict(access_log=False, log_level="warning", server_header=False, lifespan="off")  # serve's old Config


def build(path: Path) -> str:
    """A workspace with one done match and a link for ann; returns her token."""
    init_workspace(path, TOML)
    ws = open_workspace(path)
    try:
        app.play_one(ws, "en-fact-001", "alpha", "beta", progress=lambda line: None)
        token = new_token()
        ws.store.issue_links("experts", {"ann": token_hash(token)})
    finally:
        ws.close()
    return token


def measure(config: uvicorn.Config, paths: list[str], n: int) -> list[tuple[str, float, float, int]]:
    """(path, median ms, 90th percentile ms, TCP_NODELAY of the served connection) for n GETs of each path on one
    kept-alive connection to a server run with config."""
    server = uvicorn.Server(config)
    sock = web._listen("127.0.0.1", 0)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]})
    thread.start()
    try:
        while not server.started and thread.is_alive():
            time.sleep(0.01)
        conn = http.client.HTTPConnection(*sock.getsockname()[:2], timeout=10)
        rows = []
        for path in paths:
            times = []
            for _ in range(n):
                start = time.perf_counter()
                conn.request("GET", path)
                response = conn.getresponse()
                response.read()
                assert response.status == 200, (path, response.status)
                times.append((time.perf_counter() - start) * 1000)
            served = [p.transport.get_extra_info("socket") for p in server.server_state.connections]
            nodelay = served[0].getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
            rows.append((path, statistics.median(times), statistics.quantiles(times, n=10)[-1], nodelay))
        conn.close()
        return rows
    finally:
        server.should_exit = True
        thread.join()
        sock.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=100, help="GETs of each path per server")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        token = build(Path(tmp) / "ws")
        paths = ["/ballot.css", f"/b/{token}"]
        ballot_app = web.create_app(Path(tmp) / "ws")
        now = measure(web.uvicorn_config(ballot_app), paths, args.requests)
        before = measure(uvicorn.Config(ballot_app, **BEFORE), paths, args.requests)
    print(f"{args.requests} sequential GETs per path on one kept-alive connection (ms)")
    print(f"{'path':<14}{'now median':>12}{'now p90':>10}{'nodelay':>9}   {'before median':>14}{'before p90':>12}"
          f"{'nodelay':>9}")
    for (path, median, p90, nodelay), (_, old_median, old_p90, old_nodelay) in zip(now, before):
        label = "/b/TOKEN" if path.startswith("/b/") else path
        print(f"{label:<14}{median:>12.2f}{p90:>10.2f}{nodelay:>9}   {old_median:>14.2f}{old_p90:>12.2f}"
              f"{old_nodelay:>9}")


if __name__ == "__main__":
    main()
