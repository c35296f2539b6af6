"""The workspace database: SQLite in WAL mode, one versioned schema, atomic match commits."""
from __future__ import annotations

import hmac
import json
import secrets
import sqlite3
from contextlib import contextmanager
from dataclasses import asdict
from datetime import datetime, timezone
from pathlib import Path
from typing import Collection, Iterable, Iterator, Mapping

from arena.claims import LEASE_S, ClaimLost, Holder, clock, lapsed
from arena.errors import ArenaError
from arena.files import no_space, no_space_error
from arena.messages import CODEC, pack, squeeze, unpack, unsqueeze
from arena.records import DEFAULT_FORMAT, AgentUsage, Ballot, Entry, Forfeit, Match, Motion, Reference, Speech, Verdict
from arena.redact import public_url, redact

DB_NAME = "arena.db"
# The error of a ledger row written as its call was sent: the call settles it with its outcome, so a row that
# keeps it is a call a stopped process never heard back from (paid, perhaps: its cost is the most it could be).
IN_FLIGHT = "in flight: sent, and no answer recorded (the process stopped before the call ended)"
SCHEMA_VERSION = 10

# Processes sharing a workspace: who plays (judge '') or judges each match, and their heartbeats.
_CLAIMS = """
CREATE TABLE claims (
    match_id TEXT NOT NULL REFERENCES matches(id), judge TEXT NOT NULL, holder TEXT NOT NULL, pid INTEGER NOT NULL,
    host TEXT NOT NULL, heartbeat_at REAL NOT NULL, PRIMARY KEY (match_id, judge));
CREATE INDEX claims_holder ON claims(holder);
"""

# People who judge: a private link each (only the token's hash is kept), and who each run index of a
# human judge's ballots is, so that a reordered `people` list cannot hand one person's ballots to another.
_BALLOTS = """
CREATE TABLE ballot_links (
    token_hash TEXT PRIMARY KEY, judge TEXT NOT NULL, person TEXT NOT NULL, created_at TEXT NOT NULL);
CREATE TABLE ballot_people (judge TEXT NOT NULL, run INTEGER NOT NULL, person TEXT NOT NULL, PRIMARY KEY (judge, run));
"""

# Judges of people whose ballots are closed (`arena ballots close`): their links take no more ballots, and the
# matches they had open ballots on leave the published site's embargo. Issuing new links reopens them.
_CLOSURES = """
CREATE TABLE ballot_closures (judge TEXT PRIMARY KEY, closed_at TEXT NOT NULL);
"""

# What each agent was sent and answered: a row per message, its texts in its match's block (arena.messages).
_MESSAGES = """
CREATE TABLE agent_messages (
    id INTEGER PRIMARY KEY, match_id TEXT NOT NULL, stage TEXT, side TEXT, role TEXT NOT NULL,
    created_at TEXT NOT NULL, prompt_bytes INTEGER NOT NULL, response_bytes INTEGER NOT NULL);
CREATE INDEX agent_messages_match ON agent_messages(match_id);
CREATE TABLE message_blocks (match_id TEXT PRIMARY KEY, codec TEXT NOT NULL, data BLOB NOT NULL);
"""

# The ledger's running total, kept by triggers on every write to calls (any process's), so that --budget reads
# one row before each claim rather than summing a ledger that grows by a hundred rows a match.
_LEDGER_TOTAL = """
CREATE TABLE ledger_total (id INTEGER PRIMARY KEY CHECK (id = 0), cost REAL NOT NULL);
INSERT INTO ledger_total SELECT 0, COALESCE(SUM(cost), 0) FROM calls;
CREATE TRIGGER ledger_total_insert AFTER INSERT ON calls WHEN NEW.cost IS NOT NULL
    BEGIN UPDATE ledger_total SET cost = cost + NEW.cost; END;
CREATE TRIGGER ledger_total_update AFTER UPDATE OF cost ON calls
    BEGIN UPDATE ledger_total SET cost = cost - COALESCE(OLD.cost, 0) + COALESCE(NEW.cost, 0); END;
CREATE TRIGGER ledger_total_delete AFTER DELETE ON calls WHEN OLD.cost IS NOT NULL
    BEGIN UPDATE ledger_total SET cost = cost - OLD.cost; END;
"""

# The debaters' calls the simulator answered (their side known), of each match's latest play: the calls ledgered
# since it was last claimed (a failed play's calls, before a retry, are not its speeches').
_SIMULATED_CALLS = ("FROM calls c JOIN matches m ON m.id = c.match_id WHERE c.simulated AND c.side IN ('pro', 'con') "
                    "AND c.created_at >= COALESCE(m.started_at, '')")

_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE entries (
    name TEXT PRIMARY KEY, debater TEXT NOT NULL, model TEXT NOT NULL, api_base TEXT NOT NULL,
    strength REAL NOT NULL, params TEXT NOT NULL, simulated INTEGER NOT NULL,
    retired INTEGER NOT NULL DEFAULT 0, updated_at TEXT NOT NULL);
CREATE TABLE motions (
    id TEXT PRIMARY KEY, text TEXT NOT NULL, category TEXT NOT NULL, language TEXT NOT NULL,
    info_slide TEXT NOT NULL, pro_text TEXT NOT NULL DEFAULT '', con_text TEXT NOT NULL DEFAULT '');
CREATE TABLE tournaments (
    id INTEGER PRIMARY KEY, format TEXT NOT NULL, seed INTEGER NOT NULL, params TEXT NOT NULL,
    created_at TEXT NOT NULL);
CREATE TABLE matches (
    id TEXT PRIMARY KEY, tournament_id INTEGER REFERENCES tournaments(id), seq INTEGER NOT NULL,
    motion_id TEXT NOT NULL REFERENCES motions(id), pro TEXT NOT NULL, con TEXT NOT NULL,
    status TEXT NOT NULL, error TEXT, simulated INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL, started_at TEXT, finished_at TEXT, forfeit TEXT, forfeit_reason TEXT,
    format TEXT NOT NULL DEFAULT 'agent4debate');
CREATE TABLE speeches (
    match_id TEXT NOT NULL REFERENCES matches(id), seq INTEGER NOT NULL, stage TEXT NOT NULL,
    side TEXT NOT NULL, text TEXT NOT NULL, refs TEXT NOT NULL, agents TEXT NOT NULL,
    started_at TEXT NOT NULL, finished_at TEXT NOT NULL, cut INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (match_id, stage, side));
CREATE TABLE verdicts (
    match_id TEXT NOT NULL REFERENCES matches(id), judge TEXT NOT NULL, run INTEGER NOT NULL,
    overall TEXT, dimensions TEXT NOT NULL, rationale TEXT NOT NULL, error TEXT,
    simulated INTEGER NOT NULL, created_at TEXT NOT NULL, extra TEXT NOT NULL DEFAULT '{}',
    PRIMARY KEY (match_id, judge, run));
CREATE TABLE calls (
    id INTEGER PRIMARY KEY, kind TEXT NOT NULL, match_id TEXT, role TEXT, stage TEXT, side TEXT,
    judge TEXT, model TEXT NOT NULL, prompt_tokens INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0, cost REAL, latency_s REAL NOT NULL,
    cache_hit INTEGER NOT NULL, error TEXT, simulated INTEGER NOT NULL, created_at TEXT NOT NULL,
    structured TEXT, fitted INTEGER NOT NULL DEFAULT 0, finish_reason TEXT);
