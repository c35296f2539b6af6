"""Debate formats as data (arena.domain.formats): the lechmazur format played by direct and search-baseline entries on the
fake server, checked on what each speaker and judge received; agent4debate refusing a format it cannot map;
`[arena] format` checked; and the format's ten turns in order on the site, the ballot page and `arena match show`."""
from __future__ import annotations

import asyncio
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from markupsafe import escape

from arena.domain import transcript
from arena.app import commands as app
from arena.app.commands import open_workspace
from arena.domain.ballots import ballot_id, new_token, token_hash
from arena.workspace.config import LLMSettings, SearchSettings
from arena.base.errors import UserError
from arena.domain.formats import AGENT4DEBATE, LECHMAZUR, Format, Turn, get_format
from arena.gateway.llm import LLMGateway
from arena.gateway.catalog import ModelRef
from arena.match.protocol import AgentLog, DebateContext, Draft, LLMHandle, SearchHandle, play
from arena.domain.records import Entry, Motion, Speech
from arena.gateway.search import SearchGateway
from arena.store import DB_NAME, Store
from debaters.agent4debate import Agent4Debate
from debaters.direct import turn_prompt
from debaters.params import LENGTHS, Length, length, resolve
from tests.support.fakes.openai_server import FakeOpenAI
from tests.support.fixtures import Recording
from tests.support.helpers import (arena_process, assert_user_error, entry, install_plugin, invoke, judge, mark_checked,
                           new_workspace, people, query, requested_schema, schema_instance, speech_text,
                           workspace_toml)

TURNS = [(t.stage, t.side) for t in LECHMAZUR.turns]
TITLES = ["Opening", "Rebuttal 1", "Pressure Questions", "Rebuttal 2", "Closing"]
SPOKEN = ("1. PRO opening, 2. CON opening, 3. PRO rebuttal 1, 4. CON rebuttal 1, 5. PRO pressure questions, "
          "6. CON pressure questions, 7. PRO rebuttal 2, 8. CON rebuttal 2, 9. PRO closing, 10. CON closing")
JUDGE_KINDS = ("single", "debatrix", "panel", "devils_advocate")
MOTION = "en-fact-001"


def responder(body: dict) -> str:
    """A structured answer for every structured call (a judge's); a speech naming its model, turn and side for a
    debater's prompt; a note for any other judge call."""
    schema = requested_schema(body)
    if schema is not None:
        return json.dumps(schema_instance(schema))
    prompt = body["messages"][0]["content"]
    turn = re.search(r"This is your (.+?) speech, turn \d+ of 10", prompt)
    side = re.search(r"speaking for the (PRO|CON) side", prompt)
    if turn and side:
        return speech_text(f"SPEECH<{body['model']}|{turn.group(1)}|{side.group(1)}> Our case stands.")
    return "A note on the speeches read so far."


# --- the lechmazur format, played by direct and search-baseline -------------------------------------------------

def build_lechmazur_run(path: Path) -> tuple[list[str], Recording]:
    """Two lechmazur matches (sides swapped) of a direct and a search-baseline entry on a fake server of the build's
    own, judged by one single judge: the match ids, and what the server received."""
    with FakeOpenAI(responder) as fake_llm:
        new_workspace(path, arena={"format": "lechmazur", "judge_runs": 1},
                      llm={"backoff_s": 0.01}, motions=["builtin:en"],
                      entries=[entry("alpha", model="openai/alpha", api_base=fake_llm.api_base),
                               entry("beta", "search-baseline", model="openai/beta", api_base=fake_llm.api_base)],
                      judges=[judge("j1", model="openai/judge", api_base=fake_llm.api_base)])
        mark_checked(path)
        ws = open_workspace(path)
        try:
            ids = app.schedule(ws, "round-robin", rounds=1).match_ids
            assert app.run(ws, concurrency=1, progress=lambda line: None)["done"] == 2
        finally:
            ws.close()
        return ids, Recording.of(fake_llm)


