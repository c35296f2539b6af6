"""The store's ledger: every call (LLM or search) with its tokens, cost and outcome, its running total, the answer
cache, and what is known of each model; and the change stamp a publish compares."""
from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any, Collection

from arena.base.clock import now
from arena.domain.records import CallSide, JudgeCalls, LedgerCall, MatchProgress, Step
from arena.gateway.redact import redact
import arena.store.decode as decode
from arena.store.connection import Database, write
from arena.store.packing import squeeze, unsqueeze
from arena.store.schema import IN_FLIGHT


class Ledger(Database):
    def record_call(self, *, kind: str, model: str, latency_s: float, cache_hit: bool, simulated: bool,
                    match_id: str | None = None, role: str | None = None, stage: str | None = None,
                    side: str | None = None, judge: str | None = None, prompt_tokens: int = 0,
                    completion_tokens: int = 0, cost: float | None = None, error: str | None = None,
                    structured: str | None = None, fitted: bool = False, finish_reason: str | None = None,
                    call_id: int | None = None, cached_tokens: int = 0) -> int:
        """Write a call to the ledger, or (call_id) settle the row written when it was sent; the row's id.
        cached_tokens: of prompt_tokens, those the provider read from its prompt cache (arena.gateway.caching)."""
        values = (kind, match_id, role, stage, side, judge, model, prompt_tokens, completion_tokens, cost, latency_s,
                  int(cache_hit), None if error is None else redact(error), int(simulated), now(), structured,
                  int(fitted), finish_reason, cached_tokens)
        if call_id is not None:
            self.conn.execute(
                "UPDATE calls SET kind=?, match_id=?, role=?, stage=?, side=?, judge=?, model=?, prompt_tokens=?,"
                " completion_tokens=?, cost=?, latency_s=?, cache_hit=?, error=?, simulated=?, created_at=?,"
                " structured=?, fitted=?, finish_reason=?, cached_tokens=? WHERE id=?", (*values, call_id))
            return call_id
        row_id = self.conn.execute(
            "INSERT INTO calls (kind, match_id, role, stage, side, judge, model, prompt_tokens, completion_tokens,"
            " cost, latency_s, cache_hit, error, simulated, created_at, structured, fitted, finish_reason,"
            " cached_tokens) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", values).lastrowid
        assert row_id is not None  # an INSERT's
        return row_id

    def ledger(self) -> list[LedgerCall]:
        """The whole ledger, in the order the calls were sent."""
        cursor = self.conn.cursor()
        cursor.row_factory = None  # plain tuples: a ledger is read a hundred thousand rows at a time
        return list(map(LedgerCall._make, cursor.execute(f"SELECT {decode.LEDGER} FROM calls ORDER BY id")))

    def total_cost(self) -> float:
        """The ledger's cost summed, row by row (what reports show)."""
        return float(self._scalar("SELECT COALESCE(SUM(cost), 0) FROM calls"))

    def spent(self) -> float:
        """The ledger's cost as its running total: total_cost in one row's read, whatever the ledger's length
        (the budget's check before each claim)."""
        return float(self._scalar("SELECT cost FROM ledger_total"))

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

    def judge_calls(self) -> list[JudgeCalls]:
        """LLM calls per (judge, completed match): count and summed cost (None when any cost is unknown)."""
        return [JudgeCalls(r[0], r[1], r[2], r[3]) for r in self.conn.execute(
            "SELECT c.judge, c.match_id, COUNT(*) AS calls, "
            "CASE WHEN COUNT(c.cost) = COUNT(*) THEN SUM(c.cost) END AS cost "
            "FROM calls c JOIN matches m ON m.id = c.match_id "
            "WHERE c.kind='llm' AND c.judge IS NOT NULL AND m.status='done' GROUP BY c.judge, c.match_id")]

    def call_sides(self) -> list[CallSide]:
        """Every call of a match with whom it was for."""
        return [CallSide._make(r) for r in self.conn.execute(
            "SELECT c.match_id, c.kind, c.side, c.judge, m.pro, m.con, c.prompt_tokens, c.completion_tokens, c.model, "
            "c.cached_tokens "
            "FROM calls c JOIN matches m ON m.id = c.match_id")]

    def match_progress(self, match_id: str) -> MatchProgress | None:
        """What a match is doing in its current play (the LLM calls ledgered since it was last claimed, whichever
        process makes them): the latest call in flight, else the latest call, and how many; None for a match never
        started. A settled row's time is when it settled: its call began its latency earlier."""
        started = self._scalar("SELECT started_at FROM matches WHERE id=?", (match_id,))
        if started is None:
            return None
        play = "FROM calls WHERE match_id=? AND kind='llm' AND created_at >= ?"
        calls = int(self._scalar(f"SELECT COUNT(*) {play}", (match_id, started)))
        row = self.conn.execute(f"SELECT stage, side, role, judge, created_at, latency_s, error=? AS flying {play} "
                                "ORDER BY flying DESC, id DESC LIMIT 1", (IN_FLIGHT, match_id, started)).fetchone()
        if row is None:
            return MatchProgress(Step(None, None, None), 0, str(started))
        since = str(row["created_at"])
        if not row["flying"]:
            since = (datetime.fromisoformat(since) - timedelta(seconds=row["latency_s"])).isoformat(
                timespec="microseconds")
        return MatchProgress(Step.of(row["stage"], row["side"], row["role"], row["judge"]), calls, since)

    def cache_get(self, key: str) -> dict[str, Any] | None:
        """The cached answer of that key, if any."""
        stored = self._scalar("SELECT response FROM cache WHERE key=?", (key,))
        return None if stored is None else dict(json.loads(unsqueeze(stored)))

    def cache_put(self, key: str, kind: str, response: dict[str, Any]) -> None:
        """Keep an answer under its key (within the caller's transaction, if any: Store.transaction)."""
        self.conn.execute("INSERT OR REPLACE INTO cache VALUES (?,?,?,?)",
                          (key, kind, squeeze(json.dumps(response)), now()))

    def model_facts(self, model: str, api_base: str) -> dict[str, Any] | None:
        """What the workspace knows of a model behind an endpoint (arena check, fallbacks taken)."""
        facts = self._scalar("SELECT facts FROM models WHERE model=? AND api_base=?", (model, api_base))
        return None if facts is None else dict(json.loads(facts))

    def remember_model(self, model: str, api_base: str, **facts: Any) -> None:
        """Merge facts into what is known of the model, in one transaction."""
        with write(self.conn):
            known = self.model_facts(model, api_base) or {}
            self.conn.execute("INSERT OR REPLACE INTO models VALUES (?,?,?,?)",
                              (model, api_base, json.dumps({**known, **facts}), now()))

    def change_stamp(self) -> str:
        """A stamp that every write to the matches, speeches, verdicts, entries, motions or ledger renews
        (arena.store.schema's triggers): equal stamps, nothing the site shows has changed."""
        return str(self._scalar("SELECT stamp FROM changes"))
