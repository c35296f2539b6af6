"""Forfeits: a side whose model cannot answer usably loses the match (rated, every judge run to the other side);
a provider's failure never forfeits; agent4debate's optional steps degrade to neutral values instead."""
from __future__ import annotations

import json

from arena.app import commands as app
from arena.app.commands import open_workspace
from tests.support.fakes.openai_server import Reply
from tests.support.helpers import (debate_responder, invoke, query, requested_schema, speech_text, stage_and_side,
                           write_workspace)
from tests.support.running import round_robin, statuses
from tests.support.teams import Script, make_workspace, play, properties, role_stage_side


def broken_side(model: str, answer=lambda body: "   ", *, stage: str | None = None):
    """debate_responder, but `model`'s speeches (of one stage, or all) get answer(body): blank by default."""
    speech = debate_responder()

    def respond(body: dict):
        which = stage_and_side(body) if not body.get("response_format") else None
        if body["model"] == model and which and stage in (None, which[0]):
            return answer(body)
        return speech(body)

    return respond


def played(tmp_path, fake_llm, responder, **options):
    """alpha against beta both ways (judge j1, R = 3), run with `arena run`: (path, the run's result)."""
    fake_llm.responder = responder
    path = round_robin(write_workspace(tmp_path / "ws", fake_llm.api_base, **options), rounds=1)
    return path, invoke("run", "-w", path)


def judge_requests(fake_llm) -> list[dict]:
    return [r.body for r in fake_llm.requests if r.body.get("model") == "judge-model"]


# --- forfeits ---------------------------------------------------------------------------------------------------

def test_blank_answers_forfeit_the_match_to_the_other_side_without_a_judge(tmp_path, fake_llm):
    path, result = played(tmp_path, fake_llm, broken_side("alpha-model"))

    assert result.exit_code == 0, result.output
    assert statuses(path) == {"done": 2}
    shown = {}
    for match_id in ("m00001", "m00002"):
        out = invoke("match", "show", match_id, "-w", path, "--format", "json")
        shown[match_id] = json.loads(out.output)
    forfeits = {m["pro"]: m["forfeit"] for m in shown.values()}
    assert forfeits == {"alpha": "pro", "beta": "con"}  # alpha forfeits as Pro and as Con
    for match in shown.values():
        assert match["status"] == "done" and match["verdicts"] == []
        assert "could not give its constructive speech" in match["forfeit_reason"]
        assert "usable answer" in match["forfeit_reason"]
        # The constructives are written in parallel: beta's stands, alpha's is missing.
        assert [(s["stage"], s["side"]) for s in match["speeches"]] == \
            [("constructive", "con" if match["pro"] == "alpha" else "pro")]
    assert judge_requests(fake_llm) == []  # nothing to judge
    text = invoke("match", "show", "m00001", "-w", path).output
    assert "Forfeit: PRO forfeited, so CON takes every run of every judge." in text

    rated = json.loads(invoke("rate", "-w", path, "--format", "json").output)
    rows = {r["entry"]: r for r in rated["ratings"]}
    assert (rows["beta"]["wins"], rows["beta"]["forfeits"], rows["alpha"]["losses"], rows["alpha"]["forfeits"]) \
        == (2, 0, 2, 2)
    assert rows["beta"]["rating"] > rows["alpha"]["rating"]
    listed = {r["name"]: r for r in json.loads(invoke("entry", "list", "-w", path, "--format", "json").output)}
    assert (listed["alpha"]["matches"], listed["alpha"]["forfeits"], listed["beta"]["forfeits"]) == (2, 2, 0)
    assert json.loads(invoke("entry", "show", "alpha", "-w", path, "--format", "json").output)["forfeits"] == 2


def test_a_forfeit_is_every_run_of_every_judge_in_the_results_rows(tmp_path, fake_llm):
    path, _ = played(tmp_path, fake_llm, broken_side("alpha-model", stage="rebuttal"))

    out = invoke("rate", "-w", path, "--format", "csv").output.splitlines()
    assert out[0] == ("match_id,entry_a,entry_b,score_a,score_b,category,dimension,forfeit,simulated,"
                      "words_a,words_b,citations_a,citations_b,markdown_a,markdown_b")
    rows = [line.split(",") for line in out[1:]]
    # R = 3 runs, all to the side that did not forfeit; the CSV says which side forfeited.
    assert {(r[0], r[3], r[4], r[7]) for r in rows} == {("m00001", "0.0", "3.0", "pro"),
                                                        ("m00002", "3.0", "0.0", "con")}
    # Pro's rebuttal failed: both constructives stand, and nothing after the failed speech was asked for.
    speeches = query(path, "SELECT match_id, stage, side FROM speeches ORDER BY match_id, seq")
    assert speeches == [("m00001", "constructive", "pro"), ("m00001", "constructive", "con"),
                        ("m00002", "constructive", "pro"), ("m00002", "constructive", "con"),
                        ("m00002", "rebuttal", "pro")]
    csv = tmp_path / "results.csv"
    csv.write_text("\n".join(out) + "\n")
    again = json.loads(invoke("rate", "--results", csv, "--format", "json").output)
    assert {r["entry"]: r["forfeits"] for r in again["ratings"]} == {"alpha": 2, "beta": 0}


