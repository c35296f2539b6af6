"""The store's turns of people who debate on the web: their private links, each turn a match reached (what it
showed them, their draft, their speech), and the matches parked until a speech is in."""
from __future__ import annotations

import json
import sqlite3
from datetime import datetime, timedelta
from typing import Any, Literal, Mapping

from arena.match.claims import Holder
from arena.match.turns import standing, too_long
from arena.base.clock import now
from arena.base.errors import UserError
from arena.domain.records import Brief, HumanTurn, TurnKey
from arena.store.claims import PLAY, SPOKEN, release_or_lose
import arena.store.decode as decode
from arena.store.connection import Database, write

_TURN = ("match_id, stage, side, entry, opened_at, deadline, brief, draft, draft_at, speech, submitted_at")

# What a write of a turn's speech (or draft) found: it is taken; the turn is unknown (not there, or the link the
# request came by is no longer its entry's); its speech is in already; or it is closed (its deadline passed, or its
# match went on without it: arena.match.turns.standing).
Taken = Literal["taken", "unknown", "submitted", "closed"]


class Turns(Database):
    def issue_debater_link(self, entry: str, digest: str) -> None:
        """Give the entry a new link (its token's hash); its earlier link stops working."""
        with write(self.conn):
            self.conn.execute("DELETE FROM debater_links WHERE entry=?", (entry,))
            self.conn.execute("INSERT INTO debater_links VALUES (?,?,?)", (digest, entry, now()))

    def debater_link_holder(self, digest: str) -> str | None:
        """The entry whose link has this token hash, else None."""
        value = self._scalar("SELECT entry FROM debater_links WHERE token_hash=?", (digest,))
        return None if value is None else str(value)

    def open_turn(self, match_id: str, stage: str, side: str, entry: str, brief: Brief,
                  deadline: str) -> HumanTurn:
        """The entry's turn of (match, stage, side): opened now, unless it was opened before (a replay of the match
        reaches it again), in which case as it stands."""
        with write(self.conn):
            self.conn.execute("INSERT OR IGNORE INTO turns (match_id, stage, side, entry, opened_at, deadline, brief)"
                              " VALUES (?,?,?,?,?,?,?)", (match_id, stage, side, entry, now(), deadline,
                                                          json.dumps(brief_json(brief), ensure_ascii=False)))
        turn = self.human_turn(match_id, stage, side)
        assert turn is not None  # written just above
        return turn

    def human_turn(self, match_id: str, stage: str, side: str) -> HumanTurn | None:
        """The turn of (match, stage, side), if a person's was opened."""
        row = self.conn.execute(f"SELECT {_TURN} FROM turns WHERE match_id=? AND stage=? AND side=?",
                                (match_id, stage, side)).fetchone()
        return None if row is None else _turn(row)

    def turns_of(self, entry: str) -> list[HumanTurn]:
        """The entry's turns, in schedule order and then as opened."""
        return [_turn(r) for r in self.conn.execute(
            f"SELECT {', '.join('t.' + c.strip() for c in _TURN.split(','))} FROM turns t JOIN matches m ON "
            "m.id = t.match_id WHERE t.entry=? ORDER BY m.seq, t.opened_at", (entry,))]

    def match_turns(self, match_id: str) -> list[HumanTurn]:
        """A match's people's turns, as opened."""
        return [_turn(r) for r in self.conn.execute(
            f"SELECT {_TURN} FROM turns WHERE match_id=? ORDER BY opened_at", (match_id,))]

    def turn_keys(self, entry: str) -> list[TurnKey]:
        """Which turns the entry has, without what they showed: finding one by an id made from its key reads no
        brief."""
        return [TurnKey(r[0], r[1], r[2]) for r in self.conn.execute(
            "SELECT match_id, stage, side FROM turns WHERE entry=?", (entry,))]

    def save_draft(self, match_id: str, stage: str, side: str, text: str) -> bool:
        """Keep a draft of an open turn's speech (take_speech); False when it is not taken."""
        return self.take_speech(match_id, stage, side, text, submit=False) == "taken"

    def submit_speech(self, match_id: str, stage: str, side: str, text: str) -> bool:
        """Take an open turn's speech, once (take_speech): False when it is not taken (a submitted speech cannot
        change); UserError, storing nothing, for a speech longer than the turn takes."""
        return self.take_speech(match_id, stage, side, text, submit=True) == "taken"

    def take_speech(self, match_id: str, stage: str, side: str, text: str, *, submit: bool,
                    link: str | None = None) -> Taken:
        """Keep a draft of a turn's speech, or (submit) take the speech, in one transaction that reads the turn
        again as it writes, so that nothing that changed since a request began is missed: with link (a token's
        hash), the turn is "unknown" unless that is still its entry's live link (`arena debaters issue` replaced
        it); "submitted" once its speech is in; "closed" unless it is open (arena.match.turns.standing). A speech
        longer than the turn takes (arena.match.turns.too_long) is a UserError naming its length, nothing stored."""
        with write(self.conn):
            row = self.conn.execute(
                f"SELECT {', '.join('t.' + c.strip() for c in _TURN.split(','))}, m.status = 'done' AS done, "
                "(SELECT l.entry FROM debater_links l WHERE l.token_hash = ?) AS holder FROM turns t JOIN matches m "
                "ON m.id = t.match_id WHERE t.match_id=? AND t.stage=? AND t.side=?",
                (link, match_id, stage, side)).fetchone()
            if row is None or (link is not None and row["holder"] != row["entry"]):
                return "unknown"
            turn, at = _turn(row), now()
            stands = standing(turn, bool(row["done"]), at)
            if stands != "open":
                return "submitted" if stands == "submitted" else "closed"
            if not submit:
                self.conn.execute("UPDATE turns SET draft=?, draft_at=? WHERE match_id=? AND stage=? AND side=?",
                                  (text, at, match_id, stage, side))
                return "taken"
            if (overlong := too_long(turn.brief, text)) is not None:
                raise UserError(f"match {match_id}, {side.upper()} {stage}: {overlong.detail}; shorten it")
            self.conn.execute("UPDATE turns SET speech=?, submitted_at=?, draft=? WHERE match_id=? AND stage=? AND "
                              "side=?", (text, at, text, match_id, stage, side))
        return "taken"

    def done_turn_matches(self, entry: str) -> set[str]:
        """The matches of the entry's turns that are done (whether or not its speech is in)."""
        return {r[0] for r in self.conn.execute(
            "SELECT DISTINCT t.match_id FROM turns t JOIN matches m ON m.id = t.match_id WHERE t.entry=? AND "
            "m.status='done'", (entry,))}

    def extend_turns(self, entry: str, hours: float) -> int:
        """Move the deadline of each of the entry's open turns (of matches not yet done) hours later (from now, if it
        has lapsed); how many."""
        with write(self.conn):
            rows = self.conn.execute("SELECT match_id, stage, side, deadline FROM turns WHERE entry=? AND speech IS "
                                     "NULL AND match_id IN (SELECT id FROM matches WHERE status <> 'done')",
                                     (entry,)).fetchall()
            start = now()
            for match_id, stage, side, deadline in rows:
                later = (datetime.fromisoformat(max(deadline, start)) + timedelta(hours=hours)).isoformat(
                    timespec="microseconds")
                self.conn.execute("UPDATE turns SET deadline=? WHERE match_id=? AND stage=? AND side=?",
                                  (later, match_id, stage, side))
        return len(rows)

    def park_match(self, match_id: str, holder: Holder | None = None) -> None:
        """Park a match at a person's open turn: 'awaiting', its claim given up, so the run goes on with other
        matches; a later run continues it once the turn's speech is in or its deadline has passed (arena.store's
        claims). With a holder, only if it still holds the match (ClaimLost otherwise)."""
        with write(self.conn):
            release_or_lose(self.conn, holder, match_id, PLAY)
            self.conn.execute("UPDATE matches SET status='awaiting', error=NULL WHERE id=?", (match_id,))

    def awaiting_matches(self) -> set[str]:
        """The parked matches that still wait for a person: not yet spoken (arena.store.claims.SPOKEN), the matches
        a run continues being the others."""
        return {r[0] for r in self.conn.execute(
            f"SELECT m.id FROM matches m WHERE m.status='awaiting' AND NOT {SPOKEN}", (now(),))}


def _turn(r: sqlite3.Row) -> HumanTurn:
    return HumanTurn(r["match_id"], r["stage"], r["side"], r["entry"], r["opened_at"], r["deadline"],
                     decode.brief(r["brief"]), r["draft"], r["draft_at"], r["speech"], r["submitted_at"])


def brief_json(brief: Brief) -> dict[str, Any]:
    """A turn's brief as it is stored: the JSON every workspace's turns hold (arena.store.decode.brief reads it)."""
    m = brief.motion
    return {
        "motion": {"id": m.id, "text": m.text, "category": m.category, "language": m.language,
                   "info_slide": m.info_slide, "pro_text": m.pro_text, "con_text": m.con_text},
        "format": brief.format, "title": brief.title, "purpose": brief.purpose, "place": list(brief.place),
        "language": brief.language, "budget": {"amount": brief.budget.amount, "unit": brief.budget.unit},
        "visible": [{"stage": s.stage, "title": brief.stage_titles[s.stage], "side": s.side, "text": s.text,
                     "references": [{"number": r.number, "title": r.title, "url": r.url, "text": r.text}
                                    for r in s.references]} for s in brief.visible],
    }
