"""Speech checks on a real model's non-speeches (issue 50): SmolLM2-135M-Instruct on the issue's setup (agent4debate
against direct, 50-word budgets, the search offline) gave each of these as a speech, and each was rated. Each is now
refused, and the healthy speeches of tests/arena/domain/test_speech_checks.py still pass.

tests/test_local_model_e2e.py plays the same setup on the real model.
"""
from __future__ import annotations

import json
import re

from arena.domain import speechchecks as sc
from arena.domain import transcript
from arena.domain.formats import AGENT4DEBATE
from arena.domain.records import Motion, Speech
from tests.arena.domain.test_speech_checks import CON_CONSTRUCTIVE, HEALTHY, MENTIONS, SHOWN, SMOLLM2_PROMPT
from tests.support.teams import Script, make_workspace, play, properties, role_stage_side

MOTION = Motion("en-fact-015", "Organic farming could feed the world's population", "fact")

# agent4debate's prompts for CON's constructive, as SmolLM2 was sent them: its Searcher's first (before any draft),
# then its Writer's, whose workflow the speech below gave back.
SEARCHER = """# Profile
You are the research lead of a competitive debate team. You find evidence on the web and compile it into your team's
knowledge base.
# Workflow
1. Break the motion down into the questions your team must answer to carry it: what the key terms mean, which facts
are in dispute, what the effects would be, which values are at stake.
# Output format
A JSON object: {"queries": ["...", "..."]}."""
WRITER = """# Profile
You are the speaker of a competitive debate team: you turn your team's research and strategy into a speech that a
judge can follow and will remember.
# Knowledge
Motion: Organic farming could feed the world's population
Your team: CON — you oppose the motion.
# Workflow
This is your team's constructive speech: the first it makes, written without hearing the other team.
1. Open by framing the motion: your definitions and the criterion the judge should use.
2. Present your main arguments (at most three), each as claim, reasoning and cited evidence, with a signpost
("First, ...") so the judge can follow; a proof is strongest when a mechanism, a figure and an example point the same
way.
3. Pre-empt the strongest objection in a sentence or two.
4. Close by tying the arguments back to the criterion.
# Output format
A JSON object: {"speech": "<the full speech>"}."""
# SmolLM2's CON constructive (agent4debate's Writer), word for word.
A4D_ECHO = ("The first it makes, written without hearing the other team.\n"
            "1. Open by framing the motion: your definitions and the criterion the judge should use.")


def _con_constructive(text: str, **asked) -> sc.Problem | None:
    return sc.in_debate(text, side="con", stage="constructive", motion=MOTION, shown=(), fmt=AGENT4DEBATE,
                        language="en", share=0.25, budget=50, **asked)


def test_an_echo_of_the_writers_instructions_is_named_though_an_earlier_prompt_came_first():
    # The prompts the speech's debater was given before it wrote a draft: its research's, then its Writer's.
    problem = _con_constructive(A4D_ECHO, prompts=[SEARCHER, WRITER], instructions=[SEARCHER, WRITER])
    assert str(problem) == "echo: 100% of it is copied from what it was shown, most from the prompt"
    # A speech of its own on the same prompts passes.
    assert _con_constructive(CON_CONSTRUCTIVE, prompts=[SEARCHER, WRITER], instructions=[SEARCHER, WRITER]) is None


def _rebuttal(text: str, prompt: str) -> sc.Problem | None:
    return sc.in_debate(text, side="con", stage="rebuttal", motion=MOTION, shown=SHOWN, fmt=AGENT4DEBATE,
                        language="en", share=0.25, budget=50, prompts=[prompt])


PROMPT = "# Knowledge\nThe debate so far, in speaking order:\n" + transcript.render(SHOWN) + "\n# Workflow\nRebut."
KEY = re.search(r"key ([0-9a-f]{12}) ===", PROMPT).group(1)  # the key that marks its speeches


