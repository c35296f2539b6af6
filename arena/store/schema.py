"""arena.db's schema: the tables of every area, and the steps that bring an older workspace's file up to date."""
from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Callable

from arena.base.errors import ArenaError
from arena.store.packing import CODEC, pack

DB_NAME = "arena.db"
# The error of a ledger row written as its call was sent: the call settles it with its outcome, so a row that
# keeps it is a call a stopped process never heard back from (paid, perhaps: its cost is the most it could be).
IN_FLIGHT = "in flight: sent, and no answer recorded (the process stopped before the call ended)"
SCHEMA_VERSION = 14

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

# What each agent was sent and answered: a row per message, its texts in its match's block (arena.store.packing).
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

# A stamp every write to what the published site shows renews (any process's, through triggers, as the ledger's
# total is kept): equal stamps, the same data, so a publish learns whether anything changed from one row rather than
# by hashing whole tables. A random stamp rather than a count, so two copies of one workspace never share one after
# either has changed.
_SHOWN = ("matches", "speeches", "verdicts", "entries", "motions", "calls")
_CHANGES = """
CREATE TABLE changes (id INTEGER PRIMARY KEY CHECK (id = 0), stamp TEXT NOT NULL);
INSERT INTO changes VALUES (0, lower(hex(randomblob(8))));
""" + "".join(f"CREATE TRIGGER {table}_{event.lower()}_stamp AFTER {event} ON {table} "
              "BEGIN UPDATE changes SET stamp = lower(hex(randomblob(8))); END;\n"
              for table in _SHOWN for event in ("INSERT", "UPDATE", "DELETE"))
# People who debate on the web (a `human` entry with via = "web"): a private link per entry (only its token's hash
# kept), and each turn of theirs a match reached: what it showed them (brief, JSON), their draft and their speech.
# The last `arena judge-attacks` run of each judge: a row per attack (arena.domain.records.AttackResult). A write
# renews the change stamp, as the tables of _SHOWN do: the site's judge pages show them.
_ATTACKS = """
CREATE TABLE judge_attacks (
    judge TEXT NOT NULL, attack TEXT NOT NULL, trials INTEGER NOT NULL, flips INTEGER NOT NULL, ci_low REAL,
    ci_high REAL, caught INTEGER NOT NULL, calls INTEGER NOT NULL, cost REAL, simulated INTEGER NOT NULL,
    ran_at TEXT NOT NULL, flips_uncaught INTEGER NOT NULL, seq INTEGER NOT NULL, PRIMARY KEY (judge, attack));
""" + "".join(f"CREATE TRIGGER judge_attacks_{event.lower()}_stamp AFTER {event} ON judge_attacks "
              "BEGIN UPDATE changes SET stamp = lower(hex(randomblob(8))); END;\n"
              for event in ("INSERT", "UPDATE", "DELETE"))
_TURNS = """
CREATE TABLE debater_links (token_hash TEXT PRIMARY KEY, entry TEXT NOT NULL UNIQUE, created_at TEXT NOT NULL);
CREATE TABLE turns (
    match_id TEXT NOT NULL REFERENCES matches(id), stage TEXT NOT NULL, side TEXT NOT NULL, entry TEXT NOT NULL,
    opened_at TEXT NOT NULL, deadline TEXT NOT NULL, brief TEXT NOT NULL, draft TEXT NOT NULL DEFAULT '',
    draft_at TEXT, speech TEXT, submitted_at TEXT, PRIMARY KEY (match_id, stage, side));
CREATE INDEX turns_entry ON turns(entry);
"""

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
    cached_tokens INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (match_id, judge, run));
CREATE TABLE calls (
    id INTEGER PRIMARY KEY, kind TEXT NOT NULL, match_id TEXT, role TEXT, stage TEXT, side TEXT,
    judge TEXT, model TEXT NOT NULL, prompt_tokens INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0, cost REAL, latency_s REAL NOT NULL,
    cache_hit INTEGER NOT NULL, error TEXT, simulated INTEGER NOT NULL, created_at TEXT NOT NULL,
    structured TEXT, fitted INTEGER NOT NULL DEFAULT 0, finish_reason TEXT,
    cached_tokens INTEGER NOT NULL DEFAULT 0);
