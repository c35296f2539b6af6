"""The web app's ballot pages (/b/...): a judge's person's queue of done matches, a match's blind transcript with the
ballot form, and the ballot cast."""
from __future__ import annotations

from dataclasses import dataclass

from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from arena.app.people.forms import posted
from arena.app.people.frame import Frame
from arena.domain.ballots import RATIONALE_MAX, BallotError, ballot_id, check_ballot, queue, token_hash
from arena.domain.formats import shown
from arena.domain.records import JudgeSpec, Match, Motion
from arena.store import Store


@dataclass(frozen=True)
class Person:
    """Who a live link belongs to: their judge, their name, their run (place in people) and the link itself."""

    judge: JudgeSpec
    name: str
    run: int
    token: str
    digest: str  # the token's hash: what the store knows and the CSRF token is bound to


class BallotPages:
    """The ballot pages of the judges of people served, whose ballot ids are made under the workspace's secret."""

    def __init__(self, frame: Frame, judges: list[JudgeSpec], key: bytes) -> None:
        self.frame, self.key = frame, key
        self.judges = {j.name: j for j in judges}

    # --- who and what ------------------------------------------------------------------------------------
    def _person(self, store: Store, token: str) -> Person:
        """The holder of a live link; 404 for any other token, or for a person no longer configured; 410 once
        their judge's ballots are closed."""
        digest = token_hash(token)
        held = store.link_holder(digest)
        if held is None:
            raise HTTPException(404)
        judge_name, person = held
        judge = self.judges.get(judge_name)
        if judge is None or person not in judge.people:
            raise HTTPException(404)
        if judge.name in store.closed_judges():
            raise HTTPException(410)
        return Person(judge, person, judge.people.index(person), token, digest)

    def _ballot_id(self, person: Person, match_id: str) -> str:
        return ballot_id(self.key, person.judge.name, person.name, match_id)

    def _done_match(self, store: Store, person: Person, ballot: str) -> Match:
        """The done match the person's ballot id names (the ids of their queue are worked out again, as none is
        stored); 404 for anything else."""
        done = store.debated_match_ids()  # a forfeit has no debate to judge
        match_id = next((m for m in done if self._ballot_id(person, m) == ballot), None)
        match = None if match_id is None else store.match(match_id)
        if match is None:
            raise HTTPException(404)
        return match

    def _lookup(self, token: str, ballot: str) -> tuple[Person, Match]:
        with self.frame.store() as store:
            person = self._person(store, token)
            return person, self._done_match(store, person, ballot)

    # --- pages ---------------------------------------------------------------------------------------------
    def queue_page(self, request: Request) -> HTMLResponse:
        """The person's queue: done matches in their order, those still to judge first, then those cast."""
        with self.frame.store() as store:
            person = self._person(store, request.path_params["token"])
            done = store.debated_match_ids()
            cast_ids = store.ballots_cast(person.judge.name).get(person.run, set())
            motions = motions_of(store, done)
        order = queue(person.judge.name, person.name, done)
        items = {m: {"id": self._ballot_id(person, m), "motion": motions[m]} for m in order}
        todo = [items[m] for m in order if m not in cast_ids]
        cast_items = [items[m] for m in order if m in cast_ids]
        saved = request.query_params.get("saved")
        return self.frame.render(request, "queue.html.j2", token=person.token, todo=todo, cast=cast_items,
                                 saved=next((item for item in cast_items if item["id"] == saved), None))

    def ballot_page(self, request: Request) -> HTMLResponse:
        """A done match, blind, with the ballot form; the person's ballot on it, if cast, fills the form."""
        with self.frame.store() as store:  # one connection for the page
            person = self._person(store, request.path_params["token"])
            match = self._done_match(store, person, request.path_params["ballot"])
            previous = store.ballot(match.id, person.judge.name, person.run)
        chosen: dict[str, str | None] = {} if previous is None else {
            "overall": previous.overall, **previous.dimensions, "rationale": previous.rationale}
        return self._ballot(request, person, match, chosen, cast=previous is not None)

    def _ballot(self, request: Request, person: Person, match: Match, chosen: dict[str, str | None], *,
                cast: bool, error: BallotError | None = None, status: int = 200) -> HTMLResponse:
        """The ballot page. Only the motion and the speeches reach the template: never the entries, their
        models, or any verdict."""
        frame = self.frame
        fmt = shown(match.format, frame.formats)
        speeches = fmt.ordered(match.speeches)  # in the format's order, its stages under their titles
        stages = [(stage, fmt.title_of(stage, frame.language), [s for s in speeches if s.stage == stage])
                  for stage in dict.fromkeys(s.stage for s in speeches)]
        return frame.render(request, "ballot.html.j2", status, token=person.token, motion=match.motion,
                            stages=stages,
                            questions=frame.words.questions, labels=frame.words.labels, chosen=chosen, cast=cast,
                            error=error, problem=error and frame.words.problem(error),
                            csrf=frame.csrf.token(person.digest, match.id), rationale_max=RATIONALE_MAX)

    async def cast(self, request: Request) -> Response:
        """Check and store a ballot: 404 for a bad link or match, 413 for an oversized body, 403 without the
        form's CSRF token, 400 (the page again, with what was entered and the problem) for a bad ballot."""
        token, named = request.path_params["token"], request.path_params["ballot"]
        person, match = await run_in_threadpool(self._lookup, token, named)  # a bad link costs no body read
        try:
            fields = await posted(request, self.frame.read_s)
        except BallotError as exc:  # bytes that are not UTF-8: the form again (empty), naming the field
            return await run_in_threadpool(self._refused, request, person, match, {}, exc)
        return await run_in_threadpool(self._store_ballot, request, token, named, fields)

    def _store_ballot(self, request: Request, token: str, named: str, fields: dict[str, str]) -> Response:
        """The request whole, its link and match are looked up again (404, or 410 once ballots are closed: `arena
        ballots issue` or `close` may have come while the body did), and once more in the transaction that stores
        the ballot."""
        person, match = self._lookup(token, named)
        if not self.frame.csrf.ok(person.digest, match.id, fields.get("csrf", "")):
            raise HTTPException(403)
        try:
            ballot = check_ballot(match.id, person.name, fields, dimensions_required=True, rationale_required=True)
        except BallotError as exc:
            return self._refused(request, person, match, fields, exc)
        with self.frame.store() as store:
            if not store.cast_ballots(person.judge.name, person.judge.people, [ballot],
                                      simulated=person.judge.simulated, link=person.digest):
                raise HTTPException(410 if person.judge.name in store.closed_judges() else 404)
        return RedirectResponse(f"../{person.token}?saved={self._ballot_id(person, match.id)}", status_code=303)

    def _refused(self, request: Request, person: Person, match: Match, fields: dict[str, str],
                 error: BallotError) -> HTMLResponse:
        """The ballot page again, status 400, with what was entered and the problem."""
        chosen: dict[str, str | None] = {key: value for key, value in fields.items() if key != "csrf"}
        with self.frame.store() as store:
            cast = store.ballot(match.id, person.judge.name, person.run) is not None
        return self._ballot(request, person, match, chosen, cast=cast, error=error, status=400)


def motions_of(store: Store, match_ids: list[str]) -> dict[str, Motion]:
    """The motion of each match, each motion read once."""
    wanted = set(match_ids)
    motion_of = {m.id: m.motion_id for m in store.match_states() if m.id in wanted}
    motions: dict[str, Motion] = {}
    for motion_id in set(motion_of.values()):
        motion = store.motion(motion_id)
        if motion is None:  # a match's motion is stored with it: no match names one that is not there
            raise LookupError(f"motion {motion_id} of a stored match is not in the database")
        motions[motion_id] = motion
    return {match_id: motions[motion_id] for match_id, motion_id in motion_of.items()}
