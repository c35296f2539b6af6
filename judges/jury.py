"""The `jury` judge: per match, `size` models drawn from a pool, none of either debater's family, each giving one
run of an inner LLM judge kind (`single` by default), so that no model judges its own kind.

The draw is seeded by the workspace's seed, the judge's name and the match's id: a rerun, a resumed run or
another process seats the same jury on a match, and different matches get different juries. A pool model's
family is arena.domain.families.family_of's; a debater's is its entry's (`family = "..."` in arena.toml, else derived).
Where fewer than `size` pool models are of another family than both debaters', the jury does not sit on that
match: each of its runs fails naming the families (arena.match.judging.Unseated), `arena run` counts the match as
failed, and no same-family model is ever seated instead; with more models in the pool, `arena judge` judges the match
again. `arena check` warns of it beforehand (arena.app.runner.juries).

Each run is one run of the inner kind on its panelist's model, with the inner kind's options (those beside
pool, size, inner and avoid_same_family), swap_sides included: odd runs read the sides exchanged. The judge's
api_base, context_window and structured_output apply to every pool model, as a judge's do to its model.
Each verdict's extra names its panelist: {"panelist": "<model>"}.
"""
from __future__ import annotations

import random
import re
from dataclasses import replace

from arena.base.errors import ArenaError, UserError, plural
from arena.domain.families import family_of
from arena.match.judging import BaseJudge, Decision, JudgeView, Seat, Sitting, Unseated
from arena.base.limits import MAX_RUNS
from arena.gateway.catalog import ModelRef
from arena.base.params import Param, between, resolve
from arena.match.protocol import LLMHandle
from arena.gateway.providers import unknown_provider
from arena.domain.records import HUMAN_JUDGE, IMPORTED, JURY, JURY_SIZE, JudgeSpec, is_simulated
from judges.registry import JUDGES


def _pool(value: list[object]) -> bool:
    """1 to MAX_RUNS distinct model strings, each naming a known provider (as arena.toml's `model` does)."""
    return (1 <= len(value) <= MAX_RUNS
            and all(isinstance(m, str) and re.fullmatch(r"\S+", m) and not unknown_provider(m) for m in value)
            and len(set(value)) == len(value))


class JuryJudge(BaseJudge):
    OPTIONS = {
        "pool": Param([], (list,), "the models a jury is drawn from, as litellm model strings (required, at least "
                                   "size of them); the judge's api_base, context_window and structured_output "
                                   "apply to each", _pool,
                      f"a list of 1 to {MAX_RUNS} distinct litellm model strings such as 'openai/gpt-4o', each "
                      "with a known provider"),
        "size": Param(JURY_SIZE, (int,), "models seated per match, each giving one run: the judge's R",
                      between(1, MAX_RUNS), f"a whole number from 1 to {MAX_RUNS}"),
        "inner": Param("single", (str,), "the LLM judge kind each panelist runs; its options go beside these "
                                         "in [judges.options]"),
        "avoid_same_family": Param(True, (bool,), "seat no pool model of either debater's family "
                                                  "(arena.domain.families; an entry's `family` overrides its own)"),
    }

    @classmethod
    def accepted(cls) -> dict[str, Param]:
        return dict(cls.OPTIONS)  # the rest are the inner kind's, checked by it

    def __init__(self, spec: JudgeSpec):
        # Not BaseJudge's: the jury checks its own options only; the others are its inner kind's.
        self.spec = spec
        own = {k: v for k, v in spec.options.items() if k in self.OPTIONS}
        self.options = resolve(own, self.OPTIONS, self.owner, noun="option")
        pool, size, inner = self.options["pool"], self.options["size"], self.options["inner"]
        if not pool:
            raise UserError(f"{self.owner}: option pool is required: the models its jury is drawn from, e.g. "
                            'pool = ["openai/gpt-4o", "anthropic/claude-3-5-sonnet-20241022", "gemini/gemini-1.5-pro"]')
        if len(pool) < size:
            raise UserError(f"{self.owner}: option pool lists {len(pool)} model{'s' if len(pool) != 1 else ''}, "
                            f"fewer than size = {size}, the models seated per match")
        self.inner = self._inner(spec, inner)

    def _inner(self, spec: JudgeSpec, inner: str) -> BaseJudge:
        """The inner kind's judge, built from the jury's other options; refused unless it is an LLM judge kind."""
        if inner in (JURY, HUMAN_JUDGE, IMPORTED):
            raise UserError(f"{self.owner}: option inner = {inner!r}: a panelist runs an LLM judge kind, not a "
                            f"{inner} judge")
        if not JUDGES.has(inner):
            raise UserError(f"{self.owner}: option inner = {inner!r}: unknown judge kind (known: "
                            f"{', '.join(k for k in JUDGES.names() if k not in (JURY, HUMAN_JUDGE, IMPORTED))})")
        cls = JUDGES.get(inner)
        if not (isinstance(cls, type) and issubclass(cls, BaseJudge)) or not getattr(cls, "uses_model", True):
            raise UserError(f"{self.owner}: option inner = {inner!r}: not an LLM judge kind")
        pool = self.options["pool"]
        # The inner judge stands for every panelist: a real one if any, so that what only offline models may be
        # asked (a planted bias) is refused for a pool that is not all offline.
        model = next((m for m in pool if not is_simulated(m)), pool[0])
        rest = {k: v for k, v in spec.options.items() if k not in self.OPTIONS}
        inner_spec = replace(spec, kind=inner, model=model, options=rest, family="")
        try:
            return cls(inner_spec)
        except UserError as exc:
            detail = str(exc).removeprefix(f"judge {spec.name!r} ({inner} judge): ")
            raise UserError(f"{self.owner}, its inner {inner} judge: {detail}") from None

    @property
    def uses_json(self) -> bool:
        return getattr(self.inner, "uses_json", True)

    def seats(self, sitting: Sitting) -> tuple[Seat, ...]:
        """`size` pool models drawn for this match, none of a debater's family when avoid_same_family."""
        pool, size = self.options["pool"], self.options["size"]
        debaters = {sitting.pro_family, sitting.con_family} - {""}
        eligible = [m for m in pool if not (self.options["avoid_same_family"] and family_of(m) in debaters)]
        if len(eligible) < size:
            families = ", ".join(f"{m} ({family_of(m)})" for m in pool)
            where = f"on match {sitting.match_id}" if sitting.match_id else "on a match of theirs"  # check's: no match
            raise Unseated(
                f"{self.owner} cannot seat a jury of {size} {where}: the debaters' families are "
                f"{sitting.pro_family!r} (PRO) and {sitting.con_family!r} (CON), and {len(eligible)} of its pool's "
                f"{plural(len(pool), 'model')} {'is' if len(eligible) == 1 else 'are'} of neither (pool: {families}); "
                "add models of other families to the pool, or lower size")
        rng = random.Random(f"{sitting.seed}:{self.spec.name}:{sitting.match_id}")
        return tuple(Seat(self.inner, ModelRef.of(self.spec, model), {"panelist": model})
                     for model in rng.sample(eligible, size))

    async def decide(self, view: JudgeView, llm: LLMHandle) -> Decision:
        raise ArenaError(f"{self.owner}: a jury decides nothing itself; its runs are its panelists' (seats), "
                         "each on the model drawn for it")
