"""Debate formats as data: a format is the list of its turns, each with its stage, side, length budget and what
its speaker may see. The protocol (arena.match.protocol) plays any format; judges, the site and the ballot page render
any format's turns in order, under their titles.

A turn sees every turn before it, unless it is blind: a blind turn is written independently and sees only the
turns of earlier stages (the Agent4Debate paper's stage 1, where neither constructive sees the other), so the
blind turns of one stage are played in parallel. A turn's `workflow` says which of the agent4debate debater's
three workflows (constructive, rebuttal, summary) plays it; a turn with none cannot be played by that debater.

Built in: `agent4debate` (the default: the paper's three stages) and `lechmazur` (lechmazur/debate's ten turns).
A workspace declares its own in arena.toml (`[[formats]]`, arena.workspace.config: `declared` below is those, by name);
plug-ins add formats through the entry-point group `arena.domain.formats`, each a Format.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Protocol, TypeVar

from arena.base.errors import UserError
from arena.domain.records import Side
from arena.base.registry import Registry

CHARACTER_LANGUAGES = ("zh", "ja")  # counted in characters, as their debate rules count speeches
WORKFLOWS = ("constructive", "rebuttal", "summary")  # the agent4debate debater's
_STAGE_KEY = re.compile(r"[a-z][a-z0-9_]{0,39}")
_ZH_DIGITS = "零一二三四五六七八九"
_LABELS = {"pro": "PRO", "con": "CON"}
_ZH_SIDES = {"pro": "正方", "con": "反方"}


class _Spoken(Protocol):
    """What ordered() sorts: anything said at a turn, with its stage and side (a Speech)."""

    @property
    def stage(self) -> str: ...
    @property
    def side(self) -> Side: ...


S = TypeVar("S", bound=_Spoken)


@dataclass(frozen=True)
class Turn:
    """One speech of a format: whose, in which stage, how long, and what its speaker sees."""

    stage: str  # the stage's key: stored with the speech; (stage, side) is unique within a format
    side: Side
    title: str  # the stage's name for people, in English: "Opening", "Pressure Questions"
    words: int  # length budget in words
    chars: int  # length budget in characters, for languages written without spaces (CHARACTER_LANGUAGES)
    blind: bool = False  # written independently: sees only the turns of earlier stages
    workflow: str | None = None  # the agent4debate workflow that plays it (WORKFLOWS); None: that debater cannot
    brief: str = ""  # what the turn is for, told to debaters whose prompts are not written for its stage
    titles: Mapping[str, str] = field(default_factory=dict)  # the title in other languages: {"zh": "立论"}
    briefs: Mapping[str, str] = field(default_factory=dict)  # the brief in other languages
    # The least share of its budget a speech of this turn must reach (arena.domain.speechchecks' too-short); None: the
    # arena's [arena] min_speech_share. A turn whose point is brevity (a few pointed questions) sets a lower one.
    min_share: float | None = None

    def budget(self, language: str) -> tuple[int, str]:
        """(amount, unit): characters where the language counts them, else words."""
        return (self.chars, "characters") if language in CHARACTER_LANGUAGES else (self.words, "words")

    def title_in(self, language: str) -> str:
        return self.titles.get(language, self.title)

    def brief_in(self, language: str) -> str:
        return self.briefs.get(language, self.brief)


@dataclass(frozen=True)
class Format:
    """A debate format: its turns in speaking order. A stage's turns stand together."""

    name: str
    title: str
    description: str
    turns: tuple[Turn, ...]

    def __post_init__(self) -> None:
        seen: set[tuple[str, str]] = set()
        closed: set[str] = set()
        for k, turn in enumerate(self.turns):
            where = f"debate format {self.name!r}, turn {k + 1}"
            if not _STAGE_KEY.fullmatch(turn.stage):
                raise ValueError(f"{where}: stage {turn.stage!r} is not a key of lowercase letters, digits and '_'")
            if turn.side not in _LABELS or (turn.stage, turn.side) in seen:
                raise ValueError(f"{where}: side {turn.side!r} is not 'pro' or 'con', or speaks twice in its stage")
            if turn.stage in closed:
                raise ValueError(f"{where}: stage {turn.stage!r} comes back after another stage")
            if turn.workflow not in (None, *WORKFLOWS):
                raise ValueError(f"{where}: workflow {turn.workflow!r} is not one of {', '.join(WORKFLOWS)}")
            if k and self.turns[k - 1].stage != turn.stage:
                closed.add(self.turns[k - 1].stage)
            seen.add((turn.stage, turn.side))
        if not self.turns:
            raise ValueError(f"debate format {self.name!r} has no turns")

    @property
    def stages(self) -> tuple[str, ...]:
        """The stages' keys in speaking order."""
        return tuple(dict.fromkeys(t.stage for t in self.turns))

    def stage_turns(self, stage: str) -> tuple[Turn, ...]:
        return tuple(t for t in self.turns if t.stage == stage)

    def turn(self, stage: str, side: str) -> Turn:
        for t in self.turns:
            if (t.stage, t.side) == (stage, side):
                return t
        raise KeyError(f"debate format {self.name!r} has no {side} turn in stage {stage!r}")

    def title_of(self, stage: str, language: str = "en") -> str:
        """A stage's title in language (English where it has none there); a stage not of this format, its key."""
        turns = self.stage_turns(stage)
        return turns[0].title_in(language) if turns else stage.replace("_", " ")

    def label(self, stage: str, language: str = "en") -> str:
        """A stage's title as running text names it: "constructive", "pressure questions"; "立论"."""
        return self.title_of(stage, language).lower()

    def place(self, stage: str, language: str = "en") -> str:
        """Where a stage stands and who speaks in it: "stage 2 of 3: PRO speaks first, then CON"; in Chinese
        "驳论（第二阶段，共三阶段：正方先发言，反方后发言）"."""
        number, total, turns = self.stages.index(stage) + 1, len(self.stages), self.stage_turns(stage)
        blind = all(t.blind for t in turns)
        if language == "zh":
            title = self.title_of(stage, "zh")
            sides = [_ZH_SIDES[t.side] for t in turns]
            how = (f"双方各自独立{title}，互不知晓对方内容" if blind and len(turns) > 1 else
                   f"{sides[0]}发言" if len(turns) == 1 else
                   f"{sides[0]}先发言，{sides[1]}后发言" if len(turns) == 2 else "、".join(sides) + "依次发言")
            return f"{title}（第{_zh_number(number)}阶段，共{_zh_number(total)}阶段：{how}）"
        sides = [_LABELS[t.side] for t in turns]
        how = (f"both teams {'open' if number == 1 else 'speak'} independently" if blind and len(turns) > 1 else
               f"{sides[0]} speaks" if len(turns) == 1 else
               f"{sides[0]} speaks first, then {sides[1]}" if len(turns) == 2 else
               ", then ".join(sides) + " in turn")
        return f"stage {number} of {total}: {how}"

    def number(self, stage: str, side: str) -> int:
        """A turn's place in the whole debate, from 1."""
        return self.turns.index(self.turn(stage, side)) + 1

    def ordered(self, speeches: Iterable[S]) -> list[S]:
        """Speeches (anything with .stage and .side) in this format's speaking order; those of turns it does not
        have after them, in the order given."""
        rank = {(t.stage, t.side): k for k, t in enumerate(self.turns)}
        given = list(speeches)
        return [s for _, s in sorted(enumerate(given),
                                     key=lambda p: (rank.get((p[1].stage, p[1].side), len(rank)), p[0]))]

    def out_of_turn(self, spoken: Iterable[tuple[str, str]]) -> tuple[int, str] | None:
        """The first of the (stage, side) pairs, in the order they were spoken, that is no turn of this format or
        comes no later than one spoken before it, and what is wrong with it: (its index, the problem); None when
        each is a turn, in speaking order (a match that stopped early, at a forfeit, speaks a prefix of them)."""
        rank: dict[tuple[str, str], int] = {(t.stage, t.side): k for k, t in enumerate(self.turns)}
        last = -1
        for k, (stage, side) in enumerate(spoken):
            if stage not in self.stages:
                return k, (f"stage {stage!r} is not a stage of debate format {self.name!r} (its stages: "
                           f"{', '.join(self.stages)})")
            here = rank.get((stage, side))
            if here is None:
                return k, f"side {side!r} has no turn in stage {stage!r} of debate format {self.name!r}"
            if here == last:
                return k, f"the {side} turn of stage {stage!r} is spoken twice"
            if here < last:
                before = self.turns[last]
                return k, (f"the {side} turn of stage {stage!r} is spoken after the {before.side} turn of stage "
                           f"{before.stage!r}, which debate format {self.name!r} speaks after it")
            last = here
        return None

    def unmapped(self) -> tuple[Turn, ...]:
        """The turns no agent4debate workflow plays."""
        return tuple(t for t in self.turns if t.workflow is None)


