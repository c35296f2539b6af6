"""Speech checks: a speech that is not a debate speech (a placeholder, an echo, a loop, another language, far too
short) forfeits the match for its side, after its debater was asked again; healthy speeches pass untouched.

The pure checks are tested on examples of each failure as models produce them (the placeholder is the one the
issue's agent4debate Writer on SmolLM2-135M copied from its output format; the loops and the echo are SmolLM2's
own kinds of failure), and on healthy speeches shaped like the demo's and like real debates'.
"""
from __future__ import annotations

import json

import pytest

from arena.domain import speechchecks as sc
from arena.domain import transcript
from arena.domain.formats import AGENT4DEBATE, LECHMAZUR
from arena.domain.records import Match, Motion, Speech
from tests.support.fakes.openai_server import last_user
from tests.support.helpers import (assert_user_error, debate_responder, invoke, new_workspace, speech_text, stage_and_side,
                           write_workspace)
from tests.support.lechmazur_checkout import Debate, rows, write_checkout
from tests.support.running import round_robin
from tests.support.teams import Script, make_workspace, play, properties, role_stage_side

HEALTHY = (
    "Congestion pricing works because it prices the scarce thing, road space at peak hours, rather than banning "
    "anyone. Stockholm's trial cut central traffic by about a fifth, and the city kept it after a referendum once "
    "residents had lived with the results. London's charge paid for buses that carry more people than the cars it "
    "removed. Our opponents say drivers oppose it; they did in Stockholm too, and opposition fell once the queues "
    "went away. The question for the judge is simple: which world moves more people, more reliably, at lower "
    "cost? Ours does, and the evidence from every city that tried it points the same way.")
MOTION = Motion("m", "Cities should adopt congestion pricing.", "policy")


def test_the_placeholder_of_the_output_format_is_no_speech():
    # What agent4debate's Writer on SmolLM2-135M gave as its speech, copied from {"speech": "<the full speech>"}.
    assert sc.placeholder("<the full speech>") == "it is the placeholder '<the full speech>' where the speech should be"
    for text in ("[Your speech here]", "{speech}", "{{ speech }}", "Here is my speech: <the full speech>",
                 "【在此填写发言内容】"):
        assert sc.placeholder(text, language="zh" if "【" in text else "en") is not None, text
    assert "lorem ipsum" in sc.placeholder(HEALTHY + " Lorem ipsum dolor sit amet.")
    # A placeholder the prompt showed, even one no common pattern knows.
    assert sc.placeholder("%SPEECH%", prompt='{"speech": "%SPEECH%"}') is None  # not shown as a placeholder
    assert sc.placeholder("<what is missing and why>", prompt='"need": "<what is missing and why>"') is not None


def test_markup_citations_and_comparisons_are_no_placeholders():
    for text in (HEALTHY, HEALTHY + " <b>This</b> decides it [1].", "If costs < benefits and x > y, " + HEALTHY,
                 "<the full speech> " + HEALTHY):  # a stray placeholder in a whole speech: the speech stands
        assert sc.placeholder(text) is None, text


def test_an_echo_of_the_opponent_or_the_prompt_is_named_by_its_source():
    opponent = speech_text("CON opens.", size=150)
    copied = "I agree with my opponent. " + opponent
    problem = sc.echo(copied, [("the motion", MOTION.text), ("CON's constructive", opponent)])
    assert problem.endswith("most from CON's constructive") and problem.startswith("9")
    prompt = ("You are a debater. Write a persuasive speech for the PRO side on the motion. Use evidence, answer "
              "the other side, keep to about 300 words, and end with a clear conclusion for the judge. " * 3)
    assert "most from the prompt" in sc.echo(prompt[:400], [("the prompt", prompt)])
    # Quoting a line of the opponent to answer it is debate; restating one's own constructive is one's own words.
    quoted = f'They said "{opponent.split(".")[1].strip()}". ' + HEALTHY
    assert sc.echo(quoted, [("CON's constructive", opponent)]) is None
    assert sc.echo(HEALTHY, [("the prompt", "Transcript: " + HEALTHY)], own=[("its own", HEALTHY[:400])]) is None
    # SmolLM2-135M's agent4debate Writer gave its constructive again, word for word, as its rebuttal.
    assert sc.echo("Recall: " + HEALTHY, [], own=[("its own constructive", HEALTHY)]) == \
        "99% of it repeats its own constructive word for word"
    restated = HEALTHY[:300] + " " + speech_text("new", size=60)
    assert sc.echo(restated, [], own=[("its own constructive", HEALTHY)]) is None


