"""Options as data: a component declares what it accepts, with defaults and checks, and gets them validated."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Mapping, TypedDict

from arena.base.errors import UserError


@dataclass(frozen=True)
class Param:
    default: Any
    types: tuple[type, ...]
    help: str
    check: Callable[[Any], bool] | None = None
    wanted: str = ""  # what check accepts, for the error message


def between(lo: float, hi: float) -> Callable[[Any], bool]:
    return lambda v: lo <= v <= hi


class KindParam(TypedDict):
    """A param of a debater kind, or an option of a judge or importer kind, as `arena kinds` shows it."""

    name: str
    default: Any  # the JSON value
    type: str
    accepts: str
    help: str


def describe(spec: dict[str, Param]) -> list[KindParam]:
    """A Param table as rows for people and scripts: [{name, default, type, accepts, help}]."""
    return [{"name": key, "default": p.default, "type": " or ".join(t.__name__ for t in p.types),
             "accepts": p.wanted or " or ".join(t.__name__ for t in p.types), "help": p.help}
            for key, p in spec.items()]


def resolve(values: Mapping[str, Any], spec: dict[str, Param], owner: str, noun: str = "param") -> dict[str, Any]:
    """values checked against spec, with defaults filled in; UserError names owner, the key and the problem.

    owner reads like "entry 'a4d' (agent4debate debater)"; noun is "param" or "option".
    """
    unknown = sorted(set(values) - set(spec))
    if unknown:
        raise UserError(f"{owner}: unknown {noun}(s) {', '.join(unknown)} (known: {', '.join(sorted(spec))})")
    out = {}
    for key, param in spec.items():
        value = values.get(key, param.default)
        if key in values:
            bad_type = not isinstance(value, param.types) or (isinstance(value, bool) and bool not in param.types)
            # NaN and infinity are floats no check needs to think of: a NaN fails every comparison, an infinity
            # passes every lower bound
            bad_type = bad_type or (isinstance(value, float) and not math.isfinite(value))
            if bad_type or (param.check is not None and not param.check(value)):
                wanted = param.wanted or " or ".join(t.__name__ for t in param.types)
                raise UserError(f"{owner}: {noun} {key} = {value!r}: expected {wanted}")
        out[key] = value
    return out
