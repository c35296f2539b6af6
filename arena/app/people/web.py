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
(`arena ballots close`) is a 410 saying so, as is a speech sent past its turn's deadline (or once its match went on
without it). A form's body must come whole within READ_S seconds (408 beyond); a speech's link, turn and deadline are
checked again once it has come, and once more in the transaction that stores it, so that a link `arena debaters
issue` replaced while the body came is refused (404) and nothing is stored.

Every page is rendered with autoescaping and sent with headers that allow no script (but the speech form's own
count.js), send no referrer (the token is in the URL) and keep pages out of caches. A form carries a CSRF token:
an HMAC, under a secret made when the app starts, of the link's token hash and what the form is about. Each
request opens its own Store, since a Store is one connection for one thread and Starlette runs the database work
in a thread pool.

The parts: arena.app.people.security (the headers, the CSRF tokens), forms (a posted form read), words (what the
pages say), frame (what every page shares), ballot_pages (/b/...), turn_pages (/d/...), serving (uvicorn).
"""
from __future__ import annotations

import signal
from pathlib import Path
from typing import Callable

import uvicorn
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.routing import Route

from arena.app.people.ballot_pages import BallotPages, Person
from arena.app.people.forms import BODY_MAX, FIELDS_MAX, READ_S
from arena.app.people.frame import TEMPLATES, Frame
from arena.app.people.security import COUNTED_CSP, SECURITY_HEADERS, SecurityHeaders
from arena.app.people.serving import Stop, is_loopback, stop, uvicorn_config
from arena.app.people.serving import listen as _listen
from arena.app.people.turn_pages import Debater, TurnPages, turn_id
from arena.app.people.words import Words
from arena.app.setup.wiring import open_workspace
from arena.base.errors import UserError
from arena.base.limits import SERVE_PORT
from arena.domain.records import HUMAN_JUDGE, JudgeSpec
from arena.store import DB_NAME

# What commands, tests, benchmarks and docs name of the web app here, wherever its parts now live.
__all__ = ["BODY_MAX", "COUNTED_CSP", "FIELDS_MAX", "READ_S", "SECURITY_HEADERS", "TEMPLATES", "Debater", "Person",
           "_listen", "create_app", "is_loopback", "serve", "turn_id", "uvicorn_config"]


def create_app(workspace_path: Path, read_s: float = READ_S) -> Starlette:
    """The app of a workspace: ballots for its judges of people, speech forms for its web human entries; UserError
    if the workspace does not open or has neither. read_s: the seconds a posted form's body may take to come (408
    beyond).

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
    frame = Frame(ws.path / DB_NAME, ws.config.formats, Words.of(ws.config.arena.language), read_s)
    ballots = BallotPages(frame, judges, key)
    turns = TurnPages(frame, debaters, key, ws.config.arena.min_speech_share, judges)
    app = Starlette(
        routes=[Route("/b/{token}", ballots.queue_page, methods=["GET"]),
                Route("/b/{token}/{ballot}", ballots.ballot_page, methods=["GET"]),
                Route("/b/{token}/{ballot}", ballots.cast, methods=["POST"]),
                Route("/d/{token}", turns.turns_page, methods=["GET"]),
                Route("/d/{token}/{turn}", turns.turn_page, methods=["GET"]),
                Route("/d/{token}/{turn}", turns.speak, methods=["POST"]),
                Route("/ballot.css", frame.style, methods=["GET"]),
                Route("/count.js", frame.script, methods=["GET"])],
        middleware=[Middleware(SecurityHeaders)],
        exception_handlers={HTTPException: frame.refuse, Exception: frame.crash})
    app.router.redirect_slashes = False  # Starlette's redirect is an absolute URL on the Host header; see refuse
    app.state.judges, app.state.debaters = judges, debaters
    return app


def serve(workspace_path: Path, host: str = "127.0.0.1", port: int = SERVE_PORT,
          ready: Callable[[str, list[JudgeSpec], list[str]], None] = lambda url, judges, debaters: None) -> None:
    """Serve create_app(workspace_path) on host:port until Ctrl-C or SIGTERM, then return; ready(url, judges of
    people, web debaters' entry names) once the address is taken."""
    app = create_app(workspace_path)
    sock = _listen(host, port)
    bound = sock.getsockname()[1]
    ready(f"http://{f'[{host}]' if ':' in host else host}:{bound}", app.state.judges, app.state.debaters)
    previous = signal.signal(signal.SIGTERM, stop)
    try:
        uvicorn.Server(uvicorn_config(app)).run(sockets=[sock])
    except (KeyboardInterrupt, Stop):  # uvicorn re-raises the signal that stopped it, once stopped
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        sock.close()
