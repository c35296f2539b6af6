"""litellm, imported on first use: seconds that commands without models must not pay."""
from __future__ import annotations

import functools
import logging
import os
from types import ModuleType

# Importing litellm must never fetch its price map over the network.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


@functools.lru_cache(maxsize=None)
def litellm() -> ModuleType:
    """litellm, imported once and quiet: its help texts and its logger's warnings (e.g. about a new event loop)
    are not for our users."""
    import litellm as imported

    imported.suppress_debug_info = True
    module: ModuleType = imported  # untyped to mypy, which does not follow litellm (pyproject.toml)
    logging.getLogger("LiteLLM").setLevel(logging.ERROR)
    return module
