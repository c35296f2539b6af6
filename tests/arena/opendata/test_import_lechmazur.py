"""`arena import lechmazur DIR`: a checkout of lechmazur/debate (here a small one of our own text, in its layout)
becomes imported entries, one imported judge whose runs are the panel's rows, motions and done matches in the
lechmazur format; importing again adds nothing; the imported entries never play and the imported judge never runs,
yet its ratings, the published transcripts and other judges' re-judging of the debates work as for any match."""
from __future__ import annotations

import asyncio
import json
import os
import re
from dataclasses import replace
from pathlib import Path

import pytest
from markupsafe import escape

from arena.workspace.config import load_config
from arena.base.errors import ArenaError
from arena.domain.records import Entry, JudgeSpec
from debaters.registry import DEBATERS
from judges.registry import JUDGES
from tests.support.fakes.openai_server import messages_text
from tests.support.helpers import (VERDICT, assert_user_error, entry, init_template, invoke, judge, mark_checked, new_workspace,
                           query, snapshot)
from tests.support.lechmazur_checkout import (DISPLAY, PANEL, STAGES, TITLES, Debate, rows, speech, swapped, tournament,
                                      write_checkout)


def imported(ws: Path, folder: Path, *extra: str) -> dict:
    done = invoke("import", "lechmazur", folder, "-w", ws, "--format", "json", *extra)
    assert done.exit_code == 0, done.output
    return json.loads(done.stdout)


@pytest.fixture
def checkout(tmp_path) -> Path:
    return write_checkout(tmp_path / "lech", tournament())


@pytest.fixture
def ws(builds, tmp_path) -> Path:
    """The test's own copy of a workspace as `arena init` makes it: the template's comments in arena.toml (made once
    per test process)."""
    return builds.copy("init:template", init_template, tmp_path / "ws").path


def test_one_match_per_transcript_with_entries_judge_runs_and_motions(ws, checkout):
    debates = tournament()
    done = imported(ws, checkout)
    assert (done["matches"], done["entries"], done["judges"], done["motions"]) == (12, 4, ["lechmazur-panel"], 3)
    assert done["runs"] == sum(len(d.rows) for d in debates) == 26
    assert done["skipped"] == []
    config = load_config(ws)
    entries = {e.name: e for e in config.entries}
    assert set(entries) == set(DISPLAY)
    for name, e in entries.items():  # named and run by the source's model ids, display names from the reports
        assert (e.debater, e.model, dict(e.params)) == ("imported", name, {"display": DISPLAY[name],
                                                                           "source": "lechmazur/debate"})
    panel = config.judge("lechmazur-panel")
    assert (panel.kind, panel.runs, panel.options["source"]) == ("imported", 3, "lechmazur/debate")
    assert sorted(panel.options["panelists"]) == sorted(PANEL)
    assert "# Imported from lechmazur/debate" in (ws / "arena.toml").read_text()  # and the template's comments stay
    assert "# Debate Arena workspace." in (ws / "arena.toml").read_text()
    stored = query(ws, "SELECT id, pro, con, status, format, tournament_id FROM matches WHERE format = 'lechmazur' "
                       "ORDER BY id")
    assert stored == sorted((d.id, d.pro, d.con, "done", "lechmazur", None) for d in debates)
    motions = dict(query(ws, "SELECT id, category FROM motions WHERE id LIKE 'topic_%'"))
    assert motions == {"topic_01": "policy", "topic_02": "value", "topic_03": "fact"}  # should / better / neither


def test_each_match_has_the_ten_turns_in_order_with_their_stage_keys_sides_and_text(ws, checkout):
    imported(ws, checkout)
    d = tournament()[0]
    shown = json.loads(invoke("match", "show", d.id, "-w", ws, "--format", "json").stdout)
    speeches = [(s["stage"], s["side"], s["text"]) for s in shown["speeches"]]
    assert speeches == [(stage, side, speech(d, k, side)) for k, stage in enumerate(STAGES) for side in ("pro", "con")]
    assert speeches[0][2].startswith("[P1.1] alpha-1 speaks")  # claim labels kept, the turn's own lines left out
    assert "raw_words" not in "".join(text for *_, text in speeches)


