"""Named, swappable components: built-in kinds by import path, plus plug-ins by entry point."""
from __future__ import annotations

import importlib
from importlib.metadata import entry_points
from typing import Any

from arena.errors import UserError


class Registry:
    """Kinds of one family (debaters, judges), found by name.

    Built-ins are import paths ("package.module:Class"), loaded on first use so that naming a
    kind costs nothing; third parties add kinds through the entry-point group.
    """

    def __init__(self, family: str, group: str, builtins: dict[str, str]):
        self.family, self.group, self.builtins = family, group, dict(builtins)

    def _plugins(self) -> dict[str, Any]:
        return {ep.name: ep for ep in entry_points(group=self.group)}

    def names(self) -> list[str]:
        return sorted({*self.builtins, *self._plugins()})

    def has(self, name: str) -> bool:
        return name in self.builtins or name in self._plugins()

    def get(self, name: str) -> Any:
        if name in self.builtins:
            module, _, attr = self.builtins[name].partition(":")
            return getattr(importlib.import_module(module), attr)
        plugin = self._plugins().get(name)
        if plugin is None:
            raise UserError(f"unknown {self.family} kind {name!r}; known: {', '.join(self.names())}")
        return plugin.load()
