"""The offline simulator behind offline/<name> models: deterministic, seeded, no network.

A debater's prose carries its entry's planted strength: a share sigmoid(strength) of its
sentences are cogent (evidence, mechanism, weighing) and the rest are hedged. A simulated
judge reads the transcript, estimates each side's strength from that share, and draws its
verdict from Bradley–Terry on the estimates — so a simulated tournament recovers the
planted order through the same transcripts and verdict parsing that real models go through.
"""
from __future__ import annotations

import hashlib
import json
import math
import random
import re
from typing import Any

from arena import transcript

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
COGENT_ZH = (
    "关于{topic}，证据非常清楚，因此我方立场成立。",
    "从机制上看，证据表明这一影响覆盖最多的人群，因此应当支持我方。",
    "对方没有回应这一点，证据依然有效，因此胜负在此。",
)
WEAK_ZH = (
    "也许{topic}本身就很复杂，可能吧。",
    "我觉得这个问题也许很难说清楚，可能吧。",
)
_COGENT_MARK = re.compile(r"\b(evidence|demonstrates|therefore|because)\b|证据|因此", re.IGNORECASE)
_WEAK_MARK = re.compile(r"\b(perhaps|maybe|arguably|I feel)\b|也许|可能吧", re.IGNORECASE)
_SENTENCES = {"constructive": 18, "rebuttal": 14, "summary": 10}
_SIDES = ("pro", "con", "tie")


def respond(model: str, strength: float, messages: list[dict], *, schema: dict | None = None, sample: int = 0,
            seed: int = 0, role: str = "", stage: str | None = None,
            judging: bool = False) -> tuple[str, int, int]:
    """(text, prompt_tokens, completion_tokens) for one simulated call.

    judging: the caller is a judge (it speaks for no side), whose notes carry the running tally.
    """
    prompt = "\n".join(str(m.get("content", "")) for m in messages)
    digest = hashlib.sha256(json.dumps([model, strength, prompt, schema, sample, seed, role, stage]).encode())
    rng = random.Random(digest.hexdigest())
    length = _SENTENCES.get(stage or "", 8)
    if schema is not None:
        text = json.dumps(_Filler(prompt, strength, length, rng, judging).fill(schema), ensure_ascii=False)
    else:
        text = prose(prompt, strength, rng, length)
        if judging and (note := assessment(prompt)) is not None:
            text += "\n\n" + note
    return text, _tokens(prompt), _tokens(text)


def prose(prompt: str, strength: float, rng: random.Random, sentences: int) -> str:
    """Sentences about the motion, a share sigmoid(strength) of them cogent.

    Cogent sentences cite, as [n], sources that the prompt lists as '[n] title (url)'.
    """
    topic = _motion(prompt)
    chinese = _is_chinese(topic)
    sources = re.findall(r"^\[(\d+)\] .*\(https?://", prompt, re.MULTILINE)
    cogent = round(sentences / (1 + math.exp(-strength)))
    kinds = [True] * cogent + [False] * (sentences - cogent)
    rng.shuffle(kinds)
    out = []
    for good in kinds:
        if chinese:
            sentence = rng.choice(COGENT_ZH if good else WEAK_ZH).format(topic=topic)
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


def _counts(text: str) -> tuple[int, int]:
    """(cogent, hedged) sentences in text."""
    cogent = weak = 0
    for sentence in re.split(r"(?<=[.!?。])\s*", text):
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


_ASSESSMENT = re.compile(r"\[simulated assessment\]([^\n]*)")
_ASSESSED = re.compile(r"(pro|con)/(\w+) (\d+)/(\d+)")


def _read(prompt: str) -> dict[tuple[str, str], tuple[int, int]]:
    """(side, stage) → (cogent, hedged) for every speech a simulated reader of prompt knows.

    Judges that never see the raw debate at once (Debatrix's running notes, a summary of
    dimension verdicts) still need the evidence, so simulated notes and rationales carry an
    assessment line counting each speech read; speeches shown in full are counted directly.
    Each speech counts once however often it appears.
    """
    per_speech: dict[tuple[str, str], tuple[int, int]] = {}
    for line in _ASSESSMENT.findall(prompt):
        for side, stage, c, w in _ASSESSED.findall(line):
            per_speech[(side, stage)] = (int(c), int(w))
    for side, stage, body in transcript.split(prompt):
        per_speech[(side, stage)] = _counts(body)
    return per_speech