CREATE TABLE models (
    model TEXT NOT NULL, api_base TEXT NOT NULL, facts TEXT NOT NULL, updated_at TEXT NOT NULL,
    PRIMARY KEY (model, api_base));
CREATE TABLE cache (key TEXT PRIMARY KEY, kind TEXT NOT NULL, response TEXT NOT NULL, created_at TEXT NOT NULL);
CREATE INDEX matches_status ON matches(status, seq);
CREATE INDEX calls_match ON calls(match_id);
""" + _CLAIMS + _BALLOTS + _CLOSURES + _MESSAGES + _LEDGER_TOTAL


def _lean_messages(conn: sqlite3.Connection) -> None:
    """Schema 9 → 10: every match's agent messages, stored as plain text, packed into its block (arena.messages);
    the same rows, ids and order."""
    conn.execute("ALTER TABLE agent_messages RENAME TO agent_messages_9")
    for statement in _statements(_MESSAGES):
        conn.execute(statement)
    match_ids = [r[0] for r in conn.execute("SELECT DISTINCT match_id FROM agent_messages_9")]
    for match_id in match_ids:
        rows = conn.execute("SELECT * FROM agent_messages_9 WHERE match_id=? ORDER BY id", (match_id,)).fetchall()
        sizes, block = pack((r["prompt"], r["response"]) for r in rows)
        conn.executemany(
            "INSERT INTO agent_messages (id, match_id, stage, side, role, created_at, prompt_bytes, response_bytes)"
            " VALUES (?,?,?,?,?,?,?,?)",
            [(r["id"], match_id, r["stage"], r["side"], r["role"], r["created_at"], p, q)
             for r, (p, q) in zip(rows, sizes)])
        conn.execute("INSERT INTO message_blocks VALUES (?,?,?)", (match_id, CODEC, block))
    conn.execute("DROP TABLE agent_messages_9")
    for statement in _statements(_LEDGER_TOTAL):
        conn.execute(statement)


def _statements(script: str) -> list[str]:
    """A script's statements, one by one (executescript would commit the migration's transaction)."""
    out, pending = [], ""
    for piece in script.split(";"):
        pending += piece + ";"
        if sqlite3.complete_statement(pending):  # a trigger's body has its own semicolons
            if pending.strip(" \n;"):
                out.append(pending.strip())
            pending = ""
    return out


_LEAN = 9  # the version whose step packs the agent messages (and leaves the file to be vacuumed)
# Steps from each older version to the next (a script, or a function of the connection), each run in one
# transaction with the version bump.
_MIGRATIONS = {
    1: "ALTER TABLE calls ADD COLUMN judge TEXT;",  # which judge made a call: judges share matches
    # Real models: how each call asked for JSON, whether its prompt was fitted and why it stopped; cut
    # speeches; what is known of each model (arena check, structured-output fallbacks).
    2: "ALTER TABLE calls ADD COLUMN structured TEXT; ALTER TABLE calls ADD COLUMN fitted INTEGER NOT NULL DEFAULT 0;"
       "ALTER TABLE calls ADD COLUMN finish_reason TEXT;"
       "ALTER TABLE speeches ADD COLUMN cut INTEGER NOT NULL DEFAULT 0;"
       "CREATE TABLE models (model TEXT NOT NULL, api_base TEXT NOT NULL, facts TEXT NOT NULL,"
       " updated_at TEXT NOT NULL, PRIMARY KEY (model, api_base));",
    3: _CLAIMS,
    4: _BALLOTS,
    # Two-sided motions: each side's own proposition.
    5: "ALTER TABLE motions ADD COLUMN pro_text TEXT NOT NULL DEFAULT '';"
       "ALTER TABLE motions ADD COLUMN con_text TEXT NOT NULL DEFAULT '';",
    # Forfeits: the side whose debater could not give a speech, and why.
    6: "ALTER TABLE matches ADD COLUMN forfeit TEXT; ALTER TABLE matches ADD COLUMN forfeit_reason TEXT;",
    7: _CLOSURES,
    # Debate formats (arena.formats) per match, and what an imported verdict's source said beyond ours.
    8: "ALTER TABLE matches ADD COLUMN format TEXT NOT NULL DEFAULT 'agent4debate';"
       "ALTER TABLE verdicts ADD COLUMN extra TEXT NOT NULL DEFAULT '{}';",
    # Scale: agent messages compressed in a block per match (1 MB of prompts a match, each quoting the
    # transcript again, become ~30 KB), indexed by match; the ledger's running total.
    _LEAN: _lean_messages,
}
PLAY = ""  # the judge column of a claim to play a match (rather than to judge it)
BUSY_MS = 60_000  # how long a writer waits for another process's transaction before giving up


def now() -> str:
    """ISO-8601 UTC with microseconds, as the JSON contract asks."""
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


@contextmanager
def _transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


class _Connection(sqlite3.Connection):
    """A connection on which a full disk is an OSError naming the database, as it is for every other file the
    arena writes (arena.files): one message for it, and the run's engine can tell it from a failed match."""

    def __init__(self, database, *args, **kwargs):
        super().__init__(database, *args, **kwargs)
        self.database = str(database)

    def execute(self, *args):
        with self._named_when_full():
            return super().execute(*args)

    def executemany(self, *args):
        with self._named_when_full():
            return super().executemany(*args)

    def executescript(self, *args):
        with self._named_when_full():
            return super().executescript(*args)

    @contextmanager
    def _named_when_full(self) -> Iterator[None]:
        try:
            yield
        except sqlite3.OperationalError as exc:
            if not no_space(exc):
                raise
            raise no_space_error(exc, self.database) from exc


