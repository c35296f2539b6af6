"""The workspace database: versioned schema, WAL, and a refusal to open a newer schema."""
from __future__ import annotations

import sqlite3

import pytest

from arena.errors import ArenaError
from arena.store import SCHEMA_VERSION, Store


def test_new_store_has_versioned_schema_in_wal_mode(tmp_path):
    store = Store(tmp_path / "arena.db")
    conn = store.conn
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0] == str(SCHEMA_VERSION)
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"entries", "motions", "tournaments", "matches", "speeches", "agent_messages", "verdicts", "calls",
            "cache"} <= tables
    store.close()
    Store(tmp_path / "arena.db").close()  # reopening an existing store migrates nothing and keeps data


def test_a_newer_schema_is_refused(tmp_path):
    Store(tmp_path / "arena.db").close()
    conn = sqlite3.connect(tmp_path / "arena.db")
    conn.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION + 1),))
    conn.commit()
    conn.close()
    with pytest.raises(ArenaError, match="newer"):
        Store(tmp_path / "arena.db")


def test_references_keep_their_number_and_source_text_and_older_rows_still_load(tmp_path):
    from arena.app import commands as app
    from arena.app.shapes import match_json
    from arena.claims import Holder
    from arena.records import Reference, Speech
    from tests.helpers import entry, new_workspace

    new_workspace(tmp_path / "ws", entries=[entry("a"), entry("b")], search=None)
    ws = app.open_workspace(tmp_path / "ws")
    [match_id] = ws.store.add_tournament("t", 0, {}, [(ws.store.motion_ids()[0], "a", "b")])
    holder = Holder.here()
    assert ws.store.claim_match(holder, only=match_id) == match_id
    cited = (Reference("Report", "https://example.org/r", "Injuries fell by a third.", 7),)
    ws.store.commit_match(match_id, [Speech("constructive", "pro", "Injuries fell [7].", cited)], [], [], True,
                          holder)

    assert ws.store.match(match_id).speeches[0].references == cited
    assert match_json(ws.store.match(match_id))["speeches"][0]["references"] == [
        {"title": "Report", "url": "https://example.org/r", "text": "Injuries fell by a third.", "number": 7}]
    # A speech stored before references had text and numbers reads with neither.
    ws.store.conn.execute("UPDATE speeches SET refs = ?", ('[{"title": "Old", "url": "https://example.org/o"}]',))
    assert ws.store.match(match_id).speeches[0].references == (Reference("Old", "https://example.org/o"),)
    ws.close()
