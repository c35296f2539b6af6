"""Words that are no speech: lorem ipsum's filler, and word salad (words strung together without sentences).

Prose has sentences: sentence ends every few dozen words (lechmazur/debate's 15,470 speeches: 26 words a sentence
at the most), and, in English, a fifth or more of its words function words (the, of, is, that ...; at the fewest
14%), in Chinese characters like 的, 是, 了. A list of words drawn at random has neither. Languages without a list
of function words here are not judged.
"""
from __future__ import annotations

import re
from typing import Iterable

from arena.domain.speechtext import Prepared

# Lorem ipsum's words that English does not have (no "in", "sit", "et", "non", "magna").
_LOREM = frozenset("""lorem ipsum dolor amet consectetur consectetuer adipiscing adipisicing elit sed eiusmod tempor
incididunt labore dolore aliqua enim minim veniam quis nostrud exercitation ullamco laboris nisi aliquip commodo
consequat duis aute irure reprehenderit voluptate velit esse cillum fugiat nulla pariatur excepteur sint occaecat
cupidatat proident sunt culpa officia deserunt mollit anim laborum vestibulum aliquam pellentesque mauris nunc
vitae donec etiam morbi fusce suspendisse curabitur phasellus quisque vivamus nullam praesent maecenas""".split())

SALAD_WORDS = 80  # words (characters for zh) a text needs before its sentences are judged
SALAD_RUN = 60  # words (characters for zh: SALAD_RUN_ZH) on average between sentence ends: no sentences
SALAD_RUN_ZH = 120
SALAD_FUNCTION = 0.08  # of its words function words, at least (zh: SALAD_FUNCTION_ZH of its characters)
SALAD_FUNCTION_ZH = 0.05

# Chinese function characters (English's: arena.domain.speechtext.FUNCTION_WORDS).
_FUNCTION_ZH = frozenset("的了是在和不有这也就我你他她它们为以要与对而及但都会所其将能可个一之因此如果并被把让从到由于更很还又才却"
                         "那些么什吗呢吧着过得地")
# What ends a sentence or a clause: Chinese prose has one every dozen characters or so.
_ENDS = {"en": re.compile(r"[.!?;:]+|\n+"), "zh": re.compile(r"[，。！？；：、,.!?;:]+|\n+")}
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff]")


def lorem_words(words: Iterable[str]) -> int:
    """How many of a text's words (lower-cased) are lorem ipsum's."""
    return sum(map(_LOREM.__contains__, words))


def salad(p: Prepared, language: str) -> str | None:
    """Word salad in language ("en", "zh"; None for others): SALAD_WORDS or more words with a sentence end only
    every SALAD_RUN words or rarer, or hardly any function words."""
    if language not in _ENDS:
        return None
    if language == "zh":
        words = sum(1 for t in p.tokens if _CJK.match(t))
        run, least, unit = SALAD_RUN_ZH, SALAD_FUNCTION_ZH, "characters"
    else:
        words, run, least, unit = len(p.tokens), SALAD_RUN, SALAD_FUNCTION, "words"
    if words < SALAD_WORDS:
        return None
    text = p.text
    # Fewer than the ends there are (each ". " ends one): when they are enough, no need to find them all.
    if language != "en" or text.count(". ") * run < words:
        ends = len(_ENDS[language].findall(text.strip()))
        if words > run * max(ends, 1):
            return (f"it has {words} {unit} and {ends or 'no'} sentence end{'' if ends == 1 else 's'}: words strung "
                    f"together, not sentences")
    share = (sum(map(_FUNCTION_ZH.__contains__, p.tokens)) if language == "zh" else p.function) / words
    if share < least:
        return f"only {share:.0%} of its {unit} are the function words sentences are made with: a list, not sentences"
    return None
