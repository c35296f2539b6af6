"""A chat as the gateway sends it: the message, the JSON schema an answer must match, and a call's parameters."""
from __future__ import annotations

from typing import Any, TypedDict


class Message(TypedDict):
    """One message of a chat, as every provider takes it."""

    role: str  # "user", "assistant" or "system"
    content: str


# A JSON schema: JSON itself, whose values are of any JSON type.
Schema = dict[str, Any]
# A call's parameters as litellm takes them (max_tokens, temperature, a provider's own...): any JSON value each.
Params = dict[str, Any]
