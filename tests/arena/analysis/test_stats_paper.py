"""`arena stats paper`: the Agent4Debate paper's S/L/A/O points out of 3 (Tables 1, 2, 5) and its consistency split
(Table 6), from stored verdicts and ballots, with the paper's figures beside ours in the preset's workspace."""
from __future__ import annotations

import json

import pytest

from arena.app import commands as app
from arena.domain.records import Ballot, Verdict
from arena.analysis.stats import consistency_split, paper_points, points_of_three
from tests.support.fakes.openai_server import FakeOpenAI, messages_text
from tests.support.fixtures import Recording
from arena.domain.records import score
from arena.analysis.stats import match_outcome
from tests.support.helpers import (PEOPLE, assert_user_error, debate_responder, entry, init_preset, invoke, judge,
                           new_workspace, snapshot, speech_text, write_workspace)
from tests.support.running import round_robin
from tests.support.verdicts import judged

SLAO = ("source", "language", "argument", "overall")


def paper_json(*args) -> dict:
    result = invoke("stats", "paper", "--format", "json", *args)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def slao(row: dict) -> tuple:
    return tuple(row[c] for c in SLAO)


# --- the pure functions -------------------------------------------------------------------------------------

def run(match_id, run_, overall, error=None, judge_="j", pro="a", con="b", category="fact", **dimensions):
    return judged(match_id, judge_, overall, run=run_, error=error, dimensions=dimensions, pro=pro, con=con,
                  category=category)


def test_points_are_out_of_3_whatever_r_and_a_failed_run_leaves_the_match_out():
    rows = [run("m1", 0, "pro", source="pro", argument="pro", language="tie"),
            run("m1", 1, "pro", source="tie", argument="con"),  # no language verdict in this run
            run("m1", 2, "con", source="con", argument="con", language="pro"),
            run("m2", 0, "con", source="con", pro="b", con="a", category="value"),  # R = 1
            run("m3", 0, "pro"), run("m3", 1, None, error="timeout")]
    points = points_of_three(rows)
    assert set(points) == {"m1", "m2"}
    assert points["m1"]["points"] == {"overall": (2.0, 1.0), "source": (1.5, 1.5), "argument": (1.0, 2.0),
                                      "language": (2.25, 0.75)}  # 1.5 of the 2 points given
    assert points["m2"] == {"pro": "b", "con": "a", "category": "value",
                            "points": {"overall": (0.0, 3.0), "source": (0.0, 3.0)}}  # no argument, no language

    tables = paper_points(points, {}, {"a": "agent4debate", "b": "direct"}, ["b"])
    assert [(r["entry"], r["category"]) for r in tables["entries"]] == [
        ("b", "all"), ("b", "fact"), ("b", "value"), ("a", "all"), ("a", "fact"), ("a", "value")]
    a_all = tables["entries"][3]
    # a is Pro in m1 (S 1.5, L 2.25, A 1, O 2) and Con in m2 (S 3, O 3; no L or A there).
    assert a_all["matches"] == 2 and slao(a_all) == (2.25, 2.25, 1.0, 2.5)
    assert a_all["people_matches"] == 0 and a_all["people_overall"] is None
    assert [(r["debater"], r["opponent"], r["matches"], r["overall"]) for r in tables["kinds"]] == [
        ("agent4debate", "direct", 2, 2.5), ("direct", "agent4debate", 2, 0.5)]
    assert [(r["entry"], r["opponent"]) for r in tables["pairs"]] == [("a", "b"), ("b", "a")]


def test_consistency_is_split_by_the_matches_of_human_debaters():
    rows = [run("m1", 0, "pro"), run("m2", 0, "pro"), run("m3", 0, "con"), run("m4", 0, "pro", error=None)]
    ballots = {"m1": ("pro", "pro"), "m2": ("con", "con"), "m3": ("con", "tie"), "m4": ("con", "pro")}
    for match_id, votes in ballots.items():
        rows += [run(match_id, k, vote, judge_="crowd") for k, vote in enumerate(votes)]
    split = consistency_split(rows, {"crowd": {0: "ann", 1: "bo"}}, ["j"], human_matches={"m2", "m4"})
    # The crowd's majorities: m1 pro, m2 con, m3 con (1.5 – 0.5), m4 tie (1 – 1).
    (row,) = split["judges"]
    assert row == {"judge": "j", "people": "crowd", "excluding_human_debaters": {"matches": 2, "consistency": 1.0},
                   "all": {"matches": 4, "consistency": 0.75}}  # only m2 is inconsistent; m4's tie is consistent
    (among,) = split["among_people"]
    assert among == {"people": "crowd",
                     "excluding_human_debaters": {"matches": 2, "comparisons": 2, "consistency": 1.0},
                     "all": {"matches": 4, "comparisons": 4, "consistency": 0.75}}


