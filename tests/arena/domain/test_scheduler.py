"""Draw generators: the invariants every format keeps (pairs, sides, motion balance, determinism, no
repeated motion for a pair but its side-swapped twin), each format's own rules, and `arena schedule`."""
from __future__ import annotations

import itertools
import json
import random
from collections import Counter
from pathlib import Path

import pytest

from arena.domain import scheduler
from arena.app import commands as app
from arena.app.commands import open_workspace
from arena.base.errors import UserError
from arena.domain.records import CATEGORIES, Motion, Verdict
from arena.domain.scheduler import DrawRequest, Pairing, Standing, draw
from tests.support.helpers import assert_user_error, entry, invoke, judge, new_workspace, snapshot

MOTIONS = [Motion(f"{c}-{k:02d}", f"A {c} motion, number {k}", c) for c in CATEGORIES for k in range(10)]
NAMES = [f"e{k}" for k in range(7)]

# Each format with the options it needs; entry counts odd and even.
CASES = [
    pytest.param("round-robin", {"rounds": 2}, id="round-robin"),
    pytest.param("random", {"matches": 17}, id="random"),
    pytest.param("swiss", {"rounds": 3}, id="swiss"),
    pytest.param("active", {"matches": 12}, id="active"),
    pytest.param("onboard", {"entry": "e0", "matches": 9}, id="onboard"),
]


def standings(names=NAMES) -> dict[str, Standing]:
    """Spread-out ratings, points and uncertainties, all rated."""
    return {e: Standing(rating=900 + 40 * k, sd=40 + 15 * k, points=float(k), rated=True) for k, e in enumerate(names)}


def make(fmt: str, options: dict, *, entries=NAMES, seed: int = 1, **extra) -> scheduler.Draw:
    extra.setdefault("standings", standings(entries))
    return draw(fmt, DrawRequest(entries=entries, motions=MOTIONS, seed=seed, **options, **extra))


def side_balance(pairings) -> Counter:
    balance: Counter = Counter()
    for p in pairings:
        balance[p.pro] += 1
        balance[p.con] -= 1
    return balance


def category_counts(pairings) -> Counter:
    category = {m.id: m.category for m in MOTIONS}
    return Counter(category[p.motion_id] for p in pairings)


def assert_motion_rule(pairings, history=()) -> None:
    """No pair on a motion twice, except once with each side: the side-swapped twin."""
    seen: dict[tuple, list] = {}
    for p in [*history, *pairings]:
        seen.setdefault((frozenset((p.pro, p.con)), p.motion_id), []).append((p.pro, p.con))
    for key, sides in seen.items():
        assert len(sides) <= 2 and len(set(sides)) == len(sides), (key, sides)


# --- invariants of every format ------------------------------------------------------------------

@pytest.mark.parametrize("entries", [NAMES, NAMES[:6]], ids=["7-entries", "6-entries"])
@pytest.mark.parametrize("fmt, options", CASES)
def test_every_format_keeps_the_shared_invariants(fmt, options, entries):
    history = [Pairing("fact-00", "e1", "e2"), Pairing("value-03", "e3", "e0"), Pairing("fact-00", "e2", "e1")]
    plan = make(fmt, options, entries=entries, history=history)
    assert plan.pairings
    for p in plan.pairings:
        assert p.pro != p.con and {p.pro, p.con} <= set(entries)
    # Sides: within the plan, every entry's Pro and Con counts differ by at most one.
    assert all(abs(v) <= 1 for v in side_balance(plan.pairings).values()), side_balance(plan.pairings)
    # Motions: categories used in turn (round-robin counts a motion's twin as well).
    counts = category_counts(plan.pairings)
    assert max(counts.values()) - min(counts.get(c, 0) for c in CATEGORIES) <= (2 if fmt == "round-robin" else 1)
    assert_motion_rule(plan.pairings, history)
    assert not [f for f in plan.flags if "repeats motion" in f or "unbalanced" in f]


@pytest.mark.parametrize("fmt, options", CASES)
def test_every_format_is_deterministic_in_the_seed(fmt, options):
    assert make(fmt, options, seed=5) == make(fmt, options, seed=5)
    assert make(fmt, options, seed=5).pairings != make(fmt, options, seed=6).pairings


