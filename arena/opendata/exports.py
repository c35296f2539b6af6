"""`arena export`: a workspace as open data, and the reading of it back (`arena import arena`).

An export is a folder: one Parquet table per kind of record (TABLES: each column's name, type and meaning, the
stable names docs/reference/formats.md lists), each in a folder of its own, DIR/<table>/<table>.parquet, so that
`datasets.load_dataset("parquet", data_dir=DIR/<table>)` and `pandas.read_parquet` read one table; a dataset card
(README.md) whose `configs` let `datasets.load_dataset(DIR, "<table>")` read it too, and which says what the data
is, its counts, its judges, what is simulated and its schema, with a licence line to fill in; and a manifest
(arena-export.json: the export's version, and each table's file and rows), which the importer checks first.

What never leaves the workspace: ballot links and tokens (never read), the prompts and answers of agent messages,
and API keys: every text that could carry one (errors, URLs, params, options, extras) is redacted in any mode,
URLs lose their user, password, query and fragment, and options or params named like secrets lose their values.
A public export also leaves out people's names (stable pseudonyms instead), the texts of the ledger's, failed
matches' and failed verdicts' errors, and the matches the published site embargoes (`withheld`).
"""
from __future__ import annotations

import hashlib
import hmac
import json
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Collection, Iterable, Mapping

import pyarrow as pa
import pyarrow.parquet as pq

from arena.base.errors import UserError, check_size
from arena.base.files import replace_folder
from arena.base.limits import MAX_CONFIG_BYTES, MAX_EXPORT_TABLE_BYTES
from arena.domain.records import (DIMENSIONS, HUMAN_JUDGE, IMPORTED, Entry, LedgerCall, MatchState, Motion,
                                  StoredSpeech, StoredVerdict, Verdict)
from arena.gateway.redact import public_url, redactor
from arena.workspace.folder import Workspace

# A table's row: column → value, of the column's type (text, number, true/false, null; JSON objects as text)
Row = dict[str, Any]

EXPORT_VERSION = 1  # raised when a column changes meaning or goes: a reader refuses versions newer than its own
MANIFEST = "arena-export.json"
CARD = "README.md"
WITHHELD = "withheld (public export)"  # a failed verdict's error in a public export: failed, but not why
_SECRET_KEYS = ("key", "token", "secret", "password")  # an option or param named so holds a secret
_REDACTED = "[redacted]"


@dataclass(frozen=True)
class Column:
    name: str
    type: str  # the Parquet type as docs/reference/formats.md shows it (a key of _ARROW)
    meaning: str  # says when the column is null, if it may be
    nullable: bool = False


JSON = "string (JSON)"
REFERENCES = "list<struct<number: int32, title: string, url: string, text: string>>"
USAGE = "list<struct<role: string, calls: int64, prompt_tokens: int64, completion_tokens: int64, cost: double>>"
_ARROW = {
    "string": pa.string(), "int32": pa.int32(), "int64": pa.int64(), "double": pa.float64(), "bool": pa.bool_(),
    JSON: pa.string(),
    REFERENCES: pa.list_(pa.struct([("number", pa.int32()), ("title", pa.string()), ("url", pa.string()),
                                    ("text", pa.string())])),
    USAGE: pa.list_(pa.struct([("role", pa.string()), ("calls", pa.int64()), ("prompt_tokens", pa.int64()),
                               ("completion_tokens", pa.int64()), ("cost", pa.float64())])),
}


def _outcomes(what: str) -> tuple[Column, ...]:
    """overall and one column per dimension of arena.domain.records.DIMENSIONS, then the whole dimensions map."""
    return (Column("overall", "string", f"{what} overall: pro, con or tie; null for a failed run", True),
            *(Column(d, "string", f"{what} on the {d} dimension: pro, con or tie; null if not given", True)
              for d in DIMENSIONS),
            Column("dimensions", JSON, "every dimension given, name → pro, con or tie (judges may define their own)"))


