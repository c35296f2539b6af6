"""Errors the CLI maps to exit codes: a user's mistake is 2, anything else 1."""


class UserError(Exception):
    """Bad input from the user (config, data file, CLI value): exit status 2, nothing written.

    The message names the file, line or key and what is wrong.
    """


class ArenaError(Exception):
    """A failure that is not the user's input (a model that keeps failing, a broken store): exit 1."""
