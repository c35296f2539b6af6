"""The offline simulator behind offline/<name> models: deterministic, seeded, no network.

A debater's prose carries its entry's planted strength: a share sigmoid(strength) of its
sentences are cogent (evidence, mechanism, weighing) and the rest are hedged. A simulated
judge reads the transcript, estimates each side's strength from that share, and draws its
verdict from Bradley–Terry on the estimates — so a simulated tournament recovers the
planted order through the same transcripts and verdict parsing that real models go through.

Two more properties can be planted, to show what a rating does with a judge's taste for length: a debater's
verbosity (its entry's `verbosity` param) multiplies the sentences of its speeches, by verbosity on average and
by a draw per motion (_stretch), their cogent share unchanged, so it is longer and no better; a judge's
length_bias (its `length_bias` option) adds length_bias · x to the logit of PRO winning, x = (pro - con) /
(pro + con) of the two sides' words over the speeches it reads (arena.domain.features.words, as a length-controlled
rating counts them).
"""
from __future__ import annotations

import hashlib
import json
import math
import random
import re
from functools import lru_cache
from typing import Any, Mapping, Sequence

from arena.domain import transcript
from arena.domain.contradictions import contradicts
from arena.domain.features import words
from arena.domain.formats import words_for
from arena.domain.records import DIMENSIONS, Ballot, Match, Outcome
from arena.gateway.chat import Message, Schema

