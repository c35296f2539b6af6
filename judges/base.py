"""What every judge kind shares: the view it gets, the verdict schema, and label swapping."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from arena.protocol import LLMHandle
from arena.records import DIMENSIONS, Motion, Speech, Verdict

SWAP = {"pro": "con", "con": "pro", "tie": "tie", None: None}


@dataclass(frozen=True)
class JudgeView:
    """A finished debate as a judge may see it: the motion and the speeches, sides as Pro/Con only."""

    motion: Motion
    speeches: tuple[Speech, ...]


class Judge(Protocol):
    async def judge(self, view: JudgeView, llm: LLMHandle, run: int) -> Verdict: ...


def verdict_schema(dimensions=DIMENSIONS, *, ties: bool = True, overall_ties: bool = False) -> dict:
    """JSON schema of a verdict: the reasoning first (so it precedes the decision), then decisions."""
    outcome = {"type": "string", "enum": ["pro", "con", "tie"] if ties else ["pro", "con"]}
    properties = {"rationale": {"type": "string", "minLength": 1}}
    properties |= {d: outcome for d in dimensions}
    properties["overall"] = {"type": "string", "enum": ["pro", "con", "tie"] if overall_ties else ["pro", "con"]}
    return {"title": "verdict", "type": "object", "properties": properties,
            "required": list(properties), "additionalProperties": False}


def unswap(verdict: Verdict) -> Verdict:
    """Map a verdict given on a label-swapped transcript back to the true sides."""
    return Verdict(verdict.judge, verdict.run, SWAP[verdict.overall],
                   {d: SWAP[o] for d, o in verdict.dimensions.items()}, verdict.rationale, verdict.error)
