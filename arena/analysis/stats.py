"""Statistics over stored matches, as pure functions of rows the store hands over."""
from __future__ import annotations

import json
import math
from itertools import combinations
from typing import Any, Iterable, Mapping, Sequence

from arena.domain.contradictions import CONTRADICTION, contradiction
from arena.domain.formats import BUILTIN
from arena.domain.records import CATEGORIES, Verdict, score
from arena.analysis.tally import judged_runs

OUTCOMES = ("pro", "con", "tie")


def agent_stats(speeches: Iterable[dict]) -> list[dict]:
    """Per debater kind, stage and internal role: mean calls per speech and tokens per call.

    The shape of the Agent4Debate paper's Tables 8 and 9. Each speech is
    {"debater", "stage", "agents": {role: {"calls", "prompt_tokens", "completion_tokens", "cost"}}}.
    A role missing from a speech ran 0 times in it, so an ablation shows as fewer calls per speech. Stages come
    in speaking order: the built-in formats' (the default's first), then any other in the order first seen.
    """
    groups: dict[tuple[str, str], list[dict]] = {}
    for s in speeches:
        groups.setdefault((s["debater"], s["stage"]), []).append(s["agents"])
    order = dict.fromkeys([*(stage for fmt in BUILTIN.values() for stage in fmt.stages), *(s for _, s in groups)])
    rank = {stage: k for k, stage in enumerate(order)}
    out = []
    for (debater, stage), agents in sorted(groups.items(), key=lambda g: (g[0][0], rank[g[0][1]])):
        n = len(agents)
        for role in dict.fromkeys(role for usage in agents for role in usage):  # first-seen order: call order
            ran = [usage[role] for usage in agents if role in usage]
            calls = sum(u["calls"] for u in ran)
            costs = [u["cost"] for u in ran]
            out.append({
                "debater": debater, "stage": stage, "role": role, "speeches": n,
                "calls_per_speech": calls / n,
                "completion_tokens_per_call": _per(sum(u["completion_tokens"] for u in ran), calls),
                "prompt_tokens_per_call": _per(sum(u["prompt_tokens"] for u in ran), calls),
                "cost_per_speech": None if None in costs else sum(costs) / n,
            })
    return out


def _per(total: float, calls: int) -> float | None:
    return total / calls if calls else None


def match_outcome(score_pro: float, score_con: float) -> str:
    """A judge's match-level outcome, the majority of its runs: pro if score_pro > score_con, con if less, else tie."""
    return "pro" if score_pro > score_con else "con" if score_pro < score_con else "tie"


def agreement(a: Sequence[str], b: Sequence[str]) -> float | None:
    """Agent4Debate's consistency of two judges' outcomes on the same matches.

    agreement = (1/n) Σ_i [a_i = b_i or a_i = tie or b_i = tie]: consistent when both pick the same
    side, and a tie is consistent with anything. None for no matches.
    """
    if len(a) != len(b):
        raise ValueError("agreement needs two equally long sequences of outcomes")
    if not a:
        return None
    return sum(x == y or "tie" in (x, y) for x, y in zip(a, b)) / len(a)


def cohen_kappa(a: Sequence[str], b: Sequence[str], categories: Sequence[str] = OUTCOMES) -> float | None:
    """Cohen's kappa of two raters' labels of the same items.

    κ = (p_o − p_e) / (1 − p_e), with p_o = (1/n) Σ_i [a_i = b_i] the observed agreement and
    p_e = Σ_k (n_a(k)/n)(n_b(k)/n) the agreement expected by chance from each rater's label
    frequencies. None when undefined: no items, or p_e = 1 (both raters used one same label throughout).
    """
    if len(a) != len(b):
        raise ValueError("kappa needs two equally long sequences of labels")
    n = len(a)
    if n == 0:
        return None
    p_o = sum(x == y for x, y in zip(a, b)) / n
    p_e = sum((list(a).count(k) / n) * (list(b).count(k) / n) for k in categories)
    return None if p_e == 1 else (p_o - p_e) / (1 - p_e)


