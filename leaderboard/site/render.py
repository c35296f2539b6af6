"""The static site: jinja2 templates rendered to self-contained HTML files (no server, no CDN).

The renderer is handed plain records and rating dicts (a SiteData, leaderboard.site.data); it never opens the store
(the speeches of the matches it renders come through the caller's loader). Autoescaping is on for every template,
so model- and user-supplied text renders as text; file names made from ids are sanitised, and links from
models must be http(s). The pages are in the content's language (SiteData.language): their lang, and their labels
from leaderboard.site.labels' catalogue, resolved once per publish. What the pages show beyond SiteData itself is
composed in leaderboard.site.pages.

Publishing is incremental: a match page is keyed by a digest of all it shows, and the site's manifest
(leaderboard.site.published) records each file's key and a digest of its bytes; a page whose key is unchanged is linked
from the site it replaces rather than rendered and written again. A match page shows no time for that reason.
"""
from __future__ import annotations

import csv
import functools
import hashlib
import io
import json
import os
import re
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Mapping, Sequence

import jinja2

from markupsafe import Markup, escape

from leaderboard import control
from leaderboard.elo import PRIOR_SD
from leaderboard.results import COLUMNS
from leaderboard.site import labels
from leaderboard.site import pages
from leaderboard.site import published
from leaderboard.site import svg
from leaderboard.site.data import Board, JudgeInfo, MatchRecord, SiteData, SiteEntry
from leaderboard.site.pages import VIEWS, judge_label
from leaderboard.site.published import page_name

# The names other modules and tests import from here, some of them from where they moved: SiteData to
# leaderboard.site.data, judge_label and VIEWS to leaderboard.site.pages.
__all__ = ["INDEX_HEATMAP_MAX", "RENDER_BATCH", "TEMPLATES", "VIEWS", "Frame", "SiteData", "judge_label", "list_page",
           "page_name", "publish", "safe_url"]

TEMPLATES = Path(__file__).parent / "templates"
INDEX_HEATMAP_MAX = 30  # beyond this many entries the heatmap lives on its own page, keeping the index small
RENDER_BATCH = 500  # match pages rendered per load of their speeches: memory bounded by this, not by the site


@dataclass(frozen=True)
class Frame:
    """What a match page shows of the site around its match (title, banners, footer): with the match's own
    record, all that the page's key covers. No time: an unchanged match keeps its page."""

    title: str
    judge: str | None
    simulated: bool
    judges: Sequence[JudgeInfo]
    language: str = "en"
    generated_at: None = None


def safe_url(url: str) -> str:
    """Only http(s) links survive; a javascript: or data: URL from a model becomes inert."""
    return url if re.match(r"^https?://", url or "", re.IGNORECASE) else "#"


def list_page(number: int) -> str:
    """The file of the matches list's page number (from 1): matches.html, then matches-2.html, ..."""
    return "matches.html" if number == 1 else f"matches-{number}.html"


def _environment(language: str = "en") -> jinja2.Environment:
    # auto_reload off: templates do not change during a publish, and checking costs a stat per page
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True, auto_reload=False,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters["match_page"] = lambda key: page_name("matches", key)
    env.filters["entry_page"] = lambda key: page_name("entries", key)
    env.filters["motion_page"] = lambda key: page_name("motions", key)
    env.filters["judge_page"] = lambda key: page_name("judges", key)
    env.filters["figure"] = lambda v: "—" if v is None else f"{v:.2f}"
    env.filters["safe_url"] = safe_url
    env.filters["breakable"] = _breakable
    env.filters["when"] = when
    env.filters["money"] = lambda v: "—" if v is None else f"${v:,.4f}"
    env.globals["prior_sd"] = PRIOR_SD  # the weak prior's spread, which the methodology states
    env.globals |= {"loose": control.loose, "loose_width": f"{control.LOOSE:,.0f}"}  # a coefficient not estimated
    # The labels in the content's language, the catalogue resolved once per publish (leaderboard.site.labels)
    # Filters, not globals: jinja calls a filter directly, a global through its context, which costs per label.
    env.filters |= {"t": labels.translator(language), "word": labels.words(language), "code": _code}
    env.globals |= {"lang": language, "link": _link}
    return env


def _code(text: str) -> Markup:
    """Text as code, escaped, for a translated sentence to carry as one of its values."""
    return Markup("<code>%s</code>") % text


def when(iso: str) -> str:
    """A time as every page shows it, to the second in UTC: 2026-12-02 02:12:05 UTC (an ISO time without a zone
    is taken as UTC's; text that is no ISO time, as it is)."""
    try:
        moment = datetime.fromisoformat(iso)
    except ValueError:
        return iso
    return (moment.astimezone(timezone.utc) if moment.tzinfo else moment).strftime("%Y-%m-%d %H:%M:%S UTC")


