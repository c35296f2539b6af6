"""leaderboard.confidence: which entries' 95% intervals are apart (separability), and which of the top-k boundaries
are settled, against hand counts; and the separability a rating fit reports, against its planted structure."""
from __future__ import annotations

import itertools

import pandas as pd
import pytest

from leaderboard.confidence import apart, separability, settled_boundaries
from leaderboard.ratings import rate

# Four intervals, hand-counted: A and B overlap (25-35 within 30-40), C and D overlap (10 <= 12); every pair across
# the two is apart. 4 of 6 pairs.
LOW = [30.0, 25.0, 10.0, 0.0]
HIGH = [40.0, 35.0, 20.0, 12.0]


@pytest.mark.parametrize("low, high, expected", [
    pytest.param([], [], {"pairs": 0, "separated": 0, "share": None}, id="n=0"),
    pytest.param([5.0], [9.0], {"pairs": 0, "separated": 0, "share": None}, id="n=1"),
    pytest.param([10.0, 0.0], [20.0, 5.0], {"pairs": 1, "separated": 1, "share": 1.0}, id="n=2-apart"),
    pytest.param([0.0, 5.0], [10.0, 15.0], {"pairs": 1, "separated": 0, "share": 0.0}, id="n=2-overlapping"),
    # Bounds that meet are not apart: one's low must lie above the other's high.
    pytest.param([0.0, 10.0], [10.0, 20.0], {"pairs": 1, "separated": 0, "share": 0.0}, id="n=2-touching"),
    pytest.param([0.0, 0.0], [10.0, 10.0], {"pairs": 1, "separated": 0, "share": 0.0}, id="n=2-identical"),
    pytest.param([3.0, 3.0], [3.0, 3.0], {"pairs": 1, "separated": 0, "share": 0.0}, id="n=2-same-point"),
    pytest.param(LOW, HIGH, {"pairs": 6, "separated": 4, "share": 4 / 6}, id="n=4"),
    # Three entries all level (tied intervals) beside one far above: only its three pairs are apart.
    pytest.param([0.0, 0.0, 0.0, 50.0], [10.0, 10.0, 10.0, 60.0], {"pairs": 6, "separated": 3, "share": 0.5},
                 id="n=4-three-tied"),
])
def test_separability_is_the_hand_count_of_pairs_whose_intervals_do_not_overlap(low, high, expected):
    assert separability(low, high) == expected


def test_separability_does_not_depend_on_the_order_of_the_entries():
    for order in itertools.permutations(range(4)):
        assert separability([LOW[i] for i in order], [HIGH[i] for i in order])["separated"] == 4


def test_apart_is_symmetric_and_no_entry_is_apart_from_itself():
    matrix = apart(LOW, HIGH)
    assert (matrix == matrix.T).all() and not matrix.diagonal().any()
    assert matrix.tolist() == [[False, False, True, True], [False, False, True, True],
                               [True, True, False, False], [True, True, False, False]]


