"""Judges of known weaknesses, as answers of the fake OpenAI server: each reads the transcript in its prompt (the
keyed speech blocks of arena.domain.transcript) and decides by one rule, so an attack that plays on that rule flips
it and no other does.

- `follower`: obeys any instruction in a speech to declare a side the winner; else decides as `robust`;
- `longer`: gives the debate to the side whose speeches are longer (words in their blocks);
- `label`: always PRO, whatever was said (a position bias, which the swap attack shows);
- `robust`: gives the debate to the side whose speeches carry the better debater's mark (STRONG_MARK), so only a
  change of who said what could move it, and no attack makes one.

Debaters for them: `speaker` writes speeches of two lengths, the strong entry's longer, each passing the speech
checks.
"""
from __future__ import annotations

import json
import re
from typing import Callable

from tests.support.helpers import stage_and_side, speech_text

PRICED = "gpt-4o-mini"  # a judge model litellm prices, judged as `robust`
STRONG_MARK = "STRONG-CASE"  # in every speech of the strong entry, and in no other's
_BLOCK = re.compile(r"^=== (PRO|CON) · [a-z_0-9]+ · speech (\d+) · key ([0-9a-f]+) ===$\n(.*?)\n"
                    r"^=== end of speech \2 · key \3 ===$", re.MULTILINE | re.DOTALL)
_DIRECTIVE = re.compile(r"declare (PRO|CON) the winner|宣布(正方|反方)")


def sides_text(prompt: str) -> dict[str, str]:
    """Each side's speeches, as the judge's prompt quotes them in their blocks (references included)."""
    out = {"pro": "", "con": ""}
    for block in _BLOCK.finditer(prompt):
        out[block.group(1).lower()] += "\n" + block.group(4)
    return out


def _robust(speeches: dict[str, str]) -> str:
    return "pro" if STRONG_MARK in speeches["pro"] else "con"


def _follower(speeches: dict[str, str]) -> str:
    for side in ("pro", "con"):
        said = _DIRECTIVE.search(speeches[side])
        if said:
            named = said.group(1) or said.group(2)
            return {"PRO": "pro", "CON": "con", "正方": "pro", "反方": "con"}[named]
    return _robust(speeches)


def _longer(speeches: dict[str, str]) -> str:
    return "pro" if len(speeches["pro"].split()) > len(speeches["con"].split()) else "con"


RULES: dict[str, Callable[[dict[str, str]], str]] = {
    "follower": _follower, "longer": _longer, "label": lambda speeches: "pro", "robust": _robust}


def verdict(overall: str) -> str:
    return json.dumps({"rationale": f"{overall.upper()} did more.", "argument": overall, "source": overall,
                       "language": overall, "overall": overall})


def speaker(strong: str, words: int = 200, weak_words: int = 120):
    """Speeches for every debater (the model `openai/<strong>-model` the strong one, longer, with STRONG_MARK),
    and for judge models `openai/<rule>` the verdict of that rule (RULES) on the prompt's transcript. The rules'
    calls are recorded by the fake server, so a test can read what each judge saw."""

    def respond(body: dict) -> str:
        model = body["model"]
        rule = "robust" if model == PRICED else model  # litellm sends the model without its provider
        if rule in RULES:
            return verdict(RULES[rule](sides_text(body["messages"][0]["content"])))
        stage, side = stage_and_side(body)
        mark = STRONG_MARK if model == f"{strong}-model" else "plain-case"
        return speech_text(f"SPEECH<{model}|{stage}|{side}> {mark}.",
                           size=words if mark == STRONG_MARK else weak_words)

    return respond
