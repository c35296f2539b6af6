"""The web app's debater pages (/d/...): a web human entry's turns, a turn's blind brief with the speech form, and the
speech saved as a draft or submitted."""
from __future__ import annotations

import hashlib
import hmac
import math
from dataclasses import dataclass
from typing import Any, Sequence

from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from arena.app.people.forms import posted
from arena.app.people.frame import Frame
from arena.app.people.security import COUNTED_CSP
from arena.base.clock import now
from arena.analysis.outcomes import match_outcome
from arena.domain.ballots import BallotError, open_ballots, token_hash
from arena.domain.formats import Format, shown
from arena.domain.records import HumanTurn, JudgeSpec, Outcome, Side, TurnKey, Verdict, score
from arena.domain.speechchecks import Problem, length
from arena.match.turns import Standing, most, standing
from arena.domain.transcript import match_keys
from arena.match.turns import problem as speech_problem
from arena.store import Store


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


@dataclass(frozen=True)
class Judged:
    """One judge's decision on a finished debate, as its debater's page shows it: what the published site shows of
    it too, the judge's name, score and reasons (its judges saw only PRO and CON)."""

    judge: str
    pro: float
    con: float
    winner: Outcome
    reasons: tuple[str, ...]


@dataclass(frozen=True)
class Result:
    """A finished debate's result on its debater's page: a forfeit (the side), or the judges' decisions so far;
    held while people still judge it blind (the published site holds it back then too)."""

    forfeit: Side | None = None
    judged: tuple[Judged, ...] = ()
    held: bool = False


