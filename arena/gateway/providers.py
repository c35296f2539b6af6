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
# The variables each common provider's calls read, as litellm's validate_environment has them (a test checks each
# against it), so that a missing key is named before litellm is imported (seconds): per provider, each variable
# it needs as (the name said, the names any one of which will do). Not here (litellm is asked): providers whose
# needs depend on more than one variable together (azure, vertex_ai, bedrock) or that litellm places otherwise.
KEYS: dict[str, tuple[tuple[str, tuple[str, ...]], ...]] = {
    "openai": (("OPENAI_API_KEY", ("OPENAI_API_KEY",)),),
    "anthropic": (("ANTHROPIC_API_KEY", ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")),),
    "gemini": (("GEMINI_API_KEY or GOOGLE_API_KEY", ("GEMINI_API_KEY", "GOOGLE_API_KEY")),),
    "mistral": (("MISTRAL_API_KEY", ("MISTRAL_API_KEY",)),),
    "deepseek": (("DEEPSEEK_API_KEY", ("DEEPSEEK_API_KEY",)),),
    "groq": (("GROQ_API_KEY", ("GROQ_API_KEY",)),),
    "together_ai": (("TOGETHERAI_API_KEY", ("TOGETHERAI_API_KEY",)),),
    "openrouter": (("OPENROUTER_API_KEY", ("OPENROUTER_API_KEY",)),),
    "xai": (("XAI_API_KEY", ("XAI_API_KEY",)),),
    "cohere": (("COHERE_API_KEY", ("COHERE_API_KEY",)),),
    "fireworks_ai": (("FIREWORKS_AI_API_KEY", ("FIREWORKS_AI_API_KEY", "FIREWORKS_API_KEY", "FIREWORKSAI_API_KEY",
                                               "FIREWORKS_AI_TOKEN")),),
    "perplexity": (("PERPLEXITYAI_API_KEY", ("PERPLEXITYAI_API_KEY",)),),
    "huggingface": (("HUGGINGFACE_API_KEY", ("HUGGINGFACE_API_KEY",)),),
    "dashscope": (("DASHSCOPE_API_KEY", ("DASHSCOPE_API_KEY",)),),
    "moonshot": (("MOONSHOT_API_KEY", ("MOONSHOT_API_KEY",)),),
    "cerebras": (("CEREBRAS_API_KEY", ("CEREBRAS_API_KEY",)),),
    "deepinfra": (("DEEPINFRA_API_KEY", ("DEEPINFRA_API_KEY",)),),
    "ollama": (("OLLAMA_API_BASE", ("OLLAMA_API_BASE",)),),  # not a key: where the server is, unless api_base says
    "ollama_chat": (("OLLAMA_API_BASE", ("OLLAMA_API_BASE",)),),
    "hosted_vllm": (), "lm_studio": (), "llamafile": (),  # servers of one's own: no key
}


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
