"""The web app's guards: the headers every response carries, and the CSRF tokens its forms carry."""
from __future__ import annotations

import hashlib
import hmac
import secrets

from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

SECURITY_HEADERS = {
    # No script from anywhere, the style sheet from here only, forms posted only here, never framed.
    "Content-Security-Policy": "default-src 'none'; style-src 'self'; form-action 'self'; "
                               "frame-ancestors 'none'; base-uri 'none'",
    "Referrer-Policy": "no-referrer",  # a link followed from a page must not carry its token away
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
}
# The speech form's page runs one script, the app's own count.js; every other page runs none.
COUNTED_CSP = SECURITY_HEADERS["Content-Security-Policy"] + "; script-src 'self'"


class SecurityHeaders:
    """ASGI middleware: SECURITY_HEADERS on every response the app sends."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)

        async def send_secured(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for key, value in SECURITY_HEADERS.items():
                    # the speech form's page keeps the CSP it was sent with, which lets count.js run
                    if key != "Content-Security-Policy" or headers.get(key) != COUNTED_CSP:
                        headers[key] = value
            await send(message)

        await self.app(scope, receive, send_secured)


class Csrf:
    """A form's CSRF token: an HMAC, under a secret made when the app starts, of the link's token hash and what
    the form is about."""

    def __init__(self) -> None:
        self.secret = secrets.token_bytes(32)  # a restart makes open forms stale (403), nothing worse

    def token(self, digest: str, subject: str) -> str:
        """The CSRF token of a link's form about subject (a match; a turn: its match, stage and side)."""
        return hmac.new(self.secret, f"{digest}/{subject}".encode(), hashlib.sha256).hexdigest()

    def ok(self, digest: str, subject: str, given: str) -> bool:
        """Whether given is the token of the link's form about subject."""
        # Compared as bytes: compare_digest refuses str with characters beyond ASCII, which a form may hold.
        return hmac.compare_digest(given.encode("utf-8", "surrogatepass"), self.token(digest, subject).encode())
