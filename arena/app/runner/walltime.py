"""The dry run's wall time: seconds of model work from what `arena check` measured of each model, and the plan's
time from them.

The wall time (time_s) is projected from what `arena check` measured of each model (its facts in the workspace:
slots, tokens_per_s, prompt_tokens_per_s, latency_s; see Clock): the plan takes as long as its busiest server
(servers work in parallel), and never less than its matches' calls in turn spread over the matches at once.
"""
from __future__ import annotations

from collections import defaultdict
from typing import Mapping, TypedDict

from arena.app.shapes.reports import ModelCost, ModelTime, ServerTime, TimeEstimate, Unmeasured
from arena.domain.formats import Format, get_format
from arena.domain.records import JudgeSpec, Match, is_simulated
from arena.workspace.config import Config
from arena.workspace.folder import Workspace

# A simulated call's role in its match: ("side", side) for a speech, ("judge", name, the model asked) for a judge's.
Role = tuple[str, ...]
# What a role's calls used: calls, prompt_tokens, completion_tokens and searches (a mean's are fractional).
Usage = dict[str, float]


class Speed(TypedDict):
    """What `arena check` measured of a model: the calls it serves at once and how fast it answers."""

    slots: int
    tokens_per_s: float
    prompt_tokens_per_s: float | None
    latency_s: float


def bases(config: Config) -> dict[str, str]:
    """The api_base of each model of the entries and judges ("": the provider's own)."""
    return {e.model: e.api_base for e in config.entries} | {m: j.api_base for j in config.judges for m in j.models}


class Clock:
    """Seconds of model work from what `arena check` measured of each model (its workspace facts).

    A call takes its model's latency_s (a short call's round trip) + its prompt tokens / prompt_tokens_per_s (when
    measured) + its completion tokens / tokens_per_s. A model is timed once tokens_per_s is known; an offline/
    model answers at once (0 s); any other is unmeasured.
    """

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self.bases = bases(ws.config)
        self.facts: dict[str, Speed | None] = {}
        self.match_s = 0.0  # the projected matches' calls in turn, summed (in_turn)
        self.matches = 0
        self.formats: dict[str, float] = {}

    def measured(self, model: str) -> Speed | None:
        """{slots, tokens_per_s, prompt_tokens_per_s, latency_s} as measured, or None when not (or simulated)."""
        if model not in self.facts:
            known = {} if is_simulated(model) else (self.ws.store.model_facts(model, self.bases.get(model, "")) or {})
            rate = known.get("tokens_per_s")
            prompt_rate = known.get("prompt_tokens_per_s")
            self.facts[model] = None if not rate or rate <= 0 else {
                # slots not measured (a provider's own API, a server too quick to time): as many as the run sends
                "slots": max(1, int(known.get("slots") or self.ws.config.llm.max_concurrency)),
                "tokens_per_s": float(rate),
                "prompt_tokens_per_s": float(prompt_rate) if prompt_rate and prompt_rate > 0 else None,
                "latency_s": float(known.get("latency_s") or 0.0)}
        return self.facts[model]

    def seconds(self, model: str | None, row: Mapping[str, float]) -> float:
        """The seconds a measured model takes for a usage row's calls; 0 for any other (or a person's side)."""
        speed = None if model is None else self.measured(model)
        if speed is None:
            return 0.0
        prompt = row["prompt_tokens"] / speed["prompt_tokens_per_s"] if speed["prompt_tokens_per_s"] else 0.0
        return row["calls"] * speed["latency_s"] + prompt + row["completion_tokens"] / speed["tokens_per_s"]

    def in_turn(self, match: Match, roles: dict[Role, tuple[str | None, Usage]],
                judges: Mapping[str, JudgeSpec]) -> None:
        """Add a match's calls in turn: its speeches one after another (a stage's blind ones together: the sides'
        seconds × the format's steps per turn), then each judge, whose runs go at once (its seconds / runs)."""
        if match.format not in self.formats:
            self.formats[match.format] = steps(get_format(match.format, self.ws.config.formats))
        sides = sum(self.seconds(model, row) for role, (model, row) in roles.items() if role[0] == "side")
        judging: dict[str, float] = defaultdict(float)
        for role, (model, row) in roles.items():
            if role[0] == "judge":
                judging[role[1]] += self.seconds(model, row)
        self.matches += 1
        self.match_s += sides * self.formats[match.format] + sum(
            s / max(1, judges[name].runs) for name, s in judging.items())


def steps(fmt: Format) -> float:
    """A format's playing steps per turn: a stage's blind turns are played together (arena.match.protocol), so the
    agent4debate format's six speeches take five steps."""
    turns = fmt.turns
    played = sum(1 for k, t in enumerate(turns)
                 if not (t.blind and k and turns[k - 1].blind and turns[k - 1].stage == t.stage))
    return played / len(turns)


def timed(ws: Workspace, models: list[ModelCost], clock: Clock, at_once: int) -> TimeEstimate:
    """The plan's wall time: its busiest server's (a server's models' seconds of work over the calls it serves at
    once, min(slots, at_once)), and never less than its matches' calls in turn over the matches at once (at most
    the matches there are); None when no model of it is measured (0 when every model is simulated)."""
    config = ws.config
    servers: dict[str, list[ModelTime]] = defaultdict(list)
    unmeasured: list[Unmeasured] = []
    simulated: list[str] = []
    for row in models:
        model = row["model"]
        speed = clock.measured(model)
        if is_simulated(model):
            simulated.append(model)
        elif speed is None:
            unmeasured.append({"model": model, "names": [e.name for e in config.entries if e.model == model]
                               + [j.name for j in config.judges if model in j.models]})
        else:
            servers[clock.bases.get(model) or model].append(
                {"model": model, "calls": row["calls"], "slots": speed["slots"], "tokens_per_s": speed["tokens_per_s"],
                 "prompt_tokens_per_s": speed["prompt_tokens_per_s"], "latency_s": speed["latency_s"],
                 "work_s": round(clock.seconds(model, {"calls": row["calls"], "prompt_tokens": row["prompt_tokens"],
                                                       "completion_tokens": row["completion_tokens"]}), 1)})
    rows: list[ServerTime] = []
    for server, timed_models in sorted(servers.items()):
        slots = min(t["slots"] for t in timed_models)  # one server's slots, as each of its models measured them
        work = sum(t["work_s"] for t in timed_models)
        rows.append({"server": server, "slots": slots, "at_once": min(slots, at_once), "work_s": round(work, 1),
                     "wall_s": round(work / min(slots, at_once), 1), "models": timed_models})
    busiest = max((r["wall_s"] for r in rows), default=0.0)
    in_turn = clock.match_s / min(at_once, max(1, clock.matches))  # fewer matches than at once: the longest's own
    estimate = None if unmeasured and not rows else round(max(busiest, in_turn), 1)
    return {"estimate": estimate,
            "basis": {"at_once": at_once, "match_s": round(clock.match_s / max(1, clock.matches), 1),
                      "bound": "matches" if in_turn > busiest else "server", "servers": rows},
            "unmeasured": unmeasured, "simulated": simulated}
