"""What a terminal is shown of a text that came from elsewhere — a speech, a rationale, a server's error, a name: the
one rule, which the command line's output (arena.app.cli.common.echo) and the run's progress display apply.

A terminal obeys the control characters it is sent: ESC starts sequences that set the window's title, clear the
screen or move the cursor, a carriage return goes back over the line, and C1 controls (U+0080–U+009F) are read as
ESC sequences by some terminals. So every control character but newline and tab — C0 (U+0000–U+001F), DEL (U+007F)
and C1 — and the bidirectional overrides and isolates (U+202A–U+202E, U+2066–U+2069, which reorder what follows
them on screen) are shown as their escape, as Python writes it: ESC as `\\x1b`, CR as `\\x0d`, U+202E as `\\u202e`.
A carriage return right before a newline (a Windows line end) is dropped: it cannot write over anything.
Machine-readable output (JSON, CSV) is not passed through here: it carries the exact text, and its format escapes
or quotes what it holds.
"""
from __future__ import annotations

import re
import sys

# C0 but tab and newline, DEL and C1, the bidi overrides and isolates; a CR that ends a line is taken with its LF.
_CONTROL = re.compile(r"\r\n|[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _escape(found: re.Match[str]) -> str:
    c = found.group()
    return "\n" if c == "\r\n" else f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}"


def shown(text: str) -> str:
    """text as a terminal may be sent it: each control character but newline and tab written as its escape."""
    return _CONTROL.sub(_escape, text)


def one_line(text: str) -> str:
    """shown(text) on one line: each run of whitespace, newlines and tabs among it, one space."""
    return " ".join(shown(text).split())


def say(line: str) -> None:
    """A line on stderr as a terminal may be sent it: what a command tells as it goes, when its caller gave no
    listener of its own."""
    print(shown(line), file=sys.stderr, flush=True)