@pytest.mark.parametrize("fmt, options", CASES)
def test_a_single_entry_cannot_be_scheduled(fmt, options):
    with pytest.raises(UserError, match="at least 2 active entries, found 1"):
        make(fmt, options, entries=["e0"])


@pytest.mark.parametrize("fmt, given, message", [
    ("random", {}, "--matches is required for --format random"),
    ("active", {}, "--matches is required for --format active"),
    ("onboard", {}, "--entry is required for --format onboard"),
    ("round-robin", {"matches": 3}, "--matches does not apply to --format round-robin"),
    ("swiss", {"entry": "e0"}, "--entry does not apply to --format swiss"),
    ("active", {"matches": 3, "rounds": 2}, "--rounds does not apply to --format active"),
    ("elimination", {}, "--format 'elimination': unknown format"),
])
def test_options_a_format_does_not_take_or_needs_are_named(fmt, given, message):
    with pytest.raises(UserError, match=message):
        draw(fmt, DrawRequest(entries=NAMES, motions=MOTIONS, **given))


@pytest.mark.parametrize("fmt, options, option", [
    ("round-robin", {"rounds": 0}, "--rounds"), ("swiss", {"rounds": -1}, "--rounds"),
    ("random", {"matches": 0}, "--matches"), ("onboard", {"entry": "e0", "matches": 0}, "--matches"),
])
def test_counts_below_one_are_refused(fmt, options, option):
    with pytest.raises(UserError, match=f"{option} must be at least 1"):
        make(fmt, options)


def test_no_motions_in_the_language_is_refused():
    with pytest.raises(UserError, match="no motions available"):
        draw("random", DrawRequest(entries=NAMES, motions=[], matches=2))


def test_a_missing_category_is_flagged_and_the_rest_balanced():
    motions = [m for m in MOTIONS if m.category != "value"]
    plan = draw("random", DrawRequest(entries=NAMES, motions=motions, matches=10))
    assert any("no value motions" in f for f in plan.flags)
    counts = category_counts(plan.pairings)
    assert set(counts) == {"fact", "policy"} and abs(counts["fact"] - counts["policy"]) <= 1


# --- the motion rule -------------------------------------------------------------------------------

def test_a_pair_replays_a_motion_only_as_its_side_swapped_twin():
    only = [MOTIONS[0]]
    # a took Pro on the only motion before, so the twin (b Pro) is allowed and sides lean that way.
    plan = draw("random", DrawRequest(entries=["a", "b"], motions=only, matches=1,
                                      history=[Pairing(only[0].id, "a", "b")]))
    assert plan.pairings == (Pairing(only[0].id, "b", "a"),)
    assert not [f for f in plan.flags if "repeats motion" in f]
    # With both sides played, any further match on it is a repeat, and flagged.
    history = [Pairing(only[0].id, "a", "b"), Pairing(only[0].id, "b", "a")]
    plan = draw("random", DrawRequest(entries=["a", "b"], motions=only, matches=1, history=history))
    assert any("a–b repeats motion fact-00" in f for f in plan.flags)


def test_a_pair_gets_the_motion_it_has_not_debated():
    fact = [m for m in MOTIONS if m.category == "fact"]
    history = [Pairing(m.id, side, other) for m in fact[:-1] for side, other in (("a", "b"), ("b", "a"))]
    for seed in range(5):
        plan = draw("round-robin", DrawRequest(entries=["a", "b"], motions=fact, seed=seed, history=history))
        assert {p.motion_id for p in plan.pairings} == {fact[-1].id}


def test_round_robin_twins_need_a_motion_fresh_to_the_pair():
    # One side of every motion is played already: no motion can hold both twins, so the pair repeats.
    history = [Pairing(m.id, "a", "b") for m in MOTIONS]
    plan = draw("round-robin", DrawRequest(entries=["a", "b"], motions=MOTIONS, history=history))
    assert any("a–b repeats motion" in f for f in plan.flags)


# --- round-robin -----------------------------------------------------------------------------------