COGENT = (
    "The evidence on whether {topic} is clear: {claim}, and that is why it decides this round.",
    "Consider the mechanism: {claim}, which demonstrates that our burden is met.",
    "Research on whether {topic} points the same way, therefore {claim}.",
    "Weigh the impact: {claim}, because it touches the most people for the longest time.",
    "Our opponents left this unanswered: {claim}, and the evidence still stands.",
    "Compare the worlds: {claim}, therefore the balance of harms favours us.",
)
WEAK = (
    "Perhaps the question of whether {topic} is just complicated, and {claim}, maybe.",
    "I feel that {claim}, although it is hard to say.",
    "Maybe the other side has a point, but {claim}, perhaps.",
    "Some people say {claim}, which is arguably something.",
)
CLAIMS = (
    "the motion changes the incentives ordinary people face",
    "the costs fall on those least able to bear them",
    "the long-run benefits outweigh the short-run disruption",
    "institutions adapt more slowly than the problem grows",
    "the burden of proof has not been met on the other side",
    "the principle at stake applies far beyond this case",
    "the practical record of similar policies is instructive",
    "trust, once lost, is expensive to rebuild",
)
# What simulated judges write in English: a rationale names the side it chose (or the tie), as RATIONALES_ZH do.
RATIONALES = (
    "{winner} has the better of it: {claim}.",
    "{winner} carried the key clash, since {claim}, and {loser} never answered it.",
    "On balance {winner} made the stronger case: {claim}.",
)
TIED = (
    "Neither side pulls ahead: {claim}, but neither pressed it far enough to decide this.",
    "Even: both sides argued that {claim}, and the clash was not settled.",
)
# Chinese motions get Chinese prose. {topic} is the motion (or the side's own proposition) already in
# 「」 quotes, {claim} one of CLAIMS_ZH. Every cogent template carries a _COGENT_MARK marker and no
# _WEAK_MARK one, every hedged template a _WEAK_MARK marker, and each ends with its only 。, so the
# strength estimator counts each sentence once and the right way.
COGENT_ZH = (
    "关于{topic}，证据非常清楚：{claim}，这正是本场比赛的胜负手。",
    "从机制上看，{claim}，这足以证明我方的论证责任已经完成，因此我方立场成立。",
    "围绕{topic}的研究指向同一个方向，因此{claim}。",
    "请评委衡量影响：{claim}，因为它波及的人群最广、持续的时间最长。",
    "对方始终没有回应这一点：{claim}，而我方的证据依然成立。",
    "比较两个世界：{claim}，因此利弊权衡站在我方一边。",
    "数据表明，{claim}，由此可见{topic}的答案在我方。",
    "回到判准，{claim}，所以在{topic}这个问题上我方的论证更完整，因为对方只给出了结论。",
)
WEAK_ZH = (
    "也许{topic}这个问题本身就很复杂，{claim}，可能吧。",
    "我觉得{claim}，不过这也很难说。",
    "也许对方说得也有道理，但{claim}，大概是这样。",
    "有人说{claim}，这或许算是一点理由。",
    "说不定{claim}，我们也不能完全确定。",
)
CLAIMS_ZH = (
    "这一辩题改变了普通人面对的激励结构",
    "代价往往落在最无力承担的人身上",
    "长期收益大于短期的阵痛",
    "制度调整的速度赶不上问题扩大的速度",
    "对方的举证责任尚未完成",
    "这里涉及的原则远远超出本案本身",
    "类似做法的实际记录值得借鉴",
    "信任一旦失去，重建的成本极高",
    "个人的选择不能脱离它的社会后果来讨论",
    "判断标准应当看最广泛人群的真实处境",
    "眼前看得见的好处不等于长期的净收益",
    "技术本身是中立的，关键在于制度如何引导",
)
# What simulated judges write in Chinese. {side} and {other} are the two sides' names in either order.
SIDE_NAMES_ZH = ("正方", "反方")
NOTES_ZH = (
    "{side}在{topic}上的核心论点是：{claim}。",
    "{side}对这一点的回应还不够充分，{other}提出的“{claim}”基本没有被正面回应。",
    "本篇发言值得记下的一点是，{claim}。",
    "{side}的论证链条基本完整，但还要看{other}接下来如何回应。",
    "就这一维度而言，双方的交锋集中在一点：{claim}。",
    "{side}引用的材料与其论点之间的关联还需要进一步说明。",
    "{other}提出{claim}，这一点在后续发言中仍需追踪。",
    "目前双方在{topic}上各有得失，尚未分出明显高下。",
)
RATIONALES_ZH = (
    "综合全场来看，{winner}在关键交锋上更占优势：{claim}。",
    "{winner}的论证更扎实，对{loser}主要论点的回应也更到位，尤其是“{claim}”这一点。",
    "{loser}的不少表述停留在含糊的判断上，而{winner}给出了材料和机制：{claim}。",
    "{winner}把比较做到了最后，说明了{claim}，{loser}对此没有给出有力的回应。",
)
TIED_ZH = (
    "双方势均力敌：{claim}，但谁都没有把这一点推进到足以决胜的程度。",
    "两方在这一点上各有所长，{claim}这一交锋没有分出胜负。",
)
# Agent4Debate's and the devil's-advocate judge's text fields, by field name; other fields get "{claim}。".
# A debater's fields call the other side 对方; a judge's name the sides ({side}, {other}).
SEARCH_ZH = ("实证研究", "统计数据", "国际经验", "政策评估", "典型案例", "专家观点", "历史案例", "社会调查")
ASPECTS_ZH = ("长期影响", "代价分配", "国际比较", "一线数据", "对方可能引用的反例", "实施成本")
_QUERIES_ZH = ("{subject} {keyword}", "{subject} {aspect}", "{subject} {keyword} {aspect}")
FIELDS_ZH = {
    "queries": _QUERIES_ZH,
    "query": _QUERIES_ZH,
    "need": ("需要一份{keyword}，用来说明{claim}。", "需要能回应对方在{aspect}上质疑的材料。"),
    "point": ("我方此前已经论证：{claim}。", "我方立论中提出，{claim}。"),
    "topic": ("{topic}的实际效果如何？", "代价主要由谁承担？", "长期影响是什么？", "这样做是否公平？",
              "有没有更好的替代方案？", "判断的标准应该是什么？"),
    "finding": ("资料显示，{claim}。", "有研究指出，{claim}。", "多个案例表明，{claim}。"),
    "gaps": ("还缺少关于{aspect}的直接材料。", "需要补充{keyword}，以支撑“{claim}”这一点。"),
    "note": ("这一项基本达标。", "结构清楚，但段落之间的衔接还可以更自然。", "个别论点缺少来源支撑。",
             "对对方论点的复述还不够准确。", "有重复的表述，可以再压缩。"),
    "reasons": ("{claim}。", "对方没有回应“{claim}”这一点。"),
    "feedback": ("第二个论点需要补充例证。", "结尾应当回到判准做比较。", "删去重复的表述，压缩篇幅。",
                 "回应对方时先准确复述其论点，再给出反驳。", "把“{claim}”这一点讲得更具体一些。"),
    "assessment": ("这份判决对关键交锋的权衡还不够充分。", "判决理由与双方的实际发言基本一致。",
                   "判决对来源维度的评价略显宽松。", "判决没有解释为何被忽略的论点无关紧要。"),
    "issues": ("判决没有说明{side}的反驳为何足以推翻{other}的核心论点。", "对来源质量的评价缺少具体的例子。",
               "判决忽略了{side}在总结陈词中所做的权衡比较。", "语言维度的评分与{side}发言的实际表现不符。"),
}
_COGENT_MARK = re.compile(r"\b(evidence|demonstrates|therefore|because)\b|证据|因此|因为|数据表明|由此可见", re.IGNORECASE)
_WEAK_MARK = re.compile(r"\b(perhaps|maybe|arguably|I feel)\b|也许|可能吧|或许|我觉得|说不定|很难说", re.IGNORECASE)
# Sentences per speech: the agent4debate format's stages keep the lengths the simulator has always written them
# (so recorded simulations replay byte for byte); a turn of another format gets one per _WORDS_PER_SENTENCE words
# of its budget; a call of no speech (a judge's), 8.
_SENTENCES = {"constructive": 18, "rebuttal": 14, "summary": 10}
_WORDS_PER_SENTENCE = 25
_SIDES = ("pro", "con", "tie")
# A source the prompt lists, "[n] title (url)" at the start of a line: the line start is checked behind the "[",
# (?<![^\n]\[), so that re looks for the literal at C speed rather than trying every position of the prompt.
_SOURCE = re.compile(r"\[(?<![^\n]\[)(\d+)\] .*\(https?://")


