"""Motion sets: the packaged libraries and users' own files, validated into Motions.

A motion file is YAML (.yaml/.yml: a list of mappings, or a mapping whose only key
`motions` holds that list) or JSONL (.jsonl: one JSON object per line, blank lines
skipped). Each motion has keys id, text and category (fact, value or policy), and
optionally language (defaulting to the set's language), info_slide (defaulting to
the equal-burden slide), and pro_text with con_text: each side's own proposition, for
motions worded per side. Any mistake, or a file past arena.base.limits (its size, its
motions, a text's length, YAML's nesting and expanded size), is a UserError naming the
file, the item or line, and what is wrong; every mistake among a file's motions is named in
the one UserError, so that a file is fixed in one pass.

Sets are named by specs such as "builtin:en" or "file:my-motions.yaml" and merged in
order by load_sets; an id may appear only once across all of them.
"""
from __future__ import annotations

import hashlib
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any, Mapping, NamedTuple

import yaml

from arena.base.datafiles import load_json, load_yaml
from arena.base.errors import UserError, check_size, read_user_text
from arena.base.limits import MAX_MOTION_CHARS, MAX_MOTION_FILE_BYTES, MAX_MOTIONS
from arena.domain.records import CATEGORIES, Motion

KEYS = ("id", "text", "category", "language", "info_slide", "pro_text", "con_text")
YAML_SUFFIXES = (".yaml", ".yml")
JSONL_SUFFIX = ".jsonl"
BUILTIN = "builtin:"
FILE = "file:"
READING = 1  # version of the rules turning a file into motions: bumped when a file may read differently
MAX_SHOWN = 20  # the mistakes of a file one message lists (and says how many more)


class RawItem(NamedTuple):
    """One undecoded motion and where it sits: `where` heads its messages, `ref` cites it, `lines` gives the line
    of each of its keys (YAML; a JSONL motion is all on its line)."""

    where: str
    ref: str
    data: Any
    lines: Mapping[str, int] = {}

    def at(self, key: str) -> str:
        """Where the item's key sits, for a message about it: its own line when known, else the item's."""
        return f"{self.ref} (line {self.lines[key]})" if key in self.lines else self.where


class Mistakes(list[str]):
    """What is wrong with a file, each as 'FILE: WHERE: what', gathered so that one run reports them all."""

    def raise_any(self, name: str) -> None:
        """A UserError naming every mistake (the first MAX_SHOWN), if there is any."""
        if len(self) == 1:
            raise UserError(self[0])
        if self:
            more = f"\n  and {len(self) - MAX_SHOWN:,} more" if len(self) > MAX_SHOWN else ""
            raise UserError(f"{name}: {len(self):,} mistakes; nothing was read:\n  "
                            + "\n  ".join(self[:MAX_SHOWN]) + more)


def load_motion_file(path: str | Path, *, default_language: str = "en") -> list[Motion]:
    """Read and validate a YAML or JSONL motion file."""
    path = Path(path)
    suffix = _suffix(path)
    return _parse(read_user_text(path, "motion file", MAX_MOTION_FILE_BYTES), str(path), suffix, default_language)


def builtin_sets() -> list[str]:
    """Names of the packaged motion sets, e.g. ["en", "zh"]."""
    return sorted(f.name.removesuffix(".yaml") for f in _builtin_dir().iterdir() if f.name.endswith(".yaml"))


def load_builtin(name: str) -> list[Motion]:
    """Load a packaged motion set; its motions default to the set's language."""
    _check_builtin(name)
    text = (_builtin_dir() / f"{name}.yaml").read_text(encoding="utf-8")
    return _parse(text, f"{BUILTIN}{name}", ".yaml", name)


def load_sets(specs: list[str], base_dir: Path) -> list[Motion]:
    """Merge the sets named by specs ("builtin:<name>", "file:<path>" relative to base_dir) in order."""
    return [motion for motion, _ in load_set_map(specs, base_dir).values()]


def load_set_map(specs: list[str], base_dir: Path) -> dict[str, tuple[Motion, str]]:
    """Each motion of the sets specs name, by id, with the spec of its set; sets merged in order."""
    merged: dict[str, tuple[Motion, str]] = {}
    for spec in specs:
        for motion in _load_spec(spec, base_dir):
            if motion.id in merged:
                raise UserError(f"motion id '{motion.id}' is in both {merged[motion.id][1]} and {spec}")
            merged[motion.id] = (motion, spec)
    return merged


