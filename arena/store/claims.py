"""The store's claims: which process plays or judges each match (arena.match.claims' leases), taken and given up
atomically with what they decide."""
from __future__ import annotations

import json
import sqlite3
from typing import Any, Collection

from arena.match.claims import LEASE_S, ClaimLost, Holder, clock
from arena.base.clock import iso, now
from arena.gateway.redact import redact
from arena.store.connection import Database, write

PLAY = ""  # the judge column of a claim to play a match (rather than to judge it)

# A parked match whose people have spoken, or one of whose turns has lapsed: its earliest deadline among turns with
# no speech has passed, or it has no such turn (the time now as ISO text, the turns' deadlines being so written). A
# lapsed turn is forfeited by the next run whatever the match's other turns are doing (another person's may be open
# in the same blind stage): arena.match.turns.standing.
SPOKEN = ("COALESCE((SELECT MIN(t.deadline) FROM turns t WHERE t.match_id = m.id AND t.speech IS NULL), '') <= ?")
# A match still to play: scheduled, or running or failed (before a time; '' for never) under no live claim, or
# parked and spoken.
_PLAYABLE = ("LEFT JOIN claims c ON c.match_id = m.id AND c.judge = '' WHERE (m.status IN ('scheduled', 'running') "
             f"OR (m.status = 'failed' AND m.finished_at < ?) OR (m.status = 'awaiting' AND {SPOKEN})) "
             "AND (c.holder IS NULL OR claim_lapsed(c.heartbeat_at, c.pid, c.host, ?, ?))")

# And neither of its entries one the run skips (a JSON list of names, twice: a run plays no match of an entry
# whose key is missing, arena.app.runner.runs).
_UNSKIPPED = " AND m.pro NOT IN (SELECT value FROM json_each(?)) AND m.con NOT IN (SELECT value FROM json_each(?))"

# The first of them in schedule order, each status read in its index's order (matches_status) and only its first
# unclaimed match taken, so that a claim costs the same with 100,000 matches planned or stored as with ten.
_FIRST_PLAYABLE = " UNION ALL ".join(
    f"SELECT * FROM (SELECT m.id, m.seq FROM matches m LEFT JOIN claims c ON c.match_id = m.id AND c.judge = '' "
    f"WHERE m.status = '{status}'{also} AND (c.holder IS NULL OR claim_lapsed(c.heartbeat_at, c.pid, c.host, ?, ?))"
    f"{_UNSKIPPED} ORDER BY m.seq LIMIT 1)"
    for status, also in (("scheduled", ""), ("running", ""), ("failed", " AND m.finished_at < ?"),
                         ("awaiting", f" AND {SPOKEN}"))
) + " ORDER BY seq LIMIT 1"

# A completed, unforfeited match the judge still has to judge: (rejudging) no verdict of it since a time, or
# (otherwise) no verdict of it at all or a failed run.
_TO_JUDGE = ("m.status='done' AND m.forfeit IS NULL AND CASE WHEN ? IS NOT NULL THEN NOT EXISTS (SELECT 1 "
             "FROM verdicts v WHERE v.match_id=m.id AND v.judge=? AND v.created_at >= ?) ELSE (NOT EXISTS (SELECT "
             "1 FROM verdicts v WHERE v.match_id=m.id AND v.judge=? AND v.error IS NULL) OR EXISTS (SELECT 1 FROM "
             "verdicts v WHERE v.match_id=m.id AND v.judge=? AND v.error IS NOT NULL)) END")


def _names(skipping: Collection[str]) -> tuple[str, str]:
    """_UNSKIPPED's arguments: the names as a JSON list, twice."""
    names = json.dumps(sorted(skipping))
    return names, names


def _to_judge_args(judge: str, rejudged_before: str | None) -> tuple[Any, ...]:
    return (rejudged_before, judge, rejudged_before, judge, judge)


