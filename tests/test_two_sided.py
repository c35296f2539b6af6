"""Two-sided motions: each side's own proposition in a motion file, in what each debater is sent, and both
in what a judge is sent, read from the requests the fake provider recorded."""
from __future__ import annotations

import json

from arena.app import commands as app
from arena.app.commands import open_workspace
from tests.helpers import (VERDICT, assert_user_error, debate_responder, invoke, snapshot, stage_and_side,
                           write_workspace)

MOTIONS = """\
motions:
  - id: two-001
    text: "Justice is only interest / Justice is more than interest"
    category: value
    pro_text: Justice is only interest
    con_text: Justice is more than interest
"""


def test_each_debater_sees_its_own_proposition_and_each_judge_both(tmp_path, fake_llm):
    fake_llm.responder = debate_responder(VERDICT)
    path = write_workspace(tmp_path / "ws", fake_llm.api_base, judge_runs=1)
    (path / "two.yaml").write_text(MOTIONS, encoding="utf-8")
    assert invoke("motion", "import", path / "two.yaml", "-w", path).exit_code == 0
    ws = open_workspace(path)
    try:
        app.play_one(ws, "two-001", "alpha", "beta", progress=lambda line: None)
    finally:
        ws.close()
    by_side = {"pro": [], "con": []}
    judge_prompts = []
    for body in fake_llm.bodies:
        prompt = body["messages"][0]["content"]
        found = stage_and_side(body)
        (by_side[found[1]] if found else judge_prompts).append(prompt)
    assert len(by_side["pro"]) == len(by_side["con"]) == 3 and len(judge_prompts) == 1
    for side, own, other in (("pro", "Justice is only interest", "Justice is more than interest"),
                             ("con", "Justice is more than interest", "Justice is only interest")):
        for prompt in by_side[side]:
            assert f"Your side ({side.upper()}) argues: {own}\n" in prompt
            assert f"The other side argues: {other}\n" in prompt
    assert "PRO argues: Justice is only interest\nCON argues: Justice is more than interest" in judge_prompts[0]
    shown = json.loads(invoke("match", "show", "m00001", "--format", "json", "-w", path).stdout)["motion"]
    assert (shown["pro_text"], shown["con_text"]) == ("Justice is only interest", "Justice is more than interest")


def test_a_one_sided_motion_keeps_its_shape_and_prompts(tmp_path, fake_llm):
    fake_llm.responder = debate_responder(VERDICT)
    path = write_workspace(tmp_path / "ws", fake_llm.api_base, judge_runs=1)
    shown = json.loads(invoke("motion", "show", "en-fact-001", "--format", "json", "-w", path).stdout)
    assert "pro_text" not in shown and "con_text" not in shown


def test_one_side_worded_without_the_other_exits_2_and_writes_nothing(tmp_path, fake_llm):
    path = write_workspace(tmp_path / "ws", fake_llm.api_base)
    (path / "half.yaml").write_text(MOTIONS.replace("    con_text: Justice is more than interest\n", ""),
                                    encoding="utf-8")
    assert invoke("entry", "list", "-w", path).exit_code == 0  # opened once: the motion sets stored
    before = snapshot(path)
    assert_user_error(invoke("motion", "import", path / "half.yaml", "-w", path), "half.yaml", "'pro_text' without "
                      "'con_text'")
    assert snapshot(path) == before
