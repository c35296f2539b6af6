"""`arena run --until` (arena.app.runner.until, arena.app.commands.plan.run_until): the criterion read and checked,
the board and where it stands, the pairs the criterion waits on and the active draw among them, the loop on the
rating-level simulator; then runs on offline workspaces: batches spent on the pairs the criterion waits on, stored
as active tournaments with their probabilities, and an entry whose matches wait for a person's speech left out of
new batches. The command line's side (summary line, JSON, limits, a kill, people's ballots, the dry run) is in
tests/arena/app/cli/test_run_until_cmd.py."""
from __future__ import annotations

import json
import re
from collections import Counter

import pytest

from arena.app import commands as app
from arena.app.commands import open_workspace
from arena.app.runner.until import (Board, Criterion, board, focus, parse_criterion, said, settlement, simulate,
                                    Z)
from arena.base.errors import UserError
from arena.domain import scheduler
from arena.domain.records import Motion
from leaderboard.elo import BASE_RATING, PRIOR_SD
from tests.support.helpers import entry, judge, new_workspace, query

TOP1, TOP2 = Criterion("top", 1.0), Criterion("top", 2.0)


# --- the criterion ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, kind, value, shown", [
    ("top=3", "top", 3.0, "top=3"), (" TOP = 1 ", "top", 1.0, "top=1"),
    ("separability=0.8", "separability", 0.8, "separability=0.8"), ("separability=1", "separability", 1.0,
                                                                     "separability=1")])
def test_a_criterion_is_read_from_its_text_and_said_as_given(text, kind, value, shown):
    criterion = parse_criterion(text)
    assert (criterion.kind, criterion.value, str(criterion)) == (kind, value, shown)


@pytest.mark.parametrize("text, fragment", [
    ("top=0", "K must be at least 1"), ("top=x", "'x' is not a whole number"), ("top=1.5", "not a whole number"),
    ("separability=1.5", "X must be a share"), ("separability=0", "X must be a share"),
    ("separability=lots", "not a number"), ("foo=1", "expected top=K"), ("top", "expected top=K")])
def test_a_bad_criterion_is_a_user_error_naming_until(text, fragment):
    with pytest.raises(UserError) as raised:
        parse_criterion(text)
    assert str(raised.value).startswith(f"--until {text!r}") and fragment in str(raised.value)


# --- the board and where it stands -----------------------------------------------------------------------------

def row(name: str, rating: float, low: float, high: float) -> dict:
    return {"entry": name, "rating": rating, "ci_low": low, "ci_high": high}


def test_the_board_is_best_first_with_unrated_entries_at_the_prior_and_retired_ones_left_out():
    rows = [row("b", 1200, 1150, 1250), row("gone", 1100, 1000, 1200), row("a", 900, 850, 950)]
    b = board(rows, ["a", "b", "c", "d"])  # gone: retired since; c and d: no results yet
    assert b.entries == ("b", "c", "d", "a")
    half = Z * PRIOR_SD
    assert (b.rating[1], b.low[1], b.high[1]) == (BASE_RATING, BASE_RATING - half, BASE_RATING + half)
    assert b.low[3] == 850 and b.high[0] == 1250


# a and b overlap, b and c, c and d; the other three pairs are apart.
BOARD = Board(("a", "b", "c", "d"), (1300.0, 1200.0, 1000.0, 950.0), (1250.0, 1100.0, 900.0, 850.0),
              (1350.0, 1260.0, 1150.0, 1050.0))


def lows(*values: float) -> Board:
    return Board(BOARD.entries, BOARD.rating, values, BOARD.high)


def test_top_k_holds_when_each_of_the_k_best_is_apart_from_every_entry_below_it():
    one = settlement(TOP1, BOARD)
    assert not one.met and (one.settled, one.boundaries) == (0, 1)  # a's low 1250 is under b's high 1260
    assert one.separability == {"pairs": 6, "separated": 3, "share": 0.5}
    assert settlement(TOP1, lows(1270, 1100, 900, 850)).met
    two = settlement(TOP2, lows(1270, 1100, 900, 850))
    assert not two.met and (two.settled, two.boundaries) == (1, 2)  # b's low 1100 is under c's high 1150
    assert settlement(TOP2, lows(1270, 1160, 900, 850)).met
    # b above c but not above d, whose interval reaches higher though it is ranked lower: not settled.
    reaching = Board(BOARD.entries, BOARD.rating, (1270.0, 1160.0, 900.0, 850.0), (1350.0, 1260.0, 1150.0, 1170.0))
    assert not settlement(TOP2, reaching).met and settlement(TOP2, reaching).settled == 1


