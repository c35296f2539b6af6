"""Statistics over stored matches, as pure functions of rows the store hands over."""
from __future__ import annotations

from typing import Iterable

from arena.records import STAGES


def agent_stats(speeches: Iterable[dict]) -> list[dict]:
    """Per debater kind, stage and internal role: mean calls per speech and tokens per call.

    The shape of the Agent4Debate paper's Tables 8 and 9. Each speech is
    {"debater", "stage", "agents": {role: {"calls", "prompt_tokens", "completion_tokens", "cost"}}}.
    A role missing from a speech ran 0 times in it, so an ablation shows as fewer calls per speech.
    """
    groups: dict[tuple[str, str], list[dict]] = {}
    for s in speeches:
        groups.setdefault((s["debater"], s["stage"]), []).append(s["agents"])
    out = []
    for (debater, stage), agents in sorted(groups.items(), key=lambda g: (g[0][0], STAGES.index(g[0][1]))):
        n = len(agents)
        for role in dict.fromkeys(role for usage in agents for role in usage):  # first-seen order: call order
            ran = [usage[role] for usage in agents if role in usage]
            calls = sum(u["calls"] for u in ran)
            costs = [u["cost"] for u in ran]
            out.append({
                "debater": debater, "stage": stage, "role": role, "speeches": n,
                "calls_per_speech": calls / n,
                "completion_tokens_per_call": _per(sum(u["completion_tokens"] for u in ran), calls),
                "prompt_tokens_per_call": _per(sum(u["prompt_tokens"] for u in ran), calls),
                "cost_per_speech": None if None in costs else sum(costs) / n,
            })
    return out


def _per(total: float, calls: int) -> float | None:
    return total / calls if calls else None
