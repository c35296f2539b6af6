"""`arena serve`: the local web app where people cast blind ballots, and write their speeches in debates, through
their private links.

Paths (`arena ballots issue` and `arena debaters issue` print the links):
    GET  /b/{token}             the person's queue: every done match, those still to judge first
    GET  /b/{token}/{ballot}    a done match's transcript, blind (PRO and CON only), and the ballot form
    POST /b/{token}/{ballot}    cast (or revise) the ballot; 303 back to the queue
    GET  /d/{token}             a web human entry's turns: those still to write, then those submitted
    GET  /d/{token}/{turn}      a turn's brief (the motion, the side, the stage, the budget and exactly the speeches
                                the protocol lets that side see) and the speech form; a submitted speech, read-only
    POST /d/{token}/{turn}      save a draft (303 back to the page) or submit the speech (303 to the list)
    GET  /ballot.css            the pages' style
    GET  /count.js              the speech form's live length count (the page works without it)
A link names a match by the person's ballot id or turn id for it (arena.domain.ballots.ballot_id, turn_id), never by its
public id, which the published site shows. A token that is not a live link, an id that is not one of the person's
(a public match id included) and any other path are one bare 404; a live link of a judge whose ballots are closed
(`arena ballots close`) is a 410 saying so, as is a speech sent past its turn's deadline.

Every page is rendered with autoescaping and sent with headers that allow no script (but the speech form's own
count.js), send no referrer (the token is in the URL) and keep pages out of caches. A form carries a CSRF token:
an HMAC, under a secret made when the app starts, of the link's token hash and what the form is about. Each
request opens its own Store, since a Store is one connection for one thread and Starlette runs the database work
in a thread pool.
"""
from __future__ import annotations

import hashlib
import hmac
import ipaddress
import math
import re
import secrets
import signal
import socket
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, cast
from urllib.parse import quote, unquote_to_bytes

import jinja2
import uvicorn
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import MutableHeaders
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import ClientDisconnect, Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Match as Matched
from starlette.routing import Route
from uvicorn.protocols.http.h11_impl import H11Protocol

from arena.app.setup.wiring import open_workspace
from arena.domain.ballots import RATIONALE_MAX, BallotError, ballot_id, check_ballot, queue, token_hash
from arena.base.clock import now
from arena.base.errors import UserError
from arena.domain.formats import Format, shown
from arena.domain.records import DIMENSIONS, HUMAN_JUDGE, HumanTurn, JudgeSpec, Match, Motion, TurnKey
from arena.domain.speechchecks import Problem, length
from arena.store import DB_NAME, Store
from arena.match.turns import problem as speech_problem
from judges.debatrix import DIMENSIONS as DEFINITIONS
from judges.debatrix import TRANSLATIONS
from leaderboard.site import labels as catalogue
from leaderboard.site.render import safe_url

TEMPLATES = Path(__file__).parent / "templates"
BODY_MAX = 100_000  # bytes of a posted form: a ballot's longest rationale (20,000 characters) fits with room
FIELDS_MAX = 20  # a ballot has six fields; a form of hundreds is not one
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
# Every page in the workspace's language ([arena] language), its labels from the site's catalogue
# (leaderboard.site.labels): each message below and in the templates is translated there.
Translate = Callable[..., Any]


