"""The store's judge attacks: each judge's last `arena judge-attacks` run, a row per attack, and the ledger's
calls of a run's judgings (tagged by their match_id)."""
from __future__ import annotations

from typing import Iterable

from arena.domain.records import AttackResult
from arena.store.connection import Database, write

_COLUMNS = ("judge, attack, trials, flips, ci_low, ci_high, caught, calls, cost, simulated, ran_at, "
            "flips_uncaught")


class Attacks(Database):
    def save_attack_results(self, judge: str, results: Iterable[AttackResult]) -> None:
        """The judge's last attack run: its rows, in their order, in place of the run before (all at once)."""
        rows = [(r.judge, r.attack, r.trials, r.flips, r.ci_low, r.ci_high, r.caught, r.calls, r.cost,
                 int(r.simulated), r.ran_at, r.flips_uncaught, seq) for seq, r in enumerate(results)]
        with write(self.conn):
            self.conn.execute("DELETE FROM judge_attacks WHERE judge=?", (judge,))
            self.conn.executemany(f"INSERT INTO judge_attacks ({_COLUMNS}, seq) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                                  rows)

    def attack_results(self, judge: str | None = None) -> list[AttackResult]:
        """Every judge's last attack run (or one judge's), by judge and then in the run's order."""
        where, args = ("WHERE judge=?", (judge,)) if judge is not None else ("", ())
        return [AttackResult(r["judge"], r["attack"], r["trials"], r["flips"], r["ci_low"], r["ci_high"], r["caught"],
                             r["calls"], r["cost"], bool(r["simulated"]), r["ran_at"],
                             r["flips_uncaught"])
                for r in self.conn.execute(f"SELECT {_COLUMNS} FROM judge_attacks {where} ORDER BY judge, seq", args)]

    def tagged_calls(self, prefix: str) -> dict[str, tuple[int, float | None]]:
        """LLM calls whose match_id begins with prefix (a run's own tags, as judge-bench's "bench:"), per match_id:
        their count and summed cost (None when any price is unknown; an answer from the cache costs nothing)."""
        return {r[0]: (int(r[1]), None if r[2] is None else float(r[2])) for r in self.conn.execute(
            "SELECT match_id, COUNT(*), CASE WHEN SUM(cost IS NULL AND error IS NULL AND cache_hit = 0) = 0 "
            "THEN COALESCE(SUM(cost), 0) END FROM calls WHERE kind='llm' AND substr(match_id, 1, ?) = ? "
            "GROUP BY match_id", (len(prefix), prefix))}