def side_bias(pro_wins: int, con_wins: int) -> tuple[float | None, float | None]:
    """(Pro win rate, p-value): rate = pro_wins / (pro_wins + con_wins), ties left out, and the
    two-sided exact binomial test of that count against 0.5. (None, None) with nothing decided."""
    decided = pro_wins + con_wins
    if decided == 0:
        return None, None
    from scipy.stats import binomtest  # lazy: scipy costs import time the other statistics do not need

    return pro_wins / decided, float(binomtest(pro_wins, decided, 0.5, alternative="two-sided").pvalue)


def runs_by_judge(verdicts: Iterable[dict]) -> dict[str, dict[str, list[dict]]]:
    """judge → match → its verdict rows there (its runs)."""
    runs: dict[str, dict[str, list[dict]]] = {}
    for v in verdicts:
        runs.setdefault(v["judge"], {}).setdefault(v["match_id"], []).append(v)
    return runs


def judge_outcomes(runs: Mapping[str, Mapping[str, list[dict]]]) -> dict[str, dict[str, str]]:
    """judge → match → the judge's outcome there, the majority of its runs (match_outcome of summed points).

    runs: rows {judge, match_id, overall, error} as runs_by_judge groups them. A match with a failed run
    has no outcome: the judge does not rate it. A judge of people's runs are its ballots, so its outcome
    is the majority of the ballots cast, on every match with at least one.
    """
    return {name: {match_id: match_outcome(*score([Verdict(name, i, r["overall"]) for i, r in enumerate(rs)]))
                   for match_id, rs in matches.items() if not any(r["error"] for r in rs)}
            for name, matches in runs.items()}


def _field(row: Mapping, key: str) -> Any:
    """A verdict row's JSON column (dimensions, extra) as data, whether the store's text or already decoded."""
    value = row.get(key)
    return (json.loads(value) if isinstance(value, str) else value) or {}


def identical_runs(matches: Mapping[str, list[dict]]) -> float | None:
    """The share of a judge's judged matches with R ≥ 2 (two runs or more, none failed) whose runs all gave the
    same verdict, overall and per dimension, with the same rationale: runs that repeat one another, evidence
    counted R times over. None with no such match. matches: match → its verdict rows (runs_by_judge)."""
    judged = [rs for rs in matches.values() if len(rs) >= 2 and not any(r["error"] for r in rs)]
    if not judged:
        return None
    said = lambda r: (r["overall"], json.dumps(_field(r, "dimensions"), sort_keys=True),  # noqa: E731
                      r.get("rationale") or "")
    return sum(len({said(r) for r in rs}) == 1 for rs in judged) / len(judged)


def self_contradictory(row: Mapping) -> bool:
    """Whether a verdict row is a self-contradiction (arena.domain.contradictions): a stored verdict whose dimensions'
    winners contradict the scores its extra holds, or a run that failed because its answers kept doing so."""
    extra = _field(row, "extra")
    if row.get("error"):
        return bool(extra.get("self_contradiction")) or f"{CONTRADICTION}:" in row["error"]
    return bool(contradiction(_field(row, "dimensions"), extra.get("scores") or {}))


def compare(a: Mapping[str, str], b: Mapping[str, str]) -> dict:
    """Two raters' outcomes (match → pro|con|tie) over the matches both rated: {matches, agreement, kappa}."""
    both = [m for m in a if m in b]
    x, y = [a[m] for m in both], [b[m] for m in both]
    return {"matches": len(both), "agreement": agreement(x, y), "kappa": cohen_kappa(x, y)}


def ballot_outcomes(verdicts: Iterable[dict], people: Mapping[str, Mapping[int, str]]) -> dict[str, dict[str, dict]]:
    """judge → person → match → that person's ballot (overall), for the judges of people.

    verdicts: rows {judge, match_id, overall, error}, and run for a judge of people; people: judge of
    people → run → person. A run no name is known for is left out.
    """
    out: dict[str, dict[str, dict[str, str]]] = {judge: {} for judge in people}
    for v in verdicts:
        person = people[v["judge"]].get(v["run"]) if v["judge"] in people else None
        if person is not None and not v["error"]:
            out[v["judge"]].setdefault(person, {})[v["match_id"]] = v["overall"]
    return out


