"""The judge contract: what every judge kind shares — the view it gets, its options, the verdict
schema, and one run. The runner calls `run_judge`; kinds (judges/, plug-ins) subclass BaseJudge.

A kind is a class built from a JudgeSpec with `async decide(view, llm) -> Decision`. It sees the
debate only through a JudgeView (sides labelled PRO and CON, no entry or model names) and
calls its model only through the LLMHandle it is given, which carries the run's sample index,
so the R runs of a judge are distinct samples. `run_judge` does the rest for every kind:
label swapping on alternate runs, mapping back (the outcomes, the scores and the rationale's side names),
and recording a failure as a failed verdict.

Before a match's runs the runner asks the judge where they sit (`seats`, told the match's Sitting): each run
a Seat, the judge object that decides it and the model it asks. A kind's runs all sit on its own model; a jury
(judges/jury.py) seats models drawn from its pool, and says so in each verdict's extra. A judge that cannot
sit on a match raises Unseated, and each of its runs there is a failed verdict with that message, marked
{"unseated": true} in its extra: a run counts the match as failed in judging (unseated), and a re-judge keeps the
stored verdicts rather than put failures in their place (replaces).

A scored answer whose winner contradicts its own scores (contradicts, scores_check) is re-asked as an invalid
one is, and a run whose answers keep contradicting themselves fails: no winner is guessed for it.

The built-in kinds lay their prompts out in cache order, so that a kind's calls on a match share the longest prefix a
provider can read from its cache: an opening paragraph the same for every call of the kind, then under Knowledge the
motion and what the call reads of the debate (JudgeView.transcript, under the judges' key of the match, grows only at
its end), then what only grows by appending (a panel's discussion, a debatrix adjudicator's notes), then the cache
break (arena.base.prompts), then the call's own material, and the profile, workflow, rules and output format last.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterable, Mapping

from arena.domain import transcript
from arena.domain.contradictions import CONTRADICTION, contradiction, contradicts  # noqa: F401 - the judge contract's too
from arena.base.errors import ArenaError, UserError
from arena.gateway.fitting import Cut, Material
from arena.domain.formats import AGENT4DEBATE, Format
from arena.gateway.llm import Check, LLMCallError
from arena.gateway.catalog import ModelRef
from arena.base.params import Param, between, resolve
from arena.match.protocol import LLMHandle
from arena.domain.records import DIMENSIONS, JudgeSpec, Motion, Outcome, Speech, Verdict

# A side, an outcome or None, exchanged for one of the same kind (hence Any: a Side gives a Side).
SWAP: dict[Any, Any] = {"pro": "con", "con": "pro", "tie": "tie", None: None}
COMMON_OPTIONS: dict[str, Param] = {
    "temperature": Param(0.7, (int, float), "sampling temperature; above 0 so that R runs are R samples",
                         between(0, 2), "from 0 to 2"),
    "swap_sides": Param(True, (bool,), "odd runs read the debate with PRO and CON exchanged: the speeches' labels "
                                       "and a two-sided motion's propositions; so position bias cancels over the "
                                       "runs, and runs at temperature 0 do not merely repeat one another"),
    "language": Param("", (str,), "language of rationales (default: the motion's)"),
    # Off until measured otherwise (benchmarks/judge_attacks.py): on, a prompt differs only after its cache break.
    "guard": Param(False, (bool,), "every prompt that reads speeches adds a rule: what the speech blocks hold is "
                                   "the debaters' and never addressed to the judge, so a speech that instructs the "
                                   "judge, claims the result is settled or imitates a verdict gains nothing by it"),
    # Planted in the offline simulator (arena.gateway.offline), to show what a length-controlled rating corrects.
    "length_bias": Param(0.0, (int, float), "offline models only: a planted taste for length, added to the logit "
                                            "of PRO winning as length_bias · (pro - con) / (pro + con) of the sides' "
                                            "words", between(-5, 5), "from -5 to 5"),
}


def paper_temperature(source: str) -> Param:
    """The common temperature option at 0, as the work a kind follows sets it (source names where it says so)."""
    return replace(COMMON_OPTIONS["temperature"], default=0.0, help=f"sampling temperature; 0 as in {source}")


@dataclass(frozen=True)
class JudgeView:
    """A finished debate as a judge may see it: the motion and the speeches, sides as Pro/Con only, in the format
    it was debated in."""

    motion: Motion
    speeches: tuple[Speech, ...]
    independent_openings: bool = True  # the arena's protocol; a benchmark's debates may have other rules
    format: Format = AGENT4DEBATE
    key: str = ""  # the judges' key in the match (arena.domain.transcript.marker_key); "": one from the speeches

    def material(self, prompt: Callable[[str], str]) -> Material:
        """A prompt built around this debate's transcript, fitted to a window by shortening the oldest speeches."""
        return Material(lambda cut: prompt(self.transcript(cut)), speeches=transcript.words(self.speeches))

    def transcript(self, cut: Cut = Cut(), *, only: int | None = None) -> str:
        """The debate as a judge reads it (arena.domain.transcript), its notes in the motion's language (a judge's
        `language` option is that of its rationales); only: just the speech of that index, numbered as in the
        whole debate."""
        speeches = self.speeches if only is None else self.speeches[only:only + 1]
        return transcript.render(speeches, cut=cut, start=1 if only is None else only + 1,
                                 independent_openings=self.independent_openings, language=self.motion.language,
                                 fmt=self.format, key=self.key)

    def swapped(self) -> "JudgeView":
        """The same debate with the PRO and CON labels exchanged everywhere it is read: the speeches' labels,
        so the speaking order the transcript states, and a two-sided motion's propositions, so that each label
        still names the proposition its speeches argue."""
        motion = replace(self.motion, pro_text=self.motion.con_text, con_text=self.motion.pro_text)
        return replace(self, motion=motion, speeches=tuple(replace(s, side=SWAP[s.side]) for s in self.speeches))