@pytest.fixture
def lechmazur_run(builds, tmp_path):
    """The test's own copy of build_lechmazur_run's workspace (played once per test process), and its match ids."""
    built = builds.copy("formats:lechmazur_run", build_lechmazur_run, tmp_path / "ws")
    return built.path, built.value[0]


@pytest.fixture
def lechmazur_server(builds) -> Recording:
    """What the fake server received while build_lechmazur_run played (the requests of lechmazur_run's matches)."""
    return builds.get("formats:lechmazur_run", build_lechmazur_run).value[1]


def test_each_lechmazur_turn_sees_every_earlier_turn_with_its_title_place_and_budget(lechmazur_run, lechmazur_server):
    path, ids = lechmazur_run
    prompts = [(r.body["model"], r.body["messages"][0]["content"]) for r in lechmazur_server.requests
               if r.body["model"] in ("alpha", "beta")]
    assert len(prompts) == 20  # ten turns in each of two matches, one call each
    store = Store(path / DB_NAME)
    try:
        matches = [store.match(match_id) for match_id in ids]
    finally:
        store.close()
    for match in matches:
        assert match.format == "lechmazur" and match.status == "done"
        assert [(s.stage, s.side) for s in match.speeches] == TURNS
        texts = [s.text for s in match.speeches]
        for k, turn in enumerate(LECHMAZUR.turns):
            model = (match.pro if turn.side == "pro" else match.con)
            heading = f"This is your {turn.title} speech, turn {k + 1} of 10 in this debate."
            (prompt,) = [p for m, p in prompts if m == model and heading in p
                         and f"speaking for the {turn.side.upper()} side" in p]
            assert texts[k] == speech_text(f"SPEECH<{model}|{turn.title}|{turn.side.upper()}> Our case stands.")
            assert [text in prompt for text in texts] == [j < k for j in range(10)], (turn, model)
            assert f"Current stage: {LECHMAZUR.place(turn.stage)}." in prompt and turn.brief in prompt
            assert f"about {turn.words} words" in prompt
            assert ("Sources found by one web search" in prompt) == (model == "beta")
        con_opening = next(p for m, p in prompts if m == match.con and "This is your Opening speech, turn 2" in p)
        assert texts[0] in con_opening  # Con's Opening answers Pro's: no turn of this format is blind


def test_the_judge_reads_the_ten_turns_in_order_under_their_titles(lechmazur_run, lechmazur_server):
    _, ids = lechmazur_run
    judged = [r.body["messages"][0]["content"] for r in lechmazur_server.requests if r.body["model"] == "judge"]
    assert len(judged) == 2
    for prompt in judged:
        assert f"Speaking order: {SPOKEN}." in prompt
        assert [(stage, side) for side, stage, _ in transcript.split(prompt)] == TURNS


def test_a_match_records_its_format_and_match_show_gives_its_turns(lechmazur_run):
    path, ids = lechmazur_run
    assert query(path, "SELECT DISTINCT format FROM matches") == [("lechmazur",)]
    shown = invoke("match", "show", ids[0], "-w", path, "--format", "json")
    assert shown.exit_code == 0, shown.output
    data = json.loads(shown.output)
    assert data["format"] == "lechmazur"
    assert [(s["title"], s["stage"], s["side"]) for s in data["speeches"]] == \
        [(t.title, t.stage, t.side) for t in LECHMAZUR.turns]
    text = invoke("match", "show", ids[0], "-w", path)
    headings = re.findall(r"^--- (.+) · (PRO|CON) ---$", text.output, re.MULTILINE)
    assert headings == [(t.title, t.side.upper()) for t in LECHMAZUR.turns]
    assert "Format: lechmazur" in text.output


# --- every judge kind, the site and the ballot page ----------------------------------------------------------------

