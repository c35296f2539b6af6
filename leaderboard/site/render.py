"""The static site: jinja2 templates rendered to self-contained HTML files (no server, no CDN).

The renderer is handed plain records and rating dicts (a SiteData); it never opens the store (the
speeches of the matches it renders come through the caller's loader). Autoescaping is on for every template,
so model- and user-supplied text renders as text; file names made from ids are sanitised, and links from
models must be http(s). The pages are in the content's language (SiteData.language): their lang, and their labels
from leaderboard.site.labels' catalogue, resolved once per publish.

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
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence, cast

import jinja2

from markupsafe import Markup

from leaderboard.elo import PRIOR_SD
from leaderboard.results import COLUMNS, DIMENSIONS, dimension_order
from leaderboard.site import labels
from leaderboard.site import published
from leaderboard.site import svg
from leaderboard.site.published import page_name

TEMPLATES = Path(__file__).parent / "templates"
VIEWS = ("overall", "fact", "value", "policy", *DIMENSIONS)  # tab order; custom dimensions' tabs follow
INDEX_HEATMAP_MAX = 30  # beyond this many entries the heatmap lives on its own page, keeping the index small
RENDER_BATCH = 500  # match pages rendered per load of their speeches: memory bounded by this, not by the site


@dataclass(frozen=True)
class SiteData:
    """Everything the site shows, gathered by the caller."""

    title: str
    generated_at: str
    judge: str | None  # the judge whose verdicts the ratings come from
    simulated: bool
    boards: dict[str, dict]  # view (overall, a category, a dimension) → ratings as leaderboard.ratings.rate gives them
    matrices: dict  # leaderboard.ratings.win_matrices of the overall results
    entries: list[dict]  # name, debater, model, simulated, retired, params, matches, cost, cost_unknown, roles
    matches: Sequence[Any]  # arena.domain.records.Match
    results: list[dict] = field(default_factory=list)  # rows of leaderboard.results.COLUMNS
    # name, kind, model, runs, options[, people, simulated, imported (its verdicts came from elsewhere), judged (it
    # has verdicts on a match shown)]
    judges: list[dict] = field(default_factory=list)
    # match id → judge → (PRO, CON) points over that judge's runs that did not fail, as the caller scores them
    scores: dict[str, dict[str, tuple[float, float]]] = field(default_factory=dict)
    # judge → view → ratings, for every judge with rated matches, each on a page of its own (judges/<name>.html)
    judge_boards: dict[str, dict[str, dict]] = field(default_factory=dict)
    # `arena stats judges`: "pairs" of judges, and for judges of people "people" pairs and "people_vs_judges"
    consistency: dict = field(default_factory=dict)
    # The rating judge's overall fit after every N matches in the order they finished (leaderboard.history)
    history: list[dict] = field(default_factory=list)
    # Held back while people judge blind: done matches awaiting ballots, and matches still to play; neither is in
    # any field above, the site only says how many. withdrawn: their pages (as page_name gives them), which an
    # earlier publish may have written and the publisher must not keep.
    awaiting: int = 0
    unplayed: int = 0
    withdrawn: tuple[str, ...] = ()
    # Debate format (a match's .format) → stage → title; a stage not listed is shown by its key
    stage_titles: dict[str, dict[str, str]] = field(default_factory=dict)
    # The caller's loader of speeches, in speaking order, by match id, for matches whose records come without them
    # (None: each match carries its speeches); then stamps says, per match, when its speeches were stored.
    transcripts: Callable[[Sequence[str]], Mapping[str, tuple]] | None = None
    stamps: Mapping[str, str] = field(default_factory=dict)
    matches_per_page: int = 500  # rows per page of the matches list: matches.html, then matches-2.html, ...
    language: str = "en"  # the content's language (the workspace's [arena] language): the pages' lang and labels
    # The same boards controlled for style (leaderboard.ratings.rate's control): the features they are net of,
    # view → ratings of the rating judge (the index), judge → view → ratings (its page); each board has a toggle
    # between raw and controlled, the controlled shown first when controlled_first.
    control: tuple[str, ...] = ()
    controlled: dict[str, dict] = field(default_factory=dict)
    judge_controlled: dict[str, dict[str, dict]] = field(default_factory=dict)
    controlled_first: bool = False
    # `arena stats bias`: a row per judge, and per panelist its verdicts name
    bias: list[dict] = field(default_factory=list)


@dataclass(frozen=True)
class Frame:
    """What a match page shows of the site around its match (title, banners, footer): with the match's own
    record, all that the page's key covers. No time: an unchanged match keeps its page."""

    title: str
    judge: str | None
    simulated: bool
    judges: list[dict]
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
    env.filters["money"] = lambda v: "—" if v is None else f"${v:,.4f}"
    env.globals["prior_sd"] = PRIOR_SD  # the weak prior's spread, which the methodology states
    # The labels in the content's language, the catalogue resolved once per publish (leaderboard.site.labels)
    # Filters, not globals: jinja calls a filter directly, a global through its context, which costs per label.
    env.filters |= {"t": labels.translator(language), "word": labels.words(language), "code": _code}
    env.globals |= {"lang": language, "link": _link}
    return env


