"""The store's outcomes: what matches produced (speeches, agent messages, verdicts, forfeits, imported matches),
written all or nothing, and read back as records."""
from __future__ import annotations

import json
import sqlite3
from dataclasses import asdict
from typing import Any, Collection, Iterable, Mapping

from arena.match.claims import Holder
from arena.base.clock import now
from arena.domain.records import (AgentMessage, AgentUsage, Forfeit, JudgedVerdict, Match, Speech, SpeechUsage, StoredSpeech,
                           StoredVerdict, Verdict)
from arena.gateway.redact import redact
import arena.store.decode as decode
from arena.store.claims import PLAY, release_or_lose
from arena.store.connection import Database, write
from arena.store.packing import CODEC, pack, unpack

# The debaters' calls the simulator answered (their side known), of each match's latest play: the calls ledgered
# since it was last claimed (a failed play's calls, before a retry, are not its speeches').
_SIMULATED_CALLS = ("FROM calls c JOIN matches m ON m.id = c.match_id WHERE c.simulated AND c.side IN ('pro', 'con') "
                    "AND c.created_at >= COALESCE(m.started_at, '')")


class Outcomes(Database):
    def commit_match(self, match_id: str, speeches: list[Speech], verdicts: list[Verdict],
                     messages: list[dict[str, Any]], simulated: bool, holder: Holder | None = None,
                     forfeit: Forfeit | None = None) -> None:
        """Write a finished match — speeches, agent messages, verdicts, status, any forfeit — all or nothing.

        simulated (arena.domain.records.simulated) is stored with the match and its verdicts. With a holder,
        the match is written only if holder still holds its claim (ClaimLost otherwise), which it gives up.
        messages: {stage, side, role, prompt, response, created_at} each, in the order they were sent.
        """
        sizes, block = pack((m["prompt"], m["response"]) for m in messages)  # before the write lock: it takes ms
        with write(self.conn):
            release_or_lose(self.conn, holder, match_id, PLAY)
            self.conn.execute("DELETE FROM speeches WHERE match_id=?", (match_id,))
            self.conn.execute("DELETE FROM agent_messages WHERE match_id=?", (match_id,))
            _write_speeches(self.conn, match_id, speeches)
            _write_messages(self.conn, match_id, messages, sizes, block)
            write_verdicts(self.conn, match_id, verdicts, simulated)
            self.conn.execute(
                "UPDATE matches SET status='done', error=NULL, simulated=?, finished_at=?, forfeit=?, forfeit_reason=?"
                " WHERE id=?",
                (int(simulated), now(), forfeit and forfeit.side, forfeit and redact(forfeit.reason), match_id)
            )

    def import_matches(self, matches: Iterable[Match], *, created_at: Mapping[str, str] | None = None,
                       simulated: Mapping[tuple[str, str, int], bool] | None = None) -> list[str]:
        """Store finished matches played elsewhere (an importer's), ids as given, with their speeches and
        verdicts, in one transaction; return the ids added. A match whose id is stored already is left as it
        is, so importing twice adds nothing. created_at: when each match was made, by id (default: now).
        simulated: a verdict's own flag by (match id, judge, run) where it differs from its match's (an
        offline judge's verdicts on real debates, people's ballots on simulated ones); others take the match's."""
        created_at, simulated = created_at or {}, simulated or {}
        added = []
        with write(self.conn):
            seq = int(self._scalar("SELECT COALESCE(MAX(seq), 0) FROM matches"))
            for m in matches:
                if self.conn.execute("SELECT 1 FROM matches WHERE id=?", (m.id,)).fetchone():
                    continue
                seq += 1
                when = created_at.get(m.id) or now()
                self.conn.execute(
                    "INSERT INTO matches (id, seq, motion_id, pro, con, status, error, simulated, created_at,"
                    " finished_at, forfeit, forfeit_reason, format) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    (m.id, seq, m.motion.id, m.pro, m.con, m.status, m.error, int(m.simulated), when,
                     when if m.status == "done" else None, m.forfeit and m.forfeit.side,
                     m.forfeit and m.forfeit.reason, m.format))
                _write_speeches(self.conn, m.id, m.speeches)
                for v in m.verdicts:
                    write_verdicts(self.conn, m.id, [v], simulated.get((m.id, v.judge, v.run), m.simulated), when)
                added.append(m.id)
        return added

    def replace_verdicts(self, match_id: str, judge: str, verdicts: list[Verdict], simulated: bool,
                         holder: Holder | None = None) -> None:
        """Write a judge's verdicts of a match in place of all its earlier ones (every run), all or nothing;
        with a holder, only if it still holds its claim to judge the match (ClaimLost otherwise)."""
        with write(self.conn):
            release_or_lose(self.conn, holder, match_id, judge)
            # All old runs go, so a judge now configured with fewer runs leaves no stale run behind.
            self.conn.execute("DELETE FROM verdicts WHERE match_id=? AND judge=?", (match_id, judge))
            write_verdicts(self.conn, match_id, verdicts, simulated)

    def judged_verdicts(self, judge: str | None = None) -> list[JudgedVerdict]:
        """The verdicts (the judge's, or every judge's) on completed matches, in schedule order, then by judge and
        run."""
        sql = ("SELECT v.*, m.pro, m.con, mo.category, m.simulated AS match_simulated FROM verdicts v "
               "JOIN matches m ON m.id = v.match_id "
               "JOIN motions mo ON mo.id = m.motion_id WHERE m.status='done'")
        args: tuple[str, ...] = ()
        if judge is not None:
            sql += " AND v.judge=?"
            args = (judge,)
        return [decode.judged_verdict(r) for r in self.conn.execute(sql + " ORDER BY m.seq, v.judge, v.run", args)]

    def stored_verdicts(self) -> list[StoredVerdict]:
        """Every stored verdict, of any match (judged_verdicts gives the done matches'), in schedule order, then by
        judge and run."""
        return [decode.stored_verdict(r) for r in self.conn.execute(
            "SELECT v.* FROM verdicts v JOIN matches m ON m.id = v.match_id ORDER BY m.seq, v.judge, v.run")]

    def stored_speeches(self) -> list[StoredSpeech]:
        """Every stored speech, its match's schedule order first, then speaking order."""
        return [StoredSpeech(r["match_id"], r["seq"], decode.speech(r)) for r in self.conn.execute(
            "SELECT s.* FROM speeches s JOIN matches m ON m.id = s.match_id ORDER BY m.seq, s.seq")]

    def done_speech_texts(self) -> list[tuple[str, str, str, str]]:
        """(match id, side, text, the motion's language) of every speech of a completed match."""
        return [(r[0], r[1], r[2], r[3]) for r in self.conn.execute(
            "SELECT s.match_id, s.side, s.text, mo.language FROM speeches s JOIN matches m ON m.id = s.match_id "
            "JOIN motions mo ON mo.id = m.motion_id WHERE m.status='done'")]

    def forfeit_counts(self) -> dict[str, int]:
        """Forfeits per entry: completed matches its debater could not finish."""
        return {r[0]: r[1] for r in self.conn.execute(
            "SELECT CASE forfeit WHEN 'pro' THEN pro ELSE con END AS entry, COUNT(*) FROM matches "
            "WHERE status='done' AND forfeit IS NOT NULL GROUP BY entry")}

    def speech_usage(self) -> list[SpeechUsage]:
        """Each speech of a completed match: the debater kind that gave it (as recorded), stage, usage per role."""
        return [SpeechUsage(r["debater"], r["stage"], decode.agents(r["agents"])) for r in self.conn.execute(
            "SELECT e.debater, s.stage, s.agents FROM speeches s JOIN matches m ON m.id = s.match_id "
            "JOIN entries e ON e.name = CASE s.side WHEN 'pro' THEN m.pro ELSE m.con END "
            "WHERE m.status='done' ORDER BY m.seq, s.seq")]

    def role_usage(self, skip: Collection[str] = frozenset()) -> dict[str, dict[str, AgentUsage]]:
        """Per entry, per role of its debater: what it spent over its completed matches but those in skip, its
        speeches added up in schedule and speaking order."""
        sums: dict[str, dict[str, list[Any]]] = {}  # AgentUsage.__add__ on plain lists: a third less time than objects
        for match_id, entry, agents in self.conn.execute(
                "SELECT s.match_id, CASE s.side WHEN 'pro' THEN m.pro ELSE m.con END, s.agents "
                "FROM speeches s JOIN matches m ON m.id = s.match_id WHERE m.status='done' ORDER BY m.seq, s.seq"):
            if match_id not in skip:
                roles = sums.setdefault(entry, {})
                for role, usage in json.loads(agents).items():
                    total = roles.setdefault(role, [0, 0, 0, None, 0])
                    total[0] += usage.get("calls", 0)
                    total[1] += usage.get("prompt_tokens", 0)
                    total[2] += usage.get("completion_tokens", 0)
                    cost = usage.get("cost")
                    total[3] = None if total[3] is None and cost is None else (total[3] or 0.0) + (cost or 0.0)
                    total[4] += usage.get("cached_tokens", 0)  # speeches stored before it have none
        return {entry: {role: AgentUsage(*total) for role, total in roles.items()} for entry, roles in sums.items()}

    def agent_messages(self, match_id: str) -> list[AgentMessage]:
        """What each agent of a completed match was sent and answered, in order, byte for byte as it was."""
        rows = self.conn.execute("SELECT stage, side, role, created_at, prompt_bytes, response_bytes "
                                 "FROM agent_messages WHERE match_id=? ORDER BY id", (match_id,)).fetchall()
        block = self.conn.execute("SELECT codec, data FROM message_blocks WHERE match_id=?", (match_id,)).fetchone()
        if block is None:
            return []
        texts = unpack(block["codec"], block["data"], [(r["prompt_bytes"], r["response_bytes"]) for r in rows])
        return [AgentMessage(r["stage"], r["side"], r["role"], prompt, response, r["created_at"])
                for r, (prompt, response) in zip(rows, texts)]

    def judge_simulated(self, judge: str) -> bool:
        """Whether any stored verdict of the judge on a completed match is simulated."""
        return bool(self._scalar(
            "SELECT EXISTS (SELECT 1 FROM verdicts v JOIN matches m ON m.id = v.match_id "
            "WHERE v.judge=? AND m.status='done' AND v.simulated)", (judge,)))

    def simulated_sides(self, match_id: str) -> set[str]:
        """The sides of a match whose debater the simulator answered in its latest play (since it was last claimed):
        a call of an offline/ model, or a search of the offline search provider (arena.domain.records.simulated)."""
        return {r[0] for r in self.conn.execute(
            f"SELECT DISTINCT c.side {_SIMULATED_CALLS} AND m.id=?", (match_id,))}

    def simulated_calls(self) -> dict[str, set[tuple[str, str]]]:
        """match id → what the simulator answered in its latest play (since it was last claimed), as (part, whose):
        ("speeches", side) for a debater's model call, ("search", side) for a debater's search, ("verdicts", judge)
        for a judge's model call. What the site says was simulated; whether a match is, its stored flag says."""
        out: dict[str, set[tuple[str, str]]] = {}
        for r in self.conn.execute(
                "SELECT DISTINCT c.match_id, CASE WHEN c.judge IS NOT NULL THEN 'verdicts' WHEN c.kind = 'search' "
                "THEN 'search' ELSE 'speeches' END, COALESCE(c.judge, c.side, '') FROM calls c JOIN matches m "
                "ON m.id = c.match_id WHERE c.simulated AND c.created_at >= COALESCE(m.started_at, '')"):
            out.setdefault(r[0], set()).add((r[1], r[2]))
        return out

    def simulated_entries(self) -> set[str]:
        """The entries any of whose speeches or searches came from the simulator: those on an offline/ model, and
        those the simulator answered (a model call or a search) on their own side of a done match's latest play.
        An entry is not simulated for its opponent's simulated speeches (arena.domain.records.simulated)."""
        return {r[0] for r in self.conn.execute(
            "SELECT name FROM entries WHERE simulated UNION "
            f"SELECT DISTINCT CASE c.side WHEN 'pro' THEN m.pro ELSE m.con END {_SIMULATED_CALLS} "
            "AND m.status='done'")}


