"""The live progress of `arena run`: matches done, running and failed; what each match under way is doing; retries
and re-asks; LLM calls, tokens (the share of prompt tokens the providers read from their prompt caches, when any),
cost; ETA.

On a terminal a few lines are redrawn in place: the counts, then a line per match under way (its id, time so far,
stage, side and role of its latest call, how long that call has run, and whether it is a re-ask and why, or a
retry and after what), at most MAX_SHOWN of them and never wider than the terminal; a retry or a failure is
printed above them and stays. Anywhere else (a log file, CI, a pipe) the display prints a plain line per finished
match, a line per retry and per re-ask, and a summary, so logs stay readable.
The calls are counted from the gateway's events, a call per ledger row (every try: first tries, retries, re-asks,
timeouts, cache hits), and the tokens and cost of every answer, so that the count moves with each try and the
summary's equals the ledger's rows for the run's matches.
What it is told (a server's error, a match id, a name) it shows as a terminal may be sent it (arena.base.terminal):
only the frame's own sequences, which redraw it, reach the terminal as controls.
"""
from __future__ import annotations

import re
import shutil
import sys
import time
import unicodedata
from dataclasses import dataclass, replace
from typing import Callable, TextIO

from arena.base import terminal
from arena.base.clock import span
from arena.base.errors import plural
from arena.gateway.llm import CallEvent
from arena.domain.records import Step

REDRAW_S = 0.25  # at most four redraws a second: often enough to look live, rarely enough to cost nothing
MAX_SHOWN = 8  # matches shown under way; the rest are counted on one line
ERROR_CHARS = 100  # a retry's error as shown: its first words are what tells one failure from another


@dataclass(frozen=True)
class _Doing:
    """A match's latest call as the display shows it: its step, since when (its first try, waiting included),
    whether it waits for a slot of its model, whether it is a re-ask, and which try it is."""

    step: Step
    since: float
    waiting: bool = False  # queued behind the model's other calls, not sent yet
    reask: str = ""  # "re-ask 2 (speech check: echo)": the call asks again after an unusable answer
    attempt: str = ""  # "try 2 of 5 after Timeout 408" after a retry of this call
    again: bool = False  # a retry or a re-ask waits: the next call of this step is it