@pytest.fixture(scope="module")
def judged(tmp_path_factory):
    """A lechmazur match of two simulated entries, judged by one judge of every kind on a fake server: the
    workspace, the match and the prompts each judge received."""
    with FakeOpenAI() as fake:
        fake.responder = responder
        path = new_workspace(tmp_path_factory.mktemp("formats") / "ws", arena={"format": "lechmazur"},
                             motions=["builtin:en"], entries=[entry("a", strength=0.5), entry("b")],
                             judges=[judge(kind, kind, model=f"openai/{kind}", api_base=fake.api_base, runs=1)
                                     for kind in JUDGE_KINDS])
        mark_checked(path)
        ws = open_workspace(path)
        try:
            match = app.play_one(ws, MOTION, "a", "b", progress=lambda line: None)
        finally:
            ws.close()
        prompts = {kind: [r.body["messages"][0]["content"] for r in fake.requests if r.body["model"] == kind]
                   for kind in JUDGE_KINDS}
    return path, match, prompts


@pytest.mark.parametrize("kind", JUDGE_KINDS)
def test_every_judge_kind_reads_the_turns_in_order_under_their_titles(judged, kind):
    _, match, prompts = judged
    assert match.status == "done" and {v.judge for v in match.verdicts if not v.failed} == set(JUDGE_KINDS)
    assert any(SPOKEN in p for p in prompts[kind])
    read = []
    for prompt in prompts[kind]:
        blocks = [(stage, side) for side, stage, _ in transcript.split(prompt)]
        assert blocks == sorted(blocks, key=TURNS.index)  # never out of the format's order
        read += blocks
    assert set(read) == set(TURNS)


def test_the_site_shows_the_ten_turns_in_order(judged, tmp_path):
    path, match, _ = judged
    site = tmp_path / "site"
    published = invoke("publish", "-w", path, "--out", site)
    assert published.exit_code == 0, published.output
    page = next((site / "matches").glob("*.html")).read_text(encoding="utf-8")
    headings = re.findall(r"<h2>(.+?) · (PRO|CON) · ", page)
    assert headings == [(t.title, t.side.upper()) for t in LECHMAZUR.turns]
    where = [page.index(str(escape(s.text))) for s in match.speeches]
    assert where == sorted(where)


@pytest.mark.filterwarnings("ignore:Using `httpx` with `starlette.testclient`")
def test_the_ballot_page_shows_the_ten_turns_in_order(judged, tmp_path):
    from starlette.testclient import TestClient

    from arena.app.people.web import create_app

    source, match, _ = judged
    path = tmp_path / "ws"
    shutil.copytree(source, path)
    with (path / "arena.toml").open("a", encoding="utf-8") as toml:
        toml.write("\n" + workspace_toml(judges=[people("experts", "ann")], search=None))
    token = new_token()
    store = Store(path / DB_NAME)
    try:
        store.issue_links("experts", {"ann": token_hash(token)})
        ballot = ballot_id(store.ballot_secret(), "experts", "ann", match.id)
    finally:
        store.close()
    with TestClient(create_app(path)) as client:
        page = client.get(f"/b/{token}/{ballot}").text
    assert re.findall(r'<h2 id="stage-(\w+)">(.+?)</h2>', page) == \
        [(stage, LECHMAZUR.title_of(stage)) for stage in LECHMAZUR.stages]
    assert re.findall(r"<h3[^>]*>(.+?) · (PRO|CON)</h3>", page) == [(t.title, t.side.upper()) for t in LECHMAZUR.turns]


# --- agent4debate and formats it cannot map -------------------------------------------------------------------------

def test_agent4debate_refuses_a_format_with_a_turn_it_cannot_map(tmp_path):
    path = new_workspace(tmp_path / "ws", init=None, arena={"format": "lechmazur"},
                         entries=[entry("a", "agent4debate"), entry("b")])
    refused = invoke("schedule", "--format", "round-robin", "-w", path)
    assert_user_error(refused, "arena.toml:2: arena.format", "entry 'a' (agent4debate debater)", "'lechmazur'",
                      "'Pressure Questions'", "retire the entry")
    assert not (path / DB_NAME).exists()  # refused before anything was written
    # Retired, it plays no more matches: the workspace opens.
    new_workspace(tmp_path / "ok", init=None, arena={"format": "lechmazur"},
                  entries=[entry("a", "agent4debate", retired=True), entry("b"), entry("c")])
    assert invoke("schedule", "--format", "round-robin", "-w", tmp_path / "ok").exit_code == 0


