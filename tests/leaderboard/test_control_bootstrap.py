"""The controlled fit's bootstrap over cells (leaderboard/control_bootstrap.py) against the exact one it stands in
for: the same intervals within Monte Carlo error, coverage of a planted length effect, each replicate the minimum
of its cells' loss, the cells holding the data's moments, and where each is used."""
from __future__ import annotations

import numpy as np
import pytest

from leaderboard import bt, control, control_bootstrap, elo
from leaderboard.bootstrap import _multinomial
from leaderboard.ratings import rate
from tests.leaderboard.test_control import by_entry, planted


def design_of(frame, features=("words",), side=True):
    """The controlled Design of a results frame, its features the contrasts of the named count columns."""
    names = sorted(set(frame.entry_a) | set(frame.entry_b))
    a, b = frame.entry_a.map(names.index).to_numpy(), frame.entry_b.map(names.index).to_numpy()
    y, w = bt.soft_outcomes(frame.score_a, frame.score_b), bt.match_weights(frame.score_a, frame.score_b)
    X = np.column_stack([control.contrast(frame[f"{name}_a"], frame[f"{name}_b"]) for name in features])
    return control.design(a, b, y, w, X, len(names), side=side)


def spread_limits(d, replicates, start):
    """The 2.5th and 97.5th percentiles of the replicates about the fit they spread about, in Elo (per unit of x
    for the coefficients): (2, size)."""
    return np.percentile(d.per_unit(replicates - start) * elo.ELO_SCALE, [2.5, 97.5], axis=0)


@pytest.mark.parametrize("matches, coef", [(3000, 0.8), (600, 1.5)])
def test_the_cells_give_the_exact_bootstraps_intervals(matches, coef):
    # 12 entries, one writing 1.8x the words, a Pro advantage: every interval's width and limits, about the fit they
    # spread about, within Monte Carlo error of the exact replicates' (4,000 each: a 95% limit's own error is about
    # 1% of the interval's width, so a width's 1.5%, two widths' difference 2.2% and the largest of 14 some 6%;
    # 20,000 of each put every width within 1.6%).
    d = design_of(planted(matches=matches, coef=coef, side=0.3)[0])
    x = control.fit(d, ridge=0.0)[0]
    exact = spread_limits(d, *control_bootstrap.bootstrap(d, replicates=4000, seed=5, init=x, cells=False))
    cells = spread_limits(d, *control_bootstrap.bootstrap(d, replicates=4000, seed=6, init=x, cells=True))
    width = exact[1] - exact[0]
    np.testing.assert_allclose(cells[1] - cells[0], width, rtol=0.08)
    assert np.all(np.abs(cells - exact) <= 0.08 * width), ((cells - exact) / width).round(3)


def test_the_cells_cover_a_planted_length_effect():
    # The fair-ratings benchmark's tournaments, 40 of them: the length coefficient's 95% interval holds the planted
    # value in 90% or more, and the long-winded entry's controlled rating is within 15 Elo of its truth on average.
    planted_elo, held, errors = 1.5 * elo.ELO_SCALE, 0, []
    for seed in range(40):
        frame, truth = planted(seed=seed, matches=2000, coef=1.5)
        fit = rate(frame, control=("length",), bootstrap=300, seed=seed, weighting="none")
        length = fit["control"]["length"]
        held += length["ci_low"] <= planted_elo <= length["ci_high"]
        errors.append(by_entry(fit)["e05"]["rating"] - truth["e05"])
    assert held >= 36, held
    assert abs(np.mean(errors)) < 15, np.mean(errors)


@pytest.mark.parametrize("features", [("words",), ("words", "cites")])
def test_each_replicate_is_the_minimum_of_its_cells_loss(features):
    # The replicates of one batch, as the bootstrap draws them, each refitted by damped Newton in double to the
    # minimum of its cells' loss: the chord steps, in single precision, reach it within their tolerance.
    frame = planted(matches=1500, side=0.2)[0]
    rng = np.random.default_rng(7)
    frame["cites_a"], frame["cites_b"] = rng.integers(0, 6, len(frame)), rng.integers(0, 6, len(frame))
    d = design_of(frame, features)
    size = 30
    fitted, start = control_bootstrap.bootstrap(d, replicates=size, seed=11, cells=True)
    kinds = control_bootstrap._kinds(d)
    precision = d.precision_of(elo.PRIOR_PRECISION)[0]
    rng = np.random.default_rng(np.random.SeedSequence(11).spawn(1)[0])  # the one batch's generator
    draws = _multinomial([rng], kinds.counts, kinds.drawing, [size])
    centre = rng.normal(0.0, 1 / np.sqrt(precision), (size, d.size))
    cells = control_bootstrap._cells(kinds, draws, rng, d.n)
    newton = control_bootstrap._cell_newton(cells, np.arange(size), precision, centre, start)
    np.testing.assert_allclose(fitted, newton, atol=1e-4)
    assert np.ptp(fitted[:, -1]) > 0.1  # the coefficient moves from replicate to replicate


