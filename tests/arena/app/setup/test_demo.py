"""`arena demo` end to end in a process of its own (`python -m arena demo`, as a user runs it): offline, labelled,
order recovered; the commands that read its workspace run in-process (tests.support.helpers.invoke)."""
from __future__ import annotations

import json
import re
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from scipy.stats import spearmanr

from arena.domain.contradictions import contradiction
from tests.support.helpers import invoke
from tests.support.sites import copied_demo

ARENA = [sys.executable, "-m", "arena"]


def arena(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*ARENA, *args], capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def demo_dir(builds, tmp_path_factory) -> Path:
    """This module's copy of `arena demo -w DIR` run through `python -m arena` (tests.support.sites.demo_workspace, which
    checks it prints the site's index), once per test process."""
    return copied_demo(builds, tmp_path_factory.mktemp("demo") / "arena-demo")


def test_demo_publishes_a_labelled_site(demo_dir):
    index = (demo_dir / "site" / "index.html").read_text()
    assert "Simulated results" in index
    assert "sim-ace" in index
    pages = list((demo_dir / "site" / "matches").glob("*.html"))
    assert len(pages) == 60
    page = pages[0].read_text()
    assert page.count('<section class="speech') == 6


def test_demo_recovers_the_planted_order(demo_dir):
    entries = json.loads(invoke("entry", "list", "-w", str(demo_dir), "--format", "json").stdout)
    strengths = {e["name"]: e["strength"] for e in entries}
    assert len(strengths) == 6 and all(e["matches"] == 20 for e in entries)
    rated = json.loads(invoke("rate", "-w", str(demo_dir), "--format", "json").stdout)
    ratings = {r["entry"]: r["rating"] for r in rated["ratings"]}
    names = sorted(strengths)
    rho = spearmanr([strengths[n] for n in names], [ratings[n] for n in names]).statistic
    assert rho >= 0.9, (strengths, ratings)
    assert rated["meta"]["matches"] == 60 and rated["meta"]["judge"] == "sim-debatrix"
    assert rated["meta"]["simulated"] is True
    human = json.loads(invoke("rate", "-w", str(demo_dir), "--judge", "sim-experts", "--format", "json").stdout)
    ratings = {r["entry"]: r["rating"] for r in human["ratings"]}
    assert spearmanr([strengths[n] for n in names], [ratings[n] for n in names]).statistic >= 0.8, ratings
    assert human["meta"]["simulated"] is True


def test_demo_shows_every_debater_kind_two_llm_judge_kinds_and_simulated_people(demo_dir):
    entries = json.loads(invoke("entry", "list", "-w", str(demo_dir), "--format", "json").stdout)
    assert sorted(e["debater"] for e in entries) == ["agent4debate"] * 2 + ["direct"] * 2 + ["search-baseline"] * 2
    status = json.loads(invoke("ballots", "status", "-w", str(demo_dir), "--format", "json").stdout)
    assert status == [{"judge": "sim-experts", "person": p, "assigned": 60, "cast": 60, "state": "open", "embargoed": 0}
                      for p in ("ann", "bo", "cy")]  # every ballot is in: nothing held back from the site
    db = sqlite3.connect(demo_dir / "arena.db")
    try:
        judged = db.execute("SELECT judge, COUNT(*), MIN(simulated) FROM verdicts GROUP BY judge").fetchall()
        assert judged == [("sim-debatrix", 180, 1), ("sim-experts", 180, 1), ("sim-panel", 60, 1)]
        assert {j for (j,) in db.execute("SELECT DISTINCT judge FROM calls")} == {None, "sim-debatrix", "sim-panel"}
        # sim-panel attacked on a sample of 8 matches, every attack, the calls tagged apart from the matches' own.
        attacked = db.execute("SELECT judge, attack, trials, simulated FROM judge_attacks ORDER BY seq").fetchall()
        assert attacked == [("sim-panel", a, 8, 1) for a in ("padding", "injection", "citations", "assertive", "swap",
                                                             "null")]
        assert {j for (j,) in db.execute("SELECT DISTINCT judge FROM calls WHERE match_id LIKE 'attack:%'")} == {
            "sim-panel"}
        assert "(simulated ballot, ann)" in db.execute("SELECT rationale FROM verdicts WHERE judge = 'sim-experts' "
                                                       "AND run = 0").fetchone()[0]
    finally:
        db.close()


