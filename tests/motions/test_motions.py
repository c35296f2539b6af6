"""The motion library: the built-in sets' contents, and validation of users' motion files."""
from __future__ import annotations

import re
from collections import Counter
from contextlib import contextmanager
from pathlib import Path

import pytest

from arena.base.errors import UserError
from arena.domain.records import CATEGORIES, DEFAULT_INFO_SLIDE, Motion
from motions.library import builtin_sets, load_builtin, load_motion_file, load_sets

GOOD_YAML = """\
- id: my-fact-001
  text: Cities are getting hotter
  category: fact
- id: my-policy-001
  text: "  Cities should plant more trees  "
  category: policy
  language: fr
  info_slide: Trees cool streets.
"""


@pytest.fixture
def write(tmp_path: Path):
    """Write a file under tmp_path and return its path."""

    def _write(name: str, text: str) -> Path:
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        return path

    return _write


@contextmanager
def raises_user_error(*fragments: str):
    """Expect a UserError whose message contains every fragment."""
    with pytest.raises(UserError) as info:
        yield info
    message = str(info.value)
    for fragment in fragments:
        assert fragment in message, f"{fragment!r} not in {message!r}"


# --- the built-in library ---------------------------------------------------


def test_builtin_sets_are_found_from_the_package():
    assert builtin_sets() == ["en", "zh"]


@pytest.mark.parametrize("name, total, per_category", [("en", 66, 22), ("zh", 12, 4)])
def test_builtin_set_sizes(name, total, per_category):
    motions = load_builtin(name)
    counts = Counter(m.category for m in motions)
    assert len(motions) >= total
    assert set(counts) == set(CATEGORIES)
    assert all(counts[c] >= per_category for c in CATEGORIES), counts


@pytest.mark.parametrize("name", ["en", "zh"])
def test_builtin_motions_are_well_formed(name):
    motions = load_builtin(name)
    assert all(isinstance(m, Motion) for m in motions)
    assert len({m.id for m in motions}) == len(motions)
    assert len({m.text for m in motions}) == len(motions)
    for m in motions:
        assert m.language == name
        assert re.fullmatch(rf"{name}-{m.category}-\d{{3}}", m.id), m.id
        assert m.text == m.text.strip() and m.text
        assert m.info_slide


def test_builtin_ids_are_unique_across_sets():
    assert len(load_sets(["builtin:en", "builtin:zh"], Path("."))) == len(load_builtin("en")) + len(
        load_builtin("zh")
    )


def test_chinese_motions_are_in_chinese():
    for m in load_builtin("zh"):
        assert re.search(r"[\u4e00-\u9fff]", m.text), m.text


def test_case_study_motions_are_present():
    by_text = {m.text.lower(): m for m in load_builtin("en")}
    justice = by_text.get("justice is nothing but the interest of the stronger") or by_text.get(
        "justice is nothing but interest"
    )
    fat_tax = by_text.get("developed countries should impose a fat tax")
    assert justice is not None and justice.category == "value"
    assert fat_tax is not None and fat_tax.category == "policy"


def test_unknown_builtin_set_lists_the_known_ones():
    with raises_user_error("unknown built-in motion set 'xx'", "en, zh"):
        load_builtin("xx")


# --- loading files ------------------------------------------------------------


def test_yaml_list_loads_with_defaults_and_stripping(write):
    motions = load_motion_file(write("motions.yaml", GOOD_YAML), default_language="de")
    assert motions == [
        Motion("my-fact-001", "Cities are getting hotter", "fact", "de", DEFAULT_INFO_SLIDE),
        Motion("my-policy-001", "Cities should plant more trees", "policy", "fr", "Trees cool streets."),
    ]


def test_yaml_mapping_with_motions_key_loads(write):
    text = "motions:\n" + "".join(f"  {line}\n" for line in GOOD_YAML.splitlines())
    motions = load_motion_file(write("motions.yml", text))
    assert [m.id for m in motions] == ["my-fact-001", "my-policy-001"]
    assert motions[0].language == "en"