def test_verdicts_are_the_panel_rows_with_winner_tie_margin_entertainment_and_note(ws, checkout):
    imported(ws, checkout)
    tie = next(d for d in tournament() if d.pro == "bravo-2" and d.con == "charlie-3")
    runs = query(ws, "SELECT run, overall, rationale, extra FROM verdicts WHERE match_id = ? ORDER BY run", tie.id)
    assert [(run, overall) for run, overall, *_ in runs] == [(0, "pro"), (1, "tie")]  # naming neither: a tie
    first, second = (json.loads(extra) for *_, extra in runs)
    assert first == {"panelist": PANEL[0], "margin": 1.5, "normalized_margin": 0.75, "entertainment": 7.0}
    assert second["winner"] == "Neither side" and second["panelist"] == PANEL[1]
    shown = json.loads(invoke("match", "show", tie.id, "-w", ws, "--format", "json").stdout)
    assert [v["extra"] for v in shown["verdicts"]] == [first, second]  # `arena match show` gives what the row said
    assert runs[0][2] == ("The winning side kept its main clash alive to the end.\n\n"
                          "Most decisive rebuttal noted: charlie-3 in Rebuttal 2.")
    con_win = next(d for d in tournament() if d.pro == "bravo-2" and d.con == "alpha-1")
    extras = query(ws, "SELECT extra FROM verdicts WHERE match_id = ?", con_win.id)
    signed = [json.loads(e)["margin"] for (e,) in extras]
    assert signed == [-1.5, -1.5, -1.5]  # signed PRO+: CON won


def test_the_jsonl_is_read_when_present_with_scores_nan_and_unparsed_rows(ws, tmp_path):
    debates = swapped("topic_01", "alpha-1", "bravo-2", rows("pro", "pro"), rows("con", "con"))
    debates[0] = replace(debates[0], scores={"argument_strength_pro": 8, "argument_strength_con": 6})
    broken = {"debate_id": debates[1].id, "judge_model": "Panel Late", "winner_side": "pro", "parse_ok": False}
    nan = ('{"debate_id": "%s", "judge_model": "Panel Nan", "winner_side": "con", "signed_margin": NaN, '
           '"entertainment_value": NaN, "reasoning": "late row", "parse_ok": true}' % debates[1].id)
    folder = write_checkout(tmp_path / "lech", debates, jsonl=True, extra_jsonl=[json.dumps(broken), "{not json", nan])
    done = imported(ws, folder)
    assert (done["matches"], done["runs"]) == (2, 5)
    assert [(s["path"], s["reason"].split(":")[0]) for s in done["skipped"]] == [
        ("judgments/judge_results__judge_test_20990101a.jsonl:5",
         f"the source marks this judge row of {debates[1].id!r} unparsed (parse_ok false)"),
        ("judgments/judge_results__judge_test_20990101a.jsonl:6", "not JSON")]
    extra = [json.loads(e) for (e,) in query(ws, "SELECT extra FROM verdicts WHERE match_id = ? ORDER BY run",
                                             debates[0].id)]
    assert extra[0]["scores"] == {"argument_strength_pro": 8.0, "argument_strength_con": 6.0}
    late = query(ws, "SELECT overall, rationale, extra FROM verdicts WHERE match_id = ? AND run = 2", debates[1].id)
    assert late[0][:2] == ("con", "late row")
    assert json.loads(late[0][2])["margin"] is None and json.loads(late[0][2])["entertainment"] is None  # NaN
    rationale = query(ws, "SELECT rationale FROM verdicts WHERE match_id = ? AND run = 0", debates[0].id)[0][0]
    assert rationale.startswith("(full) ")  # the JSONL's note, not the report's