def people_pairs(ballots: Mapping[str, Mapping[str, Mapping[str, str]]],
                 people: Mapping[str, Mapping[int, str]]) -> list[dict]:
    """For each judge of people and each pair of its people (in run order): agreement and kappa over the
    matches both cast a ballot on (compare). ballots as ballot_outcomes gives them."""
    rows = []
    for judge, names in people.items():
        cast = ballots.get(judge, {})
        for a, b in combinations([names[run] for run in sorted(names)], 2):
            rows.append({"judge": judge, "a": a, "b": b, **compare(cast.get(a, {}), cast.get(b, {}))})
    return rows


def people_vs_judges(ballots: Mapping[str, Mapping[str, Mapping[str, str]]], people: Mapping[str, Mapping[int, str]],
                     outcomes: Mapping[str, Mapping[str, str]], judges: Sequence[str]) -> list[dict]:
    """Each person of each judge of people against each of judges (match outcomes as judge_outcomes gives
    them): agreement and kappa over the matches the person cast a ballot on and that judge rated."""
    return [{"judge": judge, "person": names[run], "vs": other,
             **compare(ballots.get(judge, {}).get(names[run], {}), outcomes.get(other, {}))}
            for judge, names in people.items() for run in sorted(names) for other in judges]


def judge_stats(verdicts: Iterable[dict], calls: Iterable[dict], judges: Sequence[str] = (),
                people: Mapping[str, Mapping[int, str]] | None = None) -> dict:
    """Per judge and per pair of judges, from verdict rows {judge, match_id, overall, error} (and run, dimensions,
    rationale, extra) of completed matches and ledger rows {judge, match_id, calls, cost} (one per judge and match).

    A judge's outcome on a match is the majority of its runs (judge_outcomes); it has none on a
    match where a run failed, as it does not rate that match. Side bias and pairs count matches,
    not runs: the R runs of one match are not independent samples. Calls and cost per match are
    means over the judge's matches with ledger rows naming it (calls recorded before the ledger
    named judges cannot be attributed), counting every call there, retries and rejudging included;
    cost is None when any call's price is unknown. identical_runs is the share of its judged matches with R ≥ 2
    whose runs all said the same (identical_runs); self_contradictions counts its runs whose stated winner
    contradicts their own scores, stored or failed for it (self_contradictory).
    judges: names to list first, in order (configured judges, even with no verdicts yet).
    people: judge of people → run → person. For them, "people" compares each pair of a judge's
    people (people_pairs) and "people_vs_judges" each person with every judge not of people.
    """
    verdicts = list(verdicts)
    people = people or {}
    runs = runs_by_judge(verdicts)
    names = list(dict.fromkeys([*judges, *sorted(runs)]))
    ledger: dict[str, dict[str, dict]] = {}
    for c in calls:
        ledger.setdefault(c["judge"], {})[c["match_id"]] = c

    outcomes = judge_outcomes(runs)
    rows = []
    for name in names:
        matches = runs.get(name, {})
        decided = list(outcomes.get(name, {}).values())
        counts = {k: decided.count(k) for k in OUTCOMES}
        rate, p = side_bias(counts["pro"], counts["con"])
        spent = [ledger[name][m] for m in matches if m in ledger.get(name, {})]
        costs = [c["cost"] for c in spent]
        rows.append({
            "judge": name, "matches": len(matches), "runs": sum(map(len, matches.values())),
            "failed_runs": sum(bool(r["error"]) for rs in matches.values() for r in rs),
            "pro_wins": counts["pro"], "con_wins": counts["con"], "ties": counts["tie"],
            "pro_win_rate": rate, "side_bias_p": p,
            "calls_per_match": sum(c["calls"] for c in spent) / len(spent) if spent else None,
            "cost_per_match": sum(costs) / len(costs) if costs and None not in costs else None,
            "identical_runs": identical_runs(matches),
            "self_contradictions": sum(self_contradictory(r) for rs in matches.values() for r in rs),
        })

    pairs = [{"a": a, "b": b, **compare(outcomes.get(a, {}), outcomes.get(b, {}))} for a, b in combinations(names, 2)]
    ballots = ballot_outcomes(verdicts, people)
    return {"judges": rows, "pairs": pairs, "people": people_pairs(ballots, people),
            "people_vs_judges": people_vs_judges(ballots, people, outcomes, [n for n in names if n not in people])}


