"""The `lechmazur` importer: a checkout of lechmazur/debate (github.com/lechmazur/debate) as imported records.

What it reads, and how each thing maps (docs/reference/formats.md, "Importers"):
- transcripts/<debate id>.md: one match per transcript, id = the debate id; its ten turns ("## Turn k: PRO
  Opening", ...) are the speeches in the `lechmazur` format, text = the turn's body as written (claim labels
  such as [P1.1] kept), after the turn's own "- key: value" lines. Its motion: id = topic_id (motion_ids: with
  a digest of the text where the source gives one id to several propositions), text = the proposition,
  category by `category`. Its sides: model_pro and model_con, the source's model ids, which
  name the entries.
- the panel's judge rows: judgments/judge_results__<judge template>.jsonl when present (one JSON object a
  row), else the per-matchup reports, reports/debate_matchup_judgments/<template>/*.md (the newest template
  folder). The k-th row of a debate is run k of one imported judge; a row whose winner is neither debater
  is a tie run. Verdict.extra keeps the panelist, the signed margin (PRO+), the normalized margin, the
  entertainment score and, from the JSONL, the per-dimension scores; the rationale is the judge's note (with
  the rebuttal it found most decisive), cut short in the reports as the source cuts it.
- entries' display names ("Claude Sonnet 4.6 (no reasoning)") come from the reports' roles lines.
Skipped, with the reason: a transcript that does not parse or has no judge rows, a judge row that does not
parse (or that the source marks unparsed) or names a debate with no transcript.
"""
from __future__ import annotations

import hashlib
import json
import math
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterable, cast

from arena.base.errors import UserError
from arena.domain.formats import get_format
from arena.base.limits import MAX_DEPTH, MAX_SOURCE_LINE_BYTES, nesting
from arena.base.params import Param
from arena.domain.records import IMPORTED, Entry, JudgeSpec, Match, Motion, Outcome, Side, Speech, Verdict
from arena.opendata.importers import Imported, Importer, Skipped, SourceRefused, source_lines, source_text

SOURCE = "lechmazur/debate"
FORMAT = get_format("lechmazur")  # the source's format, its turns titled as the transcripts title them
TURNS = tuple((t.side, t.title) for t in FORMAT.turns)
STAGE_KEYS = {t.title: t.stage for t in FORMAT.turns}
REPORTS = Path("reports") / "debate_matchup_judgments"
JUDGMENTS = Path("judgments")
# Words that make a proposition a policy (what someone should do) or a value judgement; anything else is
# taken for a claim of fact ("X reduces Y more than Z").
POLICY_WORDS = re.compile(r"\b(should|must|ought)\b", re.I)
VALUE_WORDS = re.compile(r"\b(better|worse|preferable|justified|unjustified|ethical|unethical|moral|immoral|fair|"
                         r"unfair|wrong|legitimate|matters? more|more weight|too far|least-bad|overrated)\b", re.I)
# A valid entry name (arena.workspace.config): the source's model id, as long as it is one.
ENTRY_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._\-]{0,63}")
# The JSONL's per-dimension scores, each as <dimension>_pro and <dimension>_con.
SCORE_DIMENSIONS = ("argument_strength", "rebuttal_quality", "grounding_and_epistemic_discipline",
                    "originality_of_argument", "rhetorical_effectiveness")

_TURN = re.compile(r"^## Turn (\d+): (PRO|CON) (.+?)\s*$", re.M)
_META = re.compile(r"^- ([A-Za-z_]+): ?(.*)$")
_ROLES = re.compile(r"^- roles: PRO = \*\*(.+?)\*\*, CON = \*\*(.+?)\*\*\s*$", re.M)
_DEBATE_ID = re.compile(r"^- debate_id: `([^`]+)`", re.M)
_NOTE = re.compile(r"^- \*\*(.+?)\*\*: ?(.*)$")
_DECISIVE = "Most decisive rebuttal noted:"


def category(proposition: str) -> str:
    """policy if it says what should (must, ought to) be done; value if it weighs (better, justified, fair, ...);
    else fact."""
    if POLICY_WORDS.search(proposition):
        return "policy"
    return "value" if VALUE_WORDS.search(proposition) else "fact"


@dataclass(frozen=True)
class Debate:
    """One transcript as read."""

    id: str
    motion: Motion
    pro: str
    con: str
    speeches: tuple[Speech, ...]


@dataclass(frozen=True)
class Row:
    """One judge row of a debate, as either source gives it; extra["panelist"] names its judge."""

    overall: Outcome
    rationale: str
    extra: dict[str, Any] = field(default_factory=dict)
    where: str = ""  # the file it is in, relative to the folder


class ParseError(ValueError):
    """A file (or row) that does not read as the source writes it; the message says why."""


