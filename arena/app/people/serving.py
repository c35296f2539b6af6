"""How `arena serve` runs the web app: uvicorn's HTTP/1.1 protocol made fit for it, the listening socket, the
server's settings."""
from __future__ import annotations

import asyncio
import errno
import ipaddress
import socket
from types import FrameType
from typing import NoReturn

import uvicorn
from starlette.applications import Starlette
from uvicorn.protocols.http.h11_impl import H11Protocol

from arena.app.people.security import SECURITY_HEADERS
from arena.base.errors import UserError


class Protocol(H11Protocol):
    """uvicorn's HTTP/1.1 protocol (h11) with TCP_NODELAY on each connection and SECURITY_HEADERS on the 400 it
    sends itself.

    asyncio sets TCP_NODELAY only on sockets made with proto IPPROTO_TCP, and those accepted from listen's have
    proto 0: without it a response's second write (its body) waits for the client's delayed ACK of the first,
    ~40 ms a request on a kept-alive connection. A request h11 cannot parse is answered by send_400_response
    before the app or its middleware sees it, and uvicorn's default headers (Config(headers=...)) reach only the
    responses of the app's request cycle."""

    # uvicorn's H11Protocol narrows asyncio's BaseTransport to the Transport it is given (and ignores its own
    # override error so); this override keeps uvicorn's signature.
    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        sock = transport.get_extra_info("socket")
        if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def send_400_response(self, msg: str) -> None:
        body = msg.encode("ascii", "replace")
        headers = {"Content-Type": "text/plain; charset=utf-8", "Content-Length": len(body), "Connection": "close",
                   **SECURITY_HEADERS}
        head = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
        self.transport.write(f"HTTP/1.1 400 Bad Request\r\n{head}\r\n".encode("ascii") + body)
        self.transport.close()


class Stop(Exception):
    """SIGTERM, re-raised by uvicorn once it has shut down gracefully: time to return."""


def stop(signum: int, frame: FrameType | None) -> NoReturn:
    """The SIGTERM handler while serving: Stop."""
    raise Stop


def is_loopback(host: str) -> bool:
    """Whether host is reachable from this computer only."""
    try:
        return host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def listen(host: str, port: int) -> socket.socket:
    """A listening socket on host:port (port 0: any free port); UserError when it cannot be had."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        return socket.create_server((host, port), family=family)
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:  # another server has it: say which option moves off it, and what follows
            other = f"{_netloc(host)}:{port % 65535 + 1}"
            raise UserError(f"--port {port}: another program already listens on {_netloc(host)}:{port} (a local "
                            f"model's server?); serve on another port, e.g. 'arena serve --port {port % 65535 + 1}', "
                            f"and issue the links for it with --base-url http://{other} ('arena debaters issue', "
                            "'arena ballots issue')") from None
        raise UserError(f"--host {host} --port {port}: cannot listen there: {exc.strerror or exc}") from None
    except TypeError as exc:  # a host name that cannot be encoded (a NUL, a bad label)
        raise UserError(f"--host {host} --port {port}: cannot listen there: {exc}") from None


def _netloc(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def uvicorn_config(app: Starlette) -> uvicorn.Config:
    """How `arena serve` runs the app under uvicorn."""
    # No access log: every URL holds a person's token, which a log would keep for anyone to read. No websockets:
    # an upgrade request is then an ordinary request to the app, not one uvicorn refuses with a 403 of its own.
    return uvicorn.Config(app, http=Protocol, ws="none", access_log=False, log_level="warning", server_header=False,
                          lifespan="off")
