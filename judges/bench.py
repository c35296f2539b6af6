"""Judge benchmarks: debates with human labels, loaded and checked, and the judge's scores on them.

Three layouts:

- a JSONL file, one debate per line:
  {"id", "motion", "speeches": [{"side", "stage", "text"}], "label": "pro" | "con" | "tie"}.
  motion is a string or {"text", "category"?, "info_slide"?, "language"?}; a speech's stage may be
  left out, and is then assigned by position as below.
- a folder in the Debatrix/PanelBench style:
    gold.csv             columns id,label; label 0 = Pro won, 1 = Con won, 0.5 = tie
    motions/<id>.yaml    motion (text), pro_side, con_side (debater names: a list or one name),
                         optional info_slide, category, language, and speech_order (who speaks
                         each speech: "pro", "con" or a debater name)
    speeches/<id>.yaml   a list of {debater_name, content} in speaking order (debater_name may be
                         left out when speech_order names the side)
  The debates are the rows of gold.csv; other files are ignored.
- PanelBench's DebateArt folder as published with Debatrix (chosen when the folder has gold/, motion/
  or speech/):
    gold/final.csv                columns dart_id,label (others ignored); label as in gold.csv
    gold/dimension.csv            optional: columns dart_id,dimension,label, one row per debate and dimension
    motion/debateart_NNNN.yml     a Debatrix DebateInfo: motion, pro_side and con_side (lists of {name}),
                                  info_slide, speech_order (a debater name per speech; null: any debater)
    speech/debateart_NNNN.yml     a list of {debater_name, content} in speaking order
  NNNN is dart_id zero-padded to 4 digits; the debates are the rows of final.csv. As Debatrix does,
  keys other than these are ignored. A speech's side is its debater's; stages by round (round_stages).

Stages by position (JSONL and gold.csv folders): speech k (from 0) of n is STAGES[floor(3k/n)], so six
speeches are two constructive, two rebuttal, two summary. Every mistake is a UserError naming the
file, the line or item, and what is wrong.
"""
from __future__ import annotations

import csv
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Literal, Mapping, Sequence, TypedDict, cast, overload

from arena.base.datafiles import load_json, load_yaml
from arena.base.errors import UserError, plural, read_user_text
from arena.domain.records import CATEGORIES, SIDES, STAGES, Motion, Side, Speech
from arena.analysis.stats import OUTCOMES, cohen_kappa
from arena.match.judging import JudgeView

GOLD_LABELS = {0.0: "pro", 1.0: "con", 0.5: "tie"}
JSONL_KEYS = ("id", "motion", "speeches", "label")
MOTION_KEYS = ("text", "category", "info_slide", "language")
FOLDER_MOTION_KEYS = ("motion", "pro_side", "con_side", "info_slide", "speech_order", "category", "language")
UNSPECIFIED = "unspecified"  # the category of a benchmark motion that names none
# DebateArt's vote categories as a dataset may spell them → the arena judges' dimension of the same meaning.
DIMENSION_ALIASES = {"arguments": "argument", "sources": "source", "reliable sources": "source",
                     "legibility": "language", "spelling and grammar": "language", "spelling grammar": "language"}


@dataclass(frozen=True)
class BenchItem:
    """One labelled debate: what the judge sees, and what the humans decided."""

    id: str
    view: JudgeView
    label: str  # pro | con | tie
    # dimension → label, from a DebateArt gold/dimension.csv; None when the dataset has no such labels.
    dimensions: Mapping[str, str] | None = None


def load_dataset(path: Path, *, language: str = "en") -> list[BenchItem]:
    """The labelled debates of a JSONL file or a folder (layouts above); language is the default."""
    path = Path(path)
    if path.is_dir():
        items = _load_debateart(path, language) if _is_debateart(path) else _load_folder(path, language)
    elif path.is_file():
        items = _load_jsonl(path, language)
    else:
        raise UserError(f"{path}: no such dataset file or folder")
    if not items:
        raise UserError(f"{path}: contains no debates")
    return items


