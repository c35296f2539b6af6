"""Registering and retiring entries, and adding motion sets, by editing arena.toml as text, so the user's
comments and layout survive.

Every edit is checked twice: the inputs before anything is written, and the file itself after, by reading
it back; a file that does not read back as meant is restored byte for byte.
"""
from __future__ import annotations

import re
import tomllib
from dataclasses import replace
from datetime import date, time
from pathlib import Path
from typing import Any, Callable, Collection, Mapping, Sequence

from arena.workspace.config import Config, check_entry_value, check_judge, is_http_url, parse_config
from arena.base.errors import ArenaError, UserError, plural
from arena.base.files import atomic_copy, atomic_write_bytes, no_space
from arena.domain.families import family_of
from arena.domain.records import HUMAN_JUDGE, IMPORTED, JURY, Entry, JudgeSpec, Motion, is_simulated
from arena.base.registry import Registry

_PROVIDER_MODEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-]*/\S+")
_BARE_KEY = re.compile(r"[A-Za-z0-9_\-]+")


def parse_params(pairs: Sequence[str]) -> dict[str, Any]:
    """KEY=VALUE pairs → params; VALUE is read as a TOML value (0.5, 200, true, [1, 2]), else kept as text."""
    params: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        key = key.strip()
        if not sep or not key:
            raise UserError(f"{pair!r}: expected KEY=VALUE, e.g. temperature=0.5")
        if key in params:
            raise UserError(f"{key!r} given more than once")
        params[key] = _param_value(raw)
    return params


def _param_value(raw: str) -> Any:
    try:
        parsed = tomllib.loads(f"v = {raw}")
    except tomllib.TOMLDecodeError:
        return raw
    # "1\nw = 2" parses too, as two keys: that is text, not a value.
    return parsed["v"] if list(parsed) == ["v"] else raw


def add_entry(config: Config, remembered: Collection[str], kinds: Registry, *, name: str, debater: str, model: str,
              api_base: str | None = None, params: Mapping[str, Any] | None = None,
              strength: float | None = None, family: str | None = None) -> Config:
    """Check a new entry, then append it to arena.toml as an [[entries]] table; return the new config.

    remembered: entry names the database knows, including entries since removed from arena.toml, whose
    matches still carry the name.
    """
    check_entry_value("name", name, "NAME")
    for i, e in enumerate(config.entries):
        if e.name == name:
            raise UserError(f"NAME {name!r}: {config.where(f'entries[{i}].name')} already registers an entry of "
                            "that name; choose another name")
    if name in remembered:
        raise UserError(f"NAME {name!r}: the workspace database remembers a removed entry of that name, whose "
                        "matches keep it; choose another name")
    if not kinds.has(debater):
        raise UserError(f"--debater {debater!r}: unknown debater kind (known: {', '.join(kinds.names())})")
    _check_provider_model(model)
    check_entry_value("model", model, "--model")  # a provider litellm knows
    if api_base is not None and not is_http_url(api_base):
        raise UserError(f"--api-base {api_base!r}: expected an http(s) URL, e.g. 'http://127.0.0.1:8000/v1'")
    if strength is not None:
        if not is_simulated(model):
            raise UserError(f"--strength: only offline models have a planted strength, and {model!r} is not one "
                            "('offline/NAME')")
        check_entry_value("strength", strength, "--strength")
    if family is not None:
        check_entry_value("family", family, "--family")
    entry = Entry(name, debater, model, api_base or "", float(strength or 0.0), dict(params or {}),
                  family=family or "")
    try:
        kinds.get(debater)(entry)  # the kind's own PARAMS checks
    except UserError as exc:
        raise UserError(f"--param: {exc}") from None

    keys: dict[str, Any] = {"name": name, "debater": debater, "model": model}
    if api_base is not None:
        keys["api_base"] = api_base
    if strength is not None:
        keys["strength"] = float(strength)
    if family is not None:
        keys["family"] = family
    lines = ["[[entries]]", *_values(keys)]
    if entry.params:
        lines += ["[entries.params]", *_values(entry.params)]
    return _append(config, lines, lambda new: new.entries == (*config.entries, entry))


_JUDGE_LABELS = {"": "--model", "name": "NAME", "kind": "--kind", "model": "--model", "api_base": "--api-base",
                 "runs": "--runs", "options": "--option", "options.people": "--people", "family": "--family"}


