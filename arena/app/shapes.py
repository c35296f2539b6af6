"""The JSON shapes commands print (docs/reference/json.md): records turned into plain dicts, in one place."""
from __future__ import annotations

from dataclasses import asdict
from typing import Any, Mapping

from arena.formats import Format, shown
from arena.records import Entry, Match, MatchState, Motion, score
from arena.redact import public_url


def entry_row(entry: Entry, matches: int, forfeits: int, simulated: bool | None = None) -> dict:
    """`arena entry list`: name, debater, model, family (arena.families, or arena.toml's), matches (completed),
    forfeits (of them), simulated (any of its speeches or searches came from the simulator,
    Store.simulated_entries; None: its model is the simulator), retired; strength if its model is the simulator."""
    simulated = entry.simulated if simulated is None else simulated
    row = {"name": entry.name, "debater": entry.debater, "model": entry.model, "family": entry.family,
           "matches": matches,
           "forfeits": forfeits, "simulated": simulated, "retired": entry.retired}
    return {**row, "strength": entry.strength} if entry.simulated else row


def entry_detail(entry: Entry, matches: int, forfeits: int, simulated: bool | None = None) -> dict:
    """`arena entry show`: the configuration, status, completed-match count and forfeits; simulated as entry_row
    says."""
    simulated = entry.simulated if simulated is None else simulated
    row: dict[str, Any]
    row = {"name": entry.name, "status": "retired" if entry.retired else "imported" if entry.imported else "active",
           "retired": entry.retired,
           "debater": entry.debater, "model": entry.model, "family": entry.family, "simulated": simulated,
           "api_base": public_url(entry.api_base)}
    if entry.simulated:
        row["strength"] = entry.strength
    return {**row, "params": dict(entry.params), "matches": matches, "forfeits": forfeits}


def motion_row(motion: Motion, spec: str | None) -> dict:
    """`arena motion list`: a motion and the set it comes from (None: known only from stored matches)."""
    return {"id": motion.id, "text": motion.text, "category": motion.category, "language": motion.language,
            "info_slide": motion.info_slide, **_sides(motion), "set": spec}


def _sides(motion: Motion) -> dict:
    """pro_text and con_text, for a two-sided motion only: one-sided motions keep their shape."""
    return {"pro_text": motion.pro_text, "con_text": motion.con_text} if motion.two_sided else {}


def match_row(m: MatchState) -> dict:
    """`arena match list`: a stored match's id, status, motion, sides, error, forfeit (the side, or None) and
    debate format."""
    return {"id": m.id, "status": m.status, "motion": m.motion_id, "pro": m.pro, "con": m.con, "error": m.error,
            "forfeit": m.forfeit and m.forfeit.side, "format": m.format}


def match_json(match: Match, judge: str | None = None, declared: Mapping[str, Format] | None = None) -> dict:
    """`arena match show --format json`; the score is the given judge's (default: the first that judged). Speeches
    in their format's order, each with its stage's title (a format no longer installed: as stored, titled by key)."""
    judge = judge or next((v.judge for v in match.verdicts), None)
    pro, con = score([v for v in match.verdicts if v.judge == judge])
    fmt = shown(match.format, declared)
    return {
        "id": match.id, "status": match.status, "error": match.error, "simulated": match.simulated,
        "format": match.format,
        "forfeit": match.forfeit and match.forfeit.side, "forfeit_reason": match.forfeit and match.forfeit.reason,
        "motion": {"id": match.motion.id, "text": match.motion.text, "category": match.motion.category,
                   "language": match.motion.language, **_sides(match.motion)},
        "pro": match.pro, "con": match.con,
        "speeches": [{"stage": s.stage, "title": fmt.title_of(s.stage), "side": s.side, "text": s.text,
                      "references": [asdict(r) for r in s.references],
                      "started_at": s.started_at, "finished_at": s.finished_at, "cut": s.cut,
                      "agents": {role: asdict(u) for role, u in s.agents.items()}}
                     for s in fmt.ordered(match.speeches)],
        "verdicts": [{"judge": v.judge, "run": v.run, "overall": v.overall, "dimensions": dict(v.dimensions),
                      "rationale": v.rationale, **({"error": v.error} if v.error else {}),
                      **({"extra": dict(v.extra)} if v.extra else {})} for v in match.verdicts],
        "score": {"pro": pro, "con": con},
    }