def test_a_stored_match_in_a_format_its_debater_cannot_play_fails_saying_why(tmp_path):
    path = new_workspace(tmp_path / "ws", arena={"format": "lechmazur"}, motions=["builtin:en"],
                         entries=[entry("a"), entry("b")], judges=[judge("j")])
    assert invoke("schedule", "--format", "random", "--matches", "1", "-w", path).exit_code == 0
    # a becomes an agent4debate entry (it has not played) and new matches go back to the default format
    (path / "arena.toml").write_text(workspace_toml(motions=["builtin:en"], judges=[judge("j")],
                                                    entries=[entry("a", "agent4debate"), entry("b")]),
                                     encoding="utf-8")
    ran = invoke("run", "-w", path)
    assert ran.exit_code == 1, ran.output
    (error,) = [e for (e,) in query(path, "SELECT error FROM matches")]
    assert "'Pressure Questions'" in error and "agent4debate" in error


def test_agent4debate_plays_each_turn_with_the_workflow_its_format_maps_it_to(tmp_path):
    """A two-stage format: its first stage played by the constructive workflow (research first), its second by the
    summary's (the review that reads the state of the debate), each prompt naming the turn's own stage."""
    fmt = Format("two", "Two", "", (Turn("open", "pro", "Open", 200, 500, workflow="constructive"),
                                    Turn("open", "con", "Open", 200, 500, workflow="constructive"),
                                    Turn("close", "con", "Close", 100, 300, workflow="summary"),
                                    Turn("close", "pro", "Close", 100, 300, workflow="summary")))
    Agent4Debate.check_format(fmt)  # every turn mapped: no refusal
    with pytest.raises(UserError, match="'Pressure Questions' \\(stage pressure_questions, PRO\\)"):
        Agent4Debate.check_format(LECHMAZUR)
    store = Store(tmp_path / DB_NAME)
    log = AgentLog()
    llm, search = LLMGateway(LLMSettings(cache=False), store), SearchGateway(SearchSettings(provider="offline"), store)
    # No material requests: the Searcher runs only for the research a constructive workflow opens with.
    debater = Agent4Debate(Entry("a4d", "agent4debate", "offline/a4d", params={"max_requests": 0}))
    motion = Motion("m", "Cities should ban cars", "policy")

    def contexts(side, stage, visible, memory):
        return DebateContext(motion, side, stage, visible, memory,
                             LLMHandle(llm, ModelRef("offline/a4d"), log, match_id=None, stage=stage, side=side),
                             SearchHandle(search, match_id=None, stage=stage, side=side, offline=True), format=fmt)

    try:
        played = asyncio.run(play(motion, {"pro": debater, "con": debater}, contexts, fmt))
    finally:
        store.close()
    assert [(s.stage, s.side) for s in played] == [(t.stage, t.side) for t in fmt.turns]
    prompts = {(m["stage"], m["side"], m["role"]): m["prompt"] for m in log.messages}
    assert {m["stage"] for m in log.messages if m["role"] == "searcher"} == {"open"}
    assert {m["stage"] for m in log.messages if m["role"] == "reviewer"} == {"open", "close"}
    assert all(("debate_state" in m["prompt"]) == (m["stage"] == "close") for m in log.messages
               if m["role"] == "reviewer")
    assert "Current stage: open (stage 1 of 2: PRO speaks first, then CON)" in prompts[("open", "pro", "writer")]
    assert "Current stage: close (stage 2 of 2: CON speaks first, then PRO)" in prompts[("close", "con", "writer")]


# --- the protocol: blind turns, visibility ----------------------------------------------------------------------

