"""Debaters' native Chinese prompts: every role and stage of agent4debate, direct and search-baseline is written in
Chinese for a Chinese motion, asks for what the English one asks (the same JSON fields, [n] citations, the stage's
length, now in characters), and gives each side its own proposition; other languages keep the English prompts."""
from __future__ import annotations

import re
from pathlib import Path

import jinja2
import pytest
from jinja2 import meta, nodes

from arena.domain.formats import AGENT4DEBATE
from arena.base.prompts import CACHE_BREAK, render
from arena.domain.records import DEFAULT_INFO_SLIDE, STAGES, Motion
from debaters import agent4debate as a4d
from debaters import direct
from tests.support.helpers import requested_schema
from tests.support.teams import ChineseScript, Script, make_workspace, play, role_stage_side, stage_and_side_zh

PROMPTS = Path(direct.__file__).parent / "prompts"
ZH_HEADINGS = ("# 角色设定", "# 背景知识", "# 工作流程", "# 规则", "# 输出格式")
EN_HEADINGS = ("# Profile", "# Knowledge", "# Workflow", "# Rules", "# Output format")
# What only the English templates say: none of it may leak into a Chinese prompt.
ENGLISH_ONLY = (*EN_HEADINGS, "Write in ", "Motion:", "You are", "JSON object", "stage 1 of 3", "stage 2 of 3",
                "stage 3 of 3", "Your side", "The other side argues")
CHARS = {"constructive": 1200, "rebuttal": 1000, "summary": 800}  # the chars_<stage> defaults
WORDS = {"constructive": 450, "rebuttal": 400, "summary": 300}
PRO_TEXT, CON_TEXT = "正义只是利益", "正义不只是利益"
MOTION = Motion("zh-value-x01", "正义是否只是利益", "value", language="zh", pro_text=PRO_TEXT, con_text=CON_TEXT)
ONE_SIDED = Motion("zh-policy-x01", "安乐死应当合法化", "policy", language="zh")
FRENCH = Motion("fr-policy-x01", "Les villes devraient interdire les voitures", "policy", language="fr")


def other(side: str) -> str:
    return "con" if side == "pro" else "pro"


# --------------------------------------------------------------------------- every template has a Chinese version


def template_pairs() -> list[tuple[Path, Path]]:
    """(English template, where its Chinese version belongs) for every debater template.

    agent4debate renders from its own folder, so its Chinese tree is agent4debate/zh/; every other kind renders
    from prompts/ with names like direct/constructive.j2, so theirs is prompts/zh/<kind>/.
    """
    pairs = []
    for kind in sorted(p for p in PROMPTS.iterdir() if p.is_dir() and p.name != "zh"):
        root, native = (kind, kind / "zh") if kind.name == "agent4debate" else (PROMPTS, PROMPTS / "zh")
        for english in sorted(kind.rglob("*.j2")):
            if native not in english.parents:
                pairs.append((english, native / english.relative_to(root)))
    return pairs


def test_every_english_debater_template_has_a_chinese_counterpart():
    pairs = template_pairs()
    kinds = {english.relative_to(PROMPTS).parts[0] for english, _ in pairs}
    assert kinds >= {"agent4debate", "direct", "search_baseline"}
    assert len(pairs) >= 27
    missing = [str(zh.relative_to(PROMPTS)) for _, zh in pairs if not zh.is_file()]
    assert not missing, f"no Chinese version of: {missing}"
    # And no Chinese template stands alone (a misspelt name would never be rendered).
    expected = {zh for _, zh in pairs}
    chinese = set((PROMPTS / "zh").rglob("*.j2")) | set((PROMPTS / "agent4debate" / "zh").rglob("*.j2"))
    assert chinese == expected, sorted(str(p.relative_to(PROMPTS)) for p in chinese ^ expected)


