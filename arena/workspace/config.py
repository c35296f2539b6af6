"""arena.toml → typed, validated settings. Every error names the file, the key and its line."""
from __future__ import annotations

import math
import re
import tomllib
from dataclasses import MISSING, dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping
from urllib.parse import urlsplit

from arena.base import limits
from arena.base.errors import UserError, check_size
from arena.domain.features import FEATURES
from arena.domain.formats import BUILTIN, WORKFLOWS, Format, Turn, format_names, known
from arena.gateway.providers import unknown_provider
from arena.domain.records import DEFAULT_FORMAT, HUMAN_JUDGE, IMPORTED, JURY, JURY_SIZE, Entry, JudgeSpec
from arena.gateway.structured import STRUCTURED_MODES

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

CONFIG_NAME = "arena.toml"
_Table = dict[str, Any]  # a TOML table as tomllib reads it: its values are whatever the file holds
_Fail = Callable[[str, str], UserError]  # (key, problem) → the error naming the key (and its line)


@dataclass(frozen=True)
class ArenaSettings:
    language: str = "en"
    seed: int = 0
    judge_runs: int = 3
    forfeits: bool = True  # a side that cannot debate forfeits the match; false: the match fails instead
    format: str = DEFAULT_FORMAT  # the debate format (arena.domain.formats) new matches are scheduled in
    speech_checks: bool = True  # a speech that is no debate speech forfeits (arena.domain.speechchecks); false: rated as is
    min_speech_share: float = 0.25  # too-short: under this share of the turn's budget


@dataclass(frozen=True)
class LLMSettings:
    max_concurrency: int = 16
    retries: int = 4
    timeout_s: float = 120.0
    cache: bool = True
    backoff_s: float = 1.0  # first retry delay; doubles each retry, with jitter
    schema_retries: int = 2  # re-asks after an answer that fails its JSON schema
    litellm_path: str = "direct"  # arena.gateway.wire.PATHS: litellm's provider transforms where it has them, or acompletion


@dataclass(frozen=True)
class SearchSettings:
    provider: str = "tavily"
    api_base_url: str = ""
    max_results: int = 5


@dataclass(frozen=True)
class MotionSettings:
    sets: tuple[str, ...] = ("builtin:en",)


@dataclass(frozen=True)
class RatingSettings:
    side: str = "fit"  # "fit": a Pro-advantage parameter fitted with the ratings; "ignore": the side-blind model
    control: tuple[str, ...] = ()  # style features (arena.domain.features) fitted with the ratings, which are then net of them


@dataclass(frozen=True)
class SiteSettings:
    """How `arena publish` fits and lays out the site: its overall fits' intervals and the tabs' (category,
    dimension), bootstrap replicates, and rows per page of the matches list."""

    intervals: str = "bootstrap"
    view_intervals: str = "sandwich"  # a fifth of a bootstrap's time: six fits of the seven of a judge's page
    replicates: int = 1000
    matches_per_page: int = 500


@dataclass(frozen=True)
class PeopleSettings:
    """How long a person who debates on the web (a human entry with via = "web") has for each speech."""

    turn_deadline_h: float = 72.0  # hours from when the turn opens; past them, that side forfeits


@dataclass(frozen=True)
class Config:
    path: Path
    arena: ArenaSettings
    llm: LLMSettings
    search: SearchSettings
    motions: MotionSettings
    entries: tuple[Entry, ...]
    judges: tuple[JudgeSpec, ...]
    key_lines: dict[str, int]  # "entries[0].model" -> line number, for messages about values
    rating: RatingSettings = RatingSettings()
    formats: Mapping[str, Format] = field(default_factory=dict)  # declared in arena.toml ([[formats]]), by name
    site: SiteSettings = SiteSettings()
    people: PeopleSettings = PeopleSettings()

    def where(self, key: str) -> str:
        """'arena.toml:12 key entries[0].debater' — where a key stands, for error messages."""
        line = _nearest_line(self.key_lines, key)
        return f"{self.path.name}:{line}: {key}" if line else f"{self.path.name}: {key}"

    def entry(self, name: str) -> Entry:
        for e in self.entries:
            if e.name == name:
                return e
        raise UserError(f"unknown entry {name!r}; known: {', '.join(e.name for e in self.entries) or 'none'}")

    def judge(self, name: str) -> JudgeSpec:
        for j in self.judges:
            if j.name == name:
                return j
        raise UserError(f"unknown judge {name!r}; known: {', '.join(j.name for j in self.judges) or 'none'}")

    @property
    def automatic_judges(self) -> tuple[JudgeSpec, ...]:
        """The judges `arena run` and `arena judge` run: all but people casting ballots and imported judges."""
        return tuple(j for j in self.judges if not j.external)

    def human_judge(self, name: str) -> JudgeSpec:
        judge = self.judge(name)
        if not judge.casts_ballots:
            raise UserError(f"judge {name!r} is a {judge.kind} judge, not a judge of people; ballots belong to "
                            f"judges of kind {HUMAN_JUDGE!r}: "
                            f"{', '.join(j.name for j in self.judges if j.casts_ballots) or 'none configured'}")
        return judge


