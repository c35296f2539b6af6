"""Draw generators: who debates whom, on which motion, on which side. Pure functions.

One generator per format behind one interface, `draw(format, DrawRequest) -> Draw`, in the manner of
tab software's draw generators. A request is plain data: the active entries, the motions, the
options, each entry's standing and the history of stored matches. A Draw is the pairings plus flags,
one line per anomaly (a bye, a pair that meets again, a category that ran short), so nothing odd
about a plan goes unexplained. Every generator is deterministic in the seed.

Rules every format shares:
- Sides: within a plan, each entry's Pro and Con counts differ by at most 1. Such an orientation
  exists for any set of matches (Euler trails, see _orient); where a side is free, it goes to the
  entry that has played it less in the stored matches.
- Motions: categories take turns, the least used in the plan first, so their counts differ by at
  most one match (round-robin: one twin) while the sets allow it; within a category the motion
  least used so far, counting the history.
- A pair never debates a motion twice except as its side-swapped twin (the same motion, sides
  exchanged), counting every stored match. A pair that has debated every motion it may repeats the
  one it has debated least, and a flag says so.
"""
from __future__ import annotations

import itertools
import random
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Mapping, Sequence

from arena.base.errors import UserError, plural
from arena.base.limits import MAX_PLAN_MATCHES, MAX_ROUNDS
from arena.domain.records import CATEGORIES, Motion
# The kernel's one import from leaderboard: the Elo scale and prior, a standard-library-only module.
from leaderboard.elo import BASE_RATING, LOGIT_PER_ELO, PRIOR_SD, expected_score

if TYPE_CHECKING:
    from _typeshed import SupportsRichComparison

ONBOARD_MATCHES = 16  # the paper's ratings stabilise at about 15 matches
EXACT_MATCHING_LIMIT = 20  # exact swiss pairing takes ~0.2 s per round at 20 players, ~1 s at 24


@dataclass(frozen=True)
class Pairing:
    motion_id: str
    pro: str
    con: str
    round: int | None = None  # round-robin and swiss: the round the match belongs to
    probability: float | None = None  # active: the probability with which this pair was drawn


@dataclass(frozen=True)
class Standing:
    """Where an entry stands now, from the default judge's results."""

    rating: float = BASE_RATING
    sd: float = PRIOR_SD  # Elo points
    points: float = 0.0  # wins plus half the ties
    rated: bool = False  # has judged results


@dataclass(frozen=True)
class DrawRequest:
    entries: Sequence[str]  # the active entries
    motions: Sequence[Motion]
    seed: int = 0
    rounds: int | None = None
    matches: int | None = None
    entry: str | None = None  # onboard: the new entry
    standings: Mapping[str, Standing] = field(default_factory=dict)  # missing: Standing()
    history: Sequence[Pairing] = ()  # every stored match, played or not
    byes: Sequence[str] = ()  # entries given a bye by earlier swiss plans, once per bye
    focus: Sequence[tuple[str, str]] = ()  # active: the pairs a stopping criterion waits on (arena.app.runner.until)


@dataclass(frozen=True)
class Draw:
    pairings: tuple[Pairing, ...]
    flags: tuple[str, ...] = ()
    byes: tuple[tuple[int, str], ...] = ()  # swiss: (round, entry)


# Which options each format takes, and which of them it cannot do without.
OPTIONS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "round-robin": (frozenset({"rounds"}), frozenset()),
    "swiss": (frozenset({"rounds"}), frozenset()),
    "random": (frozenset({"matches"}), frozenset({"matches"})),
    "active": (frozenset({"matches"}), frozenset({"matches"})),
    "onboard": (frozenset({"matches", "entry"}), frozenset({"entry"})),
}


def check_options(fmt: str, **given: object) -> None:
    """A UserError naming the option when one is given that the format ignores, or missing that it needs."""
    if fmt not in OPTIONS:
        raise UserError(f"--format {fmt!r}: unknown format (known: {', '.join(OPTIONS)})")
    takes, needs = OPTIONS[fmt]
    for name, value in given.items():
        if value is not None and name not in takes:
            raise UserError(f"--{name} does not apply to --format {fmt} (it takes "
                            f"{' and '.join(f'--{o}' for o in sorted(takes))})")
    for name in sorted(needs):
        if given.get(name) is None:
            raise UserError(f"--{name} is required for --format {fmt}")


def draw(fmt: str, request: DrawRequest) -> Draw:
    check_options(fmt, rounds=request.rounds, matches=request.matches, entry=request.entry)
    _check_size(fmt, request)
    return GENERATORS[fmt](request)