class Store:
    """All reads and writes of arena.db. One connection, used from one thread."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, factory=_Connection)
        self.conn.row_factory = sqlite3.Row
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute("PRAGMA synchronous=NORMAL")
        self.conn.execute("PRAGMA foreign_keys=ON")
        # Other processes (workers, a second `arena run`, `arena judge`) write too: wait for them, don't fail.
        self.conn.execute(f"PRAGMA busy_timeout={BUSY_MS}")
        self.conn.create_function("claim_lapsed", 5, lapsed)
        self._migrate()

    def close(self) -> None:
        self.conn.close()

    def _migrate(self) -> None:
        has_meta = self.conn.execute("SELECT 1 FROM sqlite_master WHERE name='meta'").fetchone()
        if not has_meta:
            # executescript commits any open transaction first, so the script carries its own.
            self.conn.executescript(
                f"BEGIN IMMEDIATE;{_SCHEMA}INSERT INTO meta VALUES ('schema_version', '{SCHEMA_VERSION}');COMMIT;"
            )
            return
        while True:
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                # Read under the write lock: another process opening the same old workspace may have upgraded it.
                version = int(self.conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0])
                if version > SCHEMA_VERSION:
                    raise ArenaError(f"{self.path}: schema version {version} is newer than this arena "
                                     f"({SCHEMA_VERSION}); upgrade arena")
                if version < SCHEMA_VERSION:
                    step = _MIGRATIONS[version]
                    for statement in [step] if callable(step) else _statements(step):
                        statement(self.conn) if callable(statement) else self.conn.execute(statement)
                    self.conn.execute("UPDATE meta SET value=? WHERE key='schema_version'", (str(version + 1),))
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
            self.conn.execute("COMMIT")
            if version == _LEAN:
                # The plain-text messages' pages are free now but still in the file (~1 MB a match): give them back,
                # unless another process reads the file meanwhile (then new rows reuse them as the store grows).
                try:
                    self.conn.execute("VACUUM")
                except sqlite3.OperationalError:
                    pass
            if version >= SCHEMA_VERSION:
                return

    # --- entries and motions -------------------------------------------------------------
    def sync_entries(self, entries: Iterable[Entry]) -> None:
        """Mirror arena.toml's entries into the database, so matches keep what an entry was."""
        with _transaction(self.conn):
            for e in entries:
                self.conn.execute(
                    "INSERT INTO entries VALUES (?,?,?,?,?,?,?,?,?) ON CONFLICT(name) DO UPDATE SET "
                    "debater=excluded.debater, model=excluded.model, api_base=excluded.api_base, "
                    "strength=excluded.strength, params=excluded.params, simulated=excluded.simulated, "
                    "retired=excluded.retired, updated_at=excluded.updated_at "
                    # Only a real change writes, so opening a workspace leaves the file as it was.
                    "WHERE (debater, model, api_base, strength, params, simulated, retired) IS NOT "
                    "(excluded.debater, excluded.model, excluded.api_base, excluded.strength, excluded.params, "
                    "excluded.simulated, excluded.retired)",
                    (e.name, e.debater, e.model, public_url(e.api_base), e.strength, json.dumps(dict(e.params)),
                     int(e.simulated), int(e.retired), now()),
                )

    def entry_names(self) -> set[str]:
        """Every entry name the database has seen, including entries since removed from arena.toml."""
        return {r[0] for r in self.conn.execute("SELECT name FROM entries")}

    def played_entries(self) -> dict[str, Entry]:
        """The recorded configuration of each entry with at least one completed match."""
        rows = self.conn.execute(
            "SELECT * FROM entries WHERE name IN (SELECT pro FROM matches WHERE status='done' "
            "UNION SELECT con FROM matches WHERE status='done')"
        )
        return {r["name"]: Entry(r["name"], r["debater"], r["model"], r["api_base"], r["strength"],
                                 json.loads(r["params"]), bool(r["retired"])) for r in rows}

    def match_counts(self) -> dict[str, int]:
        """Completed matches per entry."""
        counts: dict[str, int] = {}
        for row in self.conn.execute("SELECT pro, con FROM matches WHERE status='done'"):
            for name in (row["pro"], row["con"]):
                counts[name] = counts.get(name, 0) + 1
        return counts

    def entry_matches(self, name: str) -> dict[str, int]:
        """The entry's matches by status, scheduled, failed and done alike."""
        rows = self.conn.execute("SELECT status, COUNT(*) FROM matches WHERE pro=? OR con=? GROUP BY status",
                                 (name, name))
        return {status: count for status, count in rows}

    def status_counts(self) -> dict[str, int]:
        """Matches by status."""
        return dict(self.conn.execute("SELECT status, COUNT(*) FROM matches GROUP BY status").fetchall())

    def forget_entry(self, name: str) -> None:
        """Drop an entry that is in no match: nothing keeps its name, so it may be registered afresh."""
        with _transaction(self.conn):
            self.conn.execute("DELETE FROM entries WHERE name=? AND name NOT IN (SELECT pro FROM matches "
                              "UNION SELECT con FROM matches)", (name,))

    def judge_records(self, name: str) -> int:
        """Verdicts (runs and ballots, failed ones too) and ballot links the database keeps under a judge's name."""
        return self.conn.execute("SELECT (SELECT COUNT(*) FROM verdicts WHERE judge=?) + "
                                 "(SELECT COUNT(*) FROM ballot_links WHERE judge=?)", (name, name)).fetchone()[0]

    def add_motions(self, motions: Iterable[Motion]) -> None:
        with _transaction(self.conn):
            self.conn.executemany(
                "INSERT INTO motions VALUES (?,?,?,?,?,?,?) ON CONFLICT(id) DO UPDATE SET text=excluded.text, "
                "category=excluded.category, language=excluded.language, info_slide=excluded.info_slide, "
                "pro_text=excluded.pro_text, con_text=excluded.con_text "
                "WHERE (text, category, language, info_slide, pro_text, con_text) IS NOT "
                "(excluded.text, excluded.category, excluded.language, excluded.info_slide, excluded.pro_text, "
                "excluded.con_text)",
                [(m.id, m.text, m.category, m.language, m.info_slide, m.pro_text, m.con_text) for m in motions],
            )

    def motion(self, motion_id: str) -> Motion | None:
        row = self.conn.execute("SELECT * FROM motions WHERE id=?", (motion_id,)).fetchone()
        return _motion(row) if row else None

    def motions(self) -> dict[str, Motion]:
        """Every stored motion, by id."""
        return {r["id"]: _motion(r) for r in self.conn.execute("SELECT * FROM motions")}

    def motion_sets(self) -> dict:
        """What is remembered of each motion set whose motions were stored (arena.app.wiring), by spec: the
        digest of its file when they were, and its motion ids."""
        row = self.conn.execute("SELECT value FROM meta WHERE key='motion_sets'").fetchone()
        return json.loads(row[0]) if row else {}

    def remember_motion_sets(self, record: dict) -> None:
        with _transaction(self.conn):
            self.conn.execute("INSERT INTO meta VALUES ('motion_sets', ?) ON CONFLICT(key) DO UPDATE SET "
                              "value=excluded.value", (json.dumps(record),))

    def motion_ids(self) -> list[str]:
        return [r[0] for r in self.conn.execute("SELECT id FROM motions ORDER BY id")]

    # --- tournaments and matches ---------------------------------------------------------
    def add_tournament(self, fmt: str, seed: int, params: dict, pairings: list[tuple[str, str, str]], *,
                       debate_format: str = DEFAULT_FORMAT) -> list[str]:
        """Store a schedule (motion_id, pro, con) of matches to play in debate_format, in one transaction; return
        the new match ids."""
        with _transaction(self.conn):
            cur = self.conn.execute(
                "INSERT INTO tournaments (format, seed, params, created_at) VALUES (?,?,?,?)",
                (fmt, seed, json.dumps(params), now()),
            )
            tid = cur.lastrowid
            # Above every stored number: an imported match keeps its source's id (m00007 as the 3rd match stored).
            start = self.conn.execute(
                "SELECT MAX((SELECT COALESCE(MAX(seq), 0) FROM matches), (SELECT COALESCE(MAX(CAST(substr(id, 2) "
                "AS INTEGER)), 0) FROM matches WHERE id GLOB 'm[0-9]*' AND substr(id, 2) NOT GLOB '*[^0-9]*'))"
            ).fetchone()[0]
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

    def pairing(self, match_id: str) -> tuple[str, str, str] | None:
        """(motion id, pro, con) of the stored match of that id, or None."""
        row = self.conn.execute("SELECT motion_id, pro, con FROM matches WHERE id=?", (match_id,)).fetchone()
        return None if row is None else (row[0], row[1], row[2])

    def tournaments(self) -> list[sqlite3.Row]:
        return self.conn.execute("SELECT * FROM tournaments ORDER BY id").fetchall()

    def pending_matches(self, failed_before: str | None = None, *, lease_s: float = LEASE_S) -> list[str]:
        """Matches still to play: scheduled ones, 'running' ones whose claim lapsed (a killed run's), and with
        failed_before (a time) the ones that failed before then."""
        rows = self.conn.execute(f"SELECT m.id FROM matches m {_PLAYABLE} ORDER BY m.seq",
                                 (failed_before or "", clock(), lease_s))
        return [r["id"] for r in rows]

    def pending_entries(self, failed_before: str | None = None, *, lease_s: float = LEASE_S) -> set[str]:
        """The entries of the matches still to play (as pending_matches says), without reading the matches."""
        rows = self.conn.execute(f"SELECT DISTINCT m.pro, m.con FROM matches m {_PLAYABLE}",
                                 (failed_before or "", clock(), lease_s))
        return {name for row in rows for name in row}

    def claim_match(self, holder: Holder, *, failed_before: str | None = None, only: str | None = None,
                    lease_s: float = LEASE_S) -> str | None:
        """Claim the first match still to play (as pending_matches says; with only, that match or none) for
        holder and mark it running, atomically; None when there is none."""
        now = clock()
        with _transaction(self.conn):
            if only is not None:
                row = self.conn.execute(f"SELECT m.id FROM matches m {_PLAYABLE} AND m.id = ?",
                                        (failed_before or "", now, lease_s, only)).fetchone()
            else:
                row = self.conn.execute(_FIRST_PLAYABLE, (now, lease_s) * 2 + (failed_before or "", now, lease_s)
                                        ).fetchone()
            if row is None:
                return None
            self.conn.execute("UPDATE matches SET status='running', error=NULL, started_at=? WHERE id=?",
                              (_iso(now), row["id"]))
            self._take(holder, row["id"], PLAY, now)
        return row["id"]

    def claim_judging(self, holder: Holder, match_id: str, judge: str, *, rejudged_before: str | None = None,
                      lease_s: float = LEASE_S) -> bool:
        """Claim judging the match for holder, if the judge still has to (as matches_to_judge says) and no live
        claim of another holder stands in the way; atomically."""
        now = clock()
        with _transaction(self.conn):
            needed = self.conn.execute(f"SELECT 1 FROM matches m WHERE m.id=? AND {_TO_JUDGE}",
                                       (match_id, *_to_judge_args(judge, rejudged_before))).fetchone()
            if not needed:
                return False
            held = self.conn.execute(
                "SELECT holder FROM claims WHERE match_id=? AND judge=? AND holder<>? "
                "AND NOT claim_lapsed(heartbeat_at, pid, host, ?, ?)", (match_id, judge, holder.id, now, lease_s)
            ).fetchone()
            if held:
                return False
            self._take(holder, match_id, judge, now)
        return True

    def runs_under_way(self, lease_s: float = LEASE_S) -> list[tuple[int, str]]:
        """The processes (pid, host) holding a live claim, to play or to judge a match, now."""
        return [(pid, host) for pid, host in self.conn.execute(
            "SELECT DISTINCT pid, host FROM claims WHERE NOT claim_lapsed(heartbeat_at, pid, host, ?, ?) "
            "ORDER BY host, pid", (clock(), lease_s))]

    def _take(self, holder: Holder, match_id: str, judge: str, now: float) -> None:
        self.conn.execute("INSERT OR REPLACE INTO claims VALUES (?,?,?,?,?,?)",
                          (match_id, judge, holder.id, holder.pid, holder.host, now))

    def heartbeat(self, holder: Holder) -> None:
        """Renew every claim of holder."""
        with _transaction(self.conn):
            self.conn.execute("UPDATE claims SET heartbeat_at=? WHERE holder=?", (clock(), holder.id))

    def release(self, holder: Holder, match_id: str, judge: str = PLAY) -> bool:
        """Give up holder's claim (to play, or judge == a judge's name); whether holder still held it."""
        with _transaction(self.conn):
            return self._release(holder, match_id, judge)

    def _release(self, holder: Holder | None, match_id: str, judge: str) -> bool:
        if holder is None:  # an unclaimed write (tests, imports): nothing to check
            return True
        return self.conn.execute("DELETE FROM claims WHERE match_id=? AND judge=? AND holder=?",
                                 (match_id, judge, holder.id)).rowcount == 1

    def _release_or_lose(self, holder: Holder | None, match_id: str, judge: str) -> None:
        if not self._release(holder, match_id, judge):
            what = f"judging of match {match_id} by {judge}" if judge else f"match {match_id}"
            raise ClaimLost(f"{what}: this process's claim lapsed and another took it over, so its result was not "
                            f"stored (was the process suspended for longer than the lease?)")

    def mark_scheduled(self, match_id: str, holder: Holder | None = None) -> None:
        """Put an interrupted match back in the plan, as if it had never started (if holder still holds it)."""
        with _transaction(self.conn):
            if self._release(holder, match_id, PLAY):
                self.conn.execute("UPDATE matches SET status='scheduled', error=NULL, started_at=NULL WHERE id=?",
                                  (match_id,))

    def mark_failed(self, match_id: str, error: str, holder: Holder | None = None) -> None:
        """Store a match as failed with its reason (if holder still holds it)."""
        with _transaction(self.conn):
            if self._release(holder, match_id, PLAY):
                self.conn.execute("UPDATE matches SET status='failed', error=?, finished_at=? WHERE id=?",
                                  (redact(error), now(), match_id))

    def commit_match(self, match_id: str, speeches: list[Speech], verdicts: list[Verdict],
                     messages: list[dict], simulated: bool, holder: Holder | None = None,
                     forfeit: Forfeit | None = None) -> None:
        """Write a finished match — speeches, agent messages, verdicts, status, any forfeit — all or nothing.

        simulated (arena.records.simulated) is stored with the match and its verdicts. With a holder,
        the match is written only if holder still holds its claim (ClaimLost otherwise), which it gives up.
        """
        sizes, block = pack((m["prompt"], m["response"]) for m in messages)  # before the write lock: it takes ms
        with _transaction(self.conn):
            self._release_or_lose(holder, match_id, PLAY)
            self.conn.execute("DELETE FROM speeches WHERE match_id=?", (match_id,))
            self.conn.execute("DELETE FROM agent_messages WHERE match_id=?", (match_id,))
            self._write_speeches(match_id, speeches)
            _write_messages(self.conn, match_id, messages, sizes, block)
            self._write_verdicts(match_id, verdicts, simulated)
            self.conn.execute(
                "UPDATE matches SET status='done', error=NULL, simulated=?, finished_at=?, forfeit=?, forfeit_reason=?"
                " WHERE id=?",
                (int(simulated), now(), forfeit and forfeit.side, forfeit and redact(forfeit.reason), match_id)
            )

    def _write_speeches(self, match_id: str, speeches: Iterable[Speech]) -> None:
        self.conn.executemany(
            "INSERT INTO speeches VALUES (?,?,?,?,?,?,?,?,?,?)",
            [(match_id, seq, s.stage, s.side, s.text, json.dumps([asdict(r) for r in s.references]),
              json.dumps({role: vars(u) for role, u in s.agents.items()}), s.started_at, s.finished_at, int(s.cut))
             for seq, s in enumerate(speeches)],
        )

    def import_matches(self, matches: Iterable[Match], *, created_at: Mapping[str, str] | None = None,
                       simulated: Mapping[tuple[str, str, int], bool] | None = None) -> list[str]:
        """Store finished matches played elsewhere (an importer's), ids as given, with their speeches and
        verdicts, in one transaction; return the ids added. A match whose id is stored already is left as it
        is, so importing twice adds nothing. created_at: when each match was made, by id (default: now).
        simulated: a verdict's own flag by (match id, judge, run) where it differs from its match's (an
        offline judge's verdicts on real debates, people's ballots on simulated ones); others take the match's."""
        created_at, simulated = created_at or {}, simulated or {}
        added = []
        with _transaction(self.conn):
            seq = self.conn.execute("SELECT COALESCE(MAX(seq), 0) FROM matches").fetchone()[0]
            for m in matches:
                if self.conn.execute("SELECT 1 FROM matches WHERE id=?", (m.id,)).fetchone():
                    continue
                seq += 1
                when = created_at.get(m.id) or now()
                self.conn.execute(
                    "INSERT INTO matches (id, seq, motion_id, pro, con, status, error, simulated, created_at,"
                    " finished_at, forfeit, forfeit_reason, format) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    (m.id, seq, m.motion.id, m.pro, m.con, m.status, m.error, int(m.simulated), when,
                     when if m.status == "done" else None, m.forfeit and m.forfeit.side,
                     m.forfeit and m.forfeit.reason, m.format))
                self._write_speeches(m.id, m.speeches)
                for v in m.verdicts:
                    self._write_verdicts(m.id, [v], simulated.get((m.id, v.judge, v.run), m.simulated), when)
                added.append(m.id)
        return added

    def replace_verdicts(self, match_id: str, judge: str, verdicts: list[Verdict], simulated: bool,
                         holder: Holder | None = None) -> None:
        """Write a judge's verdicts of a match in place of all its earlier ones (every run), all or nothing;
        with a holder, only if it still holds its claim to judge the match (ClaimLost otherwise)."""
        with _transaction(self.conn):
            self._release_or_lose(holder, match_id, judge)
            # All old runs go, so a judge now configured with fewer runs leaves no stale run behind.
            self.conn.execute("DELETE FROM verdicts WHERE match_id=? AND judge=?", (match_id, judge))
            self._write_verdicts(match_id, verdicts, simulated)

    def matches_to_judge(self, judge: str, *, rejudged_before: str | None = None) -> list[str]:
        """Completed matches the judge has no verdicts for, or a failed run on; with rejudged_before (a time),
        every completed match the judge has not judged since then."""
        rows = self.conn.execute(f"SELECT id FROM matches m WHERE {_TO_JUDGE} ORDER BY seq",
                                 _to_judge_args(judge, rejudged_before))
        return [r["id"] for r in rows]

    def _write_verdicts(self, match_id: str, verdicts: Iterable[Verdict], simulated: bool,
                        created_at: str | None = None) -> None:
        for v in verdicts:
            self.conn.execute(
                "INSERT OR REPLACE INTO verdicts VALUES (?,?,?,?,?,?,?,?,?,?)",
                (match_id, v.judge, v.run, v.overall, json.dumps(dict(v.dimensions)), v.rationale,
                 None if v.error is None else redact(v.error),
                 int(simulated), created_at or now(), json.dumps(dict(v.extra))),
            )

    # --- ballots of people -----------------------------------------------------------------
    def issue_links(self, judge: str, hashes: dict[str, str]) -> None:
        """Give each person (person → their new token's hash) a new link, in one transaction; their earlier
        links stop working, and a closed judge is open again."""
        with _transaction(self.conn):
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
        with _transaction(self.conn):
            self.conn.execute("INSERT OR IGNORE INTO ballot_closures VALUES (?,?)", (judge, now()))
            return self.conn.execute("SELECT closed_at FROM ballot_closures WHERE judge=?", (judge,)).fetchone()[0]

    def closed_judges(self) -> dict[str, str]:
        """judge → when its ballots were closed, for every judge of people closed."""
        return {r[0]: r[1] for r in self.conn.execute("SELECT judge, closed_at FROM ballot_closures")}

    def ballot_secret(self) -> bytes:
        """The workspace's secret for people's ballot ids (arena.ballots.ballot_id): made once, then kept (and then
        only read, so that a read transaction may ask for it: Store.snapshot)."""
        kept = self.conn.execute("SELECT value FROM meta WHERE key='ballot_secret'").fetchone()
        if kept is not None:
            return bytes.fromhex(kept[0])
        with _transaction(self.conn):
            self.conn.execute("INSERT OR IGNORE INTO meta VALUES ('ballot_secret', ?)", (secrets.token_hex(32),))
            return bytes.fromhex(self.conn.execute("SELECT value FROM meta WHERE key='ballot_secret'").fetchone()[0])

    def ballot_people(self) -> dict[str, dict[int, str]]:
        """judge → run → the person whose ballots that run holds."""
        out: dict[str, dict[int, str]] = {}
        for r in self.conn.execute("SELECT * FROM ballot_people"):
            out.setdefault(r["judge"], {})[r["run"]] = r["person"]
        return out

    def done_match_ids(self) -> list[str]:
        """Completed matches that were debated to the end (not forfeited): those people can judge."""
        return [r[0] for r in self.conn.execute(
            "SELECT id FROM matches WHERE status='done' AND forfeit IS NULL ORDER BY seq")]

    def finish_order(self) -> list[str]:
        """Done matches in the order they finished (schedule order among equal times; unknown times first)."""
        return [r[0] for r in self.conn.execute(
            "SELECT id FROM matches WHERE status='done' ORDER BY finished_at, seq")]

    def set_preset(self, name: str) -> None:
        """Remember which preset (`arena init --preset`) made this workspace."""
        with _transaction(self.conn):
            self.conn.execute("INSERT OR REPLACE INTO meta VALUES ('preset', ?)", (name,))

    def preset(self) -> str | None:
        """The preset that made this workspace, if one did."""
        row = self.conn.execute("SELECT value FROM meta WHERE key='preset'").fetchone()
        return row[0] if row else None

    def forfeits(self) -> list[sqlite3.Row]:
        """Every forfeited match in schedule order: id, pro, con, category, forfeit (the side), forfeit_reason,
        simulated."""
        return self.conn.execute(
            "SELECT m.id, m.pro, m.con, mo.category, m.forfeit, m.forfeit_reason, m.simulated FROM matches m "
            "JOIN motions mo ON mo.id = m.motion_id WHERE m.status='done' AND m.forfeit IS NOT NULL "
            "ORDER BY m.seq").fetchall()

    def done_speech_texts(self) -> Iterator[tuple[str, str, str, str]]:
        """(match id, side, text, the motion's language) of every speech of a completed match."""
        return self.conn.execute(
            "SELECT s.match_id, s.side, s.text, mo.language FROM speeches s JOIN matches m ON m.id = s.match_id "
            "JOIN motions mo ON mo.id = m.motion_id WHERE m.status='done'")

    def forfeit_counts(self) -> dict[str, int]:
        """Forfeits per entry: completed matches its debater could not finish."""
        return {r[0]: r[1] for r in self.conn.execute(
            "SELECT CASE forfeit WHEN 'pro' THEN pro ELSE con END AS entry, COUNT(*) FROM matches "
            "WHERE status='done' AND forfeit IS NOT NULL GROUP BY entry")}

    def cast_ballots(self, judge: str, people: tuple[str, ...], ballots: Iterable[Ballot], simulated: bool) -> None:
        """Store ballots as the judge's verdicts, run = the person's index in people, all or nothing; each
        replaces the person's earlier ballot on that match. ArenaError, and nothing stored, for a match
        that is not done."""
        with _transaction(self.conn):
            for b in ballots:
                row = self.conn.execute("SELECT status, forfeit FROM matches WHERE id=?", (b.match_id,)).fetchone()
                if row is None or row["status"] != "done" or row["forfeit"]:
                    state = "unknown" if row is None else "forfeited" if row["forfeit"] else row["status"]
                    raise ArenaError(f"match {b.match_id!r} is {state}; ballots are cast on matches debated to "
                                     "the end only")
                run = people.index(b.person)
                self.conn.execute("INSERT OR IGNORE INTO ballot_people VALUES (?,?,?)", (judge, run, b.person))
                self._write_verdicts(b.match_id, [Verdict(judge, run, b.overall, dict(b.dimensions), b.rationale)],
                                     simulated)

    def ballot(self, match_id: str, judge: str, run: int) -> Verdict | None:
        """A person's ballot on a match (their run of the judge), if cast."""
        row = self.conn.execute("SELECT * FROM verdicts WHERE match_id=? AND judge=? AND run=?",
                                (match_id, judge, run)).fetchone()
        return None if row is None else _verdict(row)

    def ballots_cast(self, judge: str) -> dict[int, set[str]]:
        """run → the done matches that run (person) of the judge has a ballot on."""
        out: dict[int, set[str]] = {}
        for r in self.conn.execute("SELECT v.run, v.match_id FROM verdicts v JOIN matches m ON m.id = v.match_id "
                                   "WHERE v.judge=? AND m.status='done'", (judge,)):
            out.setdefault(r["run"], set()).add(r["match_id"])
        return out

    def match_rows(self) -> list[sqlite3.Row]:
        return self.conn.execute(
            "SELECT m.*, mo.text AS motion_text, mo.category FROM matches m JOIN motions mo ON mo.id = m.motion_id"
            " ORDER BY m.seq"
        ).fetchall()

    def match(self, match_id: str) -> Match | None:
        row = self.conn.execute("SELECT * FROM matches WHERE id=?", (match_id,)).fetchone()
        if row is None:
            return None
        speeches = tuple(_speech(r) for r in self.conn.execute(
            "SELECT * FROM speeches WHERE match_id=? ORDER BY seq", (match_id,)))
        verdicts = tuple(_verdict(r) for r in self.conn.execute(
            "SELECT * FROM verdicts WHERE match_id=? ORDER BY judge, run", (match_id,)))
        return Match(row["id"], self.motion(row["motion_id"]), row["pro"], row["con"], row["status"], row["error"],
                     bool(row["simulated"]), speeches, verdicts, _forfeit(row), row["format"])

    def matches(self) -> list[Match]:
        """Every match in schedule order with its speeches and verdicts: what match() gives, in four queries."""
        motions = {r["id"]: _motion(r) for r in self.conn.execute("SELECT * FROM motions")}
        speeches: dict[str, list[Speech]] = {}
        for r in self.conn.execute("SELECT * FROM speeches ORDER BY match_id, seq"):
            speeches.setdefault(r["match_id"], []).append(_speech(r))
        verdicts: dict[str, list[Verdict]] = {}
        for r in self.conn.execute("SELECT * FROM verdicts ORDER BY match_id, judge, run"):
            verdicts.setdefault(r["match_id"], []).append(_verdict(r))
        return [Match(r["id"], motions[r["motion_id"]], r["pro"], r["con"], r["status"], r["error"],
                      bool(r["simulated"]), tuple(speeches.get(r["id"], ())), tuple(verdicts.get(r["id"], ())),
                      _forfeit(r), r["format"])
                for r in self.conn.execute("SELECT * FROM matches ORDER BY seq")]

    def speech_usage(self) -> list[dict]:
        """Each speech of a completed match: the debater kind that gave it (as recorded), stage, usage per role."""
        rows = self.conn.execute(
            "SELECT e.debater, s.stage, s.agents FROM speeches s JOIN matches m ON m.id = s.match_id "
            "JOIN entries e ON e.name = CASE s.side WHEN 'pro' THEN m.pro ELSE m.con END "
            "WHERE m.status='done' ORDER BY m.seq, s.seq"
        )
        return [{"debater": r["debater"], "stage": r["stage"], "agents": json.loads(r["agents"])} for r in rows]

    def verdict_rows(self, judge: str | None = None) -> list[sqlite3.Row]:
        sql = ("SELECT v.*, m.pro, m.con, mo.category, m.simulated AS match_simulated FROM verdicts v "
               "JOIN matches m ON m.id = v.match_id "
               "JOIN motions mo ON mo.id = m.motion_id WHERE m.status='done'")
        args: tuple = ()
        if judge is not None:
            sql += " AND v.judge=?"
            args = (judge,)
        return self.conn.execute(sql + " ORDER BY m.seq, v.judge, v.run", args).fetchall()

    def judge_calls(self) -> list[sqlite3.Row]:
        """LLM calls per (judge, completed match): count and summed cost (NULL when any cost is unknown)."""
        return self.conn.execute(
            "SELECT c.judge, c.match_id, COUNT(*) AS calls, "
            "CASE WHEN COUNT(c.cost) = COUNT(*) THEN SUM(c.cost) END AS cost "
            "FROM calls c JOIN matches m ON m.id = c.match_id "
            "WHERE c.kind='llm' AND c.judge IS NOT NULL AND m.status='done' GROUP BY c.judge, c.match_id"
        ).fetchall()

    def failed_matches(self) -> list[tuple[str, str]]:
        """(id, error) of every failed match, in schedule order."""
        return [tuple(r) for r in self.conn.execute("SELECT id, error FROM matches WHERE status='failed' ORDER BY seq")]

    def call_sides(self) -> list[sqlite3.Row]:
        """Every call of a match with whom it was for: match id, kind, side, judge, the match's pro and con,
        tokens, and the model asked."""
        return self.conn.execute(
            "SELECT c.match_id, c.kind, c.side, c.judge, m.pro, m.con, c.prompt_tokens, c.completion_tokens, c.model "
            "FROM calls c JOIN matches m ON m.id = c.match_id").fetchall()

    # --- exports (arena.exports): every row of a kind, in a stable order ------------------------
    def entry_rows(self) -> list[sqlite3.Row]:
        """Every entry the database has recorded (those since removed from arena.toml too), by name."""
        return self.conn.execute("SELECT * FROM entries ORDER BY name").fetchall()

    def speech_rows(self) -> Iterator[sqlite3.Row]:
        """Every stored speech, its match's schedule order first, then speaking order."""
        return self.conn.execute("SELECT s.* FROM speeches s JOIN matches m ON m.id = s.match_id "
                                 "ORDER BY m.seq, s.seq")

    def all_verdict_rows(self) -> Iterator[sqlite3.Row]:
        """Every stored verdict, of any match (verdict_rows gives the done matches'), in schedule order, then by
        judge and run."""
        return self.conn.execute("SELECT v.* FROM verdicts v JOIN matches m ON m.id = v.match_id "
                                 "ORDER BY m.seq, v.judge, v.run")

    def call_rows(self) -> Iterator[sqlite3.Row]:
        """The whole ledger, in the order the calls were sent."""
        return self.conn.execute("SELECT * FROM calls ORDER BY id")

    # --- ledger and cache ----------------------------------------------------------------
    def record_call(self, *, kind: str, model: str, latency_s: float, cache_hit: bool, simulated: bool,
                    match_id: str | None = None, role: str | None = None, stage: str | None = None,
                    side: str | None = None, judge: str | None = None, prompt_tokens: int = 0,
                    completion_tokens: int = 0, cost: float | None = None, error: str | None = None,
                    structured: str | None = None, fitted: bool = False, finish_reason: str | None = None,
                    call_id: int | None = None) -> int:
        """Write a call to the ledger, or (call_id) settle the row written when it was sent; the row's id."""
        values = (kind, match_id, role, stage, side, judge, model, prompt_tokens, completion_tokens, cost, latency_s,
                  int(cache_hit), None if error is None else redact(error), int(simulated), now(), structured,
                  int(fitted), finish_reason)
        if call_id is not None:
            self.conn.execute(
                "UPDATE calls SET kind=?, match_id=?, role=?, stage=?, side=?, judge=?, model=?, prompt_tokens=?,"
                " completion_tokens=?, cost=?, latency_s=?, cache_hit=?, error=?, simulated=?, created_at=?,"
                " structured=?, fitted=?, finish_reason=? WHERE id=?", (*values, call_id))
            return call_id
        return self.conn.execute(
            "INSERT INTO calls (kind, match_id, role, stage, side, judge, model, prompt_tokens, completion_tokens,"
            " cost, latency_s, cache_hit, error, simulated, created_at, structured, fitted, finish_reason)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", values).lastrowid

    def model_facts(self, model: str, api_base: str) -> dict | None:
        """What the workspace knows of a model behind an endpoint (arena check, fallbacks taken)."""
        row = self.conn.execute("SELECT facts FROM models WHERE model=? AND api_base=?", (model, api_base)).fetchone()
        return json.loads(row[0]) if row else None

    def remember_model(self, model: str, api_base: str, **facts) -> None:
        """Merge facts into what is known of the model, in one transaction."""
        with _transaction(self.conn):
            known = self.model_facts(model, api_base) or {}
            self.conn.execute("INSERT OR REPLACE INTO models VALUES (?,?,?,?)",
                              (model, api_base, json.dumps({**known, **facts}), now()))

    def judge_simulated(self, judge: str) -> bool:
        """Whether any stored verdict of the judge on a completed match is simulated."""
        return bool(self.conn.execute(
            "SELECT EXISTS (SELECT 1 FROM verdicts v JOIN matches m ON m.id = v.match_id "
            "WHERE v.judge=? AND m.status='done' AND v.simulated)", (judge,)).fetchone()[0])

    def simulated_sides(self, match_id: str) -> set[str]:
        """The sides of a match whose debater the simulator answered in its latest play (since it was last claimed):
        a call of an offline/ model, or a search of the offline search provider (arena.records.simulated)."""
        return {r[0] for r in self.conn.execute(
            f"SELECT DISTINCT c.side {_SIMULATED_CALLS} AND m.id=?", (match_id,))}

    def simulated_entries(self) -> set[str]:
        """The entries any of whose speeches or searches came from the simulator: those on an offline/ model, and
        those the simulator answered (a model call or a search) on their own side of a done match's latest play.
        An entry is not simulated for its opponent's simulated speeches (arena.records.simulated)."""
        return {r[0] for r in self.conn.execute(
            "SELECT name FROM entries WHERE simulated UNION "
            f"SELECT DISTINCT CASE c.side WHEN 'pro' THEN m.pro ELSE m.con END {_SIMULATED_CALLS} "
            "AND m.status='done'")}

    def total_cost(self) -> float:
        """The ledger's cost summed, row by row (what reports show)."""
        return float(self.conn.execute("SELECT COALESCE(SUM(cost), 0) FROM calls").fetchone()[0])

    def spent(self) -> float:
        """The ledger's cost as its running total: total_cost in one row's read, whatever the ledger's length
        (the budget's check before each claim)."""
        return float(self.conn.execute("SELECT cost FROM ledger_total").fetchone()[0])

    def agent_messages(self, match_id: str) -> list[dict]:
        """What each agent of a completed match was sent and answered, in order, byte for byte as it was: stage,
        side, role, prompt, response, created_at."""
        rows = self.conn.execute("SELECT stage, side, role, created_at, prompt_bytes, response_bytes "
                                 "FROM agent_messages WHERE match_id=? ORDER BY id", (match_id,)).fetchall()
        block = self.conn.execute("SELECT codec, data FROM message_blocks WHERE match_id=?", (match_id,)).fetchone()
        if block is None:
            return []
        texts = unpack(block["codec"], block["data"], [(r["prompt_bytes"], r["response_bytes"]) for r in rows])
        return [{"stage": r["stage"], "side": r["side"], "role": r["role"], "prompt": prompt, "response": response,
                 "created_at": r["created_at"]} for r, (prompt, response) in zip(rows, texts)]

    def cache_get(self, key: str) -> dict | None:
        row = self.conn.execute("SELECT response FROM cache WHERE key=?", (key,)).fetchone()
        return json.loads(unsqueeze(row[0])) if row else None

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """The block's reads all from one state of the database, whatever other processes commit meanwhile (a read
        transaction: WAL keeps its state whole for it). The block writes nothing."""
        self.conn.execute("BEGIN")
        try:
            yield
        finally:
            self.conn.execute("COMMIT")

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """The block's writes in one transaction: all stored, or none (a call's settled row and its cached answer)."""
        with _transaction(self.conn):
            yield

    def cache_put(self, key: str, kind: str, response: dict) -> None:
        self.conn.execute("INSERT OR REPLACE INTO cache VALUES (?,?,?,?)",
                          (key, kind, squeeze(json.dumps(response)), now()))

    def entry_costs(self, skip: Collection[str] = frozenset()) -> dict[str, tuple[float, bool]]:
        """Per entry: the cost of its debaters' calls across all its matches but those in skip, and whether any
        price was unknown."""
        rows = self.conn.execute(
            "SELECT CASE c.side WHEN 'pro' THEN m.pro ELSE m.con END AS entry, c.match_id, "
            "COALESCE(SUM(c.cost), 0) AS cost, SUM(c.cost IS NULL AND c.error IS NULL AND c.cache_hit = 0) AS unknown "
            "FROM calls c JOIN matches m ON m.id = c.match_id WHERE c.side IS NOT NULL GROUP BY entry, c.match_id")
        out: dict[str, tuple[float, bool]] = {}
        for r in rows:
            if r["match_id"] not in skip:
                cost, unknown = out.get(r["entry"], (0.0, False))
                out[r["entry"]] = (cost + float(r["cost"]), unknown or bool(r["unknown"]))
        return out

    # --- the published site (issue 26, arena publish): matches without their speeches, speeches by match ------
    def match_heads(self) -> list[Match]:
        """Every match as matches() gives it but without its speeches, whose text is not read: what the site's
        lists and ratings show, and what tells it which match pages changed."""
        motions = {r["id"]: _motion(r) for r in self.conn.execute("SELECT * FROM motions")}
        verdicts: dict[str, list[Verdict]] = {}
        for r in self.conn.execute("SELECT * FROM verdicts ORDER BY match_id, judge, run"):
            verdicts.setdefault(r["match_id"], []).append(_verdict(r))
        return [Match(r["id"], motions[r["motion_id"]], r["pro"], r["con"], r["status"], r["error"],
                      bool(r["simulated"]), (), tuple(verdicts.get(r["id"], ())), _forfeit(r), r["format"])
                for r in self.conn.execute("SELECT * FROM matches ORDER BY seq")]

    def speeches_of(self, match_ids: Collection[str]) -> dict[str, tuple[Speech, ...]]:
        """The speeches of the given matches, by match, in the order matches() gives them."""
        out: dict[str, list[Speech]] = {}
        ids = list(match_ids)
        for k in range(0, len(ids), 500):  # older SQLite builds bind at most 999 values a statement
            chunk = ids[k:k + 500]
            for r in self.conn.execute(f"SELECT * FROM speeches WHERE match_id IN ({','.join('?' * len(chunk))})"
                                       " ORDER BY match_id, seq", chunk):
                out.setdefault(r["match_id"], []).append(_speech(r))
        return {match_id: tuple(speeches) for match_id, speeches in out.items()}

    def role_usage(self, skip: Collection[str] = frozenset()) -> dict[str, dict[str, AgentUsage]]:
        """Per entry, per role of its debater: what it spent over its completed matches but those in skip, its
        speeches added up in schedule and speaking order."""
        sums: dict[str, dict[str, list]] = {}  # AgentUsage.__add__ on plain lists: a third less time than objects
        for match_id, entry, agents in self.conn.execute(
                "SELECT s.match_id, CASE s.side WHEN 'pro' THEN m.pro ELSE m.con END, s.agents "
                "FROM speeches s JOIN matches m ON m.id = s.match_id WHERE m.status='done' ORDER BY m.seq, s.seq"):
            if match_id not in skip:
                roles = sums.setdefault(entry, {})
                for role, usage in json.loads(agents).items():
                    total = roles.setdefault(role, [0, 0, 0, None])
                    total[0] += usage.get("calls", 0)
                    total[1] += usage.get("prompt_tokens", 0)
                    total[2] += usage.get("completion_tokens", 0)
                    cost = usage.get("cost")
                    total[3] = None if total[3] is None and cost is None else (total[3] or 0.0) + (cost or 0.0)
        return {entry: {role: AgentUsage(*total) for role, total in roles.items()} for entry, roles in sums.items()}


