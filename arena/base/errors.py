"""Errors the CLI maps to exit codes: a user's mistake is 2, anything else 1."""

from pathlib import Path

from arena.base.limits import MAX_DATA_FILE_BYTES


class UserError(Exception):
    """Bad input from the user (config, data file, CLI value): exit status 2, nothing written.

    The message names the file, line or key and what is wrong.
    """


class ArenaError(Exception):
    """A failure that is not the user's input (a model that keeps failing, a broken store): exit 1."""


def plural(count: int, noun: str, nouns: str | None = None) -> str:
    """How messages count things: '1 match', '2 matches', '0 entries' (nouns: a plural English does not make
    by -s, -es or -y → -ies)."""
    if count == 1:
        return f"1 {noun}"
    if nouns is None:
        nouns = (noun[:-1] + "ies" if noun.endswith("y") and noun[-2:-1] not in tuple("aeiou")
                 else noun + ("es" if noun.endswith(("s", "sh", "ch", "x")) else "s"))
    return f"{count:,} {nouns}"


def read_user_text(path: Path, what: str = "file", limit: int = MAX_DATA_FILE_BYTES) -> str:
    """A user's UTF-8 text file of at most limit bytes; a missing, unreadable, larger or non-UTF-8 file is a
    UserError naming it."""
    check_size(path, what, limit)
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UserError(f"{path}: no such {what}") from None
    except UnicodeDecodeError as e:
        raise UserError(f"{path}: not valid UTF-8 ({e.reason} at byte {e.start})") from None
    except OSError as e:
        raise UserError(f"{path}: cannot read{'' if what == 'file' else ' ' + what}: {e.strerror or e}") from None


def check_size(path: Path, what: str, limit: int) -> None:
    """A UserError naming path when the file holds more than limit bytes, told by its size before it is read."""
    try:
        size = path.stat().st_size
    except OSError:
        return  # reading it says what is wrong
    if size > limit:
        raise UserError(f"{path}: {size:,} bytes; a {what} may hold at most {limit:,} bytes (see Limits in "
                        "docs/reference/index.md)")
