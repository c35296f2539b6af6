"""The connection to arena.db and its transactions: the one generic part of the store, under every area of it."""
from __future__ import annotations

import os
import sqlite3
import stat
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from arena.match.claims import lapsed
from arena.base.errors import UserError
from arena.base.files import no_space, no_space_error

BUSY_MS = 60_000  # how long a writer waits for another process's transaction before giving up
SQLITE_HEADER = b"SQLite format 3\x00"  # the first 16 bytes of every SQLite database file
# SQLite's primary result codes for a file it cannot use as a database (sqlite3.Error.sqlite_errorcode & 0xff).
_READONLY, _CORRUPT, _CANTOPEN, _NOTADB = 8, 11, 14, 26
_AWAY = "nothing was written to it"


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


def check_usable(path: Path) -> None:
    """UserError naming the file and what is wrong, before SQLite touches anything, for a database the store cannot
    use: a file that is not an SQLite database, an empty file (SQLite would take it for a new database and
    store a fresh workspace over it), or a file or folder this user cannot write (SQLite keeps the WAL and its
    index, arena.db-wal and arena.db-shm, beside the database). A missing file is fine where its folder is
    writable: SQLite creates it."""
    path = Path(path)
    try:
        info = path.stat()
    except FileNotFoundError:
        info = None
    except OSError as exc:
        raise UserError(f"{path}: cannot be read ({exc.strerror})") from None
    if info is not None:
        if not stat.S_ISREG(info.st_mode):
            raise UserError(f"{path}: not a file, so not the workspace's database; {_AWAY}")
        wal = path.with_name(path.name + "-wal")
        if info.st_size == 0 and not (wal.exists() and wal.stat().st_size):  # a WAL may hold a new file's pages
            raise UserError(f"{path}: an empty file (0 bytes) where the workspace's database should be, so its "
                            f"history is lost or was never written; {_AWAY}. Restore arena.db from a backup, or "
                            "delete the empty file to start the workspace's history afresh")
        try:
            with path.open("rb") as file:
                head = file.read(len(SQLITE_HEADER))
        except OSError as exc:
            raise UserError(f"{path}: cannot be read ({exc.strerror}); {_AWAY}") from None
        if info.st_size and head != SQLITE_HEADER:
            raise UserError(f"{path}: not an SQLite database (it begins {head[:12]!r}), so not the workspace's "
                            f"database; {_AWAY}. Restore arena.db from a backup, or move the file aside to start the "
                            "workspace's history afresh")
        if not os.access(path, os.W_OK):
            raise UserError(f"{path}: cannot be written by this user (read-only), and every command records in "
                            "the workspace's database; make it writable, or copy the workspace to a folder you "
                            "can write")
    folder = path.parent
    if not os.access(folder, os.W_OK):
        raise UserError(f"{folder}: the workspace's folder cannot be written by this user (read-only), and SQLite "
                        f"writes {path.name}-wal and {path.name}-shm there beside {path.name} (and {path.name} itself "
                        "when new); make it writable, or copy the workspace to a folder you can write")


@contextmanager
def named_when_unusable(path: Path) -> Iterator[None]:
    """SQLite's refusal of a file it cannot use as a database (not one, damaged, read-only, not to be opened) as
    a UserError naming it: what check_usable cannot see before opening (a damaged file with a good header, a
    read-only filesystem under root)."""
    try:
        yield
    except sqlite3.DatabaseError as exc:
        code = (getattr(exc, "sqlite_errorcode", None) or 0) & 0xFF
        if code in (_CORRUPT, _NOTADB):
            raise UserError(f"{path}: damaged, or not an SQLite database (SQLite: {exc}), so not usable as the "
                            f"workspace's database; {_AWAY}. Restore arena.db from a backup") from None
        if code in (_READONLY, _CANTOPEN):
            raise UserError(f"{path}: SQLite cannot open it for writing ({exc}); make it and its folder writable, "
                            "or copy the workspace to a folder you can write") from None
        raise


def connect(path: Path) -> Connection:
    """arena.db in WAL mode, rows by name, foreign keys on, waiting for other processes' writes; UserError for a
    file that cannot be (check_usable)."""
    check_usable(path)
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False, factory=Connection)
    try:
        conn.row_factory = sqlite3.Row
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA foreign_keys=ON")
        # Other processes (workers, a second `arena run`, `arena judge`) write too: wait for them, don't fail.
        conn.execute(f"PRAGMA busy_timeout={BUSY_MS}")
        conn.create_function("claim_lapsed", 5, lapsed)
    except BaseException:
        conn.close()
        raise
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