def add_judge(config: Config, kept: Callable[[str], int], kinds: Registry, *, name: str, kind: str,
              model: str | None = None, api_base: str | None = None, runs: int | None = None,
              options: Mapping[str, Any] | None = None, people: Sequence[str] | None = None,
              family: str | None = None) -> Config:
    """Check a new judge as arena.toml's are checked, then append it as a [[judges]] table; return the new config.

    kept(name): how many verdicts and ballot links the database keeps under that name (a judge removed from
    arena.toml leaves them), which a new judge of the name would take over.
    """
    for i, j in enumerate(config.judges):
        if j.name == name:
            raise UserError(f"NAME {name!r}: {config.where(f'judges[{i}].name')} already registers a judge of that "
                            "name; choose another name")
    if kept(name):
        raise UserError(f"NAME {name!r}: the workspace database keeps verdicts of a removed judge of that name; "
                        "choose another name")
    if not kinds.has(kind):
        raise UserError(f"--kind {kind!r}: unknown judge kind (known: {', '.join(kinds.names())})")
    if kind == IMPORTED:
        raise UserError(f"--kind {kind!r}: imported judges come with their verdicts from 'arena import'")
    options = dict(options or {})
    if people is not None:
        if kind != HUMAN_JUDGE:
            raise UserError(f"--people: only judges of people (--kind {HUMAN_JUDGE}) have people; a {kind} judge "
                            "runs on --model")
        if "people" in options:
            raise UserError("--people and --option people=...: name the people once")
        options["people"] = list(people)
    if model is not None:
        _check_provider_model(model)
    keys = {"name": name, "kind": kind, "model": model, "api_base": api_base, "runs": runs, "family": family}
    keys = {k: v for k, v in keys.items() if v is not None}
    judge = check_judge({**keys, **({"options": options} if options else {})}, config.arena.judge_runs,
                        _JUDGE_LABELS)
    try:
        kinds.get(kind)(judge)  # the kind's own options checks
    except UserError as exc:
        raise UserError(f"--option: {exc}") from None
    lines = ["[[judges]]", *_values(keys)]
    if options:
        lines += ["[judges.options]", *_values(options)]
    return _append(config, lines, lambda new: new.judges == (*config.judges, judge))


def remove_entry(config: Config, name: str, matches: Mapping[str, int]) -> Config:
    """Take an entry's [[entries]] table out of arena.toml; refused once it is in a match (matches: its matches by
    status), for its matches name it. Return the new config."""
    entry = config.entry(name)
    if matches:
        counts = ", ".join(f"{n} {status}" for status, n in sorted(matches.items()))
        raise UserError(f"entry {name!r} is in {plural(sum(matches.values()), 'match')} ({counts}), which keep its "
                        f"name: it cannot be removed; 'arena entry retire {name}' stops scheduling it instead")
    index = config.entries.index(entry)
    return _remove_table(config, f"entries[{index}]",
                         lambda new: new.entries == config.entries[:index] + config.entries[index + 1:])


def remove_judge(config: Config, name: str, kept: int) -> Config:
    """Take a judge's [[judges]] table out of arena.toml; refused once the database keeps verdicts or ballot
    links of it (kept: how many). Return the new config."""
    judge = config.judge(name)
    if kept:
        raise UserError(f"judge {name!r} has verdicts or ballot links in the workspace database, which its name "
                        "keeps: it cannot be removed; leave it configured (only the first judge is rated by default: "
                        "'arena rate --judge NAME' picks another)")
    index = config.judges.index(judge)
    return _remove_table(config, f"judges[{index}]",
                         lambda new: new.judges == config.judges[:index] + config.judges[index + 1:])


def _remove_table(config: Config, table: str, meant: Callable[[Config], bool]) -> Config:
    """Remove an array table (e.g. 'entries[2]') with its subtables and the blank line right before it (as _append
    wrote it), keeping every other byte: no comment outside the table goes, since which table a comment speaks of
    (the one above, the one below, the file) cannot be told."""
    header = config.key_lines.get(table)
    if header is None:
        raise ArenaError(f"{config.path}: cannot find the [[{table.partition('[')[0]}]] table of {table}; edit the "
                         "file by hand")
    old = config.path.read_bytes()
    lines = old.decode("utf-8").splitlines(keepends=True)  # numbered as config.key_lines numbers them
    subtables = {n - 1 for k, n in config.key_lines.items() if k.startswith(f"{table}.")}
    start, last = header - 1, _last_key_line(lines, header - 1, config.path)
    while (following := _next_header(lines, last + 1)) in subtables:
        last = _last_key_line(lines, following, config.path)  # a subtable's line (in subtables: not None)
    if start > 0 and not lines[start - 1].strip():
        start -= 1
    del lines[start:last + 1]
    return _rewrite(config.path, old, "".join(lines).encode("utf-8"), meant)


