"""Entry params as data: each debater kind declares what it accepts, with defaults and checks."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from arena.errors import UserError
from arena.records import Entry


@dataclass(frozen=True)
class Param:
    default: Any
    types: tuple[type, ...]
    help: str
    check: Callable[[Any], bool] | None = None
    wanted: str = ""  # what check accepts, for the error message


def _number(lo: float, hi: float) -> Callable[[Any], bool]:
    return lambda v: lo <= v <= hi


SAMPLING: dict[str, Param] = {
    "temperature": Param(0.2, (int, float), "sampling temperature", _number(0, 2), "from 0 to 2"),
    "top_p": Param(0.75, (int, float), "nucleus sampling mass", _number(0, 1), "from 0 to 1"),
    "max_tokens": Param(None, (int,), "cap on tokens per call", _number(1, 1_000_000), "at least 1"),
    "seed": Param(None, (int,), "provider-side sampling seed, where supported"),
}
SAMPLING_KEYS = tuple(SAMPLING)
LENGTHS: dict[str, Param] = {
    f"words_{stage}": Param(words, (int,), f"length budget of the {stage} speech, in words",
                            _number(50, 5000), "from 50 to 5000")
    for stage, words in (("constructive", 450), ("rebuttal", 400), ("summary", 300))
}


def resolve(entry: Entry, spec: dict[str, Param], kind: str) -> dict[str, Any]:
    """entry.params checked against spec, with defaults filled in; UserError names the bad key."""
    unknown = sorted(set(entry.params) - set(spec))
    if unknown:
        raise UserError(f"entry {entry.name!r}: unknown param(s) {', '.join(unknown)} for the {kind} debater "
                        f"(known: {', '.join(sorted(spec))})")
    out = {}
    for key, param in spec.items():
        value = entry.params.get(key, param.default)
        if key in entry.params:
            bad_type = not isinstance(value, param.types) or (isinstance(value, bool) and bool not in param.types)
            if bad_type or (param.check is not None and not param.check(value)):
                wanted = param.wanted or " or ".join(t.__name__ for t in param.types)
                raise UserError(f"entry {entry.name!r}: param {key} = {value!r}: expected {wanted}")
        out[key] = value
    return out


def sampling(values: dict[str, Any]) -> dict[str, Any]:
    """The sampling params to send with each call (unset ones left out)."""
    return {k: values[k] for k in SAMPLING_KEYS if values.get(k) is not None}