class TurnPages:
    """The turn pages of the web human entries served, whose turn ids are made under the workspace's secret; a
    speech submitted must pass the speech checks with at least min_share of its budget (unless its turn says).
    judges: the judges of people served, whose open ballots hold a finished debate's result back."""

    def __init__(self, frame: Frame, debaters: list[str], key: bytes, min_share: float,
                 judges: Sequence[JudgeSpec] = ()) -> None:
        self.frame, self.key, self.min_share = frame, key, min_share
        self.debaters = set(debaters)
        self.judges = tuple(judges)

    # --- who and what ------------------------------------------------------------------------------------
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

    def _turn(self, store: Store, debater: Debater, turn: str) -> tuple[HumanTurn, Standing]:
        """The debater's turn the id names (the ids of their turns are worked out again, as none is stored), and
        where it stands (arena.match.turns.standing); 404 for anything else."""
        key = next((k for k in store.turn_keys(debater.entry) if self._turn_id(debater, k) == turn), None)
        found = None if key is None else store.human_turn(*key)
        if found is None:
            raise HTTPException(404)
        return found, standing(found, found.match_id in store.done_turn_matches(debater.entry))

    def _turn_lookup(self, token: str, turn: str) -> tuple[Debater, HumanTurn, Standing]:
        with self.frame.store() as store:
            debater = self._debater(store, token)
            return debater, *self._turn(store, debater, turn)

    def _format(self, turn: HumanTurn) -> Format:
        return shown(turn.brief.format, self.frame.formats)

    def _least(self, turn: HumanTurn, fmt: Format) -> int:
        """The fewest words (or characters) a speech of the turn must have: the too-short check's line."""
        own = next((t for t in fmt.stage_turns(turn.stage) if t.side == turn.side), None)
        share = self.min_share if own is None or own.min_share is None else own.min_share
        return math.ceil(share * turn.brief.budget.amount)

    # --- pages ---------------------------------------------------------------------------------------------
    def turns_page(self, request: Request) -> HTMLResponse:
        """The debater's turns in schedule order: those still to write, those submitted, those whose deadline passed
        with no speech."""
        with self.frame.store() as store:
            debater = self._debater(store, request.path_params["token"])
            turns = store.turns_of(debater.entry)
            finished = store.done_turn_matches(debater.entry)
            results = self._results(store, finished)
        # The person's own numbers for their debates, in schedule order: two on one motion read apart, and no
        # public match id, entry or opponent is named
        number = {m: k for k, m in enumerate(dict.fromkeys(t.match_id for t in turns), start=1)}
        to_write: list[dict[str, Any]] = []
        done: list[dict[str, Any]] = []
        missed: list[dict[str, Any]] = []  # lapsed, and those whose match went on without them
        ended: dict[str, dict[str, Any]] = {}  # the finished debates, each once, with its result
        moment = now()
        lists = {"submitted": done, "open": to_write, "lapsed": missed, "missed": missed}
        for t in turns:
            item = {"id": self._turn_id(debater, t), "motion": t.brief.motion, "side": t.side,
                    "title": t.brief.title, "language": t.brief.language, "deadline": t.deadline,
                    "draft": bool(t.draft), "submitted_at": t.submitted_at, "debate": number[t.match_id]}
            lists[standing(t, t.match_id in finished, moment)].append(item)
            if t.match_id in finished:
                ended.setdefault(t.match_id, {**item, "result": results[t.match_id]})
        submitted = request.query_params.get("submitted")
        return self.frame.render(request, "debates.html.j2", token=debater.token, open=to_write, done=done,
                                 missed=missed, ended=list(ended.values()),
                                 submitted=next((item for item in done if item["id"] == submitted), None))

    def _results(self, store: Store, finished: set[str]) -> dict[str, Result]:
        """Each finished debate's result: its forfeit, or each judge's decision in arena.toml's order (those with a
        failed run left out, as the ratings leave them); held back while a judge of people served still has a
        ballot to come on it, as the published site holds it (arena.app.people.ballot_links.embargo)."""
        closed = store.closed_judges()
        held = set().union(*(open_ballots(finished, len(j.people), store.ballots_cast(j.name))
                             for j in self.judges if j.name not in closed))
        out: dict[str, Result] = {}
        for match_id in finished:
            match = store.match(match_id)
            if match is not None and match.forfeit is not None:  # no one judges a forfeit: nothing to hold
                out[match_id] = Result(forfeit=match.forfeit.side)
                continue
            if match is None or match_id in held:
                out[match_id] = Result(held=True)
                continue
            runs: dict[str, list[Verdict]] = {}
            for v in match.verdicts:
                runs.setdefault(v.judge, []).append(v)
            judged = []
            for judge, verdicts in runs.items():
                if any(v.failed for v in verdicts):
                    continue
                pro, con = score(verdicts)
                judged.append(Judged(judge, pro, con, match_outcome(pro, con),
                                     tuple(v.rationale for v in verdicts if v.rationale)))
            out[match_id] = Result(judged=tuple(judged))
        return out

    def turn_page(self, request: Request) -> HTMLResponse:
        """A turn's page; after a draft is saved (?saved=draft), with a note saying so."""
        debater, turn, stands = self._turn_lookup(request.path_params["token"], request.path_params["turn"])
        saved = request.query_params.get("saved") == "draft" and turn.draft_at is not None
        return self._writing(request, debater, turn, stands, turn.draft, saved=saved)

    def _writing(self, request: Request, debater: Debater, turn: HumanTurn, stands: Standing, text: str, *,
                 problem: Problem | None = None, saved: bool = False, status: int = 200) -> HTMLResponse:
        """A turn's page: its brief (its stages' titles and purpose as the debaters of its language read them) and
        exactly the speeches it showed, then the speech form (text in it) of an open turn, or the submitted speech
        read-only, or word that the speech is no longer taken. Only the brief reaches the template: never the
        entries, their models, or the other side's name."""
        fmt = self._format(turn)
        stage_turns = fmt.stage_turns(turn.stage)
        writing = stands == "open"
        least = self._least(turn, fmt)
        response = self.frame.render(
            request, "turn.html.j2", status, token=debater.token, turn=turn, brief=turn.brief,
            motion=turn.brief.motion, blind=len(stage_turns) > 1 and all(t.blind for t in stage_turns),
            least=least, most=most(turn.brief.budget), count=length(text, turn.brief.language)[0], text=text,
            writing=writing, saved=saved,
            problem=problem and self._reason(problem, turn, text, least),
            csrf=self.frame.csrf.token(debater.digest, subject(turn)))
        if writing:
            response.headers["Content-Security-Policy"] = COUNTED_CSP
        return response

    def _reason(self, problem: Problem, turn: HumanTurn, text: str, least: int) -> tuple[str, str]:
        """(why the speech is not taken, in the page's language; the check's own words, in English, or "")."""
        if problem.check == "too-short":
            amount, unit = length(text, turn.brief.language)
            return self.frame.words.too_short(amount, unit, least), ""
        if problem.check == "too-long":  # the count in the page's words; the detail names the field
            amount, unit = length(text, turn.brief.language)
            return self.frame.words.too_long(amount, unit, most(turn.brief.budget)), problem.detail
        return self.frame.words.reason(problem.check), problem.detail

    async def speak(self, request: Request) -> Response:
        """Save a draft or submit the speech of a turn: 404 for a bad link or turn (before the body is read, and
        again once it is), 413 for an oversized body, 408 for one that takes longer than the frame's read_s to
        come, 400 for a body that is not the form."""
        token, named = request.path_params["token"], request.path_params["turn"]
        await run_in_threadpool(self._turn_lookup, token, named)  # a bad link costs no body read
        try:
            fields = await posted(request, self.frame.read_s)
        except BallotError:  # bytes that are not UTF-8: no speech to show again
            raise HTTPException(400) from None
        return await run_in_threadpool(self._take, request, token, named, fields)

    def _take(self, request: Request, token: str, named: str, fields: dict[str, str]) -> Response:
        """The request whole, its link and turn are looked up again (404: `arena debaters issue` may have replaced
        the link while the body came); then 403 without the form's CSRF token, 400 for an action that is neither
        save nor submit, 409 once the speech is submitted, 410 unless the turn is open (past its deadline, or its
        match went on without it); a speech that fails a check (arena.match.turns.problem: too long included) is
        not taken: the page again, status 400, with the text and why. The store's write checks link, turn and
        deadline once more in the transaction that stores the text (Store.take_speech). Else 303: a draft back to
        its page, a speech to the list."""
        debater, turn, stands = self._turn_lookup(token, named)
        if not self.frame.csrf.ok(debater.digest, subject(turn), fields.get("csrf", "")):
            raise HTTPException(403)
        action = fields.get("action")
        if action not in ("save", "submit"):
            raise HTTPException(400)
        if stands != "open":
            raise HTTPException(409 if stands == "submitted" else 410)
        text = fields.get("speech", "").replace("\r\n", "\n")  # a textarea's line breaks come as CRLF
        if action == "submit" and (problem := speech_problem(turn, text, self._format(turn), self.min_share,
                                                             match_keys(self.key, turn.match_id))):
            return self._writing(request, debater, turn, stands, text, problem=problem, status=400)
        with self.frame.store() as store:
            taken = store.take_speech(turn.match_id, turn.stage, turn.side, text, submit=action == "submit",
                                      link=debater.digest)
        if taken != "taken":  # changed since it was read just above
            raise HTTPException({"unknown": 404, "submitted": 409, "closed": 410}[taken])
        if action == "save":
            return RedirectResponse(f"{named}?saved=draft", status_code=303)
        return RedirectResponse(f"../{debater.token}?submitted={named}", status_code=303)


def subject(turn: HumanTurn) -> str:
    """What a turn's form is about, for its CSRF token."""
    return f"{turn.match_id}/{turn.stage}/{turn.side}"
