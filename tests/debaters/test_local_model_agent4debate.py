"""An agent4debate entry plays a whole match on the REAL model (SmolLM2-135M-Instruct on the stock llama-cpp-python
server), researching through the fake Tavily, against a direct entry.

A module of its own, apart from tests/test_local_model_e2e.py: it is over a third of the real-model tests' time, and
under pytest-xdist (the README's command, each file whole in one process) the two files run side by side in two
processes, each with a server of its own, rather than one after the other.
"""
from __future__ import annotations

import pytest

from arena.app import commands as app
from tests.support.real_model import db, workspace

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200)]


def test_an_agent4debate_match_with_real_research_against_direct(tmp_path, local_llm, fake_tavily, monkeypatch):
    # Judged once (what is asserted is the playing): the workspace's `single` judge, of one run.
    path = workspace(tmp_path / "ws", local_llm, fake_tavily.base_url, runs=1)
    monkeypatch.setenv("TAVILY_API_KEY", "tvly-test-local")
    ws = app.open_workspace(path)
    try:
        match = app.play_one(ws, "en-value-001", "a4d", "plain-b", judges=["single"])
    finally:
        ws.close()
    # The match issue 23 saw fail in Pro's constructive (a material request without its 'need'): an optional
    # step that the tiny model gets wrong now degrades, and the speech is written all the same.
    assert match.status == "done", match.error
    assert match.forfeit is None, match.forfeit
    assert len(match.speeches) == 6 and all(s.text.strip() for s in match.speeches)
    conn = db(path)
    roles = {r[0] for r in conn.execute("SELECT DISTINCT role FROM calls WHERE match_id=? AND side='pro' "
                                        "AND kind='llm'", (match.id,))}
    assert roles == {"searcher", "analyzer", "writer", "reviewer"}
    searches = conn.execute("SELECT COUNT(*) FROM calls WHERE match_id=? AND kind='search' AND error IS NULL",
                            (match.id,)).fetchone()[0]
    queries = [r.body["query"] for r in fake_tavily.requests]
    # max_queries 2 on the motion, and request_queries 2 for each speech's one material request.
    assert 1 <= searches <= 2 + 2 * 3 and len(queries) >= searches and all(q.strip() for q in queries)
    assert not match.simulated
