"""The arena end to end on a REAL model: SmolLM2-135M-Instruct on the stock llama-cpp-python server.

No fake and no proxy between the arena and the server: whatever the server refuses (it has no
json_schema response format) the arena must cope with by itself. The model is tiny, so these
tests assert plumbing, not eloquence: six non-empty speeches, verdicts parsed or failed with a
reason (never a guess), real token counts in the ledger, and nothing labelled simulated.
Word budgets and caps are small (tests/support/real_model.py) so the whole module takes minutes, not hours. The
agent4debate match is in a module of its own (tests/debaters/test_local_model_agent4debate.py).
"""
from __future__ import annotations

import json

import pytest

from arena.app import commands as app
from tests.support.helpers import invoke, judge, workspace_toml
from tests.support.real_model import SIDES, db, workspace

# The module's fixture plays and judges a match on the real model; on a loaded machine (another test process
# beside it, as under pytest-xdist) that can take well over pytest's default 300 s, which is no failure of the
# product: a timeout of its own, far inside CI's limit.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200)]

# The other judge kinds, added once a match is done, with options that keep them to a few calls. debatrix: one
# dimension, whose analyst notes each of the six speeches, and the rule summary rather than a chair's call. Its notes
# are what it costs: at its paper temperature 0 SmolLM2 tends to copy the transcript round and round until the
# notes' cap, and each note goes into every later prompt; sampled at 0.7 and asked for 40 words (a cap of 80
# tokens), most notes end after a few sentences. panel: one referee, who talks once (at temperature 0
# the talk runs to its 512-token cap) and votes. devil: one review.
OTHER_JUDGES = {
    "debatrix": ("debatrix", {"dimensions": {"argument": {"weight": 3}}, "summary": "rule", "note_length": 40,
                              "temperature": 0.7}),
    "panel": ("panel", {"referees": 1, "turns": 1, "temperature": 0.7}),
    "devil": ("devils_advocate", {"iterations": 1}),
}


@pytest.fixture(scope="module")
def real(tmp_path_factory, local_llm):
    """A workspace on the local model whose first match (direct vs direct) was played and judged by `single`."""
    from tests.support.fakes.tavily_server import FakeTavily

    with FakeTavily() as tavily, pytest.MonkeyPatch.context() as mp:
        mp.setenv("TAVILY_API_KEY", "tvly-test-local")
        ws = workspace(tmp_path_factory.mktemp("real") / "ws", local_llm, tavily.base_url)
        checked = invoke("check", "-w", ws, "--format", "json")
        opened = app.open_workspace(ws)
        opened.store.add_tournament("single", 0, {}, [("en-policy-001", "plain-a", "plain-b")])
        opened.close()
        ran = invoke("run", "-w", ws)
        yield {"ws": ws, "checked": checked, "ran": ran, "tavily": tavily, "llm": local_llm}


def test_check_finds_the_model_usable_with_the_mode_it_accepts(real):
    assert real["checked"].exit_code == 0, real["checked"].output
    assert "WARNING" not in real["checked"].stderr  # litellm's logger stays quiet
    rows = json.loads(real["checked"].stdout)
    # a4d searches through the fake Tavily, so the search provider is probed too, in a row of its own.
    [search] = [r for r in rows if r["name"] == "[search]"]
    assert search["model"] == "tavily" and search["ok"] is True and search["error"] is None
    rows = [r for r in rows if r is not search]
    assert {r["name"] for r in rows} == {"plain-a", "plain-b", "a4d", "single"}
    for row in rows:
        assert row["ok"] is True and row["error"] is None
        # The stock server refuses json_schema (422); json_object with the schema is what it takes.
        assert row["structured"] == "json_object"
        assert row["latency_s"] > 0
        assert row["context_window"] is None  # this server tells no window: calls assume 8192
        # llama-cpp-python's server generates one answer at a time, the others wait in its queue (measured by
        # arena.gateway.probe.measure: a batch of 2 answered one after the other), at some tokens a second.
        assert row["slots"] == 1
        assert row["tokens_per_s"] > 0
    facts = db(real["ws"]).execute("SELECT facts FROM models").fetchall()
    assert len(facts) == 1 and json.loads(facts[0][0])["structured"] == "json_object"
    assert json.loads(facts[0][0])["prompt_tokens_per_s"] > 0
    assert search["slots"] is None and search["tokens_per_s"] is None