# The tables, in the order the card lists them: what a row is, and its columns.
TABLES: dict[str, tuple[str, tuple[Column, ...]]] = {
    "entries": ("a registered debater entry: a debater kind on a model", (
        Column("name", "string", "the entry's name, as matches' pro and con name it"),
        Column("debater", "string", "its debater kind: agent4debate, direct, search-baseline, human, imported "
                                    "(debated elsewhere) or a plug-in"),
        Column("model", "string", "its model: litellm's PROVIDER/MODEL; offline/NAME is the simulator"),
        Column("api_base", "string", "its model's server, without user, password, query or fragment; empty: the "
                                     "provider's own"),
        Column("strength", "double", "planted strength on the logit scale (simulated entries only; else 0)"),
        Column("params", JSON, "the debater kind's params (values of secret-named params redacted)"),
        Column("simulated", "bool", "any of its speeches or searches came from the offline simulator (its model is "
                                    "offline/NAME, or it searched with the offline search provider)"),
        Column("retired", "bool", "retired: its matches count, it is scheduled no more"),
        Column("matches", "int64", "the done matches it played, of this export's"),
    )),
    "motions": ("a motion some match debated", (
        Column("id", "string", "the motion's id"),
        Column("text", "string", "the motion (PRO argues for it, CON against)"),
        Column("category", "string", "fact, value or policy"),
        Column("language", "string", "the language of the motion and its speeches (en, zh, ...)"),
        Column("info_slide", "string", "the context both sides were given"),
        Column("pro_text", "string", "a two-sided motion's PRO proposition; empty for a one-sided motion"),
        Column("con_text", "string", "a two-sided motion's CON proposition; empty for a one-sided motion"),
    )),
    "matches": ("a match: two entries on a motion, in a debate format", (
        Column("id", "string", "the match's id"),
        Column("seq", "int64", "its place in the schedule, from 1"),
        Column("tournament_id", "int64", "the schedule (tournament) that drew it; null for an imported match",
               True),
        Column("motion_id", "string", "the motion debated (motions.id)"),
        Column("pro", "string", "the entry speaking for the motion (entries.name)"),
        Column("con", "string", "the entry speaking against it (entries.name)"),
        Column("format", "string", "the debate format of its speeches: agent4debate, lechmazur, ..."),
        Column("status", "string", "scheduled, running, done or failed"),
        Column("simulated", "bool", "an entry or judge of it runs on the offline simulator, or its debaters searched "
                                    "with the offline search provider: its results are simulated"),
        Column("forfeit", "string", "the side that forfeited (could not debate): pro or con; null: none",
               True),
        Column("forfeit_reason", "string", "why that side forfeited; null: no forfeit", True),
        Column("error", "string", "why it failed; null unless failed (and in a public export)", True),
        Column("created_at", "string", "when it was scheduled or imported (ISO-8601 UTC)"),
        Column("started_at", "string", "when it was last started; null if never", True),
        Column("finished_at", "string", "when it was done or failed; null if neither", True),
    )),
    "speeches": ("a speech of a match: one turn of its format", (
        Column("match_id", "string", "the match (matches.id)"),
        Column("seq", "int32", "its place in the match's speaking order, from 0"),
        Column("stage", "string", "the turn's stage in the match's format: constructive, rebuttal, summary; "
                                  "opening, rebuttal_1, ..."),
        Column("side", "string", "pro or con"),
        Column("text", "string", "what was said"),
        Column("references", REFERENCES, "the sources it cites: its [number] in the text, title, URL and what "
                                         "the source says"),
        Column("agents", USAGE, "what each internal agent (role) of the debater spent: calls, tokens, cost in "
                                "USD (missing where the price is unknown)"),
        Column("cut", "bool", "the model stopped at its length cap: it may end mid-sentence"),
        Column("started_at", "string", "when it was begun (ISO-8601 UTC; empty: not recorded)"),
        Column("finished_at", "string", "when it was done (ISO-8601 UTC; empty: not recorded)"),
    )),
    "verdicts": ("one run of one judge on one match (people's runs are in ballots)", (
        Column("match_id", "string", "the match (matches.id)"),
        Column("judge", "string", "the judge (judges.name)"),
        Column("run", "int32", "the run, from 0; a judge runs R times per match"),
        *_outcomes("the winner"),
        Column("rationale", "string", "the judge's reasons"),
        Column("error", "string", "why the run failed (it then scores nothing); null: it did not fail", True),
        Column("simulated", "bool", "given by or on the offline simulator"),
        Column("created_at", "string", "when it was given (ISO-8601 UTC)"),
        Column("extra", JSON, "what a source said beyond these (an imported panel's margin, panelist, ...)"),
    )),
    "ballots": ("a person's ballot: their run of a judge of people on a match", (
        Column("match_id", "string", "the match (matches.id)"),
        Column("judge", "string", "the judge of people (judges.name)"),
        Column("run", "int32", "the person's place in the judge's people, from 0: the run their ballot is"),
        Column("person", "string", "who voted; a stable pseudonym (person-…) in a public export"),
        *_outcomes("the person's vote"),
        Column("rationale", "string", "the person's reasons"),
        Column("simulated", "bool", "cast by the offline simulator, or on a simulated match"),
        Column("created_at", "string", "when it was cast (ISO-8601 UTC)"),
    )),
    "calls": ("a call in the ledger: one LLM or search request, paid or cached", (
        Column("id", "int64", "the call's number, in the order calls were sent"),
        Column("kind", "string", "llm or search"),
        Column("match_id", "string", "the match it was for; bench:ID for judge-bench, attack:WHEN:ATTACK:ID for "
               "judge-attacks; null: none", True),
        Column("role", "string", "the internal agent that made it (searcher, writer, referee, ...); null: none",
               True),
        Column("stage", "string", "the stage of the speech it was for; null for a judge's", True),
        Column("side", "string", "the side whose debater made it; null for a judge's", True),
        Column("judge", "string", "the judge that made it; null for a debater's", True),
        Column("model", "string", "the model called"),
        Column("prompt_tokens", "int64", "tokens sent"),
        Column("completion_tokens", "int64", "tokens received"),
        Column("cost", "double", "USD; null when the model's price is unknown", True),
        Column("latency_s", "double", "seconds from request to answer"),
        Column("cache_hit", "bool", "answered from the workspace's cache (nothing paid)"),
        Column("error", "string", "why it failed (keys redacted); null: it did not, or a public export", True),
        Column("simulated", "bool", "answered by the offline simulator"),
        Column("created_at", "string", "when it was settled (ISO-8601 UTC)"),
        Column("structured", "string", "how a structured answer was asked: json_schema, json_object, prompt; "
                                       "null: prose", True),
        Column("fitted", "bool", "its prompt was cut to fit the model's context window"),
        Column("finish_reason", "string", "why the model stopped (stop, length, ...); null: not reported", True),
    )),
    "judges": ("a judge: a judge kind on a model, run R times per match", (
        Column("name", "string", "the judge's name, as verdicts and ballots name it"),
        Column("kind", "string", "its judge kind: single, debatrix, panel, devils_advocate, human (people), "
                                 "imported (another arena's panel), a plug-in; empty: no longer configured"),
        Column("model", "string", "its model (offline/NAME: the simulator); for people and imported judges, "
                                  "what marks them"),
        Column("api_base", "string", "its model's server, without user, password, query or fragment"),
        Column("runs", "int32", "R: runs per match (a judge of people: its number of people)"),
        Column("options", JSON, "its kind's options (secret-named values redacted; people as pseudonyms in a "
                                "public export)"),
        Column("simulated", "bool", "its model is the offline simulator"),
    )),
}