def test_a_second_import_adds_nothing_and_says_so(ws, checkout):
    imported(ws, checkout)
    before = snapshot(ws)
    again = invoke("import", "lechmazur", checkout, "-w", ws)
    assert again.exit_code == 0, again.output
    assert "nothing new" in again.stdout and "12 matches, 4 entries and 1 judge are" in again.stdout
    after = snapshot(ws)
    assert after["arena.toml"] == before["arena.toml"]
    assert query(ws, "SELECT COUNT(*) FROM matches") == [(12,)]
    assert query(ws, "SELECT COUNT(*) FROM verdicts") == [(26,)]


def test_broken_files_are_skipped_with_reasons_never_a_traceback(ws, tmp_path):
    good = swapped("topic_01", "alpha-1", "bravo-2", rows("pro"), rows("con"))
    unjudged = Debate("topic_02", "alpha-1", "charlie-3", 0)
    orphan = Debate("topic_03", "bravo-2", "delta-4", 0, rows("pro"))
    short = Debate("topic_03", "alpha-1", "delta-4", 0)
    folder = write_checkout(tmp_path / "lech", [*good, unjudged], reported_only=[orphan], short=[short])
    (folder / "transcripts" / "empty-header.md").write_text("# Debate x\n\nno header lines here\n")
    done = invoke("import", "lechmazur", folder, "-w", ws)
    assert done.exit_code == 0 and "Traceback" not in done.output, done.output
    assert "imported from lechmazur/debate" in done.stdout and "2 matches" in done.stdout
    data = imported(ws, folder)  # the second time: nothing new, the same files skipped
    reasons = {s["path"]: s["reason"] for s in data["skipped"]}
    assert reasons[f"transcripts/{unjudged.id}.md"] == "no judge rows for this debate"
    assert reasons[f"transcripts/{short.id}.md"].startswith("its turns are PRO Opening, CON Opening, PRO Rebuttal 1;")
    assert reasons["transcripts/empty-header.md"] == "no topic_id, proposition, model_pro, model_con in its header"
    orphan_reason = [r for p, r in reasons.items() if p.startswith("reports/")]
    assert orphan_reason == [f"1 judge row(s) of debate {orphan.id!r}, which has no transcript"]
    assert "skipped 4:" in done.stdout


def test_hostile_source_files_are_skipped_unread_with_reasons(ws, tmp_path, monkeypatch):
    """Only regular files inside the folder, within the size limits, are read: a transcript that is a link to
    /dev/zero or out of the folder, a FIFO, one past the limit, a JSONL line past its limit or nested 100,000
    deep are each named and skipped (before: a MemoryError traceback, a hang, a RecursionError, or 835 MB read)."""
    from arena.opendata import importers as base

    monkeypatch.setattr(base, "MAX_SOURCE_FILE_BYTES", 4096)  # the limits, as data; small so the test writes little
    folder = write_checkout(tmp_path / "lech", swapped("topic_01", "alpha-1", "bravo-2", rows("pro"), rows("con")),
                            jsonl=True, extra_jsonl=["[" * 100_000 + "]" * 100_000,
                                                     json.dumps({"debate_id": "x", "reasoning": "y" * (2 << 20)})])
    transcripts = folder / "transcripts"
    (transcripts / "zero.md").symlink_to("/dev/zero")
    outside = tmp_path / "outside.md"
    outside.write_text("# a file of someone else's\n")
    (transcripts / "outside.md").symlink_to(outside)
    os.mkfifo(transcripts / "fifo.md")
    (transcripts / "huge.md").write_bytes(b"x" * 5000)
    done = imported(ws, folder)
    assert done["matches"] == 2
    reasons = {s["path"]: s["reason"] for s in done["skipped"]}
    jsonl = "judgments/judge_results__judge_test_20990101a.jsonl"
    assert reasons["transcripts/zero.md"] == "a link to /dev/zero, outside the folder read: not read"
    assert reasons["transcripts/outside.md"] == f"a link to {outside}, outside the folder read: not read"
    assert reasons["transcripts/fifo.md"] == "not a regular file (a FIFO, a device or a folder): not read"
    assert reasons["transcripts/huge.md"] == "5,000 bytes; a source file may hold at most 4,096 bytes: not read"
    assert reasons[f"{jsonl}:3"] == "nested more than 32 levels deep"  # lines 1-2: the two debates' rows
    assert reasons[f"{jsonl}:4"] == "a line of more than 1,048,576 bytes: not read"