def _next_header(lines: list[str], start: int) -> int | None:
    """Index of the first table header from lines[start] on, past blank and comment lines; None if a key comes first."""
    for k in range(start, len(lines)):
        stripped = lines[k].strip()
        if stripped and not stripped.startswith("#"):
            return k if stripped.startswith("[") else None
    return None


def _check_provider_model(model: str) -> None:
    """--model names its provider: arena.toml takes any litellm string, but on the command line a bare name is
    more likely a slip than meant."""
    if not _PROVIDER_MODEL.fullmatch(model):
        raise UserError(f"--model {model!r}: name the provider as PROVIDER/MODEL, e.g. 'openai/gpt-4o' "
                        f"('offline/NAME' is the built-in simulator)")


def add_records(config: Config, entries: Sequence[Entry], judges: Sequence[JudgeSpec], note: str) -> Config:
    """Append entries and judges (an importer's, already checked) to arena.toml in one edit, under a comment line
    saying where they came from (note); return the new config."""
    lines = [f"# {note}"]
    for e in entries:
        keys = {"name": e.name, "debater": e.debater, "model": e.model, "api_base": e.api_base,
                "strength": e.strength, "retired": e.retired, "context_window": e.context_window,
                "structured_output": e.structured_output, "family": _own_family(e)}
        lines += ["", "[[entries]]", *_keys(keys), *(["[entries.params]", *_values(e.params)] if e.params else [])]
    for j in judges:
        implied = {HUMAN_JUDGE: HUMAN_JUDGE, IMPORTED: IMPORTED, JURY: JURY}.get(j.kind)  # a model they need not name
        keys = {"name": j.name, "kind": j.kind, "model": None if j.model == implied else j.model,
                "api_base": j.api_base,
                "runs": None if j.casts_ballots or j.kind == JURY else j.runs,  # R of people: their number; jury: size
                "context_window": j.context_window, "structured_output": j.structured_output,
                "family": _own_family(j)}
        lines += ["", "[[judges]]", *_keys(keys), *(["[judges.options]", *_values(j.options)] if j.options else [])]
    return _append(config, lines,
                   lambda new: new.entries == (*config.entries, *entries) and new.judges == (*config.judges, *judges))


def _own_family(spec: Entry | JudgeSpec) -> str | None:
    """The family to write: one of its own, None when it is the one its model gives (arena.domain.families)."""
    return None if spec.family == family_of(spec.model) else spec.family


def _append(config: Config, lines: Sequence[str], meant: Callable[[Config], bool]) -> Config:
    """Append lines to arena.toml after a blank line, in the file's own line endings, as one checked rewrite
    (meant: the new config is what the lines were for); return the new config."""
    old = config.path.read_bytes()
    newline = "\r\n" if b"\r\n" in old else "\n"
    lead = "" if not old or old.endswith(b"\n") else newline  # finish the last line first
    block = lead + newline + newline.join(lines) + newline
    return _rewrite(config.path, old, old + block.encode("utf-8"), meant)


def _keys(values: Mapping[str, Any]) -> list[str]:
    """A table's `key = value` lines, leaving out the keys at their default (None, "", 0.0, false, "auto")."""
    return _values({k: v for k, v in values.items() if v not in (None, "", 0.0, False, "auto")})


def _values(values: Mapping[str, Any]) -> list[str]:
    return [f"{_key(k)} = {_toml(v)}" for k, v in values.items()]


