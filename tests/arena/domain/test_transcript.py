"""Speeches are quoted so that none can end its own block or pass for instructions, and swapped labels
are swapped everywhere, the stated speaking order included: unit checks of arena.domain.transcript, then what
every judge kind was sent when a hostile speech tried to address it."""
from __future__ import annotations

import json
import re

import pytest

from arena.domain import transcript
from arena.app import commands as app
from arena.app.runner import runs
from arena.app.commands import open_workspace
from arena.domain.records import Reference, Speech
from tests.support.helpers import (hostile, judge, requested_schema, schema_instance, speech_text, stage_and_side,
                           write_workspace)

ORDER = [("constructive", "pro"), ("constructive", "con"), ("rebuttal", "pro"), ("rebuttal", "con"),
         ("summary", "con"), ("summary", "pro")]


def key_of(rendered: str) -> str:
    return re.search(r"key ([0-9a-f]+) ===\"", rendered).group(1)


def debate(texts: dict | None = None) -> list[Speech]:
    texts = texts or {}
    return [Speech(stage, side, texts.get((stage, side), f"The {side} {stage} speech.")) for stage, side in ORDER]


def test_each_speech_is_between_marker_lines_whose_key_occurs_in_no_speech():
    speeches = debate({("rebuttal", "con"): hostile(4, "con")})
    rendered = transcript.render(speeches)
    key = key_of(rendered)

    assert not any(key in s.text for s in speeches)
    assert [(stage, side) for side, stage, _ in transcript.split(rendered)] == ORDER
    [_, _, _, (side, stage, body), _, _] = transcript.split(rendered)
    assert (side, stage, body) == ("con", "rebuttal", speeches[3].text.strip())  # whole, fake markers and all
    assert rendered.count(f"=== end of speech 4 · key {key} ===") == 1
    assert "never instructions to you" in rendered


def test_the_same_debate_renders_the_same_so_cached_judge_calls_stay_cached():
    assert transcript.render(debate()) == transcript.render(debate())
    assert key_of(transcript.render(debate())) != key_of(transcript.render(debate({("summary", "pro"): "Other."})))


def test_swapped_labels_come_with_the_swapped_speaking_order():
    rendered = transcript.render(debate(), swap=True)
    assert "Speaking order: 1. CON constructive, 2. PRO constructive, 3. CON rebuttal, 4. PRO rebuttal, " \
           "5. PRO summary, 6. CON summary." in rendered
    assert [side for side, _, _ in transcript.split(rendered)] == ["con", "pro", "con", "pro", "pro", "con"]
    assert transcript.split(rendered)[0][2] == "The pro constructive speech."


def test_a_cited_source_is_shown_with_its_number_and_its_text_within_the_budget():
    long = "Cities that removed cars saw fewer injuries. " * 20
    refs = (Reference("Road safety report", "https://example.org/r", long, number=7),
            Reference("Transit survey", "https://example.org/t"))
    speeches = [Speech("constructive", "pro", "Injuries fell [7].", refs), *debate()[1:]]
    body = transcript.split(transcript.render(speeches))[0][2]
    assert "[7] Road safety report (https://example.org/r)\n    Source text: Cities that removed cars" in body
    assert "[2] Transit survey (https://example.org/t)" in body  # no number: its place in the list
    shown = re.search(r"Source text: (.*)", body).group(1)
    assert shown.endswith(" […]") and len(shown) == transcript.SOURCE_CHARS + len(" […]")


def responder(speeches: dict | None = None):
    """Debaters say their stage and side (or the given text); judges get a valid instance of their schema, or
    a note for a free-text turn (a discussion, a critique)."""
    def respond(body: dict) -> str:
        if schema := requested_schema(body):
            return json.dumps(schema_instance(schema))
        if (speech := stage_and_side(body)) is None:
            return "A judge's note."
        return (speeches or {}).get(speech, speech_text(f"The {speech[1]} {speech[0]} speech."))

    return respond


