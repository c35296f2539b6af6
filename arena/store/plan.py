"""The store's plan: tournaments and their matches, and every read of where matches stand (the match as a whole,
in arena.domain.records.Match, or its state alone, in MatchState)."""
from __future__ import annotations

import json
from typing import Any, Collection

from arena.base.clock import now
from arena.domain.records import DEFAULT_FORMAT, Match, MatchState, Speech, Tournament, Verdict
import arena.store.decode as decode
from arena.store.connection import Database, write

_STATES = f"SELECT {decode.MATCH_STATE} FROM matches m JOIN motions mo ON mo.id = m.motion_id"


class Plan(Database):
    def add_tournament(self, fmt: str, seed: int, params: dict[str, Any], pairings: list[tuple[str, str, str]], *,
                       debate_format: str = DEFAULT_FORMAT) -> list[str]:
        """Store a schedule (motion_id, pro, con) of matches to play in debate_format, in one transaction; return
        the new match ids."""
        with write(self.conn):
            cur = self.conn.execute(
                "INSERT INTO tournaments (format, seed, params, created_at) VALUES (?,?,?,?)",
                (fmt, seed, json.dumps(params), now()),
            )
            tid = cur.lastrowid
            # Above every stored number: an imported match keeps its source's id (m00007 as the 3rd match stored).
            start = int(self._scalar(
                "SELECT MAX((SELECT COALESCE(MAX(seq), 0) FROM matches), (SELECT COALESCE(MAX(CAST(substr(id, 2) "
                "AS INTEGER)), 0) FROM matches WHERE id GLOB 'm[0-9]*' AND substr(id, 2) NOT GLOB '*[^0-9]*'))"))
            ids = []
            for k, (motion_id, pro, con) in enumerate(pairings, start=1):
                match_id = f"m{start + k:05d}"
                self.conn.execute(
                    "INSERT INTO matches (id, tournament_id, seq, motion_id, pro, con, status, created_at, format)"
                    " VALUES (?,?,?,?,?,?,'scheduled',?,?)",
                    (match_id, tid, start + k, motion_id, pro, con, now(), debate_format),
                )
                ids.append(match_id)
        return ids

    def tournaments(self) -> list[Tournament]:
        """Every stored schedule, in the order they were made."""
        return [Tournament(r["id"], r["format"], r["seed"], json.loads(r["params"]), r["created_at"])
                for r in self.conn.execute("SELECT id, format, seed, params, created_at FROM tournaments ORDER BY id")]

    def pairing(self, match_id: str) -> tuple[str, str, str] | None:
        """(motion id, pro, con) of the stored match of that id, or None."""
        row = self.conn.execute("SELECT motion_id, pro, con FROM matches WHERE id=?", (match_id,)).fetchone()
        return None if row is None else (row[0], row[1], row[2])

    def match_states(self, *, status: str | None = None, motion_id: str | None = None,
                     forfeited: bool | None = None) -> list[MatchState]:
        """The stored matches in schedule order, as they stand: all, or those of a status, a motion, with (True)
        or without (False) a forfeit."""
        where, args = _where(status=status, motion_id=motion_id, forfeited=forfeited)
        return [decode.match_state(r) for r in self.conn.execute(f"{_STATES}{where} ORDER BY m.seq", args)]

    def count_matches(self, *, status: str | None = None, motion_id: str | None = None) -> int:
        """How many stored matches there are (of a status, of a motion)."""
        where, args = _where(status=status, motion_id=motion_id)
        return int(self._scalar(f"SELECT COUNT(*) FROM matches m{where}", args))

    def status_counts(self) -> dict[str, int]:
        """Matches by status."""
        return {status: count for status, count in
                self.conn.execute("SELECT status, COUNT(*) FROM matches GROUP BY status")}

    def entry_matches(self, name: str) -> dict[str, int]:
        """The entry's matches by status, scheduled, failed and done alike."""
        rows = self.conn.execute("SELECT status, COUNT(*) FROM matches WHERE pro=? OR con=? GROUP BY status",
                                 (name, name))
        return {status: count for status, count in rows}

    def match_counts(self) -> dict[str, int]:
        """Completed matches per entry."""
        return {name: count for name, count in self.conn.execute(
            "SELECT name, COUNT(*) FROM (SELECT pro AS name FROM matches WHERE status='done' UNION ALL "
            "SELECT con FROM matches WHERE status='done') GROUP BY name")}

    def match_ids(self, *, done: bool, forfeited: bool | None = None) -> list[str]:
        """Ids of the matches done (or not yet done), in schedule order; forfeited as match_states says."""
        where, args = _where(done=done, forfeited=forfeited)
        return [r[0] for r in self.conn.execute(f"SELECT m.id FROM matches m{where} ORDER BY m.seq", args)]

    def debated_match_ids(self) -> list[str]:
        """Completed matches debated to the end (no forfeit), in schedule order: those people can judge."""
        return self.match_ids(done=True, forfeited=False)

    def finish_order(self) -> list[str]:
        """Done matches in the order they finished (schedule order among equal times; unknown times first)."""
        return [r[0] for r in self.conn.execute(
            "SELECT id FROM matches WHERE status='done' ORDER BY finished_at, seq")]

    def failed_matches(self) -> list[tuple[str, str]]:
        """(id, error) of every failed match, in schedule order."""
        return [(r[0], r[1]) for r in
                self.conn.execute("SELECT id, error FROM matches WHERE status='failed' ORDER BY seq")]

    def match(self, match_id: str) -> Match | None:
        """The stored match of that id, with its speeches and verdicts; None if there is none."""
        found = self._matches("WHERE id=?", (match_id,), speeches=True)
        return found[0] if found else None

    def matches(self, *, speeches: bool = True) -> list[Match]:
        """Every match in schedule order with its verdicts and (unless speeches is False, whose text is then not
        read: what the site's lists and ratings show) its speeches."""
        return self._matches("", (), speeches=speeches)

    def speeches_of(self, match_ids: Collection[str]) -> dict[str, tuple[Speech, ...]]:
        """The speeches of the given matches, by match, in the order matches() gives them."""
        out: dict[str, list[Speech]] = {}
        ids = list(match_ids)
        for k in range(0, len(ids), 500):  # older SQLite builds bind at most 999 values a statement
            chunk = ids[k:k + 500]
            for r in self.conn.execute(f"SELECT {decode.SPEECH} FROM speeches WHERE match_id IN "
                                       f"({','.join('?' * len(chunk))}) ORDER BY match_id, seq", chunk):
                out.setdefault(r["match_id"], []).append(decode.speech(r))
        return {match_id: tuple(speeches) for match_id, speeches in out.items()}

    def _matches(self, where: str, args: tuple[Any, ...], *, speeches: bool) -> list[Match]:
        """The matches the clause picks, in four queries however many there are."""
        within = f"WHERE match_id IN (SELECT id FROM matches {where})" if where else ""
        motions = {r["id"]: decode.motion(r) for r in self.conn.execute(
            f"SELECT {decode.MOTION} FROM motions WHERE id IN (SELECT motion_id FROM matches {where})", args)}
        said: dict[str, list[Speech]] = {}
        if speeches:
            for r in self.conn.execute(f"SELECT {decode.SPEECH} FROM speeches {within} ORDER BY match_id, seq",
                                       args):
                said.setdefault(r["match_id"], []).append(decode.speech(r))
        verdicts: dict[str, list[Verdict]] = {}
        for r in self.conn.execute(f"SELECT {decode.VERDICT} FROM verdicts {within} ORDER BY match_id, judge, run",
                                   args):
            verdicts.setdefault(r["match_id"], []).append(decode.verdict(r))
        return [Match(r["id"], motions[r["motion_id"]], r["pro"], r["con"], r["status"], r["error"],
                      bool(r["simulated"]), tuple(said.get(r["id"], ())), tuple(verdicts.get(r["id"], ())),
                      decode.forfeit(r), r["format"])
                for r in self.conn.execute(f"SELECT * FROM matches {where} ORDER BY seq", args)]


def _where(*, status: str | None = None, motion_id: str | None = None, forfeited: bool | None = None,
           done: bool | None = None) -> tuple[str, tuple[Any, ...]]:
    """A WHERE clause over matches m (with its arguments) for the conditions given."""
    clauses, args = [], []
    if status is not None:
        clauses.append("m.status = ?")
        args.append(status)
    if done is not None:
        clauses.append("m.status = 'done'" if done else "m.status <> 'done'")
    if motion_id is not None:
        clauses.append("m.motion_id = ?")
        args.append(motion_id)
    if forfeited is not None:
        clauses.append("m.forfeit IS NOT NULL" if forfeited else "m.forfeit IS NULL")
    return (" WHERE " + " AND ".join(clauses) if clauses else ""), tuple(args)