def _check_size(fmt: str, request: DrawRequest) -> None:
    """A UserError before drawing a plan larger than arena.base.limits allows: drawing it would take minutes."""
    rounds, n = 1 if request.rounds is None else request.rounds, len(request.entries)
    if rounds > MAX_ROUNDS:
        raise UserError(f"--rounds {rounds}: at most {MAX_ROUNDS} (see Limits in docs/reference/index.md)")
    if fmt in ("round-robin", "swiss"):
        size = (n * (n - 1) if fmt == "round-robin" else n // 2) * rounds
        option = f"--rounds {rounds} ({plural(n, 'entry')})"
    else:
        size = ONBOARD_MATCHES if request.matches is None else request.matches
        option = f"--matches {size}"
    if size > MAX_PLAN_MATCHES:
        raise UserError(f"{option}: a plan of {plural(size, 'match')}; one schedule holds at most {MAX_PLAN_MATCHES:,} "
                        "(see Limits in docs/reference/index.md)")


# --- the generators ------------------------------------------------------------------------------

def round_robin(request: DrawRequest) -> Draw:
    """Every pair meets on --rounds motions, each motion played twice with sides swapped."""
    entries = _entries(request)
    rounds = _at_least_one(1 if request.rounds is None else request.rounds, "--rounds")
    rng = random.Random(request.seed)
    motions = _MotionPicker(request.motions, request.history, rng)
    pairs = list(itertools.combinations(entries, 2))
    rng.shuffle(pairs)
    plan = []
    for r in range(1, rounds + 1):
        for k, (a, b) in enumerate(pairs):
            first, second = (a, b) if k % 2 == 0 else (b, a)  # who speaks Pro first alternates
            motion = motions.pick([(first, second), (second, first)])
            plan += [Pairing(motion.id, first, second, r), Pairing(motion.id, second, first, r)]
    return Draw(tuple(plan), motions.flags())


def random_pairings(request: DrawRequest) -> Draw:
    """--matches random pairings (the Agent4Debate arena's way): each match draws an entry among those
    with the fewest matches so far, and its opponent among the others with the fewest matches, then
    the fewest meetings with it; so match counts differ by at most one and pairs repeat late."""
    entries = _entries(request)
    count = _at_least_one(request.matches, "--matches")
    rng = random.Random(request.seed)
    played: Counter[str] = Counter()
    met: Counter[frozenset[str]] = Counter()
    pairs = []
    for _ in range(count):
        a = rng.choice(_fewest(entries, lambda e: played[e]))
        b = rng.choice(_fewest([e for e in entries if e != a], lambda e: (played[e], met[_pair(a, e)])))
        pairs.append((a, b))
        played.update((a, b))
        met[_pair(a, b)] += 1
    n_pairs = len(entries) * (len(entries) - 1) // 2
    why = (f"{plural(count, 'match')} among {plural(len(entries), 'entry')} ({plural(n_pairs, 'pair')})"
           if count > n_pairs
           else "the draw evens out match counts before it looks for fresh pairs")
    flags = [f"{_name(pair)} meet {n} times: {why}" for pair, n in sorted(met.items(), key=_by_pair) if n > 1]
    return _finish(request, rng, [(a, b, None, None) for a, b in pairs], flags)


def swiss(request: DrawRequest) -> Draw:
    """--rounds rounds pairing entries of close standing (points), never a pair twice when avoidable.

    Each round is a minimum-cost perfect matching on cost (met before or not, times met before,
    points difference²), compared in that order: fewest repeated pairs first, then pairs that met
    least, and only then closest points. It is exact (dynamic programming over subsets) up to
    EXACT_MATCHING_LIMIT players; beyond that greedy by standing, improved by exchanging the partners
    of two pairs until no exchange helps (flagged).
    With an odd number of entries one sits out each round: the lowest standing entry among those
    with the fewest byes (earlier swiss plans included). A plan is stored before any of its matches
    is played, so every round pairs on the standings at scheduling time (flagged when rounds > 1).
    """
    entries = _entries(request)
    rounds = _at_least_one(1 if request.rounds is None else request.rounds, "--rounds")
    rng = random.Random(request.seed)
    order = list(entries)
    rng.shuffle(order)  # breaks ties between equal standings
    standing = {e: request.standings.get(e, Standing()) for e in entries}
    met = Counter(_pair(p.pro, p.con) for p in request.history)
    byes = Counter(request.byes)
    flags = []
    if rounds > 1:
        later = "round 2" if rounds == 2 else f"rounds 2–{rounds}"
        flags.append(f"{later} pair on the standings at scheduling time, since this plan's results are not known "
                     "before it runs: schedule one round at a time for pairings that follow results")
    exact = len(entries) - len(entries) % 2 <= EXACT_MATCHING_LIMIT
    if not exact:
        flags.append(f"{plural(len(entries), 'entry')}: pairings are greedy by standing, improved by exchanging "
                     f"partners, not proven minimum-cost (exact up to {EXACT_MATCHING_LIMIT})")
    matches, sat_out = [], []
    for r in range(1, rounds + 1):
        players = list(order)
        if len(players) % 2:
            bye = min(players, key=lambda e: (byes[e], standing[e].points, standing[e].rating, order.index(e)))
            players.remove(bye)
            byes[bye] += 1
            sat_out.append((r, bye))
            among = "without a bye yet" if byes[bye] == 1 else f"with the fewest byes ({byes[bye] - 1} before)"
            flags.append(f"round {r}: bye for {bye}: odd number of entries, and {bye} stands lowest among the entries "
                         f"{among}")

        def cost(a: str, b: str) -> Cost:
            times = met[_pair(a, b)]
            return int(times > 0), times, (standing[a].points - standing[b].points) ** 2

        players.sort(key=lambda e: -standing[e].points)  # stable: the seeded order breaks ties
        pairs = _min_cost_matching(players, cost) if exact else _greedy_matching(players, cost)
        for a, b in pairs:
            if met[_pair(a, b)]:
                flags.append(f"round {r}: {_name(_pair(a, b))} meet again (after {plural(met[_pair(a, b)], 'match')})"
                             + (": every pairing of the round repeats some pair" if exact else ""))
            met[_pair(a, b)] += 1
            matches.append((a, b, r, None))
    return _finish(request, rng, matches, flags, tuple(sat_out))


def active(request: DrawRequest) -> Draw:
    """--matches pairs drawn where one more match shrinks rating uncertainty most.

    Each draw samples a pair with probability proportional to its score (selection_probabilities)
    and records that probability; the two entries' variances are then updated as if the match had
    been played, so later draws move on to other pairs.

    With focus pairs (those whose intervals a stopping criterion needs apart, arena.app.runner.until) the
    draw goes through them in a shuffled cycle, each with probability 1/|focus|: measured on planted boards
    (benchmarks/confident_board.py) this settles a criterion in fewer matches than weighting them by
    variance reduction, which spends on close pairs that cannot part soon and leaves far pairs unconnected.
    """
    entries = _entries(request)
    count = _at_least_one(request.matches, "--matches")
    rng = random.Random(request.seed)
    standing = {e: request.standings.get(e, Standing()) for e in entries}
    rating = {e: s.rating for e, s in standing.items()}
    variance = {e: s.sd ** 2 for e, s in standing.items()}
    matches: list[_Drawn] = []
    flags: list[str] = []
    focus = sorted({(min(a, b), max(a, b)) for a, b in request.focus if a != b and {a, b} <= standing.keys()})
    if request.focus:
        if not focus:
            raise UserError("active: none of the focus pairs is a pair of active entries")
        cycle: list[tuple[str, str]] = []
        for _ in range(count):
            if not cycle:
                cycle = rng.sample(focus, len(focus))
            a, b = cycle.pop()
            matches.append((a, b, None, 1 / len(focus)))
        return _finish(request, rng, matches, flags)
    for _ in range(count):
        probabilities = selection_probabilities(rating, variance)
        if probabilities is None:
            flags.append("no pair has rating uncertainty left to shrink: pairs drawn uniformly")
            pairs = list(itertools.combinations(entries, 2))
            probabilities = {pair: 1 / len(pairs) for pair in pairs}
        pairs = list(probabilities)
        a, b = rng.choices(pairs, weights=[probabilities[p] for p in pairs])[0]
        matches.append((a, b, None, probabilities[(a, b)]))
        information = _information(rating[a], rating[b])
        for e in (a, b):
            if variance[e] > 0:
                variance[e] = 1 / (1 / variance[e] + information)
    return _finish(request, rng, matches, list(dict.fromkeys(flags)))


def selection_probabilities(rating: Mapping[str, float],
                            variance: Mapping[str, float]) -> dict[tuple[str, str], float] | None:
    """Probability of drawing each pair (a < b): proportional to how much one more match of the pair
    would shrink the variance V of its rating difference; None when no pair's would shrink.

    V = var_a + var_b (covariance left out). One match brings Fisher information I = c²·p(1−p) about
    the difference in Elo, c = ln10/400 and p the predicted win probability (the match weight w of the
    fit is left out: it depends on the verdict, not yet known). With a Gaussian approximation the
    variance becomes 1/(1/V + I), a reduction of V²I/(1+VI): largest for uncertain, close pairs.
    """
    scores = {}
    for a, b in itertools.combinations(sorted(rating), 2):
        v = variance[a] + variance[b]
        information = _information(rating[a], rating[b])
        scores[(a, b)] = v * v * information / (1 + v * information)
    total = sum(scores.values())
    return {pair: s / total for pair, s in scores.items()} if total > 0 else None


def onboard(request: DrawRequest) -> Draw:
    """--entry plays --matches (default 16) matches against rated entries across the rating range.

    Opponents sit at evenly spaced positions of the rated entries sorted by rating, lowest and
    highest included (one opponent: the median); with fewer opponents than matches they are met in
    turn. Without rated entries every other active entry is a candidate (flagged).
    """
    entries = _entries(request)
    new = request.entry
    if new not in entries:
        raise UserError(f"--entry {new!r}: not an active entry (active: {', '.join(entries)})")
    count = _at_least_one(ONBOARD_MATCHES if request.matches is None else request.matches, "--matches")
    rng = random.Random(request.seed)
    standing = {e: request.standings.get(e, Standing()) for e in entries}
    others = [e for e in entries if e != new]
    pool = [e for e in others if standing[e].rated]
    flags = []
    if not pool:
        pool = others
        flags.append(f"no rated opponents yet: {new}'s opponents are drawn from every active entry")
    pool.sort(key=lambda e: standing[e].rating)  # stable: name order breaks rating ties
    k = min(count, len(pool))
    # Positions rounded half up: steps of at least 1 then give k distinct opponents.
    picks = ([pool[int(i * (len(pool) - 1) / (k - 1) + 0.5)] for i in range(k)] if k > 1
             else [pool[(len(pool) - 1) // 2]])
    if count > k:
        flags.append(f"{plural(k, 'opponent')} for {plural(count, 'match')}: {new} meets each {count // k}"
                     + (f" or {count // k + 1}" if count % k else "") + " times")
    return _finish(request, rng, [(new, picks[i % k], None, None) for i in range(count)], flags)


GENERATORS: dict[str, Callable[[DrawRequest], Draw]] = {
    "round-robin": round_robin, "swiss": swiss, "random": random_pairings, "active": active, "onboard": onboard,
}


# --- shared steps ----------------------------------------------------------------------------------

def _entries(request: DrawRequest) -> list[str]:
    entries = sorted(set(request.entries))
    if len(entries) < 2:
        raise UserError(f"scheduling needs at least 2 active entries, found {len(entries)}")
    return entries


def _at_least_one(value: int | None, option: str) -> int:
    if value is None or value < 1:
        raise UserError(f"{option} must be at least 1, got {value}")
    return value


def _pair(a: str, b: str) -> frozenset[str]:
    return frozenset((a, b))


def _name(pair: frozenset[str]) -> str:
    return "–".join(sorted(pair))


def _by_pair(item: tuple[frozenset[str], int]) -> list[str]:
    return sorted(item[0])


def _fewest(items: list[str], key: Callable[[str], SupportsRichComparison]) -> list[str]:
    least = min(map(key, items))
    return [x for x in items if key(x) == least]


def _information(rating_a: float, rating_b: float) -> float:
    """Fisher information of one match about the rating difference, per Elo point²."""
    p = expected_score(rating_a, rating_b)
    return LOGIT_PER_ELO ** 2 * p * (1 - p)


# A match drawn without sides: (a, b, round, probability), as Pairing's round and probability
_Drawn = tuple[str, str, int | None, float | None]


def _finish(request: DrawRequest, rng: random.Random, matches: Sequence[_Drawn], flags: list[str],
            byes: tuple[tuple[int, str], ...] = ()) -> Draw:
    """Sides, then motions, for matches (a, b, round, probability) drawn without sides."""
    lean: Counter[str] = Counter()
    for p in request.history:
        lean[p.pro] += 1
        lean[p.con] -= 1
    sides = _orient([(a, b) for a, b, _, _ in matches], lean, rng)
    motions = _MotionPicker(request.motions, request.history, rng)
    plan = tuple(Pairing(motions.pick([(pro, con)]).id, pro, con, r, probability)
                 for (pro, con), (_, _, r, probability) in zip(sides, matches))
    return Draw(plan, tuple(dict.fromkeys([*flags, *motions.flags()])), byes)


def _orient(matches: Sequence[tuple[str, str]], lean: Counter[str], rng: random.Random) -> list[tuple[str, str]]:
    """(pro, con) for each match {a, b}, so that within these matches each entry's Pro and Con counts
    differ by at most 1.

    Join every entry of odd degree to a dummy vertex; now all degrees are even, so Euler circuits
    cover every match, and taking each match in walking direction (first entry Pro) gives everyone
    as many Pro as Con sides, but for the one dummy edge. A circuit through the dummy splits there
    into trails between two odd entries, each free to be walked either way: its start gets one Pro
    more. Each trail starts at the entry leaning less to Pro (lean: Pro − Con in stored matches,
    updated as trails are turned), ties by the seed.
    """
    dummy = None  # a vertex that is no entry
    edges: list[tuple[_Vertex, _Vertex]] = list(matches)
    degree = Counter(v for a, b in matches for v in (a, b))
    edges += [(v, dummy) for v in sorted(degree) if degree[v] % 2]
    adjacent: defaultdict[_Vertex, list[tuple[int, _Vertex]]] = defaultdict(list)
    for k, (a, b) in enumerate(edges):
        adjacent[a].append((k, b))
        adjacent[b].append((k, a))
    used = [False] * len(edges)
    sides: list[tuple[str, str] | None] = [None] * len(matches)
    starts = ([dummy] if dummy in adjacent else []) + sorted(v for v in adjacent if v is not dummy)
    for start in starts:
        walk = _euler_circuit(start, adjacent, used)
        steps = [(walk[i - 1][0], v, k) for i, (v, k) in enumerate(walk) if i]  # (from, to, edge)
        trails: list[list[tuple[str, str, int]]]
        trail: list[tuple[str, str, int]]
        trails, trail = [], []
        for before, after, edge in steps:
            if before is dummy or after is dummy or edge is None:  # only the walk's first vertex has no edge
                if trail:
                    trails.append(trail)
                trail = []
            else:
                trail.append((before, after, edge))
        if trail:
            trails.append(trail)
        for trail in trails:
            first, last = trail[0][0], trail[-1][1]
            flip = first != last and (lean[first] > lean[last] or (lean[first] == lean[last] and rng.random() < 0.5))
            if first != last:
                pro, con = (last, first) if flip else (first, last)
                lean[pro] += 1
                lean[con] -= 1
            for a, b, k in trail:
                sides[k] = (b, a) if flip else (a, b)
    oriented = [s for s in sides if s is not None]
    assert len(oriented) == len(sides)  # every match is an edge of a circuit: each has its sides
    return oriented


_Vertex = str | None  # an entry, or _orient's dummy vertex (None)


def _euler_circuit(start: _Vertex, adjacent: dict[_Vertex, list[tuple[int, _Vertex]]],
                   used: list[bool]) -> list[tuple[_Vertex, int | None]]:
    """A closed walk from start over every unused edge of its component (Hierholzer), as
    [(vertex, edge by which it was reached from the vertex before)], the first with edge None."""
    stack: list[tuple[_Vertex, int | None]] = [(start, None)]
    walk: list[tuple[_Vertex, int | None]] = []
    while stack:
        vertex = stack[-1][0]
        links = adjacent[vertex]
        while links and used[links[-1][0]]:
            links.pop()
        if links:
            edge, other = links.pop()
            used[edge] = True
            stack.append((other, edge))
        else:
            walk.append(stack.pop())
    walk.reverse()
    return walk


Cost = tuple[float, ...]  # compared in order: a lower first element beats any difference in the next


def _plus(x: Cost, y: Cost) -> Cost:
    return tuple(a + b for a, b in zip(x, y))


def _min_cost_matching(players: list[str], cost: Callable[[str, str], Cost]) -> list[tuple[str, str]]:
    """An exact minimum-cost perfect matching: best(S) pairs the first player of S with each other
    one in turn, plus best of the rest. Only Fibonacci(n+1) sets S arise, so n = 20 is ~10⁴ states;
    among equal costs the earliest partner in players' order wins."""
    n = len(players)
    c = {(i, j): cost(players[i], players[j]) for i in range(n) for j in range(n) if i != j}
    # mask -> (cost of its best matching, partner of its first player in it; -1 for the empty set, never read)
    memo: dict[int, tuple[Cost, int]] = {0: ((0, 0, 0.0), -1)}

    def best(mask: int) -> tuple[Cost, int]:
        if mask in memo:
            return memo[mask]
        i = (mask & -mask).bit_length() - 1
        rest = mask & ~(1 << i)
        result: tuple[Cost, int] | None
        result, others = None, rest
        while others:
            j = (others & -others).bit_length() - 1
            others &= others - 1
            total = _plus(c[i, j], best(rest & ~(1 << j))[0])
            if result is None or total < result[0]:
                result = (total, j)
        assert result is not None  # mask holds two players or more: players are even in number
        memo[mask] = result
        return result

    pairs, mask = [], (1 << n) - 1
    while mask:
        i = (mask & -mask).bit_length() - 1
        j = best(mask)[1]
        pairs.append((players[i], players[j]))
        mask &= ~((1 << i) | (1 << j))
    return pairs


def _greedy_matching(players: list[str], cost: Callable[[str, str], Cost]) -> list[tuple[str, str]]:
    """Each player in order takes the cheapest partner left; then, while exchanging the partners of
    two pairs lowers their cost, exchange them (each exchange lowers the total, so this ends)."""
    left, pairs = list(players), []
    while left:
        a = left.pop(0)
        b = min(left, key=lambda x: cost(a, x))
        left.remove(b)
        pairs.append((a, b))
    improved = True
    while improved:
        improved = False
        for x, y in itertools.combinations(range(len(pairs)), 2):
            (a, b), (c, d) = pairs[x], pairs[y]
            now = _plus(cost(a, b), cost(c, d))
            for p, q in (((a, c), (b, d)), ((a, d), (b, c))):
                if _plus(cost(*p), cost(*q)) < now:
                    pairs[x], pairs[y] = p, q
                    improved = True
                    break
    return pairs


class _MotionPicker:
    """Motions for a plan's matches: categories in turn; no pair on a motion twice but as twins."""

    def __init__(self, motions: Sequence[Motion], history: Sequence[Pairing], rng: random.Random):
        self.pools = {c: [m for m in motions if m.category == c] for c in CATEGORIES}
        for pool in self.pools.values():
            rng.shuffle(pool)
        self.categories = [c for c in CATEGORIES if self.pools[c]]
        if not self.categories:
            raise UserError("no motions available in the workspace's language: check [motions] sets in arena.toml")
        rng.shuffle(self.categories)  # which category leads is the seed's choice
        self.uses = Counter(p.motion_id for p in history)
        self.category_uses: Counter[str] = Counter()
        # (pair, motion id) → (pro, con)s
        self.sides: dict[tuple[frozenset[str], str], list[tuple[str, str]]] = defaultdict(list)
        for p in history:
            self.sides[(_pair(p.pro, p.con), p.motion_id)].append((p.pro, p.con))
        missing = [c for c in CATEGORIES if not self.pools[c]]
        self._flags = ([f"the motion sets have no {' or '.join(missing)} motions: balancing "
                        f"{', '.join(c for c in CATEGORIES if self.pools[c])} only"] if missing else [])

    def pick(self, sides: list[tuple[str, str]]) -> Motion:
        """A motion for one pair's matches, given as (pro, con): one match, or a match and its twin."""
        pair = _pair(*sides[0])

        def fits(m: Motion) -> bool:
            done = self.sides[(pair, m.id)]
            return len(done) + len(sides) <= 2 and not set(done) & set(sides)

        def least_used(ms: list[Motion]) -> Motion:  # fresh to the pair first, then least used
            return min(ms, key=lambda m: (len(self.sides[(pair, m.id)]), self.uses[m.id]))

        ranked = sorted(self.categories, key=lambda c: self.category_uses[c])  # stable: seeded order breaks ties
        for category in ranked:
            fitting = [m for m in self.pools[category] if fits(m)]
            if fitting:
                motion = least_used(fitting)
                if self.category_uses[category] > self.category_uses[ranked[0]]:
                    self._flags.append(f"{_name(pair)} has debated every {ranked[0]} motion it may: "
                                       f"categories unbalanced")
                break
        else:
            motion = least_used(self.pools[ranked[0]])
            self._flags.append(f"{_name(pair)} repeats motion {motion.id}: the pair has debated every motion "
                               "of the sets, sides swapped too")
        self.uses[motion.id] += len(sides)
        self.category_uses[motion.category] += len(sides)
        self.sides[(pair, motion.id)] += sides
        return motion

    def flags(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(self._flags))