@pytest.mark.parametrize("rounds", [1, 3])
def test_round_robin_pairs_every_two_entries_on_rounds_motions_both_ways(rounds):
    plan = make("round-robin", {"rounds": rounds})
    by_pair: dict[frozenset, list[Pairing]] = {}
    for p in plan.pairings:
        by_pair.setdefault(frozenset((p.pro, p.con)), []).append(p)
    assert set(by_pair) == {frozenset(c) for c in itertools.combinations(NAMES, 2)}
    for matches in by_pair.values():
        assert len(matches) == 2 * rounds
        motions = Counter(p.motion_id for p in matches)
        assert len(motions) == rounds and set(motions.values()) == {2}  # each motion twice...
        for motion in motions:
            sides = {(p.pro, p.con) for p in matches if p.motion_id == motion}
            assert len(sides) == 2  # ...once each way
    assert sorted({p.round for p in plan.pairings}) == list(range(1, rounds + 1))
    assert set(side_balance(plan.pairings).values()) == {0}


# --- random ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("count", [1, 7, 10, 21])
def test_random_spreads_matches_evenly_and_explains_any_repeated_pair(count):
    plan = make("random", {"matches": count})
    assert len(plan.pairings) == count
    played = Counter(e for p in plan.pairings for e in (p.pro, p.con))
    assert max(played.values()) - min(played.get(e, 0) for e in NAMES) <= 1
    pairs = Counter(frozenset((p.pro, p.con)) for p in plan.pairings)
    repeated = sorted("–".join(sorted(pair)) for pair, n in pairs.items() if n > 1)
    assert repeated == sorted(f.split(" meet ")[0] for f in plan.flags if " meet " in f)
    if count <= len(NAMES) // 2:  # one round's worth: no repeat can be needed
        assert repeated == []


def test_random_flags_pairs_that_must_meet_again():
    plan = make("random", {"matches": 5}, entries=["a", "b", "c"])
    assert Counter(frozenset((p.pro, p.con)) for p in plan.pairings).most_common(1)[0][1] == 2
    assert [f for f in plan.flags if "meet 2 times: 5 matches among 3 entries (3 pairs)" in f]


# --- swiss -----------------------------------------------------------------------------------------

def total_squared_gap(pairs, points) -> float:
    return sum((points[a] - points[b]) ** 2 for a, b in pairs)


def perfect_matchings(items):
    if not items:
        yield []
        return
    first, rest = items[0], items[1:]
    for k, other in enumerate(rest):
        for tail in perfect_matchings(rest[:k] + rest[k + 1:]):
            yield [(first, other), *tail]


def test_swiss_pairs_neighbours_in_the_standings():
    plan = make("swiss", {"rounds": 1}, entries=NAMES[:6])
    assert {frozenset((p.pro, p.con)) for p in plan.pairings} == {
        frozenset(("e5", "e4")), frozenset(("e3", "e2")), frozenset(("e1", "e0"))}
    assert {p.round for p in plan.pairings} == {1} and plan.byes == ()


@pytest.mark.parametrize("seed", range(6))
def test_swiss_pairing_is_a_minimum_cost_matching(seed):
    rng = random.Random(seed)
    names = [f"x{k}" for k in range(8)]
    points = {e: rng.choice([0, 0.5, 1, 1.5, 2, 3]) for e in names}
    plan = draw("swiss", DrawRequest(entries=names, motions=MOTIONS, rounds=1, seed=seed,
                                     standings={e: Standing(points=points[e], rated=True) for e in names}))
    best = min(total_squared_gap(m, points) for m in perfect_matchings(names))
    assert total_squared_gap([(p.pro, p.con) for p in plan.pairings], points) == best