@pytest.mark.parametrize("layout, fragment", [
    (None, "no such folder"),
    ("empty", "it has no transcripts/ folder"),
    ("no-judges", "no judge rows"),
])
def test_a_folder_not_in_the_layout_is_exit_2_naming_it_and_writes_nothing(ws, tmp_path, layout, fragment):
    folder = tmp_path / "not-a-checkout"
    if layout == "empty":
        folder.mkdir()
    elif layout == "no-judges":
        (folder / "transcripts").mkdir(parents=True)
        (folder / "transcripts" / "a.md").write_text("# Debate a\n")
    before = snapshot(ws)
    assert_user_error(invoke("import", "lechmazur", folder, "-w", ws), str(folder), fragment)
    assert snapshot(ws) == before


def test_a_name_taken_by_one_of_the_workspace_s_own_is_exit_2_and_writes_nothing(tmp_path, checkout):
    ws = new_workspace(tmp_path / "ws", entries=[entry("alpha-1")], judges=[judge("lechmazur-panel")], opened=True)
    before = snapshot(ws)
    assert_user_error(invoke("import", "lechmazur", checkout, "-w", ws), "entry 'alpha-1'", "a direct entry",
                      "nothing was imported")
    assert snapshot(ws) == before
    renamed = invoke("import", "lechmazur", checkout, "-w", ws, "--judge", "their-panel")
    assert_user_error(renamed, "entry 'alpha-1'")  # --judge names the judge; entries keep the source's ids
    other = new_workspace(tmp_path / "other", judges=[judge("lechmazur-panel")], opened=True)
    assert_user_error(invoke("import", "lechmazur", checkout, "-w", other), "judge 'lechmazur-panel'",
                      "a single judge", "--judge")
    done = imported(other, checkout, "--judge", "their-panel")
    assert done["judges"] == ["their-panel"]
    assert query(other, "SELECT DISTINCT judge FROM verdicts") == [("their-panel",)]


def test_imported_entries_are_never_scheduled(ws, checkout):
    imported(ws, checkout)
    alone = invoke("schedule", "--format", "round-robin", "-w", ws)
    assert_user_error(alone, "at least 2 active entries, found 0", "4 imported entries")
    play = invoke("match", "play", "--motion", "topic_01", "--pro", "alpha-1", "--con", "bravo-2", "-w", ws)
    assert_user_error(play, "--pro: entry 'alpha-1' was imported")
    for name in ("a", "b"):
        added = invoke("entry", "add", name, "--debater", "direct", "--model", f"offline/{name}", "-w", ws)
        assert added.exit_code == 0, added.output
    scheduled = invoke("schedule", "--format", "round-robin", "-w", ws)
    assert scheduled.exit_code == 0, scheduled.output
    assert query(ws, "SELECT DISTINCT pro FROM matches WHERE status = 'scheduled' ORDER BY pro") == [("a",), ("b",)]