# --- recorded requests: the judge's verdicts known, the points counted by hand --------------------------------

def alpha_wins(body: dict) -> str:
    """Speeches name their model; the judge, reading them, gives alpha the match and the argument, and (as Pro)
    ties source and loses language, (as Con) wins source and ties language."""
    if not body.get("response_format"):
        return debate_responder()(body)
    alpha_pro = "SPEECH<alpha-model|constructive|pro>" in messages_text(body)
    verdict = ({"argument": "pro", "source": "tie", "language": "con", "overall": "pro"} if alpha_pro else
               {"argument": "con", "source": "con", "language": "tie", "overall": "con"})
    return json.dumps({"rationale": "as scripted", **verdict})


def build_scripted(path) -> Recording:
    """alpha against beta both ways, judged by j1 (R = 3) on a fake server of the build's own, and three people's
    ballots: what the server received."""
    with FakeOpenAI(alpha_wins) as fake_llm:
        # Every run reads the sides as debated (swap_sides off): the points below are counted for the script's answers.
        round_robin(write_workspace(path, fake_llm.api_base, judges=[PEOPLE], options={"swap_sides": False}),
                    rounds=1)
        assert invoke("run", "-w", path).exit_code == 0
        ws = app.open_workspace(path)
        try:
            sides = {m.pro: m.id for m in ws.store.matches()}
            votes = [("alpha", "ann", "pro"), ("alpha", "bo", "pro"), ("alpha", "cy", "con"),  # alpha as Pro
                     ("beta", "ann", "con"), ("beta", "bo", "tie")]  # alpha as Con; cy casts none
            ws.store.cast_ballots("experts", ("ann", "bo", "cy"),
                                  [Ballot(sides[pro], person, vote) for pro, person, vote in votes], simulated=False)
        finally:
            ws.close()
        return Recording.of(fake_llm)


@pytest.fixture
def scripted(builds, tmp_path):
    """The test's own copy of build_scripted's workspace (played once per test process), and what the fake server
    received while it was played."""
    built = builds.copy("stats_paper:scripted", build_scripted, tmp_path / "ws")
    return built.path, built.value


def test_points_of_the_judge_and_the_people_counted_by_hand(scripted):
    path, fake_llm = scripted
    judged = [r.body for r in fake_llm.requests if r.body.get("model") == "judge-model"]
    assert len(judged) == 6  # R = 3 on each of the two matches, each reading a whole transcript
    assert all("SPEECH<beta-model|summary|" in messages_text(body) for body in judged)

    data = paper_json("-w", path)
    assert (data["judge"], data["people"], data["simulated"], data["preset"]) == ("j1", "experts", False, None)
    entries = {(r["entry"], r["category"]): r for r in data["entries"]}
    alpha, beta = entries["alpha", "all"], entries["beta", "all"]
    # alpha as Pro: S 1.5, L 0, A 3, O 3; as Con: S 3, L 1.5, A 3, O 3. beta has the rest of each 3.
    assert (alpha["matches"], slao(alpha)) == (2, (2.25, 0.75, 3.0, 3.0))
    assert (beta["matches"], slao(beta)) == (2, (0.75, 2.25, 0.0, 0.0))
    # The people: 2 of 3 ballots for alpha as Pro (2.0 of 3), 1.5 of the 2 points cast for alpha as Con (2.25).
    assert (alpha["people_matches"], alpha["people_overall"]) == (2, pytest.approx(2.125))
    assert beta["people_overall"] == pytest.approx(0.875)
    category = next(c for e, c in entries if e == "alpha" and c != "all")
    assert slao(entries["alpha", category]) == slao(alpha)  # one motion: its category is every match
    assert [(r["entry"], r["opponent"], slao(r)) for r in data["pairs"]] == [
        ("alpha", "beta", slao(alpha)), ("beta", "alpha", slao(beta))]
    assert data["kinds"] == []  # both are direct entries
    (row,) = data["consistency"]["judges"]
    assert row["excluding_human_debaters"] == row["all"] == {"matches": 2, "consistency": 1.0}
    assert row["paper"] is None
    (among,) = data["consistency"]["among_people"]
    # Pairs on alpha's Pro match: ann–bo agree, ann–cy and bo–cy do not; on the other, ann–bo (con, tie) agree.
    assert among["all"] == {"matches": 2, "comparisons": 4, "consistency": 0.5}