def side_stats(matches: Iterable[dict], results: Iterable[dict], entries: Sequence[str] = ()) -> dict:
    """Side balance and side bias, as debate tab software reports them.

    matches: completed matches {pro, con}, counted per entry as Pro and Con sides. results: one
    judge's overall scores {motion, score_pro, score_con} of the matches it judged without a failed
    run. Per motion and overall: matches; the Pro score share Σ score_pro / Σ (score_pro + score_con)
    (the judge's points, a tie half to each side); Pro wins, Con wins and ties by each match's
    majority outcome; and p_value, the two-sided exact binomial test of Pro wins among decided
    matches against 0.5 (side_bias): whole matches, since the R runs of one match are not
    independent samples, so rounding points would overstate the evidence.
    entries: names to list first, in order (active entries, even with no matches yet).
    """
    sides: dict[str, dict] = {}
    for name in entries:
        sides.setdefault(name, {"entry": name, "pro": 0, "con": 0})
    for m in matches:
        for side in ("pro", "con"):
            sides.setdefault(m[side], {"entry": m[side], "pro": 0, "con": 0})[side] += 1
    listed = list(dict.fromkeys(entries))
    rows = [sides[n] for n in listed] + [sides[n] for n in sorted(sides) if n not in listed]

    by_motion: dict[str, list[dict]] = {}
    everything = []
    for r in results:
        by_motion.setdefault(r["motion"], []).append(r)
        everything.append(r)
    return {"entries": rows,
            "motions": [{"motion": motion, **_side_share(by_motion[motion])} for motion in sorted(by_motion)],
            "overall": _side_share(everything)}


def _side_share(results: list[dict]) -> dict:
    points = sum(r["score_pro"] + r["score_con"] for r in results)
    outcomes = [match_outcome(r["score_pro"], r["score_con"]) for r in results]
    counts = {k: outcomes.count(k) for k in OUTCOMES}
    return {"matches": len(results), "pro_share": sum(r["score_pro"] for r in results) / points if points else None,
            "pro_wins": counts["pro"], "con_wins": counts["con"], "ties": counts["tie"],
            "p_value": side_bias(counts["pro"], counts["con"])[1]}


# --- the Agent4Debate paper's tables ------------------------------------------------------------------------

PAPER_COLUMNS = ("source", "language", "argument", "overall")  # the paper's S, L, A and O
SCOPES = ("excluding_human_debaters", "all")  # Table 6's two columns: matches without a human debater, and all


def points_of_three(rows: Iterable[dict]) -> dict[str, dict]:
    """One judge's points on each match as the Agent4Debate paper counts them (Tables 1, 2 and 5).

    rows: the judge's verdict rows {match_id, pro, con, category, judge, run, overall, dimensions, error}. Each
    run gives the winner of a dimension (source, language, argument) or of the match (overall) 1 point and a
    tie 0.5 to each side; a side's points out of 3 are 3 × its share of the points given, which are its points
    when R = 3 as in the paper. A match with a failed run is left out, as the ratings leave it out; a column no
    run decided has no points. Returns match → {"pro", "con", "category", "points": {column: (pro, con)}}.
    """
    out = {}
    for match_id, (first, verdicts) in judged_runs(rows).items():
        points = {}
        for column in PAPER_COLUMNS:
            pro, con = score(verdicts, column)
            if pro + con > 0:
                points[column] = (3 * pro / (pro + con), 3 * con / (pro + con))
        out[match_id] = {"pro": first["pro"], "con": first["con"], "category": first["category"], "points": points}
    return out


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _mean_points(judged: Mapping[str, dict], people: Mapping[str, dict], groups) -> dict:
    """group → {"matches", S, L, A, O, "people_matches", "people_overall"}: the mean points out of 3 of the sides
    groups(match, side) puts in each group, under the judge (judged) and, overall, under the people (people),
    both as points_of_three gives them; a column is the mean over the matches that have it."""
    tally: dict = {}

    def cell(group) -> dict:
        return tally.setdefault(group, {"matches": 0, "people_matches": 0, "people_overall": [],
                                        **{c: [] for c in PAPER_COLUMNS}})

    for m in judged.values():
        for i, side in enumerate(("pro", "con")):
            for group in groups(m, side):
                row = cell(group)
                row["matches"] += 1
                for column, pair in m["points"].items():
                    row[column].append(pair[i])
    for m in people.values():
        if "overall" in m["points"]:
            for i, side in enumerate(("pro", "con")):
                for group in groups(m, side):
                    row = cell(group)
                    row["people_matches"] += 1
                    row["people_overall"].append(m["points"]["overall"][i])
    return {group: {"matches": r["matches"], **{c: _mean(r[c]) for c in PAPER_COLUMNS},
                    "people_matches": r["people_matches"], "people_overall": _mean(r["people_overall"])}
            for group, r in tally.items()}


