"""People's turns to speak on the web: what a web human's turn shows them (its brief, made from the protocol's
DebateContext, so they see exactly what an LLM debater of that side would), the speech checks their speech
passes before it is taken, its longest length, and where a turn stands (what `arena debaters status`, the web pages
and the run all go by)."""
from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Literal, Protocol

from arena.domain import speechchecks
from arena.base.clock import now
from arena.base.errors import ArenaError
from arena.domain.formats import Format
from arena.domain.records import Brief, Budget, HumanTurn, Motion, Speech

# How the forfeit of a turn left unwritten past its deadline begins (its match's forfeit_reason): what tells it from
# a model's unusable answers.
DEADLINE_PREFIX = "deadline:"
# How far past its turn's budget a person's speech may run, in the budget's units (words, or characters for zh/ja):
# room for a person who writes long, none for a speech that wins a length-rewarding judge by sheer bulk.
OVER_BUDGET = 1.5

# Where a person's turn stands: its speech submitted; open (to write); lapsed (its deadline passed with no speech: the
# next run forfeits its side); missed (its match went on without it: its side forfeited, or the other side's did).
Standing = Literal["submitted", "open", "lapsed", "missed"]


class AwaitingPerson(Exception):
    """A web human's speech is not in yet: the match waits for it (the engine parks it and plays other matches)."""

    def __init__(self, turn: HumanTurn):
        super().__init__(f"{turn.entry} has still to write the {turn.side.upper()} {turn.stage} speech of match "
                         f"{turn.match_id} (by {turn.deadline})")
        self.turn = turn


class TurnLapsed(ArenaError):
    """A person's turn passed its deadline with no speech: that side forfeits (the reason begins "deadline:")."""


class TurnBook(Protocol):
    """Where turns are kept (arena.store.Store)."""

    def open_turn(self, match_id: str, stage: str, side: str, entry: str, brief: Brief,
                  deadline: str) -> HumanTurn: ...


@dataclass(frozen=True)
class Desk:
    """Where a match's web debaters take their turns: the turn is opened (or found, when a run replays the match)
    with what the protocol shows that side; its speech once submitted, else AwaitingPerson, else past its deadline
    TurnLapsed."""

    book: TurnBook
    match_id: str
    deadline_h: float

    def speech(self, entry: str, motion: Motion, fmt: Format, stage: str, side: str, visible: tuple[Speech, ...],
               language: str, budget: tuple[int, str]) -> str:
        deadline = (datetime.now(timezone.utc) + timedelta(hours=self.deadline_h)).isoformat(timespec="microseconds")
        turn = self.book.open_turn(self.match_id, stage, side, entry,
                                   brief(motion, fmt, stage, side, visible, language, budget), deadline)
        if turn.speech is not None:
            return turn.speech
        if lapsed(turn):
            raise TurnLapsed(f"{DEADLINE_PREFIX} {entry} wrote no {side.upper()} {fmt.label(stage)} speech by "
                             f"{turn.deadline}")
        raise AwaitingPerson(turn)


def brief(motion: Motion, fmt: Format, stage: str, side: str, visible: tuple[Speech, ...], language: str,
          budget: tuple[int, str]) -> Brief:
    """What a person is shown for a turn, as stored with it: the motion, the stage (its title, what it is for, its
    place among the format's turns), the budget, and the speeches the protocol lets that side see, in order."""
    turn = fmt.turn(stage, side)
    return Brief(motion, fmt.name, turn.title_in(language), turn.brief_in(language),
                 (fmt.number(stage, side), len(fmt.turns)), language, Budget(*budget), visible,
                 {s.stage: fmt.title_of(s.stage, language) for s in visible})


def problem(turn: HumanTurn, text: str, fmt: Format, min_share: float,
            keys: frozenset[str] = frozenset()) -> speechchecks.Problem | None:
    """The first speech check a person's speech fails, given what they were shown: an empty speech, one longer than
    the turn takes (too_long), then arena.domain.speechchecks.in_debate's (a placeholder, an order to the judge, an
    echo...); it is refused with the reason before it is taken. keys: those of the match's transcripts, which no
    speech may hold."""
    if not text.strip():  # whatever the turn's least share: a person's empty speech is no speech
        return speechchecks.Problem("too-short", "the speech is empty")
    if (overlong := too_long(turn.brief, text)) is not None:  # first: the other checks need not read all of it
        return overlong
    shown = turn.brief
    return speechchecks.in_debate(text, side=turn.side, stage=turn.stage, motion=shown.motion, shown=shown.visible,
                                  fmt=fmt, language=shown.language, share=min_share, budget=shown.budget.amount,
                                  keys=keys)


def most(budget: Budget) -> int:
    """The longest speech a person's turn with this budget takes: OVER_BUDGET times it, in its units."""
    return math.floor(OVER_BUDGET * budget.amount)


def too_long(brief: Brief, text: str) -> speechchecks.Problem | None:
    """A "too-long" problem naming the speech's length when it is longer than its turn takes (most), else None: the
    one rule of a person's longest speech, which the web's form and the store's write of a speech both go by."""
    amount, unit = speechchecks.length(text, brief.language)
    longest = most(brief.budget)
    if amount <= longest:
        return None
    return speechchecks.Problem("too-long", f"speech: {amount} {unit}, over the {longest} this turn takes "
                                            f"({OVER_BUDGET:g} × its budget of {brief.budget.amount})")


def lapsed(turn: HumanTurn, at: str | None = None) -> bool:
    """Whether a turn's deadline has passed (at a time, default now) with no speech in; compared as text, as the store
    compares them (every time is written alike: arena.base.clock)."""
    return not turn.submitted and turn.deadline <= (at or now())


def standing(turn: HumanTurn, match_done: bool, at: str | None = None) -> Standing:
    """Where a turn stands (Standing), its match done or not: what `arena debaters status` counts and the person's
    pages show alike. A speech is taken only for an open turn."""
    if turn.submitted:
        return "submitted"
    if match_done:
        return "missed"
    return "lapsed" if lapsed(turn, at) else "open"