def refusals(t: Translate) -> dict[int, tuple[str, str]]:
    """status → (title, what the page says) in t's language; a 404 says nothing about why."""
    return {
        400: (t("Bad request"), t("The request could not be read as a ballot.")),
        403: (t("Form expired"), t("This form is out of date or did not come from its page. Go back, reload the page "
                                   "and cast your ballot again.")),
        404: (t("Not found"), t("There is nothing here.")),
        405: (t("Not allowed"), t("This page cannot be used that way.")),
        410: (t("Ballots closed"), t("The organisers have closed these ballots: no more ballots are taken. Thank you.")),
        413: (t("Too long"), t("A ballot is at most {size} KB; shorten the rationale and try again.",
                               size=BODY_MAX // 1000)),
    }


def speech_refusals(t: Translate) -> dict[int, tuple[str, str]]:
    """What a refusal on a debater's page (/d/...) says where a ballot's would not fit; the others are the same."""
    return {
        400: (t("Bad request"), t("The request could not be read as a speech.")),
        403: (t("Form expired"), t("This form is out of date or did not come from its page. Go back, copy what you "
                                   "wrote, reload the page, paste it in and send it again.")),
        409: (t("Already submitted"), t("A submitted speech cannot be changed.")),
        410: (t("Deadline passed"), t("The deadline of this speech has passed: it is no longer taken.")),
        413: (t("Too long"), t("A speech is at most {size} KB; shorten it and try again.", size=BODY_MAX // 1000)),
    }


def reasons(t: Translate) -> dict[str, str]:
    """Why a speech is not taken, by the speech check it fails (arena.domain.speechchecks.CHECKS but too-short, which
    says it with the speech's numbers), in t's language."""
    return {
        "placeholder": t("It is a placeholder or filler where the speech should be: write the speech itself."),
        "echo": t("Most of it is copied word for word from what you were shown or from your own earlier speech: "
                  "write it in your own words."),
        "repetition": t("Most of it repeats one sentence or phrase: say more than that."),
        "language": t("It is not in the debate's language: write it in that language."),
    }


def questions(language: str, t: Translate, word: Callable[[str], str]) -> list[tuple[str, str, str]]:
    """(field, legend, hint) of each question of the ballot, in language: each dimension as the Debatrix judge's
    prompts define it in that language (English where they have no translation), so that people and models are
    asked the same questions."""
    translated = TRANSLATIONS.get(language.split("-")[0].lower(), {})
    asked = [("overall", t("Who won the debate?"), t("Your overall verdict."))]
    for d in DIMENSIONS:
        definition = translated.get(d, {}).get("definition") or DEFINITIONS[d]["definition"]
        end = "。" if re.search(r"[\u3000-\u9fff]$", definition) else "."
        asked.append((d, word(d).capitalize(), definition[0].upper() + definition[1:] + end))
    return asked


def outcome_labels(t: Translate) -> dict[str, str]:
    """The outcomes as the form offers them, in arena.domain.ballots.OUTCOMES order."""
    return {"pro": "PRO", "con": "CON", "tie": t("Tie")}


@dataclass(frozen=True)
class Person:
    """Who a live link belongs to: their judge, their name, their run (place in people) and the link itself."""

    judge: JudgeSpec
    name: str
    run: int
    token: str
    digest: str  # the token's hash: what the store knows and the CSRF token is bound to


@dataclass(frozen=True)
class Debater:
    """Who a live debater link belongs to: a web human entry, and the link itself."""

    entry: str
    token: str
    digest: str  # the token's hash: what the store knows and the CSRF token is bound to


def turn_id(secret: bytes, entry: str, turn: HumanTurn | TurnKey) -> str:
    """The id a debater's link names a turn by: as arena.domain.ballots.ballot_id, an HMAC-SHA256 under the workspace's
    secret, here over the entry and the turn's match, stage and side (after "turn", so that no turn id is a ballot
    id), 96 bits in hex."""
    message = "\0".join(("turn", entry, turn.match_id, turn.stage, turn.side)).encode("utf-8", "surrogatepass")
    return hmac.new(secret, message, hashlib.sha256).hexdigest()[:24]


class _SecurityHeaders:
    """ASGI middleware: SECURITY_HEADERS on every response the app sends."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)

        async def send_secured(message):
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for key, value in SECURITY_HEADERS.items():
                    # the speech form's page keeps the CSP it was sent with, which lets count.js run
                    if key != "Content-Security-Policy" or headers.get(key) != COUNTED_CSP:
                        headers[key] = value
            await send(message)

        await self.app(scope, receive, send_secured)


def create_app(workspace_path: Path) -> Starlette:
    """The app of a workspace: ballots for its judges of people, speech forms for its web human entries; UserError
    if the workspace does not open or has neither.

    arena.toml is read once, here: judges of people or web human entries added later need a restart.
    app.state.judges lists the judges of people served, app.state.debaters the web human entries' names.
    """
    ws = open_workspace(Path(workspace_path))  # checks arena.toml whole and brings arena.db up to date
    key = ws.store.ballot_secret()
    ws.close()
    judges = [j for j in ws.config.judges if j.casts_ballots]
    debaters = [e.name for e in ws.config.entries if e.on_the_web]
    if not judges and not debaters:
        raise UserError(f"{ws.config.path}: no judge of people to serve ballots for and no entry that debates on "
                        f"the web; add a judge of people:\n"
                        f'[[judges]]\nname = "experts"\nkind = "{HUMAN_JUDGE}"\n[judges.options]\n'
                        f'people = ["ann", "bo", "cy"]\n'
                        f"or a person who debates on the web:\n"
                        f'[[entries]]\nname = "ann"\ndebater = "human"\nmodel = "human/ann"\n[entries.params]\n'
                        f'via = "web"')
    pages = _Pages(ws.path / DB_NAME, judges, debaters, key, ws.config.formats, ws.config.arena.language,
                   ws.config.arena.min_speech_share)
    app = Starlette(
        routes=[Route("/b/{token}", pages.queue_page, methods=["GET"]),
                Route("/b/{token}/{ballot}", pages.ballot_page, methods=["GET"]),
                Route("/b/{token}/{ballot}", pages.cast, methods=["POST"]),
                Route("/d/{token}", pages.turns_page, methods=["GET"]),
                Route("/d/{token}/{turn}", pages.turn_page, methods=["GET"]),
                Route("/d/{token}/{turn}", pages.speak, methods=["POST"]),
                Route("/ballot.css", pages.style, methods=["GET"]),
                Route("/count.js", pages.script, methods=["GET"])],
        middleware=[Middleware(_SecurityHeaders)],
        # Starlette types every handler as taking an Exception; refuse takes the HTTPException it is given
        exception_handlers={HTTPException: pages.refuse, Exception: pages.crash})  # type: ignore[dict-item]
    app.router.redirect_slashes = False  # Starlette's redirect is an absolute URL on the Host header; see refuse
    app.state.judges, app.state.debaters = judges, debaters
    return app


class _Pages:
    """The app's endpoints and what they share: the database's path, the judges of people, the web human entries,
    the workspace's secret for ballot and turn ids, its declared debate formats and least share of a speech's
    budget, the CSRF secret."""

    def __init__(self, db: Path, judges: list[JudgeSpec], debaters: list[str], key: bytes,
                 formats: Mapping[str, Format], language: str, min_share: float):
        self.db, self.formats, self.language, self.min_share = db, formats, language, min_share
        self.judges = {j.name: j for j in judges}
        self.debaters = set(debaters)
        self.key = key
        self.secret = secrets.token_bytes(32)  # a restart makes open forms stale (403), nothing worse
        self.env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True,
                                      undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
        self.env.filters["safe_url"] = safe_url
        self.t, self.word = catalogue.translator(language), catalogue.words(language)
        self.env.filters["t"], self.env.filters["word"] = self.t, self.word
        self.env.filters["when"] = _when
        self.questions, self.labels = questions(language, self.t, self.word), outcome_labels(self.t)
        self.refusals = refusals(self.t)
        self.speech_refusals = {**self.refusals, **speech_refusals(self.t)}
        self.reasons = reasons(self.t)
        self.css = (TEMPLATES / "ballot.css").read_text(encoding="utf-8")
        self.js = (TEMPLATES / "count.js").read_text(encoding="utf-8")

    @contextmanager
    def _store(self) -> Iterator[Store]:
        store = Store(self.db)
        try:
            yield store
        finally:
            store.close()

    def _render(self, request: Request, template: str, status: int = 200, **context) -> HTMLResponse:
        # Links are relative to the page (root leads back to the app's root), as the app may sit behind a
        # proxy under a path of its own.
        root = "../" * (request.url.path.count("/") - 1)
        site = self.t("Debate Arena debates") if _debating(request) else self.t("Debate Arena ballots")
        return HTMLResponse(self.env.get_template(template).render(root=root, lang=self.language, site=site,
                                                                   **context), status_code=status)

    # --- who and what ------------------------------------------------------------------------------------
    def _person(self, store: Store, token: str) -> Person:
        """The holder of a live link; 404 for any other token, or for a person no longer configured; 410 once
        their judge's ballots are closed."""
        digest = token_hash(token)
        held = store.link_holder(digest)
        judge = self.judges.get(held[0]) if held else None
        # a judge: held is a link holder
        if judge is None or cast(tuple[str, str], held)[1] not in judge.people:
            raise HTTPException(404)
        if judge.name in store.closed_judges():
            raise HTTPException(410)
        person = cast(tuple[str, str], held)[1]
        return Person(judge, person, judge.people.index(person), token, digest)

    def _ballot_id(self, person: Person, match_id: str) -> str:
        return ballot_id(self.key, person.judge.name, person.name, match_id)

    def _done_match(self, store: Store, person: Person, ballot: str) -> Match:
        """The done match the person's ballot id names (the ids of their queue are worked out again, as none is
        stored); 404 for anything else."""
        done = store.debated_match_ids()  # a forfeit has no debate to judge
        match_id = next((m for m in done if self._ballot_id(person, m) == ballot), None)
        if match_id is None:
            raise HTTPException(404)
        return cast(Match, store.match(match_id))  # a done match's id

    def _lookup(self, token: str, ballot: str) -> tuple[Person, Match]:
        with self._store() as store:
            person = self._person(store, token)
            return person, self._done_match(store, person, ballot)

    def _csrf(self, digest: str, subject: str) -> str:
        """The CSRF token of a link's form about subject (a match; a turn: its match, stage and side)."""
        return hmac.new(self.secret, f"{digest}/{subject}".encode(), hashlib.sha256).hexdigest()

    def _csrf_ok(self, digest: str, subject: str, given: str) -> bool:
        # Compared as bytes: compare_digest refuses str with characters beyond ASCII, which a form may hold.
        return hmac.compare_digest(given.encode("utf-8", "surrogatepass"), self._csrf(digest, subject).encode())

    # --- pages ---------------------------------------------------------------------------------------------
    def queue_page(self, request: Request) -> HTMLResponse:
        """The person's queue: done matches in their order, those still to judge first, then those cast."""
        with self._store() as store:
            person = self._person(store, request.path_params["token"])
            done = store.debated_match_ids()
            cast_ids = store.ballots_cast(person.judge.name).get(person.run, set())
            motions = _motions(store, done)
        order = queue(person.judge.name, person.name, done)
        items = {m: {"id": self._ballot_id(person, m), "motion": motions[m]} for m in order}
        todo = [items[m] for m in order if m not in cast_ids]
        cast_items = [items[m] for m in order if m in cast_ids]
        saved = request.query_params.get("saved")
        return self._render(request, "queue.html.j2", token=person.token, todo=todo, cast=cast_items,
                            saved=next((item for item in cast_items if item["id"] == saved), None))

    def ballot_page(self, request: Request) -> HTMLResponse:
        """A done match, blind, with the ballot form; the person's ballot on it, if cast, fills the form."""
        with self._store() as store:  # one connection for the page
            person = self._person(store, request.path_params["token"])
            match = self._done_match(store, person, request.path_params["ballot"])
            previous = store.ballot(match.id, person.judge.name, person.run)
        chosen = {} if previous is None else {"overall": previous.overall, **previous.dimensions,
                                              "rationale": previous.rationale}
        return self._ballot(request, person, match, chosen, cast=previous is not None)

    def _ballot(self, request: Request, person: Person, match: Match, chosen: dict, *, cast: bool,
                error: BallotError | None = None, status: int = 200) -> HTMLResponse:
        """The ballot page. Only the motion and the speeches reach the template: never the entries, their
        models, or any verdict."""
        fmt = shown(match.format, self.formats)
        speeches = fmt.ordered(match.speeches)  # in the format's order, its stages under their titles
        stages = [(stage, fmt.title_of(stage, self.language), [s for s in speeches if s.stage == stage])
                  for stage in dict.fromkeys(s.stage for s in speeches)]
        return self._render(request, "ballot.html.j2", status, token=person.token, motion=match.motion,
                            stages=stages,
                            questions=self.questions, labels=self.labels, chosen=chosen, cast=cast, error=error,
                            problem=error and self._problem(error),
                            csrf=self._csrf(person.digest, match.id), rationale_max=RATIONALE_MAX)

    def _problem(self, error: BallotError) -> str:
        """A ballot's problem in the page's language (a BallotError's messages are in the catalogue as such)."""
        translate = self.t
        return str(translate(error.message, **error.values))

    async def cast(self, request: Request) -> Response:
        """Check and store a ballot: 404 for a bad link or match, 413 for an oversized body, 403 without the
        form's CSRF token, 400 (the page again, with what was entered and the problem) for a bad ballot."""
        person, match = await run_in_threadpool(self._lookup, request.path_params["token"],
                                                request.path_params["ballot"])
        try:
            fields = await _posted(request)
        except BallotError as exc:  # bytes that are not UTF-8: the form again (empty), naming the field
            return await run_in_threadpool(self._refused, request, person, match, {}, exc)
        return await run_in_threadpool(self._store_ballot, request, person, match, fields)

    def _store_ballot(self, request: Request, person: Person, match: Match, fields: dict[str, str]) -> Response:
        if not self._csrf_ok(person.digest, match.id, fields.get("csrf", "")):
            raise HTTPException(403)
        try:
            ballot = check_ballot(match.id, person.name, fields, dimensions_required=True, rationale_required=True)
        except BallotError as exc:
            return self._refused(request, person, match, fields, exc)
        with self._store() as store:
            store.cast_ballots(person.judge.name, person.judge.people, [ballot], simulated=person.judge.simulated)
        return RedirectResponse(f"../{person.token}?saved={self._ballot_id(person, match.id)}", status_code=303)

    def _refused(self, request: Request, person: Person, match: Match, fields: dict[str, str],
                 error: BallotError) -> HTMLResponse:
        """The ballot page again, status 400, with what was entered and the problem."""
        chosen = {key: value for key, value in fields.items() if key != "csrf"}
        with self._store() as store:
            cast = store.ballot(match.id, person.judge.name, person.run) is not None
        return self._ballot(request, person, match, chosen, cast=cast, error=error, status=400)

    # --- debaters -----------------------------------------------------------------------------------------------
    def _debater(self, store: Store, token: str) -> Debater:
        """The web human entry holding a live debater link; 404 for any other token, or for an entry no longer
        configured to debate on the web."""
        digest = token_hash(token)
        entry = store.debater_link_holder(digest)
        if entry is None or entry not in self.debaters:
            raise HTTPException(404)
        return Debater(entry, token, digest)

    def _turn_id(self, debater: Debater, turn: HumanTurn | TurnKey) -> str:
        return turn_id(self.key, debater.entry, turn)

    def _turn(self, store: Store, debater: Debater, turn: str) -> HumanTurn:
        """The debater's turn the id names (the ids of their turns are worked out again, as none is stored); 404
        for anything else."""
        key = next((k for k in store.turn_keys(debater.entry) if self._turn_id(debater, k) == turn), None)
        found = None if key is None else store.human_turn(*key)
        if found is None:
            raise HTTPException(404)
        return found

    def _turn_lookup(self, token: str, turn: str) -> tuple[Debater, HumanTurn]:
        with self._store() as store:
            debater = self._debater(store, token)
            return debater, self._turn(store, debater, turn)

    def _format(self, turn: HumanTurn) -> Format:
        return shown(turn.brief["format"], self.formats)

    def _least(self, turn: HumanTurn, fmt: Format) -> int:
        """The fewest words (or characters) a speech of the turn must have: the too-short check's line."""
        own = next((t for t in fmt.stage_turns(turn.stage) if t.side == turn.side), None)
        share = self.min_share if own is None or own.min_share is None else own.min_share
        return math.ceil(share * turn.brief["budget"]["amount"])

    def turns_page(self, request: Request) -> HTMLResponse:
        """The debater's turns in schedule order: those still to write, those submitted, those whose deadline passed
        with no speech."""
        with self._store() as store:
            debater = self._debater(store, request.path_params["token"])
            turns = store.turns_of(debater.entry)
        to_write: list[dict[str, Any]] = []
        done: list[dict[str, Any]] = []
        missed: list[dict[str, Any]] = []
        for t in turns:
            (done if t.submitted else missed if _lapsed(t) else to_write).append(
                {"id": self._turn_id(debater, t), "motion": t.brief["motion"], "side": t.side,
                 "title": t.brief["title"], "language": t.brief["language"], "deadline": t.deadline,
                 "draft": bool(t.draft), "submitted_at": t.submitted_at})
        submitted = request.query_params.get("submitted")
        return self._render(request, "debates.html.j2", token=debater.token, open=to_write, done=done, missed=missed,
                            submitted=next((item for item in done if item["id"] == submitted), None))

    def turn_page(self, request: Request) -> HTMLResponse:
        """A turn's page; after a draft is saved (?saved=draft), with a note saying so."""
        debater, turn = self._turn_lookup(request.path_params["token"], request.path_params["turn"])
        saved = request.query_params.get("saved") == "draft" and turn.draft_at is not None
        return self._writing(request, debater, turn, turn.draft, saved=saved)

    def _writing(self, request: Request, debater: Debater, turn: HumanTurn, text: str, *,
                 problem: Problem | None = None, saved: bool = False, status: int = 200) -> HTMLResponse:
        """A turn's page: its brief (its stages' titles and purpose as the debaters of its language read them) and
        exactly the speeches it showed, then the speech form (text in it), or the submitted speech read-only, or
        word that its deadline has passed. Only the brief reaches the template: never the entries, their models,
        or the other side's name."""
        fmt = self._format(turn)
        stage_turns = fmt.stage_turns(turn.stage)
        writing = not turn.submitted and not _lapsed(turn)
        least = self._least(turn, fmt)
        response = self._render(
            request, "turn.html.j2", status, token=debater.token, turn=turn, brief=turn.brief,
            motion=turn.brief["motion"], blind=len(stage_turns) > 1 and all(t.blind for t in stage_turns),
            least=least, count=length(text, turn.brief["language"])[0], text=text, writing=writing, saved=saved,
            problem=problem and self._reason(problem, turn, text, least),
            csrf=self._csrf(debater.digest, _subject(turn)))
        if writing:
            response.headers["Content-Security-Policy"] = COUNTED_CSP
        return response

    def _reason(self, problem: Problem, turn: HumanTurn, text: str, least: int) -> tuple[str, str]:
        """(why the speech is not taken, in the page's language; the check's own words, in English, or "")."""
        if problem.check == "too-short":
            amount, unit = length(text, turn.brief["language"])
            if unit == "characters":
                return self.t("It is {amount} characters long; this turn takes at least {least}.", amount=amount,
                              least=least), ""
            return self.t("It is {amount} words long; this turn takes at least {least}.", amount=amount,
                          least=least), ""
        return self.reasons.get(problem.check, self.t("It does not pass the arena's checks of a speech.")), \
            problem.detail

    async def speak(self, request: Request) -> Response:
        """Save a draft or submit the speech of a turn: 404 for a bad link or turn, 413 for an oversized body, 400
        for a body that is not the form."""
        debater, turn = await run_in_threadpool(self._turn_lookup, request.path_params["token"],
                                                request.path_params["turn"])
        try:
            fields = await _posted(request)
        except BallotError:  # bytes that are not UTF-8: no speech to show again
            raise HTTPException(400) from None
        return await run_in_threadpool(self._take, request, debater, turn, fields)

    def _take(self, request: Request, debater: Debater, turn: HumanTurn, fields: dict[str, str]) -> Response:
        """403 without the form's CSRF token, 400 for an action that is neither save nor submit, 409 once the speech
        is submitted, 410 past the deadline; a speech that fails a check (arena.match.turns.problem) is not taken: the
        page again, status 400, with the text and why. Else 303: a draft back to its page, a speech to the list."""
        if not self._csrf_ok(debater.digest, _subject(turn), fields.get("csrf", "")):
            raise HTTPException(403)
        action = fields.get("action")
        if action not in ("save", "submit"):
            raise HTTPException(400)
        if turn.submitted:
            raise HTTPException(409)
        if _lapsed(turn):
            raise HTTPException(410)
        text = fields.get("speech", "").replace("\r\n", "\n")  # a textarea's line breaks come as CRLF
        if action == "submit" and (problem := speech_problem(turn, text, self._format(turn), self.min_share)):
            return self._writing(request, debater, turn, text, problem=problem, status=400)
        with self._store() as store:
            take = store.save_draft if action == "save" else store.submit_speech
            if not take(turn.match_id, turn.stage, turn.side, text):  # submitted since the turn was read
                raise HTTPException(409)
        named = self._turn_id(debater, turn)
        if action == "save":
            return RedirectResponse(f"{named}?saved=draft", status_code=303)
        return RedirectResponse(f"../{debater.token}?submitted={named}", status_code=303)

    # --- files ---------------------------------------------------------------------------------------------------
    def style(self, request: Request) -> Response:
        return Response(self.css, media_type="text/css")

    def script(self, request: Request) -> Response:
        return Response(self.js, media_type="text/javascript")

    # --- refusals ------------------------------------------------------------------------------------------
    def refuse(self, request: Request, exc: HTTPException) -> Response:
        if exc.status_code == 404 and (target := _unslashed(request)):
            return RedirectResponse(target, status_code=307)
        messages = self.speech_refusals if _debating(request) else self.refusals
        title, message = messages.get(exc.status_code, messages[400])
        response = self._render(request, "refused.html.j2", exc.status_code, title=title, message=message)
        response.headers.update(exc.headers or {})  # a 405's Allow
        return response

    def crash(self, request: Request, exc: Exception) -> HTMLResponse:
        # Sent from outside the middleware stack, so with the headers of its own.
        page = f'<!doctype html><html lang="{self.language}"><title>{self.t("Server error")}</title>' \
               f'<p>{self.t("Something went wrong; try again.")}</p>'
        return HTMLResponse(page, status_code=500, headers=SECURITY_HEADERS)


def _subject(turn: HumanTurn) -> str:
    """What a turn's form is about, for its CSRF token."""
    return f"{turn.match_id}/{turn.stage}/{turn.side}"


def _lapsed(turn: HumanTurn) -> bool:
    """Whether a turn's deadline has passed; compared as text, as the store and arena.match.turns compare them (every time
    is written alike: arena.base.clock)."""
    return turn.deadline <= now()


def _debating(request: Request) -> bool:
    """Whether the request is to a debater's pages, whose refusals speak of speeches."""
    return request.scope["path"].startswith("/d/")


def _when(moment: str) -> str:
    """A stored time (arena.base.clock's ISO-8601, UTC) as people read it: 2026-11-27 20:53 UTC."""
    return datetime.fromisoformat(moment).astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def _motions(store: Store, match_ids: list[str]) -> dict[str, Motion]:
    """The motion of each match, each motion read once."""
    wanted = set(match_ids)
    motion_of = {m.id: m.motion_id for m in store.match_states() if m.id in wanted}
    # a match's motion is stored with it
    motions = {motion_id: cast(Motion, store.motion(motion_id)) for motion_id in set(motion_of.values())}
    return {match_id: motions[motion_id] for match_id, motion_id in motion_of.items()}


async def _posted(request: Request) -> dict[str, str]:
    """The fields of a posted form, read only up to BODY_MAX bytes (413 beyond); 400 for a body that is not an
    application/x-www-form-urlencoded form (the ballot form's), BallotError for a field that is not UTF-8."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > BODY_MAX:
        raise HTTPException(413)
    body = bytearray()
    try:
        async for chunk in request.stream():  # a chunked body declares no length: count as it comes
            body += chunk
            if len(body) > BODY_MAX:
                raise HTTPException(413)
    except ClientDisconnect:  # gone before the whole body came: nobody to answer, nothing to store
        raise HTTPException(400) from None

    media_type = request.headers.get("content-type", "").partition(";")[0].strip().lower()
    if media_type != "application/x-www-form-urlencoded":
        raise HTTPException(400)
    return _form_fields(bytes(body))


def _form_fields(body: bytes) -> dict[str, str]:
    """The fields of an application/x-www-form-urlencoded body: pairs split at & and =, + as a space, escapes
    percent-decoded, then names and values read as UTF-8 strictly (raw bytes beyond ASCII, which some clients
    send unescaped, included). A field given twice counts once, as its last value. BallotError names the first
    field that is not UTF-8; 400 for more than FIELDS_MAX fields."""
    pairs = [pair for pair in body.split(b"&") if pair]
    if len(pairs) > FIELDS_MAX:
        raise HTTPException(400)
    fields = {}
    for pair in pairs:
        name, _, value = (unquote_to_bytes(part.replace(b"+", b" ")) for part in pair.partition(b"="))
        try:
            key = name.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise BallotError(name.decode("utf-8", "replace"), "a name that is not UTF-8 (byte {at})",
                              at=exc.start) from None
        try:
            fields[key] = value.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise BallotError(key, "not UTF-8 text (byte {at} of the value)", at=exc.start) from None
    return fields


def _unslashed(request: Request) -> str | None:
    """Where a path that is one of the app's but for a trailing slash leads: relative to the page (never built
    on the request's Host header, which the client chose; the app may also sit behind a proxy under a path of
    its own), or None."""
    path = request.scope["path"]
    if not path.endswith("/") or path.endswith("//"):
        return None
    scope = {**request.scope, "path": path[:-1]}
    if all(route.matches(scope)[0] is Matched.NONE for route in request.app.router.routes):
        return None
    query = request.scope["query_string"].decode("latin-1")
    return "../" + quote(path[:-1].rsplit("/", 1)[1]) + (f"?{query}" if query else "")


# --- the server -------------------------------------------------------------------------------------------------

class _Protocol(H11Protocol):
    """uvicorn's HTTP/1.1 protocol (h11) with TCP_NODELAY on each connection and SECURITY_HEADERS on the 400 it
    sends itself.

    asyncio sets TCP_NODELAY only on sockets made with proto IPPROTO_TCP, and those accepted from _listen's have
    proto 0: without it a response's second write (its body) waits for the client's delayed ACK of the first,
    ~40 ms a request on a kept-alive connection. A request h11 cannot parse is answered by send_400_response
    before the app or its middleware sees it, and uvicorn's default headers (Config(headers=...)) reach only the
    responses of the app's request cycle."""

    def connection_made(self, transport) -> None:
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


class _Stop(Exception):
    """SIGTERM, re-raised by uvicorn once it has shut down gracefully: time to return."""


def _stop(signum, frame):
    raise _Stop


def is_loopback(host: str) -> bool:
    """Whether host is reachable from this computer only."""
    try:
        return host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _listen(host: str, port: int) -> socket.socket:
    """A listening socket on host:port (port 0: any free port); UserError when it cannot be had."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        return socket.create_server((host, port), family=family)
    except (OSError, TypeError) as exc:  # TypeError: a host name that cannot be encoded (a NUL, a bad label)
        raise UserError(f"--host {host} --port {port}: cannot listen there: "
                        f"{getattr(exc, 'strerror', None) or exc}") from None


def uvicorn_config(app: Starlette) -> uvicorn.Config:
    """How `arena serve` runs the app under uvicorn."""
    # No access log: every URL holds a person's token, which a log would keep for anyone to read. No websockets:
    # an upgrade request is then an ordinary request to the app, not one uvicorn refuses with a 403 of its own.
    return uvicorn.Config(app, http=_Protocol, ws="none", access_log=False, log_level="warning", server_header=False,
                          lifespan="off")


def serve(workspace_path: Path, host: str = "127.0.0.1", port: int = 8000,
          ready: Callable[[str, list[JudgeSpec], list[str]], None] = lambda url, judges, debaters: None) -> None:
    """Serve create_app(workspace_path) on host:port until Ctrl-C or SIGTERM, then return; ready(url, judges of
    people, web debaters' entry names) once the address is taken."""
    app = create_app(workspace_path)
    sock = _listen(host, port)
    bound = sock.getsockname()[1]
    ready(f"http://{f'[{host}]' if ':' in host else host}:{bound}", app.state.judges, app.state.debaters)
    previous = signal.signal(signal.SIGTERM, _stop)
    try:
        uvicorn.Server(uvicorn_config(app)).run(sockets=[sock])
    except (KeyboardInterrupt, _Stop):  # uvicorn re-raises the signal that stopped it, once stopped
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        sock.close()
