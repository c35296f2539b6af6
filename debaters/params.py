"""Debater params: the sampling and length knobs every kind shares, and checking an entry's params."""
from __future__ import annotations

from typing import Any, NamedTuple

from arena.limits import MAX_SEED
from arena.params import Param, between
from arena.params import resolve as check
from arena.records import Entry

__all__ = ["LENGTHS", "SAMPLING", "Length", "Param", "length", "resolve", "sampling", "speech_tokens"]

CHARACTER_LANGUAGES = ("zh", "ja")
SAMPLING: dict[str, Param] = {
    "temperature": Param(0.2, (int, float), "sampling temperature", between(0, 2), "from 0 to 2"),
    "top_p": Param(0.75, (int, float), "nucleus sampling mass", between(0, 1), "from 0 to 1"),
    "max_tokens": Param(None, (int,), "cap on tokens per call", between(1, 1_000_000), "at least 1"),
    "seed": Param(None, (int,), "provider-side sampling seed, where supported", between(0, MAX_SEED),
                  f"from 0 to {MAX_SEED}"),
}
SAMPLING_KEYS = tuple(SAMPLING)
LENGTHS: dict[str, Param] = {
    **{f"words_{stage}": Param(words, (int,), f"length budget of the {stage} speech, in words",
                               between(50, 5000), "from 50 to 5000")
       for stage, words in (("constructive", 450), ("rebuttal", 400), ("summary", 300))},
    # Chinese and Japanese are counted in characters, as their debate rules count speeches.
    **{f"chars_{stage}": Param(chars, (int,), f"length budget of the {stage} speech, in characters, for "
                               f"languages written without spaces ({', '.join(CHARACTER_LANGUAGES)})",
                               between(100, 20000), "from 100 to 20000")
       for stage, chars in (("constructive", 1200), ("rebuttal", 1000), ("summary", 800))},
}


class Length(NamedTuple):
    """A speech's length budget in the unit its language counts: words, or characters."""

    amount: int
    unit: str  # "words" | "characters"


def length(params: dict[str, Any], stage: str, language: str) -> Length:
    """The stage's budget for a speech in language: chars_<stage> where the language counts characters,
    else words_<stage>."""
    if language in CHARACTER_LANGUAGES:
        return Length(params[f"chars_{stage}"], "characters")
    return Length(params[f"words_{stage}"], "words")


def resolve(entry: Entry, spec: dict[str, Param]) -> dict[str, Any]:
    """entry.params checked against the kind's spec, with defaults filled in."""
    return check(entry.params, spec, f"entry {entry.name!r} ({entry.debater} debater)")


def sampling(values: dict[str, Any]) -> dict[str, Any]:
    """The sampling params to send with each call (unset ones left out)."""
    return {k: values[k] for k in SAMPLING_KEYS if values.get(k) is not None}


def speech_tokens(budget: Length) -> int:
    """The answer cap for a speech: about 1.3 tokens a word, or up to 1.5 a Chinese character on common
    tokenizers, with a margin on top."""
    return 2 * budget.amount + 64
