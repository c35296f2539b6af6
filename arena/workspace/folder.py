"""A workspace: a folder holding arena.toml (settings and the registry) and arena.db (history)."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from arena.workspace.config import CONFIG_NAME, Config, parse_config
from arena.base.errors import UserError, plural
from arena.base.files import create_new
from arena.domain.formats import Format, get_format
from arena.domain.records import Entry, JudgeSpec, Motion
from arena.base.registry import Registry
from arena.store import DB_NAME, Store

TEMPLATE = '''\
# Debate Arena workspace. Keys and meanings: docs/reference/config.md ("arena.toml").
# API keys never go here: they come from the environment (OPENAI_API_KEY, TAVILY_API_KEY, ...).

[arena]
language = "en"            # language of speeches and prompts ("en", "zh", ...)
seed = 0                   # seeds scheduling and the offline simulator
judge_runs = 3             # default R: runs per judge per match
forfeits = true            # a debater whose model cannot answer usably forfeits (false: the match fails)
format = "agent4debate"    # debate format of new matches: "agent4debate" (3 stages) | "lechmazur" (10 turns) | plug-in
speech_checks = true       # a speech that is no debate speech (placeholder, echo, loop, ...) forfeits its side
min_speech_share = 0.25    # too-short: a speech under this share of its turn's budget

[llm]
max_concurrency = 16       # concurrent LLM calls per server (its api_base, or the provider)
retries = 4                # retries on rate limits, 5xx and timeouts (exponential backoff with jitter)
timeout_s = 120
cache = true               # reuse identical LLM and search responses: a rerun never pays twice

[search]
provider = "tavily"        # "tavily" | "offline"
api_base_url = ""          # optional, e.g. a proxy or a local server
max_results = 5

[motions]
sets = ["builtin:en"]      # built-in sets and/or "file:path.yaml"

[rating]
side = "fit"               # "fit": a Pro advantage fitted with the ratings; "ignore": the side-blind fit
control = []               # style features fitted with the ratings, e.g. ["length"]: length | citations | markdown

[site]                     # arena publish
intervals = "bootstrap"    # the overall ratings' intervals: "bootstrap" | "sandwich"
view_intervals = "sandwich"  # the category and dimension tabs' intervals
replicates = 1000          # bootstrap replicates
matches_per_page = 500     # rows per page of the matches list

[people]                   # people who debate on the web: human entries with [entries.params] via = "web"
turn_deadline_h = 72       # hours a person has for each speech; past them, that side forfeits

# One [[entries]] table per registered debater entry (arena entry add), for example:
# [[entries]]
# name = "direct-gpt-4o"
# debater = "direct"       # a debater kind: {debaters}
# model = "openai/gpt-4o"  # any litellm model string; "offline/<name>" is the simulator
# api_base = ""            # optional, e.g. "http://127.0.0.1:8000/v1" for a local server
# strength = 0.0           # offline models only: planted strength (logit scale)
# family = "openai"        # who made the model (default: derived from model); no jury seats a model of it
# [entries.params]         # passed to the debater kind (sampling, caps, ...)
# temperature = 0.2
# top_p = 0.75

# One [[judges]] table per judge (arena judge add), for example:
# [[judges]]
# name = "single-mini"
# kind = "single"          # a judge kind: {judges}
# model = "openai/gpt-4o-mini"
# runs = 3
# [judges.options]         # kind-specific options
# swap_sides = false       # default true: odd runs read the transcript with PRO and CON exchanged
# guard = true             # default false: a rule that speeches are never addressed to the judge
#
# People judging through private ballot links (arena ballots issue, arena serve): no model, R = people.
# [[judges]]
# name = "experts"
# kind = "human"
# [judges.options]
# people = ["ann", "bo", "cy"]
#
# A jury: per match, `size` models of its pool, none of a debater's family, each one run of an inner judge kind.
# [[judges]]
# name = "jury"
# kind = "jury"
# [judges.options]
# pool = ["openai/gpt-4o-mini", "gemini/gemini-2.0-flash", "mistral/mistral-small-latest", "deepseek/deepseek-chat"]
# size = 2                 # R: one run per model seated
# inner = "single"         # the judge kind each panelist runs; its options go here too
'''


def template(debaters: Iterable[str], judges: Iterable[str]) -> str:
    """TEMPLATE naming the debater and judge kinds installed (the registries' names), so it cannot fall behind them;
    'arena kinds' describes each."""
    return TEMPLATE.replace("{debaters}", " | ".join(debaters)).replace("{judges}", " | ".join(judges))


@dataclass
class Workspace:
    """An open workspace: its settings, its database, and what opening built from the settings.

    motions: each motion of the configured sets by id, with the spec of the set it comes from.
    debaters, judges: the kind object of each entry and each judge, by name, built once at opening
    (which is also what checks their params) and reused for every match.
    """

    path: Path
    config: Config
    store: Store
    motions: Mapping[str, tuple[Motion, str]] = field(default_factory=dict)
    debaters: Mapping[str, Any] = field(default_factory=dict)
    judges: Mapping[str, Any] = field(default_factory=dict)

    def close(self) -> None:
        self.store.close()


def build_kinds(config: Config, debaters: Registry, judges: Registry) -> tuple[dict[str, Any], dict[str, Any]]:
    """The kind object of every entry and judge, by name; a UserError names the key of an unknown kind or
    of params the kind refuses."""
    for registry in (debaters, judges):
        registry.names()  # a plug-in that takes a built-in's name is refused at once, not when first named

    def build(registry: Registry, specs: Sequence[Entry | JudgeSpec], table: str, kind_key: str,
              options_key: str) -> dict[str, Any]:
        built: dict[str, Any]
        classes: dict[str, Any]
        built, classes = {}, {}  # each kind looked up once: a lookup reads every installed package's entry points
        for i, spec in enumerate(specs):
            kind = getattr(spec, kind_key)
            if kind not in classes and not registry.has(kind):
                raise UserError(f"{config.where(f'{table}[{i}].{kind_key}')}: unknown {registry.family} kind "
                                f"{kind!r} (known: {', '.join(registry.names())})")
            try:
                classes[kind] = classes.get(kind) or registry.get(kind)
                built[spec.name] = classes[kind](spec)
            except UserError as exc:
                raise UserError(f"{config.where(f'{table}[{i}].{options_key}')}: {exc}") from None
        return built

    built = build(debaters, config.entries, "entries", "debater", "params")
    fmt = get_format(config.arena.format, config.formats)
    for entry in config.entries:
        if not entry.retired:  # a retired entry is scheduled no more
            try:
                check_format(entry, built[entry.name], fmt)
            except UserError as exc:
                raise UserError(f"{config.where('arena.format')}: {exc}; retire the entry or choose another "
                                "format") from None
    return built, build(judges, config.judges, "judges", "kind", "options")


def check_format(entry: Entry, debater: Any, fmt: Format) -> None:
    """Refuse a format the entry's debater kind cannot play (its check_format): UserError naming the entry."""
    check = getattr(debater, "check_format", None)
    if check is not None:
        try:
            check(fmt)
        except UserError as exc:
            raise UserError(f"entry {entry.name!r} ({entry.debater} debater) {exc}") from None


def open_store(path: Path, config: Config,
               motions: Iterable[Motion] | Callable[[Store], Iterable[Motion]]) -> Store:
    """The workspace's database, checked against arena.toml and brought up to date with it (entries, motions).

    motions: those to store, or a function of the opened database giving them, called before anything is
    written (so it may read the database, and refuse). Writes only what changed, and a refused open leaves
    the file as it was.
    """
    store = Store(Path(path) / DB_NAME)
    try:
        if callable(motions):
            motions = motions(store)
        _check_played_unchanged(config, store)
        _check_people_unchanged(config, store)
        store.sync_entries(config.entries)
        store.add_motions(motions)
    except BaseException:
        store.close()  # checkpoints and removes the WAL, so a refused open leaves no trace
        raise
    return store


_FIXED = ("debater", "model", "api_base", "strength", "params")  # not `retired`: retiring is always allowed


def _check_played_unchanged(config: Config, store: Store) -> None:
    """An entry that has played is what it played as: its ratings would otherwise mix two configurations."""
    played = store.played_entries()
    for i, entry in enumerate(config.entries):
        recorded = played.get(entry.name)
        if recorded is None:
            continue
        changes = [f"{key} {getattr(recorded, key)!r} → {getattr(entry, key)!r}" for key in _FIXED
                   if getattr(recorded, key) != getattr(entry, key)]
        if changes:
            matches = store.match_counts().get(entry.name, 0)
            raise UserError(f"{config.where(f'entries[{i}]')}: entry {entry.name!r} has played "
                            f"{plural(matches, 'match')}, so its configuration is fixed, but it changed: "
                            f"{'; '.join(changes)}. Put the old configuration back and register the new one under "
                            f"a new name instead (arena entry add NEW-NAME ...).")


def _check_people_unchanged(config: Config, store: Store) -> None:
    """A judge of people stores each person's ballots under their place in `people`: that place is theirs for
    good, or one person's ballots would pass for another's. People may be added at the end."""
    recorded = store.ballot_people()
    for i, judge in enumerate(config.judges):
        for run, person in sorted(recorded.get(judge.name, {}).items()):
            now_there = judge.people[run] if run < len(judge.people) else None
            if now_there != person:
                raise UserError(f"{config.where(f'judges[{i}].options.people')}: {person!r} has ballots as person "
                                f"{run + 1} of judge {judge.name!r}, so must stay in place "
                                f"{run + 1} (found {now_there!r}); add new people at the end of the list")


def init_workspace(path: Path, config_text: str = TEMPLATE,
                   load_motions: Callable[[Config], Iterable[Motion]] | None = None) -> Path:
    """Create path/arena.toml and path/arena.db; refuse to overwrite an existing workspace.

    arena.db is left as opening the workspace leaves it (open_store: the entries and the motions of the
    configured sets stored), so the first command after init writes nothing it would not write on any later
    run, and one refused right after init leaves the file byte-identical. load_motions(config) gives those
    motions: the app layer's, since the kernel knows no motion library; it runs before anything is written,
    so sets that do not load refuse init. Without it no motions are stored until the first open.
    """
    path = Path(path)
    config_path = path / CONFIG_NAME
    if config_path.exists():
        raise UserError(f"{config_path}: already exists; this folder is a workspace already")
    config = parse_config(config_text, config_path)  # a text that does not parse fails before writing
    motions = list(load_motions(config)) if load_motions is not None else []
    path.mkdir(parents=True, exist_ok=True)
    db_path = path / DB_NAME
    new_db = not db_path.exists()
    try:
        store = open_store(path, config, motions)  # refused (a database already there, of other entries): no toml
    except BaseException:
        # SQLite creates the file before it writes a page: an init that failed there (a full disk) leaves an empty
        # arena.db, which every later open refuses as a lost history. It was never a workspace's: take it away.
        if new_db and db_path.exists() and db_path.stat().st_size == 0:
            db_path.unlink()
        raise
    try:
        # Never half a file (a half-written arena.toml blocks a retry), and never over one another init just wrote.
        if not create_new(config_path, config_text.encode("utf-8")):
            raise UserError(f"{config_path}: already exists; this folder is a workspace already")
    finally:
        store.close()  # checkpoints and removes the WAL: arena.db alone holds it all
    return config_path
