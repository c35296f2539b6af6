"""The `human` debater: a person writes each speech, in an editor, in prepared files, or on the web.

No LLM is called for a human's speech (an entry's `model` is still required by arena.toml;
by convention it is "human/<name>"). In the editor, the person is briefed with exactly what
the protocol lets that side see — the same transcript an LLM debater would get.
"""
from __future__ import annotations

import asyncio
import os
import shlex
import subprocess
import tempfile
import threading
from pathlib import Path

from arena.base.errors import ArenaError
from arena.match.protocol import DebateContext, Draft
from arena.domain.records import Entry
from debaters.params import LENGTHS, Length, Param, length, resolve

MARKER = "=" * 20 + " Write your speech below this line " + "=" * 20

# One terminal: when both sides are human, their editors must not open at the same time.
_TERMINAL = threading.Lock()


def _command_line(value: str) -> bool:
    try:
        return value == "" or bool(shlex.split(value))
    except ValueError:
        return False


class HumanDebater:
    """Reads each speech from `speeches_dir`, opens an editor on a briefing and takes what is typed, or (via = "web")
    takes it from the person's turn on the web (arena.match.turns.Desk: the match waits until it is written)."""

    uses_model = False  # `arena check` and the run's probe leave it alone

    PARAMS = {
        **LENGTHS,
        "speeches_dir": Param("", (str,), "folder of prepared speeches named <stage>-<side>.md or <stage>.md "
                                          "(relative: to the current folder); empty: write in an editor"),
        "editor": Param("", (str,), "editor command line, e.g. 'code --wait' (empty: $VISUAL, then $EDITOR, then vi)",
                        _command_line, "a command line (balanced quotes), or empty"),
        "via": Param("editor", (str,), "where the person writes: 'editor' (this terminal, or speeches_dir), or 'web' "
                     "(their private link of `arena debaters issue`, in `arena serve`; the match waits for them)",
                     lambda value: value in ("editor", "web"), "editor or web"),
    }

    def __init__(self, entry: Entry):
        self.name = entry.name
        self.params = resolve(entry, self.PARAMS)
        self.on_the_web = entry.on_the_web

    async def speak(self, ctx: DebateContext) -> Draft:
        budget = length(self.params, ctx.turn, ctx.language)
        if self.on_the_web:
            if ctx.desk is None:
                raise ArenaError(f"human entry {self.name!r} writes on the web (via = \"web\"), and nothing here "
                                 "takes its turns")
            text = ctx.desk.speech(self.name, ctx.motion, ctx.format, ctx.stage, ctx.side, ctx.visible, ctx.language,
                                   (budget.amount, budget.unit))
            return Draft(text, budget=budget.amount)
        if self.params["speeches_dir"]:
            text = self._from_file(ctx)
        else:
            # The person may take minutes; the other side and the progress display keep running.
            text = await asyncio.to_thread(self._from_editor, ctx)
        return Draft(text, budget=budget.amount)

    def _from_file(self, ctx: DebateContext) -> str:
        folder = Path(self.params["speeches_dir"]).resolve()
        candidates = [folder / f"{ctx.stage}-{ctx.side}.md", folder / f"{ctx.stage}.md"]
        path = next((p for p in candidates if p.is_file()), None)
        if path is None:
            raise ArenaError(f"human entry {self.name!r}: no {ctx.stage} speech for {ctx.side.upper()}: "
                             f"neither {candidates[0]} nor {candidates[1]} exists")
        try:
            text = path.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as exc:
            raise ArenaError(f"human entry {self.name!r}: cannot read {path}: {exc}") from None
        if not text:
            raise ArenaError(f"human entry {self.name!r}: {path} is empty; a speech needs text")
        return text

    def _from_editor(self, ctx: DebateContext) -> str:
        command = editor_command(self.params["editor"])
        handle, name = tempfile.mkstemp(prefix=f"arena-{ctx.stage}-{ctx.side}-", suffix=".md")
        path = Path(name)
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                out.write(briefing(ctx, length(self.params, ctx.turn, ctx.language)))
            with _TERMINAL:
                try:
                    status = subprocess.run([*command, str(path)], check=False).returncode
                except OSError as exc:
                    raise ArenaError(f"human entry {self.name!r}: cannot start editor {command[0]!r}: "
                                     f"{exc.strerror or exc}") from None
            if status != 0:
                raise ArenaError(f"human entry {self.name!r}: editor {shlex.join(command)!r} exited with "
                                 f"status {status}; the {ctx.stage} speech was not taken")
            written = path.read_text(encoding="utf-8", errors="replace")
        finally:
            path.unlink(missing_ok=True)
        lines = written.splitlines()
        marks = [i for i, line in enumerate(lines) if line.strip() == MARKER]
        if not marks:
            raise ArenaError(f"human entry {self.name!r}: the line '{MARKER}' was removed from the briefing, "
                             f"so the {ctx.stage} speech cannot be told apart from it")
        speech = "\n".join(lines[marks[0] + 1:]).strip()
        if not speech:
            raise ArenaError(f"human entry {self.name!r} wrote no {ctx.stage} speech for {ctx.side.upper()} "
                             f"(nothing below the line '{MARKER}')")
        return speech


def editor_command(editor: str) -> list[str]:
    """The editor to run: the param, else $VISUAL, else $EDITOR, else vi; split like a shell would."""
    line = editor or os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    try:
        command = shlex.split(line)
    except ValueError as exc:
        raise ArenaError(f"editor {line!r}: {exc}") from None
    if not command:
        raise ArenaError("the editor command is blank")
    return command


def briefing(ctx: DebateContext, budget: Length) -> str:
    """What the person sees: the motion, their side and stage (its place in the format), the length budget, what
    the turn is for where the format says, and the visible transcript."""
    fmt, turn = ctx.format, ctx.turn
    seen = (ctx.transcript() if ctx.visible else
            f"(nothing yet: in the {fmt.label(ctx.stage)} stage neither side sees the other's speech)" if turn.blind
            else "(nothing yet: yours is the first speech)")
    side = ctx.side.upper() + (f", arguing: {ctx.motion.proposition(ctx.side)}" if ctx.motion.two_sided else "")
    purpose = f"What this speech is for: {turn.brief}\n" if turn.brief else ""
    return (
        f"Debate Arena — your {turn.title} speech for the {ctx.side.upper()} side\n\n"
        f"Motion: {ctx.motion.text}\n"
        f"Info slide: {ctx.motion.info_slide}\n"
        f"Your side: {side}\n"
        f"Stage: {ctx.stage} — {turn.title} ({fmt.place(ctx.stage)})\n"
        f"Length: about {budget.amount} {budget.unit}\n{purpose}\n"
        f"What has been said that you may see:\n\n{seen}\n\n"
        f"Everything above the line below is ignored; save and close the editor when done.\n"
        f"{MARKER}\n"
    )