def set_digests(specs: list[str], base_dir: Path) -> dict[str, str]:
    """Each set's digest, by spec, from its file's bytes: while it is unchanged, so are the set's motions.
    Parses nothing, but checks what it can without: each set known, each file there, of a motion file's type
    and within its size."""
    return {spec: hashlib.sha256(f"{spec} by rules {READING}\0".encode() + _set_bytes(spec, base_dir)).hexdigest()
            for spec in specs}


def _set_bytes(spec: str, base_dir: Path) -> bytes:
    """The bytes of the file a set is read from; a UserError when there is none to read, or one too large."""
    if spec.startswith(BUILTIN):
        name = spec.removeprefix(BUILTIN)
        _check_builtin(name)
        return (_builtin_dir() / f"{name}.yaml").read_bytes()
    if not spec.startswith(FILE):
        raise _unknown_set(spec)
    path = base_dir / spec.removeprefix(FILE)
    _suffix(path)
    check_size(path, "motion file", MAX_MOTION_FILE_BYTES)
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise UserError(f"{path}: no such motion file") from None
    except OSError as e:
        raise UserError(f"{path}: cannot read motion file: {e.strerror or e}") from None


def _load_spec(spec: str, base_dir: Path) -> list[Motion]:
    if spec.startswith(BUILTIN):
        return load_builtin(spec.removeprefix(BUILTIN))
    if spec.startswith(FILE):
        return load_motion_file(base_dir / spec.removeprefix(FILE))
    raise _unknown_set(spec)


def _unknown_set(spec: str) -> UserError:
    return UserError(f"unknown motion set '{spec}' (expected {BUILTIN}<name> or {FILE}<path>)")


def _check_builtin(name: str) -> None:
    known = builtin_sets()
    if name not in known:
        raise UserError(f"unknown built-in motion set '{name}' (known: {', '.join(known)})")


def _suffix(path: Path) -> str:
    """The file's type, by its suffix: .yaml, .yml or .jsonl, else a UserError."""
    suffix = path.suffix.lower()
    if suffix not in (*YAML_SUFFIXES, JSONL_SUFFIX):
        raise UserError(f"{path}: unsupported motion file type '{suffix}' (expected .yaml, .yml or .jsonl)")
    return suffix


def _builtin_dir() -> Traversable:
    return files("motions") / "builtin"


def _parse(text: str, name: str, suffix: str, default_language: str) -> list[Motion]:
    """The file's motions; every mistake among its motions (and its JSONL lines) is reported at once, in one
    UserError, so that a file is fixed in one pass. A file that is no list of motions at all is one mistake."""
    mistakes = Mistakes()
    items = _jsonl_items(text, name, mistakes) if suffix == JSONL_SUFFIX else _yaml_items(text, name)
    if not items and not mistakes:
        raise UserError(f"{name}: contains no motions")
    if len(items) > MAX_MOTIONS:
        raise UserError(f"{name}: {items[MAX_MOTIONS].where}: motion {MAX_MOTIONS + 1:,}; a set may hold at most "
                        f"{MAX_MOTIONS:,} motions (see Limits in docs/reference/index.md)")
    motions: list[Motion] = []
    first_ref: dict[str, str] = {}
    for item in items:
        motion = _motion(item, name, default_language, mistakes)
        # An id repeats whatever else is wrong with either motion.
        motion_id = item.data.get("id") if isinstance(item.data, dict) else None
        motion_id = motion_id.strip() if isinstance(motion_id, str) else None
        if motion_id and motion_id in first_ref:
            mistakes.append(f"{name}: {item.at('id')}: repeated id '{motion_id}' (first at {first_ref[motion_id]})")
        elif motion_id:
            first_ref[motion_id] = item.ref
        if motion is not None:
            motions.append(motion)
    mistakes.raise_any(name)
    return motions


def _jsonl_items(text: str, name: str, mistakes: Mistakes) -> list[RawItem]:
    items = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            items.append(RawItem(f"line {number}", f"line {number}", load_json(line, f"{name}: line {number}")))
        except UserError as e:  # a line that is no JSON: a mistake among the others
            mistakes.append(str(e))
    return items