def tally(prompt: str) -> dict[str, tuple[int, int]] | None:
    """Per side, the (cogent, hedged) sentences of the speeches the prompt reveals; None if none."""
    per_speech = _read(prompt)
    if not per_speech:
        return None
    return {side: (sum(c for (s, _), (c, _w) in per_speech.items() if s == side),
                   sum(w for (s, _), (_c, w) in per_speech.items() if s == side)) for side in ("pro", "con")}


def assessment(prompt: str) -> str | None:
    """The line a simulated judge's note carries: each speech read, with its cogent/hedged counts."""
    per_speech = _read(prompt)
    if not per_speech:
        return None
    return "[simulated assessment] " + "; ".join(f"{side}/{stage} {c}/{w}"
                                                for (side, stage), (c, w) in per_speech.items())


class _Verdicts:
    """Draws for pro/con/tie fields: the overall winner by Bradley–Terry on the strengths the
    prompt reveals; other side fields as independent draws of the same model."""

    def __init__(self, prompt: str, rng: random.Random):
        counts = tally(prompt)
        pro, con = (None, None) if counts is None else (_logit(*counts["pro"]), _logit(*counts["con"]))
        self.p_pro = 0.5 if pro is None or con is None else 1 / (1 + math.exp(con - pro))
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


class _Filler:
    """Values that satisfy a schema (the subset of JSON Schema our prompts use).

    Side fields (pro/con/tie) come from the transcript's Bradley–Terry draws; a field named
    "speech" gets debate prose that carries the entry's strength; nullable fields are null
    half the time, so optional requests are sometimes made and sometimes not.
    """

    PROSE = ("speech",)

    def __init__(self, prompt: str, strength: float, sentences: int, rng: random.Random, judging: bool):
        self.prompt, self.strength, self.sentences, self.rng = prompt, strength, sentences, rng
        self.judging = judging
        self.verdicts = _Verdicts(prompt, rng)

    def fill(self, schema: dict, name: str = "") -> Any:
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
            values = {k: self.fill(props[k], k) for k in order}
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
        text = rng.choice(CLAIMS).capitalize() + "."
        if self.judging and name == "rationale" and (note := assessment(self.prompt)) is not None:
            text += " " + note
        low, high = schema.get("minLength", 0), schema.get("maxLength")
        text = text.ljust(low, ".")
        return text[:high] if high else text


def _motion(prompt: str) -> str:
    found = re.search(r"^\s*Motion:\s*(.+)$", prompt, re.MULTILINE)
    motion = found.group(1).strip().rstrip(".") if found else "the motion holds"
    # Mid-sentence, a motion reads better without its capital (unless it starts with an acronym).
    return motion if motion[1:2].isupper() else motion[:1].lower() + motion[1:]


def _is_chinese(text: str) -> bool:
    return sum("\u4e00" <= ch <= "\u9fff" for ch in text) > len(text) / 4


def _tokens(text: str) -> int:
    """A rough token count: about 4/3 tokens per English word, one per CJK character."""
    cjk = sum("\u4e00" <= ch <= "\u9fff" for ch in text)
    return cjk + round(len(text.split()) * 4 / 3)


def simulated_ballot(match, person: str, rng: random.Random):
    """A simulated person's Ballot on a played Match: like a simulated judge, Bradley–Terry on the strengths
    its speeches reveal, drawn with the person's own rng, ties a little more common (people call close
    rounds even), and a rationale saying it is simulated."""
    from arena.records import DIMENSIONS, Ballot

    counts = {side: [0, 0] for side in ("pro", "con")}
    for speech in match.speeches:
        c, w = _counts(speech.text)
        counts[speech.side][0] += c
        counts[speech.side][1] += w
    pro, con = _logit(*counts["pro"]), _logit(*counts["con"])
    p_pro = 0.5 if pro is None or con is None else 1 / (1 + math.exp(con - pro))

    def draw() -> str:
        return "tie" if rng.random() < 0.1 else "pro" if rng.random() < p_pro else "con"

    overall = draw()
    (pc, pw), (cc, cw) = counts["pro"], counts["con"]
    if match.motion.language == "zh":
        rationale = f"（模拟选票，{person}）正方有据论点 {pc} 句、含糊 {pw} 句；反方有据论点 {cc} 句、含糊 {cw} 句。"
    else:
        rationale = (f"(simulated ballot, {person}) PRO made {pc} cogent points and {pw} hedged ones; "
                     f"CON {cc} and {cw}.")
    return Ballot(match.id, person, overall, {d: draw() for d in DIMENSIONS}, rationale)