class LechmazurImporter(Importer):
    OPTIONS = {"judge": Param("lechmazur-panel", (str,), "the name of the imported judge whose runs are the "
                                                           "panel's judge rows")}

    def read(self, folder: Path) -> Imported:
        folder = Path(folder)
        transcripts = _layout(folder)
        skipped: list[Skipped] = []
        debates: dict[str, Debate] = {}
        where: dict[str, str] = {}  # debate id → its transcript, relative to the folder
        for path in transcripts:
            name = path.relative_to(folder).as_posix()
            try:
                debate = read_transcript(source_text(path, folder), path.stem)
            except (ParseError, SourceRefused, UnicodeDecodeError, OSError) as exc:
                skipped.append(Skipped(name, str(exc)))
                continue
            if debate.id in debates:
                skipped.append(Skipped(name, f"debate {debate.id!r} is in {where[debate.id]} already"))
                continue
            debates[debate.id], where[debate.id] = debate, name
        debates = dict(zip(debates, (replace(d, motion=m) for d, m in
                                     zip(debates.values(), motion_ids(d.motion for d in debates.values())))))

        rows, roles, read_skips = judge_rows(folder)
        skipped += read_skips
        judge = self.options["judge"]
        matches = []
        for debate_id, debate in debates.items():
            runs = rows.pop(debate_id, [])
            if not runs:
                skipped.append(Skipped(where[debate_id], "no judge rows for this debate"))
                continue
            matches.append(Match(debate.id, debate.motion, debate.pro, debate.con, status="done",
                                 speeches=debate.speeches, format=FORMAT.name,
                                 verdicts=tuple(Verdict(judge, k, r.overall, rationale=r.rationale, extra=r.extra)
                                                for k, r in enumerate(runs))))
        for debate_id, runs in sorted(rows.items()):
            skipped.append(Skipped(runs[0].where, f"{len(runs)} judge row(s) of debate {debate_id!r}, which has no "
                                                  "transcript"))

        displays: dict[str, str] = {}
        for m in matches:  # the reports' names of each side, where there is a report
            for name, display in zip((m.pro, m.con), roles.get(m.id, ())):
                displays.setdefault(name, display)
        entries = tuple(Entry(name, IMPORTED, name, params={"display": displays.get(name, name), "source": SOURCE})
                        for name in sorted({name for m in matches for name in (m.pro, m.con)}))
        panelists = sorted({v.extra["panelist"] for m in matches for v in m.verdicts})
        judges = (JudgeSpec(judge, IMPORTED, IMPORTED, runs=max(len(m.verdicts) for m in matches),
                            options={"source": SOURCE, "panelists": panelists}),) if matches else ()
        motions = tuple({m.motion.id: m.motion for m in matches}.values())
        return Imported(f"{SOURCE} at {folder}", entries, judges, motions, tuple(matches), tuple(skipped))


def motion_ids(motions: Iterable[Motion]) -> list[Motion]:
    """The motions with their ids: the topic id, unless the source gives that id to more than one proposition
    (it has renumbered topics); then each is told apart by a digest of its proposition (topic-1a2b3c), which
    does not depend on which transcripts are there."""
    motions = list(motions)
    texts: dict[str, set[str]] = {}
    for m in motions:
        texts.setdefault(m.id, set()).add(m.text)
    return [replace(m, id=f"{m.id}-{hashlib.sha1(m.text.encode()).hexdigest()[:6]}") if len(texts[m.id]) > 1 else m
            for m in motions]


def _layout(folder: Path) -> list[Path]:
    """The transcripts of a checkout; UserError naming the path and what is missing if it is not one."""
    if not folder.is_dir():
        raise UserError(f"{folder}: no such folder (expected a checkout of {SOURCE})")
    transcripts = folder / "transcripts"
    if not transcripts.is_dir():
        raise UserError(f"{folder}: not a checkout of {SOURCE}: it has no transcripts/ folder")
    found = sorted(transcripts.glob("*.md"))
    if not found:
        raise UserError(f"{transcripts}: no transcripts (*.md) to import")
    if not _jsonl_files(folder) and not _report_folder(folder):
        raise UserError(f"{folder}: no judge rows: neither {JUDGMENTS}/judge_results__*.jsonl nor "
                        f"{REPORTS}/<template>/ with matchup reports")
    return found


