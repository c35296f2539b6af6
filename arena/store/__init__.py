"""The workspace database, arena.db: SQLite in WAL mode, one versioned schema, atomic match commits.

Every read and write of the file is here, one module an area: the connection and its transactions (connection),
the schema and its migrations (schema), entries and motions (entries), the plan of tournaments and matches (plan),
who plays or judges what (claims), what matches produced (outcomes), people's ballots (ballots), people's turns
to debate on the web (turns), each judge's last attack run (attacks), and the calls, their costs, the cache and model
facts (ledger). Reads return the records of arena.domain.records, JSON decoded here (decode); no caller sees a row
or writes SQL.
"""
from __future__ import annotations

from pathlib import Path

from arena.store.attacks import Attacks
from arena.store.ballots import Ballots
from arena.store.claims import PLAY, Claims
from arena.store.connection import connect, named_when_unusable
from arena.store.entries import Entries
from arena.store.ledger import Ledger
from arena.store.outcomes import Outcomes
from arena.store.plan import Plan
from arena.store.schema import DB_NAME, IN_FLIGHT, SCHEMA_VERSION, migrate
from arena.store.turns import Turns

__all__ = ["DB_NAME", "IN_FLIGHT", "PLAY", "SCHEMA_VERSION", "Store"]


class Store(Entries, Plan, Claims, Outcomes, Ballots, Turns, Ledger, Attacks):
    """All reads and writes of arena.db. One connection, used from one thread."""

    def __init__(self, path: Path):
        self.path = Path(path)
        with named_when_unusable(self.path):
            self.conn = connect(self.path)
            try:
                migrate(self.conn, self.path)
            except BaseException:
                self.conn.close()
                raise
