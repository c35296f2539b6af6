"""Gather what the site shows from a workspace: ratings per view and per judge, raw and controlled for style,
matrices, entries, matches, the consistency and biases of judges; and leave out what people are still judging blind
(the embargo)."""
from __future__ import annotations

import functools
import hashlib
from collections import defaultdict
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Collection, Iterable, Mapping, Sequence

import arena
import leaderboard
from arena.app.shapes.figures import BiasRow, StatsJudges
from arena.base.clock import now
from arena.workspace.config import SiteSettings
from arena.domain.formats import shown
from arena.domain.records import CATEGORIES, JudgeSpec, Match, Verdict, score
from arena.match.attacks import ATTACKS
from arena.analysis.tally import ResultsRow, match_features, results_rows
from arena.workspace.folder import Workspace

if TYPE_CHECKING:
    import pandas as pd

    from leaderboard.site.data import SiteData, SiteEntry, Snapshot
    from leaderboard.tables import Fit
    from leaderboard.site.data import SiteData

# A results row (arena.analysis.tally.ResultsRow) with each side's style counts beside it
# (leaderboard.results.with_counts): the rows of the site's results.csv, which is what `arena rate --format csv` gives.
Row = Mapping[str, object]

# What the site's controlled boards are net of when [rating] control names nothing: the length of the speeches,
# the style judges are best known to reward.
CONTROL = ("length",)


def site_data(ws: Workspace, judge: str | None, consistency: StatsJudges, *, bias: Sequence[BiasRow] | None = None,
              features: Mapping[str, Mapping[str, Mapping[str, int]]] | None = None, settings: SiteSettings | None = None, seed: int = 0,
              awaiting: frozenset[str] = frozenset(), unplayed: frozenset[str] = frozenset()) -> SiteData:
    """Ratings overall, per category and per dimension from one judge's verdicts (the index), the same for
    every other judge with rated matches (its own page), and the records behind them; consistency is the
    consistency of judges as `arena stats judges` gives it, and bias their biases as `arena stats bias` does, over
    the matches shown (and each attacked judge's last attack run: arena.app.commands.stats.stats_judges), and the
    attacks' summaries (arena.match.attacks) the methodology explains them with. settings (default: the workspace's
    [site]) choose each fit's intervals and the rows per page of the matches list.

    Each board is fitted twice: raw, and controlled for the workspace's [rating] control (length when it sets
    none), every controlled fit with settings.view_intervals (sandwich by default: a bootstrap of each would
    double the time a publish takes); the controlled one is shown first when [rating] control is set, since
    `arena rate` gives those. The results rows carry each side's style counts (features: match_features, read
    here when not given), which the site's results.csv publishes.

    The matches come without their speeches, which the renderer loads (transcripts) for the pages it writes,
    a few hundred at a time; each match's stamp is when it was stored, which every rewrite of its speeches
    changes.

    awaiting and unplayed (arena.app.people.ballot_links.embargo) are matches left out of everything: pages, lists, fits,
    counts, costs, history; the site says how many. Their pages and motion pages, which an earlier publish may
    have written, are named in withdrawn, for the publisher not to keep."""
    from leaderboard.ratings import win_matrices
    from leaderboard.results import with_counts
    from leaderboard.site.render import SiteData

    settings = settings or ws.config.site
    withheld = awaiting | unplayed
    features = match_features(ws.store) if features is None else features
    rows = with_counts(_shown(results_rows(ws.store, judge, ws.config.judge(judge).runs), withheld), features) \
        if judge else []
    side = ws.config.rating.side
    control = ws.config.rating.control or CONTROL
    boards, overall = _boards(rows, settings, seed=seed, side=side)
    controlled = _boards(rows, settings, seed=seed, side=side, control=control)[0] if len(overall) else {}
    # A page only for a judge with rated matches, in configured order: judge → view → ratings, raw and controlled.
    judge_boards: dict[str, dict[str, Fit]] = {}
    judge_controlled: dict[str, dict[str, Fit]] = {}
    for spec in ws.config.judges:
        if spec.name == judge:
            if len(overall):
                judge_boards[judge], judge_controlled[judge] = boards, controlled  # the index's, not fitted twice
            continue
        theirs = with_counts(_shown(results_rows(ws.store, spec.name, spec.runs), withheld), features)
        if any(r["dimension"] == "overall" for r in theirs):
            judge_boards[spec.name] = _boards(theirs, settings, seed=seed, side=side)[0]
            judge_controlled[spec.name] = _boards(theirs, settings, seed=seed, side=side, control=control)[0]
    every = ws.store.matches(speeches=False)
    formats = {name: shown(name, ws.config.formats) for name in {m.format for m in every}}
    matches = [m for m in every if m.id not in withheld]
    format_of = {m.id: formats[m.format] for m in matches}
    judged = {v.judge for m in matches for v in m.verdicts}
    language = ws.config.arena.language
    entries = _entries(ws, matches, withheld)
    parts = _simulated_parts(ws, matches)
    return SiteData(
        title="Debate Arena leaderboard", generated_at=now(), judge=judge,
        # Every page carries the banner when any result shown is simulated: a match, or an entry that has played
        # (arena.domain.records.simulated); an offline entry configured but not yet played makes no result simulated.
        simulated=any(m.simulated for m in matches) or any(e["simulated"] and e["matches"] for e in entries)
        or bool(parts), simulated_parts=parts,
        boards=boards, matrices=win_matrices(overall, side=side) if len(overall) else {},
        entries=entries, matches=matches, results=rows,
        judges=[{"name": j.name, "kind": j.kind, "model": j.model, "runs": j.runs, "options": dict(j.options),
                 "people": list(j.people), "simulated": ws.store.judge_simulated(j.name),
                 "simulated_own": _simulated_judge(j, matches, parts), "imported": j.imported,
                 "judged": j.name in judged}
                for j in ws.config.judges],
        scores={m.id: _scores(m.verdicts) for m in matches},
        judge_boards=judge_boards, consistency=consistency, history=_history(ws, judge, rows, seed=seed),
        control=tuple(control), controlled=controlled, judge_controlled=judge_controlled,
        controlled_first=bool(ws.config.rating.control), bias=list(bias or []),
        awaiting=len(awaiting), unplayed=len(unplayed), withdrawn=withdrawn_pages(ws, withheld),
        stage_titles={name: {stage: formats[name].title_of(stage, language) for stage in formats[name].stages}
                      for name in {m.format for m in matches}},
        # Each match's speeches in its format's order, for pages that show them in turn under their stages' titles.
        transcripts=lambda ids: {match_id: tuple(format_of[match_id].ordered(speeches))
                                 for match_id, speeches in ws.store.speeches_of(ids).items()},
        stamps={m.id: f"{m.status} {m.finished_at}" for m in ws.store.match_states() if m.id in format_of},
        matches_per_page=settings.matches_per_page, language=language,
        attacks={name: attack.summary for name, attack in ATTACKS.items()})