def _yaml_items(text: str, name: str) -> list[RawItem]:
    root, data = load_yaml(text, name)
    if root is None:
        return []
    node, data = _motion_list(root, data, name)
    return [
        RawItem(f"item {i} (line {item_node.start_mark.line + 1})", f"item {i}", item, _key_lines(item_node))
        for i, (item_node, item) in enumerate(zip(node.value, data), start=1)
    ]


def _key_lines(node: yaml.Node) -> dict[str, int]:
    """The line of each key of a mapping's node (none for any other node)."""
    if not isinstance(node, yaml.MappingNode):
        return {}
    return {str(key.value): key.start_mark.line + 1 for key, _ in node.value}


def _motion_list(root: yaml.Node, data: Any, name: str) -> tuple[yaml.SequenceNode, list[Any]]:
    """The sequence of motions: the document itself, or the value of its `motions` key."""
    if isinstance(data, dict):
        extra = sorted(str(k) for k in data if k != "motions")
        if extra:
            raise UserError(f"{name}: unknown top-level key '{extra[0]}' (expected only 'motions')")
        if "motions" not in data:
            raise UserError(f"{name}: missing top-level 'motions' list")
        root = next(value for key, value in root.value if key.value == "motions")
        data = data["motions"]
    # A list's node is a sequence node: the second test only tells the type checker so.
    if not isinstance(data, list) or not isinstance(root, yaml.SequenceNode):
        raise UserError(f"{name}: line {root.start_mark.line + 1}: expected a list of motions, got {_kind(data)}")
    return root, data


def _motion(item: RawItem, name: str, default_language: str, mistakes: Mistakes) -> Motion | None:
    """The item's motion, or None with each of its mistakes added to mistakes."""
    data = item.data
    if not isinstance(data, dict):
        mistakes.append(f"{name}: {item.where}: expected a mapping with id, text and category, got {_kind(data)}")
        return None
    found = len(mistakes)
    for key in sorted(str(k) for k in data if k not in KEYS):
        mistakes.append(f"{name}: {item.at(key)}: unknown key '{key}' (expected {', '.join(KEYS)})")
    values = {key: _optional(data, key, f"{name}: {item.at(key)}", mistakes) for key in KEYS}
    for key in ("id", "text", "category"):
        raw = data.get(key)  # a value of another type, or too long, has its mistake said already
        if raw is None or (isinstance(raw, str) and not raw.strip()):
            mistakes.append(f"{name}: {item.at(key)}: missing or empty '{key}'")
    category = values["category"]
    if category is not None and category not in CATEGORIES:
        expected = f"{', '.join(CATEGORIES[:-1])} or {CATEGORIES[-1]}"
        mistakes.append(f"{name}: {item.at('category')}: unknown category '{category}' (expected {expected})")
    pro_text, con_text = values["pro_text"], values["con_text"]
    if (pro_text is None) != (con_text is None):
        given, missing = ("pro_text", "con_text") if pro_text else ("con_text", "pro_text")
        mistakes.append(f"{name}: {item.at(given)}: '{given}' without '{missing}': a two-sided motion words both "
                        "sides")
    if len(mistakes) > found or values["id"] is None or values["text"] is None or category is None:
        return None
    return Motion(
        id=values["id"],
        text=values["text"],
        category=category,
        language=values["language"] or default_language,
        info_slide=values["info_slide"] or "",
        pro_text=pro_text or "",
        con_text=con_text or "",
    )


def _optional(data: Mapping[object, object], key: str, where: str, mistakes: Mistakes) -> str | None:
    """The stripped string under key, or None when it is absent, null or blank (or wrong: its mistake added)."""
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        mistakes.append(f"{where}: '{key}' must be a string, got {_kind(value)}")
        return None
    if len(value) > MAX_MOTION_CHARS:
        mistakes.append(f"{where}: '{key}' has {len(value):,} characters; at most {MAX_MOTION_CHARS:,} (see "
                        "Limits in docs/reference/index.md)")
        return None
    return value.strip() or None


def _kind(value: Any) -> str:
    kinds: dict[type, str] = {dict: "a mapping", list: "a list", str: "a string"}
    return kinds.get(type(value), type(value).__name__)
