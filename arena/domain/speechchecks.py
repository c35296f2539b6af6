"""Is it a debate speech? Small pure checks of one speech's text, each naming what it found.

A speech that fails one is not rated as a speech: the protocol (arena.match.protocol) ends the match as that side's
forfeit, and the web refuses a person's (arena.match.turns.problem), the reason beginning with the check's name
(`placeholder:`, `template:`, `injection:`, `echo:`, `pasted:`, `repetition:`, `language:`, `word-salad:`,
`too-short:`). Each check returns None for a speech that passes, else what is wrong, in words a reader of the forfeit
reason understands; `injection` (arena.domain.steering) refuses a speech written to the judge rather than the debate.
Texts are compared normalised (arena.domain.speechtext: look-alike letters, odd spaces, case), copies by overlapping
word shingles found in order. The thresholds leave every speech of the demo alone and flag one of the 15,470 of
lechmazur/debate's real debates (a rebuttal in Chinese in an English debate); benchmarks/speech_checks.py prints the
counts, how close the rest come, and what the checks cost a speech.
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from difflib import SequenceMatcher
from functools import cached_property, lru_cache
from typing import TYPE_CHECKING, Iterable, Mapping, Sequence

from arena.domain.formats import CHARACTER_LANGUAGES, Format
from arena.domain.restated import RESTATED_SHARE, restated
from arena.domain.speechtext import (SHINGLE, TOKEN, Prepared, aligned, coverage, plain, prepared, quoted, runs,
                                     same_words, share)
from arena.domain.steering import injection
from arena.domain.transcript import MARKER, PIECE, keys
from arena.domain.wordsalad import lorem_words, salad

if TYPE_CHECKING:
    from arena.domain.records import Match, Motion, Speech

# In the order they are tried: a speech in another language is named so before its length, which is counted
# in the wrong unit, calls it short; a copy of one text is an echo before it is a page pasted.
CHECKS = ("placeholder", "template", "injection", "echo", "pasted", "repetition", "language", "word-salad",
          "too-short")
MIN_SHARE = 0.25  # [arena] min_speech_share's default: a speech under a quarter of its budget is no speech

# What output formats ask to be replaced: <the full speech>, [Your speech here], {speech}, {{ speech }}, 【在此填写】.
_ANGLED = re.compile(r"<\s*([^\W\d_][^<>\n=/]{0,80}?)\s*>")
_BRACKETED = re.compile(r"[\[【]([^\[\]【】\n]{0,170})[\]】]")
_SQUARE = re.compile(r"your|insert|speech|placeholder|here|todo|在此|此处|填写|发言内容", re.IGNORECASE)
_BRACED = re.compile(r"\{\{?\s*[A-Za-z_][\w .-]{0,40}?\s*\}?\}")
# A template's blank: a bracket telling the writer what to put there ([Insert rebuttal here], [Your name], [TODO:
# evidence], 【在此填写】), or an angled or braced placeholder; not a citation ([1], [C2.2]) or a link ([here](url)).
_BLANK = re.compile(r"\b(?:insert|your|here|todo|tbd|placeholder|fill in|add|write|enter)\b|在此|此处|填写|插入",
                    re.IGNORECASE)
_QUOTES = "\"'“”‘’「」『』«»`"
TEMPLATE_WORDS = 3  # words beside a template's blank on its line at most: a label ("Rebuttal:"), not a sentence
_HTML = {"b", "i", "u", "p", "br", "em", "hr", "li", "ol", "ul", "strong", "sup", "sub", "small", "blockquote"}
PLACEHOLDER_LEFT = 25  # words (characters for zh/ja: twice this) beside the placeholders: no speech around them
LOREM_LEAST = 12  # lorem ipsum's words in a speech: this many, or LOREM_SHARE of its words, is filler, not a mention
LOREM_SHARE = 0.1

_SENTENCE = re.compile(r"[.!?。！？；;]+|\n+")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff]")
_HANGUL = re.compile(r"[\uac00-\ud7af]")
_LATIN = re.compile(r"[A-Za-z\u00c0-\u024f]")
_CYRILLIC = re.compile(r"[\u0400-\u04ff]")
_ARABIC = re.compile(r"[\u0600-\u06ff]")
_NOT_LATIN = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff\uac00-\ud7af\u0400-\u04ff\u0600-\u06ff]")
_SCRIPT_PATTERNS = {"cjk": _CJK, "hangul": _HANGUL, "latin": _LATIN, "cyrillic": _CYRILLIC, "arabic": _ARABIC}
# The script each language is written in; a language not here is not checked.
SCRIPTS = {"zh": "cjk", "ja": "cjk", "ko": "hangul", "ru": "cyrillic", "uk": "cyrillic", "ar": "arabic",
           **{code: "latin" for code in ("en", "fr", "de", "es", "it", "pt", "nl", "sv", "da", "no", "pl", "tr",
                                          "id", "vi", "cs", "fi", "ro", "hu")}}
_SCRIPT_NAMES = {"cjk": "Chinese or Japanese characters", "hangul": "Korean", "latin": "Latin letters",
                 "cyrillic": "Cyrillic", "arabic": "Arabic script"}
# For English, the share of its words that are function words (arena.domain.speechtext.FUNCTION_WORDS): prose has
# a third or more of its words among them; a speech in French or German in Latin letters has almost none.
ENGLISH_SHARE = 0.08

# Of a speech's words copied in order from its sources (arena.domain.speechtext.aligned): most of it. A copy with
# every 7th word changed keeps 86% of its words, with every 5th 80%; the demo's simulator reaches 49%, lechmazur/
# debate's real debaters 38%.
ECHO_SHARE = 0.7
# Of its runs of 8 words (16 characters in zh/ja) found in one of the speaker's own earlier speeches: nearly all of
# one again. Real debaters restate at most a quarter (lechmazur/debate: 27%), the simulator's summaries, built from a
# few templates, about half.
ECHO_OWN_SHARE = 0.9
# Of its runs found in anything it was shown, its own speeches too, with two or more of those texts in it whole or
# nearly: the page it was shown (the motion, the speeches), pasted.
PASTE_SHARE = 0.75
PASTE_PIECE = 0.1
PASTE_WHOLE = 0.5  # of a shown text's shingles in the speech: that text pasted into it, not quoted
PASTE_WORDS = 60  # a page holds speeches: a shorter text is no page
REPEAT_SHARE = 0.5  # of a speech's words in its commonest sentence: one sentence making up most of it
LOOP_SHARE = 0.6  # of a speech's word runs that repeat an earlier one: a phrase in a loop
LOOP_RUN = 6
MIN_WORDS = 20  # shorter speeches are left to too-short: a share of a few words says nothing
# A near-copy of one text shown (echo): this share of its words, and of that text's, matched word for word in the
# same order, as a copy with a side's name swapped every few words keeps (a word in five changed: 80%). Two speeches
# written apart share common words, but not most of their words in one order: two short claims made from one
# pattern with their names and numbers changed (tests/support/lechmazur_checkout.py) share 74%. NEAR_WORDS: the
# fewest words it is judged on (under a quarter of a 50-word budget is too short anyway).
NEAR_SHARE = 0.8
NEAR_WORDS = 10

Sources = Sequence[tuple[str, str]]  # (name, text): what a speaker was shown ("the motion", "CON's rebuttal")
PROMPT = "the prompt"  # the source that holds the speaker's instructions (in_debate), which it may not restate
BRIEF = "the turn's brief"  # the turn's title and brief (in_debate): instructions too


@dataclass(frozen=True)
class Problem:
    """A failed check: its name and what it found."""

    check: str  # one of CHECKS
    detail: str

    def __str__(self) -> str:
        return f"{self.check}: {self.detail}"


def _read(text: str, language: str) -> Prepared:
    """text prepared (arena.domain.speechtext.prepared) as language's speeches are compared."""
    return prepared(text, language in CHARACTER_LANGUAGES)


