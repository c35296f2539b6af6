"""The three-stage protocol, checked on what each debater and judge actually received over HTTP."""
from __future__ import annotations

import re
import sqlite3

from arena.domain import transcript
from arena.app import commands as app
from arena.app.runner import runs
from arena.app.shapes import records as shapes


from arena.app.commands import open_workspace
from tests.support.helpers import debate_responder, failing_at, stage_and_side, write_workspace

ORDER = [("constructive", "pro"), ("constructive", "con"), ("rebuttal", "pro"), ("rebuttal", "con"),
         ("summary", "con"), ("summary", "pro")]


def play_one(tmp_path, fake_llm, **kwargs):
    fake_llm.responder = debate_responder()
    ws = open_workspace(write_workspace(tmp_path / "ws", fake_llm.api_base, **kwargs))
    ids = app.schedule(ws, "round-robin", rounds=1).match_ids
    runs.run(ws, concurrency=1, progress=lambda line: None)
    return ws, ids[0]


def speech_requests(fake_llm):
    return [(stage_and_side(r.body), r.body) for r in fake_llm.requests if not r.body.get("response_format")]


def test_each_speaker_sees_exactly_the_earlier_speeches(tmp_path, fake_llm):
    ws, match_id = play_one(tmp_path, fake_llm)
    match = ws.store.match(match_id)
    texts = {(s.stage, s.side): s.text for s in match.speeches}
    requests = speech_requests(fake_llm)[:6]
    assert sorted(key for key, _ in requests) == sorted(ORDER)
    for (stage, side), body in requests:
        prompt = body["messages"][0]["content"]
        earlier = ORDER[:ORDER.index((stage, side))]
        if stage == "constructive":
            earlier = []  # stage 1 is independent: neither side sees the other's constructive
        for key, text in texts.items():
            assert (text in prompt) == (key in earlier), f"{stage}/{side} prompt and {key}"


def test_constructives_are_blind_to_each_other(tmp_path, fake_llm):
    _, _ = play_one(tmp_path, fake_llm)
    constructive = {side: body for (stage, side), body in speech_requests(fake_llm)[:6] if stage == "constructive"}
    assert "SPEECH<" not in constructive["pro"]["messages"][0]["content"]
    assert "SPEECH<" not in constructive["con"]["messages"][0]["content"]


def test_speaking_order_and_stored_order(tmp_path, fake_llm):
    ws, match_id = play_one(tmp_path, fake_llm)
    arrivals = [key for key, _ in speech_requests(fake_llm)[:6]]
    # The two constructives run in parallel, so only their pair is unordered.
    assert set(arrivals[:2]) == {("constructive", "pro"), ("constructive", "con")}
    assert arrivals[2:] == ORDER[2:]
    stored = [(s.stage, s.side) for s in ws.store.match(match_id).speeches]
    assert stored == ORDER


def test_judges_see_sides_only_as_pro_and_con(tmp_path, fake_llm):
    ws, match_id = play_one(tmp_path, fake_llm, entries=("zebra-entry", "yak-entry"))
    judge_prompts = [r.body["messages"][0]["content"] for r in fake_llm.requests if r.body.get("response_format")]
    assert len(judge_prompts) == 6  # two matches (sides swapped), R = 3 runs each
    exchanged = [(stage, "con" if side == "pro" else "pro") for stage, side in ORDER]
    orders = []
    for prompt in judge_prompts:
        # Speech texts name the model they came from (see debate_responder), so strip those first.
        visible = re.sub(r"SPEECH<[^>]*>", "", prompt)
        assert "zebra" not in visible and "yak" not in visible
        orders.append([(stage, side) for side, stage, _ in transcript.split(prompt)])
    # swap_sides is on by default: run 1 of each match reads the labels exchanged, runs 0 and 2 as debated.
    assert sorted(map(str, orders)) == sorted(map(str, [ORDER, exchanged, ORDER] * 2))


