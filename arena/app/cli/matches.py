"""`arena match list | show | messages | play`, and a match printed for reading."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from arena.app.cli.common import echo, echo_json, format_option, open_ws, table, text_format_option, workspace_option
from arena.base.errors import plural

if TYPE_CHECKING:  # the shapes of what the facade returns, for the renderers
    from arena.app.shapes.records import MatchJson, Playing, VerdictJson


@click.group()
def match() -> None:
    """Matches: play one, list them, show one."""


@match.command("list")
@workspace_option
@format_option
def match_list(workspace: Path, fmt: str) -> None:
    """List matches with their status."""
    from arena.app import commands as app

    rows = app.match_list(open_ws(workspace))
    echo_json(rows) if fmt == "json" else table(rows, ["id", "status", "motion", "pro", "con", "forfeit", "error"])


@match.command("show")
@click.argument("match_id")
@workspace_option
@text_format_option
def match_show(match_id: str, workspace: Path, fmt: str) -> None:
    """Show one match: motion, speeches in its format's order, verdicts, score; for a running match, what it is
    doing (stage, side and role of its call in flight, its calls so far, since when)."""
    from arena.app import commands as app

    data = app.match_show(open_ws(workspace), match_id)
    echo_json(data) if fmt == "json" else _match_text(data)


@match.command("messages")
@click.argument("match_id")
@workspace_option
@text_format_option
def match_messages(match_id: str, workspace: Path, fmt: str) -> None:
    """Show what each agent of a completed match was sent and answered, in order, as stored."""
    from arena.app import commands as app

    messages = app.match_messages(open_ws(workspace), match_id)
    if fmt == "json":
        echo_json(messages)
        return
    for k, m in enumerate(messages, start=1):
        where = " · ".join(x for x in (m["stage"], (m["side"] or "").upper(), m["role"]) if x)
        echo(f"=== {k}. {where} · {m['created_at']} ===\n--- prompt ---\n{m['prompt']}\n"
             f"--- response ---\n{m['response']}\n")


@match.command("play")
@click.option("--motion", "motion_id", required=True, help="Motion id (see 'arena motion list').")
@click.option("--pro", required=True, help="Entry speaking for the motion.")
@click.option("--con", required=True, help="Entry speaking against it.")
@click.option("--judge", "judges", multiple=True, help="A judge to use; repeat for more (default: all configured).")
@workspace_option
def match_play(motion_id: str, pro: str, con: str, judges: tuple[str, ...], workspace: Path) -> None:
    """Play one match now, showing progress; store it, then print its transcript and score."""
    from arena.app import commands as app

    _match_text(app.match_play(open_ws(workspace), motion_id, pro, con, judges,
                               progress=lambda line: echo(line, err=True)))


def _playing(p: Playing) -> str:
    """A running match's step for reading: 'rebuttal · PRO writer · 14 calls · since 22:41:05 (3m12s)', local time."""
    from datetime import datetime

    from arena.base.clock import span

    step = " · ".join(x for x in (p["stage"], " ".join(y for y in ((p["side"] or "").upper(), p["role"]) if y)) if x)
    since = datetime.fromisoformat(p["since"])
    return (f"{step or 'starting'} · {plural(p['calls'], 'call')} · since {since.astimezone():%H:%M:%S} "
            f"({span((datetime.now(since.tzinfo) - since).total_seconds())})")


def _outcomes(v: VerdictJson) -> str:
    """A verdict's outcomes for reading: 'overall pro · argument pro · source tie · language con' (FAILED for a
    failed run), each dimension as the judge named it."""
    if v["overall"] is None:
        return "FAILED"
    return " · ".join(f"{name} {outcome}" for name, outcome in {"overall": v["overall"], **v["dimensions"]}.items())


def _match_text(data: MatchJson) -> None:
    """A match (as `arena match show --format json` gives it) for reading: motion, speeches by stage, verdicts,
    score."""
    echo(f"{data['id']}  [{data['status']}]{'  SIMULATED' if data['simulated'] else ''}")
    echo(f"Motion ({data['motion']['category']}): {data['motion']['text']}")
    echo(f"Pro: {data['pro']}   Con: {data['con']}   Format: {data['format']}")
    if "awaiting" in data:
        turn = data["awaiting"]
        echo(f"Awaiting {turn['entry']}'s {turn['side'].upper()} {turn['stage']} speech (its turn open since "
             f"{turn['since']}) until {turn['deadline']}")
    if "progress" in data:
        echo(f"Playing: {_playing(data['progress'])}")
    for s in data["speeches"]:
        echo(f"\n--- {s['title']} · {s['side'].upper()} ---\n{s['text']}")
        for k, ref in enumerate(s["references"], start=1):
            echo(f"  [{ref.get('number') or k}] {ref['title']} <{ref['url']}>")
    for v in data["verdicts"]:
        echo(f"\n{v['judge']} run {v['run'] + 1}: {_outcomes(v)}\n  {v.get('error') or v['rationale']}")
    if data["forfeit"]:
        winner = "con" if data["forfeit"] == "pro" else "pro"
        echo(f"\nForfeit: {data['forfeit'].upper()} forfeited, so {winner.upper()} takes every run of every "
             f"judge.\n  {data['forfeit_reason']}")
        return
    if data["status"] != "running":  # nothing is judged before the match is committed: no score to show yet
        echo(f"\nScore: pro {data['score']['pro']} – con {data['score']['con']}")