def test_a_direct_match_plays_six_real_speeches_judged_three_times(real):
    assert real["ran"].exit_code == 0, real["ran"].output
    conn = db(real["ws"])
    # One call at a time on its one slot, each given the time its tokens take: none timed out.
    assert conn.execute("SELECT COUNT(*) FROM calls WHERE error LIKE '%imeout%'").fetchone()[0] == 0
    match = conn.execute("SELECT * FROM matches").fetchone()
    assert match["status"] == "done" and match["simulated"] == 0
    speeches = conn.execute("SELECT * FROM speeches ORDER BY seq").fetchall()
    assert [(s["stage"], s["side"]) for s in speeches] == [
        ("constructive", "pro"), ("constructive", "con"), ("rebuttal", "pro"), ("rebuttal", "con"),
        ("summary", "con"), ("summary", "pro")]
    assert all(s["text"].strip() for s in speeches)
    verdicts = conn.execute("SELECT * FROM verdicts WHERE judge='single' ORDER BY run").fetchall()
    assert [v["run"] for v in verdicts] == [0, 1, 2]
    for v in verdicts:  # parsed, or failed with its reason: never a guess
        if v["error"] is None:
            assert v["overall"] in SIDES and set(json.loads(v["dimensions"])) == {"argument", "source", "language"}
        else:
            assert v["overall"] is None and v["error"].strip()
    assert conn.execute("SELECT COUNT(*) FROM verdicts WHERE simulated=1").fetchone()[0] == 0


def test_the_ledger_holds_real_token_counts_and_every_call_stopped_or_was_cut(real):
    calls = db(real["ws"]).execute("SELECT * FROM calls WHERE kind='llm' AND error IS NULL AND cache_hit=0").fetchall()
    assert calls and all(c["simulated"] == 0 for c in calls)
    assert all(c["prompt_tokens"] > 0 and c["completion_tokens"] > 0 for c in calls)
    assert {c["finish_reason"] for c in calls} <= {"stop", "length"}
    structured = [c for c in calls if c["role"] == "judge"]
    assert structured and all(c["structured"] == "json_object" for c in structured)


@pytest.mark.parametrize("name", list(OTHER_JUDGES))
def test_each_other_judge_kind_judges_the_real_transcript(real, name):
    kind, options = OTHER_JUDGES[name]
    added = judge(name, kind, real["llm"].model, api_base=real["llm"].api_base, runs=1, options=options)
    with open(f"{real['ws']}/arena.toml", "a", encoding="utf-8") as toml:
        toml.write("\n" + workspace_toml(judges=[added], search=None))
    result = invoke("judge", "-w", real["ws"], "--judge", name)
    verdicts = db(real["ws"]).execute("SELECT * FROM verdicts WHERE judge=?", (name,)).fetchall()
    assert len(verdicts) == 1, result.output
    (v,) = verdicts
    if v["error"] is None:
        assert result.exit_code == 0, result.output
        assert v["overall"] in SIDES | {"tie"} and v["rationale"].strip()
    else:  # a failed run says why, decides nothing, and the command says so with exit 1
        assert v["overall"] is None and result.exit_code == 1
    assert v["simulated"] == 0


# The window test's server: one of its own with a small window, so that the prompt fitted to it is small too. On the
# session's server (8,192 tokens) the fitted prompt alone took 45 s to read, a tenth of this module.
SMALL_WINDOW = 1024