def test_the_table_names_the_judges_and_prints_the_points(scripted):
    path, _ = scripted
    result = invoke("stats", "paper", "-w", path)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == ("mean points out of 3 under judge 'j1' (S source, L language, A argument, O overall; "
                        "human: the overall points of the people of 'experts')")
    assert lines[1].split() == ["entry", "debater", "category", "matches", "S", "L", "A", "O", "people_matches",
                                "human"]
    assert lines[2].split() == ["alpha", "direct", "all", "2", "2.25", "0.75", "3.00", "3.00", "2", "2.12"]
    assert "paper" not in result.output  # no preset, no paper column
    assert "consistency, matches without a human debater and all (Table 6):" in lines
    assert lines[-1].split() == ["experts", "0.50", "of", "2", "0.50", "of", "2"]


def test_another_judge_and_bad_judges(scripted, tmp_path):
    path, _ = scripted
    data = paper_json("--judge", "experts", "-w", path)  # the ballots' own S/L/A/O: overall only here
    alpha = next(r for r in data["entries"] if r["entry"] == "alpha" and r["category"] == "all")
    assert alpha["overall"] == pytest.approx(2.125) and alpha["source"] is None
    before = snapshot(path)
    assert_user_error(invoke("stats", "paper", "--judge", "nobody", "-w", path), "--judge", "nobody")
    assert snapshot(path) == before
    empty = new_workspace(tmp_path / "none", entries=[entry("a")])
    assert_user_error(invoke("stats", "paper", "-w", empty), "no [[judges]] configured")


# --- simulations with a human debater ----------------------------------------------------------------------

@pytest.fixture
def with_humans(tmp_path):
    """ace and bold (offline) and the human entry humans (speeches from files) in a round-robin judged by j1
    (R = 3); the people of experts side with j1 except on the matches of humans, where they all vote the other
    side."""
    speeches = tmp_path / "speeches"
    speeches.mkdir()
    for stage in ("constructive", "rebuttal", "summary"):
        (speeches / f"{stage}.md").write_text(speech_text(f"Our {stage}: people first."), encoding="utf-8")
    path = new_workspace(tmp_path / "ws", entries=[entry("ace", strength=1.0), entry("bold"),
                                                   entry("humans", "human", "human/us",
                                                         params={"speeches_dir": str(speeches)})],
                         judges=[judge("j1", runs=3), PEOPLE])
    ws = app.open_workspace(path)
    try:
        app.schedule(ws, "round-robin", rounds=1)
        assert app.run(ws, progress=lambda line: None)["done"] == 6
        outcome = {m.id: match_outcome(*score(m.verdicts)) for m in ws.store.matches()}
        assert set(outcome.values()) <= {"pro", "con"}  # R = 3, no ties overall: the people can take the other side
        human = {m.id for m in ws.store.matches() if "humans" in (m.pro, m.con)}
        other = {"pro": "con", "con": "pro"}
        ws.store.cast_ballots("experts", ("ann", "bo", "cy"), [
            Ballot(m, person, other[o] if m in human else o) for m, o in outcome.items()
            for person in ("ann", "bo", "cy")], simulated=False)
    finally:
        ws.close()
    return path, human


