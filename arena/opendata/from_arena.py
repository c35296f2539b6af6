"""The `arena` importer: an export written by `arena export` (arena.opendata.exports), read back as imported records.

Every judge's ratings come out as they went in: the same matches (ids, formats, simulated flags, forfeits, in
schedule order), speeches and verdicts, with the same judge names and R. Entries become imported entries (the
same names and models; params keep the debater kind they were) and judges imported judges (options keep the
kind they were); a judge of people's ballots become its runs, run k being person k, whose names (pseudonyms, in a
public export) the judge's `panelists` option lists. Entries and judges that were imported already stay as they
were. Only done matches are imported: the others are skipped, with their status as the reason.
"""
from __future__ import annotations

import json
import math
from collections import defaultdict
from pathlib import Path
from typing import Callable, Hashable

from arena.base.errors import UserError
from arena.base.limits import MAX_RUNS, MAX_STRENGTH
from arena.opendata.exports import Row, read_export, table_path
from arena.domain.formats import get_format, known
from arena.domain.records import (DIMENSIONS, HUMAN_JUDGE, IMPORTED, AgentUsage, Entry, Forfeit, JudgeSpec, Match, Motion,
                           Reference, Speech, Verdict)
from arena.base.params import Param
from arena.opendata.importers import Imported, Importer, Skipped

SOURCE = "an arena export"
# The tables read back: all but the ledger (calls), whose cost per speech the speeches keep.
READ = ("entries", "judges", "motions", "matches", "speeches", "verdicts", "ballots")


class ArenaImporter(Importer):
    OPTIONS: dict[str, Param] = {}  # judges and entries keep the export's names

    def read(self, folder: Path) -> Imported:
        folder = Path(folder)
        manifest, tables = read_export(folder, READ)
        _check(folder, tables)
        _check_references(folder, tables)
        _check_turns(folder, tables)
        source = f"{SOURCE} of {manifest.get('workspace') or 'a workspace'}"
        motions = {r["id"]: Motion(**r) for r in tables["motions"]}
        speeches: dict[str, list[Speech]] = defaultdict(list)
        for r in sorted(tables["speeches"], key=lambda r: r["seq"]):
            speeches[r["match_id"]].append(_speech(r))
        runs: dict[str, list[tuple[Verdict, bool]]] = defaultdict(list)
        for r in tables["verdicts"]:
            runs[r["match_id"]].append((Verdict(r["judge"], r["run"], r["overall"], r["dimensions"], r["rationale"],
                                                r["error"], r["extra"]), r["simulated"]))
        for r in tables["ballots"]:
            runs[r["match_id"]].append((Verdict(r["judge"], r["run"], r["overall"], r["dimensions"], r["rationale"]),
                                        r["simulated"]))

        simulated: dict[tuple[str, str, int], bool]
        matches, skipped, created_at, simulated = [], [], {}, {}
        where = table_path("matches")
        for r in sorted(tables["matches"], key=lambda r: r["seq"]):
            if r["status"] != "done":
                skipped.append(Skipped(f"{where}: {r['id']}", f"status {r['status']}: only done matches are "
                                                              "imported"))
                continue
            if r["motion_id"] not in motions:
                skipped.append(Skipped(f"{where}: {r['id']}", f"its motion {r['motion_id']!r} is not in "
                                                              f"{table_path('motions')}"))
                continue
            given = sorted(runs.get(r["id"], []), key=lambda vs: (vs[0].judge, vs[0].run))
            forfeit = Forfeit(r["forfeit"], r["forfeit_reason"] or "") if r["forfeit"] else None
            matches.append(Match(r["id"], motions[r["motion_id"]], r["pro"], r["con"], "done", None, r["simulated"],
                                 tuple(speeches.get(r["id"], ())), tuple(v for v, _ in given), forfeit, r["format"]))
            created_at[r["id"]] = r["finished_at"] or r["created_at"]
            simulated |= {(r["id"], v.judge, v.run): flag for v, flag in given if flag != r["simulated"]}

        return Imported(f"{source} at {folder}", tuple(_entry(r, source) for r in tables["entries"]),
                        tuple(_judge(r, source) for r in tables["judges"]),
                        tuple(motions[i] for i in dict.fromkeys(m.motion.id for m in matches)), tuple(matches),
                        tuple(skipped), created_at, simulated)