def is_http_url(url: str) -> bool:
    """Whether url is an http(s) URL with a host: what a model's api_base or the search API's base must be."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.netloc)


# (type, (check, description)) per key; the check runs after the type matches.
_Check = tuple[Callable[[Any], Any], str]
_Spec = dict[str, tuple[type | tuple[type, ...], _Check]]

_URL = (lambda v: v == "" or is_http_url(v), "empty or an http(s) URL")
_ANY = (lambda v: True, "")


def _whole(low: int, high: int) -> _Check:
    """A whole number from low to high (arena.base.limits)."""
    return lambda v: low <= v <= high, f"a whole number of at least {low} and at most {high}"


def _number(low: float, high: float, *, above: bool = False) -> _Check:
    """A number from low (or above it) to high."""
    return ((lambda v: (low < v if above else low <= v) and v <= high),
            f"a finite number {'above' if above else 'of at least'} {low:g} and at most {high:g}")


_RUNS = _whole(1, limits.MAX_RUNS)
_INTERVALS = (lambda v: v in ("bootstrap", "sandwich"), "'bootstrap' or 'sandwich'")

_SECTIONS: dict[str, _Spec] = {
    "arena": {
        "language": (str, (lambda v: re.fullmatch(r"[a-z]{2,3}(-[A-Za-z]+)?", v), "a language code such as 'en' or 'zh'")),
        "seed": (int, _whole(0, limits.MAX_SEED)),
        "judge_runs": (int, _RUNS),
        "forfeits": (bool, _ANY),
        "format": (str, _ANY),  # a known format: checked in parse_config, since plug-ins add formats
        "speech_checks": (bool, _ANY),
        "min_speech_share": ((int, float), _number(0, 1)),
    },
    "llm": {
        "max_concurrency": (int, _whole(1, limits.MAX_CONCURRENCY)),
        "retries": (int, _whole(0, limits.MAX_RETRIES)),
        "timeout_s": ((int, float), _number(0, limits.MAX_TIMEOUT_S, above=True)),
        "cache": (bool, _ANY),
        "backoff_s": ((int, float), _number(0, limits.MAX_BACKOFF_S)),
        "schema_retries": (int, _whole(0, limits.MAX_SCHEMA_RETRIES)),
        "litellm_path": (str, (lambda v: v in ("direct", "acompletion"), "'direct' or 'acompletion'")),
    },
    "search": {
        "provider": (str, (lambda v: v in ("tavily", "offline"), "'tavily' or 'offline'")),
        "api_base_url": (str, _URL),
        "max_results": (int, (lambda v: 1 <= v <= 20, "a whole number from 1 to 20")),
    },
    "motions": {
        "sets": (list, (lambda v: all(isinstance(s, str) and re.match(r"^(builtin|file):.+", s) for s in v),
                        "a list of 'builtin:NAME' or 'file:PATH' strings")),
    },
    "rating": {
        "side": (str, (lambda v: v in ("fit", "ignore"), "'fit' or 'ignore'")),
        "control": (list, (lambda v: all(f in FEATURES for f in v) and len(set(v)) == len(v),
                           f"a list of distinct features among {', '.join(map(repr, FEATURES))}")),
    },
    "site": {
        "intervals": (str, _INTERVALS),
        "view_intervals": (str, _INTERVALS),
        "replicates": (int, _whole(1, limits.MAX_BOOTSTRAP)),
        "matches_per_page": (int, _whole(10, limits.MAX_PAGE_ROWS)),
    },
    "people": {
        "turn_deadline_h": ((int, float), _number(0, limits.MAX_TURN_HOURS, above=True)),
    },
}
_NAME = (lambda v: re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._\-]{0,63}", v),
         "1-64 letters, digits, '.', '_' or '-', starting with a letter or digit")
_MODEL = (lambda v: bool(re.fullmatch(r"\S+", v)) and (unknown_provider(v) or True),
          "a litellm model string such as 'openai/gpt-4o'")
# How a real model is reached and asked, and who made it (arena.domain.families): the same keys for entries and judges.
_MODEL_KEYS: _Spec = {
    "context_window": (int, (lambda v: 256 <= v <= 10_000_000, "a whole number of tokens from 256 up")),
    "structured_output": (str, (lambda v: v in ("auto", *STRUCTURED_MODES),
                                f"one of auto, {', '.join(STRUCTURED_MODES)}")),
    "family": (str, (lambda v: re.fullmatch(r"[a-z0-9][a-z0-9._/\-]{0,63}", v),
                     "1-64 lowercase letters, digits, '.', '_', '-' or '/', starting with a letter or digit, "
                     "such as 'openai' or 'meta'")),
}
_ENTRY: _Spec = {
    "name": (str, _NAME),
    "debater": (str, (lambda v: v != "", "a debater kind")),
    "model": (str, _MODEL),
    "api_base": (str, _URL),
    "strength": ((int, float), _number(-limits.MAX_STRENGTH, limits.MAX_STRENGTH)),
    "params": (dict, _ANY),
    "retired": (bool, _ANY),
    **_MODEL_KEYS,
}
_JUDGE: _Spec = {
    "name": (str, _NAME),
    "kind": (str, (lambda v: v != "", "a judge kind")),
    "model": (str, _MODEL),
    "api_base": (str, _URL),
    "runs": (int, _RUNS),
    "options": (dict, _ANY),
    **_MODEL_KEYS,
}
_FORMAT: _Spec = {
    "name": (str, _NAME),
    "title": (str, (lambda v: 0 < len(v) <= 200, "1-200 characters")),
    "description": (str, (lambda v: len(v) <= 2000, "at most 2,000 characters")),
    "turns": (list, (lambda v: 0 < len(v) <= limits.MAX_TURNS,
                     f"a list of 1 to {limits.MAX_TURNS} turns ([[formats.turns]])")),
}
_TURN: _Spec = {
    "stage": (str, (lambda v: re.fullmatch(r"[a-z][a-z0-9_]{0,39}", v), "a key of lowercase letters, digits and '_'")),
    "side": (str, (lambda v: v in ("pro", "con"), "'pro' or 'con'")),
    "title": (str, (lambda v: 0 < len(v) <= 100, "1-100 characters")),
    "words": (int, _whole(1, limits.MAX_TURN_WORDS)),
    "chars": (int, _whole(1, 3 * limits.MAX_TURN_WORDS)),
    "blind": (bool, _ANY),
    "workflow": (str, (lambda v: v in WORKFLOWS, f"one of {', '.join(WORKFLOWS)}")),
    "brief": (str, (lambda v: len(v) <= 2000, "at most 2,000 characters")),
    "min_share": ((int, float), _number(0, 1)),
}
# A judge's model: see _implied. "turns": a declared format's each.
_REQUIRED = {"entries": ("name", "debater", "model"), "judges": ("name", "kind"), "formats": ("name", "turns"),
             "turns": ("stage", "side", "title", "words")}


def _implied(judge: _Table, i: int, fail: _Fail) -> _Table:
    """What a judge's kind implies. A judge of people: R is the number of people, each named once, and no model
    is needed (an offline/ model marks the ballots simulated). An imported judge needs no model either, and its R
    is only the most runs it gave a match (each match has the runs its source gave). A jury has neither: its
    models are its pool, and R is its size, one run per model seated (the kind checks both). Other judges need a
    model."""
    where = f"judges[{i}]"
    if judge["kind"] == IMPORTED:
        return {"model": judge.get("model", IMPORTED)}
    if judge["kind"] == JURY:
        for key, why in (("model", "its models are options.pool"), ("runs", "its R is options.size")):
            if key in judge:
                raise fail(f"{where}.{key}", f"a jury judge has no {key} of its own ({why}): leave {key} out")
        size = judge.get("options", {}).get("size", JURY_SIZE)
        # A size the kind will refuse still makes a judge to refuse: R stands at the default until then.
        return {"model": JURY, "runs": size if type(size) is int and 1 <= size <= limits.MAX_RUNS else JURY_SIZE}
    if judge["kind"] != HUMAN_JUDGE:
        if "model" not in judge:
            raise fail(where, "missing required key 'model'")
        return {}
    if "runs" in judge:
        raise fail(f"{where}.runs", "a human judge's R is its number of people: leave runs out")
    people = judge.get("options", {}).get("people")
    key = f"{where}.options.people"
    if not isinstance(people, list) or not people:
        raise fail(key, 'a human judge needs people: a list of names such as ["ann", "bo", "cy"], got '
                        f"{_shown(people)}")
    if len(people) > limits.MAX_RUNS:
        raise fail(key, f"{len(people)} people; a judge may have at most {limits.MAX_RUNS} (its R)")
    seen = set()
    for person in people:
        if not isinstance(person, str) or not _NAME[0](person):
            raise fail(key, f"expected names of {_NAME[1]}, got {_shown(person)}")
        if person in seen:
            raise fail(key, f"{person!r} is listed twice")
        seen.add(person)
    return {"runs": len(people), "model": judge.get("model", HUMAN_JUDGE)}


def tables() -> dict[str, tuple[_Spec, _Table, tuple[str, ...]]]:
    """Per arena.toml table (each section, then entries and judges): its keys' checks, the defaults the code
    gives them, and its required keys; what the docs print of each table and their tests check."""
    settings = {"arena": ArenaSettings, "llm": LLMSettings, "search": SearchSettings, "motions": MotionSettings,
                "rating": RatingSettings, "site": SiteSettings, "people": PeopleSettings}
    found: dict[str, tuple[_Spec, _Table, tuple[str, ...]]] = {
        name: (spec, _defaults(settings[name]), ()) for name, spec in _SECTIONS.items()}
    found["entries"] = (_ENTRY, _defaults(Entry), _REQUIRED["entries"])
    found["judges"] = (_JUDGE, _defaults(JudgeSpec), _REQUIRED["judges"])
    return found


def _defaults(cls: type[DataclassInstance]) -> _Table:
    """A dataclass's fields that have defaults, with them."""
    found: _Table = {}
    for f in fields(cls):
        if f.default is not MISSING:
            found[f.name] = f.default
        elif f.default_factory is not MISSING:
            found[f.name] = f.default_factory()
    return found