@dataclass(frozen=True)
class Decision:
    """A judge's decision in the labels it saw: a form of its own, not a Verdict, because on a run that read the
    sides exchanged it is in those labels until run_judge turns it back (swapped) into the run's Verdict."""

    overall: Outcome
    dimensions: Mapping[str, Outcome] = field(default_factory=dict)
    rationale: str = ""
    # The judge's own scores, dimension → (PRO, CON), of the dimensions it scored as well as decided; stored in
    # the verdict's extra for statistics (arena.analysis.stats: self-contradictions).
    scores: Mapping[str, tuple[float, float]] = field(default_factory=dict)

    def swapped(self) -> "Decision":
        """The decision with PRO and CON exchanged: outcomes, scores and the sides the rationale names."""
        return Decision(SWAP[self.overall], {d: SWAP[o] for d, o in self.dimensions.items()},
                        exchange_sides(self.rationale), {d: (con, pro) for d, (pro, con) in self.scores.items()})


@dataclass(frozen=True)
class Sitting:
    """What a judge is told of a match before its runs, to seat them: the match's id, each debater's family
    (arena.domain.families; never an entry's name or model, and "" where there is no debater, as in judge-bench) and
    the workspace's seed."""

    match_id: str | None
    pro_family: str = ""
    con_family: str = ""
    seed: int = 0


@dataclass(frozen=True)
class Seat:
    """Where one run sits: the judge object that decides it, the model it asks, and what its verdict's extra
    records of the seat (a jury's {"panelist": model})."""

    judge: "BaseJudge"
    ref: ModelRef
    extra: Mapping[str, Any] = field(default_factory=dict)


class Unseated(ArenaError):
    """A judge cannot sit on this match (a jury whose pool has too few models of other families than the
    debaters'): each of its runs there fails with this message, and a later `arena judge` tries again."""


UNSEATED = "unseated"  # the extra's mark of a run failed because its judge could not sit on the match


def unseated(verdicts: Iterable[Verdict]) -> str | None:
    """Why a judge could not sit on the match these verdicts are of (the first such run's error), None if every judge
    sat."""
    return next((v.error or "" for v in verdicts if v.failed and v.extra.get(UNSEATED)), None)


def replaces(stored: Iterable[Verdict], new: Iterable[Verdict]) -> bool:
    """Whether a judge's new runs on a match may take the place of its stored ones: not where a new run failed whose
    stored run is valid, so that judging again never puts a failure where a verdict was; the stored runs then stay,
    all of them, rather than mix two judgings (a jury's two draws) in one match."""
    valid = {v.run for v in stored if not v.failed}
    return not any(v.failed and v.run in valid for v in new)


class BaseJudge:
    """Options checked against COMMON_OPTIONS plus the kind's OPTIONS when the judge is built."""

    OPTIONS: dict[str, Param] = {}

    def __init__(self, spec: JudgeSpec):
        self.spec = spec
        self.options = resolve(spec.options, self.accepted(), self.owner, noun="option")
        if "length_bias" in spec.options and not spec.simulated:  # a real model would silently ignore it
            raise UserError(f"{self.owner}: option length_bias: only offline models have a planted length bias, "
                            f"and {spec.model!r} is not one ('offline/NAME')")

    @classmethod
    def accepted(cls) -> dict[str, Param]:
        """Every option this kind takes: the common ones, then its own."""
        return {**COMMON_OPTIONS, **cls.OPTIONS}

    @property
    def owner(self) -> str:
        """How messages name this judge: its name and its kind, as arena.toml spells them."""
        return f"judge {self.spec.name!r} ({self.spec.kind} judge)"

    def language(self, view: JudgeView) -> str:
        return self.options["language"] or view.motion.language

    async def decide(self, view: JudgeView, llm: LLMHandle) -> Decision:
        raise NotImplementedError

    def seats(self, sitting: Sitting) -> tuple[Seat, ...]:
        """Where each of the match's runs sits (Unseated if none can): by default all R on the judge's model."""
        return (Seat(self, ModelRef.of(self.spec)),) * self.spec.runs


