"""The judges' biases (`arena stats bias`): per judge and panelist, the Pro share and the longer side's share with
intervals that count a match's runs as one cluster, the length coefficient, and the preference for its own
family."""
from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TypedDict

from arena.analysis.outcomes import OUTCOMES
from arena.domain.records import JudgedVerdict, Outcome, Side

DECIDED: tuple[Side, ...] = ("pro", "con")


class Vote(TypedDict):
    """A run of a judge that did not fail, as bias_votes gives it."""

    judge: str
    panelist: str | None
    match_id: str
    pro: str
    con: str
    overall: Outcome
    words_pro: int
    words_con: int
    family: str | None
    family_pro: str | None
    family_con: str | None


class VoteResult(TypedDict):
    """A voter's votes on one match as a results row for a rating fit, with each side's words."""

    match_id: str
    entry_a: str
    entry_b: str
    score_a: float
    score_b: float
    words_a: int
    words_b: int


class LengthFit(TypedDict):
    """A length coefficient, in Elo per unit of (pro - con) / (pro + con), and its 95% interval (as
    leaderboard.ratings' Coefficient)."""

    coef: float
    ci_low: float
    ci_high: float


class SameFamily(TypedDict):
    """A voter's decided votes where one debater is of its family, its share for that side, and other voters'."""

    votes: int
    own_share: float
    others_share: float | None


class BiasRow(TypedDict):
    """`arena stats bias`: a judge's votes (panelist None) or one panelist's (None: no votes to count)."""

    judge: str
    panelist: str | None
    votes: int
    pro_share: float | None
    pro_ci_low: float | None
    pro_ci_high: float | None
    longer_share: float | None
    longer_ci_low: float | None
    longer_ci_high: float | None
    length_coef: float | None
    length_ci_low: float | None
    length_ci_high: float | None
    same_family: SameFamily | None


# The length fit of a voter's results rows: its coefficient, or None.
LengthFitter = Callable[[list[VoteResult]], LengthFit | None]


def wilson(successes: float, n: float, level: float = 0.95) -> tuple[float | None, float | None]:
    """The Wilson score interval of a share successes / n at `level`: centre (p + z²/2n) / (1 + z²/n), half-width
    z √(p(1 − p)/n + z²/4n²) / (1 + z²/n). Unlike p ± z √(p(1 − p)/n) it stays within [0, 1] and is not of zero
    width at 0 or 1 of n. (None, None) for n = 0."""
    if n <= 0:
        return None, None
    from statistics import NormalDist

    z = NormalDist().inv_cdf(0.5 + level / 2)
    p = successes / n
    scale = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / scale
    half = z * math.sqrt(max(p * (1 - p) / n + z * z / (4 * n * n), 0.0)) / scale
    return max(0.0, centre - half), min(1.0, centre + half)


def clustered_share(clusters: Sequence[tuple[int, int]],
                    level: float = 0.95) -> tuple[float | None, float | None, float | None]:
    """(share, low, high) of (hits, trials) per cluster: the share Σ hits / Σ trials and its Wilson interval
    (wilson) on the effective number of trials, the trials shrunk by the design effect of their clusters.

    A judge's R runs of one match (the clusters here are matches) are not independent votes: runs that always agree
    are one vote counted R times. The design effect is the clustered variance of the share, M/(M − 1) Σ_m
    (hits_m − p trials_m)² / N², over the variance of N independent trials, p(1 − p)/N; the effective trials are
    N / that, kept between the number of clusters M (runs that always agree: one vote per match) and N (runs as
    independent as separate matches). With one cluster, or a share of 0 or 1 (whose variance says nothing of how
    the runs agree), the effective trials are M. (None, None, None) without trials."""
    clusters = [(h, n) for h, n in clusters if n > 0]
    total = sum(n for _, n in clusters)
    if not total:
        return None, None, None
    hits = sum(h for h, _ in clusters)
    p, m = hits / total, len(clusters)
    effective = float(m)
    if m >= 2 and 0 < p < 1:
        clustered = m / (m - 1) * sum((h - p * n) ** 2 for h, n in clusters) / total ** 2
        independent = p * (1 - p) / total
        effective = min(float(total), max(float(m), total * independent / clustered if clustered > 0 else total))
    low, high = wilson(p * effective, effective, level)
    return p, low, high