def test_a_bad_forfeit_value_in_a_results_csv_exits_2_naming_the_line(tmp_path):
    csv = tmp_path / "results.csv"
    csv.write_text("match_id,entry_a,entry_b,score_a,score_b,forfeit\nm1,a,b,3,0,\nm2,a,b,0,3,maybe\n")
    result = invoke("rate", "--results", csv)
    assert result.exit_code == 2, result.output
    assert f"{csv}:3: forfeit 'maybe' is not pro, con or empty" in result.output


def test_a_content_filter_forfeits(tmp_path, fake_llm):
    path, result = played(tmp_path, fake_llm, broken_side(
        "beta-model", lambda body: Reply(content="", finish_reason="content_filter"), stage="summary"))
    assert result.exit_code == 0, result.output
    reasons = query(path, "SELECT forfeit, forfeit_reason FROM matches ORDER BY id")
    assert [f for f, _ in reasons] == ["con", "pro"]
    assert all("content filter" in r and "summary speech" in r for _, r in reasons)


def test_a_providers_failure_never_forfeits_and_retry_failed_plays_it_again(tmp_path, fake_llm):
    down = {"on": True}
    broken = broken_side("alpha-model", lambda body: Reply(status=503, content="alpha is down"))
    healthy = debate_responder()
    path, result = played(tmp_path, fake_llm, lambda body: (broken if down["on"] else healthy)(body))

    assert result.exit_code == 1, result.output
    assert statuses(path) == {"failed": 2}
    assert query(path, "SELECT COUNT(*) FROM matches WHERE forfeit IS NOT NULL") == [(0,)]
    assert all("503" in e for (e,) in query(path, "SELECT error FROM matches"))
    down["on"] = False
    assert invoke("run", "-w", path, "--retry-failed").exit_code == 0
    assert statuses(path) == {"done": 2}
    assert query(path, "SELECT COUNT(*) FROM matches WHERE forfeit IS NOT NULL") == [(0,)]


def test_without_forfeits_the_match_fails_as_before(tmp_path, fake_llm):
    fake_llm.responder = broken_side("alpha-model")
    path = write_workspace(tmp_path / "ws", fake_llm.api_base)
    toml = path / "arena.toml"
    toml.write_text(toml.read_text().replace("[arena]\n", "[arena]\nforfeits = false\n"))
    round_robin(path, rounds=1)

    result = invoke("run", "-w", path)

    assert result.exit_code == 1, result.output
    assert statuses(path) == {"failed": 2}
    assert all("no usable answer after 3 tries: the answer was empty" in e
               for (e,) in query(path, "SELECT error FROM matches"))
    assert query(path, "SELECT COUNT(*) FROM speeches") == [(0,)]


def test_both_sides_failing_fails_the_match(tmp_path, fake_llm):
    path, result = played(tmp_path, fake_llm, lambda body: debate_responder()(body) if body.get("response_format")
                          else "")
    assert result.exit_code == 1, result.output
    assert statuses(path) == {"failed": 2}
    for (error,) in query(path, "SELECT error FROM matches"):
        assert error.startswith("both sides could not debate: PRO could not")
        assert "CON could not give its constructive speech" in error


def test_a_direct_entry_on_a_model_without_json_is_not_blocked_by_the_probe(tmp_path, fake_llm):
    """The direct debater never asks for JSON, so a model that gives none still plays; the judge's model is
    still probed for a structured mode."""
    speech = debate_responder()

    def respond(body: dict):
        text = body["messages"][-1]["content"]
        if 'whose "word" is "ready"' in text:  # the probe's structured answer, which only the judge's model gives
            return '{"word": "ready"}' if body["model"] == "judge-model" else "I only write prose."
        if text.startswith("Reply with one word"):
            return "ready"
        return speech(body)

    path, result = played(tmp_path, fake_llm, respond, checked=False)

    assert result.exit_code == 0, result.output
    assert statuses(path) == {"done": 2}
    probed = [r.body for r in fake_llm.requests if r.body.get("response_format")
              and 'whose "word" is "ready"' in r.body["messages"][-1]["content"]]
    assert {b["model"] for b in probed} == {"judge-model"}


