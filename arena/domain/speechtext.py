"""A speech's text as the speech checks (arena.domain.speechchecks) compare it: normalised once, cut into words and
overlapping word shingles, and kept while a match's later speeches are checked against it.

Normalising is what makes a disguised copy a copy: Unicode NFKC-style compatibility folding (full-width letters,
ligatures, non-breaking and other odd spaces become their plain forms), accents and other combining marks dropped,
invisible characters (zero-width spaces and joiners, soft hyphens) removed, letters of other scripts that look like
Latin ones (Cyrillic а е о с р х у, Greek ο α ρ ...) read as those Latin letters, and case ignored; words are
compared, so any run of spaces, a non-breaking one too, is a word's end. Both sides of a
comparison are normalised alike, so folding a genuine Russian or Greek letter costs nothing.
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

SHINGLE = 4  # words (characters for zh/ja: twice this) in a shingle: short enough that a copy with every 5th word
# changed still shares most of its shingles, long enough that common phrases rarely cover much of a speech

# Look-alikes, lower-cased (text is lower-cased first): what a reader takes each for.
_LOOKALIKES = {
    # Cyrillic
    "а": "a", "в": "b", "е": "e", "ё": "e", "к": "k", "м": "m", "н": "h", "о": "o", "р": "p", "с": "c",
    "т": "t", "у": "y", "х": "x", "ѕ": "s", "і": "i", "ї": "i", "ј": "j", "ԁ": "d", "ԛ": "q", "ԝ": "w", "һ": "h",
    "ӏ": "l", "ɡ": "g", "ү": "y", "ѵ": "v", "ɩ": "i",
    # Greek
    "α": "a", "β": "b", "γ": "y", "ε": "e", "ζ": "z", "η": "n", "ι": "i", "κ": "k", "μ": "m", "ν": "v", "ο": "o",
    "ρ": "p", "τ": "t", "υ": "u", "χ": "x", "ϲ": "c", "ϳ": "j",
    # Latin letters that pass for others, and Armenian's o and u
    "ı": "i", "ȷ": "j", "ɑ": "a", "ɒ": "a", "ɛ": "e", "ɪ": "i", "ʏ": "y", "ᴀ": "a", "ᴄ": "c", "ᴏ": "o", "օ": "o",
    "ս": "u",
}
# Their capitals, which lower-case into the letters above or read as Latin capitals.
_CAPITALS = {"А": "A", "В": "B", "Е": "E", "К": "K", "М": "M", "Н": "H", "О": "O", "Р": "P", "С": "C", "Т": "T",
             "Х": "X", "У": "Y", "Ѕ": "S", "І": "I", "Ј": "J", "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H",
             "Ι": "I", "Κ": "K", "Μ": "M", "Ν": "N", "Ο": "O", "Ρ": "P", "Τ": "T", "Υ": "Y", "Χ": "X"}
_INVISIBLE = "\u00ad\u180e\u200b\u200c\u200d\u200e\u200f\u2060\u2061\u2062\u2063\u2064\ufeff"
_FOLD = str.maketrans({**_LOOKALIKES, **_CAPITALS, **{c: None for c in _INVISIBLE}})
_FOLDED = re.compile("[" + "".join((*_LOOKALIKES, *_CAPITALS, *_INVISIBLE)) + "]")
_MARKS = re.compile(r"[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]")
_DROPPED = re.compile("[" + _INVISIBLE + "\u0130\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]")
# Punctuation that leaves a text's words ASCII: such a text's words are found by the faster pattern.
_NOT_ASCII_WORD = re.compile("[^\x00-\x7f\u2018\u2019\u201c\u201d\u2013\u2014\u2026\u2022\u00b7\u00a7\u2192\u00d7\u00b0"
                             "\u00a3\u20ac\u2212\u2264\u2265\u00a0\u2009\u202f]")
_WORD_BYTES = bytes(c if chr(c).isalnum() and c < 128 else 32 for c in range(256))
# A word: a run of letters and digits; each CJK character (and each Hangul syllable) a word of its own.
TOKEN = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff\uac00-\ud7af]|[^\W_]+", re.UNICODE)


def same_words(text: str) -> bool:
    """Whether normalising text keeps its words as they are (letters for letters), so that its words as written
    can be counted from the normalised ones: ASCII, or already NFKC with no marks or invisible characters to drop
    (nor a capital whose lower case carries a mark, the Turkish İ)."""
    return text.isascii() or (unicodedata.is_normalized("NFKC", text) and not _DROPPED.search(text))


@lru_cache(maxsize=64)  # a turn's prompt is read by each of its answers' checks
def plain(text: str) -> str:
    """text as compared, case kept: compatibility forms folded, marks and invisible characters dropped, look-alike
    letters read as Latin, runs of spaces (non-breaking ones too) one space. Line breaks are kept: they end lines,
    which the template and salad checks read."""
    if ascii_words(text):  # most speeches: no letter to fold (and punctuation is no word)
        return text
    text = unicodedata.normalize("NFKD", text)  # a non-breaking space is a space, a ligature its letters
    text = unicodedata.normalize("NFC", _MARKS.sub("", text))  # NFC recomposes what NFKD took apart (Hangul)
    return text.translate(_FOLD) if _FOLDED.search(text) else text


def normal(text: str) -> str:
    """plain(text), lower-cased, look-alikes folded again (a capital's lower case may be one)."""
    lower = plain(text).lower()
    return lower.translate(_FOLD) if not lower.isascii() and _FOLDED.search(lower) else lower


# English's function words: prose has many of them (arena.domain.wordsalad), a text in another language few.
FUNCTION_WORDS = frozenset("""a an the this that these those my your his her its our their some any no every each all
both of to in on at by for with from into onto about over under between through during without within against among
and or but nor so yet if because although though while when where whether than as since unless until i you he she
it we they me him us them who whom whose which what is are was were be been being am do does did have has had will
would shall should can could may might must not there here also very more most just only even then too such how
why""".split())


@dataclass(frozen=True)
class Prepared:
    """One text, normalised, its words, and its shingles: runs of SHINGLE words (2 × SHINGLE characters in a
    character language), each kept as its hash: sets of ints intersect fast."""

    plain: str  # normalised, case kept (what a check quotes)
    text: str  # normalised and lower-cased
    simple: bool  # its letters and digits all ASCII (ascii_words)
    tokens: tuple[str, ...]  # its words, each CJK character one
    function: int  # how many of its tokens are English function words
    size: int  # of a shingle, in words
    shingles: tuple[int, ...]  # in order, one starting at each token but the last size - 1
    shingle_set: frozenset[int]

    @property
    def repeats(self) -> int:
        """How many of its shingles repeat an earlier one."""
        return len(self.shingles) - len(self.shingle_set)

    @property
    def extent(self) -> int:
        """The words its shingles span."""
        return len(self.shingles) + self.size - 1 if self.shingles else 0

    def seen(self, found: frozenset[int] | set[int]) -> int:
        """At least how many of its shingles are in found, counting repeats: a bound for share and runs."""
        return len(found) + self.repeats


@lru_cache(maxsize=64)  # a match's speeches are read again by every later speech's checks, its motion by all
def prepared(text: str, characters: bool) -> Prepared:
    """text prepared for comparing; characters: in a language written without spaces (zh, ja), whose every
    character is a word."""
    simple = ascii_words(text)
    kept = text if simple else plain(text)
    norm = kept.lower() if simple else normal(text)
    # An ASCII text's words, found faster than by the pattern: every byte that is no letter or digit a space.
    tokens = tuple(norm.encode("ascii", "replace").translate(_WORD_BYTES).decode("ascii").split() if simple
                   else TOKEN.findall(norm))
    size = 2 * SHINGLE if characters else SHINGLE
    shingles = tuple(map(hash, zip(*(tokens[i:] for i in range(size)))))
    return Prepared(kept, norm, simple, tokens, 0 if characters else sum(map(FUNCTION_WORDS.__contains__, tokens)),
                    size, shingles, frozenset(shingles))


@lru_cache(maxsize=64)
def runs(text: str, characters: bool) -> tuple[tuple[int, ...], frozenset[int]]:
    """text's runs of twice a shingle's words, in order and as a set: two shingles, the second starting where the
    first ends (a run is found in a text only where both its halves are)."""
    p = prepared(text, characters)
    ordered = tuple(map(hash, zip(p.shingles, p.shingles[p.size:])))
    return ordered, frozenset(ordered)


def ascii_words(text: str) -> bool:
    """Whether every letter and digit of text is ASCII, its other characters ASCII or common punctuation (curly
    quotes, dashes, an ellipsis): a text with nothing to fold, whose words are ASCII."""
    return text.isascii() or not _NOT_ASCII_WORD.search(text)


def coverage(shingles: tuple[int, ...], found: frozenset[int] | set[int], size: int) -> float:
    """The share of a text's words inside at least one of its shingles that is in found: a copy with a word
    changed here and there keeps the words between the changes covered."""
    if not shingles or not found:
        return 0.0
    covered, end = 0, 0  # end: the word after the last one covered so far
    for i, shingle in enumerate(shingles):
        if shingle in found:
            covered += i + size - max(end, i)
            end = i + size
    return covered / (len(shingles) + size - 1)


DRIFT = 3  # words a copy's alignment may shift by (a word added or dropped) and still be the same copy
LONG = 16  # words an aligned stretch spans at least to count as copied: longer than a shared stock phrase


def aligned(shingles: tuple[int, ...], found: frozenset[int] | set[int], source: tuple[int, ...],
            size: int) -> set[int]:
    """The positions of a text's words copied from source in order: inside shingles found in source that follow
    one another at (nearly) the same distance in both, in stretches spanning LONG words or more. A copy with a
    word changed here and there is one stretch; a text that only shares stock phrases with source (each phrase
    found somewhere else in it) has none."""
    where: dict[int, list[int]] = {}
    for j, shingle in enumerate(source):
        if shingle in found:
            where.setdefault(shingle, []).append(j)
    out: set[int] = set()
    chain: list[int] = []
    offset, last = 0, -LONG

    def close() -> None:
        if chain and chain[-1] + size - chain[0] >= LONG:
            out.update(k for i in chain for k in range(i, i + size))

    for i, shingle in enumerate(shingles):
        if shingle not in found or shingle not in where:
            continue
        near = min(where[shingle], key=lambda j: abs(j - i - offset))
        if chain and abs(near - i - offset) <= DRIFT and i - last <= size + DRIFT:
            chain.append(i)
        else:
            close()
            chain = [i]
        offset, last = near - i, i
    close()
    return out


def share(ordered: tuple[int, ...], found: frozenset[int] | set[int]) -> float:
    """The share of ordered (shingles or runs, repeats counted) in found."""
    return sum(map(found.__contains__, ordered)) / len(ordered) if ordered else 0.0


def quoted(text: str, most: int = 80) -> str:
    """text as a check's reason quotes it: on one line, in single quotes, cut to most characters."""
    text = " ".join(text.split())
    return "'" + (text if len(text) <= most else text[:most - 1] + "…") + "'"
