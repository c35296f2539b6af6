"""`arena run --until`: when a board is settled enough to stop paying, and which pairs the next batch should serve.

A criterion is read off a fit's 95% intervals (leaderboard.confidence): `top=K` holds when each of the K best
entries' interval lies wholly above the interval of every entry ranked below it; `separability=X` when at least a
share X of the entry pairs have intervals that do not overlap (Arena-Hard's measure). The next batch is drawn by
the active draw among the pairs the criterion still waits on (focus), so that no match is spent on the settled
bottom of a board when only its top is asked about. The same loop runs on a rating-level simulator (simulate), which
the dry run and benchmarks/confident_board.py use.
"""
from __future__ import annotations

import math
import random
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Callable, Literal, Mapping, Sequence

from arena.base.errors import UserError, plural
from arena.domain import scheduler
from arena.domain.records import Motion
from leaderboard.elo import BASE_RATING, PRIOR_SD, expected_score

if TYPE_CHECKING:
    from arena.app.shapes.reports import Until
    from leaderboard.tables import Rating, Separability

Kind = Literal["top", "separability"]
Z = 1.959964  # the two-sided 95% normal quantile: an unrated entry's interval is the prior's
# separability=X draws among FOCUS_SPARE times the pairs still needed: on planted boards (benchmarks/confident_board.py)
# 2 took 0.72-0.79 of uniform batches' matches, every overlapping pair 0.83-1.09, and 1.5 now and then held a pair
# that could not part and ran to the cap.
FOCUS_SPARE = 2
UNTIL_FORMAT = "active"  # the format of the batches an --until run draws (stored as such, with their probabilities)


@dataclass(frozen=True)
class Criterion:
    """When to stop: the K best entries apart from the rest (top), or a share of all pairs apart (separability)."""

    kind: Kind
    value: float  # top: K; separability: the share X

    def __str__(self) -> str:
        return f"top={int(self.value)}" if self.kind == "top" else f"separability={self.value:g}"


def parse_criterion(text: str) -> Criterion:
    """`top=K` (K a whole number from 1) or `separability=X` (0 < X <= 1); a UserError naming --until otherwise."""
    kind, sep, value = text.strip().partition("=")
    kind = kind.strip().lower()
    known = "top=K (the K best entries settled) or separability=X (a share X of pairs apart, 0 < X <= 1)"
    if not sep or kind not in ("top", "separability"):
        raise UserError(f"--until {text!r}: expected {known}")
    try:
        number = int(value) if kind == "top" else float(value)
    except ValueError:
        raise UserError(f"--until {text!r}: {value.strip()!r} is not a "
                        f"{'whole number' if kind == 'top' else 'number'}") from None
    if kind == "top" and number < 1:
        raise UserError(f"--until {text!r}: K must be at least 1")
    if kind == "separability" and not 0 < number <= 1:
        raise UserError(f"--until {text!r}: X must be a share above 0 and at most 1")
    return Criterion("top" if kind == "top" else "separability", float(number))


def check_size(criterion: Criterion, entries: int) -> None:
    """A UserError when top=K asks for K entries apart from the rest of a board that has no more than K."""
    if criterion.kind == "top" and criterion.value >= entries:
        raise UserError(f"--until {criterion}: {plural(entries, 'active entry')}; top=K needs more than K entries, "
                        "since the K best are settled against those below them")


@dataclass(frozen=True)
class Board:
    """Every active entry's rating and 95% interval, best first; an entry without results at the prior's."""

    entries: tuple[str, ...]
    rating: tuple[float, ...]
    low: tuple[float, ...]
    high: tuple[float, ...]


def board(rows: Sequence[Rating], entries: Sequence[str]) -> Board:
    """The board of a fit's rows (best first) and the active entries it has no row for (at the mean rating, with the
    prior's interval); rows of entries no longer active are left out."""
    active = set(entries)
    rated = [r for r in rows if r["entry"] in active]
    named = {r["entry"] for r in rated}
    half = Z * PRIOR_SD
    unrated = [(e, BASE_RATING, BASE_RATING - half, BASE_RATING + half) for e in sorted(active - named)]
    table = sorted([(r["entry"], r["rating"], r["ci_low"], r["ci_high"]) for r in rated] + unrated,
                   key=lambda row: -row[1])  # stable: the fit's order, then the unrated by name
    return Board(tuple(t[0] for t in table), tuple(t[1] for t in table), tuple(t[2] for t in table),
                 tuple(t[3] for t in table))


@dataclass(frozen=True)
class Settlement:
    """Where a board stands against a criterion: met or not, the top boundaries settled, its separability."""

    criterion: Criterion
    met: bool
    settled: int  # top=K: of the boundaries below each of the K best, those settled
    boundaries: int
    separability: Separability

    def line(self, matches: int) -> str:
        """'top=3: 2 of 3 boundaries settled · separability 0.73 · 84 matches'."""
        share = self.separability["share"]
        parts = [f"separability {'n/a' if share is None else f'{share:.2f}'}", plural(matches, "match")]
        if self.criterion.kind == "top":
            parts.insert(0, f"{self.settled} of {plural(self.boundaries, 'boundary')} settled")
        return f"{self.criterion}: " + " · ".join(parts)