def _speech(r: Row) -> Speech:
    return Speech(r["stage"], r["side"], r["text"],
                  tuple(Reference(x["title"], x["url"], x["text"], x["number"]) for x in r["references"]),
                  r["started_at"], r["finished_at"],
                  {u["role"]: AgentUsage(u["calls"], u["prompt_tokens"], u["completion_tokens"], u["cost"])
                   for u in r["agents"]}, r["cut"])


def _entry(r: Row, source: str) -> Entry:
    """An imported entry of the same name and model (its planted strength kept for a simulated one); params say
    where it came from and the debater kind it was, unless it was imported already."""
    params = r["params"] if r["debater"] == IMPORTED else {"source": source, "debater": r["debater"]}
    return Entry(r["name"], IMPORTED, r["model"], strength=r["strength"] if r["simulated"] else 0.0, params=params,
                 retired=r["retired"])


def _judge(r: Row, source: str) -> JudgeSpec:
    """An imported judge of the same name, model and R; options say where it came from and the kind it was (a
    judge of people's people as its panelists), unless it was imported already."""
    if r["kind"] == IMPORTED:
        return JudgeSpec(r["name"], IMPORTED, r["model"] or IMPORTED, runs=r["runs"], options=r["options"])
    options = {"source": source, "kind": r["kind"]}
    if r["kind"] == HUMAN_JUDGE:
        options["panelists"] = list(r["options"].get("people", []))
    model = r["model"] if r["model"] not in ("", HUMAN_JUDGE, IMPORTED) else IMPORTED
    return JudgeSpec(r["name"], IMPORTED, model, runs=r["runs"], options=options)


# What a row's values may be, per table and column, beyond their Parquet types: JSON objects are parsed in place.
_JSON = {"entries": ("params",), "judges": ("options",), "verdicts": ("dimensions", "extra"),
         "ballots": ("dimensions",)}
_OUTCOMES = {"pro", "con", "tie", None}
_ALLOWED: dict[str, dict[str, set[str | None]]] = {
    "speeches": {"side": {"pro", "con"}}, "matches": {"forfeit": {"pro", "con", None}},
    **{t: {c: _OUTCOMES for c in ("overall", *DIMENSIONS)} for t in ("verdicts", "ballots")}}


def _check(folder: Path, tables: dict[str, list[Row]]) -> None:
    """Parse the JSON columns of the rows (in place) and check the values the rating reads; a UserError names the
    table, row and column of the first that is not what an export holds."""
    for table, rows in tables.items():
        for k, row in enumerate(rows):
            where = f"{folder / table_path(table)}: row {k + 1}"
            for column in _JSON.get(table, ()):
                try:
                    row[column] = json.loads(row[column])
                except (ValueError, RecursionError) as exc:
                    raise UserError(f"{where}: {column} is not JSON ({exc})") from None
                if not isinstance(row[column], dict):
                    raise UserError(f"{where}: {column} is not a JSON object")
            checks = [(c, row[c], allowed) for c, allowed in _ALLOWED.get(table, {}).items()]
            checks += [(f"dimensions.{d}", v, _OUTCOMES) for d, v in row.get("dimensions", {}).items()]
            for column, value, allowed in checks:
                if value not in allowed:
                    raise UserError(f"{where}: {column} {value!r}: expected one of {sorted(a for a in allowed if a)}")