# SmolLM2-135M-Instruct's first answer as a direct debater (tests/test_local_model_e2e.py's match, 50 words): our
# prompt's workflow and rules, given back as the speech.
SMOLLM2_PROMPT = """# Workflow
This is your constructive speech: the first speech of your side. You have not heard the other side.
1. Define the motion's key terms in the way most reasonable for a neutral listener.
2. State the criterion by which the judge should decide the debate.
3. Build at most three main arguments, each with a claim, its reasoning and the kind of evidence that supports it.
4. Close by saying why these arguments, taken together, carry the motion for your side.

# Rules
- Argue only for the PRO side; never concede the motion.
- Claims need reasons; name a mechanism or an example for every point. Do not invent statistics, quotations or sources.
- Address the judge, not the opponent; stay civil.
- Do not pretend to answer arguments you have not heard.
- Write in English, about 50 words."""
SMOLLM2_ECHO = """This is your constructive speech: the first speech of your side. You have not heard the other side, and you \
are ready to present your own argument.
1. Define the motion's key terms in the way most reasonable for a neutral listener.
2. State the criterion by which the judge should decide the debate.
3. Build at most three main arguments, each with a claim, its reasoning and the kind of evidence that supports it.
4. Close by saying why these arguments carry the motion for your side.
5. Address the judge, not the opponent; stay civil.
6. Do not pretend to answer arguments you have not heard."""


def test_a_real_small_models_echo_of_its_instructions_is_named():
    problem = sc.in_debate(SMOLLM2_ECHO, side="pro", stage="constructive", motion=MOTION, shown=(),
                           fmt=AGENT4DEBATE, language="en", share=0.25, prompts=[SMOLLM2_PROMPT], budget=50)
    assert str(problem) == "echo: 63% of it is copied word for word from what it was shown, most from the prompt"


def test_a_marker_line_of_the_transcript_in_a_speech_is_an_echo():
    # SmolLM2-135M's summary (tests/test_local_model_e2e.py's setup): a line of the opponent's, the transcript's
    # closing marker, then its own instructions; under 60% copied, but only a copy of its prompt has the marker.
    rendered = transcript.render([Speech("summary", "con", "The debate has ended.")], start=5)
    marker = rendered.strip().splitlines()[-1]
    assert marker.startswith("=== end of speech 5 · key ")
    summary = f"The debate has ended. {HEALTHY}\n{marker}\nThis is your summary speech, the last word for your side."
    assert sc.echo(summary, []) == f"it copies the transcript's marker line '{marker}' from what it was shown"
    assert sc.echo(HEALTHY + "\n=== A heading of my own ===", []) is None


def test_loops_of_a_sentence_or_a_phrase_are_repetition():
    # SmolLM2-135M's loops: one sentence again and again, and a phrase with no sentence end between.
    loop = "The government should invest in public transport. " * 12
    assert sc.repetition(loop).startswith("one sentence makes up 100% of it, said 12 times")
    phrase = "and the people of the city and the people of the city " * 10
    assert "in a loop of" in sc.repetition(phrase)
    # A refrain in a real speech is rhetoric, not a loop.
    refrain = " We must act now. ".join([HEALTHY[:200], HEALTHY[200:400], HEALTHY[400:]]) + " We must act now."
    assert sc.repetition(refrain) is None and sc.repetition(HEALTHY) is None