def _parsed(path: Path) -> nodes.Template:
    return jinja2.Environment().parse(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("english, chinese", template_pairs(), ids=lambda p: str(p.relative_to(PROMPTS)))
def test_a_chinese_template_uses_its_english_ones_blocks_templates_and_no_other_variables(english, chinese):
    en, zh = _parsed(english), _parsed(chinese)
    assert {b.name for b in zh.find_all(nodes.Block)} == {b.name for b in en.find_all(nodes.Block)}
    assert set(meta.find_referenced_templates(zh)) == set(meta.find_referenced_templates(en))
    # StrictUndefined would only catch a misspelt variable when its branch renders: check them all here.
    assert meta.find_undeclared_variables(zh) <= meta.find_undeclared_variables(en)
    for heading in EN_HEADINGS:
        assert heading not in chinese.read_text(encoding="utf-8")


# --------------------------------------------------------------------------- every variant, rendered


SOURCES = "[1] Source one (https://example.org/1)\nWhat source one says.\n\n[2] Source two (https://example.org/2)\nMore."
FINDINGS = "Costs:\n- (for us) A finding [1][2]"
CHECKLIST_LABELS = {"structure", "content", "evidence", "fluency", "rebuttal_technique", "consistency", "depth",
                    "no_new_arguments"}


def variants():
    """(id, folder, template, variables) for every branch of every debater template, on both kinds of motion."""
    for motion in (MOTION, ONE_SIDED):
        for side in ("pro", "con"):
            for stage in STAGES:
                tag = f"{motion.id}-{side}-{stage}"
                kb = dict(motion=motion, side=side, stage=stage, stage_order=AGENT4DEBATE.place(stage),
                          sources=SOURCES, findings=FINDINGS, gaps=["a gap"], found="",
                          transcript="" if stage == "constructive" else "THE-TRANSCRIPT")
                yield f"analyzer-{tag}", a4d.PROMPTS, f"analyzer/{stage}.j2", kb
                request = {"need": "a figure", "query": "a query"} | ({"point": "OUR-POINT"} if stage == "summary"
                                                                    else {})
                for step in ("plan", "compile"):
                    for req in (None, request):
                        extra = dict(step=step, request=req, max_queries=3)
                        if step == "compile":
                            extra |= dict(queries=["q one", "q two"], max_findings=6, max_gaps=5,
                                          found="[3] New (https://example.org/3)\nAll of it.")
                        yield (f"searcher-{step}-{'request' if req else 'motion'}-{tag}", a4d.PROMPTS,
                               f"searcher/{stage}.j2", kb | extra)
                state = {"leading": "them", "reasons": ["A-REASON"]} if stage == "summary" else None
                # The Writer's three ways to answer: a request or JSON, JSON, and plain text (its fallback).
                for can_request, plain in ((True, False), (False, False), (False, True)):
                    for feedback in ([], ["Cite [2]."]):
                        extra = dict(analysis="THE-PLAN", length=777, unit="characters", can_request=can_request,
                                     requests_left=1 if can_request else 0, draft="THE-DRAFT" if feedback else "",
                                     feedback=feedback, state=state if feedback else None, plain=plain)
                        mode = "request" if can_request else "plain" if plain else "json"
                        yield (f"writer-{mode}-{bool(feedback)}-{tag}", a4d.PROMPTS, f"writer/{stage}.j2",
                               kb | extra)
                yield (f"reviewer-{tag}", a4d.PROMPTS, f"reviewer/{stage}.j2",
                       kb | dict(draft="THE-DRAFT", checklist=a4d.CHECKLISTS[stage], max_feedback=6, max_reasons=4))
                for kind in ("direct", "search_baseline"):
                    extra = dict(motion=motion, side=side, length=777, unit="characters",
                                 transcript=kb["transcript"]) | ({"sources": SOURCES} if kind != "direct" else {})
                    yield f"{kind}-{tag}", PROMPTS, f"{kind}/{stage}.j2", extra


VARIANTS = list(variants())


def in_chinese(variables: dict) -> dict:
    """The variables as agent4debate gives them to a Chinese prompt: its stage named, and placed, in Chinese."""
    if "stage_order" not in variables:
        return variables
    stage = variables["stage"]
    return variables | {"stage": AGENT4DEBATE.label(stage, "zh"), "stage_order": AGENT4DEBATE.place(stage, "zh")}


def in_cache_order(text: str, headings: tuple[str, ...]) -> str:
    """Assert that a rendered prompt is in cache order: an opening paragraph, then the knowledge part holding the one
    cache break, then profile, workflow, rules and output format, each heading once; return the opening."""
    profile, knowledge, *instructions = headings
    where = [text.find(f"\n{h}\n") for h in (knowledge, profile, *instructions)]
    assert all(w > 0 for w in where) and where == sorted(where), where
    assert all(text.count(f"\n{h}\n") == 1 for h in headings)
    assert text.count(CACHE_BREAK) == 1 and where[0] < text.index(CACHE_BREAK) < where[1]
    return text[:where[0]]


def json_keys(text: str) -> set[str]:
    return set(re.findall(r'"(\w+)":', text))


@pytest.mark.parametrize("folder, name, variables", [v[1:] for v in VARIANTS], ids=[v[0] for v in VARIANTS])
def test_each_variant_is_chinese_and_asks_for_what_the_english_one_asks(folder, name, variables):
    zh = render(folder, name, language="zh", **in_chinese(variables))
    en = render(folder, name, language="en", **variables)
    in_cache_order(zh, ZH_HEADINGS), in_cache_order(en, EN_HEADINGS)
    assert not [s for s in ENGLISH_ONLY if s in zh]
    assert json_keys(zh) == json_keys(en)  # the same JSON field names (and none where the English asks for text)
    assert ("[n]" in zh) == ("[n]" in en)  # the same citation convention
    for marker in ("THE-TRANSCRIPT", "THE-PLAN", "THE-DRAFT", "OUR-POINT", "A-REASON", "Cite [2].", SOURCES,
                   "New (https://example.org/3)", "a gap"):
        assert (marker in zh) == (marker in en), marker  # the code's material is framed, not dropped
    assert ("约777字" in zh) == ("777" in en)
    motion, side = variables["motion"], variables["side"]
    assert f"辩题：{motion.text}" in zh and "双方负有同等的举证责任" in zh and DEFAULT_INFO_SLIDE not in zh
    if motion.two_sided:
        own, theirs = motion.proposition(side), motion.proposition(other(side))
        assert f"我方持方：{own}\n对方持方：{theirs}" in zh and f"我方持方：{theirs}" not in zh
    else:
        assert "我方持方：" not in zh and ("支持本辩题" if side == "pro" else "反对本辩题") in zh
    assert ("正方（PRO）" if side == "pro" else "反方（CON）") in zh
    if name.startswith("reviewer/"):
        for item in variables["checklist"]:
            assert f"   - {item}：" in zh and item in CHECKLIST_LABELS  # a label the template says in Chinese


def test_an_info_slide_of_the_motions_own_is_shown_as_written():
    motion = Motion("zh-x", "人性本善", "fact", language="zh", info_slide="正方须证明人性本善。")
    for name in ("direct/constructive.j2", "search_baseline/constructive.j2"):
        prompt = render(PROMPTS, name, motion=motion, side="pro", language="zh", transcript="", sources="",
                        length=1200, unit="characters")
        assert "辩题说明：正方须证明人性本善。" in prompt and "双方负有同等的举证责任" not in prompt


def test_every_prompt_of_a_kind_opens_with_the_same_paragraph():
    """The opening paragraph, before the knowledge, is the same for every role, stage, side and motion of a kind (and
    language): the first thing every call of a side shares."""
    openings: dict[tuple[str, str], set[str]] = {}
    for _, folder, name, variables in VARIANTS:
        kind = "agent4debate" if folder == a4d.PROMPTS else "baselines"
        for language, headings in (("zh", ZH_HEADINGS), ("en", EN_HEADINGS)):
            text = render(folder, name, language=language, **(in_chinese(variables) if language == "zh" else variables))
            openings.setdefault((kind, language), set()).add(in_cache_order(text, headings))
    assert sorted(openings) == [("agent4debate", "en"), ("agent4debate", "zh"), ("baselines", "en"),
                                ("baselines", "zh")]
    assert all(len(found) == 1 for found in openings.values()), openings
    assert all(len(opening) > 40 and "#" not in opening for (opening,) in openings.values())


@pytest.mark.parametrize("folder, name, variables", [v[1:] for v in VARIANTS[::7]], ids=[v[0] for v in VARIANTS[::7]])
def test_other_languages_fall_back_to_the_english_prompts_asking_for_the_language(folder, name, variables):
    prompt = render(folder, name, language="fr", **variables)
    assert all(h in prompt for h in EN_HEADINGS) and "Write in French" in prompt
    motion = variables["motion"]  # its own words are material: only they may be Chinese
    for material in (motion.text, motion.pro_text, motion.con_text, motion.info_slide):
        prompt = prompt.replace(material, "")
    assert not re.search(r"[\u4e00-\u9fff]", prompt)


# --------------------------------------------------------------------------- whole matches on the fake servers


def role_of(body: dict) -> str:
    """agent4debate's role, told by the schema it asks for (the analyzer asks for none), or the baseline's kind."""
    if body["model"] != "a4d":
        return body["model"]  # "base" (direct), "sb" (search-baseline) or "judge"
    properties = (requested_schema(body) or {}).get("properties", {})
    return next((role for key, role in (("queries", "searcher"), ("findings", "searcher"), ("speech", "writer"),
                                        ("checks", "reviewer")) if key in properties), "analyzer")


def variant_of(body: dict) -> str:
    text, properties = body["messages"][0]["content"], (requested_schema(body) or {}).get("properties", {})
    if "queries" in properties:
        return "plan-request" if "辩手的资料请求" in text else "plan-motion"
    if "findings" in properties:
        return "compile"
    if "speech" in properties:
        return "revise" if "你上一版的稿件" in text else "draft"
    return ""


def schema_words(schema: dict, key: str = ""):
    """The field names a schema asks for, and the string values its enums allow (but the checklist's items)."""
    for name, sub in schema.get("properties", {}).items():
        yield f'"{name}"'
        yield from schema_words(sub, name)
    if "items" in schema:
        yield from schema_words(schema["items"], key)
    if key != "item":
        yield from (f'"{value}"' for value in schema.get("enum", []) if isinstance(value, str))


A4D_PER_STAGE = {
    "constructive": {("searcher", "plan-motion"), ("searcher", "compile"), ("analyzer", ""), ("writer", "draft"),
                     ("searcher", "plan-request"), ("reviewer", ""), ("writer", "revise")},
    "rebuttal": {("analyzer", ""), ("writer", "draft"), ("searcher", "plan-request"), ("searcher", "compile"),
                 ("reviewer", ""), ("writer", "revise")},
}
A4D_PER_STAGE["summary"] = A4D_PER_STAGE["rebuttal"]


@pytest.fixture(scope="module")
def chinese_matches(tmp_path_factory):
    """Three matches on a two-sided Chinese motion, so every kind speaks on both sides: (model, side, body)."""
    from tests.support.fakes.openai_server import FakeOpenAI
    from tests.support.fakes.tavily_server import FakeTavily

    monkeypatch = pytest.MonkeyPatch()
    recorded = []
    try:
        with FakeOpenAI() as fake_llm, FakeTavily() as fake_tavily:
            ws = make_workspace(tmp_path_factory.mktemp("zh"), fake_llm, fake_tavily, monkeypatch,
                                params="chars_rebuttal = 900", language="zh")
            ws.store.add_motions([MOTION])
            for pro, con in (("a4d", "base"), ("sb", "a4d"), ("base", "sb")):
                fake_llm.clear()
                fake_llm.responder = ChineseScript()
                match = play(ws, MOTION.id, pro, con)
                assert match.status == "done", match
                sides = {pro: "pro", con: "con"}
                recorded += [(body["model"], sides.get(body["model"], ""), body) for body in fake_llm.bodies]
            ws.close()
    finally:
        monkeypatch.undo()
    return recorded


def test_every_prompt_of_every_role_and_stage_is_chinese_and_for_its_own_side(chinese_matches):
    seen = {(model, side): {stage: set() for stage in STAGES} for model in ("a4d", "base", "sb")
            for side in ("pro", "con")}
    for model, side, body in chinese_matches:
        if model == "judge":
            continue
        text = body["messages"][0]["content"]
        stage, said_side = stage_and_side_zh(text)
        assert said_side == side, (model, side, text[:300])
        seen[(model, side)][stage].add((role_of(body), variant_of(body)))
        where = (model, side, stage, role_of(body), variant_of(body))
        # Chinese throughout, under the five Chinese headings, the knowledge first.
        assert text.startswith("你是") and all(f"\n{h}\n" in text for h in ZH_HEADINGS), where
        assert text.index("\n# 背景知识\n") < text.index("\n# 角色设定\n"), where
        assert not [s for s in ENGLISH_ONLY if s in text], where
        # Its own proposition as its own, the other side's as the other's.
        own, theirs = MOTION.proposition(side), MOTION.proposition(other(side))
        assert f"我方持方：{own}" in text and f"对方持方：{theirs}" in text, where
        assert f"我方持方：{theirs}" not in text and f"对方持方：{own}" not in text, where
        # A structured call names the schema's fields (keys stay English) and allowed values.
        schema = requested_schema(body)
        if schema is not None:
            missing = [w for w in set(schema_words(schema)) if w not in text]
            assert not missing, (where, missing)
        # Speeches are asked for in characters: the stage's default, or the entry's override.
        if role_of(body) in ("writer", "base", "sb"):
            chars = 900 if (model, stage) == ("a4d", "rebuttal") else CHARS[stage]
            assert f"约{chars}字" in text and "words" not in text, where
            assert "[n]" in text if model != "base" else "[n]" not in text, where
    # Every role and variant rendered, on both sides: a4d's research and revision rounds included.
    for side in ("pro", "con"):
        assert seen[("a4d", side)] == A4D_PER_STAGE, side
        for model in ("base", "sb"):
            assert seen[(model, side)] == {stage: {(model, "")} for stage in STAGES}, (model, side)


def test_the_chinese_match_keeps_the_codes_material_and_citations(chinese_matches):
    a4d_pro = [body for model, side, body in chinese_matches if (model, side) == ("a4d", "pro")]
    summary_writer = [b["messages"][0]["content"] for b in a4d_pro
                      if role_of(b) == "writer" and "当前阶段：总结陈词" in b["messages"][0]["content"]]
    revision = next(t for t in summary_writer if "你上一版的稿件" in t)
    assert "第二段请引用 [1]" in revision and "教练对当前场上局势的判断：对方领先" in revision
    assert "对方的论点尚未得到回应" in revision
    assert "- (for us) 发现 1 [1]" in revision  # the compiled findings as the code renders them
    assert "=== PRO · constructive · speech 1 · key" in revision  # the transcript as the code renders it
    plan = next(b["messages"][0]["content"] for b in a4d_pro
                if variant_of(b) == "plan-request" and "当前阶段：总结陈词" in b["messages"][0]["content"])
    assert "我方此前的论点" in plan and "只为所指的论点寻找支持" in plan
    sb_pro = [body["messages"][0]["content"] for model, side, body in chinese_matches if (model, side) == ("sb", "pro")]
    assert all(re.search(r"^\[1\] Result 1 for .* \(https://example\.org/", t, re.MULTILINE) for t in sb_pro)


def test_a_builtin_chinese_motion_is_debated_from_the_chinese_prompts(tmp_path, fake_llm, fake_tavily, monkeypatch):
    fake_llm.responder = ChineseScript()
    ws = make_workspace(tmp_path, fake_llm, fake_tavily, monkeypatch, language="zh")
    motion = ws.store.motion("zh-policy-001")  # one-sided: PRO supports it, CON opposes it
    match = play(ws, motion.id, "a4d", "sb")
    assert match.status == "done"
    prompts = [(body["model"], body["messages"][0]["content"]) for body in fake_llm.bodies if body["model"] != "judge"]
    assert {model for model, _ in prompts} == {"a4d", "sb"}
    for model, text in prompts:
        assert f"辩题：{motion.text}\n" in text and "使用简体中文" in text and "我方持方：" not in text
        assert all(part in text for part in (("正方（PRO）", "支持本辩题") if model == "a4d" else ("反方（CON）", "反对本辩题")))
        assert not [s for s in ENGLISH_ONLY if s in text]


def test_a_french_motion_keeps_the_english_prompts(tmp_path, fake_llm, fake_tavily, monkeypatch):
    script = Script()
    fake_llm.responder = script
    ws = make_workspace(tmp_path, fake_llm, fake_tavily, monkeypatch, params="words_rebuttal = 350")
    ws.store.add_motions([FRENCH])
    match = play(ws, FRENCH.id, "a4d", "sb")
    assert match.status == "done"
    roles = set()
    for body in fake_llm.bodies:
        role, stage, side = role_stage_side(body)
        if role == "judge":
            continue
        roles.add(role)
        text = body["messages"][0]["content"]
        assert all(h in text for h in EN_HEADINGS) and "Write in French" in text, (role, stage, side)
        assert not [h for h in ZH_HEADINGS if h in text] and "约" not in text
        if role in ("writer", "direct"):
            words = 350 if (role, stage) == ("writer", "rebuttal") else WORDS[stage]
            assert f"{words} words" in text, (role, stage)
    assert roles == {"searcher", "analyzer", "writer", "reviewer", "direct"}