def retire_entry(config: Config, name: str) -> Config:
    """Mark an entry retired in arena.toml (`retired = true` in its [[entries]] table); return the new config."""
    entry = config.entry(name)
    index = config.entries.index(entry)
    if entry.retired:
        raise UserError(f"{config.where(f'entries[{index}].retired')}: entry {name!r} is already retired")
    old = config.path.read_bytes()
    text = old.decode("utf-8")
    lines = text.splitlines(keepends=True)  # numbered as config.key_lines numbers them
    newline = "\r\n" if "\r\n" in text else "\n"
    explicit = config.key_lines.get(f"entries[{index}].retired")
    if explicit:  # `retired = false` already there: flip it rather than repeat the key
        lines[explicit - 1] = re.sub(r"(=\s*)false\b", r"\1true", lines[explicit - 1], count=1)
    else:
        last = _last_key_line(lines, config.key_lines[f"entries[{index}]"] - 1, config.path)
        if not lines[last].endswith(("\n", "\r")):
            lines[last] += newline
        lines.insert(last + 1, f"retired = true{newline}")
    expected = tuple(replace(e, retired=True) if i == index else e for i, e in enumerate(config.entries))
    return _rewrite(config.path, old, "".join(lines).encode("utf-8"), lambda new: new.entries == expected)


def add_motion_set(config: Config, spec: str) -> Config:
    """Append spec (e.g. "file:motions/mine.yaml") to [motions] sets in arena.toml; return the new config.

    Only the array gains an item: `sets = [...]` where it is (one line or several), else a `sets` key
    under [motions], else a [motions] table at the end; the sets in force before are written out
    with it, so a default stays what it was.
    """
    sets = list(config.motions.sets)
    old = config.path.read_bytes()
    text = old.decode("utf-8")
    lines = text.splitlines(keepends=True)  # numbered as config.key_lines numbers them
    newline = "\r\n" if "\r\n" in text else "\n"
    item = _string(spec)
    key_line, header = config.key_lines.get("motions.sets"), config.key_lines.get("motions")
    if key_line:
        start = key_line - 1
        end = _value_end(lines, start, config.path)
        value = "".join(lines[start:end + 1])
        # The closing bracket is the first ']' up to which the text reads as the whole key/value
        # (a ']' inside a string or a comment does not).
        close = next((i for i, ch in enumerate(value) if ch == "]" and _reads_as_sets(value[:i + 1], sets)), None)
        edited = None if close is None else next(
            (v for v in _with_item(value, close, item) if _reads_as_sets(v, [*sets, spec])), None)
        if edited is None:
            raise ArenaError(f"{config.where('motions.sets')}: cannot add {spec!r} to this array; add it by hand")
        lines[start:end + 1] = [edited]
    else:
        entry = f"sets = {_toml([*sets, spec])}{newline}"
        if header:
            if not lines[header - 1].endswith(("\n", "\r")):
                lines[header - 1] += newline
            lines.insert(header, entry)
        else:
            if lines and not lines[-1].endswith(("\n", "\r")):
                lines[-1] += newline
            lines += [newline, f"[motions]{newline}", entry]
    return _rewrite(config.path, old, "".join(lines).encode("utf-8"),
                    lambda new: list(new.motions.sets) == [*sets, spec])


MOTIONS_DIR = "motions"  # where `arena motion import` keeps the workspace's copies of motion files


def add_motion_file(config: Config, path: Path, motions: Sequence[Motion], known: Mapping[str, str],
                    stored: Callable[[str], Motion | None]) -> tuple[Config, str, Path]:
    """Copy a motion file into the workspace's motions/ folder and add it to [motions] sets; return the new
    config, the set's spec and the copy. A failed edit of arena.toml takes the copy (and a folder made for
    it) away again, so the workspace is as it was.

    Checked before anything is written: a free name in motions/, and ids (of motions, the file's) new to
    the configured sets (known: id → set spec) and to the database (stored: id → the motion it keeps).
    """
    spec = f"file:{MOTIONS_DIR}/{path.name}"
    if spec in config.motions.sets:
        raise UserError(f"{path}: already imported: {config.where('motions.sets')} names {spec!r}")
    copy = config.path.parent / MOTIONS_DIR / path.name
    if copy.exists() and copy.read_bytes() != path.read_bytes():
        raise UserError(f"{path}: the workspace already has a different {MOTIONS_DIR}/{path.name}; "
                        "rename the file to import it")
    for k, m in enumerate(motions, start=1):
        if m.id in known:
            raise UserError(f"{path}: motion {k} has id {m.id!r}, which {known[m.id]} has already")
        kept = stored(m.id)
        if kept is not None and kept != m:  # matches on the stored motion would change their text
            raise UserError(f"{path}: motion {k} has id {m.id!r}, which the workspace database keeps for a "
                            f"different motion ({kept.text!r}) from an earlier set; choose another id")
    made_dir, made_copy = not copy.parent.exists(), not copy.exists()
    try:
        copy.parent.mkdir(exist_ok=True)
        if made_copy:
            atomic_copy(path, copy)  # killed or out of space mid-copy, it leaves no part of a file to block a retry
        return add_motion_set(config, spec), spec, copy
    except BaseException:
        if made_copy:
            copy.unlink(missing_ok=True)
        if made_dir and copy.parent.exists() and not any(copy.parent.iterdir()):
            copy.parent.rmdir()
        raise


