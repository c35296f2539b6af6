"""Named, swappable components: built-in kinds by import path, plus plug-ins by entry point."""
from __future__ import annotations

import importlib
from importlib.metadata import EntryPoint, entry_points
from typing import Any

from arena.base.errors import UserError


class Registry:
    """Kinds of one family (debaters, judges), found by name.

    Built-ins are import paths ("package.module:Class"), loaded on first use so that naming a
    kind costs nothing; third parties add kinds through the entry-point group. The name a kind
    is registered under is its only spelling: a kind learns it from the spec it is built from
    (an entry's `debater`, a judge's `kind`). A plug-in may not take a built-in's name.
    """

    def __init__(self, family: str, group: str, builtins: dict[str, str]):
        self.family, self.group, self.builtins = family, group, dict(builtins)

    def _plugins(self) -> dict[str, EntryPoint]:
        plugins = {ep.name: ep for ep in entry_points(group=self.group)}
        for name in sorted(set(plugins) & set(self.builtins)):
            ep = plugins[name]
            source = f"{ep.value}" + (f" from the distribution {ep.dist.name!r}" if ep.dist is not None else "")
            raise UserError(f"the plug-in {self.family} kind {name!r} ({source}, entry-point group {self.group}) "
                            f"has the name of the built-in {self.family} kind {name!r} ({self.builtins[name]}); "
                            "rename the plug-in's entry point")
        return plugins

    def names(self) -> list[str]:
        return sorted({*self.builtins, *self._plugins()})

    def has(self, name: str) -> bool:
        return name in self.names()

    def source(self, name: str) -> str:
        """Where a kind comes from: 'built-in' or the plug-in's entry point ('module:attr')."""
        return "built-in" if name in self.builtins else self._plugins()[name].value

    def get(self, name: str) -> Any:
        plugins = self._plugins()  # checked first, so a shadowing plug-in is refused even for a built-in's name
        if name in self.builtins:
            module, _, attr = self.builtins[name].partition(":")
            return getattr(importlib.import_module(module), attr)
        if name not in plugins:
            raise UserError(f"unknown {self.family} kind {name!r}; known: {', '.join(self.names())}")
        return plugins[name].load()