def stage_at(k: int, n: int) -> str:
    """The stage of speech k (from 0) of n: the first third constructive, then rebuttal, then summary."""
    return STAGES[3 * k // n]


def round_stages(sides: Sequence[str]) -> list[str]:
    """Stages of a multi-round debate's speeches, given each speech's side in speaking order.

    Each side's first speech is its constructive, its last its summary, and those between are
    rebuttals; a side with a single speech has only a constructive (it opens that side's case).
    """
    first = {side: sides.index(side) for side in set(sides)}
    last = {side: len(sides) - 1 - sides[::-1].index(side) for side in set(sides)}
    return ["constructive" if k == first[side] else "summary" if k == last[side] else "rebuttal"
            for k, side in enumerate(sides)]


class BenchScore(TypedDict):
    """A judge against human labels over the debates it decided (metrics)."""

    items: int
    judged: int
    failed: int
    accuracy: float | None
    kappa: float | None
    confusion: dict[str, dict[str, int]]  # human label → the judge's outcome → debates


class DimensionScore(BenchScore):
    """A labelled dimension scored against the judge's (judge_dimension None: it judged none like it)."""

    judge_dimension: str | None


class DimensionOutcome(TypedDict):
    """A debate's label on a dimension and the judge's outcome (None: not judged)."""

    label: str
    outcome: str | None


def metrics(labels: Sequence[str], outcomes: Sequence[str | None]) -> BenchScore:
    """The judge against the humans, over the items it decided (outcome None: it failed on the item).

    accuracy = (1/m) Σ [outcome = label] and Cohen's kappa over the m decided items; confusion[label][outcome]
    counts them (rows: the human label, columns: the judge's outcome); failed counts the rest.
    """
    pairs = [(label, out) for label, out in zip(labels, outcomes, strict=True) if out is not None]
    confusion: dict[str, dict[str, int]] = {h: {j: 0 for j in OUTCOMES} for h in OUTCOMES}
    for label, out in pairs:
        confusion[label][out] += 1
    return {"items": len(labels), "judged": len(pairs), "failed": len(labels) - len(pairs),
            "accuracy": sum(a == b for a, b in pairs) / len(pairs) if pairs else None,
            "kappa": cohen_kappa([a for a, _ in pairs], [b for _, b in pairs]), "confusion": confusion}


def judge_dimension(name: str, judged: set[str]) -> str | None:
    """The judge's dimension scored against a dataset's dimension `name`: the same name if the judge gave
    verdicts on it, else its DIMENSION_ALIASES meaning (case and punctuation aside); None if neither."""
    plain = " ".join(re.findall(r"[a-z0-9]+", name.lower()))
    return next((c for c in (name, plain, DIMENSION_ALIASES.get(plain)) if c in judged), None)


def dimension_scores(items: Sequence[BenchItem],
                     outcomes: Sequence[Mapping[str, str] | None]) -> tuple[dict[str, DimensionScore],
                                                                             list[dict[str, DimensionOutcome]]]:
    """Per labelled dimension, the judge against the humans; and per item, each dimension's label and outcome.

    outcomes[i] is the judge's outcome per dimension (its own names) on items[i], None when it failed on
    the debate. A dimension is `metrics` over the items labelled on it, plus judge_dimension: the judge's
    dimension it is scored against. One the judge gave no verdict on anywhere is not judged: judged 0,
    failed counts only the debates the judge failed on, judge_dimension null.
    """
    judged = {d for out in outcomes if out is not None for d in out}
    names = list(dict.fromkeys(d for item in items for d in item.dimensions or {}))
    chosen = {name: judge_dimension(name, judged) for name in names}
    summary: dict[str, DimensionScore] = {}
    for name, ours in chosen.items():
        rows = [(cast(Mapping[str, str], item.dimensions)[name], out) for item, out in zip(items, outcomes)
                if name in (item.dimensions or {})]
        scored = metrics([label for label, _ in rows],
                         [None if out is None or ours is None else out.get(ours) for _, out in rows])
        if ours is None:
            scored["failed"] = sum(out is None for _, out in rows)
        summary[name] = {**scored, "judge_dimension": ours}
    per_item: list[dict[str, DimensionOutcome]] = [
        {name: {"label": label, "outcome": None if out is None or chosen[name] is None
                else out.get(cast(str, chosen[name]))} for name, label in (item.dimensions or {}).items()}
        for item, out in zip(items, outcomes)]
    return summary, per_item


# --- JSONL ----------------------------------------------------------------------------------------

def _load_jsonl(path: Path, language: str) -> list[BenchItem]:
    items: list[BenchItem] = []
    seen: dict[str, int] = {}
    for number, line in enumerate(read_user_text(path).splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        data = load_json(line, where)
        if not isinstance(data, dict):
            raise UserError(f"{where}: expected an object with {', '.join(JSONL_KEYS)}, got {_kind(data)}")
        _no_unknown(data, JSONL_KEYS, where)
        item_id = data.get("id")
        if not isinstance(item_id, (str, int)) or isinstance(item_id, bool) or str(item_id).strip() == "":
            raise UserError(f"{where}: 'id' must be a non-empty string or number")
        item_id = str(item_id).strip()
        if item_id in seen:
            raise UserError(f"{where}: repeated id {item_id!r} (first on line {seen[item_id]})")
        seen[item_id] = number
        label = data.get("label")
        if label not in OUTCOMES:
            raise UserError(f"{where}: 'label' must be \"pro\", \"con\" or \"tie\", got {json.dumps(label)}")
        motion = _jsonl_motion(data.get("motion"), item_id, where, language)
        items.append(BenchItem(item_id, JudgeView(motion, _jsonl_speeches(data.get("speeches"), where)), label))
    return items


def _jsonl_motion(value: Any, item_id: str, where: str, language: str) -> Motion:
    if isinstance(value, str):
        value = {"text": value}
    if not isinstance(value, dict):
        raise UserError(f"{where}: 'motion' must be a string or an object with text, got {_kind(value)}")
    _no_unknown(value, MOTION_KEYS, f"{where}: motion")
    return _motion(item_id, _text(value, "text", f"{where}: motion", required=True), value, f"{where}: motion",
                   language)


def _jsonl_speeches(value: Any, where: str) -> tuple[Speech, ...]:
    if not isinstance(value, list) or not value:
        raise UserError(f"{where}: 'speeches' must be a non-empty list")
    speeches = []
    for k, s in enumerate(value):
        at = f"{where}: speeches[{k}]"
        if not isinstance(s, dict):
            raise UserError(f"{at}: expected an object with side, stage and text, got {_kind(s)}")
        _no_unknown(s, ("side", "stage", "text"), at)
        if s.get("side") not in SIDES:
            raise UserError(f"{at}: unknown side {json.dumps(s.get('side'))} (expected \"pro\" or \"con\")")
        stage = s.get("stage", stage_at(k, len(value)))
        if stage not in STAGES:
            raise UserError(f"{at}: unknown stage {json.dumps(stage)} (expected {', '.join(STAGES)})")
        speeches.append(Speech(stage, s["side"], _text(s, "text", at, required=True)))
    return tuple(speeches)


# --- folder ---------------------------------------------------------------------------------------

def _load_folder(path: Path, language: str) -> list[BenchItem]:
    if not (path / "gold.csv").is_file():
        raise UserError(f"{path / 'gold.csv'}: no such file (a dataset folder has gold.csv, or gold/final.csv "
                        f"in PanelBench's DebateArt layout)")
    return [BenchItem(item_id, _folder_view(path, item_id, language), label)
            for item_id, label in _gold(path / "gold.csv")]


def _gold(path: Path) -> list[tuple[str, str]]:
    rows: list[tuple[str, str]] = []
    seen: dict[str, int] = {}
    for line, row in _csv(path, ("id", "label")):
        where = f"{path}:{line}"
        item_id = (row["id"] or "").strip()
        if not item_id:
            raise UserError(f"{where}: empty id")
        if item_id in seen:
            raise UserError(f"{where}: repeated id {item_id!r} (first on line {seen[item_id]})")
        seen[item_id] = line
        rows.append((item_id, _label(row["label"], where)))
    return rows


def _folder_view(root: Path, item_id: str, language: str) -> JudgeView:
    motion_path, speech_path = root / "motions" / f"{item_id}.yaml", root / "speeches" / f"{item_id}.yaml"
    for p in (motion_path, speech_path):
        if not p.is_file():
            raise UserError(f"{p}: no such file, but {root / 'gold.csv'} lists debate {item_id!r}")
    _, data = _yaml(motion_path)
    where = str(motion_path)
    if not isinstance(data, dict):
        raise UserError(f"{where}: expected a mapping with {', '.join(FOLDER_MOTION_KEYS[:3])}, got {_kind(data)}")
    _no_unknown(data, FOLDER_MOTION_KEYS, where)
    motion = _motion(item_id, _text(data, "motion", where, required=True), data, where, language)
    side_of = _debaters(data, where)
    order = data.get("speech_order")
    if order is not None:
        if not isinstance(order, list):
            raise UserError(f"{where}: 'speech_order' must be a list, got {_kind(order)}")
        order = [_side(name, side_of, f"{where}: speech_order[{k}]") for k, name in enumerate(order)]

    node, data = _yaml(speech_path)
    if not isinstance(data, list) or not data:
        raise UserError(f"{speech_path}: expected a non-empty list of speeches ({{debater_name, content}}), "
                        f"got {_kind(data)}")
    if order is not None and len(order) != len(data):
        raise UserError(f"{speech_path}: {plural(len(data), 'speech')}, but speech_order in {motion_path} names "
                        f"{len(order)}")
    speeches = []
    for k, (item_node, s) in enumerate(zip(node.value, data)):
        at = f"{speech_path}: item {k + 1} (line {item_node.start_mark.line + 1})"
        if not isinstance(s, dict):
            raise UserError(f"{at}: expected a mapping with debater_name and content, got {_kind(s)}")
        _no_unknown(s, ("debater_name", "content"), at)
        if "debater_name" in s:
            side = _side(s["debater_name"], side_of, f"{at}: debater_name", names_only=True)
            if order is not None and order[k] != side:
                raise UserError(f"{at}: {s['debater_name']!r} speaks for {side}, but speech_order[{k}] in "
                                f"{motion_path} says {order[k]}")
        elif order is not None:
            side = order[k]
        else:
            raise UserError(f"{at}: missing 'debater_name' (needed when {motion_path} has no speech_order)")
        speeches.append(Speech(stage_at(k, len(data)), side, _text(s, "content", at, required=True)))
    return JudgeView(motion, tuple(speeches))


def _debaters(data: Mapping[str, Any], where: str) -> dict[str, Side]:
    """Debater name → side, from pro_side and con_side (each a list of names or one name)."""
    side_of: dict[str, Side] = {}
    for side in SIDES:
        key = f"{side}_side"
        names = data.get(key)
        names = [names] if isinstance(names, str) else names
        if not isinstance(names, list) or not names or not all(isinstance(n, str) and n.strip() for n in names):
            raise UserError(f"{where}: '{key}' must be a debater name or a non-empty list of names")
        for name in names:
            if side_of.get(name.strip(), side) != side:
                raise UserError(f"{where}: debater {name!r} is on both pro_side and con_side")
            side_of[name.strip()] = side
    return side_of


def _side(name: Any, side_of: dict[str, Side], where: str, *, names_only: bool = False) -> Side:
    if isinstance(name, str):
        if not names_only and name.strip().lower() in SIDES:
            return cast(Side, name.strip().lower())
        if name.strip() in side_of:
            return side_of[name.strip()]
    known = ", ".join(repr(n) for n in side_of)
    raise UserError(f"{where}: {name!r} is {'' if names_only else 'neither pro nor con and '}on neither "
                    f"pro_side nor con_side (debaters: {known})")


# --- DebateArt (PanelBench, as published with Debatrix) --------------------------------------------

def _is_debateart(path: Path) -> bool:
    return any((path / sub).is_dir() for sub in ("gold", "motion", "speech"))


def _load_debateart(root: Path, language: str) -> list[BenchItem]:
    final = root / "gold" / "final.csv"
    gold: dict[int, tuple[str, int]] = {}  # dart_id → (label, line)
    for line, row in _csv(final, ("dart_id", "label")):
        where = f"{final}:{line}"
        dart_id = _dart_id(row["dart_id"], where)
        if dart_id in gold:
            raise UserError(f"{where}: repeated dart_id {dart_id} (first on line {gold[dart_id][1]})")
        gold[dart_id] = (_label(row["label"], where), line)
    dimension_path = root / "gold" / "dimension.csv"
    dimensions = _debateart_dimensions(dimension_path, gold, final) if dimension_path.is_file() else None
    return [BenchItem(str(dart_id), _debateart_view(root, dart_id, f"{final}:{line}", language), label,
                      None if dimensions is None else dimensions.get(dart_id, {}))
            for dart_id, (label, line) in gold.items()]


def _debateart_dimensions(path: Path, gold: Mapping[int, Any], final: Path) -> dict[int, dict[str, str]]:
    """dart_id → {dimension: label}, every dart_id one of final.csv's."""
    labels: dict[int, dict[str, str]] = {}
    seen: dict[tuple[int, str], int] = {}
    for line, row in _csv(path, ("dart_id", "dimension", "label")):
        where = f"{path}:{line}"
        dart_id = _dart_id(row["dart_id"], where)
        if dart_id not in gold:
            raise UserError(f"{where}: dart_id {dart_id} is not in {final}")
        name = (row["dimension"] or "").strip()
        if not name:
            raise UserError(f"{where}: empty dimension")
        if (dart_id, name) in seen:
            raise UserError(f"{where}: repeated dimension {name!r} of dart_id {dart_id} "
                            f"(first on line {seen[dart_id, name]})")
        seen[dart_id, name] = line
        labels.setdefault(dart_id, {})[name] = _label(row["label"], where)
    return labels


def _debateart_view(root: Path, dart_id: int, listed: str, language: str) -> JudgeView:
    stem = f"debateart_{dart_id:04d}.yml"
    motion_path, speech_path = root / "motion" / stem, root / "speech" / stem
    for p in (motion_path, speech_path):
        if not p.is_file():
            raise UserError(f"{p}: no such file, but {listed} lists dart_id {dart_id}")
    _, info = _yaml(motion_path)
    where = str(motion_path)
    if not isinstance(info, dict):
        raise UserError(f"{where}: expected a Debatrix DebateInfo mapping (motion, pro_side, con_side, info_slide, "
                        f"speech_order), got {_kind(info)}")
    text = _text(info, "motion", where, required=True)
    side_of = _debatrix_debaters(info, where)
    order = info.get("speech_order")
    if not isinstance(order, list):
        raise UserError(f"{where}: 'speech_order' must be a list of debater names, got {_kind(order)}")
    for k, name in enumerate(order):
        if name is not None and (not isinstance(name, str) or name not in side_of):
            raise UserError(f"{where}: speech_order[{k}]: {name!r} is on neither pro_side nor con_side "
                            f"(debaters: {', '.join(map(repr, side_of))})")

    node, speeches = _yaml(speech_path)
    if not isinstance(speeches, list) or not speeches:
        raise UserError(f"{speech_path}: expected a non-empty list of speeches ({{debater_name, content}}), "
                        f"got {_kind(speeches)}")
    if len(speeches) != len(order):
        raise UserError(f"{speech_path}: {plural(len(speeches), 'speech')}, but speech_order in {motion_path} names "
                        f"{len(order)}")
    sides, texts = [], []
    for k, (item_node, s) in enumerate(zip(node.value, speeches)):
        at = f"{speech_path}: item {k + 1} (line {item_node.start_mark.line + 1})"
        if not isinstance(s, dict):
            raise UserError(f"{at}: expected a mapping with debater_name and content, got {_kind(s)}")
        name = s.get("debater_name")
        if name is None:
            raise UserError(f"{at}: missing 'debater_name'")
        if not isinstance(name, str) or name not in side_of:
            raise UserError(f"{at}: debater_name {name!r} is on neither pro_side nor con_side in {motion_path} "
                            f"(debaters: {', '.join(map(repr, side_of))})")
        if order[k] is not None and order[k] != name:
            raise UserError(f"{at}: {name!r} speaks, but speech_order[{k}] in {motion_path} says {order[k]!r}")
        if not isinstance(s.get("content"), str):
            raise UserError(f"{at}: 'content' must be a string, got {_kind(s.get('content'))}")
        sides.append(side_of[name])
        texts.append(s["content"])
    motion = Motion(str(dart_id), text, UNSPECIFIED, language, _text(info, "info_slide", where) or "")
    # On DebateArt each speech answers the ones before it, opening rounds included.
    return JudgeView(motion, tuple(Speech(stage, side, body)
                                   for stage, side, body in zip(round_stages(sides), sides, texts)),
                     independent_openings=False)


def _debatrix_debaters(info: Mapping[str, Any], where: str) -> dict[str, Side]:
    """Debater name → side, from a DebateInfo's pro_side and con_side (lists of {name}); names are exact."""
    side_of: dict[str, Side] = {}
    for side in SIDES:
        key = f"{side}_side"
        debaters = info.get(key)
        if not isinstance(debaters, list) or not debaters:
            raise UserError(f"{where}: '{key}' must be a non-empty list of {{name}}, got {_kind(debaters)}")
        for k, debater in enumerate(debaters):
            name = debater.get("name") if isinstance(debater, dict) else None
            if not isinstance(name, str) or not name:
                raise UserError(f"{where}: {key}[{k}]: expected a mapping with a non-empty 'name' (a string), got "
                                f"{_kind(debater) if not isinstance(debater, dict) else repr(debater)}")
            if side_of.setdefault(name, side) != side:
                raise UserError(f"{where}: debater {name!r} is on both pro_side and con_side")
    return side_of


def _dart_id(value: str | None, where: str) -> int:
    text = (value or "").strip()
    if not text.isascii() or not text.isdigit():
        raise UserError(f"{where}: dart_id {text!r} is not a whole number")
    return int(text)


# --- shared ---------------------------------------------------------------------------------------

def _csv(path: Path, columns: Sequence[str]) -> Iterator[tuple[int, dict[str, str]]]:
    """(line, row) for each row of a CSV file that must have `columns` (others are ignored)."""
    reader = csv.DictReader(read_user_text(path).removeprefix("\ufeff").splitlines())
    missing = [c for c in columns if c not in (reader.fieldnames or [])]
    if missing:
        raise UserError(f"{path}: line 1: missing column {missing[0]!r} (the header needs {' and '.join(columns)})")
    try:
        for row in reader:
            yield reader.line_num, row
    except csv.Error as e:
        raise UserError(f"{path}:{reader.line_num}: not valid CSV: {e}") from None


def _label(value: str | None, where: str) -> str:
    try:
        return GOLD_LABELS[float(value)]  # type: ignore[arg-type]  # None: the TypeError below
    except (KeyError, TypeError, ValueError):
        raise UserError(f"{where}: label {value!r} is not 0 (Pro won), 1 (Con won) or 0.5 (tie)") from None


def _motion(item_id: str, text: str, data: Mapping[str, Any], where: str, language: str) -> Motion:
    category = _text(data, "category", where) or UNSPECIFIED
    if category not in (*CATEGORIES, UNSPECIFIED):
        raise UserError(f"{where}: unknown category {category!r} (expected {', '.join(CATEGORIES)})")
    return Motion(item_id, text, category, _text(data, "language", where) or language,
                  _text(data, "info_slide", where) or "")


@overload
def _text(data: Mapping[str, Any], key: str, where: str, *, required: Literal[True]) -> str: ...
@overload
def _text(data: Mapping[str, Any], key: str, where: str, *, required: bool = False) -> str | None: ...
def _text(data: Mapping[str, Any], key: str, where: str, *, required: bool = False) -> str | None:
    value = data.get(key)
    if value is not None and not isinstance(value, str):
        raise UserError(f"{where}: '{key}' must be a string, got {_kind(value)}")
    value = (value or "").strip() or None
    if required and value is None:
        raise UserError(f"{where}: missing or empty '{key}'")
    return value


def _no_unknown(data: Mapping[Any, Any], keys: Sequence[str], where: str) -> None:  # YAML's keys: any scalar
    unknown = sorted(str(k) for k in data if k not in keys)
    if unknown:
        raise UserError(f"{where}: unknown key {unknown[0]!r} (expected {', '.join(keys)})")


def _yaml(path: Path) -> tuple[Any, Any]:
    """(node, data): the composed node keeps line numbers for messages."""
    return load_yaml(read_user_text(path), str(path))


def _kind(value: Any) -> str:
    return {dict: "a mapping", list: "a list", str: "a string", type(None): "nothing"}.get(type(value),
                                                                                          type(value).__name__)
