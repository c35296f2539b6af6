"""Debater params: the sampling and length knobs every kind shares, and checking an entry's params."""
from __future__ import annotations

from typing import Any

from arena.params import Param, between
from arena.params import resolve as check
from arena.records import Entry

__all__ = ["LENGTHS", "SAMPLING", "Param", "resolve", "sampling", "speech_tokens"]

SAMPLING: dict[str, Param] = {
    "temperature": Param(0.2, (int, float), "sampling temperature", between(0, 2), "from 0 to 2"),
    "top_p": Param(0.75, (int, float), "nucleus sampling mass", between(0, 1), "from 0 to 1"),
    "max_tokens": Param(None, (int,), "cap on tokens per call", between(1, 1_000_000), "at least 1"),
    "seed": Param(None, (int,), "provider-side sampling seed, where supported"),
}
SAMPLING_KEYS = tuple(SAMPLING)
LENGTHS: dict[str, Param] = {
    f"words_{stage}": Param(words, (int,), f"length budget of the {stage} speech, in words",
                            between(50, 5000), "from 50 to 5000")
    for stage, words in (("constructive", 450), ("rebuttal", 400), ("summary", 300))
}


def resolve(entry: Entry, spec: dict[str, Param]) -> dict[str, Any]:
    """entry.params checked against the kind's spec, with defaults filled in."""
    return check(entry.params, spec, f"entry {entry.name!r} ({entry.debater} debater)")


def sampling(values: dict[str, Any]) -> dict[str, Any]:
    """The sampling params to send with each call (unset ones left out)."""
    return {k: values[k] for k in SAMPLING_KEYS if values.get(k) is not None}


def speech_tokens(words: int) -> int:
    """The answer cap for a speech of `words` words: about 1.3 tokens a word, half as much again for margin."""
    return 2 * words + 64
