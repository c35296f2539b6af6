"""Style features of a match's speeches: what a judge may reward besides the debating (length, citations, markdown).

Each is counted per side over the side's speeches; a controlled rating (leaderboard.ratings) enters each as
x = (pro - con) / (pro + con) in the Bradley–Terry logit, with one fitted coefficient, so that the ratings are
net of it. Counts are whole numbers, so that the results CSV carries them exactly (its columns:
leaderboard.results.FEATURE_COLUMNS).
"""
from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from arena.domain.speechchecks import length as speech_length

FEATURES = ("length", "citations", "markdown")

# A citation is a numbered reference, [3] or [3, 4] (what the arena's debaters write, each number one reference),
# or a URL written out (what imported debates hold).
_NUMBERED = re.compile(r"\[(\d{1,3}(?:\s*[,，]\s*\d{1,3})*)\]")
_URL = re.compile(r"https?://[^\s<>()\[\]\"']+")
# Markdown's structure, what chat models add unasked: a header line, a list item, a bold span.
_HEADER = re.compile(r"^[ \t]{0,3}#{1,6}[ \t]+\S", re.MULTILINE)
_LIST_ITEM = re.compile(r"^[ \t]*(?:[-*+]|\d{1,3}[.)])[ \t]+\S", re.MULTILINE)
_BOLD = re.compile(r"\*\*(?=\S)[^*\n]+?(?<=\S)\*\*|__(?=\S)[^_\n]+?(?<=\S)__")


def words(text: str, language: str = "en") -> int:
    """Length as the turn budgets count it: characters (letters and digits) for zh/ja, else words."""
    return speech_length(text, language)[0]


def citations(text: str) -> int:
    """References cited: the distinct numbers of [n] markers plus the distinct URLs written out."""
    numbers = {int(n) for group in _NUMBERED.findall(text) for n in re.split(r"\s*[,，]\s*", group)}
    return len(numbers) + len(set(_URL.findall(text)))


def markdown(text: str) -> int:
    """Markdown elements: header lines, list items and bold spans."""
    return len(_HEADER.findall(text)) + len(_LIST_ITEM.findall(text)) + len(_BOLD.findall(text))


_COUNTERS: dict[str, Callable[[str, str], int]] = {"length": words, "citations": lambda text, language: citations(text),
             "markdown": lambda text, language: markdown(text)}


def counts(text: str, language: str = "en") -> dict[str, int]:
    """Every feature's count in one text."""
    return {name: count(text, language) for name, count in _COUNTERS.items()}


def side_totals(speeches: Iterable[tuple[str, str]], language: str = "en") -> dict[str, dict[str, int]]:
    """Per side ("pro", "con"), each feature's count summed over that side's (side, text) speeches."""
    totals = {side: dict.fromkeys(FEATURES, 0) for side in ("pro", "con")}
    for side, text in speeches:
        for name, value in counts(text, language).items():
            totals[side][name] += value
    return totals