def _check_references(folder: Path, tables: dict[str, list[Row]]) -> None:
    """Check what the rows say of one another before anything is imported: names and ids once each, numbers in
    their ranges (0 <= run < R, R within the limits, strengths finite), every match between two entries of the
    export and no entry against itself, every speech, verdict and ballot of a match of the export (a verdict or
    ballot of one of its judges), no turn or run twice; a UserError names the table, row and column of the
    first that is not so."""
    def refuse(table: str, k: int, what: str) -> UserError:
        return UserError(f"{folder / table_path(table)}: row {k + 1}: {what}")

    def once(table: str, key: Callable[[Row], Hashable]) -> None:
        seen: dict[Hashable, int] = {}
        for k, row in enumerate(tables[table]):
            found = key(row)
            if found in seen:
                raise refuse(table, k, f"{found!r} again (first in row {seen[found] + 1})")
            seen[found] = k

    once("entries", lambda r: r["name"])
    once("judges", lambda r: r["name"])
    once("matches", lambda r: r["id"])
    once("speeches", lambda r: (r["match_id"], r["stage"], r["side"]))
    for k, r in enumerate(tables["entries"]):
        strength = r["strength"]
        if strength is not None and not (math.isfinite(strength) and abs(strength) <= MAX_STRENGTH):
            raise refuse("entries", k, f"strength {strength!r}: expected a number from {-MAX_STRENGTH:g} to "
                                       f"{MAX_STRENGTH:g}")
    runs = {}
    for k, r in enumerate(tables["judges"]):
        if not 1 <= r["runs"] <= MAX_RUNS:
            raise refuse("judges", k, f"runs {r['runs']!r}: expected a whole number from 1 to {MAX_RUNS}")
        runs[r["name"]] = r["runs"]
    entries = {r["name"] for r in tables["entries"]}
    for k, r in enumerate(tables["matches"]):
        for side in ("pro", "con"):
            if r[side] not in entries:
                raise refuse("matches", k, f"{side} {r[side]!r}: no entry of that name in {table_path('entries')}")
        if r["pro"] == r["con"]:
            raise refuse("matches", k, f"pro and con are both {r['pro']!r}: an entry does not debate itself")
    matches = {r["id"] for r in tables["matches"]}
    given: dict[tuple[str, str, int], tuple[str, int]] = {}  # (match, judge, run) → where first given
    for table in ("speeches", "verdicts", "ballots"):
        for k, r in enumerate(tables[table]):
            if r["match_id"] not in matches:
                raise refuse(table, k, f"match_id {r['match_id']!r}: no match of that id in "
                                       f"{table_path('matches')}")
            if table == "speeches":
                continue
            if r["judge"] not in runs:
                raise refuse(table, k, f"judge {r['judge']!r}: no judge of that name in {table_path('judges')}")
            if not 0 <= r["run"] < runs[r["judge"]]:
                raise refuse(table, k, f"run {r['run']!r}: judge {r['judge']!r} has runs 0 to "
                                       f"{runs[r['judge']] - 1}")
            key = (r["match_id"], r["judge"], r["run"])
            if key in given:
                raise refuse(table, k, f"match {key[0]!r}, judge {key[1]!r}, run {key[2]} again (first in "
                                       f"{table_path(given[key][0])} row {given[key][1] + 1})")
            given[key] = (table, k)


def _check_turns(folder: Path, tables: dict[str, list[Row]]) -> None:
    """Check each match's speeches against its format before anything is imported: each a turn of it (a stage of
    the format, a side with a turn in that stage), in the format's speaking order (by seq); a UserError names the
    speech's row and what is wrong. A format this arena does not know is left to the workspace that imports, which
    may declare it (arena.app.setup.importing)."""
    formats = {r["id"]: r["format"] for r in tables["matches"]}
    spoken: dict[str, list[tuple[int, Row]]] = defaultdict(list)
    for k, r in enumerate(tables["speeches"]):
        spoken[r["match_id"]].append((k, r))
    for match_id, rows in spoken.items():
        name = formats[match_id]
        if not known(name):
            continue
        rows.sort(key=lambda kr: kr[1]["seq"])
        wrong = get_format(name).out_of_turn((r["stage"], r["side"]) for _, r in rows)
        if wrong is not None:
            k, problem = wrong
            raise UserError(f"{folder / table_path('speeches')}: row {rows[k][0] + 1}: match {match_id!r}: "
                            f"{problem}; nothing was imported")