def length(text: str, language: str) -> tuple[int, str]:
    """(amount, unit): a speech's length as its budget counts it, characters for zh/ja, else words; only letters
    and digits count, so that a page of dashes or brackets is not taken for a speech (SmolLM2 wrote one)."""
    if language in CHARACTER_LANGUAGES:
        return sum(1 for c in text if c.isalnum()), "characters"
    if prepared(text, False).simple or same_words(text):  # the words _tokens would find, already cut
        return len(prepared(text, False).tokens), "words"
    return len(_tokens(text)), "words"


def placeholder(text: str, prompt: str = "", language: str = "en") -> str | None:
    """The output format's placeholder instead of a speech: placeholders (those the prompt shows, and the common
    <...>, [Your ... here], {name}) with next to nothing else around them, or lorem ipsum filler (a mention of
    lorem ipsum in a sentence is no filler)."""
    return _placeholder(_read(text, language), prompt, language)


def _placeholder(p: Prepared, prompt: str, language: str) -> str | None:
    filler, words = lorem_words(p.tokens), len(p.tokens)
    if filler >= 3 and (filler >= LOREM_LEAST or filler >= LOREM_SHARE * words):
        return f"it is lorem ipsum filler ({filler} of its {words} words)"
    text = p.plain
    if not any(c in text for c in "<[{【"):
        return None
    shown: set[str] = set()
    if prompt:
        asked = plain(prompt)
        shown = {m.group(0) for m in _ANGLED.finditer(asked)} | {m.group(0) for m in _BRACED.finditer(asked)}
    found = [m.group(0) for pattern, opens in ((_ANGLED, "<"), (_BRACED, "{")) if any(c in text for c in opens)
             for m in pattern.finditer(text) if not _is_markup(m.group(0))]
    brackets = _brackets(text)
    if brackets and _SQUARE.search("\n".join(m.group(1) for m in brackets)):  # most are citations: [1], [C2.2]
        found[:0] = [m.group(0) for m in brackets if _SQUARE.search(m.group(1))]
    found += [s for s in shown if s in text and s not in found]
    if not found:
        return None
    left = text
    for span in sorted(found, key=len, reverse=True):
        left = left.replace(span, " ")
    amount, unit = length(left, language)
    if amount >= (2 if unit == "characters" else 1) * PLACEHOLDER_LEFT:
        return None
    return f"it is the placeholder {quoted(found[0])} where the speech should be"


