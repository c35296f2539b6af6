"""What a terminal is shown of a text from elsewhere (arena.base.terminal): every control character but newline and
tab as its escape, and nothing else changed."""
from __future__ import annotations

from arena.base.terminal import one_line, shown


def test_each_control_character_but_newline_and_tab_is_shown_as_its_escape():
    assert shown("\x1b]0;pwned\x07") == "\\x1b]0;pwned\\x07"  # a window title
    assert shown("\x1b[2J\x1b[H") == "\\x1b[2J\\x1b[H"  # the screen cleared
    assert shown("ok\rEVIL") == "ok\\x0dEVIL"  # a line written over
    assert shown("\x00\x08\x7f") == "\\x00\\x08\\x7f"  # NUL, backspace, DEL
    assert shown("\x85\x9b31m\x9c") == "\\x85\\x9b31m\\x9c"  # C1: NEL, CSI, ST as single code points
    assert shown("a\u202eb\u2066c\u2069") == "a\\u202eb\\u2066c\\u2069"  # bidi override and isolates
    assert shown("line\n\tindented") == "line\n\tindented"


def test_ordinary_text_of_any_script_is_left_as_it_is():
    text = "Les écoles — 学校应该 «ok» \u00a0naïve 🙂 \\x1b written out, [2J, ^[ and all"
    assert shown(text) == text
    assert shown(shown("\x1b\r\x9b")) == shown("\x1b\r\x9b")  # shown twice is shown once


def test_a_windows_line_end_is_a_newline_and_a_lone_cr_is_shown():
    assert shown("one\r\ntwo\rthree") == "one\ntwo\\x0dthree"


def test_one_line_escapes_and_joins_the_lines():
    assert one_line("  failed:\n\x1b[2J  now\t\r\n") == "failed: \\x1b[2J now"
    assert one_line("\x1c\x1d\x1e\x1f\x85") == "\\x1c\\x1d\\x1e\\x1f\\x85"  # whitespace to str.split, controls here
