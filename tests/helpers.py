"""Small builders shared by tests: workspaces whose entries and judges talk to the fake servers."""
from __future__ import annotations

import json
import re
from pathlib import Path

from arena.config import load_config
from arena.store import DB_NAME, Store
from arena.workspace import init_workspace

VERDICT = {"rationale": "PRO carried the main clash.", "argument": "pro", "source": "tie",
           "language": "con", "overall": "pro"}


def write_workspace(path: Path, api_base: str, *, entries=("alpha", "beta"), judge_runs: int = 3,
                    extra: str = "") -> Path:
    """A workspace with direct entries on the fake LLM server and one single judge."""
    toml = ['[arena]', f'judge_runs = {judge_runs}', '[llm]', 'backoff_s = 0.01', 'retries = 2',
            '[search]', 'provider = "offline"', '[motions]', 'sets = ["builtin:en"]']
    for name in entries:
        toml += ['[[entries]]', f'name = "{name}"', 'debater = "direct"', f'model = "openai/{name}-model"',
                 f'api_base = "{api_base}"']
    toml += ['[[judges]]', 'name = "j1"', 'kind = "single"', 'model = "openai/judge-model"',
             f'api_base = "{api_base}"', extra]
    init_workspace(path, "\n".join(toml) + "\n")
    return mark_checked(path)


def assert_user_error(result, *fragments: str) -> None:
    """A click result of a user's mistake: exit 2, no traceback, a message naming each fragment."""
    assert result.exit_code == 2, result.output
    assert isinstance(result.exception, SystemExit), result.exception  # no unexpected exception
    assert "Traceback" not in result.output
    for fragment in fragments:
        assert fragment in result.output, (fragment, result.output)


def mark_checked(path: Path) -> Path:
    """Remember every configured model as usable, as a passing `arena check` leaves the workspace, so
    `arena run` sends no probe of its own (tests of the probe itself leave this out)."""
    config = load_config(path)
    store = Store(path / DB_NAME)
    for spec in (*config.entries, *config.judges):
        store.remember_model(spec.model, spec.api_base, ok=True, structured="json_schema")
    store.close()
    return path


def stage_and_side(body: dict) -> tuple[str, str] | None:
    """Which speech a debater's request is for, read off the prompt the protocol built."""
    text = body["messages"][0]["content"]
    side = re.search(r"speaking for the (PRO|CON) side", text)
    stage = re.search(r"This is your (constructive|rebuttal|summary) speech", text)
    return (stage.group(1), side.group(1).lower()) if side and stage else None


def debate_responder(verdict: dict = VERDICT):
    """Answer speech requests with a unique, traceable text and judge requests with a verdict."""

    def respond(body: dict) -> str:
        if body.get("response_format"):
            return json.dumps(verdict)
        stage, side = stage_and_side(body)
        return f"SPEECH<{body['model']}|{stage}|{side}> Our case is strong."

    return respond


def schema_instance(schema: dict, key: str = "", text=lambda key: f"{key or 'text'}: a note.") -> object:
    """A small valid instance of a JSON schema, for any structured call: enums' first value, null where allowed
    (e.g. agent4debate's material request: none), one item per array, every property, text(key) per string."""
    kinds = schema.get("type")
    kinds = kinds if isinstance(kinds, list) else [kinds]
    if "enum" in schema:
        return schema["enum"][0]
    if "null" in kinds:
        return None
    if "object" in kinds:
        return {name: schema_instance(sub, name, text) for name, sub in schema.get("properties", {}).items()}
    if "array" in kinds:
        return [schema_instance(schema.get("items", {}), key, text) for _ in range(max(1, schema.get("minItems", 1)))]
    if "boolean" in kinds:
        return True
    if "integer" in kinds or "number" in kinds:
        return max(schema.get("minimum", 5), min(schema.get("maximum", 5), 5))
    return text(key)


def requested_schema(body: dict) -> dict | None:
    """The JSON schema a request asked for, however it was asked (json_schema, or json_object with a schema)."""
    fmt = body.get("response_format") or {}
    return (fmt.get("json_schema") or {}).get("schema") or fmt.get("schema")