def site_state(ws: Workspace, awaiting: Collection[str], unplayed: Collection[str]) -> str:
    """A digest of everything a publish is made from: the code of arena and leaderboard (its site included), arena.toml, the
    store's change stamp (renewed by every write to its matches, speeches, verdicts, entries, motions and ledger),
    and the embargo (as site_data takes it). Equal digests, equal sites (the time they were generated aside)."""
    digest = hashlib.blake2b(_code_digest().encode(), digest_size=16)
    digest.update(ws.config.path.read_bytes())
    digest.update(repr((sorted(awaiting), sorted(unplayed))).encode())
    digest.update(ws.store.change_stamp().encode())
    return digest.hexdigest()


@functools.lru_cache(maxsize=None)
def _code_digest() -> str:
    """A digest of the source and templates of the arena and leaderboard packages (the site's included): a new version, a new
    site."""
    digest = hashlib.blake2b(digest_size=16)
    for package in (arena, leaderboard):
        root = _folder(package)
        for path in sorted(root.rglob("*")):
            if path.suffix in (".py", ".j2") and "__pycache__" not in path.parts:
                digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def _folder(package: ModuleType) -> Path:
    """The folder of a package imported from files (a namespace package, with no __file__, has none)."""
    if package.__file__ is None:
        raise RuntimeError(f"{package.__name__} has no folder to digest")
    return Path(package.__file__).parent


def _shown(rows: Sequence[ResultsRow], withheld: frozenset[str]) -> list[ResultsRow]:
    """The results rows of matches the site shows."""
    return [r for r in rows if r["match_id"] not in withheld]


def withdrawn_pages(ws: Workspace, withheld: Collection[str]) -> tuple[str, ...]:
    """The site's pages that must not be there: those of the matches withheld, and of motions only withheld
    matches were debated on (an earlier publish may have written them)."""
    from leaderboard.site.published import page_name

    states = ws.store.match_states()
    motions = {m.motion_id for m in states if m.id not in withheld}
    hidden = [m for m in states if m.id in withheld]
    return tuple(sorted({page_name("matches", m.id) for m in hidden}
                        | {page_name("motions", m.motion_id) for m in hidden if m.motion_id not in motions}))


def _history(ws: Workspace, judge: str | None, rows: Sequence[Row], *, seed: int) -> list[Snapshot]:
    """The overall fit of the judge's results rows after every N matches in the order they finished
    (leaderboard.history, at most 25 snapshots), with sandwich intervals: a bootstrap per snapshot would
    multiply the time publishing takes. Each snapshot's meta names the judge and whether it is simulated."""
    import pandas as pd
    from leaderboard.history import history, in_order
    from leaderboard.results import COLUMNS, main_rows

    overall = main_rows(pd.DataFrame(rows, columns=list(COLUMNS)))
    snapshots = history(in_order(overall, ws.store.finish_order()), ci="sandwich", seed=seed,
                        side=ws.config.rating.side)
    simulated = ws.store.judge_simulated(judge) if judge else False
    return [{**snapshot, "meta": {**snapshot["meta"], "judge": judge, "simulated": simulated}} for snapshot in snapshots]