def template(text: str, language: str = "en") -> str | None:
    """A template left unfilled: a blank ([Insert rebuttal here], <your speech>, {speech}) standing on a line of its
    own, or after a label of a few words, whatever is written around it (an outline under it is no speech). A blank
    mentioned in a sentence, or in quotes, is a mention."""
    return _template(_read(text, language))


def _template(p: Prepared) -> str | None:
    text = p.plain
    if not any(c in text for c in "<[{【"):
        return None
    brackets = _brackets(text)
    blanks = [m for m in brackets if _BLANK.search(m.group(1)) and text[m.end():m.end() + 1] != "("] \
        if brackets and _BLANK.search("\n".join(m.group(1) for m in brackets)) else []
    for pattern, opens in ((_ANGLED, "<"), (_BRACED, "{")):
        blanks += [m for m in (pattern.finditer(text) if any(c in text for c in opens) else ())
                   if not _is_markup(m.group(0))]
    for m in sorted(blanks, key=lambda m: m.start()):
        start, end = text.rfind("\n", 0, m.start()) + 1, text.find("\n", m.end())
        end = len(text) if end < 0 else end
        before, after = text[start:m.start()].rstrip(" *_"), text[m.end():end].lstrip(" *_")
        if (before[-1:] and before[-1] in _QUOTES) or (after[:1] and after[0] in _QUOTES):
            continue
        if len(TOKEN.findall(before)) + len(TOKEN.findall(after)) <= TEMPLATE_WORDS:
            return f"{quoted(m.group(0))} stands on a line of its own: a template's blank, left unfilled"
    return None