def settlement(criterion: Criterion, b: Board) -> Settlement:
    """How far the board has come to the criterion."""
    from leaderboard.confidence import separability, settled_boundaries

    apart = separability(b.low, b.high)
    settled = settled_boundaries(b.rating, b.low, b.high, int(criterion.value)) if criterion.kind == "top" else []
    if criterion.kind == "top":
        met = len(settled) == int(criterion.value) and all(settled)
    else:
        met = apart["share"] is not None and apart["share"] >= criterion.value
    return Settlement(criterion, met, sum(settled), len(settled), apart)


def focus(criterion: Criterion, b: Board) -> list[tuple[str, str]]:
    """The pairs the criterion waits on, among those whose intervals overlap. top=K: each pair of an unsettled entry
    among the K best with an entry ranked below it. separability=X: the pairs nearest to parting (the largest gap
    between ratings for the width of their intervals), FOCUS_SPARE times as many as the share still needs, so that
    no match goes to pairs too close to part that the share can do without. Empty when the criterion is met."""
    from leaderboard.confidence import apart

    n = len(b.entries)
    k = min(int(criterion.value), n) if criterion.kind == "top" else n
    parted = apart(b.low, b.high)
    overlapping = [(i, j) for i in range(k) for j in range(i + 1, n) if not parted[i, j]]
    if criterion.kind == "separability":
        pairs = n * (n - 1) // 2
        need = math.ceil(criterion.value * pairs - 1e-9) - (pairs - len(overlapping))
        half = [(hi - lo) / 2 for lo, hi in zip(b.low, b.high)]
        overlapping.sort(key=lambda p: -(b.rating[p[0]] - b.rating[p[1]]) / max(half[p[0]] + half[p[1]], 1e-9))
        overlapping = overlapping[:max(0, FOCUS_SPARE * need)]
    return [(b.entries[i], b.entries[j]) for i, j in overlapping]


def standings(b: Board) -> dict[str, scheduler.Standing]:
    """The board as the active draw takes it: each entry's rating and the spread its interval implies."""
    return {e: scheduler.Standing(rating=r, sd=(hi - lo) / (2 * Z), rated=True)
            for e, r, lo, hi in zip(b.entries, b.rating, b.low, b.high)}


REASONS = {"max matches": "max matches reached", "budget": "budget reached", "interrupted": "interrupted",
           "failed": "every match of the last batch failed",
           "waiting": "every pair left to settle has an entry whose matches await people's speeches",
           "keys": "every pair left to settle has an entry that lacks its key",
           "stalled": "the last batch played no match"}


def said(until: Until) -> str:
    """How an --until run ended, in words: 'until top=3: met after 84 matches' or '... not met: max matches reached
    (120 matches)'."""
    if until["met"]:
        return f"until {until['criterion']}: met after {plural(until['matches'], 'match')}"
    return (f"until {until['criterion']}: not met: {REASONS.get(until['reason'], until['reason'])} "
            f"({plural(until['matches'], 'match')})")


# --- the loop on a rating-level simulator ---------------------------------------------------------------------

Design = Literal["until", "uniform", "round-robin", "swiss", "active"]
DESIGNS: tuple[Design, ...] = ("until", "uniform", "round-robin", "swiss")
_MOTIONS = [Motion(id=f"s{k}", text=f"simulated motion {k}", category="policy", language="en") for k in range(4)]


@dataclass(frozen=True)
class Simulated:
    """How a simulated tournament ended: matches played, whether the criterion held at the stop, and the board."""

    matches: int
    met: bool
    board: Board


def simulate(planted: Mapping[str, float], criterion: Criterion, *, design: Design = "until", batch: int | None = None,
             max_matches: int = 2000, seed: int = 0, replicates: int = 1000,
             start: Sequence[tuple[str, str, float]] = (),
             fit: Callable[[list[tuple[str, str, float]], int, int], Sequence[Rating]] | None = None) -> Simulated:
    """Play batches of the design until the criterion holds (or max_matches), each match won by Pro with the
    Bradley–Terry probability of the planted ratings (Elo), the board refitted after each batch as `arena rate`
    fits it (bootstrap intervals of `replicates`, the side fitted). until: active batches of `batch` (default: the
    number of entries) among the criterion's focus pairs; uniform: balanced random batches of `batch`;
    round-robin: whole double round robins; swiss: ceil(batch / (n/2)) rounds paired on points at the batch's start
    (as one multi-round swiss plan is). start: matches played before, (pro, con, Pro's score share), counted in
    matches and max_matches. fit(played, replicates, seed): the board's rows in place of `arena rate`'s fit (a
    benchmark's weighted fit, or one that watches every refit)."""
    entries = sorted(planted)
    size = batch or len(entries)
    rng = random.Random(seed)
    played = list(start)  # (pro, con, Pro's score share)
    history = [scheduler.Pairing(_MOTIONS[0].id, pro, con) for pro, con, _ in played]
    refit = fit or _fit
    b = board(refit(played, replicates, seed) if played else [], entries)
    while True:
        state = settlement(criterion, b)
        if state.met or len(played) >= max_matches:
            return Simulated(len(played), state.met, b)
        request = scheduler.DrawRequest(entries=entries, motions=_MOTIONS, seed=seed * 7919 + len(history),
                                        history=history, standings=standings(b))
        for p in _batch(design, request, criterion, b, size, played)[:max_matches - len(played)]:
            played.append((p.pro, p.con, _outcome(planted, p.pro, p.con, rng)))
            history.append(scheduler.Pairing(p.motion_id, p.pro, p.con))
        b = board(refit(played, replicates, seed), entries)