# A completed, unforfeited match the judge still has to judge: (rejudging) no verdict of it since a time, or
# (otherwise) no verdict of it at all or a failed run.
_TO_JUDGE = ("m.status='done' AND m.forfeit IS NULL AND CASE WHEN ? IS NOT NULL THEN NOT EXISTS (SELECT 1 "
             "FROM verdicts v WHERE v.match_id=m.id AND v.judge=? AND v.created_at >= ?) ELSE (NOT EXISTS (SELECT "
             "1 FROM verdicts v WHERE v.match_id=m.id AND v.judge=? AND v.error IS NULL) OR EXISTS (SELECT 1 FROM "
             "verdicts v WHERE v.match_id=m.id AND v.judge=? AND v.error IS NOT NULL)) END")


def _to_judge_args(judge: str, rejudged_before: str | None) -> tuple:
    return (rejudged_before, judge, rejudged_before, judge, judge)


# A match still to play: scheduled, or running or failed (before a time; '' for never) under no live claim.
_PLAYABLE = ("LEFT JOIN claims c ON c.match_id = m.id AND c.judge = '' WHERE (m.status IN ('scheduled', 'running') "
             "OR (m.status = 'failed' AND m.finished_at < ?)) AND (c.holder IS NULL "
             "OR claim_lapsed(c.heartbeat_at, c.pid, c.host, ?, ?))")


