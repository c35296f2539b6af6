"""A workspace: a folder holding arena.toml (settings and the registry) and arena.db (history)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from arena.config import CONFIG_NAME, Config, parse_config
from arena.errors import UserError
from arena.store import DB_NAME, Store

TEMPLATE = '''\
# Debate Arena workspace. Keys and meanings: see the README ("arena.toml").
# API keys never go here: they come from the environment (OPENAI_API_KEY, TAVILY_API_KEY, ...).

[arena]
language = "en"            # language of speeches and prompts ("en", "zh", ...)
seed = 0                   # seeds scheduling and the offline simulator
judge_runs = 3             # default R: runs per judge per match

[llm]
max_concurrency = 16       # concurrent LLM calls per model
retries = 4                # retries on rate limits, 5xx and timeouts (exponential backoff with jitter)
timeout_s = 120
cache = true               # reuse identical LLM and search responses: a rerun never pays twice

[search]
provider = "tavily"        # "tavily" | "offline"
api_base_url = ""          # optional, e.g. a proxy or a local server
max_results = 5

[motions]
sets = ["builtin:en"]      # built-in sets and/or "file:path.yaml"

# One [[entries]] table per registered debater entry, for example:
# [[entries]]
# name = "direct-gpt-4o"
# debater = "direct"       # a debater kind: direct | human | plug-in
# model = "openai/gpt-4o"  # any litellm model string; "offline/<name>" is the simulator
# api_base = ""            # optional, e.g. "http://127.0.0.1:8000/v1" for a local server
# strength = 0.0           # offline models only: planted strength (logit scale)
# [entries.params]         # passed to the debater kind (sampling, caps, ...)
# temperature = 0.2
# top_p = 0.75

# One [[judges]] table per judge, for example:
# [[judges]]
# name = "single-mini"
# kind = "single"          # a judge kind: single | plug-in
# model = "openai/gpt-4o-mini"
# runs = 3
# [judges.options]         # kind-specific options
# swap_sides = true        # odd runs read the transcript with PRO and CON relabelled
'''


@dataclass
class Workspace:
    path: Path
    config: Config
    store: Store

    def close(self) -> None:
        self.store.close()


def init_workspace(path: Path, config_text: str = TEMPLATE) -> Path:
    """Create path/arena.toml and path/arena.db; refuse to overwrite an existing workspace."""
    path = Path(path)
    config_path = path / CONFIG_NAME
    if config_path.exists():
        raise UserError(f"{config_path}: already exists; this folder is a workspace already")
    parse_config(config_text, config_path)  # a template that does not parse is a bug; fail before writing
    path.mkdir(parents=True, exist_ok=True)
    config_path.write_text(config_text, encoding="utf-8")
    Store(path / DB_NAME).close()
    return config_path
