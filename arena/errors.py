"""Errors the CLI maps to exit codes: a user's mistake is 2, anything else 1."""


class UserError(Exception):
    """Bad input from the user (config, data file, CLI value): exit status 2, nothing written.

    The message names the file, line or key and what is wrong.
    """


class ArenaError(Exception):
    """A failure that is not the user's input (a model that keeps failing, a broken store): exit 1."""


def read_user_text(path, what: str = "file") -> str:
    """A user's UTF-8 text file; a missing, unreadable or non-UTF-8 file is a UserError naming it."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UserError(f"{path}: no such {what}") from None
    except UnicodeDecodeError as e:
        raise UserError(f"{path}: not valid UTF-8 ({e.reason} at byte {e.start})") from None
    except OSError as e:
        raise UserError(f"{path}: cannot read{'' if what == 'file' else ' ' + what}: {e.strerror or e}") from None
