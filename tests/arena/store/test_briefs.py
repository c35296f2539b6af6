"""A web turn's brief is a record (arena.domain.records.Brief: the motion a Motion, the speeches shown Speeches) and is
stored as the JSON every workspace's turns already hold, byte for byte, so a turn opened before reads back the same."""
from __future__ import annotations

import json

from arena.domain.formats import AGENT4DEBATE
from arena.domain.records import Motion, Reference, Speech
from arena.match.turns import brief
from arena.store import decode
from arena.store.turns import brief_json

# A rebuttal's brief as the code before the record stored it (e7a2d3a, arena.turns.brief): a two-sided Chinese
# motion, PRO shown both constructives, one with a reference.
STORED = '{"motion": {"id": "zh-1", "text": "正义只是利益 / 正义不只是利益", "category": "value", "language": "zh", "info_slide": "双方负有同等的举证责任。", "pro_text": "正义只是利益", "con_text": "正义不只是利益"}, "format": "agent4debate", "title": "驳论", "purpose": "", "place": [3, 6], "language": "zh", "budget": {"amount": 800, "unit": "characters"}, "visible": [{"stage": "constructive", "title": "立论", "side": "pro", "text": "甲方立论", "references": [{"number": 3, "title": "T <b>", "url": "https://x.org/?a=1&b=2", "text": "snip"}]}, {"stage": "constructive", "title": "立论", "side": "con", "text": "乙方", "references": []}]}'


def shown() -> tuple[Motion, tuple[Speech, ...]]:
    motion = Motion("zh-1", "正义只是利益 / 正义不只是利益", "value", "zh", "", "正义只是利益", "正义不只是利益")
    return motion, (Speech("constructive", "pro", "甲方立论", (Reference("T <b>", "https://x.org/?a=1&b=2", "snip", 3),)),
                    Speech("constructive", "con", "乙方", ()))


def test_a_brief_is_stored_as_the_json_turns_held_before_it_was_a_record():
    motion, visible = shown()
    made = brief(motion, AGENT4DEBATE, "rebuttal", "pro", visible, "zh", (800, "characters"))
    assert json.dumps(brief_json(made), ensure_ascii=False) == STORED


def test_a_stored_brief_reads_back_as_the_records_it_showed():
    motion, visible = shown()
    read = decode.brief(STORED)
    assert read == brief(motion, AGENT4DEBATE, "rebuttal", "pro", visible, "zh", (800, "characters"))
    assert read.motion == motion and read.visible == visible
    assert read.budget.amount == 800 and read.budget.unit == "characters" and read.place == (3, 6)
    assert read.stage_titles == {"constructive": AGENT4DEBATE.title_of("constructive", "zh")}
