"""Two-sided motions: each side's own proposition in a motion file, in what each debater is sent, and both
in what a judge is sent, read from the requests the fake provider recorded."""
from __future__ import annotations

import json
import re
from collections import Counter

from arena.domain import transcript
from arena.app import commands as app
from arena.app.commands import open_workspace
from tests.support.helpers import (VERDICT, assert_user_error, debate_responder, invoke, judge, requested_schema,
                           schema_instance, snapshot, speech_text, stage_and_side, write_workspace)

MOTIONS = """\
motions:
  - id: two-001
    text: "Justice is only interest / Justice is more than interest"
    category: value
    pro_text: Justice is only interest
    con_text: Justice is more than interest
"""


def play_two_sided(path) -> None:
    """Import MOTIONS into the workspace at path and play two-001, alpha (PRO) against beta, judged by all."""
    (path / "two.yaml").write_text(MOTIONS, encoding="utf-8")
    assert invoke("motion", "import", path / "two.yaml", "-w", path).exit_code == 0
    ws = open_workspace(path)
    try:
        app.play_one(ws, "two-001", "alpha", "beta", progress=lambda line: None)
    finally:
        ws.close()


def test_each_debater_sees_its_own_proposition_and_each_judge_both(tmp_path, fake_llm):
    fake_llm.responder = debate_responder(VERDICT)
    path = write_workspace(tmp_path / "ws", fake_llm.api_base, judge_runs=1)
    play_two_sided(path)
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


def arguing(body: dict) -> str:
    """A debater says which proposition it argues, as its prompt states it; a judge gets the first valid answer to
    its schema (PRO wins; the critic finds no issue), or a note."""
    prompt = "\n".join(m["content"] for m in body["messages"])
    if turn := stage_and_side(body):
        own = re.search(r"^Your side \((?:PRO|CON)\) argues: (.+)$", prompt, re.MULTILINE).group(1)
        return speech_text(f"ARGUING<{own}> and our case is strong ({turn[0]}).")
    schema = requested_schema(body)
    return "A note on the debate." if schema is None else json.dumps(schema_instance(schema))


def test_with_swap_sides_every_judge_prompt_states_the_propositions_its_speeches_argue(tmp_path, fake_llm):
    """Each judge kind, run twice with swap_sides: in every request, the proposition stated for PRO (and CON) is
    the one the speeches labelled PRO (and CON) argue, on the swapped run as on the plain one."""
    fake_llm.responder = arguing
    kinds = {"debatrix": {}, "panel": {"referees": 2, "turns": 1}, "devils_advocate": {"iterations": 1}}
    path = write_workspace(tmp_path / "ws", fake_llm.api_base, judge_runs=2, options={"swap_sides": True}, judges=[
        judge(f"j-{kind}", kind, model=f"openai/{kind}-judge", api_base=fake_llm.api_base,
              options={"swap_sides": True, **options}) for kind, options in kinds.items()])
    play_two_sided(path)
    plain, swapped = Counter(), Counter()
    blocks = 0
    for body in fake_llm.bodies:
        if stage_and_side(body):
            continue
        prompt = "\n".join(m["content"] for m in body["messages"])
        stated = dict(re.findall(r"^(PRO|CON) argues: (.+)$", prompt, re.MULTILINE))
        assert set(stated.values()) == {"Justice is only interest", "Justice is more than interest"}, prompt[:400]
        for side, _stage, text in transcript.split(prompt):
            assert f"ARGUING<{stated[side.upper()]}>" in text, (side, text, stated)
            blocks += 1
        (plain if stated["PRO"] == "Justice is only interest" else swapped)[body["model"]] += 1
    # The odd run of each judge sent as many requests as the even one, every one of them swapped.
    assert plain == swapped and set(plain) == {"judge-model", "debatrix-judge", "panel-judge", "devils_advocate-judge"}
    assert blocks > 0
    shown = json.loads(invoke("match", "show", "m00001", "--format", "json", "-w", path).stdout)
    assert {(v["judge"], v["run"], v["overall"]) for v in shown["verdicts"]} == {
        (name, run, winner) for name in ("j1", *(f"j-{kind}" for kind in kinds))
        for run, winner in ((0, "pro"), (1, "con"))}  # PRO on what each run read, mapped back on the odd one


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
