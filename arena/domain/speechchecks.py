"""Is it a debate speech? Small pure checks of one speech's text, each naming what it found.

A speech that fails one is not rated as a speech: the protocol (arena.match.protocol) ends the match as that side's
forfeit, its reason beginning with the check's name (`placeholder:`, `echo:`, `repetition:`, `language:`,
`too-short:`). Each check returns None for a speech that passes, else what is wrong, in words a reader of the
forfeit reason understands. The thresholds leave every speech of the demo alone and flag one of the 15,470 of
lechmazur/debate's real debates (a rebuttal in Chinese in an English debate); benchmarks/speech_checks.py prints
the counts and how close the rest come.
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Callable, Iterable, Mapping, Sequence

from arena.domain.formats import CHARACTER_LANGUAGES, Format
from arena.domain.transcript import MARKER

if TYPE_CHECKING:
    from arena.domain.records import Match, Motion, Speech

# In the order they are tried: a speech in another language is named so before its length, which is counted
# in the wrong unit, calls it short.
CHECKS = ("placeholder", "echo", "repetition", "language", "too-short")
MIN_SHARE = 0.25  # [arena] min_speech_share's default: a speech under a quarter of its budget is no speech

# What output formats ask to be replaced: <the full speech>, [Your speech here], {speech}, {{ speech }}, 【在此填写】.
_ANGLED = re.compile(r"<\s*([^\W\d_][^<>\n=/]{0,80}?)\s*>")
_SQUARE = re.compile(r"[\[【]([^\[\]【】\n]{0,80}?(?:your|insert|speech|placeholder|here|todo|在此|此处|填写|发言内容)"
                     r"[^\[\]【】\n]{0,80}?)[\]】]", re.IGNORECASE)
_BRACED = re.compile(r"\{\{?\s*[A-Za-z_][\w .-]{0,40}?\s*\}?\}")
_LOREM = re.compile(r"\blorem ipsum\b", re.IGNORECASE)
_HTML = {"b", "i", "u", "p", "br", "em", "hr", "li", "ol", "ul", "strong", "sup", "sub", "small", "blockquote"}
PLACEHOLDER_LEFT = 25  # words (characters for zh/ja: twice this) beside the placeholders: no speech around them

_SENTENCE_END = re.compile(r"(?<=[.!?。！？；;])\s*|\n+")
_TOKEN = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]|[^\W_]+", re.UNICODE)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff]")
_HANGUL = re.compile(r"[\uac00-\ud7af]")
_LATIN = re.compile(r"[A-Za-z\u00c0-\u024f]")
_CYRILLIC = re.compile(r"[\u0400-\u04ff]")
_ARABIC = re.compile(r"[\u0600-\u06ff]")
# The script each language is written in; a language not here is not checked.
SCRIPTS = {"zh": "cjk", "ja": "cjk", "ko": "hangul", "ru": "cyrillic", "uk": "cyrillic", "ar": "arabic",
           **{code: "latin" for code in ("en", "fr", "de", "es", "it", "pt", "nl", "sv", "da", "no", "pl", "tr",
                                          "id", "vi", "cs", "fi", "ro", "hu")}}
_SCRIPT_NAMES = {"cjk": "Chinese or Japanese characters", "hangul": "Korean", "latin": "Latin letters",
                 "cyrillic": "Cyrillic", "arabic": "Arabic script"}
# English's commonest words: prose has a third of its words among them; a speech in French or German in Latin
# letters has almost none.
_ENGLISH = frozenset("the a an of to and in is that it for on as with be are this by not or we our they their "
                     "but if from at which would will can more should has have was its than so you your how why what "
                     "do does when where who there been were all any no into about".split())
ENGLISH_SHARE = 0.08

ECHO_SHARE = 0.6  # of a speech's word runs found in its sources: most of it copied
# Of its runs found in the speaker's own earlier speeches: nearly all of one again. Real debaters restate at most
# a quarter (lechmazur/debate: 27%), the simulator's summaries, built from a few templates, up to 72%.
ECHO_OWN_SHARE = 0.9
ECHO_RUN = 8  # words (characters for zh/ja: twice this) in a run that counts as copied
REPEAT_SHARE = 0.5  # of a speech's words in its commonest sentence: one sentence making up most of it
LOOP_SHARE = 0.6  # of a speech's word runs that repeat an earlier one: a phrase in a loop
LOOP_RUN = 6
MIN_WORDS = 20  # shorter speeches are left to too-short: a share of a few words says nothing


@dataclass(frozen=True)
class Problem:
    """A failed check: its name and what it found."""

    check: str  # one of CHECKS
    detail: str

    def __str__(self) -> str:
        return f"{self.check}: {self.detail}"


def length(text: str, language: str) -> tuple[int, str]:
    """(amount, unit): a speech's length as its budget counts it, characters for zh/ja, else words; only letters
    and digits count, so that a page of dashes or brackets is not taken for a speech (SmolLM2 wrote one)."""
    if language in CHARACTER_LANGUAGES:
        return sum(1 for c in text if c.isalnum()), "characters"
    return len(_tokens(text)), "words"


def placeholder(text: str, prompt: str = "", language: str = "en") -> str | None:
    """The output format's placeholder instead of a speech: placeholders (those the prompt shows, and the common
    <...>, [Your ... here], {name}) with next to nothing else around them, or lorem ipsum anywhere."""
    if _LOREM.search(text):
        return "it is lorem ipsum filler"
    shown = {m.group(0) for m in _ANGLED.finditer(prompt)} | {m.group(0) for m in _BRACED.finditer(prompt)}
    found = [m.group(0) for pattern in (_ANGLED, _SQUARE, _BRACED) for m in pattern.finditer(text)
             if not _is_markup(m.group(0))]
    found += [s for s in shown if s in text and s not in found]
    if not found:
        return None
    left = text
    for span in sorted(found, key=len, reverse=True):
        left = left.replace(span, " ")
    amount, unit = length(left, language)
    if amount >= (2 if unit == "characters" else 1) * PLACEHOLDER_LEFT:
        return None
    return f"it is the placeholder {_quote(found[0])} where the speech should be"


def copied_share(text: str, sources: Sequence[tuple[str, str]], own: Iterable[tuple[str, str]] = (),
                 language: str = "en") -> tuple[float, str]:
    """(share, name): the share of text's runs of ECHO_RUN words found in any source and not in own, and the name
    of the source it copies most; (0.0, "") for a text under MIN_WORDS runs."""
    size = 2 * ECHO_RUN if language in CHARACTER_LANGUAGES else ECHO_RUN
    runs = _runs(text, size)
    if len(runs) < MIN_WORDS:
        return 0.0, ""
    candidates = set(runs).difference(*(_run_set(t, size) for _, t in own))
    copied: set[tuple[str, ...]] = set()
    best, best_share = "", 0.0
    for name, source in sources:
        found = candidates & _run_set(source, size)
        share = sum(1 for r in runs if r in found) / len(runs)
        if share > best_share:
            best, best_share = name, share
        copied |= found
    return sum(1 for r in runs if r in copied) / len(runs), best


def echo(text: str, sources: Sequence[tuple[str, str]], own: Sequence[tuple[str, str]] = (),
         language: str = "en") -> str | None:
    """Most of the speech copied word for word from what its speaker was shown, or a marker line of the transcript
    it was shown (arena.domain.transcript.MARKER) copied into it: sources are (name, text) pairs (the motion, the prompt,
    the opponent's speeches). Runs also in own (the speaker's earlier speeches, (name,
    text) too) are the speaker's own words, which a summary may restate; but a speech that is nearly all one of
    its own earlier ones again (ECHO_OWN_SHARE) says nothing new."""
    if marker := MARKER.search(text):
        return f"it copies the transcript's marker line {_quote(marker.group(0))} from what it was shown"
    share, best = copied_share(text, sources, own, language)
    if share >= ECHO_SHARE:
        return f"{share:.0%} of it is copied word for word from what it was shown, most from {best}"
    again, which = copied_share(text, own, (), language)
    if again >= ECHO_OWN_SHARE:
        return f"{again:.0%} of it repeats {which} word for word"
    return None


def repeated_shares(text: str, language: str = "en") -> tuple[float, int, str, float, str]:
    """(sentence share, its count, the sentence, loop share, the phrase): the share of text's words in its
    commonest sentence, and the share of its runs of LOOP_RUN words that repeat an earlier run; zeros for a
    text under MIN_WORDS words."""
    tokens = _tokens(text)
    if len(tokens) < MIN_WORDS:
        return 0.0, 0, "", 0.0, ""
    sentences = [s for s in (" ".join(_tokens(part)) for part in _SENTENCE_END.split(text)) if s]
    sentence, count = Counter(sentences).most_common(1)[0] if sentences else ("", 0)
    size = 2 * LOOP_RUN if language in CHARACTER_LANGUAGES else LOOP_RUN
    runs = list(zip(*(tokens[i:] for i in range(size))))
    if len(runs) < MIN_WORDS:  # a loop of phrases needs room to show itself
        return count * len(sentence.split()) / len(tokens), count, sentence, 0.0, ""
    loop = (len(runs) - len(set(runs))) / len(runs)
    return (count * len(sentence.split()) / len(tokens), count, sentence, loop,
            " ".join(Counter(runs).most_common(1)[0][0]))


def repetition(text: str, language: str = "en") -> str | None:
    """A loop: one sentence making up most of the speech, or runs of words that mostly repeat earlier ones (a
    phrase looping with no sentence end between)."""
    share, count, sentence, loop, phrase = repeated_shares(text, language)
    if count >= 3 and share >= REPEAT_SHARE:
        return f"one sentence makes up {share:.0%} of it, said {count} times: {_quote(sentence)}"
    if loop >= LOOP_SHARE:
        return f"{loop:.0%} of it repeats what it already said, in a loop of {_quote(phrase)}"
    return None


def too_short(text: str, budget: int, language: str = "en", share: float = MIN_SHARE) -> str | None:
    """Under share of the turn's budget (words, or characters for zh/ja)."""
    amount, unit = length(text, language)
    if budget <= 0 or amount >= share * budget:
        return None
    return f"{amount} {unit} where the turn's budget is {budget} (under {share:.0%} of it)"