def test_arena_run_never_runs_the_imported_judge(tmp_path, checkout):
    ws = new_workspace(tmp_path / "ws", entries=[entry("a", strength=0.5), entry("b")],
                       judges=[judge("sim", runs=1)], opened=True)
    imported(ws, checkout)
    assert invoke("schedule", "--format", "round-robin", "-w", ws).exit_code == 0
    ran = invoke("run", "-w", ws)
    assert ran.exit_code == 0, ran.output
    played = {m for (m,) in query(ws, "SELECT id FROM matches WHERE format = 'agent4debate'")}
    assert len(played) == 2
    by_judge = query(ws, "SELECT judge, COUNT(*) FROM verdicts WHERE match_id IN (SELECT id FROM matches WHERE "
                         "format = 'agent4debate') GROUP BY judge")
    assert by_judge == [("sim", 2)]
    assert query(ws, "SELECT COUNT(*) FROM calls WHERE judge = 'lechmazur-panel'") == [(0,)]
    assert_user_error(invoke("judge", "--judge", "lechmazur-panel", "-w", ws),
                      "'lechmazur-panel' is an imported judge", "lechmazur/debate")


def test_rate_orders_the_planted_strongest_model_first(ws, checkout):
    imported(ws, checkout)
    rated = invoke("rate", "--judge", "lechmazur-panel", "--format", "json", "--bootstrap", "50", "-w", ws)
    assert rated.exit_code == 0, rated.output
    order = [r["entry"] for r in json.loads(rated.stdout)["ratings"]]
    assert order[0] == "alpha-1" and order[-1] == "delta-4"
    assert json.loads(rated.stdout)["meta"]["simulated"] is False
    # The imported speeches are counted as any, so the panel's ratings can be controlled for their length.
    controlled = invoke("rate", "--judge", "lechmazur-panel", "--control", "length", "--format", "json", "--ci",
                        "sandwich", "-w", ws)
    assert controlled.exit_code == 0, controlled.output
    fit = json.loads(controlled.stdout)
    assert fit["meta"]["control"] == ["length"] and fit["control"]["length"]["ci_low"] < fit["control"]["length"][
        "ci_high"]
    assert {r["entry"] for r in fit["ratings"]} == set(order)


def test_publish_shows_every_turn_in_order_and_the_banner_naming_the_source_s_panel(ws, checkout, tmp_path):
    imported(ws, checkout)
    out = tmp_path / "site"
    published = invoke("publish", "--out", out, "-w", ws)
    assert published.exit_code == 0, published.output
    d = tournament()[0]
    page = (out / "matches" / f"{d.id}.html").read_text()
    texts = [speech(d, k, side) for k in range(5) for side in ("pro", "con")]
    places = [page.find(text.split("\n")[0]) for text in texts]
    assert -1 not in places and places == sorted(places)
    titles = [page.find(title) for title in TITLES]
    assert -1 not in titles and titles == sorted(titles)
    # Each panel row's details beside its verdict: who judged, the signed margin, the entertainment score.
    flat = page.replace("\n", "")
    assert ('<th scope="col">Panelist</th><th scope="col">Margin</th><th scope="col">Normalized margin</th>'
            '<th scope="col">Entertainment</th>') in flat
    for row in d.rows:
        signed = row.margin if row.winner == "pro" else -row.margin if row.winner == "con" else 0.0
        assert f"<td>{escape(row.panelist)}</td><td>{signed:g}</td><td>{signed / 2:g}</td>" \
               f"<td>{row.entertainment:g}</td>" in flat, row
    for name in ("index.html", "matches.html", "consistency.html", f"matches/{d.id}.html"):
        html = (out / name).read_text()
        banner = re.search(r'<p class="banner" role="note" id="imported-lechmazur-panel">(.*?)</p>', html, re.S)
        assert banner, name
        text = " ".join(banner.group(1).split())
        assert "lechmazur-panel</strong>: the judges of lechmazur/debate, imported — not one of this arena's judges" \
               in text
        assert "Panel &lt;i&gt;Heron&lt;/i&gt;" in text and "<i>" not in text  # the source's names, escaped
    index = (out / "index.html").read_text()
    assert "Alpha One (deep thought)" in index and "Charlie &lt;b&gt;Three&lt;/b&gt;" in index