@pytest.mark.parametrize("count", [6, 7, 22])
def test_swiss_repeats_no_pair_while_it_can_avoid_it(count):
    names = [f"x{k:02d}" for k in range(count)]
    rounds = 5
    plan = draw("swiss", DrawRequest(entries=names, motions=MOTIONS, rounds=rounds, seed=3,
                                     standings={e: Standing(points=k % 4, rated=True) for k, e in enumerate(names)}))
    pairs = Counter(frozenset((p.pro, p.con)) for p in plan.pairings)
    assert set(pairs.values()) == {1}
    assert len(plan.pairings) == rounds * (count // 2)
    for r in range(1, rounds + 1):  # each round: everyone once, but the bye
        playing = [e for p in plan.pairings if p.round == r for e in (p.pro, p.con)]
        assert len(playing) == len(set(playing)) == count - count % 2
    assert any("rounds 2–5 pair on the standings at scheduling time" in f for f in plan.flags)
    assert any("greedy" in f for f in plan.flags) == (count > scheduler.EXACT_MATCHING_LIMIT)


def test_swiss_avoids_pairs_from_the_history_and_flags_unavoidable_repeats():
    history = [Pairing("fact-00", "e5", "e4")]
    plan = make("swiss", {"rounds": 1}, entries=NAMES[2:6], history=history)
    assert frozenset(("e5", "e4")) not in {frozenset((p.pro, p.con)) for p in plan.pairings}
    plan = make("swiss", {"rounds": 2}, entries=["e0", "e1"])
    assert len(plan.pairings) == 2
    assert any("round 2: e0–e1 meet again (after 1 match): every pairing of the round repeats some pair" in f
               for f in plan.flags)


def test_swiss_byes_rotate_to_the_lowest_standing_entry_without_one():
    plan = make("swiss", {"rounds": 4})  # 7 entries, e0 lowest, then e1, ...
    assert plan.byes == ((1, "e0"), (2, "e1"), (3, "e2"), (4, "e3"))
    assert "round 1: bye for e0: odd number of entries, and e0 stands lowest among the entries without a bye yet" \
        in plan.flags
    for r, bye in plan.byes:
        assert bye not in {e for p in plan.pairings if p.round == r for e in (p.pro, p.con)}
    # Byes from earlier swiss plans count: e0 and e1 have had theirs.
    assert make("swiss", {"rounds": 1}, byes=["e0", "e1"]).byes == ((1, "e2"),)
    # Once everyone has had one, the fewest byes first.
    again = make("swiss", {"rounds": 1}, byes=NAMES + ["e0"])
    assert again.byes == ((1, "e1"),) and any("with the fewest byes (1 before)" in f for f in again.flags)


def test_swiss_gives_the_side_an_entry_has_played_less():
    history = [Pairing("fact-01", "e5", "e0"), Pairing("fact-02", "e5", "e1")]  # e5 has been Pro twice
    plan = make("swiss", {"rounds": 1}, entries=NAMES[2:6], history=history)
    (match,) = [p for p in plan.pairings if "e5" in (p.pro, p.con)]
    assert match.con == "e5"


# --- active ----------------------------------------------------------------------------------------

def test_active_probabilities_sum_to_one_and_favour_uncertain_close_pairs():
    rating = {"close-a": 1000, "close-b": 1010, "far": 1600, "sure-a": 1200, "sure-b": 1205}
    variance = {"close-a": 200 ** 2, "close-b": 200 ** 2, "far": 200 ** 2, "sure-a": 10 ** 2, "sure-b": 10 ** 2}
    p = scheduler.selection_probabilities(rating, variance)
    assert sum(p.values()) == pytest.approx(1)
    best = max(p, key=p.get)
    assert best == ("close-a", "close-b")
    assert p[("close-a", "close-b")] > p[("close-a", "far")]  # as uncertain, but far apart
    assert p[("close-a", "close-b")] > p[("sure-a", "sure-b")]  # as close, but certain


def test_active_records_each_draws_probability():
    stand = standings()
    plan = make("active", {"matches": 6}, standings=stand)
    assert len(plan.pairings) == 6
    first = plan.pairings[0]
    pair = tuple(sorted((first.pro, first.con)))
    expected = scheduler.selection_probabilities({e: s.rating for e, s in stand.items()},
                                                 {e: s.sd ** 2 for e, s in stand.items()})
    assert first.probability == pytest.approx(expected[pair])
    assert all(0 < p.probability <= 1 for p in plan.pairings)


def test_active_spreads_over_pairs_as_uncertainty_shrinks():
    plan = make("active", {"matches": 30}, standings={e: Standing(rated=True) for e in NAMES})
    assert len({frozenset((p.pro, p.con)) for p in plan.pairings}) > 10


def test_active_without_uncertainty_draws_uniformly_and_says_so():
    plan = make("active", {"matches": 3}, standings={e: Standing(sd=0.0, rated=True) for e in NAMES})
    assert len(plan.pairings) == 3
    assert all(p.probability == pytest.approx(1 / 21) for p in plan.pairings)
    assert "no pair has rating uncertainty left to shrink: pairs drawn uniformly" in plan.flags


# --- onboard ---------------------------------------------------------------------------------------

def test_onboard_opponents_span_the_rating_range():
    names = [f"r{k}" for k in range(9)] + ["new"]
    stand = {f"r{k}": Standing(rating=700 + 75 * k, rated=True) for k in range(9)}
    plan = draw("onboard", DrawRequest(entries=names, motions=MOTIONS, entry="new", matches=5, standings=stand))
    opponents = [p.con if p.pro == "new" else p.pro for p in plan.pairings]
    assert all("new" in (p.pro, p.con) for p in plan.pairings)
    assert opponents == ["r0", "r2", "r4", "r6", "r8"]  # evenly spaced, lowest and highest included
    assert abs(side_balance(plan.pairings)["new"]) <= 1 and plan.flags == ()


def test_onboard_plays_16_by_default_cycling_through_fewer_opponents():
    plan = make("onboard", {"entry": "e3"})
    assert len(plan.pairings) == scheduler.ONBOARD_MATCHES == 16
    opponents = Counter(p.con if p.pro == "e3" else p.pro for p in plan.pairings)
    assert set(opponents) == set(NAMES) - {"e3"} and set(opponents.values()) == {2, 3}
    assert "6 opponents for 16 matches: e3 meets each 2 or 3 times" in plan.flags
    assert side_balance(plan.pairings)["e3"] == 0
    assert all(abs(v) <= 1 for v in side_balance(plan.pairings).values())


def test_onboard_meets_only_rated_entries_when_there_are_any():
    stand = {"e1": Standing(rating=1100, rated=True), "e2": Standing(rating=900, rated=True)}
    plan = make("onboard", {"entry": "e0", "matches": 4}, standings=stand)
    assert {p.con if p.pro == "e0" else p.pro for p in plan.pairings} == {"e1", "e2"}
    unrated = make("onboard", {"entry": "e0", "matches": 4}, standings={})
    assert "no rated opponents yet: e0's opponents are drawn from every active entry" in unrated.flags


def test_onboard_entry_must_be_active():
    with pytest.raises(UserError, match="--entry 'ghost': not an active entry"):
        make("onboard", {"entry": "ghost"})


# --- arena schedule ---------------------------------------------------------------------------------

@pytest.fixture
def five(builds, tmp_path) -> Path:
    """The test's own copy of build_five's workspace (made once per test process)."""
    return builds.copy("scheduler:five", build_five, tmp_path / "ws").path


def build_five(path: Path) -> None:
    new_workspace(path, entries=[entry(e) for e in "abcde"], judges=[judge("j", model="offline/judge", runs=1)],
                  init="cli", opened=True)


def judged(path: Path, winners: dict[tuple[str, str], str]) -> None:
    """Store a round-robin whose matches are done with the given winner per (pro, con); others tie."""
    ws = open_workspace(path)
    try:
        for match_id in app.schedule(ws, "round-robin").match_ids:
            m = ws.store.match(match_id)
            outcome = winners.get((m.pro, m.con), "tie")
            ws.store.commit_match(match_id, [], [Verdict("j", 0, outcome)], [], simulated=True)
    finally:
        ws.close()


def show(path: Path) -> list[list[str]]:
    result = invoke("schedule", "--show", "-w", path)
    assert result.exit_code == 0, result.output
    return [line.split() for line in result.output.splitlines()]


def test_schedule_without_results_flags_flat_standings_and_stores_the_flags(five):
    result = invoke("schedule", "--format", "swiss", "-w", five)
    assert result.exit_code == 0, result.output
    assert "scheduled 2 swiss matches (m00001–m00002)" in result.output
    assert "flag: no results from judge 'j' yet: every entry stands at rating 1000 with 0 points" in result.output
    assert "flag: round 1: bye for" in result.output
    lines = show(five)
    # No active draw in the plan: no column p, which only active matches fill (issue 50: an empty column).
    assert lines[0] == ["id", "tournament", "format", "round", "status", "motion", "pro", "con"]
    assert not any(line[:1] == ["p:"] for line in lines)
    assert [line[1:4] for line in lines[1:3]] == [["1", "swiss", "1"]] * 2
    assert any("tournament 1 (swiss): round 1: bye for" in " ".join(line) for line in lines)


def test_active_schedule_stores_each_selection_probability(five):
    judged(five, {})
    result = invoke("schedule", "--format", "active", "--matches", "4", "--seed", "7", "-w", five)
    assert result.exit_code == 0, result.output
    ws = open_workspace(five)
    try:
        plan = app.schedule_show(ws)
    finally:
        ws.close()
    drawn = [r for r in plan["matches"] if r["format"] == "active"]
    assert len(drawn) == 4 and all(0 < r["probability"] <= 1 for r in drawn)
    assert all(r["status"] == "scheduled" for r in drawn)  # stored before anything runs
    table = show(five)
    assert table[0][-1] == "p"
    assert [line[-1] for line in table if line[2:3] == ["active"]] == [f"{r['probability']:.3f}" for r in drawn]
    # The round-robin's rows leave p empty, and a line under the table says what p is.
    assert all(len(line) == 8 for line in table if line[2:3] == ["round-robin"])
    explained = [" ".join(line) for line in table if line[:1] == ["p:"]]
    assert explained and "probability with which the active draw picked the match's pair" in explained[0]


def test_swiss_follows_the_default_judges_results(five):
    # a beats everyone, b everyone but a, ...: points a 4, b 3, c 2, d 1, e 0 (each with both sides).
    order = "abcde"
    judged(five, {(x, y): ("pro" if order.index(x) < order.index(y) else "con")
                  for x in order for y in order if x != y})
    ws = open_workspace(five)
    try:
        done = app.schedule(ws, "swiss", seed=1)
        pairs = [frozenset((r["pro"], r["con"])) for r in app.schedule_show(ws)["matches"]
                 if r["id"] in done.match_ids]
    finally:
        ws.close()
    # Everyone has met in the round-robin, so repeats are unavoidable: then closest points, bye to e.
    assert set(pairs) == {frozenset("ab"), frozenset("cd")}
    assert any("bye for e" in f for f in done.flags)


def test_onboard_through_the_cli_defaults_to_16_matches(five):
    judged(five, {})
    result = invoke("schedule", "--format", "onboard", "--entry", "c", "-w", five)
    assert result.exit_code == 0, result.output
    assert "scheduled 16 onboard matches" in result.output
    ws = open_workspace(five)
    try:
        rows = [r for r in app.schedule_show(ws)["matches"] if r["format"] == "onboard"]
    finally:
        ws.close()
    assert len(rows) == 16 and all("c" in (r["pro"], r["con"]) for r in rows)
    assert sum(r["pro"] == "c" for r in rows) == 8


@pytest.mark.parametrize("args, fragments", [
    (("--format", "onboard", "--entry", "ghost"), ("--entry", "unknown entry 'ghost'")),
    (("--format", "onboard", "--entry", "e"), ("--entry", "'e' is retired")),
    (("--format", "random", "--matches", "0"), ("--matches",)),
    (("--format", "swiss", "--matches", "2"), ("--matches does not apply to --format swiss",)),
])
def test_bad_schedule_values_exit_2_and_write_nothing(five, args, fragments):
    assert invoke("entry", "retire", "e", "-w", five).exit_code == 0
    before = snapshot(five)
    assert_user_error(invoke("schedule", *args, "-w", five), *fragments)
    assert snapshot(five) == before


def test_schedule_needs_two_active_entries(five):
    for name in "abcd":
        assert invoke("entry", "retire", name, "-w", five).exit_code == 0
    before = snapshot(five)
    assert_user_error(invoke("schedule", "--format", "random", "--matches", "2", "-w", five),
                      "at least 2 active entries, found 1")
    assert snapshot(five) == before


def test_stored_params_keep_options_flags_and_byes(five):
    assert invoke("schedule", "--format", "swiss", "--rounds", "2", "--seed", "4", "-w", five).exit_code == 0
    ws = open_workspace(five)
    try:
        (t,) = ws.store.tournaments()
        params = t.params
    finally:
        ws.close()
    assert t.format == "swiss" and t.seed == 4 and params["rounds"] == 2
    assert [b["round"] for b in params["byes"]] == [1, 2] and len({b["entry"] for b in params["byes"]}) == 2
    assert [p["round"] for p in params["pairings"]] == [1, 1, 2, 2]
    assert any("bye" in f for f in params["flags"])