def test_a_prompt_over_the_real_window_is_refused_then_fitted_to_the_window_the_server_named(tmp_path, local_llm):
    """Configured for 32k tokens, the model really takes 1k: the server's refusal names its window, and the
    one retry fits the prompt to it, shortening the oldest speech with a note."""
    import asyncio

    from tests.support.local_llm import LocalLLM

    from arena.domain import transcript
    from arena.workspace.config import LLMSettings
    from arena.gateway.fitting import Material
    from arena.gateway.llm import LLMGateway
    from arena.gateway.catalog import ModelRef
    from arena.match.protocol import AgentLog, LLMHandle
    from arena.domain.records import Speech
    from arena.store import Store

    sentence = "The committee reviewed the evidence carefully before it reached a decision on the proposal. "
    speeches = (Speech("constructive", "pro", sentence * 900), Speech("constructive", "con", "We disagree."))
    material = Material(lambda cut: "Say which side argued better, in one sentence.\n\n"
                        + transcript.render(speeches, cut=cut), speeches=transcript.words(speeches))
    store = Store(tmp_path / "arena.db")
    gateway = LLMGateway(LLMSettings(retries=0, backoff_s=0.1, timeout_s=900), store)
    log = AgentLog()
    with LocalLLM(local_llm.gguf, n_ctx=SMALL_WINDOW) as small:
        ref = ModelRef(small.model, small.api_base, context_window=32768)
        answer = asyncio.run(LLMHandle(gateway, ref, log, match_id=None).complete("judge", material, max_tokens=24))

    assert answer.text.strip()
    refused, fitted = store.conn.execute("SELECT error, fitted, prompt_tokens FROM calls ORDER BY id").fetchall()
    assert "ContextWindowExceededError 400" in refused["error"] and refused["fitted"] == 0
    assert fitted["error"] is None and fitted["fitted"] == 1 and 0 < fitted["prompt_tokens"] < SMALL_WINDOW
    assert store.model_facts(ref.model, ref.api_base)["refused_beyond"] == SMALL_WINDOW
    sent = log.messages[-1]["prompt"]
    assert "left out to fit the model's context window" in sent and "We disagree." in sent
    store.close()


def test_the_speech_checks_on_a_real_model(tmp_path, local_llm):
    """A direct match with the checks on: every stored speech passes them, and a side that forfeited did so by a
    named check after being asked again, each re-ask showing the model its answer and the problem."""
    from arena.domain import speechchecks
    from arena.domain.formats import AGENT4DEBATE

    ws = workspace(tmp_path / "ws", local_llm, "", checks=True, runs=1)  # judging is not what is tested here
    opened = app.open_workspace(ws)
    opened.store.add_tournament("checks", 0, {}, [("en-policy-001", "plain-a", "plain-b")])
    opened.close()
    ran = invoke("run", "-w", ws, "--concurrency", "1")
    assert ran.exit_code == 0, ran.output
    opened = app.open_workspace(ws)
    try:
        match = opened.store.match("m00001")
        assert match.status == "done"
        asked = {(t.stage, t.side): 50 for t in AGENT4DEBATE.turns}  # the entries' words_<stage>
        assert speechchecks.match_problems(match, AGENT4DEBATE, budgets=asked) == []
        if match.forfeit is not None:
            check = match.forfeit.reason.split(":", 1)[0]
            assert check in speechchecks.CHECKS, match.forfeit.reason
            stage = next(s for s in ("constructive", "rebuttal", "summary")
                         if f"'s {s} speech" in match.forfeit.reason)
            # [llm] schema_retries = 2: asked, then asked again twice (the fake server's tests read the re-asks).
            asked = db(ws).execute("SELECT COUNT(*) FROM calls WHERE kind = 'llm' AND role = 'writer' AND stage = ? "
                                   "AND side = ? AND error IS NULL", (stage, match.forfeit.side)).fetchone()[0]
            assert asked == 3
        else:
            assert len(match.speeches) == 6
    finally:
        opened.close()


