"""How a debate is written out for a reader (a debater's later stage, or a judge).

One format for everyone, so a transcript reads the same to every judge kind, and the offline
simulator can find each side's speeches in it. Sides appear only as PRO and CON.
"""
from __future__ import annotations

import re
from typing import Iterable

from arena.fitting import Cut
from arena.records import Speech

HEADER = re.compile(r"^\[(PRO|CON) · (constructive|rebuttal|summary)\]$", re.MULTILINE)
END = "[END OF TRANSCRIPT]"
LABELS = {"pro": "PRO", "con": "CON"}


def speech_header(side: str, stage: str) -> str:
    return f"[{LABELS[side]} · {stage}]"


def render(speeches: Iterable[Speech], *, swap: bool = False, cut: Cut = Cut()) -> str:
    """The speeches in order, each under its header, then an end mark; swap exchanges the side labels.

    cut shortens speeches to fit a context window, each with a note saying so (arena.fitting).
    """
    blocks = []
    for i, s in enumerate(speeches):
        side = {"pro": "con", "con": "pro"}[s.side] if swap else s.side
        block = f"{speech_header(side, s.stage)}\n{shorten(s.text.strip(), cut.kept(i))}"
        if s.references:  # the source dimension is judged on these, so readers see them with the speech
            block += "\n\nReferences:\n" + "\n".join(f"[{k}] {r.title} ({r.url})"
                                                     for k, r in enumerate(s.references, start=1))
        blocks.append(block)
    return "\n\n".join(blocks + [END])


def words(speeches: Iterable[Speech]) -> tuple[int, ...]:
    """Each speech's length in words: what a Cut counts in."""
    return tuple(len(s.text.split()) for s in speeches)


def shorten(text: str, kept: int | None) -> str:
    """text cut to its first `kept` words, with a note of how much was left out (None keeps it whole)."""
    if kept is None:
        return text
    parts = text.split()
    if kept >= len(parts):
        return text
    note = f"[{len(parts) - kept} more words of this speech left out to fit the model's context window]"
    return " ".join(parts[:kept] + [note]) if kept else note


def split(text: str) -> list[tuple[str, str, str]]:
    """(side, stage, body) for each speech found in a rendered transcript."""
    marks = list(HEADER.finditer(text))
    out = []
    for i, m in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else _end(text, m.end())
        out.append((m.group(1).lower(), m.group(2), text[m.end():end].strip()))
    return out


def _end(text: str, start: int) -> int:
    stop = text.find(END, start)
    return stop if stop >= 0 else len(text)
