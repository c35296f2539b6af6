"""One entry without a key does not block the plan (issue 50): `arena entry add` warns of the key it lacks, and
`arena run` plays the matches whose entries and judges have what they need, names the others and why at its start
and in its summary, and leaves them scheduled; with nothing playable (a judge lacks a key, or every match has an
entry that does) it refuses, exit 2, saying which. Simulated entries and judges beside one on openai/ or
anthropic/, whose keys the tests never set (tests/conftest.py)."""
from __future__ import annotations

import pytest

from arena.app import commands as app
from arena.app.commands import open_workspace
from tests.support.helpers import assert_user_error, entry, invoke, judge, new_workspace, query, snapshot

GPT = entry("gpt", model="openai/gpt-4o-mini")


def scheduled(path, entries=(GPT, entry("a"), entry("b")), judges=(judge("j"),)):
    """A workspace of entries and judges with a round-robin scheduled (each pair twice, sides swapped)."""
    new_workspace(path, motions=["builtin:en"], entries=entries, judges=judges)
    assert invoke("schedule", "--format", "round-robin", "-w", path).exit_code == 0
    return path


def pairs(path, status):
    return sorted(query(path, "SELECT pro, con FROM matches WHERE status = ?", status))


@pytest.mark.parametrize("options", [(), ("--workers", "2"), ("--wait", "0.1")], ids=["one", "workers", "wait"])
def test_run_plays_the_matches_it_can_and_names_those_it_cannot(tmp_path, options):
    ws = scheduled(tmp_path / "ws")

    result = invoke("run", *options, "-w", ws)

    assert result.exit_code == 0, result.output
    assert pairs(ws, "done") == [("a", "b"), ("b", "a")]  # the match between entries that need no key: played
    assert pairs(ws, "scheduled") == [("a", "gpt"), ("b", "gpt"), ("gpt", "a"), ("gpt", "b")]  # kept for later
    ids = [m for (m,) in query(ws, "SELECT id FROM matches WHERE status = 'scheduled' ORDER BY id")]
    skipped = f"OPENAI_API_KEY is not set for entry gpt ({', '.join(ids)})"
    start = result.stderr.splitlines()[0]  # said before anything is played...
    assert start.startswith("warning: 4 matches of 6 cannot be played, for want of keys") and skipped in start
    summary = result.stdout.strip().splitlines()[-1]  # ...and in the summary
    assert summary.startswith("2 done, 0 failed, of 2; 4 matches skipped for want of keys") and skipped in summary
    assert query(ws, "SELECT COUNT(*) FROM calls WHERE model LIKE 'openai/%'") == [(0,)]


def test_the_python_api_names_each_skipped_match_and_the_key_it_lacks(tmp_path):
    ws = open_workspace(scheduled(tmp_path / "ws"))
    try:
        result = app.run(ws, progress=lambda line: None)
    finally:
        ws.close()

    assert (result["done"], result["total"], result["stopped"]) == (2, 2, None)
    pairings = query(ws.path, "SELECT id, pro, con FROM matches WHERE status = 'scheduled' ORDER BY seq")
    assert len(pairings) == 4
    assert result.get("skipped") == [{"id": m, "pro": pro, "con": con, "missing": {"OPENAI_API_KEY": ["gpt"]}}
                                     for m, pro, con in pairings]


def test_a_judge_without_its_key_stops_the_run_saying_every_match_needs_it(tmp_path):
    ws = scheduled(tmp_path / "ws", judges=(judge("j"), judge("claude", model="anthropic/claude-3-5-haiku-latest")))
    before = snapshot(ws)

    result = invoke("run", "-w", ws)

    assert_user_error(result, "nothing was run (every match is judged by judge claude)",
                      "ANTHROPIC_API_KEY is not set; arena.toml's judge claude needs it",
                      "OPENAI_API_KEY is not set; arena.toml's entry gpt needs it")
    assert snapshot(ws) == before


def test_a_plan_whose_every_match_lacks_a_key_stops_the_run_saying_so(tmp_path):
    ws = scheduled(tmp_path / "ws", entries=(GPT, entry("claude", model="anthropic/claude-3-5-haiku-latest")))
    before = snapshot(ws)

    result = invoke("run", "-w", ws)

    assert_user_error(result, "nothing was run (every match to play has an entry that lacks a key)",
                      "OPENAI_API_KEY is not set; arena.toml's entry gpt needs it",
                      "ANTHROPIC_API_KEY is not set; arena.toml's entry claude needs it")
    assert snapshot(ws) == before


def test_entry_add_warns_of_the_key_its_model_needs(tmp_path):
    ws = new_workspace(tmp_path / "ws", entries=(entry("a"), entry("b")), opened=True)

    added = invoke("entry", "add", "claude", "--debater", "direct", "--model", "anthropic/claude-3-5-haiku-latest",
                   "-w", ws)
    offline = invoke("entry", "add", "c", "--debater", "direct", "--model", "offline/c", "-w", ws)

    assert added.exit_code == 0, added.output
    assert added.stdout.startswith("added entry 'claude'")
    assert added.stderr == ("warning: ANTHROPIC_API_KEY is not set, and entry 'claude' needs it "
                            "(anthropic/claude-3-5-haiku-latest): 'arena run' skips its matches until it is "
                            "exported (keys are read only from the environment)\n")
    assert [e["name"] for e in app.entry_list(open_workspace(ws))] == ["a", "b", "claude", "c"]
    assert offline.exit_code == 0 and offline.stderr == ""
