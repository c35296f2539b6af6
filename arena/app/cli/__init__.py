"""The `arena` command line (pyproject's script `arena = "arena.app.cli:main"`): its root group is
arena.app.cli.main's, each command group a module beside it."""
from arena.app.cli.main import ArenaGroup, main

__all__ = ["ArenaGroup", "main"]