@pytest.mark.parametrize("rating, low, high, k, expected", [
    pytest.param([], [], [], 3, [], id="n=0"),
    pytest.param([7.0], [5.0], [9.0], 1, [], id="n=1: no entry below"),
    pytest.param([15.0, 2.0], [10.0, 0.0], [20.0, 5.0], 1, [True], id="n=2-apart"),
    pytest.param([5.0, 10.0], [0.0, 5.0], [10.0, 15.0], 1, [False], id="n=2-overlapping"),
    pytest.param([15.0, 2.0], [10.0, 0.0], [20.0, 5.0], 0, [], id="k=0"),
    # By rating A 35, B 30, C 15, D 6: A's low 30 is under B's high 35; B's low 25 above C's 20 and D's 12;
    # C's low 10 under D's high 12. At most n - 1 boundaries, whatever k.
    pytest.param([35.0, 30.0, 15.0, 6.0], LOW, HIGH, 1, [False], id="n=4-k=1"),
    pytest.param([35.0, 30.0, 15.0, 6.0], LOW, HIGH, 3, [False, True, False], id="n=4-k=3"),
    pytest.param([35.0, 30.0, 15.0, 6.0], LOW, HIGH, 10, [False, True, False], id="n=4-k-past-the-end"),
    # Entries given in any order are ranked by rating first: D, B, A, C is the same board.
    pytest.param([6.0, 30.0, 35.0, 15.0], [0.0, 25.0, 30.0, 10.0], [12.0, 35.0, 40.0, 20.0], 3, [False, True, False],
                 id="n=4-shuffled"),
    # A boundary clears every entry below, not only the next: A (50-60) is above B (40-45), but the wide C (30-70)
    # ranked under B reaches above A's low.
    pytest.param([55.0, 42.0, 35.0], [50.0, 40.0, 30.0], [60.0, 45.0, 70.0], 2, [False, False], id="wide-below"),
])
def test_settled_boundaries_are_the_hand_count(rating, low, high, k, expected):
    assert settled_boundaries(rating, low, high, k) == expected


def test_tied_ratings_keep_the_input_order():
    # Equal ratings: the first given ranks first, so its boundary compares it with the second's interval.
    assert settled_boundaries([5.0, 5.0], [0.0, 20.0], [10.0, 30.0], 1) == [False]
    assert settled_boundaries([5.0, 5.0], [20.0, 0.0], [30.0, 10.0], 1) == [True]


# --- the fit's separability ---------------------------------------------------------------------------------------

def two_clusters() -> pd.DataFrame:
    """a and b level with each other (2-1 either way), c and d likewise; a and b beat c and d 3-0 but one match in
    seven: by hand, the four pairs across the clusters are apart and the two within them are not."""
    rows: list[tuple[str, str, int, int]] = []
    for x, y in (("a", "b"), ("c", "d")):
        rows += [(x, y, 2, 1)] * 10 + [(y, x, 2, 1)] * 10
    for x, y in itertools.product("ab", "cd"):
        rows += [(x, y, 3, 0)] * 6 + [(y, x, 0, 3)] * 6 + [(x, y, 1, 2)] * 2
    frame = pd.DataFrame(rows, columns=["entry_a", "entry_b", "score_a", "score_b"])
    return frame.assign(match_id=[f"m{k}" for k in range(len(frame))])


@pytest.mark.parametrize("ci", ["sandwich", "bootstrap"])
def test_a_fit_reports_the_separability_of_its_rows(ci):
    fit = rate(two_clusters(), ci=ci, bootstrap=200, seed=1)
    assert list(fit)[:2] == ["ratings", "separability"]
    assert fit["separability"] == {"pairs": 6, "separated": 4, "share": 4 / 6}
    # The same count read off the rows, pair by pair.
    rows = fit["ratings"]
    counted = sum(r["ci_low"] > s["ci_high"] or s["ci_low"] > r["ci_high"] for r, s in itertools.combinations(rows, 2))
    assert counted == 4
    low = {r["entry"]: r["ci_low"] for r in rows}
    high = {r["entry"]: r["ci_high"] for r in rows}
    assert all(low[x] <= high[y] and low[y] <= high[x] for x, y in (("a", "b"), ("c", "d")))  # the two that overlap


def test_a_fit_without_matches_has_no_pair():
    empty = two_clusters().iloc[:0]
    assert rate(empty, ci="sandwich")["separability"] == {"pairs": 0, "separated": 0, "share": None}
    assert rate(empty, ci="sandwich", control=("length",))["separability"]["share"] is None


def test_a_controlled_fit_reports_its_own_separability():
    # Speeches of one length throughout: the length term explains nothing, and the clusters stand as before.
    fit = rate(two_clusters().assign(words_a=100, words_b=100), ci="sandwich", control=("length",))
    assert list(fit)[:2] == ["ratings", "separability"]
    assert fit["separability"] == {"pairs": 6, "separated": 4, "share": 4 / 6}