class _Seen:
    """A speech, and which of its shingles are found in each text its speaker was shown: (name, text, found), read
    only when enough of it is found in all of them together (apart)."""

    def __init__(self, text: str, language: str, sources: Sources, own: Iterable[tuple[str, str]],
                 order: Sequence[str] = ()) -> None:
        self.text, self.characters = text, language in CHARACTER_LANGUAGES
        self.p = prepared(text, self.characters)
        self._sources, self._own = tuple(sources), tuple(own)
        # What all of them hold, read from the union of the texts in order (as a match showed them, which the
        # match's earlier speeches built) and the few others.
        ordered = set(order)
        rest = [t for _, t in self._sources + self._own if t not in ordered]
        mine = self.p.shingle_set
        self.found = (mine & _union(tuple(order), self.characters)).union(
            *(mine & prepared(t, self.characters).shingle_set for t in rest))

    @cached_property
    def sources(self) -> tuple[tuple[str, str, frozenset[int]], ...]:
        return tuple((n, t, self.found & prepared(t, self.characters).shingle_set) for n, t in self._sources)

    @cached_property
    def own(self) -> tuple[tuple[str, str, frozenset[int]], ...]:
        return tuple((n, t, self.found & prepared(t, self.characters).shingle_set) for n, t in self._own)

    def apart(self, words: float | None, runs: float | None) -> bool:
        """Whether too little of it is found in anything shown for words (a share of its words inside shingles
        found) or runs (a share of its runs found) to be reached, so that neither need be counted (None: not asked)."""
        p = self.p
        found = p.seen(self.found)
        return ((words is None or found * p.size < words * p.extent)
                and (runs is None or found < runs * (len(p.shingles) - p.size)))

    def covered(self, found: frozenset[int] | set[int], least: float = 0.0) -> float:
        """The share of the speech's words inside shingles in found; 0.0 at once when it cannot reach least."""
        p = self.p
        if least and p.seen(found) * p.size < least * p.extent:
            return 0.0
        return coverage(p.shingles, found, p.size)

    def run_share(self, texts: Sequence[tuple[str, str, frozenset[int]]], least: float = 0.0) -> float:
        """The share of the speech's runs (of twice a shingle's words) found in any of texts; 0.0 at once when it
        cannot reach least (a run found starts with a shingle found)."""
        p = self.p
        if least and p.seen(set().union(*(f for _, _, f in texts))) < least * (len(p.shingles) - p.size):
            return 0.0
        characters = p.size != SHINGLE
        ordered, _ = runs(self.text, characters)
        return share(ordered, set().union(*(runs(t, characters)[1] for _, t, _ in texts)))

    def whole(self, text: str) -> float:
        """The share of text's runs found in the speech: 1.0 for a text pasted into it whole."""
        characters = self.p.size != SHINGLE
        _, mine = runs(self.text, characters)
        _, theirs = runs(text, characters)
        return len(mine & theirs) / len(theirs) if theirs else 0.0


def _seen(text: str, language: str, sources: Sources, own: Iterable[tuple[str, str]],
          order: Sequence[str] = ()) -> _Seen:
    return _Seen(text, language, sources, own, order)


@lru_cache(maxsize=64)
def _union(texts: tuple[str, ...], characters: bool) -> frozenset[int]:
    """All the shingles of texts: the union of all but the last (which the speech before read, in a match) and the
    last one's."""
    if not texts:
        return frozenset()
    return _union(texts[:-1], characters) | prepared(texts[-1], characters).shingle_set


def copied_share(text: str, sources: Sources, own: Iterable[tuple[str, str]] = (),
                 language: str = "en") -> tuple[float, str]:
    """(share, name): the share of text's words copied in order from the sources (not in own), and the name of the
    source it copies most; (0.0, "") for a text under MIN_WORDS words."""
    seen = _seen(text, language, sources, own)
    return _copied(seen) if len(seen.p.shingles) >= MIN_WORDS else (0.0, "")


