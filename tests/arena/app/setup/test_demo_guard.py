"""The first commands' messages: `arena demo` never plays in a workspace of the user's own, `arena run` with
nothing to play says how to schedule, counts are said in words that agree with them, and `arena init`'s template
names the kinds installed."""
from __future__ import annotations

import pytest

from arena.app.setup import demo as demo_workspace
from arena.workspace.config import CONFIG_NAME, load_config
from arena.base.errors import UserError, plural
from debaters.registry import DEBATERS
from judges.registry import JUDGES
from tests.support.helpers import TWO_OFFLINE, assert_user_error, invoke, new_workspace, snapshot

# --- arena demo ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("made_by", ["init", "entries"])
def test_demo_in_a_workspace_not_its_own_is_refused_and_writes_nothing(tmp_path, made_by):
    ws = tmp_path / "mine"
    if made_by == "init":
        assert invoke("init", ws).exit_code == 0
    else:
        new_workspace(ws, motions=["builtin:en"], entries=TWO_OFFLINE, opened=True)
    before = snapshot(ws)
    result = invoke("demo", "-w", ws)
    assert_user_error(result, f"-w {ws}", "not made by 'arena demo'", f"arena demo -w {tmp_path / 'mine-demo'}")
    assert "scheduling needs" not in result.output and "--judge" not in result.output
    assert snapshot(ws) == before


def test_the_demo_workspace_is_its_own_on_every_rerun(tmp_path):
    """What `arena demo` reruns on (tests/arena/app/setup/test_demo.py plays it twice end to end): its own workspace, unchanged."""
    path = tmp_path / "arena-demo"
    demo_workspace.prepare(path, "en")
    before = snapshot(path)
    demo_workspace.prepare(path, "en")
    assert snapshot(path) == before
    assert {e.name for e in load_config(path).entries} == set(demo_workspace.ENTRIES)
    with pytest.raises(UserError, match="--language en"):
        demo_workspace.prepare(path, "zh")


# --- arena run and arena schedule ---------------------------------------------------------------------------

@pytest.fixture
def ws(tmp_path):
    return new_workspace(tmp_path / "ws", motions=["builtin:en"], entries=TWO_OFFLINE, opened=True)


def test_run_with_nothing_scheduled_says_how_to_schedule(ws):
    before = snapshot(ws)
    result = invoke("run", "-w", ws)
    assert result.exit_code == 0, result.output
    assert result.stdout == ("nothing to play: no scheduled matches. Schedule some with 'arena schedule --format "
                             "round-robin' (or swiss, random, active, onboard), then 'arena run'\n")
    assert "0 done" not in result.output
    assert snapshot(ws) == before


def test_run_after_everything_is_played_says_so_too(ws):
    assert invoke("schedule", "--format", "random", "--matches", "1", "-w", ws).exit_code == 0
    first = invoke("run", "-w", ws)
    assert first.exit_code == 0 and first.stdout == "1 done, 0 failed, of 1\n", first.output
    again = invoke("run", "-w", ws)
    assert again.exit_code == 0 and again.stdout.startswith("nothing to play: no scheduled matches."), again.output


@pytest.mark.parametrize("fmt, count, said", [
    ("swiss", 1, "scheduled 1 swiss match (m00001)\n"),
    ("random", 3, "scheduled 3 random matches (m00001–m00003)\n"),
])
def test_schedule_counts_in_agreeing_words(ws, fmt, count, said):
    options = ("--rounds", "1") if fmt == "swiss" else ("--matches", str(count))
    result = invoke("schedule", "--format", fmt, *options, "-w", ws)
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[0] + "\n" == said  # flags may follow


@pytest.mark.parametrize("count, noun, nouns, said", [
    (1, "match", None, "1 match"), (0, "match", None, "0 matches"), (2, "swiss match", None, "2 swiss matches"),
    (1, "entry", None, "1 entry"), (3, "entry", None, "3 entries"), (2, "day", None, "2 days"),
    (4, "judge run", None, "4 judge runs"), (1, "person", "people", "1 person"), (2, "person", "people", "2 people"),
    (12000, "call", None, "12,000 calls"),
])
def test_plural(count, noun, nouns, said):
    assert plural(count, noun, nouns) == said


# --- arena init ---------------------------------------------------------------------------------------------

def test_init_template_names_every_registered_debater_and_judge_kind(tmp_path):
    assert invoke("init", tmp_path / "ws").exit_code == 0
    text = (tmp_path / "ws" / CONFIG_NAME).read_text(encoding="utf-8")
    assert f"# a debater kind: {' | '.join(DEBATERS.names())}\n" in text
    assert f"# a judge kind: {' | '.join(JUDGES.names())}\n" in text
    assert {"agent4debate", "search-baseline", "direct"} <= set(DEBATERS.names())  # not just the old three
