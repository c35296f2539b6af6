"""Every judge kind through the CLI: match play stores R verdicts per judge; stats and bench report."""
from __future__ import annotations

import json

import pytest

from arena.app import commands as app
from arena.app.commands import open_workspace
from tests.support.helpers import (debate_responder, entry, invoke, judge, new_workspace, requested_schema, schema_instance,
                           stage_and_side, write_workspace)

KINDS = {"j-single": "single", "j-debatrix": "debatrix", "j-panel": "panel", "j-devil": "devils_advocate"}


def workspace(tmp_path):
    """Offline entries strong and weak, and a judge of each kind (R = 2); no arena.db yet."""
    return new_workspace(tmp_path / "ws", entries=[entry("strong", strength=1.5), entry("weak", strength=-1.5)],
                         judges=[judge(name, kind, runs=2) for name, kind in KINDS.items()], init=None)


def test_match_play_with_each_judge_kind_then_stats_and_bench(tmp_path):
    ws = workspace(tmp_path)
    judges = [arg for name in KINDS for arg in ("--judge", name)]
    for motion, pro, con in (("en-fact-001", "strong", "weak"), ("en-value-002", "weak", "strong")):
        played = invoke("match", "play", "--motion", motion, "--pro", pro, "--con", con, "-w", ws, *judges)
        assert played.exit_code == 0, played.output
    for match_id in ("m00001", "m00002"):
        shown = json.loads(invoke("match", "show", match_id, "-w", ws, "--format", "json").output)
        runs = {name: [v["run"] for v in shown["verdicts"] if v["judge"] == name] for name in KINDS}
        assert runs == {name: [0, 1] for name in KINDS}
        assert all(v["overall"] in ("pro", "con", "tie") and set(v["dimensions"]) >= {"argument", "source", "language"}
                   for v in shown["verdicts"])

    stats = json.loads(invoke("stats", "judges", "-w", ws, "--format", "json").output)
    assert sorted(j["judge"] for j in stats["judges"]) == sorted(KINDS)
    assert all(j["matches"] == 2 and j["runs"] == 4 and j["calls_per_match"] >= 2 for j in stats["judges"])
    assert len(stats["pairs"]) == 6 and all(p["matches"] == 2 for p in stats["pairs"])

    for name in KINDS:
        rated = json.loads(invoke("rate", "-w", ws, "--judge", name, "--format", "json", "--bootstrap", "20").output)
        assert rated["meta"]["judge"] == name and rated["meta"]["matches"] == 2

    dataset = tmp_path / "bench.jsonl"
    from arena.gateway import offline

    lines = []
    for k, (pro, con, label) in enumerate([(1.5, -1.5, "pro"), (-1.5, 1.5, "con")]):
        speeches = [{"side": side, "stage": stage,
                     "text": offline.prose(f"Motion: Zoos do more good than harm {k}{stage}{side}",
                                           pro if side == "pro" else con, __import__("random").Random(k), 14)}
                    for stage, side in (("constructive", "pro"), ("constructive", "con"), ("rebuttal", "pro"),
                                        ("rebuttal", "con"), ("summary", "con"), ("summary", "pro"))]
        lines.append(json.dumps({"id": f"d{k}", "motion": "Zoos do more good than harm", "speeches": speeches,
                                 "label": label}))
    dataset.write_text("\n".join(lines) + "\n", encoding="utf-8")
    bench = invoke("judge-bench", dataset, "--judge", "j-panel", "-w", ws, "--format", "json")
    assert bench.exit_code == 0, bench.output
    report = json.loads(bench.stdout)  # progress goes to stderr
    assert report["items"] == 2 and 0 <= report["accuracy"] <= 1 and "confusion" in report


def answering(body: dict) -> str:
    """Speeches for the debaters; for a judge, the first valid answer to its schema, or a note."""
    if stage_and_side(body):
        return debate_responder()(body)
    schema = requested_schema(body)
    return "A note on the debate." if schema is None else json.dumps(schema_instance(schema))


@pytest.mark.parametrize("options, sent", [({}, 0.0), ({"temperature": 0.6}, 0.6)])
def test_every_kind_samples_at_its_papers_temperature_unless_configured(tmp_path, fake_llm, options, sent):
    """ChatEval and DEBATE ran their judges at temperature 0, as does the Debatrix code and the single-agent
    baselines they compare with: each kind sends 0 unless [judges.options] sets a temperature."""
    fake_llm.responder = answering
    kinds = {"debatrix": {}, "panel": {"referees": 2, "turns": 1}, "devils_advocate": {"iterations": 1}}
    path = write_workspace(tmp_path / "ws", fake_llm.api_base, judge_runs=1, options=options, judges=[
        judge(f"j-{kind}", kind, model=f"openai/{kind}-judge", api_base=fake_llm.api_base, options={**own, **options})
        for kind, own in kinds.items()])
    ws = open_workspace(path)
    try:
        app.play_one(ws, "en-fact-001", "alpha", "beta", progress=lambda line: None)
    finally:
        ws.close()
    judged = {}
    for body in fake_llm.bodies:
        if not stage_and_side(body):
            judged.setdefault(body["model"], set()).add(body["temperature"])
    assert judged == {model: {sent} for model in ("judge-model", "debatrix-judge", "panel-judge",
                                                   "devils_advocate-judge")}