def read_transcript(text: str, stem: str) -> Debate:
    """A transcript file's debate; ParseError says what is wrong with it."""
    head, *turns = _TURN.split(text)
    # _META's two groups always match
    meta = dict(cast(tuple[str, str], m.groups()) for line in head.splitlines() if (m := _META.match(line.strip())))
    missing = [k for k in ("topic_id", "proposition", "model_pro", "model_con") if not meta.get(k, "").strip()]
    if missing:
        raise ParseError(f"no {', '.join(missing)} in its header")
    heading = re.search(r"^# Debate (\S+)\s*$", head, re.M)
    debate_id = heading.group(1) if heading else stem
    pro, con = meta["model_pro"].strip(), meta["model_con"].strip()
    for side, name in (("model_pro", pro), ("model_con", con)):
        if not ENTRY_NAME.fullmatch(name):
            raise ParseError(f"{side} {name!r} is not a valid entry name (1-64 letters, digits, '.', '_' or '-')")
    if pro == con:
        raise ParseError(f"model_pro and model_con are both {pro!r}")
    found = [(side.lower(), title.strip()) for side, title in zip(turns[1::4], turns[2::4])]
    if found != list(TURNS):
        raise ParseError(f"its turns are {_turn_list(found)}; expected the 10 turns {_turn_list(TURNS)}")
    speeches = []
    for (side, title), body in zip(found, turns[3::4]):
        speech = turn_body(body)
        if not speech:
            raise ParseError(f"its {side.upper()} {title} turn is empty")
        speeches.append(Speech(STAGE_KEYS[title], cast(Side, side), speech))  # one of TURNS' sides
    motion = Motion(meta["topic_id"].strip(), meta["proposition"].strip(), category(meta["proposition"]))
    return Debate(debate_id, motion, pro, con, tuple(speeches))


def _turn_list(turns: Iterable[tuple[str, str]]) -> str:
    return ", ".join(f"{side.upper()} {title}" for side, title in turns) or "none"


def turn_body(block: str) -> str:
    """A turn's text: what follows its own "- key: value" lines (model, word counts, claim ids)."""
    lines = block.strip("\n").splitlines()
    k = 0
    while k < len(lines) and _META.match(lines[k]):
        k += 1
    return "\n".join(lines[k:]).strip()


def judge_rows(folder: Path) -> tuple[dict[str, list[Row]], dict[str, tuple[str, str]], list[Skipped]]:
    """Each debate's judge rows in the source's order, its sides' display names (PRO, CON) and the rows
    skipped: the JSONL's rows when there is one, else the reports' (whose roles lines give the names either way)."""
    reported, roles, skipped = _reports(folder)
    jsonl = _jsonl_files(folder)
    if not jsonl:
        return reported, roles, skipped
    rows: dict[str, list[Row]] = {}
    skipped = []  # the reports' rows are not used, only their names
    for path in jsonl:
        where = path.relative_to(folder).as_posix()
        try:
            for number, line in source_lines(path, folder):
                if line is None:
                    skipped.append(Skipped(f"{where}:{number}", f"a line of more than {MAX_SOURCE_LINE_BYTES:,} "
                                                                "bytes: not read"))
                    continue
                if not line.strip():
                    continue
                try:
                    debate_id, row = jsonl_row(line)
                except ParseError as exc:
                    skipped.append(Skipped(f"{where}:{number}", str(exc)))
                    continue
                rows.setdefault(debate_id, []).append(replace(row, where=where))
        except (SourceRefused, UnicodeDecodeError) as exc:
            skipped.append(Skipped(where, str(exc)))
    return rows, roles, skipped


def _jsonl_files(folder: Path) -> list[Path]:
    """The judge results JSONL of the judge template the reports use, else every one there is."""
    found = sorted((folder / JUDGMENTS).glob("judge_results__*.jsonl"))
    reports = _report_folder(folder)
    template = reports.name.split("__")[0].removeprefix("judge_") if reports else None
    mine = [p for p in found if p.stem == f"judge_results__{template}"]
    return mine or found[-1:]


def _report_folder(folder: Path) -> Path | None:
    """The newest template folder of matchup reports (their names end with a date stamp)."""
    found = sorted(p for p in (folder / REPORTS).glob("*") if p.is_dir())
    return found[-1] if found else None


def jsonl_row(line: str) -> tuple[str, Row]:
    """A JSONL judge row → (debate id, Row); NaN (which the source writes) reads as no value."""
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ParseError(f"not JSON: {exc.msg}") from None
    except RecursionError:  # json's parser recurses per level
        raise ParseError(f"nested more than {MAX_DEPTH} levels deep") from None
    if nesting(data) > MAX_DEPTH:
        raise ParseError(f"nested more than {MAX_DEPTH} levels deep")
    if not isinstance(data, dict) or not isinstance(data.get("debate_id"), str):
        raise ParseError("no debate_id")
    if data.get("parse_ok") is False:
        raise ParseError(f"the source marks this judge row of {data['debate_id']!r} unparsed (parse_ok false)")
    winner = data.get("winner_side")
    overall: Outcome = winner if winner in ("pro", "con") else "tie"
    scores = {f"{d}_{side}": _number(data.get(f"{d}_{side}")) for d in SCORE_DIMENSIONS for side in ("pro", "con")
              if f"{d}_{side}" in data}
    extra = {"panelist": str(data.get("judge_model") or "?"), "margin": _number(data.get("signed_margin")),
             "normalized_margin": _number(data.get("normalized_signed_margin")),
             "entertainment": _number(data.get("entertainment_value")), "scores": scores}
    if overall == "tie" and winner:
        extra["winner"] = str(winner)
    rationale = str(data.get("reasoning") or "").strip()
    if data.get("notable_rebuttals"):
        rationale = f"{rationale}\n\n{_DECISIVE} {_text(data['notable_rebuttals'])}".strip()
    return data["debate_id"], Row(overall, rationale, extra)