class Progress:
    """Counts fed by match events (started, finished) and the gateway's events (`told`: calls queued, sent,
    answered, retried, re-asked, taken from the cache)."""

    def __init__(self, total: int, concurrency: int, say: Callable[[str], None] | None = None,
                 live: bool = False, clock: Callable[[], float] = time.monotonic, stream: TextIO | None = None,
                 size: Callable[[], tuple[int, int]] | None = None):
        self.total, self.concurrency = total, max(1, concurrency)
        told = say or terminal.say
        self.say: Callable[[str], None] = lambda line: told(terminal.shown(line))  # whoever listens, logs included
        self.live = live
        self.clock = clock
        self.stream = stream or sys.stderr  # live frames are drawn here
        self.size = size or _terminal  # (columns, lines), asked per frame: a resized terminal is followed
        self.started_at = clock()
        self.running: dict[str, float] = {}  # match id -> when it started
        self.doing: dict[str, _Doing] = {}  # match id -> its latest call
        self.done = self.failed = self.retries = self.reasks = 0
        self.busy_s = 0.0  # the finished matches' durations summed: a mean for the estimate, in flat memory
        self.calls = self.cached = self.unpriced = self.tokens = 0  # calls: the ledger rows of the run's calls
        # the answers' prompt tokens, and those of them the providers read from their prompt caches
        self.prompt_tokens = self.cached_tokens = 0
        self.cost = 0.0
        self._drawn = float("-inf")
        self._height = 0  # lines of the frame now on screen (the cursor at the end of its last)

    # --- events --------------------------------------------------------------------------
    def told(self, event: CallEvent) -> None:
        """A gateway listener (LLMGateway.listeners): a call of a match under way waiting for its server, sent,
        answered, failed and to be tried again, asked again after an unusable answer, or answered from the cache;
        or its server's cap lowered (a line that says so, whatever the match)."""
        if event.kind == "capped":
            self._lasting(event.error)
            return
        self._count(event)
        match_id = event.tag.match_id
        if match_id not in self.running or event.kind in ("answered", "cached"):  # counted; the call is done
            self.draw()
            return
        step = Step.of(event.tag.stage, event.tag.side, event.tag.role, event.tag.judge)
        before = self.doing.get(match_id)
        same = before is not None and before.step == step
        if event.kind == "retry":
            after = f"try {event.attempt + 1} of {event.tries} after {_head(event.error)}"
            self.doing[match_id] = (replace(before, attempt=after, again=True) if before is not None and same
                                    else _Doing(step, self.clock(), attempt=after, again=True))
            self._lasting(retry_line(event))
            return
        if event.kind == "reask":  # a new call of the step, which says why it is made
            self.doing[match_id] = _Doing(step, self.clock(), reask=f"re-ask {event.attempt} ({_why(event)})",
                                          again=True)
            if not self.live:  # on a terminal the match's line says it
                self.say(reask_line(event))
            self.draw()
            return
        if event.kind == "queued":  # a retried or re-asked call's next try keeps its count and its start
            self.doing[match_id] = (replace(before, waiting=True) if before is not None and same and before.again
                                    else _Doing(step, self.clock(), waiting=True))
        elif before is not None and same and (before.waiting or before.again):  # sent, as this call was waiting to be
            self.doing[match_id] = replace(before, waiting=False, again=False)
        else:
            self.doing[match_id] = _Doing(step, self.clock())
        self.draw()

    def _count(self, event: CallEvent) -> None:
        """A call per ledger row (a try sent, or a cache hit); every answer's tokens and cost; retries, re-asks."""
        kind, usage = event.kind, event.usage
        self.calls += kind in ("sent", "cached")
        self.cached += kind == "cached"
        self.retries += kind == "retry"
        self.reasks += kind == "reask"
        if kind in ("answered", "cached"):
            self.tokens += usage.prompt_tokens + usage.completion_tokens
            self.prompt_tokens += usage.prompt_tokens
            self.cached_tokens += usage.cached_tokens
        if kind != "answered":
            return
        if usage.cost is None:
            self.unpriced += 1  # litellm does not know the model's price: shown, never guessed as 0
        else:
            self.cost += usage.cost

    def _lasting(self, line: str) -> None:
        """A line that stays: above the frame on a terminal, else said."""
        if self.live:
            self._print(line)
        else:
            self.say(line)

    def started(self, match_id: str) -> None:
        self.running[match_id] = self.clock()
        self.draw()

    def finished(self, match_id: str, error: str | None = None) -> None:
        began = self.running.pop(match_id, None)
        self.doing.pop(match_id, None)
        seconds = self.clock() - began if began is not None else 0.0
        self.busy_s += seconds
        if error is None:
            self.done += 1
        else:
            self.failed += 1
        line = f"[{self.done + self.failed}/{self.total}] {match_id} " + (
            f"done ({seconds:.1f}s)" if error is None else f"failed: {error}")
        # On a terminal the status line already counts finished matches; failures stay on screen with their reason.
        if not self.live:
            self.say(line)
        elif error is not None:
            self._print(line)
        self.draw(force=True)

    def dropped(self, match_id: str) -> None:
        """A match stopped before its end (Ctrl-C): it is no longer running, and did not finish."""
        self.running.pop(match_id, None)
        self.doing.pop(match_id, None)

    def tick(self) -> None:
        """Time passed with nothing to tell: the elapsed times move on (the run calls this every second or so)."""
        self.draw()

    # --- rendering -----------------------------------------------------------------------
    def status(self) -> str:
        """The counts and the ETA, the ETA before the costs so that a long cost never pushes it off the line."""
        done, rest = self._counts(short=True)
        return f"{done} · ETA {self.eta()} · {rest}"

    def _counts(self, *, short: bool) -> tuple[str, str]:
        """The matches' counts, and the calls' (unpriced calls said in short, for the live line, or in words)."""
        unknown = (f" +{self.unpriced} unpriced" if short else f" (+{plural(self.unpriced, 'call')} of unknown price)"
                   ) if self.unpriced else ""
        # Of the calls, those that did not come as first asks: what a slow run spends its time on, said.
        among = [f"{self.cached} cached"] if self.cached else []
        among += [plural(n, *what) for n, what in ((self.reasks, ("re-ask",)), (self.retries, ("retry", "retries")))
                  if n]
        calls = plural(self.calls, "call") + (f" ({', '.join(among)})" if among else "")
        # The prompt tokens the providers read from their prompt caches, when any: their share of the prompts'
        share = self.cached_tokens / self.prompt_tokens if self.cached_tokens and self.prompt_tokens else 0.0
        prompts = (f" (prompt cached {share:.0%})" if short else f" (cached {share:.0%} of prompt tokens)"
                   ) if share else ""
        return (f"{self.done}/{self.total} done, {len(self.running)} running, {self.failed} failed",
                f"{calls}, {_si(self.tokens)} tokens{prompts}, ${self.cost:.4f}{unknown}")

    def eta(self) -> str:
        """Mean time of a finished match × matches left ÷ matches at once; until a match has finished there is no
        mean to go by, and the display says when there will be."""
        left = self.total - self.done - self.failed
        if left == 0:
            return "0s"
        if not self.done + self.failed:
            return "after the 1st match"
        seconds = self.busy_s / (self.done + self.failed) * left / min(self.concurrency, left)
        return span(seconds)

    def lines(self, width: int, height: int) -> list[str]:
        """The live frame: the status line, then a line per match under way (the longest-running first), at most
        MAX_SHOWN and a line fewer than the terminal has, each cut to width."""
        now = self.clock()
        out = [self.status()]
        room = max(0, min(MAX_SHOWN, height - 2))
        under_way = sorted(self.running.items(), key=lambda item: item[1])
        shown = under_way if len(under_way) <= room else under_way[:max(0, room - 1)]
        for match_id, began in shown:
            doing = self.doing.get(match_id)
            line = f"  {match_id}  {span(now - began):>6}  "
            if doing is None:
                line += "starting"
            else:
                took = span(now - doing.since) + (" waiting for the model" if doing.waiting else "")
                line += ", ".join(part for part in (_where(doing.step), took, doing.reask, doing.attempt) if part)
            out.append(line)
        if len(shown) < len(under_way):
            out.append(f"  +{len(under_way) - len(shown)} more under way")
        return [_fit(line, width) for line in out]

    def draw(self, force: bool = False) -> None:
        """Redraw the frame in place (terminals only), at most every REDRAW_S seconds."""
        now = self.clock()
        if not self.live or (not force and now - self._drawn < REDRAW_S):
            return
        self._drawn = now
        columns, rows = self.size()
        # One column short of the terminal's width: a line that filled it could wrap, and could not be redrawn.
        frame = self.lines(columns - 1, rows)
        # One write: back to the frame's first line, each line over the old one, the old lines left below erased.
        self.stream.write(self._top() + "\x1b[K\n".join(frame) + "\x1b[K\x1b[J")
        self.stream.flush()
        self._height = len(frame)

    def _top(self) -> str:
        """The cursor back to the start of the frame on screen."""
        return "\r" + (f"\x1b[{self._height - 1}A" if self._height > 1 else "")

    def _print(self, line: str) -> None:
        """A lasting line above the live frame."""
        # On one line, escaped: a newline in an error would break the frame, and a control character drive the terminal.
        self.stream.write(self._top() + "\x1b[J" + terminal.one_line(line) + "\n")
        self._height = 0
        self.draw(force=True)

    def close(self) -> None:
        """End the display with the final counts and the time taken."""
        if self.live:
            self.stream.write(self._top() + "\x1b[J")
            self.stream.flush()
            self._height = 0
        done, rest = self._counts(short=False)
        self.say(f"after {span(self.clock() - self.started_at)}: {done} · {rest}")


