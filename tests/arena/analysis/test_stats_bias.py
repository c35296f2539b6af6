"""`arena stats bias`: per judge and per panelist, the Pro share, the longer side's share, the length coefficient and
the same-family preference; the pure functions on votes with known answers, then the command on a workspace."""
from __future__ import annotations

import json
import random

import pytest

from arena.app import commands as app
from arena.domain.records import Verdict
from arena.analysis.stats import bias_stats, bias_votes, clustered_share, same_family, vote_results, wilson
from arena.analysis.tally import match_features
from tests.support.verdicts import judged
from leaderboard.control import LOOSE
from tests.support.helpers import entry, invoke, judge, new_workspace, play_round_robin

KEYS = ["judge", "panelist", "votes", "pro_share", "pro_ci_low", "pro_ci_high", "longer_share", "longer_ci_low",
        "longer_ci_high", "length_coef", "length_ci_low", "length_ci_high", "same_family"]


# --- intervals ---------------------------------------------------------------------------------------------------

def test_wilson_interval_textbook_values():
    # 9 of 10: Wilson's 95% interval is 0.596 to 0.982 (Newcombe 1998, Table I, method 3).
    assert wilson(9, 10) == (pytest.approx(0.5958, abs=1e-4), pytest.approx(0.9821, abs=1e-4))
    low, high = wilson(0, 10)
    assert low == pytest.approx(0.0, abs=1e-12) and high == pytest.approx(0.2775, abs=1e-4)  # not 0 wide at 0 of 10
    assert wilson(0, 0) == (None, None)


def test_clustered_share_counts_runs_that_always_agree_as_one_vote_per_match():
    # Ten matches, three runs each, all three agreeing: as informative as ten votes, not thirty.
    agreeing = [(3, 3)] * 7 + [(0, 3)] * 3
    share, low, high = clustered_share(agreeing)
    assert share == pytest.approx(0.7)
    assert (low, high) == (pytest.approx(wilson(7, 10)[0]), pytest.approx(wilson(7, 10)[1]))
    # Runs as varied within a match as between matches count one by one.
    varied = [(2, 3), (1, 3)] * 5 + [(3, 3), (0, 3)] * 5
    share, low, high = clustered_share(varied)
    assert share == 0.5 and high - low < wilson(10, 20)[1] - wilson(10, 20)[0]
    assert low >= wilson(15, 30)[0] - 1e-9  # never narrower than the thirty runs taken as independent
    assert clustered_share([]) == (None, None, None)


# --- votes with known answers ------------------------------------------------------------------------------------

def verdict(judge_name, match_id, pro, con, overall, panelist=None, error=None):
    return judged(match_id, judge_name, overall, error=error, pro=pro, con=con,
                  extra={"panelist": panelist} if panelist else {})


def schedule(matches: int, seed: int = 1):
    """A round-robin of four entries of equal strength, each match with random speech lengths: (id, pro, con,
    Pro's words, Con's words)."""
    rng = random.Random(seed)
    names = ["a", "b", "c", "d"]
    pairs = [(p, c) for p in names for c in names if p != c]
    return [(f"m{k:03d}", *pairs[k % len(pairs)], rng.randint(300, 900), rng.randint(300, 900))
            for k in range(matches)]


def test_a_judge_that_always_votes_the_longer_side_has_a_longer_share_of_one_and_a_large_length_coefficient():
    played = schedule(96)
    rows = [verdict("long", m, p, c, "pro" if wp > wc else "con") for m, p, c, wp, wc in played if wp != wc]
    words = {m: (wp, wc) for m, _, _, wp, wc in played}
    (row,) = bias_stats(bias_votes(rows, words, {}, {}), fit=app._length_fit)
    assert list(row) == KEYS and row["panelist"] is None and row["votes"] == len(rows)
    assert row["longer_share"] == 1.0 and row["longer_ci_low"] > 0.9
    assert row["length_coef"] > 400 and row["length_ci_low"] > 0  # Elo per unit of x: far from none
    assert 0.3 < row["pro_share"] < 0.7 and row["pro_ci_low"] < 0.5 < row["pro_ci_high"]


