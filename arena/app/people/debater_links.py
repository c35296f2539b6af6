"""`arena debaters issue | status | extend`: people who debate on the web (human entries with via = "web"): their
private links, their turns, and more time for those still open; and the turn an awaiting match is parked at."""
from __future__ import annotations

from arena.app.shapes.reports import DebaterExtended, DebaterLink, DebaterStatus, OpenTurn
from arena.domain.ballots import link_base, new_token, token_hash
from arena.base.clock import now
from arena.base.errors import UserError
from arena.domain.records import HUMAN_DEBATER, Entry, HumanTurn, Match
from arena.match.turns import lapsed, standing
from arena.workspace.folder import Workspace


def web_debaters(ws: Workspace) -> list[Entry]:
    """The configured entries whose person writes on the web, in arena.toml order."""
    return [e for e in ws.config.entries if e.on_the_web]


def _named(ws: Workspace, name: str) -> Entry:
    """The web debater --entry names; a UserError naming it otherwise."""
    try:
        entry = ws.config.entry(name)
    except UserError as exc:
        raise UserError(f"--entry: {exc}") from None
    if not entry.on_the_web:
        known = ", ".join(e.name for e in web_debaters(ws)) or "none configured"
        raise UserError(f"--entry: entry {name!r} is not a web debater (a {HUMAN_DEBATER} entry with "
                        f'[entries.params] via = "web"); web debaters: {known}')
    return entry


class _Turns:
    """An entry's turns, sorted as the person's pages sort them (arena.match.turns.standing): done (submitted), open
    (its match still awaits the speech; lapsed ones among them, past their deadline, which the next run forfeits) and
    missed (the match went on without it)."""

    def __init__(self, turns: list[HumanTurn], finished: set[str]):
        moment = now()
        stands = [(t, standing(t, t.match_id in finished, moment)) for t in turns]
        self.done = [t for t, s in stands if s == "submitted"]
        self.open = [t for t, s in stands if s in ("open", "lapsed")]
        self.missed = [t for t, s in stands if s == "missed"]


def _turns(ws: Workspace, entry: str) -> _Turns:
    return _Turns(ws.store.turns_of(entry), ws.store.done_turn_matches(entry))


def _open(turns: list[HumanTurn]) -> list[OpenTurn]:
    moment = now()
    return [{"match": t.match_id, "stage": t.stage, "side": t.side, "since": t.opened_at, "deadline": t.deadline,
             "lapsed": lapsed(t, moment)} for t in turns]


def issue(ws: Workspace, entry: str | None, base_url: str) -> list[DebaterLink]:
    """A new private link for each web debater, or the one named (their earlier links stop working):
    [{entry, url, pending (open turns), done (submitted turns)}]. The token is shown only here."""
    entries = [_named(ws, entry)] if entry else web_debaters(ws)
    base = link_base(base_url)
    rows: list[DebaterLink] = []
    for e in entries:
        token = new_token()
        ws.store.issue_debater_link(e.name, token_hash(token))
        turns = _turns(ws, e.name)
        rows.append({"entry": e.name, "url": f"{base}/d/{token}", "pending": len(turns.open),
                     "done": len(turns.done)})
    return rows


def status(ws: Workspace) -> list[DebaterStatus]:
    """Every web debater's turns: [{entry, pending, done, missed, open: [{match, stage, side, since, deadline,
    lapsed}]}]."""
    rows: list[DebaterStatus] = []
    for e in web_debaters(ws):
        turns = _turns(ws, e.name)
        rows.append({"entry": e.name, "pending": len(turns.open), "done": len(turns.done),
                     "missed": len(turns.missed), "open": _open(turns.open)})
    return rows


def extend(ws: Workspace, entry: str, hours: float) -> DebaterExtended:
    """Move the deadline of each of the web debater's unwritten turns hours later (from now, for one past it):
    {entry, hours, extended (how many), open (its open turns now)}."""
    name = _named(ws, entry).name
    extended = ws.store.extend_turns(name, hours)
    return {"entry": name, "hours": hours, "extended": extended, "open": _open(_turns(ws, name).open)}


def awaited_turn(ws: Workspace, match: Match) -> HumanTurn | None:
    """The turn an awaiting match is parked at: its latest turn with no speech yet, else its latest turn (a
    speech in, which the next run takes); None for a match of another status."""
    if match.status != "awaiting":
        return None
    turns = ws.store.match_turns(match.id)
    unwritten = [t for t in turns if not t.submitted]
    return (unwritten or turns)[-1] if turns else None
