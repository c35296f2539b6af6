"""The match protocol: who speaks when, and what each speaker may see, as the match's format (arena.domain.formats) says.

Turns are played in the format's order; a turn sees every speech made before it, but a blind turn sees only
those of earlier stages, so a stage's blind turns are played in parallel (agent4debate's stage 1: Pro and Con
write their constructives independently). The protocol, not the debater, decides this.

A side whose debater cannot give a speech because of its model's answers (arena.gateway.llm.AnswerError), or gives one
that is no debate speech (arena.domain.speechchecks: a placeholder, a template, words to the judge instead of the
debate, an echo, a page pasted, a loop, another language, word salad, far too short), ends the match there: Forfeited,
with the speeches made so far. Any other failure fails the match.
"""
from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

from arena.domain import speechchecks, transcript
from arena.gateway.fitting import Cut, Material, PromptTooLong, fit
from arena.base.errors import ArenaError
from arena.domain.formats import AGENT4DEBATE, Format, Turn
from arena.gateway.llm import AnswerError, CallTag, Check, Completion, ContextLengthError, LLMCallError, LLMGateway
from arena.gateway.catalog import ModelRef
from arena.gateway.chat import Message, Params, Schema, user
from arena.domain.records import AgentUsage, Forfeit, Motion, Reference, Side, Speech, Stage
from arena.gateway.search import SearchGateway, SearchResult, SearchTag
from arena.match.turns import AwaitingPerson, Desk, TurnLapsed
from arena.base.clock import now


@dataclass(frozen=True)
class Draft:
    """What a debater hands back for one speech."""

    text: str
    references: tuple[Reference, ...] = ()
    cut: bool = False  # the model stopped at its length cap
    budget: int | None = None  # the length the debater was asked for, in the language's unit; None: the turn's


class AgentLog:
    """Usage per (stage, side, role) and every prompt/response exchanged inside a match."""

    def __init__(self, listener: Callable[[CallTag, Completion], None] | None = None) -> None:
        self.usage: dict[tuple[str | None, str | None, str], AgentUsage] = {}
        # each as the store keeps it (stage, side, role, prompt, response, created_at)
        self.messages: list[dict[str, Any]] = []
        self.listener = listener  # e.g. a progress display: told of every call as it completes
        self.asking: dict[tuple[str | None, str | None], str] = {}  # per speech, the prompt of the call under way
        # per speech, the prompts sent up to its first checked call (the Writer's), which hold no draft of it yet
        self.briefed: dict[tuple[str | None, str | None], tuple[str, ...]] = {}

    def add(self, tag: CallTag, messages: list[Message], completion: Completion) -> None:
        key = (tag.stage, tag.side, tag.role)
        self.usage[key] = self.usage.get(key, AgentUsage()) + completion.usage
        self.messages.append({"stage": tag.stage, "side": tag.side, "role": tag.role,
                              "prompt": _as_text(messages), "response": completion.text, "created_at": now()})
        if self.listener is not None:
            self.listener(tag, completion)

    def roles(self, stage: str, side: str) -> dict[str, AgentUsage]:
        return {role: u for (st, sd, role), u in self.usage.items() if (st, sd) == (stage, side)}

    def prompts(self, stage: str | None, side: str | None) -> list[str]:
        """Every prompt sent for one speech, in order, the one of a call still under way last."""
        sent = [m["prompt"] for m in self.messages if (m["stage"], m["side"]) == (stage, side)]
        return sent + ([self.asking[(stage, side)]] if (stage, side) in self.asking else [])

    def instructions(self, stage: str, side: str) -> list[str]:
        """The prompts one speech's debater was given before it wrote a draft of it: those sent up to its first
        checked call (the Writer's; an agent's research and plan before it), else the first. A later prompt may
        hold a draft (a review, a revision), which a speech may repeat; what these say, a speech may not."""
        briefed = self.briefed.get((stage, side))
        return list(briefed) if briefed is not None else self.prompts(stage, side)[:1]


