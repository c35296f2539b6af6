"""Judge prompts in cache order (issue 52), checked on the requests a played match sent: every prompt opens with a
paragraph the same for every call of its judge kind, then the motion and the debate, then what grows only by
appending (the panel's discussion), then one cache break, then the call's own material (which speech's notes, which
dimension, which referee), and only then the profile, workflow, rules and output format. The judges' models are named
like Anthropic's (claude), so that each request marks where its shared part ends (arena.gateway.caching) and the fake
server records it."""
from __future__ import annotations

import json
import re
from collections import defaultdict
from pathlib import Path

import pytest

from arena.app import commands as app
from arena.app.commands import open_workspace
from arena.app.runner.engine import judge_view
from arena.domain import transcript
from tests.support.helpers import (debate_responder, judge, requested_schema, schema_instance, stage_and_side,
                                   write_workspace)

PROMPTS = Path(__file__).resolve().parents[2] / "judges" / "prompts"
PARTS = ("# Knowledge", "# Profile", "# Workflow", "# Rules", "# Output format")
# The judges under test, each on a model of its own: debatrix at its default R (the workspace's judge_runs, 3) and
# options, a panel of three that talks for two turns, the devil's advocate and the single judge.
JUDGES = {"claude-dx": ("debatrix", {}), "claude-panel": ("panel", {"turns": 2}),
          "claude-da": ("devils_advocate", {"iterations": 2}), "claude-single": ("single", {})}


def _text(content) -> tuple[str, str | None]:
    """A request's prompt, and its shared part (the text of the part marked to be cached), None if none is marked."""
    if isinstance(content, str):
        return content, None
    marked = [part["text"] for part in content if "cache_control" in part]
    assert len(marked) <= 1 and (not marked or "cache_control" in content[0]), content  # one mark, at the start
    return "".join(part["text"] for part in content), marked[0] if marked else None


def _answer(body: dict) -> str:
    """Speeches for the debaters; for a judge, the first valid answer to its schema (a critic's NO_ISSUE is the
    schema's first), or a note that says the same whoever asks, so that two readings of one debate stay alike."""
    if body["model"] in JUDGES or stage_and_side(body) is None:
        schema = requested_schema(body)
        return "A note on the debate." if schema is None else json.dumps(schema_instance(schema))
    return debate_responder()(body)


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    """One match played by two direct debaters and judged by every kind above: (the view the judges read, the
    debaters' prompts, {judge model: [(prompt, shared part)]} in the order sent)."""
    from tests.support.fakes.openai_server import FakeOpenAI

    with FakeOpenAI() as server:
        server.responder = _answer
        path = write_workspace(tmp_path_factory.mktemp("ws") / "ws", server.api_base, judges=[
            judge(name.removeprefix("claude-"), kind, model=f"openai/{name}", api_base=server.api_base, options=options)
            for name, (kind, options) in JUDGES.items()])
        ws = open_workspace(path)
        try:
            match = app.play_one(ws, "en-fact-001", "alpha", "beta", progress=lambda line: None)
            view = judge_view(match, secret=ws.store.ballot_secret())
            pro_key, con_key = (transcript.marker_key(ws.store.ballot_secret(), match.id, side) for side in ("pro", "con"))
        finally:
            ws.close()
        debaters, judged = [], defaultdict(list)
        for request in server.requests:
            if request.path.rstrip("/").endswith("chat/completions"):
                body = request.body
                prompt, shared = _text(body["messages"][0]["content"])
                if body["model"] not in JUDGES and stage_and_side(body):
                    debaters.append((prompt, shared))
                else:  # a judge's: one of JUDGES, or the workspace's own single judge j1 (judge-model, unmarked)
                    judged[body["model"]].append((prompt, shared))
    return view, {pro_key, con_key}, debaters, judged


def test_every_judge_prompt_has_one_break_inside_its_knowledge_and_the_parts_in_cache_order(played):
    _view, _keys, _debaters, judged = played
    assert set(judged) == {*JUDGES, "judge-model"}
    for model in JUDGES:
        calls = judged[model]
        openings = set()
        for prompt, shared in calls:
            assert shared, (model, prompt[:200])  # each prompt marks where its shared part ends
            assert prompt.startswith(shared)
            at = [prompt.index(part) for part in PARTS]
            assert at == sorted(at), (model, prompt[:300])
            assert at[0] < len(shared) <= at[1]  # the break falls within the knowledge, before the profile
            openings.add(prompt[:at[0]])
            assert "Motion: " in shared and not shared.startswith("Motion")
        assert len(openings) == 1, (model, openings)  # one opening for every role, step and run of the kind


def test_no_debater_s_key_is_in_a_judge_prompt(played):
    view, debater_keys, debaters, judged = played
    assert len(debater_keys | {view.key}) == 3
    shown = set().union(*(transcript.keys(prompt) for prompt, _ in debaters))
    assert shown and shown <= debater_keys  # the debaters read their transcripts under their own keys
    for model, calls in judged.items():
        read = set().union(*(transcript.keys(prompt) for prompt, _ in calls))
        assert read <= {view.key}, model
        assert not any(key in prompt for prompt, _ in calls for key in debater_keys), model
    assert all(transcript.keys(prompt) == {view.key} for prompt, _ in judged["claude-single"])


