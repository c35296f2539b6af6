"""Stored rows → the domain's records: every JSON column decoded here, once, so no caller sees a row or JSON text."""
from __future__ import annotations

import functools
import json
import sqlite3
from typing import Any

from arena.domain.records import (AgentUsage, Brief, Budget, Forfeit, JudgedVerdict, MatchState, Motion, Reference, Speech, StoredVerdict,
                           Verdict)

# The columns each record is read from, named (files migrated from older schemas have them in another order).
MOTION = "id, text, category, language, info_slide, pro_text, con_text"
SPEECH = "match_id, seq, stage, side, text, refs, agents, started_at, finished_at, cut"
VERDICT = "match_id, judge, run, overall, dimensions, rationale, error, simulated, created_at, extra, cached_tokens"
MATCH_STATE = ("m.id, m.seq, m.tournament_id, m.motion_id, mo.text AS motion_text, mo.category, m.pro, m.con, "
               "m.format, m.status, m.error, m.simulated, m.created_at, m.started_at, m.finished_at, m.forfeit, "
               "m.forfeit_reason")
LEDGER = ("id, kind, match_id, role, stage, side, judge, model, prompt_tokens, completion_tokens, cost, latency_s, "
          "cache_hit, error, simulated, created_at, structured, fitted, finish_reason, cached_tokens")


@functools.lru_cache(maxsize=4096)
def _parsed(text: str) -> Any:
    return json.loads(text)


def json_object(text: str) -> dict[str, Any]:
    """A JSON object column (a verdict's dimensions or extra) as a dict of its own. Verdicts repeat a few such texts
    ('{}', a handful of dimension outcomes), so each text is parsed once and its object copied: a publish reads
    every verdict several times. A long text (an imported verdict's extra) is parsed afresh rather than kept."""
    return dict(_parsed(text) if len(text) <= 512 else json.loads(text))


def motion(r: sqlite3.Row) -> Motion:
    return Motion(r["id"], r["text"], r["category"], r["language"], r["info_slide"], r["pro_text"], r["con_text"])


def speech(r: sqlite3.Row) -> Speech:
    # Speeches stored before references had text and numbers read without them.
    refs = tuple(Reference(x["title"], x["url"], x.get("text", ""), x.get("number", 0))
                 for x in json.loads(r["refs"]))
    return Speech(r["stage"], r["side"], r["text"], refs, r["started_at"], r["finished_at"], agents(r["agents"]),
                  bool(r["cut"]))


def agents(text: str) -> dict[str, AgentUsage]:
    """A speech's agents column: what each role spent."""
    return {role: AgentUsage(**u) for role, u in json.loads(text).items()}


def forfeit(r: sqlite3.Row) -> Forfeit | None:
    return Forfeit(r["forfeit"], r["forfeit_reason"] or "") if r["forfeit"] else None


def verdict(r: sqlite3.Row) -> Verdict:
    return Verdict(r["judge"], r["run"], r["overall"], json_object(r["dimensions"]), r["rationale"], r["error"],
                   json_object(r["extra"]), r["cached_tokens"])


def stored_verdict(r: sqlite3.Row) -> StoredVerdict:
    return StoredVerdict(r["match_id"], verdict(r), bool(r["simulated"]), r["created_at"])


def judged_verdict(r: sqlite3.Row) -> JudgedVerdict:
    return JudgedVerdict(r["match_id"], verdict(r), bool(r["simulated"]), r["created_at"], r["pro"], r["con"],
                         r["category"], bool(r["match_simulated"]))


def match_state(r: sqlite3.Row) -> MatchState:
    return MatchState(r["id"], r["seq"], r["tournament_id"], r["motion_id"], r["motion_text"], r["category"], r["pro"],
                      r["con"], r["format"], r["status"], r["error"], bool(r["simulated"]), r["created_at"],
                      r["started_at"], r["finished_at"], forfeit(r))


def brief(value: str) -> Brief:
    """A turn's stored brief (arena.store.turns.brief_json) → the record: the motion and the speeches it showed as
    Motion and Speech, each visible speech's title kept per stage."""
    b = json.loads(value)
    m = b["motion"]
    motion = Motion(m["id"], m["text"], m["category"], m["language"], m["info_slide"], m["pro_text"], m["con_text"])
    visible = tuple(Speech(v["stage"], v["side"], v["text"],
                           tuple(Reference(r["title"], r["url"], r["text"], r["number"]) for r in v["references"]))
                    for v in b["visible"])
    return Brief(motion, b["format"], b["title"], b["purpose"], (b["place"][0], b["place"][1]), b["language"],
                 Budget(b["budget"]["amount"], b["budget"]["unit"]), visible,
                 {v["stage"]: v["title"] for v in b["visible"]})