def test_a_pro_biased_judge_has_a_pro_share_whose_interval_leaves_out_one_half():
    played = schedule(60)
    # Three runs a match, Pro on 4 of 5 matches (all three runs), Con on the rest: 80% Pro.
    rows = [verdict("pro-lean", m, p, c, "con" if k % 5 == 0 else "pro") for k, (m, p, c, _, _) in enumerate(played)
            for _ in range(3)]
    rows.append(verdict("pro-lean", "m000", "a", "b", None, error="timeout"))  # a failed run is no vote
    rows.append(verdict("pro-lean", "m001", "a", "c", "tie"))  # a tie is no decided vote
    words = {m: (wp, wc) for m, _, _, wp, wc in played}
    (row,) = bias_stats(bias_votes(rows, words, {}, {}))
    assert row["votes"] == 180
    assert row["pro_share"] == pytest.approx(0.8) and row["pro_ci_low"] > 0.5
    # The runs of a match always agree: the interval is that of 60 votes, not of 180.
    assert (row["pro_ci_low"], row["pro_ci_high"]) == (pytest.approx(wilson(48, 60)[0]), pytest.approx(wilson(48, 60)[1]))
    assert row["length_coef"] is None  # no fit asked for


def test_verdicts_naming_a_panelist_give_a_row_per_panelist_after_their_judges():
    words = {"m1": (500, 400), "m2": (400, 500), "m3": (450, 450)}
    sides = {"m1": ("a", "b"), "m2": ("b", "a"), "m3": ("a", "b")}
    rows = [verdict("panel", m, *sides[m], outcome, panelist=who)
            for m, votes in {"m1": ("pro", "pro", "con"), "m2": ("pro", "con", "con"), "m3": ("pro", "con", "tie")}.items()
            for who, outcome in zip(("owl", "heron", "finch"), votes)]
    rows += [verdict("solo", m, *sides[m], "con") for m in words]
    out = bias_stats(bias_votes(rows, words, {}, {}), ["solo", "panel", "absent"])
    assert [(r["judge"], r["panelist"], r["votes"]) for r in out] == [
        ("solo", None, 3), ("panel", None, 8), ("panel", "finch", 2), ("panel", "heron", 3), ("panel", "owl", 3),
        ("absent", None, 0)]
    solo, panel, finch, heron, owl = out[:5]
    assert owl["pro_share"] == 1.0 and heron["pro_share"] == pytest.approx(1 / 3) and finch["pro_share"] == 0.0
    # Longer side: m1 is Pro's, m2 Con's, m3 level (left out).
    assert owl["longer_share"] == 0.5 and heron["longer_share"] == 1.0 and finch["longer_share"] == 0.5
    assert panel["longer_share"] == pytest.approx(4 / 6)
    assert out[-1]["pro_share"] is None and out[-1]["same_family"] is None
    assert [r["panelist"] for r in bias_stats(bias_votes(rows, words, {}, {}), only="panel")] == [
        None, "finch", "heron", "owl"]


def test_vote_results_score_each_vote_as_a_run():
    votes = bias_votes([verdict("j", "m1", "a", "b", o) for o in ("pro", "tie", "con", "pro")],
                       {"m1": (10, 20)}, {}, {})
    assert vote_results(votes) == [{"match_id": "m1", "entry_a": "a", "entry_b": "b", "score_a": 2.5,
                                    "score_b": 1.5, "words_a": 10, "words_b": 20}]