def _code(text: str) -> Markup:
    """Text as code, escaped, for a translated sentence to carry as one of its values."""
    return Markup("<code>%s</code>") % text


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
    entries = {e["name"]: e for e in data.entries}
    for name in _unlisted(data, entries):  # played, or rated, but no longer configured: a page all the same
        entries[name] = {"name": name, "debater": "", "model": "", "simulated": False, "retired": False,
                         "removed": True, "params": {}, "matches": 0, "cost": None, "cost_per_match": None,
                         "cost_unknown": False, "roles": {}}
    motions = _motions(data.matches)
    scores = {m.id: _score(m, data) for m in data.matches}  # shown on four kinds of page
    judges = _judges(data, t)
    people = {j["name"]: j.get("people") or [] for j in data.judges}
    common = {"data": data, "entries": entries, "score": lambda m: scores[m.id],
              "stage_title": lambda m, stage: _stage_title(data, m, stage),
              "judged": lambda m: _judged(m, data, people), "judges": judges,
              "unknown_cost": {name for name, e in entries.items() if e.get("cost_unknown")}}
    keys: dict[str, str] = {}  # every file written → its key ("" for a page rendered every time)

    def write(name: str, template: str, **extra) -> None:
        root = "../" * name.count("/")
        _write(out, name, env.get_template(template).render(root=root, **common, **extra))
        keys[name] = ""

    overall = data.boards.get("overall", {"ratings": [], "meta": {}})
    heatmap = _heatmap(data.matrices, [r["entry"] for r in overall["ratings"]], t)
    write("index.html", "index.html.j2", boards=data.boards, views=_views(data.boards), controlled=data.controlled,
          ci_svg=svg.ci_plot(overall["ratings"], t=t),
          heatmap_svg=heatmap if len(overall["ratings"]) <= INDEX_HEATMAP_MAX else "")
    write("matrix.html", "matrix.html.j2", heatmap_svg=heatmap)
    by_entry = _by_entry(data.matches)
    players = sorted(by_entry)  # the list's filter: each entry that played links to its page's list of its matches
    pages = [list_page(k + 1) for k in range(max(1, -(-len(data.matches) // data.matches_per_page)))]
    for k, name in enumerate(pages):
        first = k * data.matches_per_page
        write(name, "matches.html.j2", rows=data.matches[first:first + data.matches_per_page], first=first,
              page=k + 1, pages=pages, players=players)
    write("methodology.html", "methodology.html.j2")
    write("consistency.html", "consistency.html.j2", figures=_consistency(data.consistency, data, judges, t))
    write("bias.html", "bias.html.j2", figures=_bias(data, judges, t))
    write("history.html", "history.html.j2", history_svg=svg.history_plot(data.history, t=t),
          legend=_legend(data.history))
    for judge in judges:  # the boards of each judge with rated matches; match pages are not rendered per judge
        boards = data.judge_boards[judge["name"]]
        write(judge["page"], "judge.html.j2", judge=judge, shown_judge=judge["name"], boards=boards,
              views=_views(boards), controlled=data.judge_controlled.get(judge["name"], {}), ci_svg=svg.ci_plot(boards["overall"]["ratings"], t=t), heatmap_svg="")
    # A match page is handed only what its key covers: the frame, and what the match itself shows.
    frame = Frame(data.title, data.judge, data.simulated, data.judges, data.language)
    shown = {"data": frame, **{k: common[k] for k in ("score", "stage_title", "judged")}}
    keys |= _match_pages(out, data, env, shown, previous)
    rated = {r["entry"]: r for r in overall["ratings"]}
    for name, entry in entries.items():
        write(page_name("entries", name), "entry.html.j2", entry=entry, played=by_entry.get(name, []),
              rating=rated.get(name))
    for motion_id, (motion, played) in motions.items():
        write(page_name("motions", motion_id), "motion.html.j2", motion=motion, played=played,
              balance=_balance(played, data))
    keys |= dict.fromkeys(_downloads(out, data), "")
    published.write(out, keys, state)
    return out / "index.html"


def _match_pages(out: Path, data: SiteData, env: jinja2.Environment, context: dict,
                 previous: Path | None) -> dict[str, str]:
    """Write each match's page, or link it from the site at previous where that site's manifest has its key and
    the file is as it was written; each page's key. Speeches are loaded for the pages rendered, a batch at a time."""
    base = hashlib.blake2b(_renderer_digest().encode() + repr(context["data"]).encode(), digest_size=16).digest()
    manifest = published.read(previous) if previous is not None else None
    keys, fresh = {}, []
    for match in data.matches:
        name = page_name("matches", match.id)
        keys[name] = _match_key(base, match, data)
        record = published.seen(manifest, name) if manifest else None
        # a record: there is a manifest, so a previous site
        if not (record and record[0] == keys[name]
                and published.link(cast(Path, previous) / name, out / name, record)):
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


def _match_key(base: bytes, match, data: SiteData) -> str:
    """A digest of all a match's page shows besides the frame (base): its record (speeches, or the stamp of their
    storing where the record comes without them), its judges' scores and its format's stage titles."""
    shown = (match, data.stamps.get(match.id, "") if data.transcripts else "", data.scores.get(match.id),
             data.stage_titles.get(match.format))
    return hashlib.blake2b(base + repr(shown).encode(), digest_size=16).hexdigest()


@functools.lru_cache(maxsize=None)
def _renderer_digest() -> str:
    """A digest of this module, its templates and labels: a new renderer renders every page anew."""
    digest = hashlib.blake2b(Path(__file__).read_bytes() + Path(labels.__file__).read_bytes(), digest_size=16)
    for path in sorted(TEMPLATES.iterdir()):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def _write(out: Path, name: str, text: str) -> None:
    """Write a file of the site (a fresh one: the build's folder starts empty), in one write: a third of the time
    a text file's buffered writes take."""
    with open(os.path.join(out, name), "wb") as handle:
        handle.write(text.encode("utf-8"))


def _views(boards: dict) -> list[str]:
    """A judge's tabs: the built-in views in VIEWS order, then custom dimensions."""
    return [v for v in VIEWS if v in boards] + [v for v in boards if v not in VIEWS]


def judge_label(judge: dict, t: Callable[..., str] = labels.plain("en")) -> str:
    """How a judge's ratings are named: "Human-Elo (N people)" for people's ballots, else its kind and model."""
    n = len(judge.get("people") or [])
    if judge.get("imported"):
        return t("imported from {source}", source=judge.get("options", {}).get("source") or t("elsewhere"))
    if n:
        return t("Human-Elo ({n} person)", n=n) if n == 1 else t("Human-Elo ({n} people)", n=n)
    pool = judge.get("options", {}).get("pool")
    if pool:  # a jury has no model of its own: its panelists are drawn per match
        return t("jury of {size} drawn from {pool} models", size=judge.get("runs"), pool=len(pool))
    return f"{judge['kind']} · {judge['model']}"


def _judges(data: SiteData, t: Callable[..., str]) -> list[dict]:
    """The judges with pages, in data.judge_boards order: each one's data.judges record with its people,
    simulated flag, label and page (a judge data.judges does not describe has only a name and a page)."""
    known = {j["name"]: j for j in data.judges}
    out = []
    for name in data.judge_boards:
        judge = known.get(name, {"name": name, "kind": "", "model": "", "runs": None})
        out.append({**judge, "people": judge.get("people") or [], "simulated": bool(judge.get("simulated")),
                    "label": judge_label(judge, t) if name in known else "", "page": page_name("judges", name)})
    return out


def _consistency(stats: dict, data: SiteData, judges: list[dict], t: Callable[..., str]) -> dict:
    """The consistency page's tables from `arena stats judges`' figures: pairs of judges, and per judge of
    people its pairs of people and each person against the other judges; each judge's label, and page if any."""
    of_people: dict[str, dict] = {}
    for row in stats.get("people", []):
        of_people.setdefault(row["judge"], {"pairs": [], "vs": []})["pairs"].append(row)
    for row in stats.get("people_vs_judges", []):
        of_people.setdefault(row["judge"], {"pairs": [], "vs": []})["vs"].append(row)
    return {"pairs": stats.get("pairs", []), "people": of_people,
            "labels": {j["name"]: judge_label(j, t) for j in data.judges},
            "pages": {j["name"]: j["page"] for j in judges}}


def _bias(data: SiteData, judges: list[dict], t: Callable[..., str]) -> dict:
    """The biases page's table, `arena stats bias`' rows, with each judge's label, page if any, and whether its
    verdicts are simulated."""
    known = {j["name"]: j for j in data.judges}
    return {"rows": data.bias, "labels": {name: judge_label(j, t) for name, j in known.items()},
            "pages": {j["name"]: j["page"] for j in judges},
            "simulated": {name for name, j in known.items() if j.get("simulated")}}


def _legend(history: list[dict]) -> list[dict]:
    """The history plot's key: per entry of the last snapshot, in its order, its series' colour and dash, its last
    rating row, and after how many matches it was first rated."""
    first: dict[str, int] = {}
    for snapshot in history:
        for row in snapshot["ratings"]:
            first.setdefault(row["entry"], snapshot["matches"])
    return [{**row, "colour": svg.series_style(i)[0], "dash": svg.series_style(i)[1], "since": first[row["entry"]]}
            for i, row in enumerate(history[-1]["ratings"] if history else [])]


def _unlisted(data: SiteData, listed: dict) -> list[str]:
    """Entry names the site links to (match sides, rated entries) that data.entries does not describe."""
    names = dict.fromkeys(n for m in data.matches for n in (m.pro, m.con))
    names.update(dict.fromkeys(r["entry"] for board in data.boards.values() for r in board["ratings"]))
    return [n for n in names if n not in listed]


def _heatmap(matrices: dict, order: list[str], t: Callable[..., str]) -> str:
    """The heatmap with entries in rating order, best first, so the colour runs from corner to corner."""
    names = matrices.get("entries", [])
    index = {name: i for i, name in enumerate(names)}
    keep = [index[name] for name in order if name in index]
    pick = lambda m: [[m[i][j] for j in keep] for i in keep]  # noqa: E731 - reorder rows and columns alike
    return svg.heatmap([names[i] for i in keep], pick(matrices["predicted"]), pick(matrices["observed_share"]),
                       pick(matrices["counts"]), t=t) if keep else ""


def _stage_title(data: SiteData, match, stage: str) -> str:
    """A stage's title as its match's format names it (data.stage_titles), else its key in words."""
    return data.stage_titles.get(match.format, {}).get(stage) or stage.replace("_", " ").capitalize()


def _score(match, data: SiteData) -> tuple[float, float] | None:
    """(PRO, CON) points from the rating judge, as the ratings count them: None when unjudged or a run failed."""
    runs = [v for v in match.verdicts if v.judge == data.judge]
    if not runs or any(v.failed for v in runs):
        return None
    return data.scores[match.id][cast(str, data.judge)]  # runs of it: it is a judge


def _judged(match, data: SiteData, people: dict[str, list[str]]) -> list[dict]:
    """Verdicts grouped by judge, each with its (PRO, CON) points over the runs that did not fail, the
    dimensions its runs decided (a judge may have its own), the details its source gave beyond them (an imported
    verdict's single-valued `extra`: panelist, margin, ...) and per run the outcome of each; a judge of
    people's runs are its people's ballots, named by person (people: judge → its people, run order)."""
    groups: dict[str, list] = {}
    for v in match.verdicts:
        groups.setdefault(v.judge, []).append(v)
    out = []
    for judge, runs in groups.items():
        dimensions = dimension_order(d for v in runs for d in v.dimensions)
        details = list(dict.fromkeys(k for v in runs for k, x in v.extra.items() if _single(x)))
        names = people.get(judge) or []
        out.append({"judge": judge, "score": data.scores[match.id][judge], "dimensions": dimensions,
                    "people": bool(names), "details": details,
                    "runs": [(names[v.run] if v.run < len(names) else v.run + 1, v.overall or "failed",
                              [v.dimensions.get(d, "") for d in dimensions],
                              [_detail(v.extra.get(k)) for k in details], v.error or v.rationale) for v in runs]})
    return out


def _single(value: Any) -> bool:
    """A value a table cell shows: a string or a number (not a list, a table, or a flag)."""
    return isinstance(value, (str, int, float)) and not isinstance(value, bool)


def _detail(value: Any) -> str:
    """A detail as its cell shows it: numbers without trailing zeros (+1.5 stays 1.5), absent as empty."""
    return "" if value is None else f"{value:g}" if isinstance(value, float) else str(value)


def _motions(matches) -> dict[str, tuple[Any, list]]:
    out: dict[str, tuple[Any, list]] = {}
    for m in matches:
        out.setdefault(m.motion.id, (m.motion, []))[1].append(m)
    return out


def _by_entry(matches) -> dict[str, list[tuple[Any, str]]]:
    """entry → [(match, side it took)]"""
    out: dict[str, list] = {}
    for m in matches:
        out.setdefault(m.pro, []).append((m, "pro"))
        out.setdefault(m.con, []).append((m, "con"))
    return out


def _balance(matches, data: SiteData) -> dict:
    """Pro and Con points on this motion under the rating judge: the side balance readers check."""
    judged = [data.scores[m.id][data.judge] for m in matches if data.judge in data.scores.get(m.id, {})]
    pro, con = sum(p for p, _ in judged), sum(c for _, c in judged)
    total = pro + con
    return {"pro": pro, "con": con, "pro_share": pro / total if total else None}


def _downloads(out: Path, data: SiteData) -> list[str]:
    """Write the downloads; their names."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=COLUMNS, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    writer.writerows({**row, "simulated": _flag(row.get("simulated"))} for row in data.results)
    (out / "results.csv").write_text(buffer.getvalue(), encoding="utf-8")

    # Each rating row says whether its entry is simulated (any of its speeches or searches came from the simulator)
    simulated = {e["name"] for e in data.entries if e.get("simulated")}
    views = {view: {**board, "ratings": [{**row, "simulated": row["entry"] in simulated} for row in board["ratings"]]}
             for view, board in data.boards.items()}
    columns = ["view", "rank_ub", "entry", "rating", "ci_low", "ci_high", "matches", "wins", "ties", "losses",
               "provisional", "simulated"]
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=columns, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    for view, board in views.items():
        writer.writerows({**row, "view": view, "simulated": _flag(row["simulated"])} for row in board["ratings"])
    (out / "leaderboard.csv").write_text(buffer.getvalue(), encoding="utf-8")
    payload: dict[str, Any]
    payload = {"generated_at": data.generated_at, "judge": data.judge, "simulated": data.simulated,
               "views": views}
    if data.controlled:  # the same views controlled for style (leaderboard.ratings.rate's control)
        payload["controlled"] = {
            "control": list(data.control),
            "views": {view: {**board, "ratings": [{**row, "simulated": row["entry"] in simulated}
                                                  for row in board["ratings"]]}
                      for view, board in data.controlled.items()}}
    (out / "leaderboard.json").write_text(json.dumps(payload, indent=1), encoding="utf-8")
    (out / "history.json").write_text(json.dumps(data.history, indent=1), encoding="utf-8")
    return ["results.csv", "leaderboard.csv", "leaderboard.json", "history.json"]


def _flag(value) -> str:
    """A bool as the CSV downloads write it: true or false."""
    return "true" if value else "false"