def schema(table: str) -> pa.Schema:
    """The Parquet schema of a table: its columns' types, each with its meaning as the field's description."""
    return pa.schema([pa.field(c.name, _ARROW[c.type], nullable=c.nullable, metadata={"description": c.meaning})
                      for c in TABLES[table][1]])


def table_path(table: str) -> str:
    """Where a table's file is in an export, relative to it."""
    return f"{table}/{table}.parquet"


# --- what may leave a workspace --------------------------------------------------------------------------------

def pseudonym(secret: bytes, person: str) -> str:
    """A person's name in a public export: HMAC-SHA256 of the name under the workspace's ballot secret, so a
    person has the same pseudonym in every export of the workspace, and no one without the secret can tell who
    it is (a plain hash could be tried on a list of names)."""
    digest = hmac.new(secret, b"export-person\0" + person.encode("utf-8", "surrogatepass"), hashlib.sha256)
    return f"person-{digest.hexdigest()[:12]}"


@dataclass(frozen=True)
class _Rows:
    """The rows of one export: clean redacts a text (the environment's secrets read once), name is what a
    person is called in it (a pseudonym, public), public drops error texts."""

    clean: Callable[[str], str]
    name: Callable[[str], str]
    public: bool

    def url(self, url: str) -> str:
        """A server URL without what may carry a credential (user, password, query, fragment), keys redacted."""
        return self.clean(public_url(url))

    def scrub(self, value: Any) -> Any:
        """Params or options with every text redacted and the values of secret-named keys replaced."""
        if isinstance(value, Mapping):
            return {k: _REDACTED if _secret_name(k) and value[k] not in ("", None) else self.scrub(value[k])
                    for k in value}
        if isinstance(value, (list, tuple)):
            return [self.scrub(v) for v in value]
        return self.clean(value) if isinstance(value, str) else value

    def error(self, text: str | None) -> str | None:
        return None if text is None or self.public else self.clean(text)

    def entry(self, e: Entry, matches: int, simulated: bool) -> Row:
        return {"name": e.name, "debater": e.debater, "model": self.clean(e.model),
                "api_base": self.url(e.api_base), "strength": e.strength,
                "params": _json(self.scrub(dict(e.params))), "simulated": simulated,
                "retired": e.retired, "matches": matches}

    def match(self, m: MatchState) -> Row:
        return {"id": m.id, "seq": m.seq, "tournament_id": m.tournament_id, "motion_id": m.motion_id,
                "pro": m.pro, "con": m.con, "format": m.format, "status": m.status,
                "simulated": m.simulated, "forfeit": m.forfeit and m.forfeit.side,
                "forfeit_reason": None if m.forfeit is None else self.clean(m.forfeit.reason),
                "error": self.error(m.error), "created_at": m.created_at, "started_at": m.started_at,
                "finished_at": m.finished_at}

    def verdict(self, v: StoredVerdict) -> Row:
        said = v.verdict
        error = None if said.error is None else WITHHELD if self.public else self.clean(said.error)
        return {"match_id": v.match_id, "judge": said.judge, "run": said.run, **_outcome_cells(said),
                "rationale": said.rationale, "error": error, "simulated": v.simulated,
                "created_at": v.created_at, "extra": _json(self.scrub(dict(said.extra)))}

    def calls(self, rows: Iterable[LedgerCall], withheld: Collection[str]) -> list[Row]:
        """The ledger's rows but those of withheld matches (a judge-attacks call's tag ends in its match's id)."""
        out = []
        for call in rows:
            row = call._asdict()
            if (row["match_id"] or "").rsplit(":", 1)[-1] not in withheld:
                out.append({**{c: row[c] for c in _CALL_COLUMNS}, "cache_hit": bool(row["cache_hit"]),
                            "simulated": bool(row["simulated"]), "fitted": bool(row["fitted"]),
                            "model": self.clean(row["model"]), "error": self.error(row["error"])})
        return out

    def judges(self, ws: Workspace, verdicts: list[Row]) -> list[Row]:
        """The configured judges, then any judge with verdicts that is no longer configured (kind, model empty)."""
        rows = []
        for j in ws.config.judges:
            options = dict(j.options)
            people_key = "people" if j.casts_ballots else "panelists" if _of_people(j.kind, options) else None
            if people_key:
                options[people_key] = [self.name(p) for p in options.get(people_key, ())]
            rows.append({"name": j.name, "kind": j.kind, "model": self.clean(j.model), "api_base": self.url(j.api_base),
                         "runs": j.runs, "options": _json(self.scrub(options)), "simulated": j.simulated})
        runs: dict[str, int] = {}
        for v in verdicts:
            runs[v["judge"]] = max(runs.get(v["judge"], 0), v["run"] + 1)
        known = {j.name for j in ws.config.judges}
        return rows + [{"name": judge, "kind": "", "model": "", "api_base": "", "runs": r, "options": "{}",
                        "simulated": False} for judge, r in runs.items() if judge not in known]