def _shown(value: Any) -> str:
    """value as an error message shows it: its repr, or, too long to read, what it is and its size (a 10,000-turn
    format is refused in a line, not in 600 KB)."""
    text = repr(value)
    if len(text) <= 200:
        return text
    if isinstance(value, (list, tuple)):
        return f"a list of {len(value)} items"
    if isinstance(value, dict):
        return f"a table of {len(value)} keys"
    if isinstance(value, str):
        return f"a string of {len(value)} characters, starting {value[:40]!r}"
    return text[:200] + "..."


def load_config(workspace: Path) -> Config:
    path = Path(workspace) / CONFIG_NAME
    if not path.is_file():
        raise UserError(f"{path}: no such file (run 'arena init {workspace}' first)")
    check_size(path, "settings file", limits.MAX_CONFIG_BYTES)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"{path}: cannot read: {exc}") from None
    return parse_config(text, path)


def parse_config(text: str, path: Path) -> Config:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"{path.name}: not valid TOML: {exc}") from None
    except RecursionError:  # tomllib recurses per level of nested arrays and inline tables
        raise UserError(f"{path.name}: values nested more than {limits.MAX_DEPTH} levels deep") from None
    lines = _key_lines(text)

    def fail(key: str, problem: str) -> UserError:
        line = _nearest_line(lines, key)
        return UserError(f"{path.name}:{line}: {key}: {problem}" if line else f"{path.name}: {key}: {problem}")

    _check_values(data, fail)

    allowed = set(_SECTIONS) | {"entries", "judges", "formats"}
    for key in data:
        if key not in allowed:
            raise fail(key, f"unknown section (expected one of {', '.join(sorted(allowed))})")

    values = {name: _check_table(data.get(name, {}), spec, name, fail) for name, spec in _SECTIONS.items()}
    arena = ArenaSettings(**values["arena"])
    formats = _formats(data.get("formats", []), fail)
    if not known(arena.format, formats):
        raise fail("arena.format", f"unknown debate format {arena.format!r} (known: "
                                   f"{', '.join(format_names(formats))})")
    llm_values: dict[str, Any] = {k: (float(v) if k in ("timeout_s", "backoff_s") else v)
                                  for k, v in values["llm"].items()}
    llm = LLMSettings(**llm_values)
    search = SearchSettings(**values["search"])
    motions = MotionSettings(**{k: tuple(v) for k, v in values["motions"].items()})

    entries = tuple(
        Entry(**{**item, "strength": float(item.get("strength", 0.0))})
        for item in _check_array(data.get("entries", []), _ENTRY, "entries", fail)
    )
    judges = tuple(
        JudgeSpec(**{"runs": arena.judge_runs, **item, **_implied(item, i, fail)})
        for i, item in enumerate(_check_array(data.get("judges", []), _JUDGE, "judges", fail))
    )
    rating_values: dict[str, Any] = {k: tuple(v) if k == "control" else v for k, v in values["rating"].items()}
    rating = RatingSettings(**rating_values)
    people = PeopleSettings(**{k: float(v) for k, v in values["people"].items()})
    return Config(path, arena, llm, search, motions, entries, judges, lines, rating, formats,
                  SiteSettings(**values["site"]), people)