def language_of(text: str, language: str) -> str | None:
    """Not in the motion's language: mostly another script than the language's, or, for English, Latin letters
    with almost none of English's commonest words."""
    script = SCRIPTS.get(language)
    if script is None:
        return None
    counts = {"cjk": len(_CJK.findall(text)), "hangul": len(_HANGUL.findall(text)),
              "latin": len(_LATIN.findall(text)), "cyrillic": len(_CYRILLIC.findall(text)),
              "arabic": len(_ARABIC.findall(text))}
    letters = sum(counts.values())
    if letters < MIN_WORDS:
        return None
    if counts[script] < 0.5 * letters:
        other = max(counts, key=counts.__getitem__)
        return f"it is written mostly in {_SCRIPT_NAMES[other]}, where the motion's language is {language!r}"
    if language == "en" and english_share(text) < ENGLISH_SHARE:
        return "it is in Latin letters but not in English, the motion's language"
    return None


def english_share(text: str) -> float:
    """The share of text's words that are among English's commonest (1.0 for a text under MIN_WORDS words)."""
    words = [w.lower() for w in re.findall(r"[A-Za-z']+", text)]
    return sum(w in _ENGLISH for w in words) / len(words) if len(words) >= MIN_WORDS else 1.0


def check(text: str, *, language: str, budget: int, share: float = MIN_SHARE, prompt: str = "",
          sources: Sequence[tuple[str, str]] = (), own: Sequence[tuple[str, str]] = ()) -> Problem | None:
    """The first check the speech fails, in CHECKS' order, or None. budget: the turn's, in the language's unit
    (0: no length check); prompt: what the speaker was asked (its output format's placeholders); sources and
    own: as echo takes them."""
    found: tuple[tuple[str, Callable[[], str | None]], ...] = (
        ("placeholder", lambda: placeholder(text, prompt, language)),
        ("echo", lambda: echo(text, sources, own, language)),
        ("repetition", lambda: repetition(text, language)),
        ("language", lambda: language_of(text, language)),
        ("too-short", lambda: too_short(text, budget, language, share)))
    for name, test in found:
        if (detail := test()) is not None:
            return Problem(name, detail)
    return None