_CALL_COLUMNS = [c.name for c in TABLES["calls"][1]]


def _secret_name(key: str) -> bool:
    return str(key).lower().replace("-", "_").endswith(_SECRET_KEYS)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


# --- a workspace's tables ---------------------------------------------------------------------------------------

def workspace_tables(ws: Workspace, *, public: bool = False,
                     withheld: Collection[str] = frozenset()) -> dict[str, list[Row]]:
    """Every table's rows (TABLES) of the workspace: withheld matches left out with all of theirs; public as the
    module says."""
    store, config = ws.store, ws.config
    secret = store.ballot_secret() if public else b""
    name = (lambda person: pseudonym(secret, person)) if public else (lambda person: person)
    rows = _Rows(redactor(), name, public)
    matches = [rows.match(m) for m in store.match_states() if m.id not in withheld]
    kept = {m["id"] for m in matches}
    people_of = _people(ws)
    # Judges imported from an export of a judge of people: their runs are people too, named in `panelists`.
    imported_people = {j.name: j.options.get("panelists", ()) for j in config.judges
                       if j.imported and _of_people(j.kind, j.options)}
    # People may sign what they write, and be named in what others write: their names in every free text (the
    # rationales, the speeches) go the way of their names elsewhere.
    names = {p for persons in people_of.values() for p in persons.values()}
    rename = _renamer({p: name(p) for p in names.union(*imported_people.values())} if public else {})
    verdicts, ballots = [], []
    for v in store.stored_verdicts():
        if v.match_id not in kept:
            continue
        if v.verdict.judge in people_of:
            person = people_of[v.verdict.judge].get(v.verdict.run, f"person {v.verdict.run + 1}")
            ballots.append({**_ballot_row(v, name(person)), "rationale": rename(v.verdict.rationale)})
        else:
            row = rows.verdict(v)
            verdicts.append({**row, "rationale": rename(row["rationale"])})
    played = Counter(name for m in matches if m["status"] == "done" for name in (m["pro"], m["con"]))
    named = {e.name for e in config.entries} | {n for m in matches for n in (m["pro"], m["con"])}
    motions = store.motions()
    simulated = store.simulated_entries()
    return {
        "entries": [rows.entry(e, played[e.name], e.name in simulated) for e in store.recorded_entries()
                    if e.name in named],
        "motions": [_motion_row(motions[i]) for i in sorted({m["motion_id"] for m in matches})],
        "matches": matches,
        "speeches": [{**row, "text": rename(row["text"])} for row in map(_speech_row, store.stored_speeches())
                     if row["match_id"] in kept],
        "verdicts": verdicts,
        "ballots": ballots,
        "calls": rows.calls(store.ledger(), withheld),
        "judges": rows.judges(ws, verdicts + ballots),
    }


