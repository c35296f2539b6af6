"""Prompt caching at providers: where a request tells a provider to cache, and how much of a prompt a provider that
caches by itself reads from its cache.

OpenAI caches a prompt's prefix by itself once an earlier prompt to the same model began the same way: from 1,024
tokens, in steps of 128 (OPENAI_MIN, OPENAI_STEP); DeepSeek, Gemini and local servers (llama.cpp, vLLM) cache
prefixes by themselves too. Anthropic's models cache only up to a breakpoint the request marks (cache_control on a
content part, which litellm passes on): marked() puts one where the prompt's shared part ends (Message.shared).
"""
from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import Any

from arena.gateway.chat import Message, Sent

OPENAI_MIN, OPENAI_STEP = 1024, 128
# Model names (litellm's, lower case) whose provider caches only where a request marks: Anthropic's models, on its
# API or on a cloud that serves them (bedrock/..., vertex_ai/... with claude in the name).
_MARKED_PROVIDERS = ("anthropic/",)
_MARKED_FAMILY = "claude"


def needs_marks(model: str) -> bool:
    """Whether model's provider caches only where a request marks (cache_control)."""
    name = model.lower()
    return name.startswith(_MARKED_PROVIDERS) or _MARKED_FAMILY in name.rsplit("/", 1)[-1]


def marked(model: str, messages: list[Message]) -> list[Sent]:
    """messages as sent to model: for a provider that needs marks, a message with a shared part split into two
    content parts, the first marked to be cached; for any other, each message as it is, without `shared`."""
    marks = needs_marks(model)
    out: list[Sent] = []
    for message in messages:
        plain: Sent = {"role": message["role"], "content": message["content"]}
        shared = message.get("shared")
        if not marks or not shared:
            out.append(plain)
            continue
        content = message["content"]
        parts: list[dict[str, Any]] = [{"type": "text", "text": content[:shared],
                                        "cache_control": {"type": "ephemeral"}}]
        if content[shared:]:
            parts.append({"type": "text", "text": content[shared:]})
        out.append({"role": message["role"], "content": parts})
    return out


def openai_cached(shared_tokens: int, prompt_tokens: int) -> int:
    """The prompt tokens OpenAI reads from its cache given the tokens of the longest prefix an earlier prompt shared:
    none below OPENAI_MIN, else that prefix rounded down to a step of OPENAI_STEP (OpenAI's documented rule)."""
    shared = min(shared_tokens, prompt_tokens)
    return 0 if shared < OPENAI_MIN else shared - (shared - OPENAI_MIN) % OPENAI_STEP


def prompt_text(messages: list[Message]) -> str:
    """A chat's text as a prefix cache reads it: its messages' contents in order (a conversation that goes on from an
    earlier one begins as that one did)."""
    return "\n".join(m["content"] for m in messages)


def rough_tokens(text: str) -> int:
    """A rough count of text's tokens: a token for every 4 characters, and one for each CJK character."""
    cjk = sum(1 for c in text if "\u4e00" <= c <= "\u9fff") if not text.isascii() else 0
    return (len(text) - cjk + 3) // 4 + cjk


def _common(a: str, b: str) -> int:
    """The length of the longest common prefix of a and b (a binary search of slice comparisons, done in C)."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        mid = (low + high + 1) // 2
        if a[:mid] == b[:mid]:
            low = mid
        else:
            high = mid - 1
    return low


@dataclass
class PrefixCache:
    """The prompts sent to each model so far, to tell how much of the next one an automatic cache would hold: the
    longest prefix it shares with any earlier prompt to the same model (among strings kept sorted, the longest
    common prefix with any of them is one with a neighbour)."""

    sent: dict[str, list[str]] = field(default_factory=dict)

    def send(self, model: str, prompt: str) -> tuple[int, int]:
        """Remember prompt as sent to model; (its tokens, those an OpenAI-style cache would have read) by
        rough_tokens."""
        earlier = self.sent.setdefault(model, [])
        at = bisect.bisect_left(earlier, prompt)
        shared = max((_common(prompt, earlier[i]) for i in (at - 1, at) if 0 <= i < len(earlier)), default=0)
        earlier.insert(at, prompt)
        tokens = rough_tokens(prompt)
        return tokens, openai_cached(rough_tokens(prompt[:shared]), tokens)
