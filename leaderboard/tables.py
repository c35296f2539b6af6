"""The JSON shapes of the rating fit's tables: what leaderboard.ratings.rate and win_matrices and
leaderboard.history.history return. Declared apart from the fit so that naming them costs no numpy or pandas import
(the app's JSON shapes, arena.app.shapes.figures, build on them)."""

from __future__ import annotations

from typing import Literal, NotRequired, TypedDict


class Rating(TypedDict):
    """An entry's rating (Elo) with its 95% interval, Rank (UB) and record."""

    entry: str
    rating: float
    ci_low: float
    ci_high: float
    matches: int
    wins: int
    ties: int
    losses: int
    rank_ub: int
    provisional: bool


class Separability(TypedDict):
    """Of the board's entry pairs, how many have 95% intervals that do not overlap, and their share (None: no pair)."""

    pairs: int
    separated: int
    share: float | None


class SideFit(TypedDict):
    """The Pro advantage (Elo) and its 95% interval."""

    pro_advantage: float
    ci_low: float
    ci_high: float


class Coefficient(TypedDict):
    """A style feature's coefficient, in Elo per unit of (pro - con) / (pro + con), and its 95% interval."""

    coef: float
    ci_low: float
    ci_high: float


class FitSettings(TypedDict):
    """What a fit was asked: of how many matches, with which intervals, weighting, seed, side model and controls."""

    matches: int
    ci: Literal["bootstrap", "sandwich"]
    bootstrap: int
    weighting: Literal["paper", "none"]
    seed: int
    side: Literal["fit", "ignore"]
    control: NotRequired[list[str]]


class FitMeta(FitSettings):
    """How a fit was made (its settings), and whether the weak prior was used (some MLE did not exist)."""

    prior: bool


class Fit(TypedDict):
    """rate's table (side None: ignored or no matches; control: only when controlled); separability: of its rows'
    intervals (leaderboard.confidence)."""

    ratings: list[Rating]
    separability: Separability
    side: SideFit | None
    control: NotRequired[dict[str, Coefficient] | None]
    meta: FitMeta


class WinMatrices(TypedDict):
    """win_matrices': entries in name order, and per (row, column) the predicted P(row beats column), the observed
    mean score share (None: they never met) and the match count."""

    entries: list[str]
    predicted: list[list[float]]
    observed_share: list[list[float | None]]
    counts: list[list[int]]


class Snapshot(Fit):
    """leaderboard.history's: the fit of the first `matches` matches, the last of them last_match."""

    matches: int
    last_match: str