def _renamer(names: Mapping[str, str]) -> Callable[[str | None], str | None]:
    """text → text with each whole-word occurrence of a key of names, in any case ("ANN", "Ann"), replaced by its
    value; None stays None."""
    if not names:
        return lambda text: text
    folded = {name.casefold(): value for name, value in names.items()}
    pattern = re.compile(r"(?<![\w-])(" + "|".join(map(re.escape, sorted(names, key=len, reverse=True)))
                         + r")(?![\w-])", re.IGNORECASE)
    return lambda text: text if text is None else pattern.sub(lambda m: folded[m[1].casefold()], text)


def _people(ws: Workspace) -> dict[str, dict[int, str]]:
    """Judge of people → run → person: who the database says cast each run's ballots, else arena.toml's list."""
    recorded = ws.store.ballot_people()
    configured = {j.name: dict(enumerate(j.people)) for j in ws.config.judges if j.casts_ballots}
    return {judge: {**configured.get(judge, {}), **recorded.get(judge, {})} for judge in {*configured, *recorded}}


def _motion_row(m: Motion) -> Row:
    return {"id": m.id, "text": m.text, "category": m.category, "language": m.language, "info_slide": m.info_slide,
            "pro_text": m.pro_text, "con_text": m.con_text}


def _speech_row(stored: StoredSpeech) -> Row:
    s = stored.speech
    return {"match_id": stored.match_id, "seq": stored.seq, "stage": s.stage, "side": s.side, "text": s.text,
            "references": [{"number": r.number, "title": r.title, "url": r.url, "text": r.text} for r in s.references],
            "agents": [{"role": role, **vars(usage)} for role, usage in s.agents.items()],
            "cut": s.cut, "started_at": s.started_at, "finished_at": s.finished_at}