def _dimension(prompt: str) -> str:
    return re.search(r"one dimension of judging: (\w+)", prompt).group(1)


def test_debatrix_calls_of_a_dimension_in_a_run_grow_one_shared_part_speech_by_speech(played):
    """Each dimension's adjudicator in a run calls in turn (speech 1, 2, ..., then its verdict) and each call waits
    for the one before: its shared part (the motion, its dimension, its notes so far) begins with the whole of the
    previous call's, so a provider holds it when the next call comes; the speech it reads is its own material."""
    view, _keys, _debaters, judged = played
    calls = judged["claude-dx"]
    analyses = [(p, s) for p, s in calls if "This is speech " in p]
    assert len(analyses) == 3 * 3 * len(view.speeches)  # runs × dimensions × speeches
    chains: dict[str, list[str]] = defaultdict(list)  # dimension → shared parts of its analyses and verdicts
    for prompt, shared in calls:
        if "one dimension of judging" not in prompt:
            continue  # the chair
        chains[_dimension(prompt)].append(shared)
        after = prompt[len(shared):]
        assert "=== " not in shared and "A note on the debate." in shared or "--- after speech" not in shared
        if "This is speech " in prompt:  # the speech read, its place and the order are this call's own
            number = int(re.search(r"This is speech (\d+) of", after).group(1))
            assert after.startswith("\nThe speaking order: ")
            assert any(after.count(reading.transcript(only=number - 1)) == 1 for reading in (view, view.swapped()))
            assert shared.count("--- after speech") == number - 1  # the notes on the speeches before it
    assert set(chains) == {"argument", "source", "language"}
    for dimension, shares in chains.items():
        # Three runs, each a chain of 6 analyses and a verdict: each call's shared part, but the first of a run,
        # begins with the one before; the runs' notes differ only from their first note on (the fake notes alike).
        assert len(shares) == 3 * (len(view.speeches) + 1)
        assert all(f"The dimension you judge, {dimension}: " in s and view.motion.text in s for s in shares)
        assert _chain(shares), dimension
    later = [(p, s) for p, s in calls if "This is speech " not in p]  # the verdicts and the chair
    assert len(later) == 3 * 4 and all("=== " not in s for _p, s in later)


def _chain(shares: list[str]) -> bool:
    """Whether the shared parts, shortest first, are each a prefix of the next."""
    ordered = sorted(shares, key=len)
    return all(longer.startswith(shorter) for shorter, longer in zip(ordered, ordered[1:]))


def test_the_panel_s_shared_parts_grow_by_appending_for_every_referee_turn_and_vote(played):
    view, _keys, _debaters, judged = played
    calls = judged["claude-panel"]
    assert len(calls) == 3 * (3 * 2 + 3)  # runs × (referees × turns + votes)
    readings = defaultdict(list)  # the debate as read (its transcript) → the shared parts of the calls reading it
    for reading in (view, view.swapped()):
        whole = reading.transcript()
        for prompt, shared in calls:
            if whole in shared:
                readings[whole].append(shared)
                tail = prompt[len(shared):]
                assert re.match(r"\n(Nobody has spoken yet|Your own messages in the discussion above|# Profile)", tail)
                assert not re.search(r"\(you\)|^You are Referee", shared, re.MULTILINE)
    assert sorted(len(s) for s in readings.values()) == [9, 18]  # run 1 swapped; runs 0 and 2 as played
    for shares in readings.values():
        assert _chain(shares)  # each call's shared part begins the next one's: the discussion only grows
        assert len(set(shares)) == 2 * 3 + 1  # one per turn of each referee, then the whole discussion for the votes


@pytest.mark.parametrize("model", ["claude-da", "claude-single"])
def test_the_other_kinds_share_the_motion_and_the_whole_debate(played, model):
    view, _keys, _debaters, judged = played
    readings = {reading.transcript() for reading in (view, view.swapped())}
    shares = {shared for _prompt, shared in judged[model]}
    assert {next(r for r in readings if s.endswith(r + "\n")) for s in shares} == readings
    assert len(shares) == 2  # every role and run of a reading shares the same prefix


def test_each_judge_template_writes_one_break_outside_any_loop_or_condition_and_its_includes_none():
    templates = sorted(PROMPTS.rglob("*.j2"))
    assert len(templates) > 20
    for template in templates:
        text = template.read_text(encoding="utf-8")
        included = template.name.startswith("_") or template.name == "debate.j2"
        assert text.count("{{ cache_break }}") == (0 if included else 1), template
        if not included:
            before = text.split("{{ cache_break }}")[0]
            assert before.count("{% for") == before.count("{% endfor") and \
                before.count("{% if") == before.count("{% endif"), template  # rendered exactly once