def test_jsonl_loads_and_skips_blank_lines(write):
    text = (
        '{"id": "j-1", "text": "Tea beats coffee", "category": "value"}\n'
        "\n"
        '{"id": "j-2", "text": "Ban cars", "category": "policy", "language": "nl"}\n'
    )
    motions = load_motion_file(write("motions.jsonl", text))
    assert motions == [
        Motion("j-1", "Tea beats coffee", "value"),
        Motion("j-2", "Ban cars", "policy", "nl"),
    ]


# --- validation errors ------------------------------------------------------------

THIRD_ITEM_PREFIX = """\
- id: a
  text: A
  category: fact
- id: b
  text: B
  category: value
"""


@pytest.mark.parametrize(
    "third, fragments",
    [
        ("- id: c\n  category: fact\n", ["item 3 (line 7)", "missing or empty 'text'"]),
        ("- id: c\n  text: '   '\n  category: fact\n", ["item 3 (line 8)", "missing or empty 'text'"]),
        ("- text: C\n  category: fact\n", ["item 3 (line 7)", "missing or empty 'id'"]),
        ("- id: 7\n  text: C\n  category: fact\n", ["item 3 (line 7)", "'id' must be a string, got int"]),
        (
            "- id: c\n  text: C\n  category: facts\n",
            ["item 3 (line 9)", "unknown category 'facts' (expected fact, value or policy)"],
        ),
        ("- id: a\n  text: C\n  category: fact\n", ["item 3 (line 7)", "repeated id 'a' (first at item 1)"]),
        ("- id: c\n  text: C\n  category: fact\n  side: pro\n", ["item 3 (line 10)", "unknown key 'side'"]),
        ("- just a string\n", ["item 3 (line 7)", "expected a mapping", "got a string"]),
    ],
)
def test_yaml_item_errors_name_file_item_line_and_problem(write, third, fragments):
    path = write("motions.yaml", THIRD_ITEM_PREFIX + third)
    with raises_user_error(str(path), *fragments):
        load_motion_file(path)


THREE_MISTAKES = """\
- id: a
  text: A
  category: fact
- id: b
  category: value
- id: c
  text: C
  category: facts
- id: a
  text: D
  category: policy
"""


def test_every_mistake_of_a_file_is_reported_at_once(write):
    # The issue: a file with three mistakes was refused one mistake a run.
    path = write("motions.yaml", THREE_MISTAKES)
    with raises_user_error(f"{path}: 3 mistakes; nothing was read:",
                           f"\n  {path}: item 2 (line 4): missing or empty 'text'",
                           f"\n  {path}: item 3 (line 8): unknown category 'facts' (expected fact, value or policy)",
                           f"\n  {path}: item 4 (line 9): repeated id 'a' (first at item 1)") as info:
        load_motion_file(path)
    assert len(str(info.value).splitlines()) == 4


def test_every_mistake_of_one_motion_is_reported(write):
    path = write("motions.yaml", "- id: 7\n  category: facts\n  side: pro\n  pro_text: Ban it\n")
    with raises_user_error(f"{path}: 5 mistakes", "item 1 (line 3): unknown key 'side'",
                           "item 1 (line 1): 'id' must be a string, got int",
                           "item 1 (line 1): missing or empty 'text'", "item 1 (line 2): unknown category 'facts'",
                           "item 1 (line 4): 'pro_text' without 'con_text'"):
        load_motion_file(path)


def test_every_mistake_of_a_jsonl_file_is_reported_at_once(write):
    text = ('{"id": "a", "text": "A", "category": "fact"}\n{"id": "b",\n'
            '{"id": "c", "text": "C", "category": "opinion"}\n{"id": "a", "text": "D", "category": "value"}\n')
    path = write("motions.jsonl", text)
    with raises_user_error(f"{path}: 3 mistakes", f"{path}: line 2: not valid JSON",
                           f"{path}: line 3: unknown category 'opinion'",
                           f"{path}: line 4: repeated id 'a' (first at line 1)"):
        load_motion_file(path)


def test_a_file_of_many_mistakes_lists_the_first_twenty(write):
    path = write("motions.jsonl", "".join(f'{{"id": "m{k}", "text": "T", "category": "x"}}\n' for k in range(25)))
    with raises_user_error(f"{path}: 25 mistakes", f"{path}: line 20: unknown category 'x'", "\n  and 5 more") as info:
        load_motion_file(path)
    assert "line 21:" not in str(info.value)


