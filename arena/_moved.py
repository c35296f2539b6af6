"""Old import paths of the plug-in contracts, kept working: each name still resolves, with a DeprecationWarning
that names the one module plug-ins import from now (arena.plugins)."""
from __future__ import annotations

import importlib
import warnings
from typing import Any, Callable


def forwarding(old: str, new: str) -> Callable[[str], Any]:
    """A module `__getattr__` for the old path `old`: names are taken from the module `new`, with a warning."""
    def __getattr__(name: str) -> Any:
        target = importlib.import_module(new)
        if not hasattr(target, name):
            raise AttributeError(f"module {old!r} has no attribute {name!r}")
        warnings.warn(f"{old}.{name} moved: import it from arena.plugins (or {new})", DeprecationWarning,
                      stacklevel=2)
        return getattr(target, name)
    return __getattr__
