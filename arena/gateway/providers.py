"""The provider prefixes a model string may start with: litellm's providers and our offline/, checked when arena.toml
is read or a model is added, so a misspelt provider is named at the door rather than by a failed call.

Reading arena.toml must not import litellm (seconds), so the common providers are known by heart and the rest are
read from litellm's source, where its LlmProviders enum lists them, without importing it.
"""
from __future__ import annotations

import ast
import difflib
import functools
import importlib.util
from pathlib import Path

# The simulator's prefix (arena.gateway.offline): here, below the records that re-export it, so that deriving a model's
# family (arena.domain.families) can read it and the records can derive families.
OFFLINE_PREFIX = "offline/"
SIMULATOR = OFFLINE_PREFIX.rstrip("/")
# By convention people's entries and judges name their model human/NAME: no model is called for them.
PEOPLE = "human"
# Providers most arena.toml files name, each in litellm's list (a test checks): known without reading litellm.
COMMON = frozenset({"openai", "anthropic", "gemini", "vertex_ai", "azure", "bedrock", "mistral", "deepseek", "groq",
                    "together_ai", "openrouter", "ollama", "ollama_chat", "hosted_vllm", "xai", "cohere",
                    "fireworks_ai", "huggingface", "perplexity", "lm_studio", "llamafile", "dashscope", "moonshot"})


def unknown_provider(model: str) -> str | None:
    """What is wrong with model's provider prefix (the part before the first '/'), or None when it has none or a
    known one. A model without a prefix is left to litellm, which infers the provider of names it knows."""
    prefix, slash, _ = model.partition("/")
    if not slash or prefix in COMMON or prefix in (SIMULATOR, PEOPLE) or prefix in known():
        return None
    close = difflib.get_close_matches(prefix.lower(), sorted(known() | {SIMULATOR}), n=1, cutoff=0.6)
    hint = f"did you mean '{close[0]}/'?" if close else \
        "litellm's providers include openai/, anthropic/, gemini/, ollama/ and hosted_vllm/"
    return (f"unknown provider '{prefix}/' in {model!r}: {hint} (a model is PROVIDER/MODEL, a provider of litellm's "
            f"list; '{OFFLINE_PREFIX}NAME' is the simulator)")


@functools.lru_cache(maxsize=None)
def known() -> frozenset[str]:
    """litellm's providers (its LlmProviders), read from its source; imported only if the source has moved."""
    found = _from_source()
    if found:
        return found
    from arena.gateway.lazy import litellm

    return frozenset(getattr(p, "value", p) for p in litellm().provider_list)


def _from_source() -> frozenset[str]:
    """The string values of litellm's `class LlmProviders` in litellm/types/utils.py; empty if not found there."""
    spec = importlib.util.find_spec("litellm")  # finds the package without running it
    if spec is None or spec.origin is None:
        return frozenset()
    try:
        source = (Path(spec.origin).parent / "types" / "utils.py").read_text(encoding="utf-8")
        start = source.index("\nclass LlmProviders(")
        end = source.find("\nclass ", start + 1)
        tree = ast.parse(source[start:end if end > 0 else None])
    except (OSError, ValueError, SyntaxError):
        return frozenset()
    return frozenset(node.value.value for node in ast.walk(tree)
                     if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
                     and isinstance(node.value.value, str))
