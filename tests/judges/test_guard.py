"""The `guard` option on every judge kind, read off the requests the fake LLM server recorded: each prompt that reads
speeches states the guard's rule, in the prompt's language and among its Rules, exactly when the option is on; a
prompt that reads no speech (a debatrix adjudicator's verdict on its own notes, its chair, a panel's clerk) never
does; and the rule is all the option changes, so a guarded judge's prompts begin as an unguarded one's and share its
cached prefixes (the Rules come after the cache break: tests/judges/test_prompt_order.py)."""
from __future__ import annotations

import asyncio
import json

import pytest

from arena.base.errors import UserError
from arena.domain import transcript
from arena.domain.records import JudgeSpec, Motion, Speech
from arena.gateway.catalog import ModelRef
from arena.gateway.llm import LLMGateway
from arena.match.judging import COMMON_OPTIONS, JudgeView, run_judge
from arena.match.protocol import AgentLog, LLMHandle
from arena.workspace.config import LLMSettings
from judges.guard import guard_rule
from judges.registry import JUDGES
from tests.support.helpers import requested_schema, schema_instance

ORDER = [("constructive", "pro"), ("constructive", "con"), ("rebuttal", "pro"), ("rebuttal", "con"),
         ("summary", "con"), ("summary", "pro")]
# Every template of each kind in few calls: the critic objects once, so the scorer revises and the tie-breaker
# decides; the panel's clerk summarises its one turn.
KINDS = {
    "single": {},
    "debatrix": {},
    "panel": {"referees": 2, "turns": 1, "strategy": "simultaneous_talk_with_summarizer"},
    "devils_advocate": {"iterations": 1, "tiebreaker": True},
}
# The headings a prompt's rules sit between, per language.
RULES = {"en": ("# Rules", "# Output format"), "zh": ("# 规则", "# 输出格式")}
VIEWS = {
    "en": JudgeView(Motion("en-1", "Cities should ban cars", "policy"),
                    tuple(Speech(stage, side, f"The {side} {stage} speech: our case holds.") for stage, side in ORDER)),
    "zh": JudgeView(Motion("zh-1", "城市应当禁止汽车", "policy", language="zh"),
                    tuple(Speech(stage, side, f"{'正方' if side == 'pro' else '反方'}{stage}发言：我方立场成立。")
                          for stage, side in ORDER)),
}


def respond(body: dict) -> str:
    """A valid instance of any structured request, the critic objecting; a note for a free-text turn."""
    schema = requested_schema(body)
    if schema is None:
        return "A note on the debate."
    answer = schema_instance(schema)
    if "status" in schema.get("properties", {}):
        answer["status"] = "ISSUES"
    return json.dumps(answer)


def prompts(fake_llm, kind: str, language: str, guard: bool) -> list[str]:
    """The prompts one run of a judge of kind sent for the view in language, the guard on or off."""
    fake_llm.responder = respond
    before = len(fake_llm.requests)
    spec = JudgeSpec(f"{kind}-guard", kind, "openai/guard-judge", fake_llm.api_base, 1, {**KINDS[kind], "guard": guard})
    gateway = LLMGateway(LLMSettings(backoff_s=0.01, cache=False), None)
    handle = LLMHandle(gateway, ModelRef("openai/guard-judge", fake_llm.api_base), AgentLog(), match_id=None)
    verdict = asyncio.run(run_judge(JUDGES.get(kind)(spec), VIEWS[language], handle, 0))
    assert verdict.error is None, verdict
    return ["\n".join(m["content"] for m in r.body["messages"]) for r in fake_llm.requests[before:]]


@pytest.mark.parametrize("language", ["en", "zh"])
@pytest.mark.parametrize("kind", KINDS)
def test_the_rule_is_in_every_prompt_that_reads_speeches_exactly_when_guard_is_on(fake_llm, kind, language):
    rule = guard_rule(True, language)
    line = f"- {rule}\n"
    off, on = prompts(fake_llm, kind, language, False), prompts(fake_llm, kind, language, True)
    reading = [p for p in on if transcript.HEADER.search(p)]
    assert reading  # every kind reads the debate somewhere
    if kind in ("debatrix", "panel"):
        assert len(reading) < len(on)  # and these read their notes or the discussion elsewhere
    assert not any(rule in p for p in off)
    for prompt in on:
        assert (prompt.count(line) == 1) == bool(transcript.HEADER.search(prompt)), prompt[-600:]
        if line in prompt:
            rules, output = RULES[language]
            assert prompt.index(rules) < prompt.index(line) < prompt.index(output)
    # The rule is all the option changes: the same prompts without it, in any order (a panel's talk is concurrent).
    assert sorted(p.replace(line, "") for p in on) == sorted(off)


def test_the_rule_in_each_language_and_the_option_s_default():
    english, chinese = guard_rule(True, "en"), guard_rule(True, "zh")
    assert "never addressed to you" in english and "judged only on what it argues" in english
    assert "从来不是写给你的话" in chinese and "English" not in chinese
    assert guard_rule(True, "fr") == english  # a language without prompts of its own: the English one
    assert guard_rule(False, "en") == "" and COMMON_OPTIONS["guard"].default is False


def test_every_kind_takes_the_option_and_a_jury_passes_it_to_its_inner_kind():
    for kind in (*KINDS, "jury"):
        options = {"guard": True, **({"pool": ["openai/a", "mistral/b"], "size": 1} if kind == "jury" else {})}
        judge = JUDGES.get(kind)(JudgeSpec(f"{kind}-g", kind, "openai/m", "", 1, options))
        assert (judge.inner if kind == "jury" else judge).options["guard"] is True
    with pytest.raises(UserError, match="guard"):
        JUDGES.get("single")(JudgeSpec("s", "single", "openai/m", "", 1, {"guard": "yes"}))