def test_judge_attacks_on_the_real_judge_of_the_stored_match(real):
    """`arena judge-attacks` on the module's `single` judge (R = 3, temperature 0): its clean verdict of the played
    match is stored, so nothing is judged clean, and each attack named judges the attacked debate once, with the
    judge's three runs, on the real server. Three attacks, one of each way an attack reaches the judge: `injection`
    changes one speech, `null` every speech of a side, `swap` no speech but the labels (its runs read their prompts
    anew); the six attacks' texts are tested in tests/arena/match/test_attacks.py, and what each showed a judge in
    tests/judges/test_judge_attacks.py, on the fake server. The rows have their shape and counts; the flips are
    SmolLM2's and not asserted. Its cost: 9 calls of some 600-1,500 prompt tokens (the third run finds the first's in
    the server's cache): 104 s under the README's command (the server on one core, beside the other test process),
    59 s alone. All six attacks took 392 s in an earlier run of that command, on the same machine running slower (the
    forfeits test took 537 s there, 217 s beside these 104)."""
    attacks = ["injection", "null", "swap"]

    conn = db(real["ws"])
    stored = conn.execute("SELECT error FROM verdicts WHERE judge = 'single'").fetchall()
    clean_valid = len(stored) == 3 and all(v["error"] is None for v in stored)
    log = real["llm"].log_path
    completions = log.read_text(errors="replace").count("total time =")  # llama.cpp's line per completion

    result = invoke("judge-attacks", "-w", real["ws"], "--judge", "single", "--attacks", ",".join(attacks),
                    "--format", "json")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert [r["attack"] for r in rows] == attacks  # in the order named
    calls = conn.execute("SELECT * FROM calls WHERE kind = 'llm' AND match_id LIKE 'attack:%'").fetchall()
    if clean_valid:  # the stored verdict served: nothing judged clean
        assert not any(":clean:" in c["match_id"] for c in calls)
    judged = {r["attack"]: [c for c in calls if f":{r['attack']}:" in c["match_id"]] for r in rows}
    # Every attack judged, or none (no valid clean verdict: no side lost); with the stored runs valid, every one.
    assert all(judged.values()) or not any(judged.values())
    assert all(judged.values()) or not clean_valid
    for row in rows:
        assert set(row) == {"judge", "attack", "trials", "flips", "flip_rate", "ci_low", "ci_high", "caught",
                            "flips_uncaught", "calls", "cost", "simulated"}
        assert row["judge"] == "single" and row["simulated"] is False
        assert row["trials"] <= 1 and 0 <= row["flips_uncaught"] <= row["flips"] <= row["trials"]
        assert row["flip_rate"] == (row["flips"] / row["trials"] if row["trials"] else None)
        assert 0 <= row["ci_low"] <= row["ci_high"] <= 1 if row["trials"] else row["ci_low"] is row["ci_high"] is None
        # The attacked debate judged once, with the judge's three runs (and any re-asks of an invalid answer).
        assert row["calls"] == len(judged[row["attack"]]) and (row["calls"] >= 3 or not judged[row["attack"]])
    # The module's workspace has [arena] speech_checks off (tests/support/real_model.py): no check stands in front of
    # the judge, so nothing is caught, not even the constant non-answer.
    assert all(r["caught"] == 0 and r["flips_uncaught"] == r["flips"] for r in rows)
    # Sent to the real server: its own token counts, nothing simulated or cached, a completion each in its log.
    answered = [c for c in calls if c["error"] is None]
    assert answered or not clean_valid
    assert all(c["prompt_tokens"] > 0 and c["completion_tokens"] > 0 and c["simulated"] == 0 and c["cache_hit"] == 0
               for c in answered)
    assert log.read_text(errors="replace").count("total time =") - completions >= len(answered)