def _zh_number(n: int) -> str:
    """1 → 一, 10 → 十, 12 → 十二, 25 → 二十五 (up to 99)."""
    tens, ones = divmod(n, 10)
    if not tens:
        return _ZH_DIGITS[ones]
    return (_ZH_DIGITS[tens] if tens > 1 else "") + "十" + (_ZH_DIGITS[ones] if ones else "")


def _three_stages() -> tuple[Turn, ...]:
    titles = {"constructive": ("Constructive", "立论"), "rebuttal": ("Rebuttal", "驳论"),
              "summary": ("Summary", "总结陈词")}
    # Budgets as the paper's debates ran them: 450/400/300 words, 1200/1000/800 characters.
    spec: tuple[tuple[str, tuple[Side, Side], int, int, bool], ...]
    spec = (("constructive", ("pro", "con"), 450, 1200, True), ("rebuttal", ("pro", "con"), 400, 1000, False),
            ("summary", ("con", "pro"), 300, 800, False))
    return tuple(Turn(stage, side, titles[stage][0], words, chars, blind=blind, workflow=stage,
                      titles={"zh": titles[stage][1]})
                 for stage, sides, words, chars, blind in spec for side in sides)


AGENT4DEBATE = Format(
    "agent4debate", "Agent4Debate (three stages)",
    "The Agent4Debate paper's protocol: constructive speeches written independently, then rebuttals (PRO first), "
    "then summaries (CON first).",
    _three_stages())