def test_demo_matches_are_flagged_simulated_and_never_touched_the_network(demo_dir):
    shown = json.loads(invoke("match", "show", "m00001", "-w", str(demo_dir), "--format", "json").stdout)
    assert shown["simulated"] is True and shown["status"] == "done"
    assert [(s["stage"], s["side"]) for s in shown["speeches"]] == [
        ("constructive", "pro"), ("constructive", "con"), ("rebuttal", "pro"), ("rebuttal", "con"),
        ("summary", "con"), ("summary", "pro")]
    assert sum(shown["score"].values()) == 3
    text = invoke("match", "show", "m00001", "-w", str(demo_dir)).stdout
    assert "SIMULATED" in text
    db = sqlite3.connect(demo_dir / "arena.db")
    assert db.execute("SELECT COUNT(*) FROM calls WHERE simulated = 0").fetchone()[0] == 0
    assert db.execute("SELECT COUNT(*) FROM verdicts WHERE simulated = 0").fetchone()[0] == 0
    assert db.execute("SELECT COUNT(*) FROM calls WHERE kind = 'search'").fetchone()[0] > 0  # search-baseline
    # Closed now, not whenever the garbage collector gets to it: a late close deletes arena.db-shm while
    # the next test copies the folder.
    db.close()


def test_demo_rerun_resumes_without_replaying(demo_dir, tmp_path):
    copy = tmp_path / "again"
    shutil.copytree(demo_dir, copy)
    db = sqlite3.connect(copy / "arena.db")
    db.execute("UPDATE matches SET status = 'running' WHERE id = 'm00060'")  # as a killed run leaves it
    db.commit()
    calls_before = db.execute("SELECT COUNT(*) FROM calls").fetchone()[0]
    calls_m00060 = db.execute("SELECT COUNT(*) FROM calls WHERE match_id = 'm00060'").fetchone()[0]
    done = arena("demo", "-w", str(copy))
    assert done.returncode == 0, done.stderr
    assert db.execute("SELECT COUNT(*) FROM matches").fetchone()[0] == 60
    assert db.execute("SELECT COUNT(*) FROM matches WHERE status = 'done'").fetchone()[0] == 60
    assert db.execute("SELECT COUNT(*) FROM calls").fetchone()[0] == calls_before + calls_m00060  # only m00060 again


# A debatrix dimension line of a rationale (judges.debatrix.dimension_line): "argument: PRO wins (PRO 7, CON 5)."; a
# swapped run's, mapped back, may name CON's score first.
DIMENSION_LINE = re.compile(r"^(\w+): (PRO wins|CON wins|tie) \((PRO|CON) (\d+), (?:PRO|CON) (\d+)\)\.", re.M)


def test_every_demo_verdict_agrees_with_its_own_scores_and_its_rationale_names_its_winner(demo_dir):
    """The simulator's judges never contradict themselves: no stored winner is put behind by its own scores
    (arena.domain.contradictions, the rule the judges are held to), each debatrix dimension line states the stored
    winner and scores, and each rationale names the winner it gives first among the sides."""
    db = sqlite3.connect(demo_dir / "arena.db")
    try:
        rows = db.execute("SELECT judge, run, overall, dimensions, rationale, extra, error FROM verdicts "
                          "WHERE judge != 'sim-experts'").fetchall()
    finally:
        db.close()
    assert len(rows) == 240
    lines = 0
    for judge, run, overall, dimensions, rationale, extra, error in rows:
        assert error is None
        dimensions, extra = json.loads(dimensions), json.loads(extra)
        assert contradiction(dimensions, extra.get("scores", {})) == "", (judge, rationale, extra)
        assert extra.get("swapped", False) == (judge == "sim-debatrix" and run == 1)  # swap_sides by default
        first = re.search(r"\b(PRO|CON)\b", rationale.splitlines()[0])
        assert first and first.group(1) == overall.upper(), rationale
        if judge == "sim-debatrix":
            assert set(extra["scores"]) == set(dimensions) == {"argument", "source", "language"}
            for name, said, first_side, a, b in DIMENSION_LINE.findall(rationale):
                lines += 1
                pro, con = (int(a), int(b)) if first_side == "PRO" else (int(b), int(a))
                assert {"PRO wins": "pro", "CON wins": "con", "tie": "tie"}[said] == dimensions[name]
                assert [pro, con] == extra["scores"][name]
    assert lines == 540  # 60 matches, 3 runs, 3 dimensions
    # The judge's page says whether its runs are evidence and whether it contradicts itself.
    page = (demo_dir / "site" / "judges" / "sim-debatrix.html").read_text()
    assert "<th scope=\"row\">Identical runs</th><td>0% of the matches it judged two times or more" in page
    assert "<th scope=\"row\">Self-contradictions</th><td>0 of its runs named a winner" in page