def _copied(seen: _Seen, least: float = 0.0) -> tuple[float, str]:
    theirs = set().union(*(f for _, _, f in seen.sources)).difference(*(f for _, _, f in seen.own))
    if not seen.covered(theirs, least):  # too little found to be a copy, in order or not
        return 0.0, ""
    p, characters = seen.p, seen.characters
    copied = {name: aligned(p.shingles, found & theirs, prepared(text, characters).shingles, p.size)
              for name, text, found in seen.sources if found & theirs}
    words = set().union(*copied.values())
    if not words:
        return 0.0, ""
    return len(words) / p.extent, max(copied, key=lambda name: len(copied[name]))


def echo(text: str, sources: Sources, own: Sequence[tuple[str, str]] = (), language: str = "en") -> str | None:
    """Most of the speech (ECHO_SHARE of its words) copied in order from what its speaker was shown (sources:
    (name, text) pairs, the motion, the prompt, the other side's speeches), word for word or with a word changed
    here and there, or a near-copy of one of them (_near_copy), or a marker line of the transcript it was shown,
    a piece of one or its key (arena.domain.transcript) copied into it. Words also in own (the speaker's earlier
    speeches, (name, text) too) are the speaker's own, which a summary may restate; but a speech that is nearly
    all one of its own earlier ones again (ECHO_OWN_SHARE of its runs of 8 words) says nothing new."""
    return _echo(_seen(text, language, sources, own))


def _echo(seen: _Seen, prompt: str = "", keys: frozenset[str] = frozenset()) -> str | None:
    if (marked := _marked(seen.text, (prompt, *(t for _, t in seen._sources)), keys)) is not None:
        return marked
    if len(seen.p.shingles) >= MIN_WORDS and not seen.apart(ECHO_SHARE, ECHO_OWN_SHARE):
        copied, best = _copied(seen, ECHO_SHARE)
        if copied >= ECHO_SHARE:
            return f"{copied:.0%} of it is copied from what it was shown, most from {best}"
        for mine in seen.own:
            if (again := seen.run_share([mine], ECHO_OWN_SHARE)) >= ECHO_OWN_SHARE:
                return f"{again:.0%} of it repeats {mine[0]} word for word"
    return _near_copy(seen) or _restating(seen)


def _restating(seen: _Seen) -> str | None:
    """Its instructions read back line by line (arena.domain.restated), however loosely the words were kept."""
    prompt = "\n".join(t for n, t in seen._sources if n == PROMPT)
    if not prompt or len(seen.p.tokens) < NEAR_WORDS:
        return None
    shown = [t for n, t in (*seen._sources, *seen._own) if n not in (PROMPT, BRIEF)]  # what a speech may restate
    share = restated(seen.text, prompt, shown, seen.characters)
    return f"{share:.0%} of it restates the instructions it was given, line by line" if share >= RESTATED_SHARE \
        else None


def _near_copy(seen: _Seen) -> str | None:
    """A near-copy of one text it was shown (the other side's last speech, say), however short: NEAR_SHARE of its
    words and of that text's matched in the same order, word for word, with words changed, added or dropped
    between them (a side's name swapped every few words leaves no shingle in common, but most words in order).
    Its words inside shingles of its own earlier speeches are its own, as for the copied share."""
    mine = seen.p.tokens
    if len(mine) < NEAR_WORDS:
        return None
    own: set[int] = set()
    if seen._own:
        found = set().union(*(f for _, _, f in seen.own))
        own = {k for i, shingle in enumerate(seen.p.shingles) if shingle in found for k in range(i, i + seen.p.size)}
    for name, text in seen._sources:
        if (matched := _matched(mine, text, seen.characters, own)) is not None:
            return f"it is a near-copy of {name}: {matched:.0%} of its words are that text's, in the same order"
    return None


