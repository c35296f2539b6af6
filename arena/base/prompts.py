"""Prompt templates: jinja2 files kept next to the agent that uses them."""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

import jinja2

# Where a prompt's shared part ends (a template writes {{ cache_break }} there): what comes before it is the same
# for every call that reads this debate at this point, what comes after is this call's own. The gateway takes it out
# and tells the providers that need telling where to cache (arena.gateway.chat.user, arena.gateway.caching).
CACHE_BREAK = "\x1e"  # ASCII's record separator, which no prose has; the last one in a prompt is the break
LANGUAGES = {"en": "English", "zh": "Simplified Chinese", "fr": "French", "de": "German", "es": "Spanish",
             "ja": "Japanese", "ko": "Korean", "pt": "Portuguese", "ru": "Russian", "it": "Italian"}


@lru_cache(maxsize=None)
def _environment(folders: tuple[str, ...]) -> jinja2.Environment:
    # Prompts are plain text for a model, not HTML: no autoescaping; a missing variable is a bug.
    return jinja2.Environment(loader=jinja2.FileSystemLoader(folders), undefined=jinja2.StrictUndefined,
                              keep_trailing_newline=False, trim_blocks=True, lstrip_blocks=True)


def render(folder: Path, name: str, *, override: str | Path = "", **variables: Any) -> str:
    """Render folder/name with variables; language codes become names ('zh' → 'Simplified Chinese').

    A language with templates of its own has them in folder/<language>/, laid out as folder is: they are
    searched first (includes and extends too), so a prompt is written in the debate's language where we
    have one; any other language, or a template not written in it, falls back to the English one, which
    asks for the language by name. override: a user's folder searched before all, so a template there
    replaces the built-in one of the same name.
    """
    language = variables.get("language", "en")
    variables.setdefault("language_name", LANGUAGES.get(language, language))
    variables.setdefault("cache_break", CACHE_BREAK)
    return _environment(_folders(Path(folder), language, str(override))).get_template(name).render(**variables).strip()


@lru_cache(maxsize=None)
def _folders(folder: Path, language: str, override: str) -> tuple[str, ...]:
    native = folder / language
    return ((override,) if override else ()) + ((str(native),) if language != "en" and native.is_dir() else ()) + (
        str(folder),)