def _formats(items: Any, fail: _Fail) -> dict[str, Format]:
    """The formats arena.toml declares ([[formats]], each with its [[formats.turns]]), by name."""
    formats = {}
    for i, item in enumerate(_check_array(items, _FORMAT, "formats", fail)):
        where = f"formats[{i}]"
        if item["name"] in BUILTIN:
            raise fail(f"{where}.name", f"{item['name']!r} is a built-in format's name; choose another")
        turns = []
        for k, turn in enumerate(item["turns"]):
            at = f"{where}.turns[{k}]"
            values = _check_table(turn, _TURN, at, fail)
            for key in _REQUIRED["turns"]:
                if key not in values:
                    raise fail(at, f"missing required key '{key}'")
            # Languages counted in characters (arena.domain.formats.CHARACTER_LANGUAGES): 8 per 3 words unless told.
            turns.append(Turn(**{"chars": round(values["words"] * 8 / 3), **values}))
        try:
            name: str = item["name"]  # _FORMAT checked it is a string
            formats[name] = Format(name, item.get("title", name), item.get("description", ""), tuple(turns))
        except ValueError as exc:
            raise fail(f"{where}.turns", str(exc)) from None
    return formats


def check_entry_value(key: str, value: Any, label: str) -> None:
    """Check one [[entries]] value as arena.toml's would be; the UserError names it by label (e.g. '--model')."""
    _check_table({key: value}, {key: _ENTRY[key]}, key, lambda _key, problem: UserError(f"{label}: {problem}"))


