"""Fitting a prompt to a model's context window by leaving material out, least valuable first.

A prompt that can grow (a knowledge base, earlier speeches) is handed over as Material: a
render function of a Cut. Fitting drops the lowest-ranked sources first; only when none are
left does it shorten earlier speeches, the oldest first, each with a visible note in the prompt.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from arena.base.errors import ArenaError


@dataclass(frozen=True)
class Cut:
    """What to leave out: the `sources` lowest-ranked sources, and per earlier speech (oldest first) the
    words kept of it (None keeps it whole)."""

    sources: int = 0
    speeches: tuple[int | None, ...] = ()

    @property
    def none(self) -> bool:
        return self.sources == 0 and all(w is None for w in self.speeches)

    def kept(self, index: int) -> int | None:
        """Words kept of the index-th speech; None for all of it."""
        return self.speeches[index] if index < len(self.speeches) else None


@dataclass(frozen=True)
class Material:
    """A prompt that can be shortened: render(cut), with the sources and earlier speeches (in words) it holds."""

    render: Callable[[Cut], str]
    sources: int = 0
    speeches: tuple[int, ...] = field(default=())


class PromptTooLong(ArenaError):
    """Even with every source dropped and every earlier speech cut, the prompt exceeds its budget."""


def fit(material: Material, fits: Callable[[str], bool]) -> tuple[str, Cut]:
    """The fullest rendering of material that fits, and the cut that made it.

    Monotone search: fewer sources, then fewer words of the oldest speech, then the next one.
    """
    whole = material.render(Cut())
    if fits(whole):
        return whole, Cut()
    if material.sources:
        k = _least(1, material.sources, lambda k: fits(material.render(Cut(sources=k))))
        if k is not None:
            cut = Cut(sources=k)
            return material.render(cut), cut
    kept: list[int | None] = [None] * len(material.speeches)
    for i, words in enumerate(material.speeches):
        def attempt(drop: int, i: int = i) -> bool:
            trial = kept.copy()
            trial[i] = words - drop
            return fits(material.render(Cut(material.sources, tuple(trial))))

        drop = _least(1, words, attempt) if words else None
        if drop is not None:
            kept[i] = words - drop
            cut = Cut(material.sources, tuple(kept))
            return material.render(cut), cut
        kept[i] = 0
    raise PromptTooLong("the prompt does not fit the model's context window even with every source dropped "
                        "and every earlier speech left out")


def _least(low: int, high: int, ok: Callable[[int], bool]) -> int | None:
    """The least n in [low, high] with ok(n), for ok monotone in n; None when ok(high) fails."""
    if not ok(high):
        return None
    while low < high:
        mid = (low + high) // 2
        if ok(mid):
            high = mid
        else:
            low = mid + 1
    return low
