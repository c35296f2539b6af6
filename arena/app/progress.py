"""The live progress of `arena run`: matches done, running and failed; LLM calls, tokens, cost; ETA.

On a terminal one status line is redrawn in place; anywhere else (a log file, CI, a pipe)
the display prints a plain line per finished match and a summary, so logs stay readable.
"""
from __future__ import annotations

import shutil
import sys
import time
from typing import Callable

REDRAW_S = 0.25  # at most four redraws a second: often enough to look live, rarely enough to cost nothing


class Progress:
    """Counts fed by match events (started, finished) and by every completed LLM call (`call`)."""

    def __init__(self, total: int, concurrency: int, say: Callable[[str], None] | None = None,
                 live: bool = False, clock: Callable[[], float] = time.monotonic):
        self.total, self.concurrency = total, max(1, concurrency)
        self.say = say or (lambda line: print(line, file=sys.stderr, flush=True))
        self.live = live
        self.clock = clock
        self.started_at = clock()
        self.running: dict[str, float] = {}  # match id -> when it started
        self.done = self.failed = 0
        self.busy_s = 0.0  # the finished matches' durations summed: a mean for the estimate, in flat memory
        self.calls = self.cached = self.unpriced = self.tokens = 0
        self.cost = 0.0
        self._drawn = 0.0

    # --- events --------------------------------------------------------------------------
    def call(self, tag, completion) -> None:
        """An AgentLog listener: one completed LLM call (a cache hit counts as a call that cost nothing)."""
        usage = completion.usage
        self.used(usage.calls, usage.prompt_tokens + usage.completion_tokens, usage.cost, completion.cached)

    def used(self, calls: int, tokens: int, cost: float | None, cached: bool) -> None:
        """What one completed LLM call used (worker processes relay these)."""
        self.calls += calls
        self.tokens += tokens
        if cached:
            self.cached += 1
        elif cost is None:
            self.unpriced += calls  # litellm does not know the model's price: shown, never guessed as 0
        else:
            self.cost += cost
        self.draw()

    def started(self, match_id: str) -> None:
        self.running[match_id] = self.clock()
        self.draw()

    def finished(self, match_id: str, error: str | None = None) -> None:
        began = self.running.pop(match_id, None)
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
        self.draw()

    def dropped(self, match_id: str) -> None:
        """A match stopped before its end (Ctrl-C): it is no longer running, and did not finish."""
        self.running.pop(match_id, None)

    # --- rendering -----------------------------------------------------------------------
    def status(self) -> str:
        cost = f"${self.cost:.4f}" + (f" (+{self.unpriced} calls of unknown price)" if self.unpriced else "")
        cached = f" ({self.cached} cached)" if self.cached else ""
        return (f"{self.done}/{self.total} done, {len(self.running)} running, {self.failed} failed · "
                f"{self.calls} calls{cached}, {_si(self.tokens)} tokens, {cost} · ETA {self.eta()}")

    def eta(self) -> str:
        """Mean time of a finished match × matches left ÷ matches at once; '?' until one has finished."""
        left = self.total - self.done - self.failed
        if left == 0:
            return "0s"
        if not self.done + self.failed:
            return "?"
        seconds = self.busy_s / (self.done + self.failed) * left / min(self.concurrency, left)
        return _clock(seconds)

    def draw(self, force: bool = False) -> None:
        """Redraw the status line in place (terminals only), at most every REDRAW_S seconds."""
        now = self.clock()
        if not self.live or (not force and now - self._drawn < REDRAW_S):
            return
        self._drawn = now
        width = shutil.get_terminal_size((100, 20)).columns - 1  # a wrapped line could not be redrawn in place
        sys.stderr.write("\r" + self.status()[:width] + "\x1b[K")
        sys.stderr.flush()

    def _print(self, line: str) -> None:
        """A lasting line above the live status line."""
        sys.stderr.write("\r\x1b[K" + line + "\n")
        self._drawn = 0.0
        self.draw(force=True)

    def close(self) -> None:
        """End the display with the final counts and the time taken."""
        if self.live:
            sys.stderr.write("\r\x1b[K")
        counts = self.status().rsplit(" · ETA", 1)[0]
        self.say(f"after {_clock(self.clock() - self.started_at)}: {counts}")


def _si(n: int) -> str:
    return f"{n / 1e6:.1f}M" if n >= 1e6 else f"{n / 1e3:.1f}k" if n >= 1e4 else str(n)


def _clock(seconds: float) -> str:
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds}s"
    minutes, seconds = divmod(seconds, 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{seconds:02d}s"