def respond(model: str, strength: float, messages: list[Message], *, schema: Schema | None = None, sample: int = 0,
            seed: int = 0, role: str = "", stage: str | None = None, judging: bool = False,
            verbosity: float = 1.0, length_bias: float = 0.0) -> tuple[str, int, int]:
    """(text, prompt_tokens, completion_tokens) for one simulated call.

    judging: the caller is a judge (it speaks for no side), whose notes carry the running tally.
    A prompt about a Chinese motion (see _answers_in_chinese) is answered in Chinese throughout.
    verbosity: the speaker's planted verbosity, which lengthens what its writer writes (the speech) only;
    length_bias: the judge's planted length bias. Neither enters the seed, so at their defaults every answer is
    as before, and otherwise a biased judge's draws differ from an unbiased one's only where the bias tips them.
    """
    prompt = "\n".join(str(m.get("content", "")) for m in messages)
    drawn = [model, strength, transcript.unkeyed(prompt), schema, sample, seed, role, stage]  # any workspace's keys
    rng = random.Random(hashlib.sha256(json.dumps(drawn).encode()).hexdigest())
    length = _sentences(stage)
    if role == "writer" and not judging:
        length = round(length * _stretch(model, prompt, seed, verbosity))
    if schema is not None:
        text = json.dumps(_Filler(prompt, strength, length, rng, judging, length_bias).fill(schema),
                          ensure_ascii=False)
    elif judging and _answers_in_chinese(prompt):
        text = _notes_zh(prompt, rng, length, lengths=bool(length_bias))
    else:
        text = prose(prompt, strength, rng, length)
        if judging and (note := assessment(prompt, lengths=bool(length_bias))) is not None:
            text += "\n\n" + note
    return text, _tokens(prompt), _tokens(text)


def _stretch(model: str, prompt: str, seed: int, verbosity: float) -> float:
    """How many times their usual length a speaker of this verbosity writes its speeches on the prompt's motion:
    between 1 and 2 · verbosity - 1, uniformly (verbosity on average), once per speaker and motion. A verbose model
    has more to say on some motions than on others; and only lengths that vary within an entry let a
    length-controlled rating tell a judge's taste for length from the entry's strength, which every match of the
    entry carries alike. The workspace's seed draws the stretches anew."""
    if verbosity == 1:  # the usual length, with no draw to make
        return 1.0
    key = json.dumps([model, _found_motion(prompt), seed, "verbosity"])
    return 1 + 2 * (verbosity - 1) * random.Random(hashlib.sha256(key.encode()).hexdigest()).random()


