"""The connection to arena.db and its transactions: the one generic part of the store, under every area of it."""
from __future__ import annotations

import sqlite3
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from arena.match.claims import lapsed
from arena.base.files import no_space, no_space_error

BUSY_MS = 60_000  # how long a writer waits for another process's transaction before giving up


class Connection(sqlite3.Connection):
    """A connection on which a full disk is an OSError naming the database, as it is for every other file the
    arena writes (arena.base.files): one message for it, and the run's engine can tell it from a failed match."""

    def __init__(self, database: str | Path, *args: Any, **kwargs: Any) -> None:
        super().__init__(database, *args, **kwargs)
        self.database = str(database)

    def execute(self, *args: Any) -> sqlite3.Cursor:
        with self._named_when_full():
            return super().execute(*args)

    def executemany(self, *args: Any) -> sqlite3.Cursor:
        with self._named_when_full():
            return super().executemany(*args)

    def executescript(self, *args: Any) -> sqlite3.Cursor:
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


def connect(path: Path) -> Connection:
    """arena.db in WAL mode, rows by name, foreign keys on, waiting for other processes' writes."""
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False, factory=Connection)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA foreign_keys=ON")
    # Other processes (workers, a second `arena run`, `arena judge`) write too: wait for them, don't fail.
    conn.execute(f"PRAGMA busy_timeout={BUSY_MS}")
    conn.create_function("claim_lapsed", 5, lapsed)
    return conn


@contextmanager
def write(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """The block's statements in one write transaction, taken at once (BEGIN IMMEDIATE): all stored, or none."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


class Database:
    """The store's connection, shared by its areas (the mixins of arena.store.Store); one connection, one thread."""

    conn: Connection
    path: Path

    def close(self) -> None:
        self.conn.close()

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
        with write(self.conn):
            yield

    def _scalar(self, sql: str, args: tuple[Any, ...] = ()) -> Any:
        """The first column of the first row of a query (None when it has no row)."""
        row = self.conn.execute(sql, args).fetchone()
        return None if row is None else row[0]
