"""Scripted Agent4Debate teams for the fake LLM server (Script reads the English prompts, ChineseScript the
Chinese ones), a workspace of agent4debate and both baselines on the fake servers, and one match played there."""
from __future__ import annotations

import asyncio
import json
import re
import tomllib

from arena.app.commands import open_workspace
from arena.app.runner.engine import MatchRunner
from tests.support.helpers import entry, judge, new_workspace, requested_schema, speech_text

VERDICT = {"rationale": "close", "argument": "pro", "source": "pro", "language": "tie", "overall": "pro"}
STAGE_ZH = {"立论": "constructive", "驳论": "rebuttal", "总结陈词": "summary", "总结": "summary"}
SIDE_ZH = {"正方": "pro", "反方": "con"}
STAGES = ("constructive", "rebuttal", "summary")
ROLE_OF = {"research lead": "searcher", "strategist": "analyzer", "speaker of a competitive debate team": "writer",
           "coach of a competitive debate team": "reviewer"}


def role_stage_side(body: dict) -> tuple[str, str, str]:
    """Read an agent request's role, stage and side off the prompt the debater rendered."""
    text = body["messages"][0]["content"]
    profile = text.rsplit("\n# Profile\n", 1)[-1].split("\n# Workflow\n", 1)[0]  # the role's part, after the knowledge
    role = next((r for phrase, r in ROLE_OF.items() if phrase in profile), "other")
    stage = re.search(r"^Current stage: (\w+)", text, re.MULTILINE)
    side = re.search(r"^Your team: (PRO|CON)", text, re.MULTILINE)
    if stage is None:  # the direct baseline's prompt
        stage = re.search(r"This is your (\w+) speech", text)
        side = re.search(r"speaking for the (PRO|CON) side", text)
        role = "direct" if stage else ("judge" if body.get("response_format") else "other")
    return role, stage.group(1) if stage else "", side.group(1).lower() if side else ""


def properties(body: dict) -> dict:
    return body["response_format"]["json_schema"]["schema"]["properties"]


class Script:
    """A scripted team: what each agent answers, and a log of who was asked what.

    requests: (stage, side, "draft" or "revise") -> material requests the Writer makes while allowed.
    cite: the citations of every draft, or per stage.
    """

    def __init__(self, *, approve_after: int = 0, requests: dict | None = None, cite=(1, 2, 99)):
        self.approve_after = approve_after  # reviews that reject before one approves
        self.requests = requests or {}
        self.cite = cite if isinstance(cite, dict) else {stage: cite for stage in STAGES}
        self.calls: list[tuple[str, str, str]] = []
        self.reviews: dict[tuple[str, str], int] = {}
        self.asked: dict[tuple[str, str, str], int] = {}
        self.searches: dict[tuple[str, str], int] = {}
        self.drafts: dict[tuple[str, str], int] = {}

    def __call__(self, body: dict) -> str:
        role, stage, side = key = role_stage_side(body)
        self.calls.append(key)
        if role == "searcher" and "findings" in properties(body):
            numbers = properties(body)["findings"]["items"]["properties"]["sources"]["items"]["enum"]
            return json.dumps({"findings": [{"topic": f"Topic {side}", "finding": f"FINDING<{side}|{stage}> #{n}",
                                             "bearing": "for us", "sources": [n]} for n in numbers],
                               "gaps": [f"GAP<{side}|{stage}>"]})
        if role == "searcher":
            n = self.searches[(stage, side)] = self.searches.get((stage, side), 0) + 1
            suffix = f" #{n}" if n > 1 else ""  # distinct queries, so a second request is not a cache hit
            limit = properties(body)["queries"]["maxItems"]
            return json.dumps({"queries": [f"{side} {stage} evidence one{suffix}",
                                           f"{side} {stage} evidence two{suffix}"][:limit]})
        if role == "analyzer":
            return f"PLAN<{side}|{stage}> Definitions, criterion, arguments."
        if role == "writer":
            can_request = "material_request" in properties(body)
            phase = "revise" if "Your previous draft:" in body["messages"][0]["content"] else "draft"
            wanted = (stage, side, phase)
            if can_request and self.asked.get(wanted, 0) < self.requests.get(wanted, 0):
                self.asked[wanted] = self.asked.get(wanted, 0) + 1
                request = {"need": "a cost figure", "query": f"{side} cost figure"}
                if stage == "summary":
                    request = {"point": "OUR-EARLIER-POINT", **request}
                return json.dumps({"material_request": request, "speech": ""})
            citations = " ".join(f"[{n}]" for n in self.cite[stage])
            n = self.drafts[(stage, side)] = self.drafts.get((stage, side), 0) + 1
            speech = speech_text(f"SPEECH<{side}|{stage}> Draft {n}: our case stands {citations}.")
            return json.dumps({"material_request": None, "speech": speech} if can_request else {"speech": speech})
        if role == "reviewer":
            done = self.reviews.get((stage, side), 0)
            self.reviews[(stage, side)] = done + 1
            approve = done >= self.approve_after
            review = {"checks": [{"item": "structure", "ok": approve, "note": "checked"}], "approve": approve,
                      "feedback": [] if approve else ["Cite [2] for the cost."]}
            if "debate_state" in properties(body):
                review["debate_state"] = {"leading": "them", "reasons": ["STATE-REASON: their harm is unanswered"]}
            return json.dumps(review)
        if role == "judge":
            return json.dumps(VERDICT)
        citations = " ".join(f"[{n}]" for n in self.cite["constructive"])
        return speech_text(f"DIRECT<{side}|{stage}> A plain speech {citations}.")