def _matched(mine: tuple[str, ...], text: str, characters: bool, own: set[int]) -> float | None:
    """The share of mine's words that are text's in the same order (those at positions in own left out), when
    NEAR_SHARE of both are; else None."""
    theirs = prepared(text, characters).tokens
    most = max(len(mine), len(theirs))
    if min(len(mine), len(theirs)) < NEAR_SHARE * most:
        return None  # of lengths this far apart, one cannot be mostly the other
    if sum(map(_vocabulary(theirs).__contains__, mine)) < NEAR_SHARE * most \
            or sum((_counts(mine) & _counts(theirs)).values()) < NEAR_SHARE * most:
        return None  # too few words in common, in any order (the first, quicker bound rules out most)
    blocks = SequenceMatcher(None, mine, theirs, autojunk=False).get_matching_blocks()
    matched = sum(1 for b in blocks for k in range(b.a, b.a + b.size) if k not in own)
    return matched / len(mine) if matched >= NEAR_SHARE * most else None


@lru_cache(maxsize=64)  # a match's speeches are counted again by each later speech's check
def _counts(tokens: tuple[str, ...]) -> Counter[str]:
    return Counter(tokens)


@lru_cache(maxsize=64)
def _vocabulary(tokens: tuple[str, ...]) -> frozenset[str]:
    return frozenset(tokens)


def _marked(text: str, shown: Iterable[str], match: frozenset[str] = frozenset()) -> str | None:
    """A marker line of a transcript (arena.domain.transcript), a piece of one, the key of a transcript it was
    shown, or any key of its match's transcripts (match): what only a copy of a prompt puts in a speech."""
    if "===" in text:
        if marker := MARKER.search(text):
            return f"it copies the transcript's marker line {quoted(marker.group(0))} from what it was shown"
        if piece := PIECE.search(text):
            line = text[text.rfind("\n", 0, piece.start()) + 1:].split("\n", 1)[0]
            return f"it copies a piece of the transcript's marker lines, {quoted(line)}, from what it was shown"
    lower = text.lower()
    for key in sorted(frozenset().union(*map(keys, shown))):
        if key in lower:
            return f"it holds the key {key!r} that marked the speeches of the transcript it was shown"
    for key in sorted(match):
        if key in lower:
            return f"it holds the key {key!r} that marks the speeches of its match's transcripts"
    return None


def pasted(text: str, sources: Sources, own: Sequence[tuple[str, str]] = (), language: str = "en") -> str | None:
    """The page the speaker was shown, pasted: most of the speech's runs of 8 words (PASTE_SHARE) found in what it
    was shown, its own earlier speeches included, and two or more of those texts in it whole or nearly (the
    speeches before it, the motion): a page, not a quote or a restatement."""
    return _pasted(_seen(text, language, sources, own))


def pasted_share(seen: _Seen, least: float = 0.0) -> tuple[float, list[str]]:
    """(share, names): the share of the speech's runs found in anything shown, and the texts it pastes: those of
    which PASTE_WHOLE or more is in it, making up PASTE_PIECE of it or more."""
    texts = seen.sources + seen.own
    found = seen.run_share(texts, least)
    if not found:
        return 0.0, []
    return found, [name for name, text, shingles in texts
                   if seen.covered(shingles, PASTE_PIECE) >= PASTE_PIECE and seen.whole(text) >= PASTE_WHOLE]


def _pasted(seen: _Seen) -> str | None:
    if len(seen.p.shingles) < PASTE_WORDS or seen.apart(None, PASTE_SHARE):
        return None
    found, names = pasted_share(seen, PASTE_SHARE)
    if found >= PASTE_SHARE and len(names) >= 2:
        return f"{found:.0%} of it is the page it was shown pasted in, {' and '.join(names)} whole"
    return None


def repeated_shares(text: str, language: str = "en") -> tuple[float, int, str, float, str]:
    """(sentence share, its count, the sentence, loop share, the phrase): the share of text's words in its
    commonest sentence, and the share of its runs of LOOP_RUN words that repeat an earlier run; zeros for a
    text under MIN_WORDS words."""
    return _repeated(_read(text, language), language)