def _text(value: Any) -> str:
    return "; ".join(map(str, value)) if isinstance(value, list) else str(value)


def _number(value: Any) -> float | None:
    """A score or margin as a float; None for NaN, nothing, or text that is no number ("+1.5" is one)."""
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def _reports(folder: Path) -> tuple[dict[str, list[Row]], dict[str, tuple[str, str]], list[Skipped]]:
    """The judge rows of every matchup report of the newest template and its sides' display names, by debate,
    and what was skipped."""
    rows: dict[str, list[Row]] = {}
    roles: dict[str, tuple[str, str]] = {}
    skipped: list[Skipped] = []
    reports = _report_folder(folder)
    if reports is None:
        return rows, roles, skipped
    for path in sorted(reports.glob("*.md")):
        where = path.relative_to(folder).as_posix()
        try:
            text = source_text(path, folder)
        except SourceRefused as exc:
            skipped.append(Skipped(where, str(exc)))
            continue
        except (UnicodeDecodeError, OSError) as exc:
            skipped.append(Skipped(where, f"cannot read: {exc}"))
            continue
        sections = re.split(r"^## Debate \S+\s*$", text, flags=re.M)[1:]
        if not sections:
            skipped.append(Skipped(where, "no '## Debate' sections"))
        for k, section in enumerate(sections, start=1):
            try:
                debate_id, sides, runs = report_section(section)
            except ParseError as exc:
                skipped.append(Skipped(f"{where} (debate {k})", str(exc)))
                continue
            if debate_id in rows:
                skipped.append(Skipped(where, f"debate {debate_id!r} was reported in an earlier file"))
                continue
            rows[debate_id], roles[debate_id] = [replace(r, where=where) for r in runs], sides
    return rows, roles, skipped


def report_section(section: str) -> tuple[str, tuple[str, str], list[Row]]:
    """A report's '## Debate' section → (debate id, the display names of PRO and CON, its judge rows)."""
    found_id, roles = _DEBATE_ID.search(section), _ROLES.search(section)
    if not found_id or not roles:
        raise ParseError("no debate_id or roles line")
    debate_id = found_id.group(1)
    pro, con = roles.groups()
    lines = section.splitlines()
    header = next((k for k, line in enumerate(lines) if line.startswith("| Judge")), None)
    if header is None:
        raise ParseError(f"debate {debate_id!r} has no judge table")
    columns = [c.strip() for c in lines[header].strip().strip("|").split("|")]
    notes = _notes(lines)
    runs: list[Row] = []
    for line in lines[header + 2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != len(columns):
            raise ParseError(f"debate {debate_id!r}: a judge row has {len(cells)} cells, the header {len(columns)}")
        cell = dict(zip(columns, cells))
        panelist, winner = cell.get("Judge", "?"), cell.get("Winner", "")
        overall: Outcome = "pro" if winner == pro else "con" if winner == con else "tie"
        extra = {"panelist": panelist, "margin": _number(cell.get("Signed Margin (PRO+)")),
                 "normalized_margin": _number(cell.get("Normalized")),
                 "entertainment": _number(cell.get("Entertainment"))}
        if overall == "tie":
            extra["winner"] = winner
        runs.append(Row(overall, notes[len(runs)] if len(runs) < len(notes) else "", extra))
    if not runs:
        raise ParseError(f"debate {debate_id!r} has an empty judge table")
    return debate_id, (pro, con), runs


def _notes(lines: list[str]) -> list[str]:
    """The '### Judge Notes' of a section in order: each note, with the rebuttal it found most decisive."""
    start = next((k for k, line in enumerate(lines) if line.strip() == "### Judge Notes"), None)
    notes: list[str] = []
    for line in lines[start + 1:] if start is not None else []:
        note = _NOTE.match(line)
        if note:
            notes.append(note.group(2).strip())
        elif notes and line.strip().startswith(_DECISIVE):
            notes[-1] = f"{notes[-1]}\n\n{line.strip()}"
        elif line.startswith("#"):
            break
    return notes