def test_another_language_is_named_before_its_length():
    chinese = speech_text("立论", "zh")
    assert sc.check(chinese, language="en", budget=400).check == "language"  # its few 'words' are too short too
    assert "Latin letters" in sc.language_of(HEALTHY, "zh")
    french = ("Le péage urbain réduit les embouteillages parce qu'il donne un prix à l'espace routier aux heures "
              "de pointe, comme l'a montré Stockholm pendant son essai puis après son référendum municipal.") * 2
    assert "not in English" in sc.language_of(french, "en")
    assert sc.language_of(HEALTHY + " 正如中国的一句话：时间就是金钱。", "en") is None
    assert sc.language_of(speech_text("立论", "zh"), "zh") is None


def test_too_short_counts_words_or_characters_against_the_turns_least_share():
    assert sc.too_short("We win.", 450) == "2 words where the turn's budget is 450 (under 25% of it)"
    assert sc.too_short(HEALTHY, 400) is None  # 107 words: over a quarter of 400
    assert sc.too_short("我方认为" * 20, 1200, "zh") == "80 characters where the turn's budget is 1200 (under 25% of it)"
    # SmolLM2-135M's agent4debate constructive at the default 450 words: a list of citations, then dashes.
    dashes = "[1]\n- [2]\n- [3]\n- [4]\n- [5]\n- [6]\n" + "-\n" * 160 + "- [1"
    assert len(dashes.split()) > 0.25 * 450 and sc.too_short(dashes, 450) == \
        "7 words where the turn's budget is 450 (under 25% of it)"
    # A turn whose point is brevity asks less: lechmazur's pressure questions take 2-3 pointed questions.
    questions = ("Q1: Without congestion revenue, what concrete funding builds the transit you promise? "
                 "Q2: Stockholm's opposition flipped after benefits; why not here?")
    turn = LECHMAZUR.turn("pressure_questions", "pro")
    shown = [Speech(t.stage, t.side, speech_text(t.stage + t.side)) for t in LECHMAZUR.turns[:4]]
    assert sc.in_debate(questions, side="pro", stage="pressure_questions", motion=MOTION, shown=shown,
                        fmt=LECHMAZUR, language="en", share=0.25) is None and turn.min_share == 0.1
    assert sc.in_debate("Q1: Why?", side="pro", stage="pressure_questions", motion=MOTION, shown=shown,
                        fmt=LECHMAZUR, language="en", share=0.25).check == "too-short"


def test_match_problems_read_each_speech_with_what_its_speaker_saw():
    texts = {(t.stage, t.side): speech_text(f"{t.stage}-{t.side}", size=140) for t in AGENT4DEBATE.turns}
    # CON's constructive is blind to PRO's: the same words are no echo there; CON's rebuttal copying PRO's is, and
    # PRO's summary restating half its own constructive is its own words.
    texts[("constructive", "con")] = texts[("constructive", "pro")]
    texts[("rebuttal", "con")] = "In reply: " + texts[("rebuttal", "pro")]
    texts[("summary", "pro")] = "To sum up: " + texts[("constructive", "pro")][:500] + speech_text("end", size=70)
    match = Match("m1", MOTION, "a", "b", speeches=tuple(Speech(s, side, texts[(s, side)])
                                                         for s, side in texts))
    found = [(s.stage, s.side, str(p)) for s, p in sc.match_problems(match, AGENT4DEBATE)]
    assert [f[:2] for f in found] == [("rebuttal", "con")]
    assert found[0][2].startswith("echo: 9") and found[0][2].endswith("most from PRO's rebuttal")


def schema(body: dict) -> dict:
    """The properties of a structured request's schema; none for a plain-text one."""
    return properties(body) if body.get("response_format") else {}


# --- in a match ------------------------------------------------------------------------------------------------

def placeholder_side(model: str, answers=("<the full speech>",)):
    """debate_responder, but `model`'s constructive answers are answers[k] on its k-th request (the last repeats)."""
    speech = debate_responder()
    asked: list[dict] = []

    def respond(body: dict):
        which = stage_and_side(body) if not body.get("response_format") else None
        if body["model"] == model and which and which[0] == "constructive":
            asked.append(body)
            return answers[min(len(asked), len(answers)) - 1]
        return speech(body)

    respond.asked = asked
    return respond


