"""`arena ballots issue | status | import`: people judging through private links or collected ballots."""
from __future__ import annotations

import random
from pathlib import Path

from arena.ballots import new_token, read_ballots, token_hash
from arena.errors import UserError
from arena.offline import simulated_ballot
from arena.records import JudgeSpec
from arena.workspace import Workspace

DEFAULT_BASE_URL = "http://127.0.0.1:8000"  # where `arena serve` listens by default


def _human_judges(ws: Workspace, judge: str | None) -> list[JudgeSpec]:
    try:
        return [ws.config.human_judge(judge)] if judge else [j for j in ws.config.judges if j.casts_ballots]
    except UserError as exc:
        raise UserError(f"--judge: {exc}") from None


def _counts(ws: Workspace, spec: JudgeSpec, done: int) -> list[dict]:
    cast = ws.store.ballots_cast(spec.name)
    return [{"judge": spec.name, "person": person, "assigned": done, "cast": len(cast.get(run, ()))}
            for run, person in enumerate(spec.people)]


def issue(ws: Workspace, judge: str, base_url: str = DEFAULT_BASE_URL) -> list[dict]:
    """A new private link for each of the judge's people (their earlier links stop working):
    [{person, url, assigned (done matches), cast (their ballots so far)}]. The token is shown only here."""
    spec = _human_judges(ws, judge)[0]
    if not base_url.startswith(("http://", "https://")):
        raise UserError(f"--base-url: expected an http(s) URL such as {DEFAULT_BASE_URL}, got {base_url!r}")
    tokens = {person: new_token() for person in spec.people}
    ws.store.issue_links(spec.name, {person: token_hash(token) for person, token in tokens.items()})
    rows = _counts(ws, spec, len(ws.store.done_match_ids()))
    return [{"person": r["person"], "url": f"{base_url.rstrip('/')}/b/{tokens[r['person']]}",
             "assigned": r["assigned"], "cast": r["cast"]} for r in rows]


def status(ws: Workspace, judge: str | None = None) -> list[dict]:
    """[{judge, person, assigned, cast}] for every person of the named (default: every) judge of people."""
    done = len(ws.store.done_match_ids())
    return [row for spec in _human_judges(ws, judge) for row in _counts(ws, spec, done)]


def import_csv(ws: Workspace, path: Path, judge: str) -> dict:
    """Store the ballots of a CSV (arena.ballots.IMPORT_HEADER) all at once, each replacing the person's
    earlier ballot on its match; a bad row refuses the file, naming FILE:LINE. {judge, ballots, people}."""
    spec = _human_judges(ws, judge)[0]
    ballots = read_ballots(Path(path), spec, set(ws.store.done_match_ids()))
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
