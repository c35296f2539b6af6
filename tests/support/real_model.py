"""Workspaces on the real local model (tests/support/local_llm.py), for the real-model test modules.

Word budgets and caps are small: a call costs its tokens, and these modules are most of the suite's time.
"""
from __future__ import annotations

import sqlite3

from tests.support.helpers import entry, judge, new_workspace

WORDS = {f"words_{stage}": 50 for stage in ("constructive", "rebuttal", "summary")}  # the least a budget may be
# What a call costs here is its tokens: the prompt's (about 165 a second on one of these CPU cores, 320 on two) and
# the answer's (about 50 a second); tests/support/local_llm.py. So the caps below keep answers, and the prompts that carry
# them, short. SmolLM2 fills whatever room it is given: a direct speech's (2 x 50 + 64 tokens) ends cut
# off whatever its budget, and every judge's prompt carries the whole transcript; capped at 64 tokens, a speech is
# about 45 words.
SPEECH_CAP = {"max_tokens": 64}
# agent4debate's answers capped as well: its analysis, its findings (from two sources) and its review are each sent
# in every later prompt of its side, uncapped they run to 230-700 tokens, and a JSON answer cut off is asked again
# once and then degrades (no findings, the draft accepted), which this test allows.
A4D = {"max_queries": 2, "max_reviews": 1, "max_requests": 1, "max_results": 1, "max_tokens": 160}
SIDES = {"pro", "con"}


def workspace(path, llm, tavily_url: str, checks: bool = False, runs: int = 3) -> str:
    """Direct entries, an agent4debate entry with small caps and a `single` judge, all on the local model. The
    speech checks are off unless asked for: a 135M model often echoes its own instructions (seen here: "This is
    your constructive speech: ... 1. Define the motion's key terms ..."), which forfeits the match, and most tests
    here are of the plumbing of a whole match; tests/test_local_model_e2e.py's test_the_speech_checks_on_a_real_model
    has them on. runs: the `single` judge's runs.

    A call's timeout is far above what one takes on an idle machine (seconds): on a loaded one, a call that times out
    is sent again from the start, which only adds to the load."""
    model = {"model": llm.model, "api_base": llm.api_base}
    new_workspace(path, arena={"judge_runs": 1, "speech_checks": checks},
                  llm={"retries": 1, "backoff_s": 0.1, "timeout_s": 900},
                  search={"provider": "tavily", "api_base_url": tavily_url, "max_results": 2},
                  entries=[entry("plain-a", **model, params={**WORDS, **SPEECH_CAP}),
                           entry("plain-b", **model, params={"temperature": 0.7, **WORDS, **SPEECH_CAP}),
                           entry("a4d", "agent4debate", **model, params={**A4D, **WORDS})],
                  judges=[judge("single", runs=runs, **model)])
    return str(path)


def db(ws: str) -> sqlite3.Connection:
    conn = sqlite3.connect(f"{ws}/arena.db")
    conn.row_factory = sqlite3.Row
    return conn