def test_a_placeholder_speech_forfeits_after_the_debater_was_asked_again(tmp_path, fake_llm):
    respond = placeholder_side("alpha-model")
    fake_llm.responder = respond
    path = round_robin(write_workspace(tmp_path / "ws", fake_llm.api_base), rounds=1)
    assert invoke("run", "-w", path).exit_code == 0

    for match_id in ("m00001", "m00002"):
        shown = json.loads(invoke("match", "show", match_id, "-w", path, "--format", "json").output)
        alpha = "pro" if shown["pro"] == "alpha" else "con"
        assert shown["status"] == "done" and shown["forfeit"] == alpha and shown["verdicts"] == []
        assert shown["forfeit_reason"].startswith("placeholder: it is the placeholder '<the full speech>'")
    # Each of alpha's constructives was asked three times (schema_retries 2): each re-ask named the problem.
    assert len(respond.asked) == 6
    reasks = [last_user(b) for b in respond.asked if len(b["messages"]) > 1]
    assert len(reasks) == 4 and all(r.startswith("That answer cannot be used: placeholder: ") for r in reasks)
    rated = {r["entry"]: r for r in json.loads(invoke("rate", "-w", path, "--format", "json").output)["ratings"]}
    assert (rated["alpha"]["losses"], rated["alpha"]["forfeits"], rated["beta"]["wins"]) == (2, 2, 2)


def test_a_speech_that_is_fine_when_asked_again_is_played_and_judged(tmp_path, fake_llm):
    good = speech_text("SECOND<alpha> A real constructive.")
    respond = placeholder_side("alpha-model", ("[Your speech here]", good))
    fake_llm.responder = respond
    path = round_robin(write_workspace(tmp_path / "ws", fake_llm.api_base), rounds=1)
    assert invoke("run", "-w", path).exit_code == 0

    shown = json.loads(invoke("match", "show", "m00001", "-w", path, "--format", "json").output)
    alpha = "pro" if shown["pro"] == "alpha" else "con"
    assert shown["forfeit"] is None and len(shown["verdicts"]) == 3
    assert next(s["text"] for s in shown["speeches"] if (s["stage"], s["side"]) == ("constructive", alpha)) == good
    # The re-ask (the matches run side by side: whichever asked second) showed the model its placeholder and why.
    (second,) = [b["messages"] for b in respond.asked if len(b["messages"]) > 1]
    assert second[-2] == {"role": "assistant", "content": "[Your speech here]"}
    assert second[-1]["content"].startswith("That answer cannot be used: placeholder: it is the placeholder "
                                            "'[Your speech here]'")


def test_without_speech_checks_the_placeholder_is_rated_as_it_was_before(tmp_path, fake_llm):
    respond = placeholder_side("alpha-model")
    fake_llm.responder = respond
    path = round_robin(write_workspace(tmp_path / "ws", fake_llm.api_base, arena={"speech_checks": False}),
                       rounds=1)
    assert invoke("run", "-w", path).exit_code == 0
    shown = json.loads(invoke("match", "show", "m00001", "-w", path, "--format", "json").output)
    assert shown["forfeit"] is None and len(shown["verdicts"]) == 3
    assert "<the full speech>" in [s["text"] for s in shown["speeches"]]
    assert len(respond.asked) == 2  # asked once per match: nothing to ask again for


def test_an_agent4debate_writer_copying_its_output_format_forfeits(tmp_path, fake_llm, fake_tavily, monkeypatch):
    class Copier(Script):
        """The issue's Writer: the output format's placeholder as its PRO constructive, however asked."""

        def __call__(self, body):
            role, stage, side = role_stage_side(body)
            if role == "writer" and (stage, side) == ("constructive", "pro"):
                self.calls.append((role, stage, side))
                return json.dumps({"material_request": None, "speech": "<the full speech>"}
                                  if "material_request" in schema(body) else {"speech": "<the full speech>"})
            return super().__call__(body)

    script = Copier()
    fake_llm.responder = script
    ws = make_workspace(tmp_path, fake_llm, fake_tavily, monkeypatch)
    match = play(ws)
    assert match.forfeit is not None and match.forfeit.side == "pro" and match.verdicts == ()
    assert match.forfeit.reason.startswith("placeholder: it is the placeholder '<the full speech>'")
    # Asked three times with a material request on offer, three without, three for plain text; each re-ask
    # showed the Writer its placeholder and the problem.
    writer = [r.body for r in fake_llm.requests if role_stage_side(r.body) == ("writer", "constructive", "pro")]
    assert len(writer) == 9
    assert all(last_user(b).startswith("That answer cannot be used: placeholder:") for b in writer
               if len(b["messages"]) > 1) and sum(len(b["messages"]) > 1 for b in writer) == 6
    ws.close()


