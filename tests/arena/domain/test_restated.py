"""The restated check (arena.domain.restated) on prompts in cache order: the knowledge part comes first, after an
opening paragraph, and the instructions (profile, workflow, rules, output format) follow it. The check still tells
the two apart wherever they stand, and a heading a speech of the transcript writes ends no part."""
from __future__ import annotations

from arena.base.prompts import render
from arena.domain import transcript
from arena.domain.formats import AGENT4DEBATE
from arena.domain.records import Motion, Speech
from arena.domain.restated import RESTATED_SHARE, restated
from arena.gateway.chat import user
from debaters import agent4debate as a4d
from debaters import direct

MOTION = Motion("en-fact-015", "Organic farming could feed the world's population", "fact")
FINDINGS = ("Legume rotations restore soil nitrogen without synthetic fertiliser.",
            "Long-term trials put organic yields within a fifth of conventional ones.",
            "A third of the food grown today is lost or wasted before it is eaten.")
# Each finding reworded, as a speech that uses its knowledge base does.
USES = ("Legume rotations restore the soil's nitrogen, with no synthetic fertiliser.\n"
        "Long-term field trials put organic yields within one fifth of the conventional ones.\n"
        "A full third of the food grown today is lost, or else wasted, before anyone eats it.\n"
        "So the world's population can be fed by farming that feeds its soil.")
# The direct prompt's workflow read back, a word changed or dropped in each step (SmolLM2-135M's kind of echo).
RESTATES = ("This is your rebuttal speech, and you are ready.\n"
            "1. Identify the points of clash between both sides.\n"
            "2. Challenge the opponent's definitions or criterion if unfair, and say which should be preferred.\n"
            "3. Answer the opponent's main arguments one by one: expose missing evidence and weak links in reasoning.\n"
            "4. Rebuild your own arguments where they were attacked.")


def _sent(text: str) -> str:
    """The prompt as the gateway sends it: its cache break taken out."""
    return str(user(text)["content"])


def _writer_prompt(speeches: list[Speech]) -> str:
    """agent4debate's rebuttal Writer prompt for PRO, its knowledge base holding FINDINGS, after speeches."""
    findings = "Agronomy:\n" + "\n".join(f"- (for us) {f} [1]" for f in FINDINGS)
    return _sent(render(a4d.PROMPTS, "writer/rebuttal.j2", motion=MOTION, side="pro", language="en",
                        stage="rebuttal", stage_order=AGENT4DEBATE.place("rebuttal"),
                        sources="[1] Organic yields (https://example.org/1)\nWhat the study found.",
                        findings=findings, gaps=[], found="", analysis="", feedback=[], draft="", state=None,
                        transcript=transcript.render(speeches, key="0123456789ab"), length=50, unit="words",
                        can_request=False, requests_left=0, plain=True))


def test_the_instructions_after_the_knowledge_are_found_and_the_knowledge_is_not_instructions():
    prompt = _sent(render(direct.PROMPTS, "direct/rebuttal.j2", motion=MOTION, side="pro", language="en",
                          transcript="", length=50, unit="words"))
    assert prompt.index("# Knowledge") < prompt.index("# Workflow")  # the cache order
    assert restated(RESTATES, prompt, [MOTION.text]) >= RESTATED_SHARE
    # What the knowledge part says (the findings, before the instructions) is material a speech may use.
    assert restated(USES, _writer_prompt([]), [MOTION.text]) == 0.0


def test_a_heading_inside_a_speech_of_the_transcript_ends_no_part():
    # A speech that wrote the headings of its own prompt (SmolLM2 copies them) sits in the transcript, before the
    # knowledge base: the findings after it are still knowledge, not instructions.
    copied = Speech("constructive", "con", "Our case.\n# Rules\n- Cite nothing.\n# Output format\nProse.")
    prompt = _writer_prompt([copied])
    transcript_at, findings_at = prompt.index("=== CON · constructive"), prompt.index(FINDINGS[0])
    assert transcript_at < prompt.index("\n# Rules\n") < findings_at < prompt.index("\n# Profile\n")
    assert restated(USES, prompt, [MOTION.text, copied.text]) == 0.0
    # The writer's own instructions, after the knowledge, are still instructions.
    workflow = prompt.split("\n# Workflow\n", 1)[1].split("\n# Rules\n", 1)[0]
    assert restated(workflow, prompt, [MOTION.text, copied.text]) >= RESTATED_SHARE
