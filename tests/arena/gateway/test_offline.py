"""The offline simulator: deterministic, schema-valid, and faithful to the planted strengths."""
from __future__ import annotations

import json
import math
import re

import jsonschema
import pytest

from arena.gateway import offline
from arena.domain import transcript
from arena.domain.records import Speech
from arena.match.judging import verdict_schema

PROMPT = [{"role": "user", "content": "Motion: Cities should ban private cars from their centres\nWrite."}]


def test_prose_is_deterministic_and_seeded():
    one = offline.respond("offline/a", 0.5, PROMPT, seed=0, role="writer", stage="constructive")
    assert one == offline.respond("offline/a", 0.5, PROMPT, seed=0, role="writer", stage="constructive")
    assert one[0] != offline.respond("offline/a", 0.5, PROMPT, seed=1, role="writer", stage="constructive")[0]
    text, prompt_tokens, completion_tokens = one
    assert 250 <= len(text.split()) <= 700  # a constructive speech's length
    assert "cities should ban private cars" in text
    assert prompt_tokens > 0 and completion_tokens > len(text.split())


@pytest.mark.parametrize("strength", [-2.0, -0.5, 0.0, 0.7, 1.5])
def test_the_strength_read_back_from_prose_is_close_to_the_planted_one(strength):
    text = "\n".join(offline.respond("offline/a", strength, PROMPT, seed=s, role="writer", stage=stage)[0]
                     for s in range(3) for stage in ("constructive", "rebuttal", "summary"))
    assert offline.estimated_strength(text) == pytest.approx(strength, abs=0.25)


def test_chinese_motions_get_chinese_prose():
    prompt = [{"role": "user", "content": "Motion: 人工智能的发展利大于弊\n"}]
    text = offline.respond("offline/a", 1.0, prompt, role="writer", stage="summary")[0]
    assert sum("\u4e00" <= ch <= "\u9fff" for ch in text) > len(text) / 2
    assert offline.estimated_strength(text) is not None


def test_structured_answers_satisfy_their_schema():
    schema = {"type": "object", "required": ["approve", "feedback", "score", "items", "mode"],
              "properties": {"approve": {"type": "boolean"}, "feedback": {"type": "string", "minLength": 5},
                             "score": {"type": "integer", "minimum": 1, "maximum": 10},
                             "items": {"type": "array", "items": {"type": "string"}, "minItems": 2},
                             "mode": {"enum": ["a", "b"]}}}
    for sample in range(20):
        text = offline.respond("offline/j", 0.0, PROMPT, schema=schema, sample=sample)[0]
        jsonschema.validate(json.loads(text), schema)


def debate(pro: float, con: float, *, swap: bool = False) -> str:
    speeches = []
    for stage, order in (("constructive", "pc"), ("rebuttal", "pc"), ("summary", "cp")):
        for letter in order:
            side, strength = ("pro", pro) if letter == "p" else ("con", con)
            text = offline.respond(f"offline/{side}", strength, PROMPT, role="writer", stage=stage)[0]
            speeches.append(Speech(stage, side, text))
    return ("Motion: Cities should ban private cars\n\n" + transcript.render(speeches, swap=swap)
            + "\nDecide. Evidence matters.")


def test_simulated_verdicts_follow_bradley_terry_on_the_transcript():
    schema = verdict_schema()
    prompt = [{"role": "user", "content": debate(1.0, -1.0)}]
    wins = 0
    for run in range(400):
        data = json.loads(offline.respond("offline/j", 0.0, prompt, schema=schema, sample=run)[0])
        jsonschema.validate(data, schema)
        wins += data["overall"] == "pro"
    expected = 1 / (1 + math.exp(-2.0))  # ≈ 0.88
    assert abs(wins / 400 - expected) < 0.06


def test_the_judge_reads_labels_not_positions():
    """Swapping the labels of the same transcript swaps the favourite."""
    schema = verdict_schema()
    text = debate(1.0, -1.0, swap=True)
    pro_wins = sum(json.loads(offline.respond("offline/j", 0.0, [{"role": "user", "content": text}],
                                              schema=schema, sample=r)[0])["overall"] == "pro" for r in range(200))
    assert pro_wins < 60


def test_a_prompts_tokens_count_each_han_character_and_each_other_word_as_four_thirds():
    # 10 Han characters in 2 words, then 3 words; the fullwidth colon, 《》 (CJK punctuation), 㐀 and ䷀ (below
    # U+4E00) and ꀀ (above U+9FFF) are no Han characters of the count; 丁 and 鿿 (U+4E01, U+9FFF) are.
    cases = {"辩题：人工智能 利大于弊 three more words": 10 + round(5 * 4 / 3),
             "《辩论》 㐀 plain": 2 + round(3 * 4 / 3),
             "䷀丁 鿿ꀀ": 2 + round(2 * 4 / 3),
             "plain ascii words only here": round(5 * 4 / 3)}
    for content, tokens in cases.items():
        assert offline.respond("offline/a", 0.0, [{"role": "user", "content": content}])[1] == tokens, content


def test_speeches_cite_only_the_sources_listed_at_the_start_of_a_line():
    def cited(prompt: str) -> set[str]:
        texts = [offline.respond("offline/a", 2.0, [{"role": "user", "content": prompt}], seed=s, role="writer",
                                 stage="constructive")[0] for s in range(5)]
        return set(re.findall(r"\[(\d+)\]", " ".join(texts)))

    listed = "Motion: Cities should ban private cars\n[3] A study (https://example.org/a)\n[7] Another (http://b.org)\n"
    assert cited(listed) == {"3", "7"}
    assert cited(listed.replace("\n[7]", " see [7]")) == {"3"}  # [7] is mid-line: no source of the prompt's list
