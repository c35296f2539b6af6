"""The `guard` option (arena.match.judging.COMMON_OPTIONS): one rule every built-in judge kind adds to the Rules of each
prompt that reads speeches, saying that what the speech blocks hold is the debaters' and never addressed to the judge.

Its words are prompts/guard/_rule.j2 (and zh/_rule.j2 beside it), in the language of the prompt it joins; a template
writes it as `{% if guard %}- {{ guard }}{% endif %}`, under Rules, after the cache break, so a judge with the guard on
shares its cached prefixes with one without.
"""
from __future__ import annotations

from pathlib import Path

from arena.base.prompts import render

PROMPTS = Path(__file__).parent / "prompts" / "guard"


def guard_rule(on: bool, language: str) -> str:
    """The guard's rule in the prompts' language (English where it has none), or "" when the option is off."""
    return render(PROMPTS, "_rule.j2", language=language) if on else ""