def check_judge(table: _Table, judge_runs: int, labels: Mapping[str, str]) -> JudgeSpec:
    """Check one [[judges]] table as arena.toml's are and return its judge; the UserError names the value by
    labels (its key, e.g. 'runs' or 'options.people', or its first part, → e.g. '--runs'; '' → the table)."""
    def fail(key: str, problem: str) -> UserError:
        key = key.removeprefix("judges[0]").lstrip(".")
        return UserError(f"{labels.get(key) or labels.get(key.partition('.')[0]) or labels.get('', key)}: {problem}")

    values = _check_table(table, _JUDGE, "judges[0]", fail)
    return JudgeSpec(**{"runs": judge_runs, **values, **_implied(values, 0, fail)})


def _check_table(table: Any, spec: _Spec, prefix: str, fail: _Fail) -> _Table:
    if not isinstance(table, dict):
        raise fail(prefix, "must be a table")
    out = {}
    for key, value in table.items():
        full = f"{prefix}.{key}"
        if key not in spec:
            raise fail(full, f"unknown key (expected one of {', '.join(spec)})")
        types, (check, wanted) = spec[key]
        # bool is an int in Python; a 'true' where a number belongs is a mistake.
        if not isinstance(value, types) or (isinstance(value, bool) and bool not in _as_tuple(types)):
            raise fail(full, f"expected {_type_name(types)}, got {_shown(value)}")
        verdict = check(value)
        if isinstance(verdict, str):  # a check that can say what is wrong better than 'expected ...'
            raise fail(full, verdict)
        if not verdict:
            raise fail(full, f"expected {wanted}, got {_shown(value)}")
        out[key] = value
    return out