def _repeated(p: Prepared, language: str, least: float = 0.0) -> tuple[float, int, str, float, str]:
    tokens = p.tokens
    words = len(tokens)
    if words < MIN_WORDS:
        return 0.0, 0, "", 0.0, ""
    if p.simple:  # the same cuts as _SENTENCE's, made faster with plain string methods
        parts = p.text.replace("!", ".").replace("?", ".").replace(";", ".").replace("\n", ".").split(".")
    else:
        parts = _SENTENCE.split(p.text)
    sentences = Counter(map(str.strip, parts))
    sentences.pop("", None)
    sentence, count = sentences.most_common(1)[0] if sentences else ("", 0)
    share = count * len(TOKEN.findall(sentence)) / words if count > 1 else 0.0
    size = 2 * LOOP_RUN if language in CHARACTER_LANGUAGES else LOOP_RUN
    runs = words - size + 1
    # A run that repeats starts with a shingle that repeats (shingles are no longer than runs): p.repeats bounds it.
    if runs < MIN_WORDS or p.repeats < least * runs:
        return share, count, sentence, 0.0, ""
    counted = Counter(zip(*(tokens[i:] for i in range(size))))
    loop = (runs - len(counted)) / runs
    return share, count, sentence, loop, " ".join(counted.most_common(1)[0][0])


def repetition(text: str, language: str = "en") -> str | None:
    """A loop: one sentence making up most of the speech, or runs of words that mostly repeat earlier ones (a
    phrase looping with no sentence end between)."""
    return _repetition(_read(text, language), language)


def _repetition(p: Prepared, language: str) -> str | None:
    share, count, sentence, loop, phrase = _repeated(p, language, LOOP_SHARE)
    if count >= 3 and share >= REPEAT_SHARE:
        return f"one sentence makes up {share:.0%} of it, said {count} times: {quoted(sentence)}"
    if loop >= LOOP_SHARE:
        return f"{loop:.0%} of it repeats what it already said, in a loop of {quoted(phrase)}"
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
    if not (script == "latin" and _read(text, language).simple):  # an ASCII text's letters are all Latin
        # Latin letters are the most to count and mostly decide nothing: fewer than half the letters in a Latin
        # language's script needs more than MIN_WORDS / 2 of another.
        if script != "latin" or len(_NOT_LATIN.findall(text)) > MIN_WORDS // 2:
            counts = {name: len(pattern.findall(text)) for name, pattern in _SCRIPT_PATTERNS.items()}
            letters = sum(counts.values())
            if letters >= MIN_WORDS and counts[script] < 0.5 * letters:
                other = max(counts, key=counts.__getitem__)
                return f"it is written mostly in {_SCRIPT_NAMES[other]}, where the motion's language is {language!r}"
    if language == "en" and english_share(text) < ENGLISH_SHARE:
        return "it is in Latin letters but not in English, the motion's language"
    return None


def english_share(text: str) -> float:
    """The share of text's words that are English function words (1.0 for a text under MIN_WORDS words)."""
    p = prepared(text, False)
    words = len(p.tokens)
    return p.function / words if words >= MIN_WORDS else 1.0


def word_salad(text: str, language: str = "en") -> str | None:
    """Words without sentences, in a language it can judge (en, zh; others pass): no sentence ends in a long
    stretch, or too few of the language's function words for prose (arena.domain.wordsalad)."""
    return salad(_read(text, language), language)


def check(text: str, *, language: str, budget: int, share: float = MIN_SHARE, prompt: str = "",
          sources: Sources = (), own: Sources = (), order: Sequence[str] = (),
          keys: frozenset[str] = frozenset()) -> Problem | None:
    """The first check the speech fails, in CHECKS' order, or None. budget: the turn's, in the language's unit
    (0: no length check); prompt: what the speaker was asked (its output format's placeholders); sources and
    own: as echo takes them; order: texts among them in the order a match showed them (the motion, then the
    speeches), which a match's next speech reads again with one more: their shingles are gathered once; keys: the
    keys of the match's transcripts, which the echo check refuses as it does those of the prompts."""
    p = _read(text, language)
    detail = _placeholder(p, prompt, language)
    if detail is not None:
        return Problem("placeholder", detail)
    if (detail := _template(p)) is not None:
        return Problem("template", detail)
    if (detail := injection(text, language)) is not None:  # arena.domain.steering: written to the judge
        return Problem("injection", detail)
    seen = _seen(text, language, sources, own, order)  # read once for echo and pasted
    if (detail := _echo(seen, prompt, keys)) is not None:
        return Problem("echo", detail)
    if (detail := _pasted(seen)) is not None:
        return Problem("pasted", detail)
    if (detail := _repetition(p, language)) is not None:
        return Problem("repetition", detail)
    if (detail := language_of(text, language)) is not None:
        return Problem("language", detail)
    if (detail := salad(p, language)) is not None:
        return Problem("word-salad", detail)
    if (detail := too_short(text, budget, language, share)) is not None:
        return Problem("too-short", detail)
    return None