def test_same_family_compares_a_judges_votes_for_its_own_family_with_neutral_judges_votes():
    # ace is of family openai, bold of meta, calm of google. Judge gpt (openai) and judge llama (meta) are of a
    # debater's family; judge neutral (mistral) and the people (no family) are of neither.
    families = {"ace": "openai", "bold": "meta", "calm": "google"}
    judges = {"gpt": "openai", "llama": "meta", "neutral": "mistral", "people": None}
    sides = {"m1": ("ace", "bold"), "m2": ("bold", "ace"), "m3": ("ace", "calm"), "m4": ("calm", "ace"),
             "m5": ("bold", "calm")}
    said = {"gpt": ["pro", "con", "pro", "tie", "pro"],        # ace's side on m1, m2, m3; a tie on m4
            "llama": ["con", "pro", "pro", "pro", "pro"],      # bold's side on m2 and m5, not on m1
            "neutral": ["con", "pro", "con", "con", "con"],    # ace's side on m2 and m4 only
            "people": ["pro", "con", "con", "pro", "pro"]}
    rows = [verdict(j, m, *sides[m], said[j][k]) for j in said for k, m in enumerate(sides)]
    out = {r["judge"]: r for r in bias_stats(bias_votes(rows, {}, families, judges))}
    # gpt: decided votes on m1, m2, m3 (ace's matches; m4 a tie): all three for ace.
    # Neutral votes there: m1 neutral con, people pro (llama is bold's family: not neutral); m2 neutral pro, people
    # con; m3 neutral con, people con, llama pro (neither ace's nor calm's family). For ace: m1 1 of 2 (people's),
    # m2 1 of 2 (ace is Con: people's), m3 1 of 3 (llama's): 3 of 7. m4 has no decided vote of gpt: not counted.
    assert out["gpt"]["same_family"] == {"votes": 3, "own_share": 1.0, "others_share": pytest.approx(3 / 7)}
    # llama: bold on m1 (con: bold's side), m2 (pro: bold's), m5 (pro: bold's); gpt is ace's family, so on m1 and
    # m2 only neutral and people count: m1 con, pro; m2 pro, con: for bold (Con on m1, Pro on m2) 1 + 1 of 4;
    # m5 gpt pro, neutral con, people pro: bold is Pro there, 2 of 3.
    assert out["llama"]["same_family"] == {"votes": 3, "own_share": 1.0, "others_share": pytest.approx(4 / 7)}
    assert out["neutral"]["same_family"] is None and out["people"]["same_family"] is None
    # Nothing to compare with: None, not 0.
    alone = bias_votes([verdict("gpt", "m1", "ace", "bold", "pro")], {}, families, judges)
    assert same_family(alone, {}) == {"votes": 1, "own_share": 1.0, "others_share": None}
    # A debater pair of one family says nothing of a preference between them.
    both = bias_votes([verdict("gpt", "m1", "ace", "ace2", "pro")], {}, {"ace": "openai", "ace2": "openai"}, judges)
    assert same_family(both, {}) is None


def test_a_panelists_family_is_its_own_and_the_other_panelists_are_others():
    rows = [verdict("jury", "m1", "ace", "bold", "pro", panelist="openai/gpt-4o"),
            verdict("jury", "m1", "ace", "bold", "con", panelist="meta/llama"),
            verdict("jury", "m1", "ace", "bold", "con", panelist="mistral/large")]
    family = {"openai/gpt-4o": "openai", "meta/llama": "meta", "mistral/large": "mistral"}.get
    votes = bias_votes(rows, {}, {"ace": "openai", "bold": "meta"}, {"jury": None}, panelist_family=family)
    assert [(v["panelist"], v["family"]) for v in votes] == [
        ("openai/gpt-4o", "openai"), ("meta/llama", "meta"), ("mistral/large", "mistral")]
    out = {r["panelist"]: r["same_family"] for r in bias_stats(votes)}
    # Each against the one panelist of neither debater's family, mistral, who voted CON: for bold, not for ace.
    assert out["openai/gpt-4o"] == {"votes": 1, "own_share": 1.0, "others_share": 0.0}
    assert out["meta/llama"] == {"votes": 1, "own_share": 1.0, "others_share": 1.0}
    assert out["mistral/large"] is None
    # The jury's own row: both of its own-family votes, each against the other panelists (mistral's vote twice).
    assert out[None] == {"votes": 2, "own_share": 1.0, "others_share": 0.5}


# --- on a workspace ------------------------------------------------------------------------------------------------

PANELISTS = ("gpt-4o", "claude-3-5-sonnet")  # imported panelists: openai's and anthropic's


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    """Three offline entries (ace of family acme, bold of openai, calm of its own) in a round-robin judged by
    selfish (R = 3, family acme) and fair (R = 1); then an imported panel's verdicts on every match: gpt-4o always
    says PRO, claude-3-5-sonnet the side with more words."""
    path = new_workspace(tmp_path_factory.mktemp("bias") / "ws",
                         entries=[entry("ace", strength=1.0, family="acme"), entry("bold", family="openai"),
                                  entry("calm", strength=-1.0)],
                         judges=[judge("selfish", runs=3, family="acme"), judge("fair", runs=1),
                                 {"name": "panel", "kind": "imported",
                                  "options": {"source": "elsewhere", "panelists": list(PANELISTS)}}], init=None)
    play_round_robin(path)
    ws = app.open_workspace(path)
    try:
        features = match_features(ws.store)
        for match_id, sides in features.items():
            longer = "pro" if sides["pro"]["length"] > sides["con"]["length"] else "con"
            ws.store.replace_verdicts(match_id, "panel", [
                Verdict("panel", 0, "pro", {}, "", extra={"panelist": PANELISTS[0]}),
                Verdict("panel", 1, longer, {}, "", extra={"panelist": PANELISTS[1]})], simulated=False)
    finally:
        ws.close()
    return path


