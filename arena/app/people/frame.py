"""What every page of the web app shares: its database, its templates and words, its refusals and files."""
from __future__ import annotations

from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterator, Mapping
from urllib.parse import quote

import jinja2
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Match as Matched

from arena.app.people.forms import READ_S
from arena.app.people.security import SECURITY_HEADERS, Csrf
from arena.app.people.words import Words
from arena.domain.formats import Format
from arena.store import Store
from leaderboard.site.render import safe_url

TEMPLATES = Path(__file__).parent / "templates"


class Frame:
    """The pages' common ground: the database's path (each request opens its own Store, since a Store is one
    connection for one thread and Starlette runs the database work in a thread pool), the workspace's declared
    debate formats, the templates, the words of the workspace's language, the CSRF tokens, and the seconds a posted
    form's body may take to come (arena.app.people.forms.posted)."""

    def __init__(self, db: Path, formats: Mapping[str, Format], words: Words, read_s: float = READ_S) -> None:
        self.db, self.formats, self.words, self.language = db, formats, words, words.language
        self.read_s = read_s
        self.csrf = Csrf()
        self.env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True,
                                      undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
        self.env.filters["safe_url"] = safe_url
        self.env.filters["t"], self.env.filters["word"] = words.t, words.word
        self.env.filters["when"] = when
        self.css = (TEMPLATES / "ballot.css").read_text(encoding="utf-8")
        self.js = (TEMPLATES / "count.js").read_text(encoding="utf-8")

    @contextmanager
    def store(self) -> Iterator[Store]:
        """The database, for one request."""
        store = Store(self.db)
        try:
            yield store
        finally:
            store.close()

    def render(self, request: Request, template: str, status: int = 200, **context: object) -> HTMLResponse:
        """A page: the template with context, in the workspace's language."""
        # Links are relative to the page (root leads back to the app's root), as the app may sit behind a
        # proxy under a path of its own.
        root = "../" * (request.url.path.count("/") - 1)
        return HTMLResponse(self.env.get_template(template).render(root=root, lang=self.language,
                                                                   site=self.words.site(debating(request)),
                                                                   **context), status_code=status)

    # --- files ---------------------------------------------------------------------------------------------------
    def style(self, request: Request) -> Response:
        """GET /ballot.css."""
        return Response(self.css, media_type="text/css")

    def script(self, request: Request) -> Response:
        """GET /count.js."""
        return Response(self.js, media_type="text/javascript")

    # --- refusals ------------------------------------------------------------------------------------------
    def refuse(self, request: Request, exc: Exception) -> Response:
        """The page of an HTTPException, in the words of the pages it was raised on; a path of the app's but for
        a trailing slash leads there instead of a 404."""
        if not isinstance(exc, HTTPException):  # Starlette types a handler as taking any Exception
            return self.crash(request, exc)
        if exc.status_code == 404 and (target := unslashed(request)):
            return RedirectResponse(target, status_code=307)
        messages = self.words.speech_refusals if debating(request) else self.words.refusals
        title, message = messages.get(exc.status_code, messages[400])
        response = self.render(request, "refused.html.j2", exc.status_code, title=title, message=message)
        response.headers.update(exc.headers or {})  # a 405's Allow
        return response

    def crash(self, request: Request, exc: Exception) -> HTMLResponse:
        """The page of a request the app failed on: 500."""
        # Sent from outside the middleware stack, so with the headers of its own.
        return HTMLResponse(self.words.crash_page(), status_code=500, headers=SECURITY_HEADERS)


def debating(request: Request) -> bool:
    """Whether the request is to a debater's pages, whose refusals speak of speeches."""
    path: str = request.scope["path"]
    return path.startswith("/d/")


def when(moment: str) -> str:
    """A stored time (arena.base.clock's ISO-8601, UTC) as people read it: 2026-11-27 20:53 UTC."""
    return datetime.fromisoformat(moment).astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def unslashed(request: Request) -> str | None:
    """Where a path that is one of the app's but for a trailing slash leads: relative to the page (never built
    on the request's Host header, which the client chose; the app may also sit behind a proxy under a path of
    its own), or None."""
    path: str = request.scope["path"]
    if not path.endswith("/") or path.endswith("//"):
        return None
    scope = {**request.scope, "path": path[:-1]}
    if all(route.matches(scope)[0] is Matched.NONE for route in request.app.router.routes):
        return None
    query: str = request.scope["query_string"].decode("latin-1")
    return "../" + quote(path[:-1].rsplit("/", 1)[1]) + (f"?{query}" if query else "")