def _with_item(value: str, close: int, item: str) -> list[str]:
    """Ways to put item before the array's closing bracket at value[close], best looking first; the
    caller keeps the first that reads right."""
    before, after = value[:close], value[close:]
    ways = []
    line_start = before.rstrip(" \t")
    if line_start.endswith("\n"):  # the bracket has a line of its own: add a line like the item above
        above = line_start.rstrip("\r\n").rsplit("\n", 1)[-1]
        indent = above[:len(above) - len(above.lstrip())]
        newline = "\r\n" if line_start.endswith("\r\n") else "\n"
        ways.append(f"{line_start}{indent}{item},{newline}{before[len(line_start):]}{after}")
    return ways + [before.rstrip(" ") + glue + item + after for glue in (", ", "")]


def _reads_as_sets(text: str, sets: list[str]) -> bool:
    try:
        return tomllib.loads(text).get("sets") == sets
    except tomllib.TOMLDecodeError:
        return False


def _last_key_line(lines: list[str], header: int, path: Path) -> int:
    """Index of the last line of the table's own key/values: before its subtables and the next table."""
    last, k = header, header + 1
    while k < len(lines):
        stripped = lines[k].strip()
        if stripped.startswith("["):  # a key never starts with '[': this is the next table's header
            break
        if stripped and not stripped.startswith("#"):
            k = _value_end(lines, k, path)
            last = k
        k += 1
    return last


def _value_end(lines: list[str], start: int, path: Path) -> int:
    """The line a key/value starting on lines[start] ends on: strings and arrays may span lines."""
    for end in range(start, len(lines)):
        try:
            tomllib.loads("".join(lines[start:end + 1]))
            return end
        except tomllib.TOMLDecodeError:
            continue
    raise ArenaError(f"{path.name}:{start + 1}: cannot tell where this value ends; edit the file by hand")


def _rewrite(path: Path, old: bytes, new: bytes, meant: Callable[[Config], bool]) -> Config:
    """Replace the file's bytes with new, read it back, and put old back unless it reads as meant."""
    _replace(path, new)
    try:
        config = parse_config(path.read_bytes().decode("utf-8"), path)
        problem = "" if meant(config) else "it did not read back as written"
    except UserError as exc:
        problem = str(exc)
    if problem:
        _replace(path, old)
        raise ArenaError(f"{path}: the edit was undone, the file is as it was: {problem}")
    return config


def _replace(path: Path, data: bytes) -> None:
    """Write data atomically: a crash leaves either the old file or the new one, never half of one."""
    try:
        atomic_write_bytes(path, data)
    except OSError as exc:
        if no_space(exc):  # the command line's one message for a full disk
            raise
        raise ArenaError(f"{path}: cannot write: {exc.strerror or exc}") from None


def _toml(value: Any) -> str:
    """value as TOML text: strings escaped, numbers exact, arrays and tables inline."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)  # the shortest text that reads back exactly; inf and nan are spelled as TOML does
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, (date, time)):  # datetime is a date
        return value.isoformat()
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_key(k)} = {_toml(v)}" for k, v in value.items()) + "}"
    raise UserError(f"{value!r}: a {type(value).__name__} has no TOML form (use text, numbers, booleans, "
                    "dates, lists or tables)")


def _key(key: str) -> str:
    return key if _BARE_KEY.fullmatch(key) else _string(key)


def _string(text: str) -> str:
    """A TOML basic string: quotes, backslashes and control characters escaped."""
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch in "\b\t\n\f\r":
            out.append({"\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}[ch])
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04X}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'
