"""Keys and reachability before any call, and providers checked at the door (issue 27, items 1 and 2).

A missing key stops `arena run`, `judge`, `check`, `judge-bench` and `match play` at once, exit 2, naming the
variable and who needs it, with nothing written; a host that does not resolve or a port that refuses is named as
such and tried once; a refused key is named by its variable, never echoed. Real loopback HTTP through the fakes;
`.invalid` never resolves.
"""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap

import pytest

from arena.gateway import credentials
from arena.gateway import providers
from arena.app.runner.check import callers
from arena.app.commands import open_workspace
from arena.gateway.lazy import litellm
from tests.support.fakes.openai_server import Reply
from tests.support.fakes.tavily_server import Reply as TavilyReply
from tests.support.helpers import (TWO_OFFLINE, assert_user_error, entry, invoke, judge, mark_checked, new_workspace,
                           play_with, query, snapshot, write_workspace)
from tests.judges.test_judge_bench import write_jsonl
from tests.support.running import ROOT

SECRET = "sk-arena-secret-0123456789abcdef"
TAVILY = {"provider": "tavily"}


def closed_port() -> int:
    """A loopback port nothing listens on once the socket is closed."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def real_workspace(path, **settings):
    """Two entries on OpenAI (one searching) and a judge on Anthropic, none of whose keys the tests set; a
    round-robin scheduled."""
    new_workspace(path, motions=["builtin:en"], **{
        "search": TAVILY,
        "entries": [entry("a", "search-baseline", model="openai/gpt-4o-mini"), entry("b", model="openai/gpt-4o-mini")],
        "judges": [judge("j", model="anthropic/claude-3-5-sonnet-20240620")], **settings})
    assert invoke("schedule", "--format", "round-robin", "-w", path).exit_code == 0
    return path


def state(path) -> tuple:
    """What a refused command must leave as it was: ledger rows, match statuses, claims."""
    return (query(path, "SELECT count(*) FROM calls"), query(path, "SELECT id, status FROM matches ORDER BY id"),
            query(path, "SELECT count(*) FROM claims"))


# --- 1. missing keys ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("command", [("run",), ("check",), ("run", "--workers", "2")])
def test_missing_keys_stop_the_command_naming_each_variable_and_who_needs_it(tmp_path, command):
    ws = real_workspace(tmp_path / "ws")
    before = state(ws)

    result = invoke(*command, "-w", ws)

    assert_user_error(result, "OPENAI_API_KEY is not set; arena.toml's entries a, b need it (openai/gpt-4o-mini)",
                      "ANTHROPIC_API_KEY is not set; arena.toml's judge j needs it",
                      'TAVILY_API_KEY is not set; arena.toml\'s entry a needs it ([search] provider = "tavily")')
    assert state(ws) == before == ([(0,)], [("m00001", "scheduled"), ("m00002", "scheduled")], [(0,)])


def test_an_empty_key_is_a_missing_key_named_before_any_call(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "")  # set, and empty: litellm alone counts it as there
    monkeypatch.setenv("TAVILY_API_KEY", "  ")
    ws = real_workspace(tmp_path / "ws")
    before = state(ws)

    result = invoke("run", "-w", ws)

    assert_user_error(result, "ANTHROPIC_API_KEY is not set; arena.toml's judge j needs it",
                      'TAVILY_API_KEY is not set; arena.toml\'s entry a needs it ([search] provider = "tavily")')
    assert "OPENAI_API_KEY" not in result.output
    assert state(ws) == before  # nothing sent, nothing written


def test_a_set_key_is_not_named_and_search_offline_needs_no_tavily_key(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    ws = real_workspace(tmp_path / "ws", search={"provider": "offline"})

    result = invoke("run", "-w", ws)

    assert_user_error(result, "ANTHROPIC_API_KEY is not set; arena.toml's judge j needs it")
    assert "OPENAI_API_KEY" not in result.output and "TAVILY_API_KEY" not in result.output
    assert SECRET not in result.output


def test_agent4debate_without_a_searcher_needs_no_search_key(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    new_workspace(tmp_path / "ws", search=TAVILY, entries=[
        entry("r", "agent4debate", model="openai/gpt-4o", params={"agents": ["writer", "reviewer"]}),
        entry("s", "agent4debate", model="openai/gpt-4o"), entry("sim", "agent4debate")])
    ws = open_workspace(tmp_path / "ws")
    try:
        found = credentials.missing(callers(ws, ["r", "s", "sim"]), "tavily")
    finally:
        ws.close()
    assert {k: [c.name for c in v] for k, v in found.items()} == {"TAVILY_API_KEY": ["s"]}


def test_judge_and_judge_bench_and_match_play_check_keys_first(tmp_path):
    ws = new_workspace(tmp_path / "ws", motions=["builtin:en"], entries=TWO_OFFLINE,
                       judges=[judge("sim"), judge("real", model="openai/gpt-4o-mini")], init="cli")
    play_with(ws, "sim")
    before = state(ws)
    motion = query(ws, "SELECT id FROM motions LIMIT 1")[0][0]

    for command in (("judge", "--judge", "real"), ("judge-bench", write_jsonl(tmp_path / "b.jsonl"), "--judge", "real"),
                    ("match", "play", "--motion", motion, "--pro", "a", "--con", "b", "--judge", "real")):
        assert_user_error(invoke(*command, "-w", ws), "OPENAI_API_KEY is not set; arena.toml's judge real needs it")
        assert state(ws) == before


def test_a_local_openai_compatible_server_needs_no_key_but_a_hosted_provider_does():
    assert credentials.model_needs("openai/llama", "http://127.0.0.1:8000/v1") == ()
    assert credentials.model_needs("offline/x") == ()
    assert credentials.model_needs("openai/gpt-4o") == ("OPENAI_API_KEY",)
    assert credentials.model_needs("gpt-4o") == ("OPENAI_API_KEY",)  # litellm places a bare name it knows
    assert credentials.model_needs("gemini/gemini-1.5-pro") == ("GEMINI_API_KEY or GOOGLE_API_KEY",)
    assert credentials.model_needs("ollama/llama3", "http://127.0.0.1:11434") == ()  # OLLAMA_API_BASE: given


def test_a_bare_name_litellm_cannot_place_is_named_before_any_call(tmp_path):
    ws = real_workspace(tmp_path / "ws", entries=[entry("a", model="llama3"), entry("b")], judges=[judge("j")])

    assert_user_error(invoke("run", "-w", ws), "entry a: model 'llama3' names no provider litellm knows",
                      "'ollama/llama3'")
    assert state(ws)[0] == [(0,)]


# --- issue 50: a missing key named from the arena's own table, before litellm is imported ----------------------

@pytest.mark.parametrize("provider", sorted(providers.KEYS))
def test_the_key_table_says_what_litellm_says_of_each_provider(monkeypatch, provider):
    for variable in {name for needs in providers.KEYS.values() for _, accepted in needs for name in accepted}:
        monkeypatch.delenv(variable, raising=False)
    model = f"{provider}/some-model"
    said = credentials.model_needs(model)
    assert said == credentials.litellm_needs(model)  # nothing set: the same variables named
    assert said == tuple(name for name, _ in providers.KEYS[provider])
    for name in {name for _, accepted in providers.KEYS[provider] for name in accepted}:
        with monkeypatch.context() as env:  # any one of the accepted variables will do, for both
            env.setenv(name, "set")
            assert credentials.model_needs(model) == credentials.litellm_needs(model) == (), name
    if provider != "openai":  # (openai/ on a server of one's own needs no key: the stand-in, the arena's own rule)
        base = "http://127.0.0.1:9/v1"  # a server given: a variable naming the base is not needed, for both
        assert credentials.model_needs(model, base) == credentials.litellm_needs(model, base)
    assert set(providers.KEYS) <= providers.known()


def test_run_names_a_missing_key_without_importing_litellm(tmp_path):
    """`arena run` with an entry on openai/ and no OPENAI_API_KEY: exit 2 naming it, and (-X importtime lists every
    module the process imported) litellm, seconds of CPU, never imported on the way."""
    ws = new_workspace(tmp_path / "ws", motions=["builtin:en"],
                       entries=[entry("g", model="openai/gpt-4o-mini"), entry("h", model="openai/gpt-4o-mini")])
    assert invoke("schedule", "--format", "round-robin", "-w", ws).exit_code == 0
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    env["PYTHONPATH"] = str(ROOT)

    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "arena", "run", "-w", str(ws)],
                          capture_output=True, text=True, env=env, timeout=120)

    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "OPENAI_API_KEY is not set; arena.toml's entries g, h need it" in proc.stderr
    imported = [line.rsplit("|", 1)[1].strip() for line in proc.stderr.splitlines()
                if line.startswith("import time:")]
    assert "arena.gateway.credentials" in imported  # the check ran in this process...
    assert not [name for name in imported if name.split(".")[0] == "litellm"]  # ...and litellm was never imported


# --- 1. reachability and refused keys -------------------------------------------------------------------------

@pytest.mark.parametrize("host, problem", [("arena-test.invalid", "name not resolved"),
                                           (None, "connection refused")], ids=["dns", "refused"])
def test_an_unreachable_server_is_named_and_tried_once(tmp_path, host, problem):
    host = host or f"127.0.0.1:{closed_port()}"
    base = f"http://{host}/v1"
    ws = new_workspace(tmp_path / "ws", motions=["builtin:en"], llm={"retries": 4, "backoff_s": 0.01},
                       entries=[entry(name, model="openai/x", api_base=base) for name in ("a", "b")])
    assert invoke("schedule", "--format", "round-robin", "-w", ws).exit_code == 0

    result = invoke("run", "-w", ws)

    assert result.exit_code == 1, result.output
    expected = f"cannot reach {host}: {problem}"
    assert f"a (openai/x): openai/x: {expected}" in result.output
    assert "500" not in result.output and "tries" not in result.output
    assert query(ws, "SELECT role, error FROM calls") == [("probe", expected)]  # one try of one probe
    assert query(ws, "SELECT status FROM matches") == [("scheduled",)] * 2


@pytest.mark.parametrize("status, said", [(401, "401 Unauthorized"),
                                          (403, "403 Forbidden: the key may lack access to this model")])
def test_a_refused_key_is_named_by_its_variable_never_echoed(tmp_path, fake_llm, monkeypatch, status, said):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    fake_llm.responder = lambda body: Reply(status=status, content=f"Incorrect API key provided: {SECRET[:12]}",
                                            echo_authorization=True)
    ws = write_workspace(tmp_path / "ws", fake_llm.api_base, checked=False)

    result = invoke("check", "--format", "json", "-w", ws)

    assert result.exit_code == 1
    rows = json.loads(result.output)
    assert [r["error"] for r in rows] == [f"openai/{name}-model: the key in OPENAI_API_KEY was refused ({said})"
                                          for name in ("alpha", "beta", "judge")]
    assert len(fake_llm.requests) == 3  # one probe per model, not retried
    assert fake_llm.requests[0].headers["authorization"] == f"Bearer {SECRET}"  # the key was sent...
    for text in (result.output, snapshot(ws)):  # ...and is neither shown nor stored, nor the provider's JSON
        blob = text if isinstance(text, str) else b"".join(text.values()).decode("latin-1")
        assert SECRET[:12] not in blob and '{"error"' not in blob


def test_a_credential_in_an_api_base_is_kept_out_of_the_database_the_site_and_the_export(tmp_path, fake_llm):
    """api_base's query and its user and password are secrets: a server that refuses them (401) has the arena say
    so, but no error text, ledger row, match error, site page or export holds them, and arena.db stores the
    address without them."""
    token, password = "QUERYTOKEN-7f3a9c1e", "USERPASS-5b8d2e4f"
    fake_llm.responder = lambda body: Reply(status=401)
    bases = {"alpha": f"{fake_llm.api_base}?api-key={token}",
             "beta": fake_llm.api_base.replace("http://", f"http://bob:{password}@")}
    path = tmp_path / "ws"
    new_workspace(path, motions=["builtin:en"], llm={"retries": 0, "backoff_s": 0.01},
                  entries=[entry(name, model=f"openai/{name}-model", api_base=base) for name, base in bases.items()],
                  judges=[judge("j1", runs=1)])
    mark_checked(path)
    assert invoke("schedule", "--format", "round-robin", "-w", path).exit_code == 0

    ran = invoke("run", "-w", path)
    published = invoke("publish", "-w", path)
    exported = invoke("export", "-w", path, "--out", tmp_path / "export")

    assert ran.exit_code == 1 and published.exit_code == 0 and exported.exit_code == 0, ran.output
    assert query(path, "SELECT COUNT(*) FROM matches WHERE status = 'failed' AND error IS NOT NULL") == [(2,)]
    assert {r[0] for r in query(path, "SELECT api_base FROM entries")} == {fake_llm.api_base}
    assert {r[0] for r in query(path, "SELECT api_base FROM models")} - {""} == {fake_llm.api_base}  # "": offline
    files = {**snapshot(path), **snapshot(tmp_path / "export")}
    files.pop("arena.toml")  # where the user wrote them
    for secret in (token, password):
        assert not any(secret.encode() in data for data in files.values()), secret
        assert secret not in ran.output + published.output + exported.output


def test_a_server_that_wants_a_key_says_to_set_it(tmp_path, fake_llm):
    fake_llm.responder = lambda body: Reply(status=401)
    ws = write_workspace(tmp_path / "ws", fake_llm.api_base, checked=False)

    rows = json.loads(invoke("check", "--format", "json", "-w", ws).output)

    assert rows[0]["error"] == (f"openai/alpha-model: the server at {fake_llm.api_base} wants a key (401 "
                                "Unauthorized), and OPENAI_API_KEY is not set: export the key it expects as "
                                "OPENAI_API_KEY")


# --- 1. arena check covers the search provider ----------------------------------------------------------------

def search_workspace(path, fake_llm, fake_tavily):
    return new_workspace(path, search={"provider": "tavily", "api_base_url": fake_tavily.base_url}, entries=[
        entry("s", "search-baseline", model="openai/s-model", api_base=fake_llm.api_base)])


def test_check_probes_the_search_provider(tmp_path, fake_llm, fake_tavily, monkeypatch):
    monkeypatch.setenv("TAVILY_API_KEY", "tvly-probe-key-0123456789")
    ws = search_workspace(tmp_path / "ws", fake_llm, fake_tavily)

    result = invoke("check", "--format", "json", "-w", ws)

    assert result.exit_code == 0, result.output
    search = json.loads(result.output)[-1]
    assert (search["name"], search["model"], search["ok"], search["error"]) == ("[search]", "tavily", True, None)
    assert [r.body["max_results"] for r in fake_tavily.requests] == [1]
    assert fake_tavily.requests[0].headers["authorization"] == "Bearer tvly-probe-key-0123456789"


def test_check_fails_on_a_refused_search_key_without_echoing_it(tmp_path, fake_llm, fake_tavily, monkeypatch):
    monkeypatch.setenv("TAVILY_API_KEY", "tvly-probe-key-0123456789")
    fake_tavily.faults.enqueue(TavilyReply(status=401, echo_authorization=True))
    ws = search_workspace(tmp_path / "ws", fake_llm, fake_tavily)

    result = invoke("check", "-w", ws)

    assert result.exit_code == 1
    line = next(line for line in result.output.splitlines() if line.startswith("[search]"))
    assert "NO" in line and "the key in TAVILY_API_KEY was refused (401 Unauthorized)" in line
    assert "tvly-probe-key" not in result.output
    assert b"tvly-probe-key" not in b"".join(snapshot(ws).values())


def test_check_without_a_tavily_key_is_not_ok(tmp_path, fake_llm, fake_tavily):
    ws = search_workspace(tmp_path / "ws", fake_llm, fake_tavily)

    assert_user_error(invoke("check", "-w", ws), "TAVILY_API_KEY is not set; arena.toml's entry s needs it")
    assert fake_llm.requests == [] and fake_tavily.requests == []


# --- 2. providers at the door ---------------------------------------------------------------------------------

def test_entry_add_refuses_a_misspelt_provider_suggesting_the_closest(tmp_path):
    ws = new_workspace(tmp_path / "ws", entries=TWO_OFFLINE, opened=True)
    before = snapshot(ws)

    result = invoke("entry", "add", "e9", "--debater", "direct", "--model", "openia/gpt-4o-mini", "-w", ws)

    assert_user_error(result, "--model", "unknown provider 'openia/'", "did you mean 'openai/'?")
    assert snapshot(ws) == before


def test_arena_toml_with_a_misspelt_provider_names_the_file_table_and_key(tmp_path):
    ws = new_workspace(tmp_path / "ws", init=None, entries=TWO_OFFLINE,
                       judges=[judge("j", model="antropic/claude-3-5-sonnet-20240620")])

    result = invoke("entry", "list", "-w", ws)

    line = (ws / "arena.toml").read_text().splitlines().index('model = "antropic/claude-3-5-sonnet-20240620"') + 1
    assert_user_error(result, f"arena.toml:{line}: judges[0].model: unknown provider 'antropic/'",
                      "did you mean 'anthropic/'?")
    assert not (ws / "arena.db").exists()


def test_the_known_providers_are_litellms_and_the_common_ones_among_them():
    assert providers.known() == frozenset(getattr(p, "value", p) for p in litellm().provider_list)
    assert providers.COMMON <= providers.known()
    assert providers.unknown_provider("gpt-4o") is None  # no prefix: litellm infers the provider later
    assert providers.unknown_provider("offline/x") is None
    assert "'offline/'" in providers.unknown_provider("ofline/x")


def test_reading_arena_toml_with_an_uncommon_provider_does_not_import_litellm(tmp_path):
    ws = new_workspace(tmp_path / "ws", init=None, entries=[entry("n", model="nscale/some-model"), *TWO_OFFLINE])
    code = textwrap.dedent(f"""
        import sys
        from arena.workspace.config import load_config
        assert load_config(__import__("pathlib").Path({str(ws)!r})).entries[0].model == "nscale/some-model"
        print("litellm" in sys.modules)
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "False"


def test_a_refused_key_is_named_by_the_variable_that_holds_it(monkeypatch):
    # gemini/ takes GEMINI_API_KEY or GOOGLE_API_KEY (providers.KEYS): the one set is the one refused.
    for name in ("GEMINI_API_KEY", "GOOGLE_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GOOGLE_API_KEY", "g")
    assert credentials.key_variable("gemini/gemini-2.0-flash") == "GOOGLE_API_KEY"
    monkeypatch.setenv("GEMINI_API_KEY", "g")
    assert credentials.key_variable("gemini/gemini-2.0-flash") == "GEMINI_API_KEY"
    assert credentials.key_variable("openai/gpt-4o-mini") == "OPENAI_API_KEY"
