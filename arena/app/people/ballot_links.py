"""`arena ballots issue | status | close | import`: people judging through private links or collected ballots, and
the embargo their open ballots put on the published site."""
from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from arena.app.shapes.reports import BallotLink, BallotsClosed, BallotsImported, BallotStatus
from arena.domain.ballots import DEFAULT_BASE_URL, link_base, new_token, open_ballots, read_ballots, token_hash
from arena.base.errors import UserError
from arena.gateway.offline import simulated_ballot
from arena.domain.records import JudgeSpec
from arena.workspace.folder import Workspace


def _human_judges(ws: Workspace, judge: str | None) -> list[JudgeSpec]:
    try:
        return [ws.config.human_judge(judge)] if judge else [j for j in ws.config.judges if j.casts_ballots]
    except UserError as exc:
        raise UserError(f"--judge: {exc}") from None


@dataclass(frozen=True)
class Embargo:
    """What the published site holds back while people judge (arena.app.site_data leaves it out everywhere)."""

    awaiting: frozenset[str]  # done matches on which an open judge of people still has a ballot to come
    unplayed: frozenset[str]  # matches not done yet while a judge of people is open: their ballots will open

    @property
    def withheld(self) -> frozenset[str]:
        return self.awaiting | self.unplayed


def _holds(ws: Workspace, spec: JudgeSpec, done: list[str], closed: dict[str, str]) -> set[str]:
    """The done matches the judge of people embargoes: none once closed, else those one of its people has not
    cast a ballot on yet."""
    return set() if spec.name in closed else open_ballots(done, len(spec.people), ws.store.ballots_cast(spec.name))


def embargo(ws: Workspace) -> Embargo:
    """The matches the published site leaves out: done ones with a ballot still open to a judge of people that
    is not closed, and, while such a judge is open, those not yet done (their motion and pairing, published
    now, would name the debate a person is later asked to judge)."""
    closed = ws.store.closed_judges()
    judging = [spec for spec in ws.config.judges if spec.casts_ballots and spec.name not in closed]
    done = ws.store.debated_match_ids()
    awaiting = set().union(*(_holds(ws, spec, done, closed) for spec in judging))
    unplayed = set(ws.store.match_ids(done=False)) if judging else set()
    return Embargo(frozenset(awaiting), frozenset(unplayed))


def _counts(ws: Workspace, spec: JudgeSpec, done: list[str], closed: dict[str, str]) -> list[BallotStatus]:
    cast = ws.store.ballots_cast(spec.name)
    state: Literal["open", "closed"] = "closed" if spec.name in closed else "open"
    held = len(_holds(ws, spec, done, closed))
    return [{"judge": spec.name, "person": person, "assigned": len(done), "cast": len(cast.get(run, ())),
             "state": state, "embargoed": held}
            for run, person in enumerate(spec.people)]


def issue(ws: Workspace, judge: str, base_url: str = DEFAULT_BASE_URL) -> list[BallotLink]:
    """A new private link for each of the judge's people (their earlier links stop working):
    [{person, url, assigned (done matches), cast (their ballots so far)}]. The token is shown only here. A
    closed judge is open again: its links take ballots, and its open ballots embargo their matches again."""
    spec = _human_judges(ws, judge)[0]
    base = link_base(base_url)
    tokens = {person: new_token() for person in spec.people}
    ws.store.issue_links(spec.name, {person: token_hash(token) for person, token in tokens.items()})
    rows = _counts(ws, spec, ws.store.debated_match_ids(), ws.store.closed_judges())
    return [{"person": r["person"], "url": f"{base}/b/{tokens[r['person']]}",
             "assigned": r["assigned"], "cast": r["cast"]} for r in rows]


def status(ws: Workspace, judge: str | None = None) -> list[BallotStatus]:
    """[{judge, person, assigned, cast, state (open | closed), embargoed (the matches the judge holds back
    from the published site)}] for every person of the named (default: every) judge of people."""
    done, closed = ws.store.debated_match_ids(), ws.store.closed_judges()
    return [row for spec in _human_judges(ws, judge) for row in _counts(ws, spec, done, closed)]


def close(ws: Workspace, judge: str) -> BallotsClosed:
    """Close the judge's ballots: its people's links take no more ballots and the matches it embargoed are
    published (unless another open judge of people still holds them) until `issue` reopens it.
    {judge, closed_at, already (closed before), held (the matches it had open ballots on), embargoed (done
    matches the site still leaves out, for other open judges of people)}."""
    spec = _human_judges(ws, judge)[0]
    closed = ws.store.closed_judges()
    held = _holds(ws, spec, ws.store.debated_match_ids(), closed)
    closed_at = ws.store.close_ballots(spec.name)
    return {"judge": spec.name, "closed_at": closed_at, "already": spec.name in closed, "held": len(held),
            "embargoed": len(embargo(ws).awaiting)}


def import_csv(ws: Workspace, path: Path, judge: str) -> BallotsImported:
    """Store the ballots of a CSV (arena.domain.ballots.IMPORT_HEADER) all at once, each replacing the person's
    earlier ballot on its match; a bad row refuses the file, naming FILE:LINE. {judge, ballots, people}."""
    spec = _human_judges(ws, judge)[0]
    ballots = read_ballots(Path(path), spec, set(ws.store.debated_match_ids()))
    ws.store.cast_ballots(spec.name, spec.people, ballots, simulated=spec.simulated)
    return {"judge": spec.name, "ballots": len(ballots), "people": len({b.person for b in ballots})}


def simulate(ws: Workspace, judge: str, seed: int = 0) -> int:
    """Ballots of a simulated judge of people (offline/ model) on every done match a person has none on: the
    simulator's reading of each debate, as a person with their own noise would vote. Returns how many."""
    spec = _human_judges(ws, judge)[0]
    if not spec.simulated:
        raise UserError(f"judge {spec.name!r}: only a judge of people on an offline/ model has simulated ballots")
    cast = ws.store.ballots_cast(spec.name)
    ballots = [simulated_ballot(match, person, random.Random(f"{seed}/{person}/{match.id}"))
               for match in ws.store.matches() if match.status == "done" and match.forfeit is None  # four queries
               for run, person in enumerate(spec.people) if match.id not in cast.get(run, ())]
    ws.store.cast_ballots(spec.name, spec.people, ballots, simulated=True)
    return len(ballots)