def test_a_model_without_json_blocks_an_entry_that_asks_for_it(tmp_path, fake_llm, fake_tavily, monkeypatch):
    from arena.app.runner.check import preflight
    from arena.gateway.llm import LLMGateway
    from arena.base.errors import ArenaError

    fake_llm.responder = lambda body: "prose only" if body.get("response_format") else "ready"
    ws = make_workspace(tmp_path, fake_llm, fake_tavily, monkeypatch)
    try:
        gateway = LLMGateway(ws.config.llm, ws.store)
        try:
            preflight(ws, gateway, ["a4d", "base"])
        except ArenaError as exc:
            message = str(exc)
        else:
            raise AssertionError("the agent4debate entry's model gives no JSON, yet the preflight let it play")
    finally:
        ws.close()
    assert "a4d (openai/a4d): no structured-output mode worked" in message
    assert "base" not in message


# --- agent4debate: optional steps degrade -------------------------------------------------------------------------

class Broken(Script):
    """Script, but one role's structured answers (in one stage of PRO) are answer(body) instead."""

    def __init__(self, role: str, answer, *, stage: str = "constructive", when=lambda body: True, **options):
        super().__init__(**options)
        self.role, self.answer, self.stage, self.when = role, answer, stage, when

    def __call__(self, body: dict):
        role, stage, side = role_stage_side(body)
        if (role, stage, side) == (self.role, self.stage, "pro") and self.when(body):
            self.calls.append((role, stage, side))
            return self.answer(body)
        return super().__call__(body)


def degraded(ws) -> list[tuple]:
    return ws.store.conn.execute("SELECT role, stage, side, error FROM calls WHERE kind = 'degraded'").fetchall()


def test_an_invalid_material_request_becomes_no_request_and_the_speech_is_written(tmp_path, fake_llm, fake_tavily,
                                                                                  monkeypatch):
    """The real-model failure of issue 23: a request without its 'need', three times over."""
    bad = json.dumps({"material_request": {"query": "a figure"}, "speech": ""})
    script = Broken("writer", lambda body: bad, when=lambda body: "material_request" in properties(body))
    fake_llm.responder = script
    ws = make_workspace(tmp_path, fake_llm, fake_tavily, monkeypatch)
    match = play(ws)

    assert match.status == "done" and match.forfeit is None and len(match.speeches) == 6
    writer = [r.body for r in fake_llm.requests if role_stage_side(r.body) == ("writer", "constructive", "pro")]
    # The schema's re-asks (2) spent, the Writer was asked once more with no request on offer.
    assert ["material_request" in properties(b) for b in writer] == [True, True, True, False]
    assert "That answer is not valid" in writer[2]["messages"][-1]["content"]
    assert "ask your researcher for material" not in writer[3]["messages"][0]["content"]
    assert match.speeches[0].text.startswith("SPEECH<pro|constructive> Draft 1")
    [(role, stage, side, error)] = degraded(ws)
    assert (role, stage, side) == ("writer", "constructive", "pro")
    assert "'need' is a required property" in error and error.endswith("went on with no material request")
    ws.close()


def test_an_invalid_review_accepts_the_draft(tmp_path, fake_llm, fake_tavily, monkeypatch):
    script = Broken("reviewer", lambda body: '{"approve": "maybe"}', stage="rebuttal", approve_after=1)
    fake_llm.responder = script
    ws = make_workspace(tmp_path, fake_llm, fake_tavily, monkeypatch)
    match = play(ws)

    rebuttal = next(s for s in match.speeches if (s.stage, s.side) == ("rebuttal", "pro"))
    assert rebuttal.text.startswith("SPEECH<pro|rebuttal> Draft 1")  # no revision was asked for
    roles = [role for role, stage, side in script.calls if (stage, side) == ("rebuttal", "pro")]
    assert roles == ["analyzer", "writer", "reviewer", "reviewer", "reviewer"]  # the review and its two re-asks
    assert [(r, s, e.endswith("went on with the draft accepted")) for r, s, _, e in degraded(ws)] == \
        [("reviewer", "rebuttal", True)]
    ws.close()


def test_invalid_queries_mean_no_search_and_an_invalid_compilation_keeps_the_raw_results(tmp_path, fake_llm,
                                                                                        fake_tavily, monkeypatch):
    fake_llm.responder = Broken("searcher", lambda body: '{"queries": []}',
                                when=lambda body: "queries" in properties(body))
    ws = make_workspace(tmp_path, fake_llm, fake_tavily, monkeypatch)
    match = play(ws)
    assert match.forfeit is None and len(match.speeches) == 6
    assert fake_tavily.requests == []  # no queries, no search
    assert [e.endswith("went on with no new queries") for *_, e in degraded(ws)] == [True]
    ws.close()

    fake_llm.clear()
    fake_llm.responder = Broken("searcher", lambda body: '{"findings": "none"}',
                                when=lambda body: "findings" in properties(body))
    ws = make_workspace(tmp_path / "again", fake_llm, fake_tavily, monkeypatch)
    match = play(ws)
    writer = [r.body["messages"][0]["content"] for r in fake_llm.requests
              if role_stage_side(r.body) == ("writer", "constructive", "pro")]
    # The sources found are in the knowledge base all the same, numbered for citation; no findings.
    assert "[1] " in writer[0] and "FINDING<pro" not in writer[0]
    assert [e.endswith("went on with the raw results") for *_, e in degraded(ws)] == [True]
    ws.close()