def bias_json(path, *args) -> list[dict]:
    result = invoke("stats", "bias", "--format", "json", *args, "-w", path)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_stats_bias_json_has_a_row_per_judge_and_per_panelist(workspace):
    rows = bias_json(workspace)
    assert [list(r) for r in rows] == [KEYS] * 5
    assert [(r["judge"], r["panelist"]) for r in rows] == [
        ("selfish", None), ("fair", None), ("panel", None), ("panel", "claude-3-5-sonnet"), ("panel", "gpt-4o")]
    selfish, fair, panel, claude, gpt = rows
    assert gpt["votes"] == claude["votes"] == 6 and panel["votes"] == 12
    assert gpt["pro_share"] == 1.0 and gpt["pro_ci_low"] > 0.5
    assert claude["longer_share"] == 1.0
    for r in rows:
        assert r["pro_ci_low"] <= r["pro_share"] <= r["pro_ci_high"]
        assert r["length_ci_low"] <= r["length_coef"] <= r["length_ci_high"]
    # selfish (acme) against ace (acme): the four matches ace played; fair and calm share no family with anyone.
    assert fair["same_family"] is None
    ws = app.open_workspace(workspace)
    try:
        ace = {m.id: "pro" if m.pro == "ace" else "con" for m in ws.store.match_states() if "ace" in (m.pro, m.con)}
        decided = [(v.match_id, v.verdict.overall) for v in ws.store.judged_verdicts("selfish")
                   if v.match_id in ace and v.verdict.overall in ("pro", "con")]
    finally:
        ws.close()
    assert len(ace) == 4
    assert selfish["same_family"]["votes"] == len(decided)
    assert selfish["same_family"]["own_share"] == pytest.approx(sum(ace[m] == o for m, o in decided) / len(decided))
    assert 0 <= selfish["same_family"]["others_share"] <= 1
    # gpt-4o (openai) against bold (openai), PRO always: bold was PRO in two of its four matches.
    assert gpt["same_family"]["votes"] == 4 and gpt["same_family"]["own_share"] == 0.5
    assert claude["same_family"] is None


def test_stats_bias_one_judge_and_an_unknown_one(workspace):
    assert [(r["judge"], r["panelist"]) for r in bias_json(workspace, "--judge", "panel")] == [
        ("panel", None), ("panel", "claude-3-5-sonnet"), ("panel", "gpt-4o")]
    result = invoke("stats", "bias", "--judge", "nobody", "-w", workspace)
    assert result.exit_code == 2 and "--judge" in result.output and "nobody" in result.output


def test_stats_bias_table(workspace):
    result = invoke("stats", "bias", "-w", workspace)
    assert result.exit_code == 0, result.output
    header, *lines = result.output.splitlines()
    assert header.split("  ")[0] == "judge" and "pro share (95% CI)" in header and "length coef (Elo)" in header
    assert [line.split()[0] for line in lines] == ["selfish", "fair", "panel", "panel", "panel"]
    assert lines[4].split()[1] == "gpt-4o" and "1.00 (" in lines[4]
    assert "vs" in lines[0] and "vs" not in lines[1]  # selfish's own family against the others


def test_withheld_matches_cast_no_vote(workspace):
    ws = app.open_workspace(workspace)
    try:
        first = ws.store.match_states()[0].id
        every, fewer = app.stats_bias(ws, "panel"), app.stats_bias(ws, "panel", withheld={first})
    finally:
        ws.close()
    assert [r["votes"] for r in every] == [12, 6, 6] and [r["votes"] for r in fewer] == [10, 5, 5]


def test_the_table_marks_a_length_coefficient_too_wide_to_mean_anything(workspace):
    """Six matches cannot place a length coefficient: a row says 'not estimated' exactly when its interval is wider
    than leaderboard.control.LOOSE, the rule the site's bias page states."""
    rows = bias_json(workspace)
    lines = invoke("stats", "bias", "-w", workspace).output.splitlines()[1:]
    wide = [r["length_ci_high"] - r["length_ci_low"] > LOOSE for r in rows]
    assert any(wide)  # the fixture's few matches leave some interval that wide
    assert ["not estimated" in line for line in lines] == wide