def retry_line(event: CallEvent) -> str:
    """A retry as it is printed: 'retry: m00003 summary · CON writer: ERROR (try 1 of 5 failed; next in 2s)'."""
    step = Step.of(event.tag.stage, event.tag.side, event.tag.role, event.tag.judge)
    return (f"retry: {event.tag.match_id} {_where(step)}: {_short(event.error)} (try {event.attempt} "
            f"of {event.tries} failed; next in {span(event.wait_s)})")


def reask_line(event: CallEvent) -> str:
    """A re-ask as it is printed: 're-ask: m00001 constructive · PRO writer: speech check: echo (re-ask 1 of 2)'."""
    step = Step.of(event.tag.stage, event.tag.side, event.tag.role, event.tag.judge)
    return f"re-ask: {event.tag.match_id} {_where(step)}: {_why(event)} (re-ask {event.attempt} of {event.tries})"


def _why(event: CallEvent) -> str:
    """Why a call is asked again, in short: a debater's check of its answer is a speech check."""
    check, _, name = event.error.partition("check: ")
    if check or not name:
        return event.error or "unusable answer"
    return f"{'speech check' if event.tag.side and not event.tag.judge else 'check'}: {name}"


def _head(error: str) -> str:
    """An error's type and status alone ('Timeout 408'), for a line that has room for little else."""
    return terminal.one_line(error).partition(": ")[0][:40]


def _short(error: str) -> str:
    """An error in short: its type and status (arena.gateway.retry.describe's head), then the provider's message when the
    text quotes one as JSON, else the text without the exception names litellm repeats before it."""
    head, _, rest = terminal.one_line(error).partition(": ")
    quoted = re.search(r'"message"\s*:\s*"((?:[^"\\]|\\.)*)"', rest)
    rest = quoted.group(1) if quoted else re.sub(r"^(?:[\w.]+(?::| -)\s+)+", "", rest)
    return (f"{head}: {rest}" if rest else head)[:ERROR_CHARS]


def _terminal() -> tuple[int, int]:
    size = shutil.get_terminal_size((100, 24))
    return size.columns, size.lines


def _where(step: Step) -> str:
    """A step in words: 'rebuttal · PRO writer', 'judging · debatrix-mini'."""
    who = " ".join(part for part in ((step.side or "").upper(), step.role or "") if part)
    return " · ".join(part for part in (step.stage or "", who) if part) or "starting"


def _fit(text: str, width: int) -> str:
    """text on one line of at most width columns (East Asian wide characters take two), cut with '…'."""
    # The indentation kept, control characters escaped, and what else is not text (a tab, a newline) blanked.
    text = "".join(c if c.isprintable() else " " for c in terminal.shown(text))
    columns = [2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text]
    if sum(columns) <= width:
        return text
    used, cut = 0, 0
    while cut < len(text) and used + columns[cut] <= width - 1:
        used += columns[cut]
        cut += 1
    return text[:cut] + "…"


def _si(n: int) -> str:
    return f"{n / 1e6:.1f}M" if n >= 1e6 else f"{n / 1e3:.1f}k" if n >= 1e4 else str(n)
