"""The store at scale: every query a run makes per match served by an index, the ledger's running total, agent
messages packed per match and read back byte for byte, and the migration of a version-9 workspace."""
from __future__ import annotations

import json
import re
import sqlite3
from dataclasses import asdict
from collections import Counter

from arena.app import commands as app
from arena.app.commands import open_workspace
from arena.match.claims import Holder
from arena.domain.records import Speech
from arena.store import SCHEMA_VERSION, Store
from tests.support.helpers import SINCE_VERSION_10, entry, judge, new_workspace

# Tables that grow with the matches played: reading one whole on a hot path makes a run quadratic.
GROWING = {"matches", "speeches", "agent_messages", "message_blocks", "verdicts", "calls", "claims", "cache"}

# What a run does for every match, as SQL fragments, so that the test fails if the trace misses them.
HOT = ("UPDATE matches SET status='running'",  # the claim
       "DELETE FROM agent_messages WHERE match_id",  # the commit replaces a match's messages...
       "INSERT INTO agent_messages", "INSERT OR REPLACE INTO message_blocks",  # ...with the packed ones
       "INSERT INTO calls",  # the ledger's rows (a paid call's is settled by id, its primary key)
       "SELECT cost FROM ledger_total",  # the budget's check
       "SELECT m.id, m.seq FROM matches m")  # the first playable match, by status


def _shape(sql: str) -> str:
    """A statement with its literal values taken out: one key for every execution of the same query."""
    return re.sub(r"'(?:[^']|'')*'|\b\d+(?:\.\d+)?(?:e-?\d+)?\b|X'[0-9A-F]*'", "?", sql)


def _faults(conn: sqlite3.Connection, sql: str) -> list[str]:
    """The steps of the statement's query plan that read a growing table whole, or sort rows that are neither one
    match's (every search keyed by a match) nor a compound's parts (each one row at most)."""
    plan = conn.execute(f"EXPLAIN QUERY PLAN {sql}").fetchall()
    parents = {row[0]: row[3] for row in plan}
    one_match = all(re.search(r"\((match_id|id)=\?", row[3]) for row in plan if row[3].startswith("SEARCH"))
    bad = []
    for row in plan:
        detail = row[3]
        scanned = re.match(r"SCAN (\w+)", detail)
        if scanned and scanned.group(1) in GROWING:
            bad.append(detail)
        if (detail.startswith("USE TEMP B-TREE") and not one_match
                and not parents.get(row[1], "").startswith(("RIGHT", "LEFT"))):
            bad.append(detail)
    return bad


def test_every_query_a_run_makes_for_each_match_is_served_by_an_index(tmp_path):
    path = new_workspace(tmp_path / "ws", entries=[entry(n) for n in "abcd"], judges=[judge("j", runs=2)])
    ws = open_workspace(path)
    try:
        matches = len(app.schedule(ws, "round-robin", rounds=1).match_ids)
        statements: Counter = Counter()
        example: dict[str, str] = {}

        def traced(sql: str) -> None:
            shape = _shape(sql)
            statements[shape] += 1
            example.setdefault(shape, sql)

        ws.store.conn.set_trace_callback(traced)
        counts = app.run(ws, concurrency=2, budget=1000.0, progress=lambda line: None)
        ws.store.heartbeat(Holder.here())
        ws.store.conn.set_trace_callback(None)
        assert counts["done"] == matches == 12

        hot = {shape for shape, n in statements.items() if n >= matches}
        for fragment in HOT:
            assert any(_shape(fragment) in shape for shape in hot), f"no hot query traced with {fragment!r}"
        faults = {example[shape]: _faults(ws.store.conn, example[shape])
                  for shape in hot if not shape.startswith(("BEGIN", "COMMIT", "ROLLBACK", "PRAGMA"))}
        assert {sql: bad for sql, bad in faults.items() if bad} == {}
    finally:
        ws.close()


def test_the_plan_check_catches_a_query_that_reads_a_growing_table_whole(tmp_path):
    store = Store(tmp_path / "arena.db")
    assert _faults(store.conn, "SELECT COALESCE(SUM(cost), 0) FROM calls") == ["SCAN calls"]
    assert _faults(store.conn, "SELECT id FROM matches WHERE status IN ('scheduled', 'failed') ORDER BY seq") != []
    assert _faults(store.conn, "SELECT * FROM agent_messages WHERE match_id='m00001'") == []
    store.close()


