"""A speech that restates its instructions line by line: the echo a small model writes when it reads its prompt's
workflow back in its own order, a word changed or dropped in each step ("1. Define the motion's key terms in the way
most reasonable for a neutral listener. 2. State the criterion ..."), which keeps too few runs of words whole for the
copied share (arena.domain.speechchecks.echo) to find, but most of each line's words in the order of one line of the
prompt. Seen on SmolLM2-135M with 50-word budgets, where such speeches were stored and judged.
"""
from __future__ import annotations

import re
from difflib import SequenceMatcher
from functools import lru_cache
from typing import Iterable

from arena.domain import transcript
from arena.domain.speechtext import prepared

# The five parts of every prompt (profile, knowledge, workflow, rules, output format), in en and zh, in whatever order
# a prompt puts them (debaters' prompts put the knowledge first, for a provider's prefix cache). All but the knowledge
# are instructions, and so is an opening paragraph before the first part; the knowledge (the motion, the debate so far,
# the research) is what a speech may use. A heading inside a speech of the transcript is the speech's, and begins no
# part.
PARTS = {"en": ("# Profile", "# Knowledge", "# Workflow", "# Rules", "# Output format"),
         "zh": ("# 角色设定", "# 背景知识", "# 工作流程", "# 规则", "# 输出格式")}
_HEADINGS = frozenset(h for heads in PARTS.values() for h in heads)
_KNOWLEDGE = frozenset(heads[1] for heads in PARTS.values())
LINE_SHARE = 0.6  # of a speech line's words found in order in one line of the instructions: that line restates it
RESTATED_SHARE = 0.5  # of a speech's words in lines that restate the instructions: the speech is the instructions
LEAST_WORDS = 3  # a line of fewer words (a heading, "PRO") says too little to be compared
# A speech line ends at a line break, or at a sentence's end before a step's number or a capital ("... listener.
# 2. State"), but not after a step's own number ("2. State").
_SEGMENT = re.compile(r"\n+|(?<=[.!?;:])(?<!\b\d[.)])\s+(?=\d+[.)]|[A-Z])")


def restated(text: str, instructions: str, shown: Iterable[str], characters: bool = False) -> float:
    """The share of text's words in lines that each restate a line of instructions (LINE_SHARE of their words in
    that line's order). The knowledge part of a prompt is no instructions (PARTS), nor a line that holds, or is
    held in, a line of a text shown (the motion, a speech of the transcript the prompt carries): a speech may
    restate those."""
    lines = _instruction_lines(instructions, tuple(shown), characters)
    if not lines:
        return 0.0
    total = found = 0
    for segment in _SEGMENT.split(text):
        words = prepared(segment, characters).tokens
        total += len(words)
        if len(words) >= LEAST_WORDS and any(_in_order(words, line) >= LINE_SHARE for line in lines):
            found += len(words)
    return found / total if total else 0.0


@lru_cache(maxsize=16)  # a turn's answers are checked against the same instructions, asked again
def _instruction_lines(instructions: str, shown: tuple[str, ...], characters: bool
                       ) -> tuple[tuple[tuple[str, ...], frozenset[str]], ...]:
    theirs = [line.strip().lower() for text in shown for line in text.splitlines() if len(line.strip()) >= 12]
    out = []
    knowledge = speech = False
    for line in instructions.splitlines():
        if transcript.MARKER.match(line):  # a speech's block of the transcript opens, or closes
            speech = transcript.HEADER.match(line) is not None
        elif not speech and line.rstrip() in _HEADINGS:  # a part begins: a speech's own "# Proposal" is none of them
            knowledge = line.rstrip() in _KNOWLEDGE
            continue
        stripped = line.strip().lower()
        if knowledge or not stripped or any(stripped in other or other in stripped for other in theirs):
            continue
        words = prepared(line, characters).tokens
        if len(words) >= LEAST_WORDS:
            out.append((words, frozenset(words)))
    return tuple(out)


def _in_order(words: tuple[str, ...], line: tuple[tuple[str, ...], frozenset[str]]) -> float:
    """The share of words found in the line's words in the same order (words in any order bound it first)."""
    tokens, vocabulary = line
    if sum(w in vocabulary for w in words) < LINE_SHARE * len(words):
        return 0.0
    blocks = SequenceMatcher(None, words, tokens, autojunk=False).get_matching_blocks()
    return sum(b.size for b in blocks) / len(words)
