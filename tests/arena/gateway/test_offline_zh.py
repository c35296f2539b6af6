"""The offline simulator on Chinese motions: everything it writes is Chinese, its planted strengths are still
recovered, and it knows the language from the prompt alone (an English template with a Chinese motion, or a
Chinese template whose motion line is "辩题：...")."""
from __future__ import annotations

import json
import random
import re

import jsonschema
import pytest
from scipy.stats import spearmanr

from arena.gateway import offline
from arena.domain import transcript
from arena.app import commands
from arena.match.judging import verdict_schema
from arena.domain.records import Speech
from debaters import agent4debate
from judges.debatrix import _summary_schema, _verdict_schema
from judges.devils_advocate import CRITIQUE_SCHEMA, scored_verdict_schema
from tests.support.helpers import entry, invoke, judge, new_workspace

CJK = re.compile(r"[\u4e00-\u9fff]")
EN_TEMPLATE = "# Knowledge\nMotion: {motion}\nCategory: policy motion\n\n# Rules\n- Write in Simplified Chinese.\n"
ZH_TEMPLATE = "# 背景知识\n辩题：{motion}\n辩题类型：政策辩题\n\n# 规则\n- 使用简体中文写作。\n"
MOTION = "中小学应当禁止学生携带手机进入校园"
ORDER = [("constructive", "pro"), ("constructive", "con"), ("rebuttal", "pro"), ("rebuttal", "con"),
         ("summary", "con"), ("summary", "pro")]
# Fragments of the English templates, claims and judge texts: none may appear in Chinese output.
ENGLISH = re.compile(r"[A-Za-z]{4,}")


def ask(content: str, strength: float = 0.0, **kwargs) -> str:
    return offline.respond("offline/a", strength, [{"role": "user", "content": content}], **kwargs)[0]


def cjk_share(text: str) -> float:
    """The share of CJK characters among the letters and digits of text (punctuation and spaces aside)."""
    letters = [ch for ch in text if ch.isalnum()]
    return sum(bool(CJK.match(ch)) for ch in letters) / len(letters)