def test_the_matches_of_human_debaters_split_the_consistency(with_humans):
    path, human = with_humans
    assert len(human) == 4
    data = paper_json("-w", path)
    (row,) = data["consistency"]["judges"]
    assert row["excluding_human_debaters"] == {"matches": 2, "consistency": 1.0}
    assert row["all"] == {"matches": 6, "consistency": pytest.approx(2 / 6)}
    # `arena stats judges` compares over every match both judged: the paper's "all debates" figure.
    judges = json.loads(invoke("stats", "judges", "--format", "json", "-w", path).output)
    assert judges["pairs"][0]["agreement"] == pytest.approx(row["all"]["consistency"])
    (among,) = data["consistency"]["among_people"]
    assert among["excluding_human_debaters"] == {"matches": 2, "comparisons": 6, "consistency": 1.0}
    assert among["all"] == {"matches": 6, "comparisons": 18, "consistency": 1.0}
    kinds = {(r["debater"], r["opponent"]): r for r in data["kinds"]}
    assert set(kinds) == {("direct", "human"), ("human", "direct")}
    assert kinds["human", "direct"]["matches"] == 4
    assert kinds["human", "direct"]["overall"] + kinds["direct", "human"]["overall"] == pytest.approx(3.0)
    assert kinds["human", "direct"]["people_matches"] == 4


# --- the preset's workspace: the paper's figures beside ours -------------------------------------------------

@pytest.fixture
def preset(builds, tmp_path):
    """The test's own copy of `arena init --preset agent4debate` (made once per test process)."""
    return builds.copy("init:agent4debate", init_preset, tmp_path / "a4d", name="a4d").path


def test_the_preset_lists_the_papers_rows_beside_ours_before_any_match(preset):
    data = paper_json("-w", preset)
    assert (data["preset"], data["judge"], data["people"]) == ("agent4debate", "debatrix-mini", "experts")
    assert data["entries"] == []
    pairs = {(r["entry"], r["opponent"]): r for r in data["pairs"]}
    assert slao(pairs["a4d-claude-3.5-sonnet", "base-claude-3.5-sonnet"]["paper"]) == (2.83, 1.76, 2.52, 2.62)
    assert slao(pairs["base-deepseek-chat", "a4d-deepseek-chat"]["paper"]) == (0.27, 1.12, 0.69, 0.23)
    assert all(r["matches"] == 0 and r["overall"] is None for r in pairs.values()) and len(pairs) == 4
    kinds = {(r["debater"], r["opponent"]): r["paper"] for r in data["kinds"]}
    assert kinds["human", "agent4debate"] == {"source": 0.52, "language": 0.30, "argument": 0.6, "overall": 0.42,
                                              "people_overall": 1.22}
    assert kinds["agent4debate", "human"]["people_overall"] == 1.78
    (row,) = data["consistency"]["judges"]
    assert (row["judge"], row["people"], row["paper"]) == (
        "debatrix-mini", "experts", {"excluding_human_debaters": 0.66, "all": 0.56})
    assert data["consistency"]["among_people"][0]["paper"] == {"excluding_human_debaters": 0.74, "all": 0.73}


def test_the_preset_puts_our_figures_beside_the_papers(preset):
    ws = app.open_workspace(preset)
    try:
        (match_id,) = ws.store.add_tournament("single", 0, {}, [(ws.store.motion_ids()[0], "a4d-claude-3.5-sonnet",
                                                                  "base-claude-3.5-sonnet")])
        verdicts = [Verdict("debatrix-mini", 0, "pro", {"source": "pro", "language": "con", "argument": "pro"}),
                    Verdict("debatrix-mini", 1, "pro", {"source": "pro", "language": "tie", "argument": "con"}),
                    Verdict("debatrix-mini", 2, "con", {"source": "pro", "language": "pro", "argument": "pro"})]
        ws.store.commit_match(match_id, [], verdicts, [], simulated=False)
    finally:
        ws.close()
    data = paper_json("-w", preset)
    pairs = {(r["entry"], r["opponent"]): r for r in data["pairs"]}
    ours = pairs["a4d-claude-3.5-sonnet", "base-claude-3.5-sonnet"]
    assert (ours["matches"], slao(ours)) == (1, (3.0, 1.5, 2.0, 2.0))
    assert slao(ours["paper"]) == (2.83, 1.76, 2.52, 2.62)
    assert len(pairs) == 4  # the played pair is not listed twice
    table = invoke("stats", "paper", "-w", preset).output
    line = next(l for l in table.splitlines() if l.split()[:2] == ["a4d-claude-3.5-sonnet", "base-claude-3.5-sonnet"])
    assert line.split()[2:7] == ["1", "3.00", "1.50", "2.00", "2.00"] and line.split()[-1] == "2.83/1.76/2.52/2.62"
    assert "paper without humans" in table and "0.66" in table and "0.56" in table