class Recorder:
    """A debater that says which turn it gave, and remembers what it saw."""

    def __init__(self, seen: dict):
        self.seen = seen

    async def speak(self, ctx: DebateContext) -> Draft:
        self.seen[(ctx.stage, ctx.side)] = [(s.stage, s.side) for s in ctx.visible]
        return Draft(f"{ctx.side} {ctx.stage}")


def visibility(fmt: Format) -> tuple[dict, list]:
    seen: dict = {}
    motion = Motion("m", "Cities should ban cars", "policy")

    def contexts(side, stage, visible, memory):  # no call is made: the handle only keeps the (empty) log
        handle = LLMHandle(None, ModelRef("offline/x"), AgentLog(), match_id=None, stage=stage, side=side)
        return DebateContext(motion, side, stage, visible, memory, handle, None, format=fmt)

    speeches = asyncio.run(play(motion, {"pro": Recorder(seen), "con": Recorder(seen)}, contexts, fmt))
    return seen, [(s.stage, s.side) for s in speeches]


def test_agent4debate_constructives_stay_blind_to_each_other():
    seen, played = visibility(AGENT4DEBATE)
    order = [(t.stage, t.side) for t in AGENT4DEBATE.turns]
    assert played == order
    assert seen[("constructive", "pro")] == seen[("constructive", "con")] == []
    for k, key in enumerate(order[2:], start=2):
        assert seen[key] == order[:k]


def test_a_blind_stage_of_any_format_sees_only_earlier_stages():
    fmt = Format("x", "X", "", (Turn("open", "pro", "Open", 100, 300), Turn("open", "con", "Open", 100, 300),
                                Turn("secret", "con", "Secret", 100, 300, blind=True),
                                Turn("secret", "pro", "Secret", 100, 300, blind=True),
                                Turn("last", "pro", "Last", 100, 300)))
    seen, played = visibility(fmt)
    assert played == [(t.stage, t.side) for t in fmt.turns]
    assert seen[("open", "con")] == [("open", "pro")]
    assert seen[("secret", "con")] == seen[("secret", "pro")] == [("open", "pro"), ("open", "con")]
    assert seen[("last", "pro")] == played[:4]


# --- [arena] format and the format records -----------------------------------------------------------------------

def test_an_unknown_format_is_refused_naming_the_key_and_the_known_ones(tmp_path):
    path = new_workspace(tmp_path / "ws", init=None, arena={"format": "oxford"}, entries=[entry("a")])
    assert_user_error(invoke("entry", "list", "-w", path), "arena.toml:2: arena.format", "'oxford'",
                      "agent4debate", "lechmazur")
    assert not (path / DB_NAME).exists()
    with pytest.raises(UserError, match="unknown debate format 'oxford'; known: agent4debate, lechmazur"):
        get_format("oxford")


def test_the_init_template_documents_the_format_key(tmp_path):
    assert invoke("init", tmp_path / "ws").exit_code == 0
    text = (tmp_path / "ws" / "arena.toml").read_text(encoding="utf-8")
    assert re.search(r'^format = "agent4debate" +# .*"lechmazur"', text, re.MULTILINE)


def test_formats_name_their_stages_in_chinese_too():
    speeches = [Speech(stage, side, f"{side} {stage}") for stage, side in TURNS]
    text = transcript.render(speeches, language="zh", fmt=LECHMAZUR)
    assert text.splitlines()[-1].startswith("发言顺序：1. 正方（PRO）开篇陈词，2. 反方（CON）开篇陈词，3. 正方（PRO）第一轮反驳")
    assert "stage 为 opening（开篇陈词）、rebuttal_1（第一轮反驳）、pressure_questions（压力质询）" in text
    assert LECHMAZUR.place("pressure_questions", "zh") == "压力质询（第三阶段，共五阶段：正方先发言，反方后发言）"
    assert AGENT4DEBATE.place("constructive") == "stage 1 of 3: both teams open independently"
    assert [LECHMAZUR.title_of(stage) for stage in LECHMAZUR.stages] == TITLES