class LLMHandle:
    """A debater's or judge's line to its model: tags every call and logs it for the match."""

    def __init__(self, gateway: LLMGateway, ref: ModelRef, log: AgentLog, *, match_id: str | None,
                 stage: str | None = None, side: str | None = None, params: Params | None = None, sample: int = 0,
                 judge: str | None = None):
        self.gateway, self.ref, self.log = gateway, ref, log
        self.match_id, self.stage, self.side, self.judge = match_id, stage, side, judge
        self.params = dict(params or {})
        self.sample = sample  # a judge's run index: each run of one prompt is its own sample
        self.usage = AgentUsage()  # what this line's calls spent (a judge's run: its tokens, those cached among them)

    async def complete(self, role: str, prompt: str | list[Message] | Material, *, schema: Schema | None = None,
                       params: Params | None = None, max_tokens: int | None = None,
                       check: Check | None = None) -> Completion:
        """The model's answer to prompt: one user message (a str), a whole conversation (a list of messages), or
        Material fitted to the model's context window (arena.gateway.fitting) and sent as one user message.

        max_tokens is what the answer needs (a speech's length budget, say); without it the gateway
        sizes the cap from the schema. A context-length error from the provider gets one retry with
        the prompt fitted to a tighter budget. check: the caller's own test of an answer (arena.gateway.llm.Check).
        """
        tag = CallTag(role=role, match_id=self.match_id, stage=self.stage, side=self.side, judge=self.judge)
        params = {**self.params, **(params or {})}
        tight = False
        while True:
            messages, fitted = self._messages(prompt, params, schema, max_tokens, tight)
            if check is not None:  # what a speech check of its answer reads (DebateContext.problem)
                self.log.asking[(self.stage, self.side)] = _as_text(messages)
                if (self.stage, self.side) not in self.log.briefed:
                    self.log.briefed[(self.stage, self.side)] = tuple(self.log.prompts(self.stage, self.side))
            try:
                completion = await self.gateway.complete(self.ref, messages, tag=tag, params=params, schema=schema,
                                                         sample=self.sample, max_tokens=max_tokens, tight=tight,
                                                         fitted=fitted, check=check)
            except ContextLengthError:
                if tight:
                    raise
                tight = True
                continue
            finally:
                self.log.asking.pop((self.stage, self.side), None)
            self.log.add(tag, messages, completion)
            self.usage = self.usage + completion.usage
            return completion

    def degraded(self, role: str, exc: AnswerError, instead: str) -> None:
        """An optional step's answer was unusable and the step goes on with its neutral value (`instead`):
        say so in the ledger, so that a degraded speech is never mistaken for a full one."""
        tag = CallTag(role=role, match_id=self.match_id, stage=self.stage, side=self.side, judge=self.judge)
        self.gateway.degraded(self.ref, tag, f"{exc}; went on with {instead}")

    def _messages(self, prompt: str | list[Message] | Material, params: Params, schema: Schema | None,
                  max_tokens: int | None, tight: bool) -> tuple[list[Message], bool]:
        """The messages to send, and whether material was left out to fit them."""
        if not isinstance(prompt, Material):
            return ([user(prompt)] if isinstance(prompt, str) else prompt), False
        if self.ref.simulated:  # the simulator has no window
            return [user(prompt.render(Cut()))], False
        answer = self.gateway.answer_cap(self.ref, params, schema, max_tokens)
        budget = self.gateway.prompt_budget(self.ref, answer, tight=tight)
        try:
            text, cut = fit(prompt, lambda t: self.gateway.fits(self.ref, [{"role": "user", "content": t}], budget))
        except PromptTooLong as exc:
            raise LLMCallError(f"{self.ref.model}: {exc} ({self.gateway.window(self.ref)} tokens)") from None
        return [user(text)], not cut.none


class SearchHandle:
    def __init__(self, gateway: SearchGateway, *, match_id: str | None, stage: str, side: str, offline: bool):
        self.gateway, self.match_id, self.stage, self.side, self.offline = gateway, match_id, stage, side, offline

    async def search(self, query: str, *, max_results: int | None = None, search_depth: str = "basic",
                     role: str = "searcher") -> list[SearchResult]:
        tag = SearchTag(role=role, match_id=self.match_id, stage=self.stage, side=self.side)
        return await self.gateway.search(query, tag=tag, max_results=max_results, search_depth=search_depth,
                                         offline=self.offline)


@dataclass(frozen=True)
class DebateContext:
    """Everything a debater gets for one speech, and nothing more."""

    motion: Motion
    side: Side
    stage: Stage
    visible: tuple[Speech, ...]  # the speeches this speaker may see, in order
    memory: dict[str, Any] = field(compare=False)  # this side's private notes, kept across the match's stages
    llm: LLMHandle = field(compare=False)
    search: SearchHandle = field(compare=False)
    language: str = "en"
    format: Format = AGENT4DEBATE  # the match's debate format, in which this is the turn (stage, side)
    min_share: float | None = None  # [arena] min_speech_share when speeches are checked; None: they are not
    desk: Desk | None = field(default=None, compare=False)  # where web debaters take their turns (arena.match.turns)
    key: str = ""  # the key that marks the speeches of this side's transcripts (arena.domain.transcript.marker_key)
    # Every key of the match's transcripts, the judges' too, for the speech checks alone (a speech holding one is
    # refused); never shown to a model.
    keys: frozenset[str] = field(default=frozenset(), compare=False, repr=False)

    @property
    def turn(self) -> Turn:
        return self.format.turn(self.stage, self.side)

    def transcript(self, cut: Cut = Cut()) -> str:
        """The speeches this speaker may see as its prompts show them (arena.domain.transcript), under this side's key,
        cut to fit a window (arena.gateway.fitting)."""
        return transcript.render(self.visible, cut=cut, language=self.language, fmt=self.format, key=self.key)

    def speech_problem(self, text: str, budget: int | None = None) -> str:
        """What makes text no debate speech for this turn ("placeholder: ..."), or "" when it is one or speeches
        are not checked: a debater's check (arena.gateway.llm.Check) for the call that writes its speech, so that it is
        asked again before the protocol forfeits it. budget: what the debater asked for, if not the turn's."""
        problem = self.problem(text, budget)
        return "" if problem is None else str(problem)

    def problem(self, text: str, budget: int | None = None) -> speechchecks.Problem | None:
        """The first speech check text fails (arena.domain.speechchecks.in_debate), given what this speaker was shown."""
        if self.min_share is None:
            return None
        return speechchecks.in_debate(
            text, side=self.side, stage=self.stage, motion=self.motion, shown=self.visible, fmt=self.format,
            language=self.language, share=self.min_share, budget=budget, keys=self.keys,
            prompts=self.llm.log.prompts(self.stage, self.side) if self.llm is not None else (),
            instructions=self.llm.log.instructions(self.stage, self.side) if self.llm is not None else ())


