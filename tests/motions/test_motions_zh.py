"""The built-in Chinese motion set: its size and balance, per-side wording, and `arena motion list|show` on it."""
from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from arena.domain.records import CATEGORIES, DEFAULT_INFO_SLIDE
from motions.library import load_builtin
from tests.support.helpers import invoke, new_workspace

CJK = re.compile(r"[\u4e00-\u9fff]")
# The motions the set had before it grew: their ids and wording are stable.
ORIGINAL = {"zh-fact-001": "人性本善", "zh-value-003": "公平比效率更重要", "zh-policy-001": "安乐死应当合法化",
            "zh-policy-005": "高校应当允许本科生自由转专业"}


@pytest.fixture(scope="module")
def motions():
    return load_builtin("zh")


def test_the_set_is_large_and_balanced_across_categories(motions):
    counts = Counter(m.category for m in motions)
    assert len(motions) >= 66
    assert set(counts) == set(CATEGORIES) and all(counts[c] >= 22 for c in CATEGORIES), counts


def test_ids_are_unique_well_formed_and_numbered_in_order(motions):
    ids = [m.id for m in motions]
    assert len(set(ids)) == len(ids)
    for category in CATEGORIES:
        numbers = [int(m.id.rsplit("-", 1)[1]) for m in motions if m.category == category]
        assert all(re.fullmatch(rf"zh-{category}-\d{{3}}", m.id) for m in motions if m.category == category)
        assert numbers == list(range(1, len(numbers) + 1)), category  # appended, never renumbered
    by_id = {m.id: m for m in motions}
    assert all(by_id[i].text == text and not by_id[i].two_sided for i, text in ORIGINAL.items())


def test_every_text_is_chinese(motions):
    for m in motions:
        assert m.language == "zh"
        for text in (m.text, m.pro_text, m.con_text):
            assert not text or CJK.search(text), (m.id, text)
        assert m.info_slide == DEFAULT_INFO_SLIDE or CJK.search(m.info_slide), m.id


def test_two_sided_motions_word_both_sides_and_name_the_pair(motions):
    two_sided = [m for m in motions if m.two_sided]
    assert len(two_sided) * 3 >= len(motions)  # at least a third
    assert {m.category for m in two_sided} == set(CATEGORIES)
    for m in two_sided:
        assert m.pro_text and m.con_text and m.pro_text != m.con_text, m.id
        assert m.text == f"{m.pro_text} / {m.con_text}", m.id
        assert (m.proposition("pro"), m.proposition("con")) == (m.pro_text, m.con_text)
    for m in motions:
        assert bool(m.pro_text) == bool(m.con_text), m.id
        assert " / " in m.text or not m.two_sided


def test_texts_are_distinct(motions):
    sides = [t for m in motions for t in ((m.pro_text, m.con_text) if m.two_sided else (m.text,))]
    assert len(set(sides)) == len(sides)


# --- through the CLI -----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def ws(tmp_path_factory) -> Path:
    return new_workspace(tmp_path_factory.mktemp("zh") / "ws", arena={"language": "zh", "seed": 0},
                         motions=["builtin:zh"], search=None, init="cli")


def run_json(*args):
    result = invoke(*args)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


@pytest.mark.parametrize("category", CATEGORIES)
def test_motion_list_gives_each_category(ws, motions, category):
    rows = run_json("motion", "list", "--category", category, "--format", "json", "-w", ws)
    expected = [m for m in motions if m.category == category]
    assert [r["id"] for r in rows] == [m.id for m in expected] and len(rows) >= 22
    assert {(r["category"], r["language"], r["set"]) for r in rows} == {(category, "zh", "builtin:zh")}
    for row, m in zip(rows, expected):
        assert row["text"] == m.text
        assert (row.get("pro_text"), row.get("con_text")) == ((m.pro_text, m.con_text) if m.two_sided else (None, None))


def test_motion_show_words_the_sides_only_for_a_two_sided_motion(ws, motions):
    two = next(m for m in motions if m.two_sided)
    one = next(m for m in motions if not m.two_sided)
    shown = run_json("motion", "show", two.id, "--format", "json", "-w", ws)
    assert (shown["text"], shown["pro_text"], shown["con_text"]) == (two.text, two.pro_text, two.con_text)
    assert shown["set"] == "builtin:zh" and shown["language"] == "zh"
    shown = run_json("motion", "show", one.id, "--format", "json", "-w", ws)
    assert shown["text"] == one.text and "pro_text" not in shown and "con_text" not in shown