def test_a_revision_that_loops_is_dropped_and_the_reviewed_draft_stands(tmp_path, fake_llm, fake_tavily,
                                                                         monkeypatch):
    class Looper(Script):
        def __call__(self, body):
            role, stage, side = role_stage_side(body)
            if role == "writer" and (stage, side) == ("rebuttal", "con") and "Your previous draft:" in \
                    body["messages"][0]["content"]:
                self.calls.append((role, stage, side))
                loop = "We are right. " * 40
                return json.dumps({"material_request": None, "speech": loop} if "material_request" in
                                  schema(body) else {"speech": loop})
            return super().__call__(body)

    fake_llm.responder = Looper(approve_after=1)
    ws = make_workspace(tmp_path, fake_llm, fake_tavily, monkeypatch)
    match = play(ws, pro="base", con="a4d")
    assert match.forfeit is None and len(match.speeches) == 6
    rebuttal = next(s for s in match.speeches if (s.stage, s.side) == ("rebuttal", "con"))
    assert rebuttal.text.startswith("SPEECH<con|rebuttal> Draft 1")  # the draft the Reviewer saw
    degraded = ws.store.conn.execute("SELECT role, stage, side, error FROM calls WHERE kind = 'degraded'").fetchall()
    assert {(r[0], r[1], r[2]) for r in degraded} == {("writer", "rebuttal", "con")}
    assert "repetition: one sentence makes up" in degraded[-1][3]
    assert degraded[-1][3].endswith("went on with the draft before it")
    ws.close()


# --- imports and settings --------------------------------------------------------------------------------------

def test_imported_debates_are_reported_not_forfeited(tmp_path):
    debates = [Debate("topic_01", "alpha-1", "bravo-2", 0, rows("pro", "pro"))]
    checkout = write_checkout(tmp_path / "src", debates)
    path = new_workspace(tmp_path / "ws")
    out = invoke("import", "lechmazur", str(checkout), "-w", path, "--format", "json")
    assert out.exit_code == 0, out.output
    checked = json.loads(out.output)["speech_checks"]
    # The checkout's turns are two short claims each: every one is under a quarter of its budget, bar the
    # questions, whose turn asks for few words.
    assert checked["speeches"] == 10
    assert {(f["stage"], f["problem"].split(":")[0]) for f in checked["flagged"]} == \
        {(stage, "too-short") for stage in ("opening", "rebuttal_1", "rebuttal_2", "closing")}
    shown = json.loads(invoke("match", "show", debates[0].id, "-w", path, "--format", "json").output)
    assert shown["status"] == "done" and shown["forfeit"] is None and len(shown["verdicts"]) == 2
    text = invoke("import", "lechmazur", str(write_checkout(tmp_path / "src2", [
        Debate("topic_02", "alpha-1", "bravo-2", 0, rows("pro"))])), "-w", path).output
    assert "speech checks: 8 of 10 speeches would forfeit if played here (too-short 8)" in text


@pytest.mark.parametrize("key, value, message", [
    ("min_speech_share", 1.5, "min_speech_share"), ("speech_checks", "yes", "speech_checks")])
def test_bad_settings_are_named(tmp_path, key, value, message):
    path = new_workspace(tmp_path / "ws", init=None, arena={key: value})
    assert_user_error(invoke("entry", "list", "-w", path), "arena.toml", message)