def make_workspace(tmp_path, fake_llm, fake_tavily, monkeypatch, *, params: str = "", language: str = "en"):
    """An open workspace on the fake servers (Tavily search, 3 results): agent4debate "a4d" (with params, TOML
    text), the direct baseline "base", the search baseline "sb", and judge "j"; the motion set of the language."""
    monkeypatch.setenv("TAVILY_API_KEY", "tvly-test")
    base = fake_llm.api_base
    new_workspace(tmp_path / "ws", arena={"language": language, "judge_runs": 1}, llm={"backoff_s": 0.01},
                  search={"provider": "tavily", "api_base_url": fake_tavily.base_url, "max_results": 3},
                  motions=[f"builtin:{language}"],
                  entries=[entry("a4d", "agent4debate", "openai/a4d", api_base=base, params=tomllib.loads(params)),
                           entry("base", model="openai/base", api_base=base),
                           entry("sb", "search-baseline", "openai/sb", api_base=base)],
                  judges=[judge("j", model="openai/judge", api_base=base)])
    return open_workspace(tmp_path / "ws")


def play(ws, motion_id: str = "en-policy-001", pro: str = "a4d", con: str = "base"):
    (match_id,) = ws.store.add_tournament("single", 0, {}, [(motion_id, pro, con)])
    runner = MatchRunner.of(ws)
    asyncio.run(runner.play_match(ws.store.match(match_id), list(ws.config.judges)))
    return ws.store.match(match_id)


def stage_and_side_zh(text: str) -> tuple[str, str]:
    """Read a Chinese debater prompt's stage and side: agent4debate's frame, or the direct baselines' profile."""
    stage = re.search(r"^当前阶段：(立论|驳论|总结陈词)", text, re.MULTILINE) or re.search(
        r"这是你的(立论|驳论|总结)陈词", text)
    side = re.search(r"^我方：(正方|反方)（", text, re.MULTILINE) or re.search(r"代表(正方|反方)（", text)
    assert stage and side, text[:500]
    return STAGE_ZH[stage.group(1)], SIDE_ZH[side.group(1)]


class ChineseScript:
    """A scripted Chinese match: each a4d Writer asks for material once per speech, each Reviewer rejects the
    first draft (so the revision prompt renders too), the baselines write plain text."""

    def __init__(self):
        self.asked: set[tuple[str, str]] = set()
        self.reviews: dict[tuple[str, str], int] = {}
        self.queries = 0

    def __call__(self, body: dict) -> str:
        if body["model"] == "judge":
            return json.dumps(VERDICT)
        text = body["messages"][0]["content"]
        stage, side = stage_and_side_zh(text)
        properties = (requested_schema(body) or {}).get("properties", {})
        if "queries" in properties:
            self.queries += 1  # every query new, so each round finds new sources to compile
            return json.dumps({"queries": [f"{side} {stage} 检索 {self.queries}"]}, ensure_ascii=False)
        if "findings" in properties:
            numbers = properties["findings"]["items"]["properties"]["sources"]["items"]["enum"]
            return json.dumps({"findings": [{"topic": "成本", "finding": f"发现 {n}", "bearing": "for us",
                                             "sources": [n]} for n in numbers], "gaps": ["缺口"]},
                              ensure_ascii=False)
        if "speech" in properties:
            if "material_request" in properties and (stage, side) not in self.asked:
                self.asked.add((stage, side))
                request = {"need": "一个成本数字", "query": f"{side} {stage} 成本"}
                if "point" in properties["material_request"]["properties"]:
                    request = {"point": "我方此前的论点", **request}
                return json.dumps({"material_request": request, "speech": ""}, ensure_ascii=False)
            speech = speech_text(f"SPEECH<{side}|{stage}> 我方观点成立 [1]。", "zh")
            return json.dumps({"material_request": None, "speech": speech} if "material_request" in properties
                              else {"speech": speech}, ensure_ascii=False)
        if "checks" in properties:
            done = self.reviews[(stage, side)] = self.reviews.get((stage, side), 0) + 1
            approve = done > 1
            review = {"checks": [{"item": "structure", "ok": approve, "note": "已检查"}], "approve": approve,
                      "feedback": [] if approve else ["第二段请引用 [1]"]}
            if "debate_state" in properties:
                review["debate_state"] = {"leading": "them", "reasons": ["对方的论点尚未得到回应"]}
            return json.dumps(review, ensure_ascii=False)
        return speech_text(f"TEXT<{body['model']}|{side}|{stage}> 我方观点成立，因为有证据 [1]。", "zh")
