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