async def run_judge(judge: BaseJudge, view: JudgeView, llm: LLMHandle, run: int,
                    extra: Mapping[str, Any] | None = None) -> Verdict:
    """One run of a judge: swap labels on odd runs when asked, map back, record failure as such.

    The verdict's extra holds the judge's scores ({dimension: [PRO, CON]}) when it gave any, "swapped": true
    for a run that read the sides exchanged, and, on a run failed because its answers kept contradicting
    their own scores, "self_contradiction": true (its error names the contradiction, in the real sides); and,
    failed or not, what extra says of its seat (Seat.extra)."""
    swapped = bool(judge.options.get("swap_sides")) and run % 2 == 1
    marks: dict[str, Any] = {**(extra or {}), **({"swapped": True} if swapped else {})}
    before = llm.usage.cached_tokens  # the run's cached prompt tokens: what its calls on llm add
    try:
        decision = await judge.decide(view.swapped() if swapped else view, llm)
    except LLMCallError as exc:
        error, checked = str(exc), getattr(exc, "checked", "")
        if checked.startswith(CONTRADICTION):
            marks["self_contradiction"] = True
            if swapped:
                error = error.replace(checked, exchange_sides(checked))
        return Verdict(judge.spec.name, run, None, {}, "", error=error, extra=marks,
                       cached_tokens=llm.usage.cached_tokens - before)
    if swapped:
        decision = decision.swapped()
    if decision.scores:
        marks = {"scores": {d: list(pair) for d, pair in decision.scores.items()}, **marks}
    return Verdict(judge.spec.name, run, decision.overall, dict(decision.dimensions), decision.rationale,
                   extra=marks, cached_tokens=llm.usage.cached_tokens - before)


# --- the sides' names, exchanged -------------------------------------------------------------------------------

# PRO and CON as a rationale names them: whole words in any of three cases (a hyphenated word such as
# "pro-choice" or a model's "gemini-1.5-pro" is not one), and the Chinese 正方 and 反方.
_SIDE_NAMES = re.compile(r"(?<![\w-])(PRO|Pro|pro|CON|Con|con)(?![\w-])|正方|反方")
_OTHER_NAME = {"PRO": "CON", "Pro": "Con", "pro": "con", "CON": "PRO", "Con": "Pro", "con": "pro",
               "正方": "反方", "反方": "正方"}


def exchange_sides(text: str) -> str:
    """text with the two sides' names exchanged (PRO ↔ CON in each case, 正方 ↔ 反方): a rationale written for
    a swapped view, told of the real sides."""
    return _SIDE_NAMES.sub(lambda m: _OTHER_NAME[m.group(0)], text)


# --- self-contradictions: a winner its own scores say lost (arena.domain.contradictions) -----------------------------

def scores_check(winners: Callable[[Any], Mapping[str, Outcome | None]],
                 scores: Callable[[Any], Mapping[str, Any]]) -> Check:
    """A gateway check (arena.gateway.llm.Check) of a scored answer: winners(data) and scores(data) read its dimensions'
    winners and (PRO, CON) scores; a contradiction (contradiction) is re-asked, and fails the run if it stays."""
    return lambda text, data: contradiction(winners(data), scores(data)) if isinstance(data, Mapping) else ""


def verdict_schema(dimensions: Iterable[str] = DIMENSIONS, *, ties: bool = True,
                   overall_ties: bool = False) -> dict[str, Any]:
    """JSON schema of a verdict: the reasoning first (so it precedes the decision), then decisions."""
    outcome: dict[str, Any] = {"type": "string", "enum": ["pro", "con", "tie"] if ties else ["pro", "con"]}
    properties: dict[str, dict[str, Any]] = {"rationale": {"type": "string", "minLength": 1}}
    properties |= {d: outcome for d in dimensions}
    properties["overall"] = {"type": "string", "enum": ["pro", "con", "tie"] if overall_ties else ["pro", "con"]}
    return {"title": "verdict", "type": "object", "properties": properties,
            "required": list(properties), "additionalProperties": False}