def test_a_line_with_the_transcripts_key_is_no_speech():
    # SmolLM2's CON rebuttal: a few words of its own, and a line holding the key of the transcript it was shown.
    speech = f"The PRO side is wrong about organic farming, and the judge should see why.\nkey {KEY} ==="
    assert str(_rebuttal(speech, PROMPT)) == (f"echo: it copies a piece of the transcript's marker lines, "
                                              f"'key {KEY} ===', from what it was shown")
    # The issue's own key, on a line of its own, is one whatever prompt it came from.
    assert _rebuttal("Our case stands, as the judge heard.\nkey 7a1e174f6a60 ===", "").check == "echo"
    # The key alone in a sentence: only the transcript shown has it.
    keyed = f"As the speech under key {KEY} said, {HEALTHY}"
    assert str(_rebuttal(keyed, PROMPT)) == \
        f"echo: it holds the key '{KEY}' that marked the speeches of the transcript it was shown"
    assert _rebuttal(keyed.replace(KEY, "our first speech"), PROMPT) is None


def test_an_echo_of_the_transcripts_preface_is_no_speech():
    # SmolLM2's PRO rebuttal: the words that opened the debate so far in its prompt, given back as its speech.
    preface = PROMPT.split("\n\n=== ")[0].split("\n", 1)[1]
    assert str(_rebuttal(preface, PROMPT)).startswith("echo: it copies a piece of the transcript's marker lines")
    unkeyed = preface.replace(f" · key {KEY} ===", "").replace(KEY, "K")
    assert str(_rebuttal(unkeyed, PROMPT)) == "echo: 99% of it is copied from what it was shown, most from the prompt"


def test_debate_speeches_that_mention_keys_markers_and_the_prompt_pass():
    for text in (HEALTHY, MENTIONS, HEALTHY + "\n=== A heading of my own ===",
                 HEALTHY + " The key to this debate is cost === benefit."):
        assert _rebuttal(text, PROMPT) is None, text


BUDGETS = "words_constructive = 50\nwords_rebuttal = 50\nwords_summary = 50"


def test_an_agent4debate_writer_echoing_its_instructions_forfeits(tmp_path, fake_llm, fake_tavily, monkeypatch):
    """In a match: the Writer's instructions come after the Searcher's and the Strategist's prompts, which no
    longer hide them from the check."""

    class Echoer(Script):
        def __call__(self, body):
            role, stage, side = role_stage_side(body)
            if role == "writer" and (stage, side) == ("constructive", "pro"):
                self.calls.append((role, stage, side))
                text = body["messages"][0]["content"]
                workflow = text.split("# Workflow\n", 1)[1].split("\n2.", 1)[0]  # its first lines, as SmolLM2 did
                if not body.get("response_format"):  # asked for plain text at last
                    return workflow
                return json.dumps({"material_request": None, "speech": workflow}
                                  if "material_request" in properties(body) else {"speech": workflow})
            return super().__call__(body)

    fake_llm.responder = Echoer()
    ws = make_workspace(tmp_path, fake_llm, fake_tavily, monkeypatch, params=BUDGETS)  # the budgets
    try:
        match = play(ws)
    finally:
        ws.close()
    assert match.forfeit is not None and match.forfeit.side == "pro" and match.verdicts == ()
    assert match.forfeit.reason.startswith("echo: 100% of it is copied from what it was shown, most from the prompt")


# A summary as SmolLM2 gives CON's, and PRO's after it: CON's again with the sides' names and a few words swapped,
# which leaves no stretch of 16 words in common for the copied share to find.
CON_SUMMARY = ("The CON side has shown that organic farming cannot feed the world's population. Yields are lower, "
               "land is limited, and the PRO side has not answered these points. The judge should vote CON.")
PRO_SUMMARY = ("The PRO side has shown that organic farming can feed the world's population. Yields are higher, "
               "land is enough, and the CON side has not answered these points. The judge should vote PRO.")


def _summary(text: str, shown: tuple[Speech, ...]) -> sc.Problem | None:
    return sc.in_debate(text, side="pro", stage="summary", motion=MOTION, shown=shown, fmt=AGENT4DEBATE,
                        language="en", share=0.25, budget=50)