def in_debate(text: str, *, side: str, stage: str, motion: "Motion", shown: Sequence["Speech"], fmt: Format,
              language: str, share: float, prompts: Sequence[str] = (), budget: int | None = None) -> Problem | None:
    """check, given what the speaker of (stage, side) was shown: the motion, the prompts of its turn (their
    placeholders; the first, which no draft of the speech is in yet, as a source), the other side's speeches;
    its own earlier speeches are its own words, unless it is nearly all one of them again. budget: what the speaker was asked for, if not the turn's;
    a turn's own min_share overrides share."""
    turn = fmt.turn(stage, side)
    sources = [("the motion", "\n".join((motion.text, motion.pro_text, motion.con_text, motion.info_slide)))]
    sources += [("the prompt", prompts[0])] if prompts else []
    sources += [(f"{s.side.upper()}'s {fmt.label(s.stage)}", s.text) for s in shown if s.side != side]
    return check(text, language=language, budget=budget or turn.budget(language)[0],
                 share=share if turn.min_share is None else turn.min_share, prompt="\n".join(prompts),
                 sources=sources, own=[(f"its own {fmt.label(s.stage)}", s.text) for s in shown if s.side == side])


def match_problems(match: "Match", fmt: Format, share: float = MIN_SHARE,
                   prompts: Mapping[tuple[str, str], Sequence[str]] | None = None,
                   budgets: Mapping[tuple[str, str], int] | None = None) -> list[tuple["Speech", Problem]]:
    """Each speech of a stored or imported match that fails a check, with what it was shown: the speeches
    before it in the match's order, but those of its own stage when that stage's turns are blind, and, when
    given, the prompts of its turn and the budget its speaker was asked for, by (stage, side)."""
    out = []
    for k, speech in enumerate(match.speeches):
        blind = fmt.turn(speech.stage, speech.side).blind
        shown = [s for s in match.speeches[:k] if not (blind and s.stage == speech.stage)]
        problem = in_debate(speech.text, side=speech.side, stage=speech.stage, motion=match.motion, shown=shown,
                            fmt=fmt, language=match.motion.language, share=share,
                            prompts=(prompts or {}).get((speech.stage, speech.side), ()),
                            budget=(budgets or {}).get((speech.stage, speech.side)))
        if problem is not None:
            out.append((speech, problem))
    return out


@lru_cache(maxsize=512)  # a match's speeches are read again by every later speech's checks
def _tokens(text: str) -> tuple[str, ...]:
    """Lower-cased words, each CJK character a token of its own."""
    return tuple(_TOKEN.findall(text.lower()))


@lru_cache(maxsize=512)  # echo reads a speech's runs twice (against what it was shown, and against its own)
def _runs(text: str, size: int) -> tuple[tuple[str, ...], ...]:
    """Every run of size consecutive tokens, in order."""
    tokens = _tokens(text)
    return tuple(zip(*(tokens[i:] for i in range(size))))


@lru_cache(maxsize=512)
def _run_set(text: str, size: int) -> frozenset[tuple[str, ...]]:
    return frozenset(_runs(text, size))


def _is_markup(span: str) -> bool:
    """<b>, <br/>, </p>: HTML a speech may carry, not a placeholder."""
    return span.strip("<>/ ").lower() in _HTML


def _quote(text: str, most: int = 80) -> str:
    text = " ".join(text.split())
    return "'" + (text if len(text) <= most else text[:most - 1] + "…") + "'"