def _sentences(stage: str | None) -> int:
    """How many sentences a speech of the stage gets (see _SENTENCES)."""
    if stage in _SENTENCES:
        return _SENTENCES[stage]
    words = words_for(stage) if stage else None
    return max(3, round(words / _WORDS_PER_SENTENCE)) if words else 8


def prose(prompt: str, strength: float, rng: random.Random, sentences: int) -> str:
    """Sentences about the motion, a share sigmoid(strength) of them cogent.

    Cogent sentences cite, as [n], sources that the prompt lists as '[n] title (url)'.
    """
    chinese = _answers_in_chinese(prompt)
    topic = _topic_zh(prompt) if chinese else _motion(prompt)
    sources = _SOURCE.findall(prompt)
    cogent = round(sentences / (1 + math.exp(-strength)))
    kinds = [True] * cogent + [False] * (sentences - cogent)
    rng.shuffle(kinds)
    out = []
    for good in kinds:
        if chinese:
            sentence = rng.choice(COGENT_ZH if good else WEAK_ZH).format(topic=topic, claim=rng.choice(CLAIMS_ZH))
            if good and sources and rng.random() < 0.5:
                sentence = f"{sentence[:-1]}[{rng.choice(sources)}]{sentence[-1]}"
        else:
            sentence = rng.choice(COGENT if good else WEAK).format(topic=topic, claim=rng.choice(CLAIMS))
            if good and sources and rng.random() < 0.5:
                sentence = f"{sentence[:-1]} [{rng.choice(sources)}]{sentence[-1]}"
        out.append(sentence)
    joiner = "" if chinese else " "
    paragraphs = [joiner.join(out[i:i + 5]) for i in range(0, len(out), 5)]
    return "\n\n".join(paragraphs)


def estimated_strength(text: str) -> float | None:
    """Invert the prose encoding: the logit of the share of cogent sentences in text."""
    return _logit(*_counts(text))


@lru_cache(maxsize=1024)  # a judge's prompts quote the same speeches again and again
def _counts(text: str) -> tuple[int, int]:
    """(cogent, hedged) sentences in text."""
    cogent = weak = 0
    for sentence in re.split(r"(?<=[.!?。！？])\s*", text):
        if _WEAK_MARK.search(sentence):
            weak += 1
        elif _COGENT_MARK.search(sentence):
            cogent += 1
    return cogent, weak


def _logit(cogent: int, weak: int) -> float | None:
    if cogent + weak == 0:
        return None
    share = min(max(cogent / (cogent + weak), 0.02), 0.98)
    return math.log(share / (1 - share))


# A simulated judge's assessment line: a tag, then "side/stage cogent/hedged" for each speech read, and from a
# judge with a length bias "side/stage cogent/hedged/length". Only those items are parsed; the tag and the words
# around them are in the debate's language.
_ASSESSMENT = re.compile(r"\[(?:simulated assessment|模拟评估)\]([^\n]*)")
_ASSESSED = re.compile(r"(pro|con)/(\w+) (\d+)/(\d+)(?:/(\d+))?")


def _read(prompt: str, *, lengths: bool = False) -> dict[tuple[str, str], tuple[int, ...]]:
    """(side, stage) → (cogent, hedged) for every speech a simulated reader of prompt knows; with lengths,
    (cogent, hedged, length), the length in words (characters for Chinese; _length).

    Judges that never see the raw debate at once (Debatrix's running notes, a summary of
    dimension verdicts) still need the evidence, so simulated notes and rationales carry an
    assessment line counting each speech read; speeches shown in full are counted directly.
    Each speech counts once however often it appears.
    """
    per_speech: dict[tuple[str, str], tuple[int, ...]] = {}
    for line in _ASSESSMENT.findall(prompt):
        for side, stage, c, w, n in _ASSESSED.findall(line):
            per_speech[(side, stage)] = (int(c), int(w), int(n or 0)) if lengths else (int(c), int(w))
    for side, stage, body in transcript.split(prompt):
        per_speech[(side, stage)] = (*_counts(body), _length(body)) if lengths else _counts(body)
    return per_speech