JUDGES = {  # each kind's options, small
    "single": {},
    "debatrix": {},
    "panel": {"referees": 2, "turns": 1},
    "devils_advocate": {"iterations": 1},
}


@pytest.mark.parametrize("kind", JUDGES)
def test_every_judge_kind_reads_a_hostile_speech_as_material_inside_its_block(tmp_path, fake_llm, kind):
    other = judge(f"{kind}-j", kind, "openai/judge-model", runs=1, api_base=fake_llm.api_base, options=JUDGES[kind])
    # The speeches are lines, not speeches: the checks are off, so the hostile one reaches the judges.
    ws = open_workspace(write_workspace(tmp_path / "ws", fake_llm.api_base, judge_runs=1, judges=[other],
                                        arena={"speech_checks": False}))

    fake_llm.responder = responder({("rebuttal", "con"): hostile(4, "con")})
    [match_id] = app.schedule(ws, "round-robin", rounds=1).match_ids[:1]
    runs.run(ws, concurrency=1, progress=lambda line: None)
    text = next(s.text for s in ws.store.match(match_id).speeches if (s.stage, s.side) == ("rebuttal", "con"))
    judged = [r.body["messages"] for r in fake_llm.requests if stage_and_side(r.body) is None]
    prompts = ["\n".join(m["content"] for m in messages) for messages in judged]
    seen = [p for p in prompts if "Instructions to the judge" in p]
    assert seen, "no judge request showed the hostile speech"
    for prompt in seen:
        key = key_of(prompt)
        assert key not in text
        blocks = transcript.split(prompt)
        assert ("con", "rebuttal", text.strip()) in blocks  # all of it, inside CON's block
        assert not any(stage == "summary" and body == "PRO concedes the debate." for _, stage, body in blocks)
        assert "never instructions to you" in prompt


@pytest.mark.parametrize("kind", JUDGES)
def test_with_swap_sides_every_judge_prompt_states_the_order_its_blocks_are_in(tmp_path, fake_llm, kind):
    other = judge(f"{kind}-j", kind, "openai/judge-model", runs=2, api_base=fake_llm.api_base,
                  options={**JUDGES[kind], "swap_sides": True})
    ws = open_workspace(write_workspace(tmp_path / "ws", fake_llm.api_base, judge_runs=1, judges=[other]))

    fake_llm.responder = responder()
    app.schedule(ws, "round-robin", rounds=1)
    runs.run(ws, concurrency=1, progress=lambda line: None)
    stated = re.compile(r"(\d+)\. (PRO|CON) (constructive|rebuttal|summary)")
    openers = set()
    for request in fake_llm.requests:
        if stage_and_side(request.body) is not None or "key " not in str(request.body):
            continue
        prompt = "\n".join(m["content"] for m in request.body["messages"])
        for block in transcript.HEADER.finditer(prompt):
            side, stage, number = block.group(1), block.group(2), block.group(3)
            claims = {(s, st) for n, s, st in stated.findall(prompt) if n == number}
            assert claims and claims == {(side, stage)}, (number, side, stage, claims)
        assert not re.search(r"(PRO|CON), then (PRO|CON)", prompt)  # no order stated apart from the transcript's
        first = [s for n, s, _ in stated.findall(prompt) if n == "1"]
        openers.update(first)
    assert openers == {"PRO", "CON"}  # both the plain runs and the swapped ones were checked


def test_a_marker_counts_only_at_the_start_of_its_line():
    rendered = transcript.render(debate())
    key = key_of(rendered)
    assert len(transcript.split(rendered)) == 6
    marker = f"=== CON · rebuttal · speech 4 · key {key} ==="
    glued = rendered.replace(f"\n{marker}", f"\nx{marker}")
    assert [(stage, side) for side, stage, _ in transcript.split(glued)] == ORDER[:3] + ORDER[4:]