def _check_array(items: Any, spec: _Spec, name: str, fail: _Fail) -> list[_Table]:
    if not isinstance(items, list):
        raise fail(name, f"must be an array of tables ([[{name}]])")
    seen: dict[str, int] = {}
    out = []
    for i, item in enumerate(items):
        prefix = f"{name}[{i}]"
        values = _check_table(item, spec, prefix, fail)
        for key in _REQUIRED[name]:
            if key not in values:
                raise fail(prefix, f"missing required key '{key}'")
        if values["name"] in seen:
            raise fail(f"{prefix}.name", f"repeated name {values['name']!r} (first in {name}[{seen[values['name']]}])")
        seen[values["name"]] = i
        out.append(values)
    return out


def _check_values(data: _Table, fail: _Fail) -> None:
    """Every number of the file finite, and no value nested past arena.base.limits.MAX_DEPTH, wherever it stands (a
    kind's params and options too): so that no check has to think of NaN, which fails every comparison, or of
    infinity, which passes every lower bound."""
    stack = [(key, value, 1) for key, value in reversed(data.items())]
    while stack:
        key, value, level = stack.pop()
        named = re.sub(r"(\[\d+\])+$", "", key)  # the key as written, whose line the message gives
        if isinstance(value, float) and not math.isfinite(value):
            raise fail(named, f"expected a finite number, got {_shown(value)}")
        if level > limits.MAX_DEPTH:
            raise fail(named, f"nested more than {limits.MAX_DEPTH} levels deep")
        if isinstance(value, dict):
            stack.extend((f"{key}.{k}", v, level + 1) for k, v in reversed(value.items()))
        elif isinstance(value, list):
            stack.extend((f"{key}[{i}]", v, level + 1) for i, v in reversed(list(enumerate(value))))


def _as_tuple(types: type | tuple[type, ...]) -> tuple[type, ...]:
    return types if isinstance(types, tuple) else (types,)


def _type_name(types: type | tuple[type, ...]) -> str:
    names = {str: "a string", int: "a whole number", float: "a number", bool: "true or false",
             list: "an array", dict: "a table"}
    return " or ".join(dict.fromkeys(names[t] for t in _as_tuple(types)))


_HEADER = re.compile(r"^\s*(\[\[?)\s*([A-Za-z0-9_.\- ]+?)\s*\]\]?\s*(#.*)?$")
_ASSIGN = re.compile(r"^\s*([A-Za-z0-9_\-.]+)\s*=")


def _key_lines(text: str) -> dict[str, int]:
    """Map dotted keys ('llm.retries', 'entries[1].model') to their line, by a light scan of the file.

    tomllib gives no positions, and messages that name the line save users a search.
    """
    lines: dict[str, int] = {}
    counts: dict[str, int] = {}
    table = ""
    for number, line in enumerate(text.splitlines(), start=1):
        header = _HEADER.match(line)
        if header:
            brackets, name = header.group(1), header.group(2).replace(" ", "")
            if brackets == "[[":
                counts[name] = counts.get(name, -1) + 1
                table = f"{name}[{counts[name]}]"
            else:
                parent, _, child = name.rpartition(".")
                table = f"{parent}[{counts[parent]}].{child}" if parent in counts else name
            lines.setdefault(table, number)
            continue
        assign = _ASSIGN.match(line)
        if assign:
            key = f"{table}.{assign.group(1)}" if table else assign.group(1)
            lines.setdefault(key, number)
    return lines


def _nearest_line(lines: dict[str, int], key: str) -> int | None:
    """The line of key, else of its closest enclosing table."""
    while key:
        if key in lines:
            return lines[key]
        key = key.rpartition(".")[0] if "." in key else ""
    return None
