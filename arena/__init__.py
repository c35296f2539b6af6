"""Debate Arena's kernel, and the door of its Python API: `arena.open(DIR)`.

`import arena` costs nothing beyond this file: open imports the app layer and pandas when it is called."""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # for annotations alone
    from os import PathLike

    from arena.app.notebook import Arena


def open(path: str | PathLike[str]) -> Arena:  # noqa: A001 (arena.open, as INTERFACE.md names it)
    """Open the workspace in the folder path for Python: an arena.app.notebook.Arena, whose methods run the commands
    and return DataFrames where a table is the result (docs/reference/api.md). A folder that is no workspace raises
    arena.base.errors.UserError, with the message `arena` exits 2 with; close it, or use it in a `with` block."""
    from arena.app.notebook import Arena

    return Arena(path)