def _no_family(panelist: str) -> str | None:
    return None


def bias_votes(verdicts: Iterable[JudgedVerdict], words: Mapping[str, tuple[int, int]],
               entry_families: Mapping[str, str], judge_families: Mapping[str, str | None],
               panelist_family: Callable[[str], str | None] = _no_family) -> list[Vote]:
    """Every run of a judge that did not fail, as a vote.

    verdicts: stored verdicts (an extra's "panelist", if any, names the model or person whose run it is: a jury's
    or an imported panel's); words: match → (Pro's words, Con's) over its speeches; entry_families: entry → its
    model's family (arena.domain.families); judge_families: judge → its model's family, None for a judge with no
    one model (people, a jury, an imported panel); panelist_family(panelist): a named panelist's family (or
    None). A vote's family is its panelist's where it names one, else its judge's."""
    out: list[Vote] = []
    for v in verdicts:
        said = v.verdict
        if said.error or said.overall not in OUTCOMES or said.overall is None:
            continue
        named = said.extra.get("panelist")
        panelist = str(named) if named is not None and named != "" else None
        family = panelist_family(panelist) if panelist is not None else judge_families.get(said.judge)
        pro_words, con_words = words.get(v.match_id, (0, 0))
        out.append({"judge": said.judge, "panelist": panelist, "match_id": v.match_id, "pro": v.pro,
                    "con": v.con, "overall": said.overall, "words_pro": pro_words, "words_con": con_words,
                    "family": family or None, "family_pro": entry_families.get(v.pro) or None,
                    "family_con": entry_families.get(v.con) or None})
    return out


def vote_results(votes: Iterable[Vote]) -> list[VoteResult]:
    """A voter's votes as results rows, one per match, for a rating fit: entry_a Pro, entry_b Con, the scores (a
    vote gives its winner 1 point and a tie 0.5 to each, as a judge's runs do) and each side's words."""
    rows: dict[str, VoteResult] = {}
    for v in votes:
        row = rows.setdefault(v["match_id"], {"match_id": v["match_id"], "entry_a": v["pro"], "entry_b": v["con"],
                                              "score_a": 0.0, "score_b": 0.0, "words_a": v["words_pro"],
                                              "words_b": v["words_con"]})
        row["score_a"] += {"pro": 1.0, "tie": 0.5}.get(v["overall"], 0.0)
        row["score_b"] += {"con": 1.0, "tie": 0.5}.get(v["overall"], 0.0)
    return list(rows.values())


def _own_side(vote: Vote) -> Side | None:
    """The side whose debater is of the vote's family, when exactly one is."""
    family = {"pro": vote["family_pro"], "con": vote["family_con"]}
    sides = [s for s in DECIDED if vote["family"] and family[s] == vote["family"]]
    return sides[0] if len(sides) == 1 else None


def _neutral(vote: Vote) -> bool:
    """A vote by a voter of neither debater's family (or of none known: people)."""
    return not vote["family"] or vote["family"] not in (vote["family_pro"], vote["family_con"])


def _voter(vote: Vote) -> tuple[str, str | None]:
    """Whose vote it is: its judge's, or a panelist's of its judge."""
    return vote["judge"], vote["panelist"]


