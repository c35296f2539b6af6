"""Debater params: the sampling and length knobs every kind shares, and checking an entry's params."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from arena.base.errors import UserError
from arena.domain.formats import AGENT4DEBATE, CHARACTER_LANGUAGES, Turn
from arena.base.limits import MAX_SEED
from arena.base.params import Param, between
from arena.base.params import resolve as check
from arena.domain.records import Entry

__all__ = ["LENGTHS", "SAMPLING", "SIMULATOR", "Length", "Param", "length", "resolve", "sampling", "speech_tokens"]

SAMPLING: dict[str, Param] = {
    "temperature": Param(0.2, (int, float), "sampling temperature", between(0, 2), "from 0 to 2"),
    "top_p": Param(0.75, (int, float), "nucleus sampling mass", between(0, 1), "from 0 to 1"),
    "max_tokens": Param(None, (int,), "cap on tokens per call", between(1, 1_000_000), "at least 1"),
    "seed": Param(None, (int,), "provider-side sampling seed, where supported", between(0, MAX_SEED),
                  f"from 0 to {MAX_SEED}"),
}
SAMPLING_KEYS = tuple(SAMPLING)
# The agent4debate format's stages, with its budgets as defaults: an entry may change them; a turn of another
# format keeps its own budget (arena.domain.formats).
_STAGES = {t.stage: t for t in AGENT4DEBATE.turns}
LENGTHS: dict[str, Param] = {
    **{f"words_{stage}": Param(t.words, (int,), f"length budget of the {stage} speech, in words",
                               between(50, 5000), "from 50 to 5000")
       for stage, t in _STAGES.items()},
    # Chinese and Japanese are counted in characters, as their debate rules count speeches.
    **{f"chars_{stage}": Param(t.chars, (int,), f"length budget of the {stage} speech, in characters, for "
                               f"languages written without spaces ({', '.join(CHARACTER_LANGUAGES)})",
                               between(100, 20000), "from 100 to 20000")
       for stage, t in _STAGES.items()},
}

# Planted in the offline simulator, as an entry's strength is (arena.gateway.offline), for the kinds whose Writer speaks
# through a model. Never shorter than usual: a Chinese summary has too little margin over the too-short check (at
# 0.75 the shortest fall under it); up to 2, twice the words. The simulator's answers always finish, so a speech
# over its budget is never cut.
SIMULATOR: dict[str, Param] = {
    "verbosity": Param(1.0, (int, float), "offline models only: its speeches run this many times their usual "
                                          "length, as many times the sentences at the same share of cogent ones "
                                          "(no better, only longer)", between(1, 2), "from 1 to 2"),
}


class Length(NamedTuple):
    """A speech's length budget in the unit its language counts: words, or characters."""

    amount: int
    unit: str  # "words" | "characters"


def length(params: Mapping[str, Any], turn: Turn, language: str) -> Length:
    """The turn's budget for a speech in language: for a turn of the agent4debate format, the entry's chars_<stage>
    or words_<stage> (whose defaults, taken when unset, are that format's budgets); for any other format's turn, its
    own budget, even where its stage shares a key with one of agent4debate's."""
    amount, unit = turn.budget(language)
    if turn not in AGENT4DEBATE.turns:
        return Length(amount, unit)
    return Length(params.get(f"{'chars' if unit == 'characters' else 'words'}_{turn.stage}", amount), unit)


def resolve(entry: Entry, spec: dict[str, Param]) -> dict[str, Any]:
    """entry.params checked against the kind's spec, with defaults filled in; a SIMULATOR param set on an entry
    not on the simulator is refused, as `--strength` is (it would be silently ignored)."""
    owner = f"entry {entry.name!r} ({entry.debater} debater)"
    values = check(entry.params, spec, owner)
    planted = sorted(set(SIMULATOR) & set(entry.params))
    if planted and not entry.simulated:
        raise UserError(f"{owner}: param {planted[0]}: only offline models have a planted {planted[0]}, and "
                        f"{entry.model!r} is not one ('offline/NAME')")
    return values


def sampling(values: dict[str, Any]) -> dict[str, Any]:
    """The sampling params to send with each call (unset ones left out)."""
    return {k: values[k] for k in SAMPLING_KEYS if values.get(k) is not None}


def speech_tokens(budget: Length) -> int:
    """The answer cap for a speech: about 1.3 tokens a word, or up to 1.5 a Chinese character on common
    tokenizers, with a margin on top."""
    return 2 * budget.amount + 64