def _write_messages(conn: sqlite3.Connection, match_id: str, messages: list[dict], sizes: list[tuple[int, int]],
                    block: bytes) -> None:
    """A match's agent messages (arena.messages.pack gave sizes and block), in place of any it had."""
    conn.executemany(
        "INSERT INTO agent_messages (match_id, stage, side, role, created_at, prompt_bytes, response_bytes)"
        " VALUES (?,?,?,?,?,?,?)",
        [(match_id, m.get("stage"), m.get("side"), m["role"], m["created_at"], p, r)
         for m, (p, r) in zip(messages, sizes)])
    conn.execute("INSERT OR REPLACE INTO message_blocks VALUES (?,?,?)", (match_id, CODEC, block))


# The first of them in schedule order, each status read in its index's order (matches_status) and only its first
# unclaimed match taken, so that a claim costs the same with 100,000 matches planned or stored as with ten.
_FIRST_PLAYABLE = " UNION ALL ".join(
    f"SELECT * FROM (SELECT m.id, m.seq FROM matches m LEFT JOIN claims c ON c.match_id = m.id AND c.judge = '' "
    f"WHERE m.status = '{status}'{also} AND (c.holder IS NULL OR claim_lapsed(c.heartbeat_at, c.pid, c.host, ?, ?))"
    f" ORDER BY m.seq LIMIT 1)"
    for status, also in (("scheduled", ""), ("running", ""), ("failed", " AND m.finished_at < ?"))
) + " ORDER BY seq LIMIT 1"


def _iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, timezone.utc).isoformat(timespec="microseconds")


def _motion(row: sqlite3.Row) -> Motion:
    return Motion(row["id"], row["text"], row["category"], row["language"], row["info_slide"], row["pro_text"],
                  row["con_text"])


def _speech(r: sqlite3.Row) -> Speech:
    # Speeches stored before references had text and numbers read without them.
    refs = tuple(Reference(x["title"], x["url"], x.get("text", ""), x.get("number", 0))
                 for x in json.loads(r["refs"]))
    return Speech(r["stage"], r["side"], r["text"], refs, r["started_at"], r["finished_at"],
                  {role: AgentUsage(**u) for role, u in json.loads(r["agents"]).items()}, bool(r["cut"]))


def _forfeit(r: sqlite3.Row) -> Forfeit | None:
    return Forfeit(r["forfeit"], r["forfeit_reason"] or "") if r["forfeit"] else None


def _verdict(r: sqlite3.Row) -> Verdict:
    return Verdict(r["judge"], r["run"], r["overall"], json.loads(r["dimensions"]), r["rationale"], r["error"],
                   json.loads(r["extra"]))