def _outcome_cells(v: Verdict) -> Row:
    dimensions = dict(v.dimensions)
    return {"overall": v.overall, **{d: dimensions.get(d) for d in DIMENSIONS}, "dimensions": _json(dimensions)}


def _ballot_row(v: StoredVerdict, person: str) -> Row:
    said = v.verdict
    return {"match_id": v.match_id, "judge": said.judge, "run": said.run, "person": person, **_outcome_cells(said),
            "rationale": said.rationale, "simulated": v.simulated, "created_at": v.created_at}


def _of_people(kind: str, options: Mapping[str, Any]) -> bool:
    """A judge whose runs are people: of kind human, or imported from an export of one (arena importer)."""
    return kind == HUMAN_JUDGE or (kind == IMPORTED and options.get("kind") == HUMAN_JUDGE)


# --- writing ----------------------------------------------------------------------------------------------------

def export_workspace(ws: Workspace, out: Path, *, public: bool = False,
                     withheld: Collection[str] = frozenset()) -> dict[str, int]:
    """Write the workspace's export to out (built beside it and swapped in: a failed export leaves the old one
    as it was; files of out the export does not write are kept); the rows per table."""
    tables = workspace_tables(ws, public=public, withheld=withheld)
    card = dataset_card(ws.path.resolve().name, tables, public)
    manifest = {"format": "debate-arena export", "export_version": EXPORT_VERSION, "public": public,
                "workspace": ws.path.resolve().name,
                "tables": {t: {"path": table_path(t), "rows": len(rows)} for t, rows in tables.items()}}

    def build(folder: Path) -> None:
        for table, rows in tables.items():
            (folder / table).mkdir()
            # An empty table is its schema and no row group: a row group of no rows is a batch of size 0 to
            # datasets' reader, which fails on it.
            with pq.ParquetWriter(folder / table_path(table), schema(table), compression="zstd") as writer:
                if rows:
                    writer.write_table(pa.Table.from_pylist(rows, schema=schema(table)))
        (folder / CARD).write_text(card, encoding="utf-8")
        (folder / MANIFEST).write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")

    replace_folder(out, build)
    return {t: len(rows) for t, rows in tables.items()}


# --- the dataset card -------------------------------------------------------------------------------------------

def dataset_card(name: str, tables: Mapping[str, list[Row]], public: bool) -> str:
    """README.md of an export: YAML front matter (a config per table, for datasets.load_dataset), then what the
    data is, counts, judges, what is simulated, how to load it, each table's schema, and a licence line."""
    configs = "".join(f"- config_name: {t}\n  data_files:\n  - split: train\n    path: {table_path(t)}\n"
                      + ("  default: true\n" if t == "matches" else "") for t in TABLES)
    front = f"---\npretty_name: {json.dumps(name + ' (Debate Arena export)')}\ntags:\n- debate\n- llm-as-a-judge\n" \
            f"- bradley-terry\nconfigs:\n{configs}---\n"
    return "\n\n".join([front + f"# {name}: debates and verdicts from a Debate Arena workspace",
                        _about(tables, public), _counts(tables), _judges_section(tables), _simulated(tables),
                        _loading(), _schema_section(), _licence()]) + "\n"


