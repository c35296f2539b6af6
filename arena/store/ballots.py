"""The store's ballots of people: private links (only their tokens' hashes), who each run of a judge of people is,
the ballots themselves (stored as that judge's verdicts), and closed judges."""
from __future__ import annotations

import hmac
import secrets
from typing import Iterable

from arena.base.clock import now
from arena.base.errors import ArenaError
from arena.domain.records import Ballot, Verdict
import arena.store.decode as decode
from arena.store.connection import Database, write
from arena.store.outcomes import write_verdicts


class Ballots(Database):
    def issue_links(self, judge: str, hashes: dict[str, str]) -> None:
        """Give each person (person → their new token's hash) a new link, in one transaction; their earlier
        links stop working, and a closed judge is open again."""
        with write(self.conn):
            self.conn.execute("DELETE FROM ballot_closures WHERE judge=?", (judge,))
            for person, digest in hashes.items():
                self.conn.execute("DELETE FROM ballot_links WHERE judge=? AND person=?", (judge, person))
                self.conn.execute("INSERT INTO ballot_links VALUES (?,?,?,?)", (digest, judge, person, now()))

    def link_holder(self, digest: str) -> tuple[str, str] | None:
        """(judge, person) whose link has this token hash, else None."""
        row = self.conn.execute("SELECT judge, person, token_hash FROM ballot_links WHERE token_hash=?",
                                (digest,)).fetchone()
        return (row["judge"], row["person"]) if row and hmac.compare_digest(row["token_hash"], digest) else None

    def close_ballots(self, judge: str) -> str:
        """Close the judge's ballots (until links are issued again); when they were closed (the first close)."""
        with write(self.conn):
            self.conn.execute("INSERT OR IGNORE INTO ballot_closures VALUES (?,?)", (judge, now()))
            return str(self._scalar("SELECT closed_at FROM ballot_closures WHERE judge=?", (judge,)))

    def closed_judges(self) -> dict[str, str]:
        """judge → when its ballots were closed, for every judge of people closed."""
        return {r[0]: r[1] for r in self.conn.execute("SELECT judge, closed_at FROM ballot_closures")}

    def ballot_secret(self) -> bytes:
        """The workspace's secret for people's ballot ids (arena.domain.ballots.ballot_id), their turn ids and the keys
        of match transcripts (arena.domain.transcript.marker_key): made once, then kept (and then only read, so that
        a read transaction may ask for it: Store.snapshot)."""
        kept = self._scalar("SELECT value FROM meta WHERE key='ballot_secret'")
        if kept is not None:
            return bytes.fromhex(kept)
        with write(self.conn):
            self.conn.execute("INSERT OR IGNORE INTO meta VALUES ('ballot_secret', ?)", (secrets.token_hex(32),))
            return bytes.fromhex(self._scalar("SELECT value FROM meta WHERE key='ballot_secret'"))

    def ballot_people(self) -> dict[str, dict[int, str]]:
        """judge → run → the person whose ballots that run holds."""
        out: dict[str, dict[int, str]] = {}
        for r in self.conn.execute("SELECT judge, run, person FROM ballot_people"):
            out.setdefault(r["judge"], {})[r["run"]] = r["person"]
        return out

    def cast_ballots(self, judge: str, people: tuple[str, ...], ballots: Iterable[Ballot], simulated: bool, *,
                     link: str | None = None) -> bool:
        """Store ballots as the judge's verdicts, run = the person's index in people, all or nothing; each
        replaces the person's earlier ballot on that match. ArenaError, and nothing stored, for a match
        that is not done. With link (a token's hash: the web's ballot), nothing is stored, and False returned,
        unless it is still the live link of each ballot's person and the judge's ballots are open, read in the
        transaction that writes (`arena ballots issue` or `close` may have come while the ballot was sent)."""
        with write(self.conn):
            ballots = list(ballots)
            if link is not None and (self.conn.execute("SELECT 1 FROM ballot_closures WHERE judge=?", (judge,))
                                     .fetchone() or any(self.link_holder(link) != (judge, b.person) for b in ballots)):
                return False
            for b in ballots:
                row = self.conn.execute("SELECT status, forfeit FROM matches WHERE id=?", (b.match_id,)).fetchone()
                if row is None or row["status"] != "done" or row["forfeit"]:
                    state = "unknown" if row is None else "forfeited" if row["forfeit"] else row["status"]
                    raise ArenaError(f"match {b.match_id!r} is {state}; ballots are cast on matches debated to "
                                     "the end only")
                run = people.index(b.person)
                self.conn.execute("INSERT OR IGNORE INTO ballot_people VALUES (?,?,?)", (judge, run, b.person))
                write_verdicts(self.conn, b.match_id, [Verdict(judge, run, b.overall, dict(b.dimensions),
                                                               b.rationale)], simulated)
        return True

    def ballot(self, match_id: str, judge: str, run: int) -> Verdict | None:
        """A person's ballot on a match (their run of the judge), if cast."""
        row = self.conn.execute(f"SELECT {decode.VERDICT} FROM verdicts WHERE match_id=? AND judge=? AND run=?",
                                (match_id, judge, run)).fetchone()
        return None if row is None else decode.verdict(row)

    def ballots_cast(self, judge: str) -> dict[int, set[str]]:
        """run → the done matches that run (person) of the judge has a ballot on."""
        out: dict[int, set[str]] = {}
        for r in self.conn.execute("SELECT v.run, v.match_id FROM verdicts v JOIN matches m ON m.id = v.match_id "
                                   "WHERE v.judge=? AND m.status='done'", (judge,)):
            out.setdefault(r["run"], set()).add(r["match_id"])
        return out

    def judge_records(self, name: str) -> int:
        """Verdicts (runs and ballots, failed ones too) and ballot links the database keeps under a judge's name."""
        return int(self._scalar("SELECT (SELECT COUNT(*) FROM verdicts WHERE judge=?) + "
                                "(SELECT COUNT(*) FROM ballot_links WHERE judge=?)", (name, name)))
