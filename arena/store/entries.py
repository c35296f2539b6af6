"""The store's entries and motions: arena.toml's entries mirrored so that matches keep what an entry was, the motion
library, and what the workspace remembers of its making (motion sets, preset)."""
from __future__ import annotations

import json
from typing import Any, Iterable

from arena.base.clock import now
from arena.domain.records import Entry, Motion
from arena.gateway.redact import public_url
import arena.store.decode as decode
from arena.store.connection import Database, write


class Entries(Database):
    def sync_entries(self, entries: Iterable[Entry]) -> None:
        """Mirror arena.toml's entries into the database, so matches keep what an entry was."""
        with write(self.conn):
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

    def recorded_entries(self, *, played: bool = False) -> list[Entry]:
        """Every entry the database has recorded (those since removed from arena.toml too), by name, as last
        recorded; played: only those with a completed match."""
        where = (" WHERE name IN (SELECT pro FROM matches WHERE status='done' UNION SELECT con FROM matches "
                 "WHERE status='done')") if played else ""
        return [Entry(r["name"], r["debater"], r["model"], r["api_base"], r["strength"], json.loads(r["params"]),
                      bool(r["retired"]))
                for r in self.conn.execute(f"SELECT * FROM entries{where} ORDER BY name")]

    def played_entries(self) -> dict[str, Entry]:
        """The recorded configuration of each entry with at least one completed match."""
        return {e.name: e for e in self.recorded_entries(played=True)}

    def forget_entry(self, name: str) -> None:
        """Drop an entry that is in no match: nothing keeps its name, so it may be registered afresh."""
        with write(self.conn):
            self.conn.execute("DELETE FROM entries WHERE name=? AND name NOT IN (SELECT pro FROM matches "
                              "UNION SELECT con FROM matches)", (name,))

    def add_motions(self, motions: Iterable[Motion]) -> None:
        """Store motions, each in place of the stored motion of its id."""
        with write(self.conn):
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
        row = self.conn.execute(f"SELECT {decode.MOTION} FROM motions WHERE id=?", (motion_id,)).fetchone()
        return decode.motion(row) if row else None

    def motions(self) -> dict[str, Motion]:
        """Every stored motion, by id."""
        return {r["id"]: decode.motion(r) for r in self.conn.execute(f"SELECT {decode.MOTION} FROM motions")}

    def motion_ids(self) -> list[str]:
        return [r[0] for r in self.conn.execute("SELECT id FROM motions ORDER BY id")]

    def motion_sets(self) -> dict[str, Any]:
        """What is remembered of each motion set whose motions were stored (arena.app.setup.wiring), by spec: the
        digest of its file when they were, and its motion ids."""
        value = self._scalar("SELECT value FROM meta WHERE key='motion_sets'")
        return json.loads(value) if value is not None else {}

    def remember_motion_sets(self, record: dict[str, Any]) -> None:
        with write(self.conn):
            self.conn.execute("INSERT INTO meta VALUES ('motion_sets', ?) ON CONFLICT(key) DO UPDATE SET "
                              "value=excluded.value", (json.dumps(record),))

    def set_preset(self, name: str) -> None:
        """Remember which preset (`arena init --preset`) made this workspace."""
        with write(self.conn):
            self.conn.execute("INSERT OR REPLACE INTO meta VALUES ('preset', ?)", (name,))

    def preset(self) -> str | None:
        """The preset that made this workspace, if one did."""
        value = self._scalar("SELECT value FROM meta WHERE key='preset'")
        return None if value is None else str(value)
