"""Structured answers: the ways a JSON answer is asked of a model, best first, what each sends, how a refusal of
one is told, how an answer is checked against its schema, and how much room an answer gets."""
from __future__ import annotations

import json
import re
from typing import Any

from arena.gateway.chat import Message, Schema

STRUCTURED_MODES = ("json_schema", "json_object", "prompt")  # how a structured answer is asked for, best first
TEXT_TOKENS = 512  # answer cap of a free-text call that states none


def next_mode(mode: str | None) -> str | None:
    """The mode to fall back to when a provider refuses mode; None after the last."""
    if mode is None or mode == STRUCTURED_MODES[-1]:
        return None
    return STRUCTURED_MODES[STRUCTURED_MODES.index(mode) + 1]


def with_schema(messages: list[Message], schema: Schema | None, mode: str | None) -> list[Message]:
    """Messages as sent in mode: without json_schema the schema is spelled out in the last message."""
    if schema is None or mode == "json_schema":
        return messages
    instruction = ("\n\nAnswer with only a JSON object, no other text, that matches this JSON schema:\n"
                   + json.dumps(schema, ensure_ascii=False))
    last = messages[-1]
    return [*messages[:-1], {**last, "content": f"{last.get('content', '')}{instruction}"}]


def response_format(schema: Schema | None, mode: str | None) -> dict[str, Any] | None:
    """The response_format a request sends in mode; None for free text and the prompt mode."""
    if mode == "json_schema":
        # a mode is chosen only for a schema
        return {"type": "json_schema", "json_schema": {"name": (schema or {}).get("title", "answer"),
                                                       "schema": schema}}
    if mode == "json_object":
        # OpenAI's JSON mode; llama.cpp-style servers also constrain the answer to the schema given here.
        return {"type": "json_object", "schema": schema}
    return None


_FORMAT_WORDS = re.compile(r"response_format|json_schema|json_object|schema|grammar|structured", re.IGNORECASE)


def refuses_format(exc: Exception) -> bool:
    """Whether the provider refused the way a JSON answer was asked for (not the request as a whole)."""
    if type(exc).__name__ == "UnsupportedParamsError":
        return True
    return getattr(exc, "status_code", None) in (400, 422, 500) and bool(_FORMAT_WORDS.search(str(exc)))


_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.DOTALL)


def parse_structured(text: str, schema: Schema) -> tuple[Any, str]:
    """(data, "") for an answer that is JSON matching schema, else (None, what is wrong)."""
    import jsonschema

    fenced = _FENCE.match(text)
    body = fenced.group(1) if fenced else text
    # strict=False: models (grammar-constrained ones too) write raw newlines inside strings.
    try:
        data = json.loads(body, strict=False)
    except json.JSONDecodeError as exc:
        # Asked by prompt alone, models wrap the object in prose: take the outermost braces.
        first, last = body.find("{"), body.rfind("}")
        try:
            data = json.loads(body[first:last + 1], strict=False) if 0 <= first < last else None
        except json.JSONDecodeError:
            data = None
        if data is None:
            return None, f"not JSON ({exc.msg} at position {exc.pos})"
    error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(schema).iter_errors(data))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "the top level"
        return None, f"at {where}: {error.message}"
    return data, ""


def answer_tokens(schema: Schema | None) -> int:
    """A cap for an answer: TEXT_TOKENS for free text; for JSON of this schema, room for free text in each
    string and a little for the rest."""
    if schema is None:
        return TEXT_TOKENS

    def need(node: Schema, depth: int) -> int:
        kind = node.get("type")
        kinds = kind if isinstance(kind, list) else [kind]
        if "object" in kinds:
            return 8 + sum(8 + need(sub, depth) for sub in node.get("properties", {}).values())
        if "array" in kinds:
            most: int = node.get("maxItems", 4)
            return 8 + min(most, 8) * need(node.get("items", {}), depth + 1)
        if "string" in kinds and "enum" not in node:
            room: int = node.get("maxLength", 300 if depth == 0 else 100)
            return room
        return 8
    return 128 + need(schema, 0)