def tally(prompt: str) -> dict[str, tuple[int, int]] | None:
    """Per side, the (cogent, hedged) sentences of the speeches the prompt reveals; None if none."""
    per_speech = _read(prompt)
    if not per_speech:
        return None
    return {side: (sum(c for (s, _), (c, _w) in per_speech.items() if s == side),
                   sum(w for (s, _), (_c, w) in per_speech.items() if s == side)) for side in ("pro", "con")}


def length_gap(prompt: str) -> float:
    """x = (pro - con) / (pro + con) of the two sides' lengths over the speeches the prompt reveals; 0 if none."""
    per_side = dict.fromkeys(("pro", "con"), 0)
    for (side, _stage), (_c, _w, n) in _read(prompt, lengths=True).items():
        per_side[side] += n
    total = per_side["pro"] + per_side["con"]
    return (per_side["pro"] - per_side["con"]) / total if total else 0.0


@lru_cache(maxsize=1024)  # as _counts: a judge's prompts quote the same speeches again and again
def _length(text: str) -> int:
    """A speech's length as turn budgets and a length-controlled rating count it: words, characters for Chinese."""
    return words(text, "zh" if _mostly_chinese(text) else "en")


def assessment(prompt: str, *, chinese: bool = False, lengths: bool = False) -> str | None:
    """The line a simulated judge's note carries: each speech read, with its cogent/hedged counts, and its length
    when the judge weighs lengths (a later reader of the note knows them only from here)."""
    per_speech = _read(prompt, lengths=lengths)
    if not per_speech:
        return None
    items = [f"{side}/{stage} {'/'.join(map(str, counts))}" for (side, stage), counts in per_speech.items()]
    if chinese:
        return f"[模拟评估] 各篇发言的有据/含糊句数{'/篇幅' if lengths else ''}：" + "；".join(items)
    return "[simulated assessment] " + "; ".join(items)