CREATE TABLE models (
    model TEXT NOT NULL, api_base TEXT NOT NULL, facts TEXT NOT NULL, updated_at TEXT NOT NULL,
    PRIMARY KEY (model, api_base));
CREATE TABLE cache (key TEXT PRIMARY KEY, kind TEXT NOT NULL, response TEXT NOT NULL, created_at TEXT NOT NULL);
CREATE INDEX matches_status ON matches(status, seq);
CREATE INDEX calls_match ON calls(match_id);
""" + _CLAIMS + _BALLOTS + _CLOSURES + _MESSAGES + _LEDGER_TOTAL + _CHANGES + _TURNS + _ATTACKS


def _lean_messages(conn: sqlite3.Connection) -> None:
    """Schema 9 → 10: every match's agent messages, stored as plain text, packed into its block (arena.store.packing);
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
    out: list[str] = []
    pending = ""
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
_MIGRATIONS: dict[int, str | Callable[[sqlite3.Connection], None]] = {
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
    # Debate formats (arena.domain.formats) per match, and what an imported verdict's source said beyond ours.
    8: "ALTER TABLE matches ADD COLUMN format TEXT NOT NULL DEFAULT 'agent4debate';"
       "ALTER TABLE verdicts ADD COLUMN extra TEXT NOT NULL DEFAULT '{}';",
    # Scale: agent messages compressed in a block per match (1 MB of prompts a match, each quoting the
    # transcript again, become ~30 KB), indexed by match; the ledger's running total.
    _LEAN: _lean_messages,
    10: _CHANGES,
    11: _TURNS,  # people debating on the web
    # Prompt caching at providers: each call's prompt tokens read from the provider's cache, and each judge run's.
    12: "ALTER TABLE calls ADD COLUMN cached_tokens INTEGER NOT NULL DEFAULT 0;"
        "ALTER TABLE verdicts ADD COLUMN cached_tokens INTEGER NOT NULL DEFAULT 0;",
    13: _ATTACKS,  # each judge's last `arena judge-attacks` run
}


def migrate(conn: sqlite3.Connection, path: Path) -> None:
    """Create the schema in a new file, or bring an older one up to SCHEMA_VERSION a step at a time; ArenaError
    for a file newer than this arena."""
    has_meta = conn.execute("SELECT 1 FROM sqlite_master WHERE name='meta'").fetchone()
    if not has_meta:
        # executescript commits any open transaction first, so the script carries its own.
        conn.executescript(
            f"BEGIN IMMEDIATE;{_SCHEMA}INSERT INTO meta VALUES ('schema_version', '{SCHEMA_VERSION}');COMMIT;"
        )
        return
    while True:
        conn.execute("BEGIN IMMEDIATE")
        try:
            # Read under the write lock: another process opening the same old workspace may have upgraded it.
            version = int(conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0])
            if version > SCHEMA_VERSION:
                raise ArenaError(f"{path}: schema version {version} is newer than this arena "
                                 f"({SCHEMA_VERSION}); upgrade arena")
            if version < SCHEMA_VERSION:
                step = _MIGRATIONS[version]
                if callable(step):
                    step(conn)
                else:
                    for statement in _statements(step):
                        conn.execute(statement)
                conn.execute("UPDATE meta SET value=? WHERE key='schema_version'", (str(version + 1),))
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
        if version == _LEAN:
            # The plain-text messages' pages are free now but still in the file (~1 MB a match): give them back,
            # unless another process reads the file meanwhile (then new rows reuse them as the store grows).
            try:
                conn.execute("VACUUM")
            except sqlite3.OperationalError:
                pass
        if version >= SCHEMA_VERSION:
            return