def test_no_banner_without_imported_verdicts(tmp_path):
    ws = new_workspace(tmp_path / "ws", entries=[entry("a", strength=0.5), entry("b")], judges=[judge("sim", runs=1)],
                       opened=True)
    assert invoke("schedule", "--format", "round-robin", "-w", ws).exit_code == 0
    assert invoke("run", "-w", ws).exit_code == 0
    assert invoke("publish", "--out", tmp_path / "site", "-w", ws).exit_code == 0
    assert 'id="imported-' not in (tmp_path / "site" / "index.html").read_text()


def test_kinds_lists_the_importers_with_their_options():
    done = invoke("kinds", "--format", "json")
    assert done.exit_code == 0, done.output
    kinds = {(k["family"], k["kind"]): k for k in json.loads(done.stdout)}
    assert {("importer", "lechmazur"), ("importer", "arena"), ("debater", "imported"),
            ("judge", "imported")} <= set(kinds)
    options = {p["name"]: p["default"] for p in kinds[("importer", "lechmazur")]["params"]}
    assert options == {"judge": "lechmazur-panel"}
    assert "importer kind lechmazur" in invoke("kinds").stdout


def test_an_unknown_importer_is_exit_2_naming_the_known_ones(ws, checkout):
    assert_user_error(invoke("import", "nope", checkout, "-w", ws), "unknown importer kind 'nope'", "lechmazur")


def test_another_judge_re_judges_the_imported_debates_and_stats_compare_it_with_the_panel(tmp_path, checkout):
    ws = new_workspace(tmp_path / "ws", judges=[judge("sim", runs=1)], opened=True)
    imported(ws, checkout)
    judged = invoke("judge", "--judge", "sim", "-w", ws)
    assert judged.exit_code == 0, judged.output
    assert judged.stdout.startswith("judged 12 matches with sim: 12 verdicts, 0 failed runs")
    assert query(ws, "SELECT COUNT(*) FROM verdicts WHERE judge = 'sim' AND overall IN ('pro', 'con')") == [(12,)]
    stats = json.loads(invoke("stats", "judges", "--format", "json", "-w", ws).stdout)
    pair = [p for p in stats["pairs"] if {p["a"], p["b"]} == {"sim", "lechmazur-panel"}]
    assert len(pair) == 1 and pair[0]["matches"] == 12 and 0 <= pair[0]["agreement"] <= 1


def test_a_real_judge_reads_the_imported_turns_in_order_under_their_titles(tmp_path, checkout, fake_llm):
    fake_llm.script(json.dumps(VERDICT))
    ws = mark_checked(new_workspace(tmp_path / "ws", judges=[
        judge("j", model="openai/judge-model", api_base=fake_llm.api_base, runs=1)], opened=True))
    imported(ws, checkout)
    judged = invoke("judge", "--judge", "j", "-w", ws)
    assert judged.exit_code == 0, judged.output
    d = tournament()[0]
    first = speech(d, 0, "pro").split("\n")[0]
    seen = [messages_text(body) for body in fake_llm.bodies if first in messages_text(body)]
    assert len(seen) == 1, "one judge request carries this debate"
    places = [seen[0].find(speech(d, k, side).split("\n")[0]) for k in range(5) for side in ("pro", "con")]
    assert -1 not in places and places == sorted(places)
    assert "pressure questions" in seen[0].lower()  # the turns under their own titles


def test_the_imported_kinds_refuse_to_play_or_judge_with_a_clear_error():
    debater = DEBATERS.get("imported")(Entry("alpha-1", "imported", "alpha-1", params={"source": "lechmazur/debate"}))
    with pytest.raises(ArenaError, match=r"entry 'alpha-1' was imported from lechmazur/debate .*cannot play"):
        asyncio.run(debater.speak(None))
    panel = JUDGES.get("imported")(JudgeSpec("lechmazur-panel", "imported", "imported",
                                             options={"source": "lechmazur/debate"}))
    with pytest.raises(ArenaError, match=r"imported from lechmazur/debate .*the arena does not run it"):
        asyncio.run(panel.decide(None, None))