def in_debate(text: str, *, side: str, stage: str, motion: "Motion", shown: Sequence["Speech"], fmt: Format,
              language: str, share: float, prompts: Sequence[str] = (), budget: int | None = None,
              instructions: Sequence[str] | None = None, keys: frozenset[str] = frozenset()) -> Problem | None:
    """check, given what the speaker of (stage, side) was shown: the motion, the turn's title and brief, the
    prompts of its turn (their placeholders), the instructions it was given (the prompts sent before it wrote a
    draft of the speech, which no draft is in yet: arena.match.protocol.AgentLog.instructions; default: the
    first of prompts), the other side's speeches; its own earlier speeches are its own words, unless it is
    nearly all one of them again or it pastes them with the rest of what it was shown. budget: what the speaker
    was asked for, if not the turn's; a turn's own min_share overrides share; keys: every key of the match's
    transcripts (arena.domain.transcript.match_keys), none of which a speech may hold. The protocol and the web
    (arena.match.turns) both ask this."""
    turn = fmt.turn(stage, side)
    stated = "\n".join((motion.text, motion.pro_text, motion.con_text, motion.info_slide))
    sources = [("the motion", stated), (BRIEF, f"{turn.title_in(language)}\n{turn.brief_in(language)}")]
    given = list(prompts[:1] if instructions is None else instructions)
    sources += [(PROMPT, "\n\n".join(given))] if given else []
    sources += [(f"{s.side.upper()}'s {fmt.label(s.stage)}", s.text) for s in shown if s.side != side]
    return check(text, language=language, budget=budget or turn.budget(language)[0],
                 share=share if turn.min_share is None else turn.min_share, prompt="\n".join(prompts),
                 sources=sources, own=[(f"its own {fmt.label(s.stage)}", s.text) for s in shown if s.side == side],
                 order=(stated, *(s.text for s in shown)), keys=keys)


def match_problems(match: "Match", fmt: Format, share: float = MIN_SHARE,
                   prompts: Mapping[tuple[str, str], Sequence[str]] | None = None,
                   budgets: Mapping[tuple[str, str], int] | None = None) -> list[tuple["Speech", Problem]]:
    """Each speech of a stored or imported match that fails a check, with what it was shown: the speeches
    before it in the match's order, but those of its own stage when that stage's turns are blind, and, when
    given, the prompts of its turn and the budget its speaker was asked for, by (stage, side). Each text is
    prepared once (arena.domain.speechtext.prepared keeps it) however many later speeches read it."""
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


@lru_cache(maxsize=64)
def _tokens(text: str) -> tuple[str, ...]:
    """Lower-cased words, each CJK character a token of its own, as a speech's length counts them (and the web
    page's counter, which must agree): the text as written, not normalised."""
    return tuple(_TOKEN.findall(text.lower()))


_TOKEN = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]|[^\W_]+", re.UNICODE)


@lru_cache(maxsize=16)  # the placeholder and template checks read the same text's
def _brackets(text: str) -> tuple[re.Match[str], ...]:
    """Each [...] or 【...】 of text, a line's at most."""
    return tuple(_BRACKETED.finditer(text)) if "[" in text or "【" in text else ()


def _is_markup(span: str) -> bool:
    """<b>, <br/>, </p>: HTML a speech may carry, not a placeholder."""
    return span.strip("<>/ ").lower() in _HTML
