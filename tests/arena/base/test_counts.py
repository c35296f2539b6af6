"""Counts in messages agree with their nouns ("1 match", "2 matches"): the one rule, arena.base.errors.plural, and
a scan of the code that prints (the program, the rules of the debate, the kinds, the motion loader) for a count
written before a plural noun by hand, which says "1 matches" the day the count is 1."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from arena.base.errors import plural

ROOT = Path(__file__).resolve().parents[3]
# What the command line and its runs print, and the messages of what they call. Not arena/opendata: the export's
# datacard is a document ("0 of 9 matches are done") whose counts are phrased as a whole.
SCANNED = ("arena/app", "arena/domain", "debaters", "judges", "motions")
# Nouns the arena counts in its messages. A noun not listed is not checked: the list errs towards no false alarm.
NOUNS = {"matches", "calls", "entries", "speeches", "judges", "runs", "motions", "verdicts", "ballots", "debates",
         "models", "pairs", "people", "turns", "votes", "debaters", "searches", "rows", "workers", "snapshots"}
_NOUN_AFTER = re.compile(r" ([a-z]+)\b(?!')")  # "{n} matches", not "{x} people's"


def counted_by_hand(source: str) -> list[tuple[int, str]]:
    """(line, text) of each f-string part "{COUNT} NOUNS" with NOUNS in NOUNS, where COUNT may be a count: not a
    float's format ({x:.1f}), not a constant (MAX_MATCHES, a limit, is plural), not a call but len() (a join or
    a function's text)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.JoinedStr):
            continue
        for value, text in zip(node.values, node.values[1:]):
            if not (isinstance(value, ast.FormattedValue) and isinstance(text, ast.Constant)):
                continue
            noun = _NOUN_AFTER.match(text.value)
            spec = "".join(part.value for part in getattr(value.format_spec, "values", [])
                           if isinstance(part, ast.Constant))
            expression = value.value
            if (noun is None or noun.group(1) not in NOUNS or spec.endswith(("f", "g", "e", "%"))
                    or re.fullmatch(r"[\w.]*\b[A-Z][A-Z0-9_]+", ast.unparse(expression))
                    or (isinstance(expression, ast.Call) and ast.unparse(expression.func) != "len")):
                continue
            found.append((value.lineno, f"{{{ast.unparse(expression)}}}{text.value[:30]}"))
    return found


def test_no_message_counts_a_plural_noun_by_hand():
    hand = [f"{path.relative_to(ROOT)}:{line}: {text}"
            for folder in SCANNED for path in sorted((ROOT / folder).rglob("*.py"))
            for line, text in counted_by_hand(path.read_text(encoding="utf-8"))]
    assert not hand, "say these counts with arena.base.errors.plural (it says '1 match'):\n" + "\n".join(hand)


@pytest.mark.parametrize("source, flagged", [
    ('f"{n} matches"', True),
    ('f"after {len(done)} matches"', True),
    ('f"{snapshot[\'matches\']} matches (the last)"', True),
    ('f"{2 * k} matches"', True),
    ('f"{size:,} matches"', True),
    ('f"{plural(n, \'match\')} done"', False),
    ('f"{per:.1f} calls"', False),  # a mean: "1.0 calls"
    ('f"at most {MAX_PLAN_MATCHES:,} matches"', False),  # a limit
    ('f"{\' or \'.join(missing)} motions"', False),  # words, not a count
    ('f"{n} match(es)"', False),  # a noun the scan does not know: not its business
    ('f"{what} people\'s speeches"', False),
])
def test_the_scan_flags_counts_and_only_counts(source, flagged):
    assert bool(counted_by_hand(source)) is flagged


@pytest.mark.parametrize("count, noun, nouns, said", [
    (1, "round-robin match", None, "1 round-robin match"),
    (0, "entry", None, "0 entries"),
    (2, "tavily search", None, "2 tavily searches"),
    (1, "person", "people", "1 person"),
    (3, "person", "people", "3 people"),
])
def test_plural(count, noun, nouns, said):
    assert plural(count, noun, nouns) == said