def test_invalid_yaml(write):
    path = write("motions.yaml", "- id: a\n  text: [unclosed\n  category: fact\n")
    with raises_user_error(str(path), "not valid YAML", "line"):
        load_motion_file(path)


def test_yaml_top_level_must_be_a_list(write):
    path = write("motions.yaml", "just text\n")
    with raises_user_error(str(path), "line 1", "expected a list of motions"):
        load_motion_file(path)


def test_yaml_unknown_top_level_key(write):
    path = write("motions.yaml", "motions: []\nextra: 1\n")
    with raises_user_error(str(path), "unknown top-level key 'extra'"):
        load_motion_file(path)


def test_empty_file_is_an_error(write):
    path = write("motions.yaml", "# nothing here\n")
    with raises_user_error(str(path), "contains no motions"):
        load_motion_file(path)


def test_jsonl_invalid_json_names_the_line(write):
    text = '{"id": "a", "text": "A", "category": "fact"}\n\n\n{"id": "b",\n'
    path = write("motions.jsonl", text)
    with raises_user_error(str(path), "line 4: not valid JSON"):
        load_motion_file(path)


def test_jsonl_validation_and_repeats_name_lines(write):
    text = '{"id": "a", "text": "A", "category": "fact"}\n{"id": "a", "text": "B", "category": "fact"}\n'
    path = write("motions.jsonl", text)
    with raises_user_error(str(path), "line 2: repeated id 'a' (first at line 1)"):
        load_motion_file(path)
    path = write("bad.jsonl", '["a", "A", "fact"]\n')
    with raises_user_error(str(path), "line 1: expected a mapping", "got a list"):
        load_motion_file(path)


def test_missing_file(tmp_path):
    path = tmp_path / "nope.yaml"
    with raises_user_error(str(path), "no such motion file"):
        load_motion_file(path)


def test_unreadable_file(tmp_path):
    path = tmp_path / "folder.yaml"
    path.mkdir()
    with raises_user_error(str(path), "cannot read motion file"):
        load_motion_file(path)


def test_non_utf8_file(tmp_path):
    path = tmp_path / "latin.yaml"
    path.write_bytes("- id: a\n  text: caf\xe9\n  category: fact\n".encode("latin-1"))
    with raises_user_error(str(path), "not valid UTF-8"):
        load_motion_file(path)


def test_unsupported_suffix(write):
    path = write("motions.txt", GOOD_YAML)
    with raises_user_error(str(path), "unsupported motion file type '.txt'"):
        load_motion_file(path)


# --- merging sets -----------------------------------------------------------------


def test_load_sets_merges_in_order_relative_to_base_dir(write, tmp_path):
    write("mine.yaml", GOOD_YAML)
    motions = load_sets(["builtin:zh", "file:mine.yaml", "builtin:en"], tmp_path)
    zh, en = load_builtin("zh"), load_builtin("en")
    assert motions[: len(zh)] == zh
    assert [m.id for m in motions[len(zh) : len(zh) + 2]] == ["my-fact-001", "my-policy-001"]
    assert motions[len(zh) + 2 :] == en


def test_load_sets_rejects_an_id_repeated_across_sets(write, tmp_path):
    write("clash.yaml", "- id: en-fact-001\n  text: Something else\n  category: fact\n")
    with raises_user_error("'en-fact-001'", "builtin:en", "file:clash.yaml"):
        load_sets(["builtin:en", "file:clash.yaml"], tmp_path)


def test_load_sets_rejects_an_unknown_prefix(tmp_path):
    with raises_user_error("unknown motion set 'web:en'", "builtin:<name>", "file:<path>"):
        load_sets(["web:en"], tmp_path)


def test_load_sets_reports_unknown_builtin_and_missing_file(tmp_path):
    with raises_user_error("unknown built-in motion set 'fr'"):
        load_sets(["builtin:fr"], tmp_path)
    with raises_user_error(str(tmp_path / "gone.yaml"), "no such motion file"):
        load_sets(["file:gone.yaml"], tmp_path)