def paper_points(judged: Mapping[str, dict], people: Mapping[str, dict], debaters: Mapping[str, str],
                 entries: Sequence[str] = ()) -> dict:
    """Mean S/L/A/O points out of 3 (points_of_three of the judge: judged; of a judge of people: people, overall
    only), as the Agent4Debate paper's Tables 1, 2 and 5 give them, over the matches each judged.

    "entries": per entry, over all its matches (category "all") and per motion category; "pairs": per entry
    against each opponent it met (head to head, Tables 1 and 2); "kinds": per debater kind against each other
    kind, over the matches between them (Table 5: human against agent4debate). debaters: entry → debater kind.
    entries: names to list first, in order; the rest follow by name.
    """
    def opponent(m: dict, side: str) -> str:
        return m["con"] if side == "pro" else m["pro"]

    def kinds(m: dict, side: str) -> list[tuple[str, str]]:
        ours, theirs = debaters.get(m[side], ""), debaters.get(opponent(m, side), "")
        return [(ours, theirs)] if ours != theirs else []

    per_entry = _mean_points(judged, people, lambda m, side: [(m[side], "all"), (m[side], m["category"])])
    listed = list(dict.fromkeys([*entries, *sorted({name for name, _ in per_entry})]))
    categories = ["all", *CATEGORIES, *sorted({c for _, c in per_entry} - {"all", *CATEGORIES})]
    pairs = _mean_points(judged, people, lambda m, side: [(m[side], opponent(m, side))])
    by_kind = _mean_points(judged, people, kinds)
    return {"entries": [{"entry": name, "debater": debaters.get(name, ""), "category": c, **per_entry[name, c]}
                        for name in listed for c in categories if (name, c) in per_entry],
            "pairs": [{"entry": a, "opponent": b, **pairs[a, b]} for a, b in sorted(pairs)],
            "kinds": [{"debater": a, "opponent": b, **by_kind[a, b]} for a, b in sorted(by_kind)]}


def _consistent(a: Mapping[str, str], b: Mapping[str, str], matches: Sequence[str]) -> dict:
    return {"matches": len(matches), "consistency": agreement([a[m] for m in matches], [b[m] for m in matches])}