def test_the_data_cells_hold_each_cells_weight_mean_and_spread():
    frame = planted(matches=800)[0]
    rng = np.random.default_rng(8)
    frame["cites_a"], frame["cites_b"] = rng.integers(0, 6, len(frame)), rng.integers(0, 6, len(frame))
    d = design_of(frame, ("words", "cites"))
    kinds = control_bootstrap._kinds(d)
    cells = control_bootstrap._cells(kinds, kinds.counts[kinds.drawing[1], None].astype(np.float32), None, d.n)
    weight, points = cells.weight[0].reshape(-1), cells.points[0].reshape(4, 2, -1)  # 2K = 4 points, K = 2
    n = d.n
    for cell in np.unique(d.a * n + d.b)[:30]:
        here = d.a * n + d.b == cell
        w = d.count[here] * d.w[here]
        x = d.X[here]
        mean = w @ x / w.sum()
        spread = (x - mean).T @ np.diag(w) @ (x - mean) / w.sum()
        assert 4 * weight[cell] == pytest.approx(w.sum(), rel=1e-5)
        np.testing.assert_allclose(points[:, :, cell].mean(axis=0), mean, atol=1e-4)
        at = points[:, :, cell] - mean
        np.testing.assert_allclose(at.T @ at / 4, spread, atol=1e-4)
    # The outcome term is the data's own: sum w y (e_a - e_b, 1, x) over the matches.
    np.testing.assert_allclose(cells.scored[0], control._transposed(d, (d.count * d.w * d.y)[None])[0], rtol=1e-5)


def test_the_cells_serve_where_they_cost_less(monkeypatch):
    # Half as many distinct matches as cells or more: the cells; fewer (a big field barely played): exact. (72 rows
    # with counts 1 here: each planted match has its own words.)
    used = []
    monkeypatch.setattr(control_bootstrap, "_cells_bootstrap", lambda *args: used.append("cells"))
    monkeypatch.setattr(control, "bootstrap", lambda *args, **options: used.append("exact"))
    frame = planted(matches=72)[0]  # 12 entries: 144 cells
    d = design_of(frame)
    control_bootstrap.bootstrap(d)
    control_bootstrap.bootstrap(design_of(frame.iloc[:71]))
    # ... and without a feature the model is the plain one, which the exact replicates fit.
    control_bootstrap.bootstrap(control.design(d.a, d.b, d.y, d.w, np.zeros((len(d.a), 0)), d.n, side=True))
    assert used == ["cells", "exact", "exact"]


def test_the_fit_and_its_intervals_do_not_hang_on_the_order_of_the_rows():
    frame = planted(matches=1000)[0]
    shuffled = frame.sample(frac=1.0, random_state=3).reset_index(drop=True)
    assert rate(shuffled, control=("length",), bootstrap=200) == rate(frame, control=("length",), bootstrap=200)


def test_identical_matches_are_pooled_in_the_order_of_their_columns():
    rng = np.random.default_rng(9)
    rows = 5000
    a, b = rng.integers(0, 4, rows), rng.integers(0, 4, rows)
    y, w = rng.integers(0, 3, rows) / 2, np.where(rng.random(rows) < 0.5, 1.0, 0.5)
    X = rng.integers(-2, 3, (rows, 2)) / 4.0
    X[::7] *= -1  # -0.0 among the zeros: the same x as 0.0
    pooled = control._pooled(a, b, y, w, X)
    kinds, counts = np.unique(np.column_stack([a, b, y, w, X]), axis=0, return_counts=True)
    np.testing.assert_array_equal(np.column_stack([*pooled[:4], pooled[5]]), kinds)
    np.testing.assert_array_equal(pooled[4], counts)