class Claims(Database):
    def pending_matches(self, failed_before: str | None = None, *, lease_s: float = LEASE_S,
                        skipping: Collection[str] = ()) -> list[str]:
        """Matches still to play: scheduled ones, 'running' ones whose claim lapsed (a killed run's), and with
        failed_before (a time) the ones that failed before then; none of an entry in skipping."""
        rows = self.conn.execute(f"SELECT m.id FROM matches m {_PLAYABLE}{_UNSKIPPED} ORDER BY m.seq",
                                 (failed_before or "", now(), clock(), lease_s, *_names(skipping)))
        return [r["id"] for r in rows]

    def pending_entries(self, failed_before: str | None = None, *, lease_s: float = LEASE_S) -> set[str]:
        """The entries of the matches still to play (as pending_matches says), without reading the matches."""
        rows = self.conn.execute(f"SELECT DISTINCT m.pro, m.con FROM matches m {_PLAYABLE}",
                                 (failed_before or "", now(), clock(), lease_s))
        return {name for row in rows for name in row}

    def claim_match(self, holder: Holder, *, failed_before: str | None = None, only: str | None = None,
                    lease_s: float = LEASE_S, skipping: Collection[str] = ()) -> str | None:
        """Claim the first match still to play (as pending_matches says, none of an entry in skipping; with only,
        that match or none) for holder and mark it running, atomically; None when there is none."""
        at = clock()
        skip = _names(skipping)
        with write(self.conn):
            if only is not None:
                row = self.conn.execute(f"SELECT m.id FROM matches m {_PLAYABLE}{_UNSKIPPED} AND m.id = ?",
                                        (failed_before or "", iso(at), at, lease_s, *skip, only)).fetchone()
            else:
                row = self.conn.execute(_FIRST_PLAYABLE, (at, lease_s, *skip) * 2
                                        + (failed_before or "", at, lease_s, *skip) + (iso(at), at, lease_s, *skip)
                                        ).fetchone()
            if row is None:
                return None
            match_id = str(row["id"])
            self.conn.execute("UPDATE matches SET status='running', error=NULL, started_at=? WHERE id=?",
                              (iso(at), match_id))
            _take(self.conn, holder, match_id, PLAY, at)
        return match_id

    def claim_judging(self, holder: Holder, match_id: str, judge: str, *, rejudged_before: str | None = None,
                      lease_s: float = LEASE_S) -> bool:
        """Claim judging the match for holder, if the judge still has to (as matches_to_judge says) and no live
        claim of another holder stands in the way; atomically."""
        at = clock()
        with write(self.conn):
            needed = self.conn.execute(f"SELECT 1 FROM matches m WHERE m.id=? AND {_TO_JUDGE}",
                                       (match_id, *_to_judge_args(judge, rejudged_before))).fetchone()
            if not needed:
                return False
            held = self.conn.execute(
                "SELECT holder FROM claims WHERE match_id=? AND judge=? AND holder<>? "
                "AND NOT claim_lapsed(heartbeat_at, pid, host, ?, ?)", (match_id, judge, holder.id, at, lease_s)
            ).fetchone()
            if held:
                return False
            _take(self.conn, holder, match_id, judge, at)
        return True

    def matches_to_judge(self, judge: str, *, rejudged_before: str | None = None) -> list[str]:
        """Completed matches the judge has no verdicts for, or a failed run on; with rejudged_before (a time),
        every completed match the judge has not judged since then."""
        rows = self.conn.execute(f"SELECT id FROM matches m WHERE {_TO_JUDGE} ORDER BY seq",
                                 _to_judge_args(judge, rejudged_before))
        return [r["id"] for r in rows]

    def runs_under_way(self, lease_s: float = LEASE_S) -> list[tuple[int, str]]:
        """The processes (pid, host) holding a live claim, to play or to judge a match, now."""
        return [(pid, host) for pid, host in self.conn.execute(
            "SELECT DISTINCT pid, host FROM claims WHERE NOT claim_lapsed(heartbeat_at, pid, host, ?, ?) "
            "ORDER BY host, pid", (clock(), lease_s))]

    def heartbeat(self, holder: Holder) -> None:
        """Renew every claim of holder."""
        with write(self.conn):
            self.conn.execute("UPDATE claims SET heartbeat_at=? WHERE holder=?", (clock(), holder.id))

    def release(self, holder: Holder, match_id: str, judge: str = PLAY) -> bool:
        """Give up holder's claim (to play, or judge == a judge's name); whether holder still held it."""
        with write(self.conn):
            return release(self.conn, holder, match_id, judge)

    def mark_scheduled(self, match_id: str, holder: Holder | None = None) -> None:
        """Put an interrupted match back in the plan, as if it had never started (if holder still holds it)."""
        with write(self.conn):
            if release(self.conn, holder, match_id, PLAY):
                self.conn.execute("UPDATE matches SET status='scheduled', error=NULL, started_at=NULL WHERE id=?",
                                  (match_id,))

    def mark_failed(self, match_id: str, error: str, holder: Holder | None = None) -> None:
        """Store a match as failed with its reason (if holder still holds it)."""
        with write(self.conn):
            if release(self.conn, holder, match_id, PLAY):
                self.conn.execute("UPDATE matches SET status='failed', error=?, finished_at=? WHERE id=?",
                                  (redact(error), now(), match_id))


def _take(conn: sqlite3.Connection, holder: Holder, match_id: str, judge: str, at: float) -> None:
    conn.execute("INSERT OR REPLACE INTO claims VALUES (?,?,?,?,?,?)",
                 (match_id, judge, holder.id, holder.pid, holder.host, at))


def release(conn: sqlite3.Connection, holder: Holder | None, match_id: str, judge: str) -> bool:
    """Give up holder's claim within the caller's transaction; whether it still held it (None: an unclaimed write,
    a test's or an import's, with nothing to check)."""
    if holder is None:
        return True
    return conn.execute("DELETE FROM claims WHERE match_id=? AND judge=? AND holder=?",
                        (match_id, judge, holder.id)).rowcount == 1


def release_or_lose(conn: sqlite3.Connection, holder: Holder | None, match_id: str, judge: str) -> None:
    """release, or ClaimLost when another process has taken the claim over: the caller's write is not stored."""
    if not release(conn, holder, match_id, judge):
        what = f"judging of match {match_id} by {judge}" if judge else f"match {match_id}"
        raise ClaimLost(f"{what}: this process's claim lapsed and another took it over, so its result was not "
                        f"stored (was the process suspended for longer than the lease?)")