def test_the_running_total_follows_every_write_to_the_ledger(tmp_path):
    store = Store(tmp_path / "arena.db")
    sent = store.record_call(kind="llm", model="openai/x", latency_s=0, cache_hit=False, simulated=False, cost=0.5)
    store.record_call(kind="llm", model="openai/x", latency_s=0, cache_hit=False, simulated=False, cost=None)
    assert store.spent() == store.total_cost() == 0.5
    store.record_call(kind="llm", model="openai/x", latency_s=0, cache_hit=False, simulated=False, cost=0.125,
                      call_id=sent)  # settled in place: the most it could cost becomes what it cost
    assert store.spent() == store.total_cost() == 0.125
    store.conn.execute("DELETE FROM calls WHERE id=?", (sent,))
    assert store.spent() == store.total_cost() == 0.0
    store.close()

    other = Store(tmp_path / "arena.db")  # another process's calls count too: the total lives in the database
    other.record_call(kind="search", model="tavily", latency_s=0, cache_hit=False, simulated=False, cost=0.25)
    assert Store(tmp_path / "arena.db").spent() == 0.25
    other.close()


MESSAGES = [
    {"stage": "constructive", "side": "pro", "role": "searcher", "prompt": "Find evidence. " * 400,
     "response": '{"queries": ["a"]}', "created_at": "2026-01-01T00:00:00.000001+00:00"},
    {"stage": "constructive", "side": "pro", "role": "writer", "prompt": "Write: 中文与 émoji 🙂\r\n\ttabs \x00 nul",
     "response": "", "created_at": "2026-01-01T00:00:01.000001+00:00"},
    {"stage": None, "side": None, "role": "judge", "prompt": "", "response": "Pro wins.\n\n" * 50,
     "created_at": "2026-01-01T00:00:02.000001+00:00"},
]


def _committed(tmp_path) -> tuple[Store, str]:
    new_workspace(tmp_path / "ws", entries=[entry("a"), entry("b")])
    ws = open_workspace(tmp_path / "ws")
    [match_id] = ws.store.add_tournament("t", 0, {}, [(ws.store.motion_ids()[0], "a", "b")])
    holder = Holder.here()
    assert ws.store.claim_match(holder, only=match_id) == match_id
    ws.store.commit_match(match_id, [Speech("constructive", "pro", "We propose.")], [], MESSAGES, True, holder)
    return ws, match_id


def test_agent_messages_come_back_byte_for_byte_and_take_a_fraction_of_their_size(tmp_path):
    ws, match_id = _committed(tmp_path)
    try:
        assert said(ws.store, match_id) == MESSAGES
        assert ws.store.conn.execute("SELECT COUNT(*) FROM agent_messages WHERE match_id=?",
                                     (match_id,)).fetchone()[0] == len(MESSAGES)
        [stored] = ws.store.conn.execute("SELECT LENGTH(data) FROM message_blocks WHERE match_id=?",
                                         (match_id,)).fetchone()
        raw = sum(len((m["prompt"] + m["response"]).encode()) for m in MESSAGES)
        assert stored < raw / 10
        # A match played again (after a resumed run) replaces its messages rather than adding to them.
        holder = Holder.here()
        ws.store.conn.execute("UPDATE matches SET status='scheduled' WHERE id=?", (match_id,))
        assert ws.store.claim_match(holder, only=match_id) == match_id
        ws.store.commit_match(match_id, [], [], MESSAGES[:1], True, holder)
        assert said(ws.store, match_id) == MESSAGES[:1]
        assert said(ws.store, "m99999") == []
    finally:
        ws.close()


def said(store: Store, match_id: str) -> list[dict]:
    """A match's agent messages as plain dicts, to compare with what was committed."""
    return [asdict(m) for m in store.agent_messages(match_id)]