def test_judge_runs_are_distinct_samples_and_score_the_match(tmp_path, fake_llm):
    ws, match_id = play_one(tmp_path, fake_llm, options={"swap_sides": False})  # every run asks the same
    judge_requests = [r.body for r in fake_llm.requests if r.body.get("response_format")]
    # Two matches (sides swapped) with R = 3: none of the runs was a cache hit of another.
    assert len(judge_requests) == 6
    assert len({r["messages"][0]["content"] for r in judge_requests}) == 2
    shown = shapes.match_json(ws.store.match(match_id))
    assert [v["overall"] for v in shown["verdicts"]] == ["pro", "pro", "pro"]
    assert shown["score"] == {"pro": 3.0, "con": 0.0}
    assert shown["simulated"] is False
    assert shown["speeches"][0]["agents"]["writer"]["calls"] == 1


def test_swap_sides_option_relabels_odd_runs_and_maps_back(tmp_path, fake_llm):
    ws, match_id = play_one(tmp_path, fake_llm, options={"swap_sides": True})
    prompts = [r.body["messages"][0]["content"] for r in fake_llm.requests if r.body.get("response_format")][:3]
    pro_text = next(s.text for s in ws.store.match(match_id).speeches if (s.stage, s.side) == ("constructive", "pro"))
    # Run 1 (odd) shows Pro's constructive under the CON label.
    labelled = [next(side for side, stage, body in transcript.split(p) if body == pro_text) for p in prompts]
    assert sorted(labelled) == ["con", "pro", "pro"]
    # The speaking order the swapped run is told matches its blocks: Pro's opening, relabelled, comes first.
    swapped = next(p for p, side in zip(prompts, labelled) if side == "con")
    assert "Speaking order: 1. CON constructive, 2. PRO constructive, 3. CON rebuttal, 4. PRO rebuttal, " \
           "5. PRO summary, 6. CON summary." in swapped
    # The fake judge always answers "pro" for the label it saw; the swapped run becomes a Con win.
    overall = sorted(v.overall for v in ws.store.match(match_id).verdicts)
    assert overall == ["con", "pro", "pro"]


def test_a_failed_match_stores_no_partial_speeches(tmp_path, fake_llm):
    ws = open_workspace(write_workspace(tmp_path / "ws", fake_llm.api_base))
    fake_llm.responder = failing_at("summary", "con")
    app.schedule(ws, "round-robin", rounds=1)
    counts = runs.run(ws, concurrency=1, progress=lambda line: None)
    assert (counts["done"], counts["failed"], counts["total"]) == (0, 2, 2)
    db = sqlite3.connect(ws.path / "arena.db")
    assert db.execute("SELECT COUNT(*) FROM speeches").fetchone()[0] == 0
    assert db.execute("SELECT COUNT(*) FROM verdicts").fetchone()[0] == 0
    statuses = {r[0] for r in db.execute("SELECT status FROM matches")}
    assert statuses == {"failed"}
    assert "400" in db.execute("SELECT error FROM matches").fetchone()[0]
    # The calls that were paid for are in the ledger, and a rerun gets them from the cache.
    paid = db.execute("SELECT COUNT(*) FROM calls WHERE error IS NULL AND cache_hit = 0").fetchone()[0]
    assert paid == 8  # per match: 4 speeches before Con's summary (the first summary) failed
    fake_llm.responder = debate_responder()  # healthy again
    before = len(fake_llm.requests)
    counts = runs.run(ws, concurrency=1, retry_failed=True, progress=lambda line: None)
    assert counts["done"] == 2
    new = [r.body for r in fake_llm.requests[before:]]
    # Only the summaries are asked for again; the 8 earlier speeches come from the cache.
    assert sorted(stage_and_side(b) for b in new if not b.get("response_format")) == [
        ("summary", "con"), ("summary", "con"), ("summary", "pro"), ("summary", "pro")]
    assert db.execute("SELECT COUNT(*) FROM calls WHERE cache_hit = 1").fetchone()[0] == 8