def _notes_zh(prompt: str, rng: random.Random, sentences: int, *, lengths: bool = False) -> str:
    """A simulated judge's note, summary or discussion turn in Chinese: remarks on the debate, the running
    tally in words, and the assessment line that a later reader of the note parses."""
    topic = _topic_zh(prompt)
    remarks = []
    for template in rng.sample(NOTES_ZH, min(len(NOTES_ZH), max(3, sentences // 2))):
        side, other = rng.sample(SIDE_NAMES_ZH, 2)
        remarks.append(template.format(topic=topic, claim=rng.choice(CLAIMS_ZH), side=side, other=other))
    text = "".join(remarks)
    if (counts := tally(prompt)) is not None:
        (pc, pw), (cc, cw) = counts["pro"], counts["con"]
        text += (f"\n\n按已读到的发言统计，正方有据论点 {pc} 句、含糊表述 {pw} 句；"
                 f"反方有据论点 {cc} 句、含糊表述 {cw} 句。")
    if (note := assessment(prompt, chinese=True, lengths=lengths)) is not None:
        text += "\n\n" + note
    return text


def _p_pro(counts: Mapping[str, Sequence[int]] | None, bias: float = 0.0) -> float:
    """P(PRO wins) by Bradley–Terry on the strengths the (cogent, hedged) counts per side reveal, bias added to
    its logit; 0.5 unknown."""
    pro, con = (None, None) if counts is None else (_logit(*counts["pro"]), _logit(*counts["con"]))
    return 0.5 if pro is None or con is None else 1 / (1 + math.exp(con - pro - bias))


class _Verdicts:
    """Draws for pro/con/tie fields: the overall winner by Bradley–Terry on the strengths the
    prompt reveals, plus length_bias · x (length_gap); other side fields as independent draws of the same model."""

    def __init__(self, prompt: str, rng: random.Random, length_bias: float = 0.0):
        self.p_pro = _p_pro(tally(prompt), length_bias * length_gap(prompt) if length_bias else 0.0)
        self.rng = rng
        self.primary: str | None = None

    def draw(self, name: str, options: list[str]) -> str:
        primary = name in ("overall", "winner")
        if primary and self.primary is not None:
            return self.primary
        if "tie" in options and not primary and self.rng.random() < 0.12:
            return "tie"
        outcome = "pro" if self.rng.random() < self.p_pro else "con"
        if primary:
            self.primary = outcome
        return outcome


def _agreeing(values: dict[str, Any]) -> dict[str, Any]:
    """A filled object whose scores agree with the winners it names, as a judge that is not contradicting itself
    gives them (arena.domain.contradictions): a winner (pro_score, con_score and winner; or a table of scores with a
    {"pro", "con"} pair per field it decides) whose side drew the lower score gets the two scores exchanged."""
    if {"winner", "pro_score", "con_score"} <= values.keys() and contradicts(values["winner"], values["pro_score"],
                                                                             values["con_score"]):
        values["pro_score"], values["con_score"] = values["con_score"], values["pro_score"]
    if isinstance(scores := values.get("scores"), dict):
        for name, scored in scores.items():
            if not (isinstance(scored, dict) and {"pro", "con"} <= scored.keys()):
                continue
            if contradicts(values.get(name), scored["pro"], scored["con"]):
                scored["pro"], scored["con"] = scored["con"], scored["pro"]
    return values


class _Filler:
    """Values that satisfy a schema (the subset of JSON Schema our prompts use).

    Side fields (pro/con/tie) come from the transcript's Bradley–Terry draws; a field named
    "speech" gets debate prose that carries the entry's strength; nullable fields are null
    half the time, so optional requests are sometimes made and sometimes not.
    """

    PROSE = ("speech",)

    def __init__(self, prompt: str, strength: float, sentences: int, rng: random.Random, judging: bool,
                 length_bias: float = 0.0):
        self.prompt, self.strength, self.sentences, self.rng = prompt, strength, sentences, rng
        self.judging, self.lengths = judging, bool(length_bias)
        self.verdicts = _Verdicts(prompt, rng, length_bias)
        self.chinese = _answers_in_chinese(prompt)

    def fill(self, schema: Schema, name: str = "") -> Any:
        rng = self.rng
        if "const" in schema:
            return schema["const"]
        if "enum" in schema:
            options = list(schema["enum"])
            if set(options) <= set(_SIDES):
                return self.verdicts.draw(name, options)
            return rng.choice(options)
        for key in ("anyOf", "oneOf"):
            if key in schema:
                return self.fill(rng.choice(schema[key]), name)
        kind = schema.get("type", "string")
        if isinstance(kind, list):
            if "null" in kind and rng.random() < 0.5:
                return None
            kind = next(k for k in kind if k != "null")
        if kind == "null":
            return None
        if kind == "object":
            props = schema.get("properties", {})
            # Fill side verdicts named overall/winner first, so the per-dimension fields can follow them.
            order = sorted(props, key=lambda k: k not in ("overall", "winner"))
            values = _agreeing({k: self.fill(props[k], k) for k in order})
            return {k: values[k] for k in props}
        if kind == "array":
            low, high = schema.get("minItems", 1), schema.get("maxItems", 3)
            return [self.fill(schema.get("items", {}), name) for _ in range(rng.randint(low, max(low, high)))]
        if kind == "integer":
            return rng.randint(schema.get("minimum", 1), schema.get("maximum", 10))
        if kind == "number":
            return round(rng.uniform(schema.get("minimum", 0.0), schema.get("maximum", 1.0)), 3)
        if kind == "boolean":
            return rng.random() < 0.5
        if name in self.PROSE:
            return prose(self.prompt, self.strength, rng, self.sentences)
        if self.chinese:
            text = self._text_zh(name)
            if self.judging and name == "rationale" and (
                    note := assessment(self.prompt, chinese=True, lengths=self.lengths)) is not None:
                text += note
        else:
            text = self._text_en(name)
            if self.judging and name == "rationale" and (
                    note := assessment(self.prompt, lengths=self.lengths)) is not None:
                text += " " + note
        low, high = schema.get("minLength", 0), schema.get("maxLength")
        text = text.ljust(low, "。" if self.chinese else ".")
        return text[:high] if high else text

    def _text_en(self, name: str) -> str:
        """An English string for the field called name: a judge's rationale naming the side it chose, else a
        claim."""
        claim = self.rng.choice(CLAIMS)
        if name == "rationale" and self.judging and self.verdicts.primary is not None:
            winner = self.verdicts.primary
            if winner in ("pro", "con"):
                loser = "con" if winner == "pro" else "pro"
                return self.rng.choice(RATIONALES).format(winner=winner.upper(), loser=loser.upper(), claim=claim)
            return self.rng.choice(TIED).format(claim=claim)
        return claim.capitalize() + "."

    def _text_zh(self, name: str) -> str:
        """A Chinese string for the field called name: a judge's rationale naming the side it chose, else a
        sentence in the field's manner (a search query, a finding, a reviewer's note, a critic's issue...)."""
        rng = self.rng
        claim = rng.choice(CLAIMS_ZH)
        if name == "rationale" and self.judging:
            winner = self.verdicts.primary
            if winner in ("pro", "con"):
                names = dict(zip(("pro", "con"), SIDE_NAMES_ZH))
                loser = names["con" if winner == "pro" else "pro"]
                return rng.choice(RATIONALES_ZH).format(winner=names[winner], loser=loser, claim=claim)
            return rng.choice(TIED_ZH).format(claim=claim)
        side, other = rng.sample(SIDE_NAMES_ZH, 2)
        return rng.choice(FIELDS_ZH.get(name, ("{claim}。",))).format(
            claim=claim, topic=_topic_zh(self.prompt), subject=_subject_zh(self.prompt, query=True), side=side, other=other,
            keyword=rng.choice(SEARCH_ZH), aspect=rng.choice(ASPECTS_ZH))


# Where a prompt states its motion: the English templates write "Motion: {{ motion.text }}"; the Chinese
# templates (prompts/**/zh) write "辩题：{{ motion.text }}" on a line of its own. That line is the convention
# the simulator reads; the first such line of the prompt counts.
_MOTION_LINE = re.compile(r"^\s*(?:Motion:|(?P<zh>辩题[：:]))\s*(.+)$", re.MULTILINE)
# A debater's own proposition on a two-sided motion, as the debater templates state it.
_OWN_SIDE = re.compile(r"^\s*(?:Your side \((?:PRO|CON)\) argues:|我方(?:立场|持方)[：:])\s*(.+)$", re.MULTILINE)
# The language an English template asks for: "Write in Simplified Chinese", "Write the rationale in English".
# The word boundary before "Write" is checked behind it, (?<!\wWrite ), so that the pattern starts with its literal
# and re finds it at C speed, rather than trying every position of an 8 KB prompt.
_ASKED = re.compile(r"Write (?<!\wWrite )(?:the rationale )?in ((?:Simplified |Traditional )?[A-Z][a-z]+)\b")
_HAN_LEADS = (b"\xe5", b"\xe6", b"\xe7", b"\xe8", b"\xe9")  # U+5000–U+9FFF in UTF-8
_HAN_E4 = re.compile(rb"\xe4[\xb8-\xbf]")  # U+4E00–U+4FFF


def _found_motion(prompt: str) -> str | None:
    found = _MOTION_LINE.search(prompt)
    return found.group(2).strip().rstrip(".").rstrip("。") if found else None


def _motion(prompt: str) -> str:
    found = _found_motion(prompt)
    motion = found if found is not None else "the motion holds"
    # Mid-sentence, a motion reads better without its capital (unless it starts with an acronym).
    return motion if motion[1:2].isupper() else motion[:1].lower() + motion[1:]


def _answers_in_chinese(prompt: str) -> bool:
    """Is the answer to prompt to be Chinese? The simulator sees only the prompt: a Chinese template (its
    motion line is "辩题：...") is answered in Chinese; an English template in the language it asks for
    ("Write in Simplified Chinese"), else in its motion's language; a prompt with neither, in its own."""
    line = _MOTION_LINE.search(prompt)
    if line is not None and line.group("zh"):
        return True
    if (asked := _ASKED.search(prompt)) is not None:
        return asked.group(1).endswith("Chinese")
    if line is not None:
        return _mostly_chinese(line.group(2))
    return _mostly_chinese(prompt)


@lru_cache(maxsize=64)  # asked again for every text field of an answer, each a search of the whole prompt
def _subject_zh(prompt: str, *, query: bool = False) -> str:
    """What a Chinese debater argues about: its own side's proposition where the prompt states one, else the
    motion; for a search query, the first side's wording of a motion named as a pair "正方立场 / 反方立场"."""
    own = _OWN_SIDE.search(prompt)
    found = own.group(1).strip().rstrip("。") if own else _found_motion(prompt)
    if not found:
        return ""
    return found.split(" / ")[0].strip() if query else found


def _topic_zh(prompt: str) -> str:
    """The subject in 「」 quotes, ready for a Chinese sentence; "本辩题" if the prompt names none."""
    subject = _subject_zh(prompt)
    return f"「{subject}」" if subject else "本辩题"


def _mostly_chinese(text: str) -> bool:
    """Whether any text is Chinese: more than a quarter of its characters are Han."""
    return _han(text) > len(text) / 4


def as_sent(text: str, tokens: int, limit: int, *, prose: bool) -> tuple[str, int]:
    """(text, completion tokens) of an answer as a real model would send it under max_tokens=limit: at most limit
    tokens, prose cut at a word within them (a structured answer keeps its text: cut, it would not parse)."""
    if tokens <= limit:
        return text, tokens
    if not prose:
        return text, limit
    low, high = 0, len(text)  # the longest prefix within the limit
    while low < high:
        middle = (low + high + 1) // 2
        if _tokens(text[:middle]) <= limit:
            low = middle
        else:
            high = middle - 1
    cut = text[:low]
    if low < len(text) and not text[low].isspace() and text.isascii():
        cut = cut[:cut.rfind(" ") + 1] if " " in cut else cut  # not half a word
    cut = cut.rstrip()
    return cut, _tokens(cut)


def _tokens(text: str) -> int:
    """A rough token count: about 4/3 tokens per English word, one per CJK character."""
    return _han(text) + round(len(text.split()) * 4 / 3)


def _han(text: str) -> int:
    """How many characters of text are Han (U+4E00–U+9FFF)."""
    if text.isascii():
        return 0
    # In UTF-8 these are the characters led by the bytes E5–E9, and by E4 with a second byte B8–BF: counted by
    # bytes.count at memory speed rather than a character at a time, for the simulator counts every ~8 KB prompt.
    data = text.encode("utf-8", "surrogatepass")
    return sum(data.count(lead) for lead in _HAN_LEADS) + len(_HAN_E4.findall(data))


def simulated_ballot(match: Match, person: str, rng: random.Random) -> Ballot:
    """A simulated person's Ballot on a played Match: like a simulated judge, Bradley–Terry on the strengths
    its speeches reveal, drawn with the person's own rng, ties a little more common (people call close
    rounds even), and a rationale saying it is simulated."""
    counts = {side: [0, 0] for side in ("pro", "con")}
    for speech in match.speeches:
        c, w = _counts(speech.text)
        counts[speech.side][0] += c
        counts[speech.side][1] += w
    p_pro = _p_pro(counts)

    def draw() -> Outcome:
        return "tie" if rng.random() < 0.1 else "pro" if rng.random() < p_pro else "con"

    overall = draw()
    (pc, pw), (cc, cw) = counts["pro"], counts["con"]
    if match.motion.language == "zh" or _mostly_chinese(match.motion.text):
        rationale = f"（模拟选票，{person}）正方有据论点 {pc} 句、含糊 {pw} 句；反方有据论点 {cc} 句、含糊 {cw} 句。"
    else:
        rationale = (f"(simulated ballot, {person}) PRO made {pc} cogent points and {pw} hedged ones; "
                     f"CON {cc} and {cw}.")
    return Ballot(match.id, person, overall, {d: draw() for d in DIMENSIONS}, rationale)