def same_family(mine: Sequence[Vote], votes: Mapping[str, Sequence[Vote]]) -> SameFamily | None:
    """A voter's preference for its own family: over its decided votes on matches where exactly one debater is of
    its family, the share for that debater's side (own_share), and the share for the same side of the decided votes
    the other voters (another judge, or another panelist of its own judge) of neither debater's family gave on the
    same matches (others_share: None without any). None when the voter has no such vote. mine: the voter's votes
    (bias_votes): a judge's own, or all its panelists'; votes: match → every vote there (a vote's own voter's are
    left out)."""
    own = [(v, side) for v in mine if v["overall"] in DECIDED and (side := _own_side(v))]
    if not own:
        return None
    pairs = dict.fromkeys((v["match_id"], side, _voter(v)) for v, side in own)
    neutral = [(u["overall"] == side) for match_id, side, voter in pairs for u in votes.get(match_id, ())
               if _voter(u) != voter and u["overall"] in DECIDED and _neutral(u)]
    return {"votes": len(own), "own_share": sum(v["overall"] == side for v, side in own) / len(own),
            "others_share": sum(neutral) / len(neutral) if neutral else None}


def bias_row(judge: str, panelist: str | None, mine: Sequence[Vote], votes: Mapping[str, Sequence[Vote]],
             fit: LengthFitter | None = None) -> BiasRow:
    """One row of `arena stats bias`: a voter's (a judge's, or one panelist's of a judge) decided votes (ties left
    out), the Pro share and the share won by the side with more words (on the matches whose sides' words differ),
    each with its clustered Wilson interval (clustered_share: a match's votes are one cluster); the length
    coefficient, fit(vote_results(mine)) → {coef, ci_low, ci_high} or None, left None without a fit or when no match
    it voted on has sides of different lengths; and same_family (same_family: votes, match → every vote there)."""
    by_match: dict[str, list[Vote]] = {}
    for v in mine:
        by_match.setdefault(v["match_id"], []).append(v)
    decided = [[v for v in vs if v["overall"] in DECIDED] for vs in by_match.values()]
    pro = clustered_share([(sum(v["overall"] == "pro" for v in vs), len(vs)) for vs in decided])
    longer = clustered_share([(sum(v["overall"] == ("pro" if v["words_pro"] > v["words_con"] else "con") for v in vs),
                               len(vs)) for vs in decided if vs and vs[0]["words_pro"] != vs[0]["words_con"]])
    length = None
    if fit is not None and any(v["words_pro"] != v["words_con"] for v in mine):
        length = fit(vote_results(mine))
    return {"judge": judge, "panelist": panelist, "votes": sum(map(len, decided)),
            "pro_share": pro[0], "pro_ci_low": pro[1], "pro_ci_high": pro[2],
            "longer_share": longer[0], "longer_ci_low": longer[1], "longer_ci_high": longer[2],
            "length_coef": length["coef"] if length else None, "length_ci_low": length["ci_low"] if length else None,
            "length_ci_high": length["ci_high"] if length else None, "same_family": same_family(mine, votes)}


def bias_stats(votes: Iterable[Vote], judges: Sequence[str] = (), *, fit: LengthFitter | None = None,
               only: str | None = None) -> list[BiasRow]:
    """`arena stats bias`: a row per judge (bias_row of all its votes, panelist None) and after it one per panelist
    its votes name (by name), from votes as bias_votes gives them. judges: names to list first, in order (configured
    judges, even with no votes); only: that judge's rows alone (others' votes still count as others). fit: the
    length fit of a voter's results rows (bias_row)."""
    votes = list(votes)
    by_judge: dict[str, list[Vote]] = {}
    by_match: dict[str, list[Vote]] = {}
    for v in votes:
        by_judge.setdefault(v["judge"], []).append(v)
        by_match.setdefault(v["match_id"], []).append(v)

    rows: list[BiasRow] = []
    for name in dict.fromkeys([*judges, *sorted(by_judge)]):
        if only is not None and name != only:
            continue
        mine = by_judge.get(name, [])
        rows.append(bias_row(name, None, mine, by_match, fit))
        for panelist in sorted({v["panelist"] for v in mine if v["panelist"] is not None}):
            rows.append(bias_row(name, panelist, [v for v in mine if v["panelist"] == panelist], by_match, fit))
    return rows