def _breakable(text: str) -> Markup:
    """A model's name, escaped, that may wrap after each slash of its path (<wbr>) rather than mid-word."""
    return Markup(str(escape(text)).replace("/", "/<wbr>"))


def _link(href: str, text: str, download: bool = False) -> Markup:
    """A link for a translated sentence to carry as one of its values, escaped like any."""
    return Markup('<a href="{}"{}>{}</a>').format(href, Markup(" download") if download else "", text)


def publish(out: Path, data: SiteData, *, previous: Path | None = None, state: str = "") -> Path:
    """Write the whole site under out; return the path of its index. Match pages whose key the manifest of the
    site at previous (the one this replaces) records, unchanged there since, are hard links to its files; state
    (the caller's digest of what the site is made from) goes into the manifest, for published.unchanged."""
    out = Path(out)
    for folder in ("matches", "entries", "motions", "judges"):
        (out / folder).mkdir(parents=True, exist_ok=True)
    env = _environment(data.language)
    t = labels.plain(data.language)
    entries: dict[str, SiteEntry] = {e["name"]: e for e in data.entries}
    for name in pages.unlisted(data, entries):  # played, or rated, but no longer configured: a page all the same
        entries[name] = pages.removed_entry(name)
    motions = pages.motions(data.matches)
    scores = {m.id: pages.score(m, data) for m in data.matches}  # shown on four kinds of page
    judges = pages.site_judges(data, t)
    people = {j["name"]: j.get("people") or [] for j in data.judges}
    # The templates' variables: any values jinja renders.
    common: dict[str, Any] = {
        "data": data, "entries": entries, "score": lambda m: scores[m.id],
        "stage_title": lambda m, stage: pages.stage_title(data, m, stage),
        "judged": lambda m: pages.judged(m, data, people), "judges": judges,
        "unknown_cost": {name for name, e in entries.items() if e.get("cost_unknown")},
        "simulation": lambda matches, entry=None: pages.simulation(matches, data, entry),
        # The caller may know the site simulated with no part of a match to show for it: said all the same.
        "site_simulation": (pages.simulation(data.matches, data) or {"total": 0, "rows": [], "unknown": 0})
        if data.simulated else None}
    keys: dict[str, str] = {}  # every file written → its key ("" for a page rendered every time)

    def write(name: str, template: str, **extra: Any) -> None:
        root = "../" * name.count("/")
        _write(out, name, env.get_template(template).render(root=root, **common, **extra))
        keys[name] = ""

    overall = pages.overall_ratings(data.boards)
    heatmap = pages.heatmap(data.matrices, [r["entry"] for r in overall], t)
    write("index.html", "index.html.j2", boards=data.boards, views=pages.views(data.boards),
          controlled=data.controlled, ci_svg=svg.ci_plot(overall, t=t),
          heatmap_svg=heatmap if len(overall) <= INDEX_HEATMAP_MAX else "")
    write("matrix.html", "matrix.html.j2", heatmap_svg=heatmap)
    by_entry = pages.by_entry(data.matches)
    players = sorted(by_entry)  # the list's filter: each entry that played links to its page's list of its matches
    lists = [list_page(k + 1) for k in range(max(1, -(-len(data.matches) // data.matches_per_page)))]
    for k, name in enumerate(lists):
        first = k * data.matches_per_page
        write(name, "matches.html.j2", rows=data.matches[first:first + data.matches_per_page], first=first,
              page=k + 1, pages=lists, players=players)
    write("methodology.html", "methodology.html.j2")
    write("consistency.html", "consistency.html.j2", figures=pages.consistency(data.consistency, data, judges, t))
    write("bias.html", "bias.html.j2", figures=pages.bias(data, judges, t))
    write("history.html", "history.html.j2", history_svg=svg.history_plot(data.history, t=t),
          legend=pages.legend(data.history))
    for judge in judges:  # the boards of each judge with rated matches; match pages are not rendered per judge
        boards = data.judge_boards[judge["name"]]
        write(judge["page"], "judge.html.j2", judge=judge, shown_judge=judge["name"], boards=boards,
              views=pages.views(boards), controlled=data.judge_controlled.get(judge["name"], {}),
              ci_svg=svg.ci_plot(boards["overall"]["ratings"], t=t), heatmap_svg="",
              robustness=pages.robustness(data.consistency, judge["name"]))
    # A match page is handed only what its key covers: the frame, and what the match itself shows.
    frame = Frame(data.title, data.judge, data.simulated, data.judges, data.language)
    shown = {"data": frame, **{k: common[k] for k in ("score", "stage_title", "judged", "simulation")}}
    keys |= _match_pages(out, data, env, shown, previous)
    rated = {r["entry"]: r for r in overall}
    for name, entry in entries.items():
        write(page_name("entries", name), "entry.html.j2", entry=entry, played=by_entry.get(name, []),
              rating=rated.get(name))
    for motion_id, (motion, played) in motions.items():
        write(page_name("motions", motion_id), "motion.html.j2", motion=motion, played=played,
              balance=pages.balance(played, data))
    keys |= dict.fromkeys(_downloads(out, data), "")
    published.write(out, keys, state)
    return out / "index.html"


def _match_pages(out: Path, data: SiteData, env: jinja2.Environment, context: Mapping[str, Any],
                 previous: Path | None) -> dict[str, str]:
    """Write each match's page, or link it from the site at previous where that site's manifest has its key and
    the file is as it was written; each page's key. Speeches are loaded for the pages rendered, a batch at a time.
    context: the template's variables besides the match (its frame is data)."""
    base = hashlib.blake2b(_renderer_digest().encode() + repr(context["data"]).encode(), digest_size=16).digest()
    manifest = published.read(previous) if previous is not None else None
    keys: dict[str, str] = {}
    fresh: list[MatchRecord] = []
    for match in data.matches:
        name = page_name("matches", match.id)
        keys[name] = _match_key(base, match, data)
        record = published.seen(manifest, name) if manifest else None
        # a record: there is a manifest, so a previous site
        if not (record and previous is not None and record[0] == keys[name]
                and published.link(previous / name, out / name, record)):
            fresh.append(match)
    template = env.get_template("match.html.j2")
    for k in range(0, len(fresh), RENDER_BATCH):
        batch = fresh[k:k + RENDER_BATCH]
        speeches = data.transcripts([m.id for m in batch]) if data.transcripts else {}
        for match in batch:
            if data.transcripts:
                match = replace(match, speeches=tuple(speeches.get(match.id, ())))
            _write(out, page_name("matches", match.id), template.render(root="../", match=match, **context))
    return keys


def _match_key(base: bytes, match: MatchRecord, data: SiteData) -> str:
    """A digest of all a match's page shows besides the frame (base): its record (speeches, or the stamp of their
    storing where the record comes without them), its judges' scores and its format's stage titles."""
    shown = (match, data.stamps.get(match.id, "") if data.transcripts else "", data.scores.get(match.id),
             data.stage_titles.get(match.format), data.simulated_parts.get(match.id))
    return hashlib.blake2b(base + repr(shown).encode(), digest_size=16).hexdigest()


@functools.lru_cache(maxsize=None)
def _renderer_digest() -> str:
    """A digest of this module, its templates, labels and the figures of its pages (pages): a new renderer renders
    every page anew."""
    digest = hashlib.blake2b(Path(__file__).read_bytes() + Path(labels.__file__).read_bytes()
                             + Path(pages.__file__).read_bytes(), digest_size=16)
    for path in sorted(TEMPLATES.iterdir()):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def _write(out: Path, name: str, text: str) -> None:
    """Write a file of the site (a fresh one: the build's folder starts empty), in one write: a third of the time
    a text file's buffered writes take."""
    with open(os.path.join(out, name), "wb") as handle:
        handle.write(text.encode("utf-8"))


def _downloads(out: Path, data: SiteData) -> list[str]:
    """Write the downloads; their names."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=COLUMNS, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    writer.writerows({**row, "simulated": _flag(row.get("simulated"))} for row in data.results)
    (out / "results.csv").write_text(buffer.getvalue(), encoding="utf-8")

    # Each rating row says whether its entry is simulated (any of its speeches or searches came from the simulator)
    simulated = {e["name"] for e in data.entries if e.get("simulated")}
    views = {view: _marked(board, simulated) for view, board in data.boards.items()}
    columns = ["view", "rank_ub", "entry", "rating", "ci_low", "ci_high", "matches", "wins", "ties", "losses",
               "provisional", "simulated"]
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=columns, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    for view, board in data.boards.items():
        writer.writerows({**row, "view": view, "simulated": _flag(row["entry"] in simulated)}
                         for row in board["ratings"])
    (out / "leaderboard.csv").write_text(buffer.getvalue(), encoding="utf-8")
    payload: dict[str, Any]
    payload = {"generated_at": data.generated_at, "judge": data.judge, "simulated": data.simulated,
               "views": views}
    if data.controlled:  # the same views controlled for style (leaderboard.ratings.rate's control)
        payload["controlled"] = {
            "control": list(data.control),
            "views": {view: _marked(board, simulated) for view, board in data.controlled.items()}}
    (out / "leaderboard.json").write_text(json.dumps(payload, indent=1), encoding="utf-8")
    (out / "history.json").write_text(json.dumps(data.history, indent=1), encoding="utf-8")
    return ["results.csv", "leaderboard.csv", "leaderboard.json", "history.json"]


def _marked(board: Board, simulated: set[str]) -> dict[str, object]:
    """A board as the downloads give it: each rating row says whether its entry is simulated."""
    return {**board, "ratings": [{**row, "simulated": row["entry"] in simulated} for row in board["ratings"]]}


def _flag(value: object) -> str:
    """A bool as the CSV downloads write it: true or false."""
    return "true" if value else "false"
