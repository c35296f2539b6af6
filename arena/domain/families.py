"""A model's family, from its litellm model string: who made the model, for an open one the maker of its base.

A jury (judges/jury.py) seats no model of either debater's family, since a model judging its own kind is the
self-preference a jury is there to avoid; `arena entry list` and `arena check` show each model's family, and an
[[entries]] or [[judges]] table's `family = "..."` overrides what is derived here.

family_of reads the string in four steps:
1. `offline/NAME` is the simulator: its family is `offline/name`, so that every simulated model is its own family
   (the demo's entries and judges never share one); but `offline/PROVIDER/MODEL` stands in for that real model
   and takes its family, as `arena run --dry-run`'s stand-ins do, so a simulated jury draws as the real one would.
2. The provider prefix litellm routes by is dropped when it is one (openrouter/, ollama/, hosted_vllm/, bedrock/,
   azure/, ...): it says where the model runs, not what it is. What follows is the provider's own model id, often
   ORG/NAME (openrouter/anthropic/claude-3.5-sonnet, hosted_vllm/Qwen/Qwen2.5-7B-Instruct).
3. The id is matched, lower-cased, against FAMILIES in order; the first pattern found anywhere in it names the
   family. Open base models come first, so a fine-tune or a distillation that names its base takes the base's
   family (Llama-3.1-Nemotron-70B is meta, DeepSeek-R1-Distill-Qwen-7B is qwen); then the hosted vendors' names.
4. Nothing matched: a vendor's own API (anthropic/, gemini/, mistral/, ...) is that vendor's (VENDOR_ROUTES);
   otherwise the family is the id's first path segment, lower-cased and without an Ollama-style `:tag`: an org on
   a Hugging Face-style id (`nousresearch` of NousResearch/Hermes-3), else the model's own name. openai/ and
   azure/ are no vendor here: openai/ is also litellm's route to any OpenAI-compatible server (`openai/NAME` with
   an api_base), and an Azure deployment is named by its owner. Such a family is only guessed (guessed): a jury that
   seats by it may seat a model of a debater's own family, so `arena check` and `arena entry list` say so where a
   jury relies on it, and of a declared family the table says otherwise of (override_note; arena.app.runner.juries).
"""
from __future__ import annotations

import functools
import re

from arena.gateway.providers import COMMON, OFFLINE_PREFIX, PEOPLE, known

# (pattern, family): searched in order in the lower-cased model id; \b keeps a short name from matching inside
# another word (o1 is OpenAI's, "proto1" is not).
FAMILIES: tuple[tuple[str, str], ...] = (
    # Open base models: a derivative names its base.
    (r"llama", "meta"),  # Llama, Code Llama, Meta-Llama-3.1, fine-tunes on Llama
    (r"qwen|qwq|qvq", "qwen"),
    (r"gemma", "google"),
    (r"mistral|mixtral|ministral|codestral|pixtral|magistral|devstral|mathstral", "mistral"),
    (r"\bphi-?\d", "microsoft"),
    (r"smollm", "huggingface"),
    (r"gpt-?j\b|gpt-?neo|pythia", "eleutherai"),
    (r"\bolmo", "allenai"),
    (r"falcon", "tii"),
    (r"granite", "ibm"),
    (r"starcoder", "bigcode"),
    (r"stablelm", "stability"),
    # Hosted vendors and their own open models.
    (r"gpt|\bo[134]\b|davinci|babbage", "openai"),  # gpt-4o, chatgpt-4o-latest, gpt-oss, o1, o3-mini, o4-mini
    (r"claude", "anthropic"),
    (r"gemini|bison", "google"),  # bison: PaLM 2's chat-bison and text-bison
    (r"deepseek", "deepseek"),
    (r"grok", "xai"),
    (r"\bcommand\b|\baya\b|cohere|c4ai", "cohere"),
    (r"nemotron", "nvidia"),
    (r"\byi-", "01-ai"),
    (r"glm", "zhipu"),
    (r"kimi|moonshot", "moonshot"),
    (r"jamba|\bj2-", "ai21"),
    (r"dbrx", "databricks"),
    (r"\bnova\b|\btitan\b", "amazon"),
    (r"\bsonar", "perplexity"),
    (r"minimax|abab", "minimax"),
    (r"\bernie", "baidu"),
    (r"hunyuan", "tencent"),
    (r"doubao", "bytedance"),
    (r"internlm", "internlm"),
)
_PATTERNS = tuple((re.compile(pattern), family) for pattern, family in FAMILIES)

# A provider that is one vendor's own API: its models are that vendor's whatever they are called.
VENDOR_ROUTES = {"anthropic": "anthropic", "gemini": "google", "palm": "google", "mistral": "mistral",
                 "codestral": "mistral", "text-completion-codestral": "mistral", "deepseek": "deepseek",
                 "xai": "xai", "cohere": "cohere", "cohere_chat": "cohere", "dashscope": "qwen",
                 "moonshot": "moonshot", "perplexity": "perplexity", "ai21": "ai21", "ai21_chat": "ai21"}


KNOWN, GUESSED, OWN = "known", "guessed", "own"  # how a family was found: the table, the name alone, by convention


def family_of(model: str) -> str:
    """The family of a litellm model string, lower-cased (see the module's docstring for how it is read)."""
    return _derived(model)[0]


def known_family(model: str) -> str | None:
    """The family the table (FAMILIES, VENDOR_ROUTES) gives the model, None where it knows no such model: a family
    only guessed from the name (step 4's last resort), the simulator's own (offline/NAME) or a person's."""
    family, how = _derived(model)
    return family if how == KNOWN else None


def guessed(model: str) -> bool:
    """Whether the model's family is only guessed from its name (step 4's last resort): `openai/my-finetune` is
    `my-finetune`, `azure/prod-eu` is `prod-eu`, whatever models they are."""
    return _derived(model)[1] == GUESSED


def override_note(model: str, declared: str) -> str:
    """What is wrong with arena.toml's `family = declared` for model, "" if nothing: a family the table says
    otherwise of (it knows the model)."""
    known = known_family(model)
    if known is None or declared == known:
        return ""
    return (f"declared family {declared!r} contradicts the family table, which makes {model} {known!r} "
            f"(arena.domain.families); a jury seats by the declared one")


def guessed_note(model: str) -> str:
    """What to say of a model whose family is only guessed from its name, "" if it is not."""
    if not guessed(model):
        return ""
    return (f"family {family_of(model)!r} is only guessed from the name {model} (the family table knows no such "
            "model), and a jury seats by it")


@functools.lru_cache(maxsize=4096)
def _derived(model: str) -> tuple[str, str]:
    """(family, how it was found: KNOWN, GUESSED or OWN, the simulator's and people's by convention)."""
    lowered = model.strip().lower()
    if lowered.startswith(OFFLINE_PREFIX):
        rest = lowered[len(OFFLINE_PREFIX):]
        return _derived(rest) if "/" in rest else (lowered, OWN)
    route, slash, rest = lowered.partition("/")
    # People's models are human/NAME by convention: a route of no provider, kept as the family below.
    routed = bool(slash and rest) and route != PEOPLE and (route in COMMON or route in known())
    name = rest if routed else lowered
    for pattern, family in _PATTERNS:
        if pattern.search(name):
            return family, KNOWN
    if routed and route in VENDOR_ROUTES:
        return VENDOR_ROUTES[route], KNOWN
    return name.split("/", 1)[0].split(":", 1)[0] or lowered, OWN if route == PEOPLE and slash else GUESSED