def write_verdicts(conn: sqlite3.Connection, match_id: str, verdicts: Iterable[Verdict], simulated: bool,
                   created_at: str | None = None) -> None:
    """Store verdicts of a match within the caller's transaction, each in place of the stored run it repeats."""
    for v in verdicts:
        conn.execute(
            "INSERT OR REPLACE INTO verdicts (match_id, judge, run, overall, dimensions, rationale, error, simulated,"
            " created_at, extra, cached_tokens) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
            (match_id, v.judge, v.run, v.overall, json.dumps(dict(v.dimensions)), v.rationale,
             None if v.error is None else redact(v.error),
             int(simulated), created_at or now(), json.dumps(dict(v.extra)), v.cached_tokens),
        )


def _write_speeches(conn: sqlite3.Connection, match_id: str, speeches: Iterable[Speech]) -> None:
    conn.executemany(
        "INSERT INTO speeches (match_id, seq, stage, side, text, refs, agents, started_at, finished_at, cut)"
        " VALUES (?,?,?,?,?,?,?,?,?,?)",
        [(match_id, seq, s.stage, s.side, s.text, json.dumps([asdict(r) for r in s.references]),
          json.dumps({role: vars(u) for role, u in s.agents.items()}), s.started_at, s.finished_at, int(s.cut))
         for seq, s in enumerate(speeches)],
    )


def _write_messages(conn: sqlite3.Connection, match_id: str, messages: list[dict[str, Any]],
                    sizes: list[tuple[int, int]], block: bytes) -> None:
    """A match's agent messages (arena.store.packing.pack gave sizes and block), in place of any it had."""
    conn.executemany(
        "INSERT INTO agent_messages (match_id, stage, side, role, created_at, prompt_bytes, response_bytes)"
        " VALUES (?,?,?,?,?,?,?)",
        [(match_id, m.get("stage"), m.get("side"), m["role"], m["created_at"], p, r)
         for m, (p, r) in zip(messages, sizes)])
    conn.execute("INSERT OR REPLACE INTO message_blocks VALUES (?,?,?)", (match_id, CODEC, block))