def test_a_format_lists_speeches_in_its_order_and_unknown_stages_last():
    given = [Speech("extra", "pro", "x"), Speech("closing", "con", "c"), Speech("opening", "pro", "o")]
    assert [s.stage for s in LECHMAZUR.ordered(given)] == ["opening", "closing", "extra"]
    with pytest.raises(ValueError, match="comes back"):
        Format("bad", "Bad", "", (Turn("a", "pro", "A", 1, 1), Turn("b", "pro", "B", 1, 1),
                                  Turn("a", "con", "A", 1, 1)))


@pytest.mark.parametrize("fmt", [AGENT4DEBATE, LECHMAZUR], ids=lambda f: f.name)
def test_the_reference_tables_the_built_in_formats_as_the_code_declares_them(fmt):
    doc = (Path(__file__).resolve().parents[3] / "docs" / "reference" / "formats.md").read_text(encoding="utf-8")
    section = re.split(rf"^### format `{fmt.name}`.*$", doc, flags=re.MULTILINE)[1].split("\n#")[0]
    row = r"^\| (\d+) \| `(\w+)` \| (PRO|CON) \| (.+?) \((.+?)\) \| (\d+) \| (\d+) \| (.+?) \| `?(\w+)`? \|$"
    rows = re.findall(row, section, re.MULTILINE)
    assert rows == [(str(k), t.stage, t.side.upper(), t.title, t.titles["zh"], str(t.words), str(t.chars),
                     "the turns of earlier stages (blind)" if t.blind else "every turn before it", t.workflow or "none")
                    for k, t in enumerate(fmt.turns, start=1)]


DUEL = '''
from arena.domain.formats import Format, Turn

DUEL = Format("duel", "Duel", "Two statements each, CON first.", (
    Turn("statement", "con", "Statement", 120, 300), Turn("statement", "pro", "Statement", 120, 300),
    Turn("reply", "con", "Reply", 80, 200), Turn("reply", "pro", "Reply", 80, 200)))
'''


def test_a_plugin_format_is_played_through_its_entry_point(tmp_path):
    """A distribution advertising arena.domain.formats adds a format that `[arena] format` names and matches play in."""
    env = install_plugin(tmp_path / "site", "duel_format", "[arena.domain.formats]\nduel = duel_format:DUEL\n", DUEL)
    ws = tmp_path / "ws"
    new_workspace(ws, init=None, arena={"format": "duel"}, motions=["builtin:en"], entries=[entry("a"), entry("b")],
                  judges=[judge("j", runs=1)])

    def arena(*args: str) -> subprocess.CompletedProcess:
        return arena_process(*args, "-w", ws, env=env)

    for args in (("schedule", "--format", "random", "--matches", "1"), ("run",)):
        done = arena(*args)
        assert done.returncode == 0, done.stderr
    data = json.loads(arena("match", "show", "m00001", "--format", "json").stdout)
    assert data["format"] == "duel" and data["status"] == "done"
    assert [(s["title"], s["side"]) for s in data["speeches"]] == [("Statement", "con"), ("Statement", "pro"),
                                                                   ("Reply", "con"), ("Reply", "pro")]


# --- formats declared in arena.toml ------------------------------------------------------------------------------

CROSSFIRE = '''
[[formats]]
name = "crossfire"
title = "Crossfire"
[[formats.turns]]
stage = "case"
side = "con"
title = "Case"
words = 200
workflow = "constructive"
[[formats.turns]]
stage = "case"
side = "pro"
title = "Case"
words = 200
workflow = "constructive"
[[formats.turns]]
stage = "crossfire"
side = "pro"
title = "Crossfire"
words = 80
brief = "Ask the other side one question."
'''


def declared_workspace(path: Path, fmt: str = CROSSFIRE, **settings) -> Path:
    text = workspace_toml(arena={"format": "crossfire", "judge_runs": 1}, motions=["builtin:en"],
                          **{"entries": [entry("a"), entry("b")], "judges": [judge("j")], **settings})
    return new_workspace(path, init=None, text=text + fmt)