def _batch(design: Design, request: scheduler.DrawRequest, criterion: Criterion, b: Board, size: int,
           played: Sequence[tuple[str, str, float]]) -> tuple[scheduler.Pairing, ...]:
    """The next batch of a design (see simulate)."""
    if design == "until":
        return scheduler.draw("active", replace(request, matches=size, focus=focus(criterion, b))).pairings
    if design == "uniform":
        return scheduler.draw("random", replace(request, matches=size)).pairings
    if design == "active":
        return scheduler.draw("active", replace(request, matches=size)).pairings
    if design == "round-robin":
        return scheduler.draw("round-robin", request).pairings
    rounds = max(1, -(-size // (len(request.entries) // 2)))
    return scheduler.draw("swiss", replace(request, rounds=rounds,
                                           standings=_points(request.entries, played))).pairings


PROJECTION_REPLICATES = 100  # a dry run's simulated refits: interval widths good enough to count batches by
PROJECTION_CAP = 50  # matches per entry a simulated run may play past the start when no --max-matches is given


@dataclass(frozen=True)
class Projected:
    """More matches an --until run is projected to play: the median, 10th and 90th percentiles of simulations, and
    the share of them that met the criterion."""

    matches: int
    low: int
    high: int
    met_share: float
    simulations: int
    cap: int  # the most matches a simulation could add


def project(b: Board, criterion: Criterion, played: Sequence[tuple[str, str, float]], *, batch: int,
            max_matches: int | None, seed: int, simulations: int) -> Projected:
    """How many more matches an --until run is projected to play. Each simulation draws every
    entry's true rating from its current interval (normal, the interval's spread) and runs the loop on from
    `played`, refitting with PROJECTION_REPLICATES replicates."""
    import statistics

    cap = PROJECTION_CAP * len(b.entries) if max_matches is None else max_matches
    extra, met = [], 0
    for k in range(simulations):
        rng = random.Random(seed * 1009 + k)
        planted = {e: rng.gauss(r, (hi - lo) / (2 * Z)) for e, r, lo, hi in zip(b.entries, b.rating, b.low, b.high)}
        sim = simulate(planted, criterion, batch=batch, max_matches=len(played) + cap, seed=seed + k,
                       replicates=PROJECTION_REPLICATES, start=played)
        extra.append(sim.matches - len(played))
        met += sim.met
    deciles = statistics.quantiles(extra, n=10, method="inclusive") if len(extra) > 1 else extra * 9
    return Projected(round(statistics.median(extra)), round(deciles[0]), round(deciles[-1]), met / simulations,
                     simulations, cap)


def _outcome(planted: Mapping[str, float], pro: str, con: str, rng: random.Random) -> float:
    """Pro's score share of one simulated match: 1 (won) with the Bradley–Terry probability, else 0."""
    return 1.0 if rng.random() < expected_score(planted[pro], planted[con]) else 0.0


def _points(entries: Sequence[str], played: Sequence[tuple[str, str, float]]) -> dict[str, scheduler.Standing]:
    """Swiss pairs on points: wins (ties: halves) so far."""
    won = dict.fromkeys(entries, 0.0)
    for pro, con, share in played:
        won[pro] += share
        won[con] += 1 - share
    return {e: scheduler.Standing(points=p) for e, p in won.items()}


def _fit(played: list[tuple[str, str, float]], replicates: int, seed: int) -> Sequence[Rating]:
    """The board `arena rate` would fit from these matches (scores 1–0 as a judge's verdict for the winner)."""
    import pandas as pd
    from leaderboard.ratings import rate

    frame = pd.DataFrame({"match_id": [f"m{k}" for k in range(len(played))],
                          "entry_a": [p[0] for p in played], "entry_b": [p[1] for p in played],
                          "score_a": [p[2] for p in played], "score_b": [1 - p[2] for p in played]})
    return rate(frame, bootstrap=replicates, seed=seed)["ratings"]