PLAIN = speech_text("PLAIN<pro> Our case, in prose.")


def test_a_writer_without_valid_json_is_asked_for_plain_text(tmp_path, fake_llm, fake_tavily, monkeypatch):
    def answer(body):
        return PLAIN if not body.get("response_format") else "not json"

    script = Broken("writer", answer, stage="summary")
    fake_llm.responder = script
    ws = make_workspace(tmp_path, fake_llm, fake_tavily, monkeypatch)
    match = play(ws)

    summary = next(s for s in match.speeches if (s.stage, s.side) == ("summary", "pro"))
    assert summary.text == PLAIN
    writer = [r.body for r in fake_llm.requests if role_stage_side(r.body) == ("writer", "summary", "pro")]
    # Three tries with a request on offer, three without, then one plain-text request.
    assert [requested_schema(b) is not None for b in writer] == [True] * 6 + [False]
    assert "Only the speech itself, as plain text" in writer[-1]["messages"][0]["content"]
    assert [e.rsplit("went on with ", 1)[1] for *_, e in degraded(ws)] == ["no material request",
                                                                          "a plain-text speech"]
    ws.close()


def test_a_writer_that_cannot_write_at_all_forfeits_the_match(tmp_path, fake_llm, fake_tavily, monkeypatch):
    fake_llm.responder = Broken("writer", lambda body: "", stage="rebuttal")
    ws = make_workspace(tmp_path, fake_llm, fake_tavily, monkeypatch)
    match = play(ws)

    assert match.status == "done" and match.forfeit.side == "pro" and match.forfeit.winner == "con"
    assert "PRO could not give its rebuttal speech" in match.forfeit.reason
    assert [(s.stage, s.side) for s in match.speeches] == [("constructive", "pro"), ("constructive", "con")]
    assert match.verdicts == ()
    assert not [r for r in fake_llm.requests if role_stage_side(r.body)[0] == "judge"]
    # The Writer fell back step by step: no request, then plain text, which was blank too.
    assert [e.rsplit("went on with ", 1)[1] for *_, e in degraded(ws)] == ["no material request",
                                                                          "a plain-text speech"]
    ws.close()


def test_forfeited_matches_are_neither_rejudged_nor_balloted(tmp_path, fake_llm):
    path, _ = played(tmp_path, fake_llm, broken_side("alpha-model"))
    ws = open_workspace(path)
    try:
        assert ws.store.matches_to_judge("j1") == []
        assert ws.store.debated_match_ids() == []
        assert [t["matches"] for t in app.judge(ws, ["j1"], rejudge=True, progress=lambda line: None)] == [0]
    finally:
        ws.close()
    assert judge_requests(fake_llm) == []


def test_the_site_notes_a_forfeit_and_shows_each_entrys_reliability(tmp_path, fake_llm):
    from tests.support.sites import check_site

    answer = debate_responder()
    # alpha forfeits the match it opens as Pro (a blank rebuttal); the other match is debated to the end.
    path, _ = played(tmp_path, fake_llm, lambda body: "" if stage_and_side(body) == ("rebuttal", "pro")
                     and body["model"] == "alpha-model" and not body.get("response_format") else answer(body))
    published = invoke("publish", "-w", path)
    assert published.exit_code == 0, published.output
    site = path / "site"
    assert check_site(site) == []
    forfeited = next(m for m in ("m00001", "m00002")
                     if query(path, "SELECT forfeit FROM matches WHERE id=?", m)[0][0])
    page = (site / "matches" / f"{forfeited}.html").read_text()
    assert "<strong>Forfeit:</strong> PRO could not finish the debate, so CON takes every run of every judge." \
        in page
    assert "PRO could not give its rebuttal speech" in page
    index = (site / "index.html").read_text()
    assert "Reliability" in index
    assert "50% (1 forfeit)" in index  # alpha: 2 matches, 1 forfeited
    assert "100%" in index  # beta
    assert "pro forfeit" in (site / "matches.html").read_text()
    csv = (site / "results.csv").read_text().splitlines()
    assert ",forfeit,simulated," in csv[0] and any(",pro,false," in line for line in csv[1:])