def test_separability_holds_once_that_share_of_pairs_is_apart():
    assert settlement(Criterion("separability", 0.5), BOARD).met
    assert not settlement(Criterion("separability", 0.51), BOARD).met
    lone = Board(("a",), (1000.0,), (900.0,), (1100.0,))
    assert not settlement(Criterion("separability", 0.1), lone).met  # no pairs: no share to reach


def test_focus_is_the_overlapping_pairs_the_criterion_waits_on():
    assert focus(TOP1, BOARD) == [("a", "b")]
    assert focus(TOP2, BOARD) == [("a", "b"), ("b", "c")]
    # Nearest to parting first (gap over the two half-widths: b–c 200/205, a–b 100/130, c–d 50/225), twice as many
    # as the share needs: 0.9 needs all 6 pairs, so 3 more, and takes every overlapping pair; 0.6 needs 4, so one
    # more, and leaves out c–d, too close to part soon.
    assert focus(Criterion("separability", 0.9), BOARD) == [("b", "c"), ("a", "b"), ("c", "d")]
    assert focus(Criterion("separability", 0.6), BOARD) == [("b", "c"), ("a", "b")]
    assert focus(Criterion("separability", 0.5), BOARD) == []  # met
    assert focus(TOP1, lows(1270, 1100, 900, 850)) == []


def test_the_end_of_a_run_is_said_in_words():
    base = {"criterion": "top=2", "batches": 3, "settled": 2, "boundaries": 2,
            "separability": {"pairs": 6, "separated": 5, "share": 5 / 6}}
    assert said({**base, "met": True, "reason": "met", "matches": 84}) == "until top=2: met after 84 matches"
    assert said({**base, "met": False, "reason": "max matches", "matches": 1}) == (
        "until top=2: not met: max matches reached (1 match)")
    assert "await people's speeches" in said({**base, "met": False, "reason": "waiting", "matches": 9})
    line = settlement(TOP2, BOARD).line(12)
    assert line == "top=2: 0 of 2 boundaries settled · separability 0.50 · 12 matches"


# --- the draw among the focus pairs ----------------------------------------------------------------------------

MOTIONS = [Motion(id=f"x{k}", text=f"motion {k}", category="policy", language="en") for k in range(3)]


def test_the_active_draw_cycles_through_the_focus_pairs_each_with_probability_one_over_their_number():
    pairs = [("a", "b"), ("a", "c"), ("b", "d")]
    request = scheduler.DrawRequest(entries=["a", "b", "c", "d", "e"], motions=MOTIONS, seed=3, matches=7,
                                    focus=pairs)
    drawn = scheduler.draw("active", request).pairings
    assert len(drawn) == 7 and {p.probability for p in drawn} == {1 / 3}
    met = [tuple(sorted((p.pro, p.con))) for p in drawn]
    assert all(sorted(met[k:k + 3]) == pairs for k in (0, 3))  # each cycle of 3 holds each pair once
    assert met[6] in pairs
    unknown = scheduler.DrawRequest(entries=["a", "b"], motions=MOTIONS, seed=3, matches=2, focus=[("a", "z")])
    with pytest.raises(UserError, match="none of the focus pairs"):
        scheduler.draw("active", unknown)


def test_the_simulated_loop_settles_a_planted_top_and_stops_there():
    planted = {"a": 1500.0, "b": 1000.0, "c": 900.0, "d": 500.0}
    sim = simulate(planted, TOP1, replicates=100, max_matches=400)
    assert sim.met and sim.board.entries[0] == "a" and settlement(TOP1, sim.board).met
    capped = simulate(planted, Criterion("separability", 1.0), replicates=100, max_matches=10)
    assert capped.matches == 10 and not capped.met  # b and c, 100 points apart, do not part in 10 matches