def _about(tables: Mapping[str, list[Row]], public: bool) -> str:
    matches, done = tables["matches"], [m for m in tables["matches"] if m["status"] == "done"]
    formats = ", ".join(sorted({m["format"] for m in matches})) or "none"
    languages = ", ".join(sorted({m["language"] for m in tables["motions"]})) or "none"
    text = (f"Debates between LLM debaters (an LLM with a debating framework, or people), each on a motion, "
            f"speech by speech, and the verdicts of the judges who read them: the record of a "
            f"Debate Arena workspace, written by `arena export`. {len(done)} of "
            f"{len(matches)} matches are done, between {len(tables['entries'])} entries on "
            f"{len(tables['motions'])} motions (formats: {formats}; languages: {languages}), judged by "
            f"{len(tables['judges'])} judges. Ratings: fit the weighted Bradley–Terry model of the Agent4Debate "
            f"paper to one judge's runs per match, as `arena rate` does.")
    if public:
        text += ("\n\nThis is a public export: people's names are stable pseudonyms (person-…), the texts of "
                 "errors are left out, and matches people are still judging blind are not in it.")
    return text


def _counts(tables: Mapping[str, list[Row]]) -> str:
    rows = "".join(f"| `{t}` | {len(tables[t]):,} | `{table_path(t)}` | {TABLES[t][0]} |\n" for t in TABLES)
    return "## Tables\n\n| table | rows | file | a row is |\n| --- | ---: | --- | --- |\n" + rows.rstrip("\n")


def _judges_section(tables: Mapping[str, list[Row]]) -> str:
    verdicts = Counter(v["judge"] for v in tables["verdicts"] + tables["ballots"])
    lines = []
    for j in tables["judges"]:
        options = json.loads(j["options"])
        lines.append(f"| `{j['name']}` | {j['kind'] or '(removed)'} | {j['model'] or '—'} | {j['runs']} | "
                     f"{verdicts[j['name']]:,} | {_whose(j['kind'], options)} |")
    return ("## Judges\n\nEach judge gives R runs per match; a run's winner scores 1, a tie 0.5 to each side.\n\n"
            "| judge | kind | model | runs (R) | verdicts | whose verdicts |\n| --- | --- | --- | ---: | ---: | --- |\n"
            + "\n".join(lines)) if lines else "## Judges\n\nNone."


def _whose(kind: str, options: Mapping[str, Any]) -> str:
    if kind == HUMAN_JUDGE:
        return f"people ({len(options.get('people', ()))}): their ballots are in `ballots`"
    if kind == IMPORTED:
        return (f"imported from {options.get('source') or 'elsewhere'}: that source's own panel, not a judge this "
                "arena ran")
    return "this arena's, run on the transcripts" if kind else "a judge no longer configured"


def _simulated(tables: Mapping[str, list[Row]]) -> str:
    matches = tables["matches"]
    runs = tables["verdicts"] + tables["ballots"]
    fake_matches, fake_runs = sum(m["simulated"] for m in matches), sum(v["simulated"] for v in runs)
    text = (f"## Simulated\n\n{fake_matches:,} of {len(matches):,} matches and {fake_runs:,} of {len(runs):,} "
            "verdicts and ballots are simulated: column `simulated`.")
    if fake_matches or fake_runs:
        text += (" **Warning:** simulated rows were made by the arena's offline simulator (models named "
                 "offline/…), which writes placeholder speeches whose quality follows each entry's planted "
                 "strength, and judges them. They test the pipeline; they are not debates, and say nothing about "
                 "any real model.")
    return text


def _loading() -> str:
    return ("## Loading\n\n```python\nimport datasets, pandas\n\n"
            'matches = datasets.load_dataset("FOLDER", "matches", split="train")  # any table, by its config\n'
            'speeches = datasets.load_dataset("parquet", data_dir="FOLDER/speeches", split="train")  # its folder\n'
            'verdicts = pandas.read_parquet("FOLDER/verdicts")\n```\n\n'
            "FOLDER is this folder. A table of no rows keeps its columns for pandas; datasets has no data for it. "
            "Columns holding JSON text (`params`, `options`, `dimensions`, `extra`) read with `json.loads`. "
            "`arena import arena FOLDER` reads the whole export back into a workspace.")