def _version_9(path) -> None:
    """Make the database what schema 9 wrote: agent messages as plain text, no blocks, no running total."""
    db = sqlite3.connect(path)
    db.executescript(
        "DROP TABLE agent_messages; DROP TABLE message_blocks; DROP TABLE ledger_total;"
        "DROP TRIGGER ledger_total_insert; DROP TRIGGER ledger_total_update; DROP TRIGGER ledger_total_delete;"
        "CREATE TABLE agent_messages (id INTEGER PRIMARY KEY, match_id TEXT NOT NULL, stage TEXT, side TEXT,"
        " role TEXT NOT NULL, prompt TEXT NOT NULL, response TEXT NOT NULL, created_at TEXT NOT NULL);"
        "UPDATE meta SET value='9' WHERE key='schema_version';" + SINCE_VERSION_10)
    db.executemany("INSERT INTO agent_messages VALUES (?,?,?,?,?,?,?,?)",
                   [(10 * first + k, match, m["stage"], m["side"], m["role"], m["prompt"], m["response"],
                     m["created_at"])
                    for first, match, messages in ((3, "m00001", MESSAGES), (1, "m00002", MESSAGES[::-1]))
                    for k, m in enumerate(messages)])  # ids not in match order: the upgrade keeps each row's id
    db.execute("INSERT INTO calls (kind, model, latency_s, cache_hit, simulated, created_at, cost) "
               "VALUES ('llm', 'openai/x', 0.1, 0, 0, 'then', 0.75)")
    db.commit()
    db.close()


def test_a_version_9_workspace_keeps_every_message_when_upgraded(tmp_path):
    path = tmp_path / "arena.db"
    Store(path).close()
    _version_9(path)
    before = sqlite3.connect(path).execute("SELECT id, match_id, role FROM agent_messages ORDER BY id").fetchall()

    store = Store(path)
    assert store.conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0] == str(SCHEMA_VERSION)
    assert said(store, "m00001") == MESSAGES
    assert said(store, "m00002") == MESSAGES[::-1]
    assert [tuple(r) for r in store.conn.execute("SELECT id, match_id, role FROM agent_messages ORDER BY id")] == before
    assert "prompt" not in {r[1] for r in store.conn.execute("PRAGMA table_info(agent_messages)")}
    assert store.spent() == 0.75  # the running total starts from the ledger as it was
    store.close()
    Store(path).close()  # an upgraded database opens as it is


def test_an_upgrade_that_fails_leaves_the_workspace_as_it_was(tmp_path):
    path = tmp_path / "arena.db"
    Store(path).close()
    _version_9(path)
    db = sqlite3.connect(path)  # the name the upgrade needs is taken: it stops, and rolls back whole
    db.execute("CREATE TABLE message_blocks (x)")
    db.commit()
    db.close()
    try:
        Store(path)
    except sqlite3.OperationalError as exc:
        assert "message_blocks" in str(exc)
    else:
        raise AssertionError("the upgrade went on over a table in its way")
    db = sqlite3.connect(path)
    assert db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0] == "9"
    assert [r[0] for r in db.execute("SELECT prompt FROM agent_messages ORDER BY id")] == [
        m["prompt"] for m in MESSAGES[::-1] + MESSAGES]
    db.close()


def test_arena_match_messages_shows_them_as_stored(tmp_path):
    from arena.base.terminal import shown as shown_text
    from tests.support.helpers import assert_user_error, invoke

    ws, match_id = _committed(tmp_path)
    ws.close()
    shown = invoke("match", "messages", match_id, "--format", "json", "-w", tmp_path / "ws")
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.output) == MESSAGES
    text = invoke("match", "messages", match_id, "-w", tmp_path / "ws")
    assert text.exit_code == 0 and "=== 2. constructive · PRO · writer" in text.output
    # The terminal's text shows the NUL made visible (arena.base.terminal); the JSON above keeps it exact.
    assert shown_text(MESSAGES[1]["prompt"]) in text.output
    assert_user_error(invoke("match", "messages", "m404", "-w", tmp_path / "ws"), "m404")


def test_cached_answers_are_stored_squeezed_and_older_plain_rows_still_read(tmp_path):
    store = Store(tmp_path / "arena.db")
    speech = {"text": "We hold that the motion stands, and here is why. " * 40, "data": None, "cut": False}
    store.cache_put("k-speech", "llm", speech)
    store.cache_put("k-short", "llm", {"text": "ok"})  # too short to gain: stored as it is
    store.conn.execute("INSERT INTO cache VALUES ('k-old', 'llm', ?, 'then')", (json.dumps({"text": "é"}),))
    kinds = dict(store.conn.execute("SELECT key, typeof(response) || ':' || length(response) FROM cache"))
    assert kinds["k-speech"].startswith("blob:") and int(kinds["k-speech"][5:]) < len(json.dumps(speech)) / 4
    assert kinds["k-short"].startswith("text:")
    assert store.cache_get("k-speech") == speech
    assert store.cache_get("k-short") == {"text": "ok"} and store.cache_get("k-old") == {"text": "é"}
    assert store.cache_get("k-none") is None
    store.close()
