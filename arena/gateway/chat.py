"""A chat as the gateway sends it: the message, the JSON schema an answer must match, and a call's parameters."""
from __future__ import annotations

from typing import Any, NotRequired, TypedDict

from arena.base.prompts import CACHE_BREAK


class Message(TypedDict):
    """One message of a chat, as every provider takes it (arena.gateway.caching.marked drops shared, or marks it)."""

    role: str  # "user", "assistant" or "system"
    content: str
    # Characters of content that are the prompt's shared part: the prefix a provider that caches where it is told
    # (arena.gateway.caching) is told to cache.
    shared: NotRequired[int]


def user(text: str) -> Message:
    """A prompt as a user message, its cache break (arena.base.prompts.CACHE_BREAK) taken out and remembered as where
    its shared part ends."""
    head, brk, tail = text.rpartition(CACHE_BREAK)
    if not brk:
        return {"role": "user", "content": text}
    head = head.replace(CACHE_BREAK, "")
    return {"role": "user", "content": head + tail, "shared": len(head)}


# A message as it goes on the wire: a Message, or one whose content is parts (arena.gateway.caching.marked).
Sent = dict[str, Any]
# A JSON schema: JSON itself, whose values are of any JSON type.
Schema = dict[str, Any]
# A call's parameters as litellm takes them (max_tokens, temperature, a provider's own...): any JSON value each.
Params = dict[str, Any]