def consistency_split(verdicts: Iterable[dict], people: Mapping[str, Mapping[int, str]], judges: Sequence[str],
                      human_matches: set[str]) -> dict:
    """The Agent4Debate paper's Table 6: consistency (agreement) over the matches without a human debater
    (human_matches: those with one) and over all matches.

    verdicts: rows {judge, match_id, overall, error, run}; people: judge of people → run → person; judges: the
    other judges to compare, in order. "judges": each judge against each judge of people, their outcomes
    (judge_outcomes: majorities of runs, and of ballots) over the matches both have one on. "among_people": per
    judge of people, pooled over every pair of its people and every match both cast a ballot on, with the
    number of matches that have two ballots or more and of such comparisons.
    """
    verdicts = list(verdicts)
    outcomes = judge_outcomes(runs_by_judge(verdicts))
    ballots = ballot_outcomes(verdicts, people)

    def scoped(matches: Iterable[str]) -> dict[str, list[str]]:
        matches = list(matches)
        return {"excluding_human_debaters": [m for m in matches if m not in human_matches], "all": matches}

    rows = []
    for judge in judges:
        for crowd in people:
            ours, theirs = outcomes.get(judge, {}), outcomes.get(crowd, {})
            rows.append({"judge": judge, "people": crowd,
                         **{scope: _consistent(ours, theirs, ms)
                            for scope, ms in scoped(m for m in ours if m in theirs).items()}})
    among = []
    for crowd, names in people.items():
        cast = ballots.get(crowd, {})
        pairs = list(combinations([cast.get(names[run], {}) for run in sorted(names)], 2))
        row: dict[str, Any] = {"people": crowd}
        for scope, matches in scoped(dict.fromkeys(m for c in cast.values() for m in c)).items():
            compared = [(a[m], b[m]) for m in matches for a, b in pairs if m in a and m in b]
            row[scope] = {"matches": sum(sum(m in c for c in cast.values()) >= 2 for m in matches),
                          "comparisons": len(compared),
                          "consistency": agreement([x for x, _ in compared], [y for _, y in compared])}
        among.append(row)
    return {"judges": rows, "among_people": among}


# --- the judges' biases (`arena stats bias`) -----------------------------------------------------------------

DECIDED = ("pro", "con")


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


def clustered_share(clusters: Sequence[tuple[int, int]], level: float = 0.95) -> tuple[float | None, ...]:
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


def bias_votes(verdicts: Iterable[Mapping], words: Mapping[str, tuple[int, int]], entry_families: Mapping[str, str],
               judge_families: Mapping[str, str | None], panelist_family=lambda panelist: None) -> list[dict]:
    """Every run of a judge that did not fail, as a vote: {judge, panelist, match_id, pro, con, overall (pro, con or
    tie), words_pro, words_con, family, family_pro, family_con}.

    verdicts: rows {judge, match_id, pro, con (the entries), overall, error, extra (its "panelist", if any, names the
    model or person whose run it is: a jury's or an imported panel's)}; words: match → (Pro's words, Con's) over its
    speeches; entry_families: entry → its model's family (arena.domain.families); judge_families: judge → its model's
    family, None for a judge with no one model (people, a jury, an imported panel); panelist_family(panelist): a
    named panelist's family (or None). A vote's family is its panelist's where it names one, else its judge's."""
    out = []
    for v in verdicts:
        if v["error"] or v["overall"] not in OUTCOMES:
            continue
        panelist = _field(v, "extra").get("panelist")
        panelist = str(panelist) if panelist is not None and panelist != "" else None
        family = panelist_family(panelist) if panelist is not None else judge_families.get(v["judge"])
        pro_words, con_words = words.get(v["match_id"], (0, 0))
        out.append({"judge": v["judge"], "panelist": panelist, "match_id": v["match_id"], "pro": v["pro"],
                    "con": v["con"], "overall": v["overall"], "words_pro": pro_words, "words_con": con_words,
                    "family": family or None, "family_pro": entry_families.get(v["pro"]) or None,
                    "family_con": entry_families.get(v["con"]) or None})
    return out


def vote_results(votes: Iterable[Mapping]) -> list[dict]:
    """A voter's votes as results rows, one per match, for a rating fit: {match_id, entry_a (Pro), entry_b (Con),
    score_a, score_b (a vote gives its winner 1 point and a tie 0.5 to each, as a judge's runs do), words_a,
    words_b}."""
    rows: dict[str, dict] = {}
    for v in votes:
        row = rows.setdefault(v["match_id"], {"match_id": v["match_id"], "entry_a": v["pro"], "entry_b": v["con"],
                                              "score_a": 0.0, "score_b": 0.0, "words_a": v["words_pro"],
                                              "words_b": v["words_con"]})
        row["score_a"] += {"pro": 1.0, "tie": 0.5}.get(v["overall"], 0.0)
        row["score_b"] += {"con": 1.0, "tie": 0.5}.get(v["overall"], 0.0)
    return list(rows.values())