def test_a_near_copy_of_the_other_sides_speech_is_an_echo_however_short():
    shown = (*SHOWN, Speech("summary", "con", CON_SUMMARY))
    assert str(_summary(PRO_SUMMARY, shown)) == \
        "echo: it is a near-copy of CON's summary: 82% of its words are that text's, in the same order"
    # A summary of its own that answers CON's in the same words here and there is a summary.
    own = ("Our opponents say organic farming cannot feed the world's population, but they never answered our "
           "evidence that yields close the gap within a decade when soil health is rebuilt. Weigh that, and vote PRO.")
    assert _summary(own, shown) is None


# The direct debater's prompt for PRO's constructive as SmolLM2 was sent it in a real run (50-word budgets), and the
# speech it wrote: the workflow read back in its own words, a word changed or dropped in each step, which keeps too
# few runs of words whole for the copied share (it was stored and judged).
DIRECT = f"""# Profile
You are an experienced competitive debater speaking for the PRO side: you support the motion. You win rounds with
clear structure, honest reasoning and careful weighing, not with volume.

# Knowledge
Motion: Organic farming could feed the world's population
Category: fact motion
Info slide: Both sides bear an equal burden of proof.

{SMOLLM2_PROMPT}

# Output format
Plain prose in paragraphs, ready to be delivered: no title, no headings, no bullet lists, no notes to yourself."""
RESTATED = (
    "This is your constructive speech: the first speech of your side. You have not heard the other side; you are now "
    "ready to present your own argument and defend it against the opposing side's motion.\n"
    "1. Define the motion's key terms in the way most reasonable for a neutral listener.\n"
    "2. State the criterion by which the judge should decide the debate.\n"
    "3. Build at most three main arguments, each with a claim, its reasoning and the kind of evidence that supports "
    "it.\n4. Close by saying why these arguments carry the motion for your side.\n"
    "5. Address the judge, not the opponent; stay civil.\n"
    "6. Do not invent statistics or quotes; no bullet lists are required.\n"
    "7. Address the judge, not the other side's motion; you will present your")


def _pro_constructive(text: str, prompt: str = DIRECT) -> sc.Problem | None:
    return sc.in_debate(text, side="pro", stage="constructive", motion=MOTION, shown=(), fmt=AGENT4DEBATE,
                        language="en", share=0.25, budget=50, prompts=[prompt])


def test_instructions_restated_line_by_line_are_an_echo():
    problem = _pro_constructive(RESTATED)
    assert problem is not None and problem.check == "echo", problem
    assert str(problem).endswith("of it restates the instructions it was given, line by line"), problem
    # A speech of its own on the same prompt passes, as does one that takes its words from the knowledge part.
    own = ("Organic farming could feed the world's population, because most hunger today comes from waste and "
           "poverty, not from too little harvest. Judge this debate by whether enough food can be grown without "
           "synthetic inputs. Legume rotations restore nitrogen, and yield gaps shrink as farmers gain experience.")
    assert _pro_constructive(own) is None
    findings = ["Legume rotations restore soil nitrogen without synthetic fertiliser.",
                "Long-term trials put organic yields within a fifth of conventional ones.",
                "A third of the food grown today is lost or wasted before it is eaten."]
    knowledge = DIRECT.replace("Info slide: Both sides bear an equal burden of proof.",
                               "Findings your researcher compiled:\n" + "\n".join(f"- {f} [1]" for f in findings))
    uses = ("Legume rotations restore the soil's nitrogen, with no synthetic fertiliser.\n"  # each finding, reworded
            "Long-term field trials put organic yields within one fifth of the conventional ones.\n"
            "A full third of the food grown today is lost, or else wasted, before anyone eats it.\n"
            "So the world's population can be fed by farming that feeds its soil.")
    assert _pro_constructive(uses, knowledge) is None
    assert _pro_constructive(uses, knowledge.replace("# Knowledge", "# Rules")).check == "echo"  # the part decides