# --- runs on offline workspaces --------------------------------------------------------------------------------

def tournaments(path) -> list[tuple[int, dict, list[tuple[str, str]]]]:
    """Each stored tournament: its id, params and the pairs of its matches in plan order."""
    pairs: dict[int, list[tuple[str, str]]] = {}
    for t, pro, con in query(path, "SELECT tournament_id, pro, con FROM matches ORDER BY seq"):
        pairs.setdefault(t, []).append((pro, con))
    return [(t, json.loads(params), pairs.get(t, [])) for t, params in
            query(path, "SELECT id, params FROM tournaments ORDER BY id")]


def test_a_top_1_run_spends_its_batches_on_the_leader_and_records_each_draw(tmp_path):
    """Six entries, e0 clearly best: batches after the first meet e0 every match and the bottom two rarely. About
    6 s (some 25 to 70 offline matches by the simulator's draws, a refit after each batch of 6)."""
    strengths = (3.0, 1.0, 0.5, 0.0, -1.0, -1.5)
    path = new_workspace(tmp_path / "ws", arena={"judge_runs": 1}, judges=[judge("j")],
                         entries=[entry(f"e{k}", strength=s) for k, s in enumerate(strengths)])
    ws = open_workspace(path)
    try:
        result = app.run_until(ws, TOP1, max_matches=120, progress=lambda line: None)
    finally:
        ws.close()
    assert result["until"]["met"] and result["until"]["reason"] == "met", result["until"]
    stored = tournaments(path)
    assert len(stored) == result["until"]["batches"] >= 3 and all(len(p) == 6 for _, _, p in stored)
    later = Counter(e for _, _, pairs in stored[1:] for pair in pairs for e in pair)
    # top=1 focuses on the leader's overlapping pairs: e0 plays every later match, the bottom two rarely (uniform
    # batches would meet all alike, e0 in a third of them)
    assert later["e0"] == 6 * len(stored[1:]) and (later["e4"] + later["e5"]) * 2 < later["e0"], later
    for _, params, pairs in stored:
        assert params["until"] == "top=1" and params["matches"] == 6
        (among,) = [int(n) for flag in params["flags"] for n in re.findall(r"^top=1: drawn among (\d+) pair", flag)]
        assert [p["probability"] for p in params["pairings"]] == [1 / among] * 6
        assert set.intersection(*(set(p) for p in pairs))  # top=1 waits on the board's leader against the rest
    shown = app.schedule_show(open_workspace(path))
    assert all(m["format"] == "active" and m["probability"] is not None for m in shown["matches"])


def test_an_entry_whose_matches_wait_for_a_persons_speech_is_left_out_of_new_batches(tmp_path):
    """zed writes its speeches on the web: its match of the first batch waits, later batches leave zed out and go on
    among the others, and the run stops once only zed's pairs are left (or meets). About 4 s."""
    path = new_workspace(tmp_path / "ws", arena={"judge_runs": 1}, judges=[judge("j")],
                         entries=[entry("e0", strength=3.0), entry("e1"), entry("e2", strength=-3.0),
                                  entry("zed", debater="human", model="human/zed", params={"via": "web"})])
    heard: list[str] = []
    ws = open_workspace(path)
    try:
        result = app.run_until(ws, TOP1, max_matches=40, progress=heard.append)
    finally:
        ws.close()
    until = result["until"]
    assert until["reason"] in ("waiting", "met") and until["met"] == (until["reason"] == "met")
    assert result["awaiting"] >= 1
    waiting = [line for line in heard if line.startswith("waiting for people's speeches")]
    assert waiting == ["waiting for people's speeches on the web from zed: new batches leave it out until they are "
                       "in ('arena debaters status')"]  # once, naming zed alone (not the entries zed meets)
    first, *later = tournaments(path)
    assert any("zed" in pair for pair in first[2])
    assert later and not [pair for _, _, pairs in later for pair in pairs if "zed" in pair]
    assert {s for (s,) in query(path, "SELECT status FROM matches WHERE 'zed' IN (pro, con)")} == {"awaiting"}