def _own_side(vote: Mapping) -> str | None:
    """The side whose debater is of the vote's family, when exactly one is."""
    sides = [s for s in DECIDED if vote["family"] and vote[f"family_{s}"] == vote["family"]]
    return sides[0] if len(sides) == 1 else None


def _neutral(vote: Mapping) -> bool:
    """A vote by a voter of neither debater's family (or of none known: people)."""
    return not vote["family"] or vote["family"] not in (vote["family_pro"], vote["family_con"])


def _voter(vote: Mapping) -> tuple[str, str | None]:
    """Whose vote it is: its judge's, or a panelist's of its judge."""
    return vote["judge"], vote["panelist"]


def same_family(mine: Sequence[Mapping], votes: Mapping[str, Sequence[Mapping]]) -> dict | None:
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


def bias_row(judge: str, panelist: str | None, mine: Sequence[Mapping], votes: Mapping[str, Sequence[Mapping]],
             fit=None) -> dict:
    """One row of `arena stats bias`: a voter's (a judge's, or one panelist's of a judge) decided votes (ties left
    out), the Pro share and the share won by the side with more words (on the matches whose sides' words differ),
    each with its clustered Wilson interval (clustered_share: a match's votes are one cluster); the length
    coefficient, fit(vote_results(mine)) → {coef, ci_low, ci_high} or None, left None without a fit or when no match
    it voted on has sides of different lengths; and same_family (same_family: votes, match → every vote there)."""
    by_match: dict[str, list[Mapping]] = {}
    for v in mine:
        by_match.setdefault(v["match_id"], []).append(v)
    decided = [[v for v in vs if v["overall"] in DECIDED] for vs in by_match.values()]
    pro = clustered_share([(sum(v["overall"] == "pro" for v in vs), len(vs)) for vs in decided])
    longer = clustered_share([(sum(v["overall"] == ("pro" if v["words_pro"] > v["words_con"] else "con") for v in vs),
                               len(vs)) for vs in decided if vs and vs[0]["words_pro"] != vs[0]["words_con"]])
    length = None
    if fit is not None and any(v["words_pro"] != v["words_con"] for v in mine):
        length = fit(vote_results(mine))
    length = length or {}
    return {"judge": judge, "panelist": panelist, "votes": sum(map(len, decided)),
            "pro_share": pro[0], "pro_ci_low": pro[1], "pro_ci_high": pro[2],
            "longer_share": longer[0], "longer_ci_low": longer[1], "longer_ci_high": longer[2],
            "length_coef": length.get("coef"), "length_ci_low": length.get("ci_low"),
            "length_ci_high": length.get("ci_high"), "same_family": same_family(mine, votes)}


def bias_stats(votes: Iterable[Mapping], judges: Sequence[str] = (), *, fit=None,
               only: str | None = None) -> list[dict]:
    """`arena stats bias`: a row per judge (bias_row of all its votes, panelist None) and after it one per panelist
    its votes name (by name), from votes as bias_votes gives them. judges: names to list first, in order (configured
    judges, even with no votes); only: that judge's rows alone (others' votes still count as others). fit: the
    length fit of a voter's results rows (bias_row)."""
    votes = list(votes)
    by_judge: dict[str, list[Mapping]] = {}
    by_match: dict[str, list[Mapping]] = {}
    for v in votes:
        by_judge.setdefault(v["judge"], []).append(v)
        by_match.setdefault(v["match_id"], []).append(v)

    rows = []
    for name in dict.fromkeys([*judges, *sorted(by_judge)]):
        if only is not None and name != only:
            continue
        mine = by_judge.get(name, [])
        rows.append(bias_row(name, None, mine, by_match, fit))
        for panelist in sorted({v["panelist"] for v in mine if v["panelist"] is not None}):
            rows.append(bias_row(name, panelist, [v for v in mine if v["panelist"] == panelist], by_match, fit))
    return rows
