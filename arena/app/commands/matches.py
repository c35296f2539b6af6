"""`arena match list | show | messages | play`: the stored matches, and one match played now."""
from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Callable, Iterable

from arena.app.commands.names import judge_specs, sides
from arena.app.people import debater_links as debating
from arena.app.runner.check import require_keys
from arena.app.runner.engine import MatchRunner, stored_match
from arena.app.runner.progress import retry_line
from arena.app.setup.wiring import editing
from arena.app.shapes import records as shapes
from arena.base import terminal
from arena.base.errors import ArenaError, UserError
from arena.domain.records import Match
from arena.match.turns import AwaitingPerson
from arena.workspace.folder import Workspace

if TYPE_CHECKING:  # for annotations alone
    from arena.gateway.llm import CallTag, Completion


def match_list(ws: Workspace) -> list[shapes.MatchRow]:
    """Every match in schedule order (shapes.match_row)."""
    return [shapes.match_row(m) for m in ws.store.match_states()]


def match_get(ws: Workspace, match_id: str) -> Match:
    """The stored match with that id, speeches and verdicts too; a UserError when there is none."""
    match = ws.store.match(match_id)
    if match is None:
        raise UserError(f"no match {match_id!r} (see 'arena match list')")
    return match


def match_show(ws: Workspace, match_id: str) -> shapes.MatchJson:
    """One match as JSON (shapes.match_json), with the person's turn it awaits while it is parked at one, and what it
    is doing while it runs (Store.match_progress: the ledger, whichever process plays it)."""
    match = match_get(ws, match_id)
    progress = ws.store.match_progress(match.id) if match.status == "running" else None
    return shapes.match_json(match, declared=ws.config.formats, turn=debating.awaited_turn(ws, match),
                             progress=progress)


def match_messages(ws: Workspace, match_id: str) -> list[shapes.AgentMessage]:
    """What each agent of a match was sent and answered, in order, byte for byte as stored: {stage, side, role,
    prompt, response, created_at} (stage and side null for a judge's call)."""
    return [shapes.agent_message(m) for m in ws.store.agent_messages(match_get(ws, match_id).id)]


def match_play(ws: Workspace, motion_id: str, pro: str, con: str, judges: Iterable[str] = (),
               progress: Callable[[str], None] | None = None) -> shapes.MatchJson:
    """`arena match play`: play_one, the match as match_show gives it (parked, with the person's turn it awaits)."""
    match = play_one(ws, motion_id, pro, con, judges, progress)
    return shapes.match_json(match, declared=ws.config.formats, turn=debating.awaited_turn(ws, match))


def play_one(ws: Workspace, motion_id: str, pro: str, con: str, judges: Iterable[str] = (),
             progress: Callable[[str], None] | None = None) -> Match:
    """Play one match now, judge it and store it as a one-match tournament; return the match as stored.

    judges: judge names (none: every configured judge). progress(line) hears of each LLM call as
    it completes, and of each retry as it happens (default: stderr). Everything is checked before anything is
    written; a match that fails stays stored as failed and ArenaError says why; one that reaches a web debater's
    turn is parked there (status awaiting), for a later `arena run` to continue once the person's speech is in.
    """
    motion = ws.store.motion(motion_id)
    if motion is None:
        known = ws.store.motion_ids()
        available = f"{len(known)} available, such as {known[0]}" if known else "none available"
        raise UserError(f"--motion {motion_id}: no such motion ({available}; see 'arena motion list')")
    sides(ws, pro, con)
    specs = judge_specs(ws, judges)
    require_keys(ws, [pro, con, *(s.name for s in specs)])  # before the match is stored

    with editing(ws):  # checked again, as arena.toml is now, and the match stored with no removal between
        sides(ws, pro, con)
        (match_id,) = ws.store.add_tournament("single", ws.config.arena.seed, {"motion": motion_id},
                                              [(motion_id, pro, con)], debate_format=ws.config.arena.format)
    say = progress or terminal.say
    say(f"{match_id}: PRO {pro} vs CON {con} on {motion_id}: {motion.text}")

    def heard(tag: CallTag, completion: Completion) -> None:
        where = " · ".join(part for part in (tag.stage, tag.side, tag.role) if part)
        say(f"{where}  ({completion.usage.completion_tokens} tokens{', cached' if completion.cached else ''})")

    runner = MatchRunner.of(ws)
    runner.llm.listeners.append(lambda event: say(retry_line(event)) if event.kind == "retry" else None)
    stored = stored_match(ws.store, match_id)
    try:
        return asyncio.run(runner.play_match(stored, specs, listener=heard))
    except AwaitingPerson as waiting:  # parked (the engine stored it so): the person's speech comes first
        say(f"{match_id} is parked: {waiting}; a later 'arena run' continues it once the speech is in ('arena "
            "debaters issue' gives the link)")
        return stored_match(ws.store, match_id)
    except (ArenaError, UserError) as exc:
        # The match row is already stored (failed), so this is no longer a mistake in the input: exit 1.
        raise ArenaError(f"match {match_id} failed: {exc}") from None