def test_a_format_declared_in_arena_toml_is_played_recorded_and_shown_in_its_order(tmp_path):
    path = declared_workspace(tmp_path / "ws")
    assert invoke("schedule", "--format", "round-robin", "--rounds", "1", "-w", path).exit_code == 0
    assert invoke("run", "-w", path).exit_code == 0
    shown = json.loads(invoke("match", "show", "m00001", "--format", "json", "-w", path).output)
    assert shown["format"] == "crossfire"
    assert [(s["stage"], s["side"], s["title"]) for s in shown["speeches"]] == [
        ("case", "con", "Case"), ("case", "pro", "Case"), ("crossfire", "pro", "Crossfire")]
    assert [v["overall"] for v in shown["verdicts"]] != []  # judged, as any format's match is


def test_a_declared_format_with_a_mistake_is_refused_naming_its_key(tmp_path):
    cases = [
        (CROSSFIRE.replace('side = "pro"\ntitle = "Crossfire"', 'side = "both"\ntitle = "Crossfire"'),
         "formats[0].turns[2].side", "'pro' or 'con'"),
        (CROSSFIRE.replace('stage = "crossfire"', 'stage = "case"'), "formats[0].turns", "speaks twice"),
        (CROSSFIRE.replace('words = 80\n', ''), "formats[0].turns[2]", "missing required key 'words'"),
        (CROSSFIRE.replace('name = "crossfire"', 'name = "lechmazur"'), "formats[0].name", "built-in"),
        (CROSSFIRE.replace('workflow = "constructive"', 'workflow = "opening"', 1), "formats[0].turns[0].workflow",
         "constructive, rebuttal, summary"),
    ]
    for k, (text, *fragments) in enumerate(cases):
        path = declared_workspace(tmp_path / f"ws{k}", text)
        assert_user_error(invoke("entry", "list", "-w", path), "arena.toml:", *fragments)
        assert not (path / DB_NAME).exists()


def test_agent4debate_refuses_a_declared_format_naming_its_unmapped_turn(tmp_path):
    path = declared_workspace(tmp_path / "ws", entries=[entry("a", "agent4debate"), entry("b")])
    assert_user_error(invoke("entry", "list", "-w", path), "arena.format", "'a'", "Crossfire")
    mapped = CROSSFIRE.replace('brief = "Ask', 'workflow = "rebuttal"\nbrief = "Ask')
    path = declared_workspace(tmp_path / "ok", mapped, entries=[entry("a", "agent4debate"), entry("b")])
    assert invoke("entry", "list", "-w", path).exit_code == 0


def test_an_entrys_length_params_budget_agent4debate_turns_only_not_another_formats_stage_of_the_same_key():
    params = resolve(Entry("a", "direct", "offline/a", params={"words_summary": 280}), LENGTHS)
    summary = AGENT4DEBATE.turn("summary", "pro")
    assert length(params, summary, "en") == Length(280, "words")  # the entry's own budget for the stage
    assert length(params, summary, "zh") == Length(800, "characters")  # the format's, as the param's default
    theirs = Turn("summary", "pro", "Summary", 150, 400)  # a declared format's turn that reuses the key
    assert length(params, theirs, "en") == Length(150, "words")
    assert length(params, theirs, "zh") == Length(400, "characters")


def test_the_baselines_prompts_for_agent4debate_stages_serve_that_format_only():
    motion = Motion("m", "Cities should ban cars.", "policy")

    def context(fmt: Format) -> DebateContext:
        return DebateContext(motion, "pro", "summary", (), {}, None, None, format=fmt)

    theirs = Format("short", "Short", "", (Turn("summary", "pro", "Summary", 150, 400, brief="Sum up."),
                                           Turn("summary", "con", "Summary", 150, 400, brief="Sum up.")))
    assert turn_prompt("direct", context(AGENT4DEBATE))[0] == "direct/summary.j2"
    template, told = turn_prompt("search_baseline", context(theirs))
    assert template == "search_baseline/turn.j2" and told["brief"] == "Sum up." and told["turns"] == 2