def _lechmazur() -> tuple[Turn, ...]:
    # (stage, title, zh title, words, chars, workflow, brief, zh brief); PRO speaks first in every stage.
    spec = (
        ("opening", "Opening", "开篇陈词", 350, 950, "constructive",
         "Open your side's case: the terms that matter, how the judge should decide, and your main arguments, each "
         "with its reasoning and support. If the other side has opened already, build your case so that it meets "
         "theirs.",
         "阐明我方立场：界定关键概念，提出评判标准，展开主要论点，每个论点都要有推理和支撑。如果对方已经开篇，"
         "我方的论证要与之针锋相对。"),
        ("rebuttal_1", "Rebuttal 1", "第一轮反驳", 350, 950, "rebuttal",
         "Answer the other side's case: state each of its main arguments faithfully, then show what is missing or "
         "wrong in it; rebuild your own points where they were attacked.",
         "回应对方的立论：先如实复述对方的每个主要论点，再指出其缺漏或错误；我方受到攻击的论点，加以补强。"),
        ("pressure_questions", "Pressure Questions", "压力质询", 120, 320, None,
         "Put two or three short, pointed questions to the other side, each aimed at the weakest link of its "
         "case. Ask; do not argue at length.",
         "向对方提出两到三个简短而尖锐的问题，每个问题都指向对方论证中最薄弱的一环。只提问，不展开论证。"),
        ("rebuttal_2", "Rebuttal 2", "第二轮反驳", 350, 950, "rebuttal",
         "Answer the questions the other side put to you, directly and first; then press the clashes that remain "
         "and say why your side wins each.",
         "首先直接回答对方向我方提出的问题；然后继续推进尚存的交锋，说明我方为何在每一处交锋中占优。"),
        ("closing", "Closing", "总结陈词", 250, 650, "summary",
         "Close your side's case: name the clashes the debate turned on, say why your side won them, and weigh "
         "them. No new arguments.",
         "为我方总结：指出决定这场辩论的几处交锋，说明我方为何赢下它们，并加以权衡比较。不得提出新论点。"),
    )
    # Two pointed questions take 20-30 words: lechmazur's own debates ask them in as few as 23 of the 120.
    return tuple(Turn(stage, side, title, words, chars, workflow=workflow, brief=brief, titles={"zh": zh_title},
                      briefs={"zh": zh_brief}, min_share=0.1 if stage == "pressure_questions" else None)
                 for stage, title, zh_title, words, chars, workflow, brief, zh_brief in spec for side in ("pro", "con"))


LECHMAZUR = Format(
    "lechmazur", "lechmazur/debate (ten turns)",
    "lechmazur/debate's format: Opening, Rebuttal 1, Pressure Questions, Rebuttal 2 and Closing, PRO first in "
    "each; every turn sees every turn before it.",
    _lechmazur())

BUILTIN = {f.name: f for f in (AGENT4DEBATE, LECHMAZUR)}
FORMATS = Registry("debate format", "arena.domain.formats", {name: f"arena.domain.formats:{name.upper()}" for name in BUILTIN})


def format_names(declared: Mapping[str, Format] | None = None) -> list[str]:
    """Every format's name: built-in, plug-in and declared in arena.toml."""
    return sorted({*FORMATS.names(), *(declared or {})})


def known(name: str, declared: Mapping[str, Format] | None = None) -> bool:
    return name in BUILTIN or name in (declared or {}) or name in format_names()


def get_format(name: str, declared: Mapping[str, Format] | None = None) -> Format:
    """The format called name (built-in, declared, then plug-in); UserError naming the known ones otherwise, or a
    plug-in that is no Format."""
    if name in BUILTIN:  # without looking at plug-ins: a transcript renders with its format
        return BUILTIN[name]
    if declared and name in declared:
        return declared[name]
    if name not in format_names():
        raise UserError(f"unknown debate format {name!r}; known: {', '.join(format_names(declared))}")
    found = FORMATS.get(name)
    if not isinstance(found, Format) or found.name != name:
        raise UserError(f"the plug-in debate format {name!r} ({FORMATS.source(name)}, entry-point group "
                        f"arena.domain.formats) is not an arena.domain.formats.Format named {name!r}")
    return found


def shown(name: str, declared: Mapping[str, Format] | None = None) -> Format:
    """The format to show a match of name in: its own; for a name no longer known (a plug-in gone, a declaration
    removed), the default, whose order and titles leave stages not its own last, in stored order, named by keys."""
    return get_format(name, declared) if known(name, declared) else AGENT4DEBATE


def words_for(stage: str) -> int | None:
    """The words budget of a built-in format's stage of that key (the first such turn): what the offline
    simulator, which sees only a call's stage, sizes a speech by."""
    return next((t.words for f in BUILTIN.values() for t in f.turns if t.stage == stage), None)