class Debater(Protocol):
    """A debater kind plays any format unless it has check_format(format), which raises a UserError naming the
    turn it cannot play."""

    async def speak(self, ctx: DebateContext) -> Draft: ...


class Forfeited(ArenaError):
    """One side could not give its speech (its model's answers were unusable): the forfeit, and the speeches
    made before it. Its message is the reason, so a workspace without forfeits fails the match with it."""

    def __init__(self, forfeit: Forfeit, speeches: list[Speech]):
        super().__init__(forfeit.reason)
        self.forfeit, self.speeches = forfeit, speeches


# What play builds each DebateContext with: (side, stage, visible, memory) → the context
Contexts = Callable[[Side, Stage, tuple[Speech, ...], dict[str, Any]], DebateContext]


async def play(motion: Motion, debaters: dict[Side, Debater], contexts: Contexts,
               fmt: Format = AGENT4DEBATE) -> list[Speech]:
    """Run the format's turns. contexts(side, stage, visible, memory) builds each DebateContext.

    Raises Forfeited when one side's answers fail it; when both sides' do (in a parallel group of blind turns),
    the match fails with both reasons, since neither side won anything.
    """
    speeches: list[Speech] = []
    memory: dict[Side, dict[str, Any]] = {"pro": {}, "con": {}}

    async def speak(side: Side, stage: Stage, visible: tuple[Speech, ...]) -> Speech | Forfeit:
        ctx = contexts(side, stage, visible, memory[side])
        started = now()
        try:
            draft = await debaters[side].speak(ctx)
        except TurnLapsed as exc:  # a person did not write their speech in time
            return Forfeit(side, str(exc))
        except AnswerError as exc:
            if exc.checked:  # the debater's own speech check, still failed after its re-asks: named first
                return Forfeit(side, f"{exc.checked} ({side.upper()}'s {stage} speech, still so when asked again)")
            return Forfeit(side, f"{side.upper()} could not give its {stage} speech: {exc}")
        if (problem := ctx.problem(draft.text, draft.budget)) is not None:
            return Forfeit(side, f"{problem.check}: {side.upper()}'s {stage} speech: {problem.detail}")
        return Speech(stage, side, draft.text, tuple(draft.references), started, now(),
                      ctx.llm.log.roles(stage, side), draft.cut)

    for group, parallel in _groups(fmt):
        if parallel:
            visible = tuple(s for s in speeches if s.stage != group[0].stage)  # blind: earlier stages only
            # Every speech is waited for, so that a failure of one never leaves another running unowned.
            given = await asyncio.gather(*(speak(t.side, t.stage, visible) for t in group), return_exceptions=True)
        else:
            given = []
            for t in group:
                # all speeches so far: a forfeit ends the loop, so given holds speeches alone
                made = [g for g in given if isinstance(g, Speech)]
                given.append(await speak(t.side, t.stage, tuple(speeches + made)))
                if isinstance(given[-1], Forfeit):
                    break
        forfeits = [f for f in given if isinstance(f, Forfeit)]
        for failure in given:
            # A person's turn still open beside a forfeit (a lapsed turn's) waits for nothing: the forfeit ends the
            # match. Any other failure (a provider's, a bug) raises: no one forfeits.
            if isinstance(failure, BaseException) and not (forfeits and isinstance(failure, AwaitingPerson)):
                raise failure
        if len(forfeits) > 1:
            raise ArenaError("both sides could not debate: " + "; ".join(f.reason for f in forfeits))
        speeches += [s for s in given if isinstance(s, Speech)]
        if forfeits:
            raise Forfeited(forfeits[0], speeches)
    return speeches


def _groups(fmt: Format) -> list[tuple[tuple[Turn, ...], bool]]:
    """The format's turns in playing groups: (turns, parallel). A stage's blind turns are one parallel group;
    every other turn is played alone, in order."""
    groups: list[tuple[tuple[Turn, ...], bool]] = []
    for turn in fmt.turns:
        last = groups[-1][0] if groups else ()
        if turn.blind and last and last[-1].blind and last[-1].stage == turn.stage:
            groups[-1] = (last + (turn,), True)
        else:
            groups.append(((turn,), turn.blind))
    return groups


def _as_text(messages: list[Message]) -> str:
    return "\n\n".join(f"[{m.get('role', '')}]\n{m.get('content', '')}" for m in messages)
