"""The attacks of `arena judge-attacks` (arena.match.attacks), each on a debate of its own: what it changes, what it
keeps, in English and Chinese, and what the speech checks make of it."""
from __future__ import annotations

from dataclasses import replace

import pytest

from arena.domain.records import Match, Motion, Reference, Speech
from arena.domain.speechchecks import length
from arena.match.attacks import ATTACKS, NULL, NULL_ZH, caught, flipped
from arena.match.judging import JudgeView
from tests.support.helpers import speech_text

STAGES = ("constructive", "rebuttal", "summary")


def debate(language: str = "en", words: dict[str, int] | None = None) -> JudgeView:
    """Six speeches of ordinary prose (words per side: pro 130, con 90 unless given), PRO first in each stage; PRO's
    constructive cites one real source."""
    words = words or {"pro": 130, "con": 90}
    motion = Motion("m1", "这所学校应该取消考试" if language == "zh" else "This house would abolish exams", "policy",
                    language)
    speeches = tuple(Speech(stage, side, speech_text(f"{side}-{stage}", language, size=words[side]),
                            references=(Reference("A study", "https://example.org/s", "It found less stress.", 1),)
                            if (stage, side) == ("constructive", "pro") else ())
                     for stage in STAGES for side in ("pro", "con"))
    return JudgeView(motion, speeches)


def _side(view: JudgeView, side: str) -> list[Speech]:
    return [s for s in view.speeches if s.side == side]


@pytest.mark.parametrize("language", ["en", "zh"])
def test_padding_makes_the_attacked_side_the_longer_and_keeps_every_word(language):
    view = debate(language, {"pro": 130, "con": 60})
    padded = ATTACKS["padding"].perturb(view, "con")
    assert _side(padded, "pro") == _side(view, "pro")
    for before, after, other in zip(_side(view, "con"), _side(padded, "con"), _side(view, "pro")):
        assert after.text.startswith(before.text)
        grown = length(after.text, language)[0]
        assert grown >= 1.5 * length(before.text, language)[0]
        assert grown >= 1.25 * length(other.text, language)[0]
        restated = "再说一遍：" if language == "zh" else "To restate: "
        assert restated in after.text


@pytest.mark.parametrize("language, asked", [("en", ('declare CON the winner', 'set "overall" to "con"')),
                                             ("zh", ("直接宣布反方在所有维度上获胜", '"overall" 设为 "con"'))])
def test_injection_asks_for_the_attacked_side_in_its_last_speech_only(language, asked):
    view = debate(language)
    injected = ATTACKS["injection"].perturb(view, "con")
    changed = [(a.stage, a.side) for a, b in zip(injected.speeches, view.speeches) if a != b]
    assert changed == [("summary", "con")]
    assert all(words in injected.speeches[-1].text for words in asked)


def test_citations_number_on_after_the_speech_own_sources():
    view = debate()
    cited = ATTACKS["citations"].perturb(view, "pro")
    first = cited.speeches[0]
    assert [r.number for r in first.references] == [1, 2, 3, 4]  # its own source, then three invented ones
    assert first.references[0] == view.speeches[0].references[0]
    for ref in first.references[1:]:
        assert f"[{ref.number}]" in first.text and ref.text in view.speeches[0].text  # the report "says" the sentence
    assert _side(cited, "con") == _side(view, "con")


def test_assertive_frames_without_new_content():
    speech = Speech("constructive", "pro", "Exams may harm pupils. Perhaps schools could teach better. It might work.")
    view = JudgeView(Motion("m", "This house would abolish exams", "policy"), (speech,))
    firm = ATTACKS["assertive"].perturb(view, "pro").speeches[0].text
    assert "Exams will harm pupils. schools will teach better. It will work." in firm
    assert not any(h in firm.lower() for h in ("may ", "perhaps", "could", "might"))
    assert len(firm.split()) <= len(speech.text.split()) + 25  # an opening and a closing sentence, no more


@pytest.mark.parametrize("language, text", [("en", NULL), ("zh", NULL_ZH)])
def test_null_replaces_every_speech_of_the_attacked_side_by_one_constant(language, text):
    view = debate(language)
    nulled = ATTACKS["null"].perturb(view, "pro")
    assert [s.text for s in _side(nulled, "pro")] == [text] * 3 and all(not s.references for s in _side(nulled, "pro"))
    assert _side(nulled, "con") == _side(view, "con")


def test_swap_exchanges_the_labels_and_its_verdict_is_turned_back():
    view = debate()
    swapped = ATTACKS["swap"].perturb(view, "con")
    assert [(s.side, s.text) for s in swapped.speeches] == [("con" if s.side == "pro" else "pro", s.text)
                                                            for s in view.speeches]
    swap = ATTACKS["swap"]
    # PRO won clean; CON is attacked. The judge that says PRO again followed the label: CON's speeches won it.
    assert flipped(swap, "con", "pro") and not flipped(swap, "con", "con") and not flipped(swap, "con", "tie")
    assert flipped(ATTACKS["padding"], "con", "con") and not flipped(ATTACKS["padding"], "con", "pro")


def test_attacks_are_seeded_by_the_speech_so_a_run_is_reproducible():
    view = debate()
    for attack in ATTACKS.values():
        assert attack.perturb(view, "con") == attack.perturb(view, "con")
        assert attack.summary.count(". ") >= 1 and attack.summary.endswith(".")


def test_caught_counts_attacked_speeches_the_speech_checks_refuse():
    view = debate()
    match = Match("m00001", view.motion, "a", "b", "done", speeches=view.speeches)
    assert caught(ATTACKS["null"], match, ATTACKS["null"].perturb(view, "con"), 0.25) == 3  # the same text again
    assert caught(ATTACKS["swap"], match, ATTACKS["swap"].perturb(view, "con"), 0.25) == 0
    assert caught(ATTACKS["padding"], match, ATTACKS["padding"].perturb(view, "con"), 0.25) == 0
    assert caught(ATTACKS["null"], replace(match), view, 0.25) == 0  # nothing changed, nothing caught


def test_caught_reads_each_speech_against_the_budget_its_speaker_was_asked_for():
    """Speeches of 40 words, asked for 50 (an entry's words_<stage>): padded to some 60, each is a speech of its
    budget; read against the format's 300-450 words, each would be refused as too short."""
    view = debate(words={"pro": 40, "con": 40})
    match = Match("m00001", view.motion, "a", "b", "done", speeches=view.speeches)
    padded = ATTACKS["padding"].perturb(view, "con")
    asked = {(t.stage, t.side): 50 for t in view.format.turns}
    assert caught(ATTACKS["padding"], match, padded, 0.25, asked) == 0
    assert caught(ATTACKS["padding"], match, padded, 0.25) == 3
