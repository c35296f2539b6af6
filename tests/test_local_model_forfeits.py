"""Non-speeches of a REAL model forfeit: SmolLM2-135M-Instruct on the stock llama-cpp-python server, agent4debate
against direct with 50-word budgets and the speech checks on, the setup in which a tiny model's echoes of its
instructions, transcript key lines and copies of the other side's speech were once rated.

A module of its own, beside tests/test_local_model_e2e.py and tests/debaters/test_local_model_agent4debate.py: under
pytest-xdist (each file whole in one process) it can run beside them rather than after them. It costs one
agent4debate match on the real model: 102 s on a quiet 2-core machine, 122 s in the full suite.
"""
from __future__ import annotations

import pytest

from arena.app import commands as app
from tests.support.helpers import invoke
from tests.support.real_model import workspace

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200)]


def test_a_tiny_models_non_speeches_forfeit_rather_than_be_rated(tmp_path, local_llm, fake_tavily, monkeypatch):
    """agent4debate (PRO) against direct (CON) on the real model, 50-word budgets, the checks on. There SmolLM2 once
    gave back its own instructions, a line with the transcript's key and its opponent's speech as speeches, and they
    were rated. Now a match either forfeits under a named check, or none of its speeches is one of those: no marker
    line or key of a transcript, no near-copy of the other side's speech, no echo of the prompts its side was given
    before it wrote (read back from the stored messages). Seen here: CON's rebuttal forfeited, "echo: 92% of it is
    copied from what it was shown, most from the prompt"."""
    import difflib
    import re

    from arena.domain import speechchecks
    from arena.domain.formats import AGENT4DEBATE

    monkeypatch.setenv("TAVILY_API_KEY", "tvly-test-local")
    ws = workspace(tmp_path / "ws", local_llm, fake_tavily.base_url, checks=True, runs=1)
    opened = app.open_workspace(ws)
    opened.store.add_tournament("issue-50", 0, {}, [("en-fact-015", "a4d", "plain-b")])
    opened.close()
    ran = invoke("run", "-w", ws, "--concurrency", "1")
    assert ran.exit_code == 0, ran.output
    opened = app.open_workspace(ws)
    try:
        match = opened.store.match("m00001")
        messages = opened.store.agent_messages(match.id)
    finally:
        opened.close()
    assert match.status == "done", match.error
    if match.forfeit is not None:  # named: the check, the side, the speech
        check = match.forfeit.reason.split(":", 1)[0]
        assert check in speechchecks.CHECKS and f"{match.forfeit.side.upper()}'s " in match.forfeit.reason, \
            match.forfeit.reason
    else:
        assert len(match.speeches) == 6 and len(match.verdicts) == 1
    # What each speech's side was sent before its Writer's first call (arena.match.protocol.AgentLog.instructions).
    instructions: dict[tuple[str, str], list[str]] = {}
    for m in messages:
        key = (m.stage or "", m.side or "")
        if m.role != "judge" and not any(n.role == "writer" and (n.stage, n.side) == key
                                         for n in messages[:messages.index(m)]):
            instructions.setdefault(key, []).append(m.prompt)
    asked = {(t.stage, t.side): 50 for t in AGENT4DEBATE.turns}
    assert speechchecks.match_problems(match, AGENT4DEBATE, prompts={k: ["\n\n".join(v)] for k, v in
                                                                     instructions.items()}, budgets=asked) == []
    for k, speech in enumerate(match.speeches):
        assert not re.search(r"\bkey [0-9a-f]{12}\b|^=== ", speech.text, re.MULTILINE), speech.text
        for other in match.speeches[:k]:
            if other.side != speech.side:
                copied = difflib.SequenceMatcher(None, other.text.lower().split(), speech.text.lower().split())
                assert copied.ratio() < 0.8, (speech.text, other.text)