def strings(value) -> list[str]:
    """Every string in a decoded JSON answer."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in strings(v)]
    return []


# --- the templates ---------------------------------------------------------------------------------------

def test_the_chinese_templates_carry_the_markers_the_estimator_counts():
    assert len(offline.COGENT_ZH) >= 6 and len(offline.WEAK_ZH) >= 4 and len(offline.CLAIMS_ZH) >= 8
    for template in offline.COGENT_ZH + offline.WEAK_ZH:
        assert "{claim}" in template and template.endswith("。") and template.count("。") == 1, template
        assert CJK.search(template)
    for template in offline.COGENT_ZH:
        assert offline._COGENT_MARK.search(template) and not offline._WEAK_MARK.search(template), template
    for template in offline.WEAK_ZH:
        assert offline._WEAK_MARK.search(template), template
    for claim in offline.CLAIMS_ZH:
        assert not offline._COGENT_MARK.search(claim) and not offline._WEAK_MARK.search(claim), claim
        assert not re.search(r"[.!?。！？]", claim) and cjk_share(claim) > 0.9, claim
    for good in (True, False):
        pool = offline.COGENT_ZH if good else offline.WEAK_ZH
        for template in pool:
            sentence = template.format(topic=f"「{MOTION}」", claim=offline.CLAIMS_ZH[0])
            assert offline._counts(sentence) == ((1, 0) if good else (0, 1)), sentence


# --- knowing the language from the prompt ------------------------------------------------------------------

@pytest.mark.parametrize("prompt, chinese", [
    pytest.param(EN_TEMPLATE.format(motion=MOTION), True, id="english-template-chinese-motion"),
    pytest.param(EN_TEMPLATE.format(motion=MOTION).replace("- Write in Simplified Chinese.\n", ""), True,
                 id="english-template-chinese-motion-no-language-line"),
    pytest.param(ZH_TEMPLATE.format(motion=MOTION), True, id="chinese-template"),
    pytest.param(ZH_TEMPLATE.format(motion="Cities should ban private cars"), True,
                 id="chinese-template-english-motion"),
    pytest.param("Motion: Cities should ban private cars\n- Write in English.\n", False, id="english"),
    pytest.param("Motion: Cities should ban private cars\n- Write the rationale in Simplified Chinese.\n", True,
                 id="english-motion-chinese-asked"),
    pytest.param("Motion: Cities should ban private cars\n", False, id="english-no-language-line"),
    pytest.param("Motion: Cities should ban private cars\n- ReWrite in Simplified Chinese.\n", False,
                 id="a-word-ending-in-Write-asks-for-no-language"),
    pytest.param("请判断下面这场辩论的胜负。双方都给出了论证。", True, id="no-motion-line-chinese"),
    pytest.param("Decide the debate below.", False, id="no-motion-line-english"),
])
def test_the_language_is_read_from_the_prompt(prompt, chinese):
    assert offline._answers_in_chinese(prompt) is chinese


def test_the_motion_is_found_on_either_templates_line():
    assert offline._motion(f"# 背景知识\n辩题：{MOTION}\n辩题类型：政策辩题\n") == MOTION
    assert offline._motion(f"# Knowledge\nMotion: {MOTION}\n") == MOTION
    assert offline._motion("Motion: Cities should ban cars.\n") == "cities should ban cars"
    assert offline._motion("辩题类型：政策辩题\n") == "the motion holds"  # only the motion's own line counts
    # The first motion line counts, not one quoted later in a speech.
    assert offline._motion(f"辩题：{MOTION}\n\nMotion: Something else\n") == MOTION


def test_a_side_argues_its_own_proposition_on_a_two_sided_motion():
    two = "网络流行语丰富了汉语的表达 / 网络流行语使汉语的表达变得贫乏"
    for prompt in (f"辩题：{two}\n我方持方：网络流行语使汉语的表达变得贫乏\n对方持方：网络流行语丰富了汉语的表达\n",
                   f"Motion: {two}\nYour side (CON) argues: 网络流行语使汉语的表达变得贫乏\n"
                   f"The other side argues: 网络流行语丰富了汉语的表达\nWrite in Simplified Chinese.\n"):
        text = ask(prompt, 0.0, stage="constructive")
        assert "「网络流行语使汉语的表达变得贫乏」" in text and "「网络流行语丰富了汉语的表达」" not in text


# --- speeches ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("template", [EN_TEMPLATE, ZH_TEMPLATE], ids=["english-template", "chinese-template"])
def test_speeches_are_chinese_and_varied(template):
    prompt = template.format(motion=MOTION) + "[1] 来源一 (https://offline.invalid/a/1)\n"
    text = ask(prompt, 0.5, stage="constructive", role="writer")
    assert cjk_share(text) > 0.85 and not ENGLISH.search(text), text
    assert f"「{MOTION}」" in text
    sentences = [s for s in re.split(r"(?<=。)", text.replace("\n", "")) if s]
    assert len(sentences) == 18 and len(set(sentences)) >= 12
    assert not re.search(r" \[\d\]", text)  # a citation sits right before the 。


@pytest.mark.parametrize("strength", [-2.0, -0.5, 0.0, 0.7, 1.5])
def test_the_strength_read_back_from_chinese_prose_is_close_to_the_planted_one(strength):
    prompt = ZH_TEMPLATE.format(motion=MOTION)
    text = "\n".join(ask(prompt, strength, seed=s, role="writer", stage=stage)
                     for s in range(3) for stage in ("constructive", "rebuttal", "summary"))
    assert offline.estimated_strength(text) == pytest.approx(strength, abs=0.25)


# --- judges ----------------------------------------------------------------------------------------------------

def debate(pro: float, con: float, template: str = ZH_TEMPLATE) -> str:
    head = template.format(motion=MOTION)
    speeches = [Speech(stage, side, ask(head, pro if side == "pro" else con, stage=stage, role="writer"))
                for stage, side in ORDER]
    return head + "\n" + transcript.render(speeches) + "\n"


def test_judge_notes_are_chinese_and_carry_a_parseable_assessment():
    prompt = debate(1.0, -1.0)
    note = ask(prompt, judging=True)
    body, _, line = note.rpartition("\n\n")
    assert line.startswith("[模拟评估] ") and cjk_share(body) > 0.8 and not ENGLISH.search(body), note
    assert "按已读到的发言统计，正方有据论点" in body
    # A later reader of the note alone (Debatrix's verdict, a summary) recovers the same counts.
    assert offline.tally("辩题：X\n" + note) == offline.tally(prompt)
    assert offline.tally("辩题：X\n" + note)["pro"][0] > offline.tally(prompt)["con"][0]


@pytest.mark.parametrize("schema", [
    verdict_schema(), verdict_schema(overall_ties=True), scored_verdict_schema(False), _verdict_schema(True),
    _summary_schema(True)], ids=["verdict", "verdict-ties", "scored", "debatrix-verdict", "debatrix-summary"])
def test_judge_rationales_are_chinese_and_name_the_side_they_chose(schema):
    prompt = debate(1.0, -1.0)
    for sample in range(8):
        data = json.loads(ask(prompt, judging=True, schema=schema, sample=sample))
        jsonschema.validate(data, schema)
        rationale = data["rationale"]
        said, _, line = rationale.partition("[模拟评估]")
        assert line and cjk_share(said) > 0.9 and not ENGLISH.search(said), rationale
        winner = data.get("overall", data.get("winner"))
        assert {"pro": "正方", "con": "反方", "tie": "势均力敌"}[winner] in said or winner == "tie", rationale


def test_simulated_verdicts_on_a_chinese_debate_follow_the_planted_strengths():
    for template in (ZH_TEMPLATE, EN_TEMPLATE):
        prompt = debate(1.0, -1.0, template)
        wins = sum(json.loads(ask(prompt, judging=True, schema=verdict_schema(), sample=r))["overall"] == "pro"
                   for r in range(200))
        assert 0.8 <= wins / 200 <= 0.96  # Bradley–Terry on the estimates: ≈ 0.88


def test_critic_and_agent4debate_text_fields_are_chinese():
    prompt = ZH_TEMPLATE.format(motion=MOTION) + "我方持方：" + MOTION + "\n"
    schemas = [CRITIQUE_SCHEMA, agent4debate._queries_schema(4), agent4debate._writer_schema("summary", True),
               agent4debate._findings_schema([1, 2, 3]), agent4debate._review_schema("summary")]
    enums = {"NO_ISSUE", "ISSUES", *agent4debate.BEARINGS, *agent4debate.STANDINGS,
             *agent4debate.CHECKLISTS["summary"]}
    for schema in schemas:
        for sample in range(6):
            data = json.loads(ask(prompt, schema=schema, sample=sample, judging=schema is CRITIQUE_SCHEMA))
            jsonschema.validate(data, schema)
            for text in strings(data):
                assert text in enums or (CJK.search(text) and not ENGLISH.search(text)), (schema.get("title"), text)
            for query in data.get("queries", []):
                assert query.startswith(MOTION + " ")  # a search phrase: the subject and a keyword


def test_a_simulated_persons_ballot_on_a_chinese_match_is_chinese():
    from arena.domain.records import Match, Motion

    motion = Motion("zh-x-1", MOTION, "policy", language="zh")
    speeches = tuple(Speech(stage, side, ask(ZH_TEMPLATE.format(motion=MOTION), 0.0, stage=stage))
                     for stage, side in ORDER)
    match = _match(Match, motion, speeches)
    ballot = offline.simulated_ballot(match, "ann", random.Random(0))
    assert ballot.rationale.startswith("（模拟选票，ann）") and "正方有据论点" in ballot.rationale


def _match(Match, motion, speeches):
    """A played Match with just what simulated_ballot reads (its id, motion and speeches)."""
    import dataclasses

    fields = {f.name: f for f in dataclasses.fields(Match)}
    values = {"id": "m00001", "motion": motion, "speeches": speeches}
    for name, f in fields.items():
        if name not in values and f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            values[name] = "x"
    return Match(**values)


# --- a simulated tournament on Chinese motions ---------------------------------------------------------------

ENTRIES = {"zh-ace": ("agent4debate", 1.5), "zh-bold": ("search-baseline", 0.9), "zh-calm": ("direct", 0.3),
           "zh-deft": ("direct", -0.3), "zh-eager": ("search-baseline", -0.9), "zh-faint": ("direct", -1.5)}


@pytest.fixture(scope="module")
def tournament(tmp_path_factory):
    path = tmp_path_factory.mktemp("zh-tournament") / "ws"
    new_workspace(path, arena={"language": "zh", "seed": 0, "judge_runs": 1}, motions=["builtin:zh"],
                  entries=[entry(name, kind, strength=strength) for name, (kind, strength) in ENTRIES.items()],
                  judges=[judge("sim-single", model="offline/single", runs=1),
                          judge("sim-debatrix", "debatrix", "offline/debatrix", runs=1,
                                options={"dimensions": {"argument": {}}})])
    ws = commands.open_workspace(path)
    try:
        commands.schedule(ws, "round-robin", rounds=2)
        done = commands.run(ws, concurrency=4)
        assert done["failed"] == 0 and done["done"] == done["total"] > 0, done
    finally:
        ws.close()
    return path


def shown(path, match_id: str) -> dict:
    result = invoke("match", "show", match_id, "-w", path, "--format", "json")
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_a_chinese_tournament_speaks_and_judges_in_chinese(tournament):
    for number in (1, 7, 20):
        match = shown(tournament, f"m{number:05d}")
        assert match["motion"]["language"] == "zh"
        assert len(match["speeches"]) == 6
        for speech in match["speeches"]:
            assert cjk_share(speech["text"]) > 0.85 and not ENGLISH.search(speech["text"]), speech["text"]
            assert not any(t.split("{")[0] in speech["text"] for t in offline.COGENT + offline.WEAK)
        for verdict in match["verdicts"]:
            said = verdict["rationale"].split("[模拟评估]")[0]
            assert cjk_share(said) > 0.5, verdict["rationale"]


def test_a_chinese_tournament_recovers_the_planted_order(tournament):
    names = sorted(ENTRIES)
    for name in ("sim-single", "sim-debatrix"):
        result = invoke("rate", "-w", tournament, "--judge", name, "--format", "json", "--bootstrap", "20")
        assert result.exit_code == 0, result.output
        rated = json.loads(result.output)
        ratings = {r["entry"]: r["rating"] for r in rated["ratings"]}
        rho = spearmanr([ENTRIES[n][1] for n in names], [ratings[n] for n in names]).statistic
        assert rho >= 0.8, (name, ratings)


@pytest.mark.parametrize("language", ["en", "zh"])
def test_the_simulator_answers_alike_under_any_workspace_s_keys(language):
    """Keys are made under each workspace's random secret, and the Chinese preface names the key outside its marker
    lines too: the simulator draws from the prompt without them, so a seeded workspace plays the same everywhere."""
    debate = [Speech("constructive", "pro", "第一段 第二段" if language == "zh" else "First point."),
              Speech("constructive", "con", "第三段" if language == "zh" else "Second point.")]
    keys = [transcript.marker_key(secret, "m1", "judges") for secret in (b"a" * 32, b"b" * 32)]
    prompts = [f"Motion: X\n\n{transcript.render(debate, language=language, key=key)}" for key in keys]
    assert prompts[0] != prompts[1] and transcript.unkeyed(prompts[0]) == transcript.unkeyed(prompts[1])
    answers = [offline.respond("offline/judge", 0.0, [{"role": "user", "content": p}], schema=verdict_schema(),
                               judging=True, seed=3)[0] for p in prompts]
    assert answers[0] == answers[1]