def _schema_section() -> str:
    parts = ["## Schema"]
    for table, (what, columns) in TABLES.items():
        rows = "\n".join(f"| `{c.name}` | `{c.type}` | {c.meaning} |" for c in columns)
        parts.append(f"### `{table}`\n\nA row is {what}.\n\n| column | type | meaning |\n| --- | --- | --- |\n{rows}")
    return "\n\n".join(parts)


def _licence() -> str:
    return ("## License\n\nLicense: <fill in> (the terms under which these speeches, motions and ballots may be "
            "shared; the exporter cannot know them)")


# --- reading an export back -------------------------------------------------------------------------------------

def read_export(folder: Path, tables: Iterable[str] = tuple(TABLES)) -> tuple[dict[str, Any], dict[str, list[Row]]]:
    """The manifest and the rows of the named tables of an export folder; a UserError naming the folder and what
    is wrong when it is not an export (no manifest), is of a newer export version, or lacks a table's file, or a
    table read lacks a column or rows."""
    folder = Path(folder)
    if not folder.is_dir():
        raise UserError(f"{folder}: no such folder (expected an export written by 'arena export')")
    manifest = _manifest(folder)
    missing = [table_path(t) for t in TABLES if not (folder / table_path(t)).is_file()]
    if missing:
        raise UserError(f"{folder}: not a complete arena export: missing {', '.join(missing)}")
    return manifest, {t: _read_table(folder, t, manifest) for t in tables}


def _manifest(folder: Path) -> dict[str, Any]:
    path = folder / MANIFEST
    if not path.is_file():
        raise UserError(f"{folder}: not an arena export: no {MANIFEST} (write one with 'arena export')")
    check_size(path, "export manifest", MAX_CONFIG_BYTES)
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise UserError(f"{path}: not valid JSON ({exc})") from None
    version = manifest.get("export_version") if isinstance(manifest, dict) else None
    if not isinstance(version, int) or isinstance(version, bool):
        raise UserError(f"{path}: no export_version (a whole number); not a manifest 'arena export' wrote")
    if version > EXPORT_VERSION:
        raise UserError(f"{path}: export_version {version} is newer than this arena reads ({EXPORT_VERSION}); "
                        "upgrade arena to import it")
    checked: dict[str, Any] = manifest  # a JSON object (its export_version read above)
    return checked


def _read_table(folder: Path, table: str, manifest: Mapping[str, Any]) -> list[Row]:
    """A table's rows, its columns checked against TABLES and cast to their types."""
    path = folder / table_path(table)
    check_size(path, "table of an export", MAX_EXPORT_TABLE_BYTES)
    wanted = schema(table)
    try:
        found = pq.read_schema(path)
        missing = [n for n in wanted.names if n not in found.names]
        if missing:
            raise UserError(f"{path}: missing column{'s' if len(missing) > 1 else ''} {', '.join(missing)}")
        data = pq.read_table(path, columns=wanted.names)
        empty = [c.name for c in TABLES[table][1] if not c.nullable and data.column(c.name).null_count]
        if empty:
            raise UserError(f"{path}: null in column{'s' if len(empty) > 1 else ''} {', '.join(empty)}, which "
                            "always has a value")
        data = data.cast(wanted)
    except (pa.ArrowException, ValueError, OSError) as exc:
        raise UserError(f"{path}: not a table of an arena export: {exc}") from None
    entry = manifest.get("tables", {})
    entry = entry.get(table) if isinstance(entry, dict) else None
    listed = entry.get("rows") if isinstance(entry, dict) else None
    if isinstance(listed, int) and listed != data.num_rows:
        raise UserError(f"{path}: {data.num_rows} rows, but {MANIFEST} says {listed}: the export is incomplete")
    rows: list[Row] = data.to_pylist()  # pyarrow is untyped: a list of {column: value}
    return rows