def _boards(rows: Sequence[Row], settings: SiteSettings, *, seed: int, side: str,
            control: tuple[str, ...] = ()) -> tuple[dict[str, Fit], pd.DataFrame]:
    """(view → ratings, the overall rows) of one judge's results rows, the Pro advantage fitted or not (side):
    the overall fit with settings.intervals, the category and dimension tabs with settings.view_intervals; with
    control, every fit controlled for those style features (leaderboard.ratings.rate), with
    settings.view_intervals."""
    import pandas as pd
    from leaderboard.ratings import rate
    from leaderboard.results import COLUMNS, groups, main_rows

    frame = pd.DataFrame(rows, columns=list(COLUMNS))
    overall = main_rows(frame)
    # The same splits as `arena rate --by`: a tab per built-in category and per dimension found in the verdicts
    # (custom ones included, in groups' order); a dimension named like a category cannot take that category's tab.
    views = {"overall": overall}
    views |= {c: part for c, part in groups(frame, "category").items() if c in CATEGORIES}
    views |= {d: part for d, part in groups(frame, "dimension").items() if d not in views}
    return {view: rate(part, ci=settings.intervals if view == "overall" and not control else settings.view_intervals,
                       bootstrap=settings.replicates, seed=seed, side=side, control=control)
            for view, part in views.items()}, overall


def _simulated_judge(judge: JudgeSpec, matches: Iterable[Match], parts: Mapping[str, Mapping[str, Sequence[str]]]
                     ) -> bool:
    """Whether a judge's own verdicts came from the simulator (its model, or a call the simulator answered for it),
    rather than its real model's verdicts on debates the simulator had a part in. A simulated match with no parts
    recorded (imported so) counts against every judge of it, as the banner does."""
    return judge.simulated or any(
        m.simulated and any(v.judge == judge.name for v in m.verdicts)
        and (m.id not in parts or judge.name in parts[m.id].get("verdicts", ())) for m in matches)


def _simulated_parts(ws: Workspace, matches: Iterable[Match]) -> dict[str, dict[str, tuple[str, ...]]]:
    """match id → what of it the simulator made, part → whose: "speeches" and "search" → the sides, "verdicts" → the
    judges. From the calls it answered in the match's latest play (Store.simulated_calls), the sides of entries on
    offline/ models, and the verdicts of judges on them (a simulated judge of people casts ballots, not calls).
    A match flagged simulated with no part here (imported so) is simulated all the same: the site says so."""
    calls = ws.store.simulated_calls()
    offline = {e.name for e in ws.config.entries if e.simulated}
    judges = {j.name for j in ws.config.judges if j.simulated}
    out: dict[str, dict[str, tuple[str, ...]]] = {}
    for m in matches:
        found = set(calls.get(m.id, ()))
        if m.status != "scheduled":
            found |= {("speeches", side) for side, name in (("pro", m.pro), ("con", m.con)) if name in offline}
        found |= {("verdicts", v.judge) for v in m.verdicts if v.judge in judges}
        if found:
            out[m.id] = {part: tuple(sorted(who for p, who in found if p == part))
                         for part in ("speeches", "search", "verdicts") if any(p == part for p, _ in found)}
    return out


def _scores(verdicts: Iterable[Verdict]) -> dict[str, tuple[float, float]]:
    """Each judge's (PRO, CON) points on a match (arena.domain.records.score)."""
    by_judge: dict[str, list[Verdict]] = defaultdict(list)
    for v in verdicts:
        by_judge[v.judge].append(v)
    return {judge: score(runs) for judge, runs in by_judge.items()}


def _entries(ws: Workspace, matches: Iterable[Match], withheld: frozenset[str]) -> list[SiteEntry]:
    """The entries of arena.toml as the site lists them: what each played of the matches shown, forfeited, spent
    and spent per role."""
    costs = ws.store.entry_costs(skip=withheld)
    roles = ws.store.role_usage(skip=withheld)
    simulated = ws.store.simulated_entries()  # any of its speeches or searches came from the simulator
    played: dict[str, int] = defaultdict(int)
    forfeits: dict[str, int] = defaultdict(int)
    for m in matches:
        if m.status != "done":
            continue
        played[m.pro] += 1
        played[m.con] += 1
        if m.forfeit is not None:
            forfeits[m.pro if m.forfeit.side == "pro" else m.con] += 1
    out: list[SiteEntry] = []
    for e in ws.config.entries:
        cost, unknown = costs.get(e.name, (0.0, False))
        out.append({"name": e.name, "debater": e.debater, "model": e.model, "simulated": e.name in simulated,
                    "retired": e.retired, "params": dict(e.params), "matches": played[e.name],
                    "forfeits": forfeits[e.name], "cost": cost,
                    "cost_per_match": cost / played[e.name] if played[e.name] else None, "cost_unknown": unknown,
                    "roles": roles.get(e.name, {})})
    return out
