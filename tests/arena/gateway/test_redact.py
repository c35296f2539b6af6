"""Secrets never leave the environment, even through errors: arena.gateway.redact, and the search gateway and CLI that use it.

The end-to-end test goes gateway -> real tavily-python -> httpx -> FakeTavily, whose 401 echoes the
Authorization header it was sent, as a careless provider would.
"""
from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request

import click
import pytest
from click.testing import CliRunner

from arena.app.cli import ArenaGroup
from arena.workspace.config import SearchSettings
from arena.base.errors import ArenaError
from arena.gateway.redact import redact, redactor
from arena.gateway.search import SearchGateway, SearchTag
from arena.store import Store
from tests.support.fakes.openai_server import FakeOpenAI, Reply

KEY = "tvly-dev-Secret0123456789"


# ------------------------------------------------------------------ the rule


def test_env_values_of_key_token_and_secret_variables_are_replaced():
    env = {"OPENAI_API_KEY": "plain-key-without-shape", "GITHUB_TOKEN": "ghp_0123456789",
           "APP_SECRET": "hunter2hunter2", "HOME": "/home/someone"}

    text = redact("401 for plain-key-without-shape; ghp_0123456789 and hunter2hunter2 in /home/someone", env)

    assert text == "401 for [redacted]; [redacted] and [redacted] in /home/someone (key redacted)"


def test_a_value_containing_another_is_replaced_whole():
    env = {"A_KEY": "abcdefgh", "B_KEY": "abcdefgh-and-more"}

    assert redact("key abcdefgh-and-more", env) == "key [redacted] (key redacted)"


def test_a_redactor_redacts_as_redact_does_with_the_secrets_of_when_it_was_made():
    env = {"A_KEY": "abcdefgh", "B_TOKEN": "abcdefgh-and-more", "HOME": "/home/someone"}
    clean = redactor(env)
    env["C_SECRET"] = "arrived-later"
    texts = ["key abcdefgh-and-more", "Bearer abc.DEF-ghi_123 in /home/someone", "nothing here", "arrived-later"]

    assert [clean(t) for t in texts] == [redact(t, {k: v for k, v in env.items() if k != "C_SECRET"}) for t in texts]
    assert clean("key abcdefgh-and-more") == "key [redacted] (key redacted)"


def test_short_env_values_are_left_alone():
    env = {"DEBUG_TOKEN": "dev", "MODE_KEY": "true", "X_SECRET": "1234567"}

    assert redact("dev mode is true, retry 1234567", env) == "dev mode is true, retry 1234567"


@pytest.mark.parametrize("text, expected", [
    ("Authorization: Bearer abc.DEF-ghi_123", "Authorization: Bearer [redacted] (key redacted)"),
    ('{"authorization": "bearer tvly-xyz0123456"}', '{"authorization": "bearer [redacted]"} (key redacted)'),
    ("AuthenticationError 401: Incorrect API key provided: sk-proj-ABCdef123456",
     "AuthenticationError 401: Incorrect API key provided: sk-[redacted] (key redacted)"),
    ("sk-ant-api03-abcdefgh and tvly-dev-abcdefgh", "sk-ant-[redacted] and tvly-[redacted] (key redacted)"),
])
def test_bearer_tokens_and_key_shapes_are_replaced(text, expected):
    assert redact(text, {}) == expected


@pytest.mark.parametrize("text", [
    "search failed for 'cars': UsageLimitExceededError: Rate limit exceeded (after 3 tries)",
    "the bearer of bad news", "sk-short", "task-0123456789 is done", "",
])
def test_text_without_secrets_is_unchanged_and_has_no_suffix(text):
    assert redact(text, {"OPENAI_API_KEY": "sk-not-in-the-text-123"}) == text


def test_redacting_twice_changes_nothing_more():
    env = {"TAVILY_API_KEY": KEY}
    once = redact(f"401 Bearer {KEY}; raw {KEY}; sk-abcdefgh123", env)

    assert redact(once, env) == once
    assert once.count("(key redacted)") == 1


def test_the_default_environment_is_os_environ(monkeypatch):
    monkeypatch.setenv("SOME_SERVICE_TOKEN", "opaque0123456789")

    assert redact("got opaque0123456789") == "got [redacted] (key redacted)"


# ------------------------------------------------------------------ the fakes echo the key


def test_fake_openai_echo_authorization_appends_the_header_to_the_error():
    with FakeOpenAI() as llm:
        llm.faults.enqueue(Reply(status=401, content="Incorrect API key provided:", echo_authorization=True))
        request = urllib.request.Request(f"{llm.api_base}/chat/completions", method="POST",
                                         data=json.dumps({"model": "m", "messages": []}).encode(),
                                         headers={"Authorization": "Bearer sk-test-0123456789",
                                                  "Content-Type": "application/json"})
        with pytest.raises(urllib.error.HTTPError) as ei:
            urllib.request.urlopen(request, timeout=10)

    assert ei.value.code == 401
    error = json.loads(ei.value.read())["error"]
    assert error["message"] == "Incorrect API key provided: Bearer sk-test-0123456789"


# ------------------------------------------------------------------ end to end


def test_a_search_error_echoing_the_key_is_redacted_when_raised_and_ledgered(fake_tavily, tmp_path, monkeypatch):
    monkeypatch.setenv("TAVILY_API_KEY", KEY)
    store = Store(tmp_path / "arena.db")
    search = SearchGateway(SearchSettings(api_base_url=fake_tavily.base_url), store, retries=2, backoff_s=0)
    fake_tavily.faults.enqueue(Reply(status=401, content="Invalid API key:", echo_authorization=True))

    with pytest.raises(ArenaError) as ei:
        asyncio.run(search.search("car bans", tag=SearchTag()))

    [request] = fake_tavily.requests  # a bad key is not retried
    assert request.headers["authorization"] == f"Bearer {KEY}"  # so the server did echo the key
    # Named by its variable: the server's answer, which echoed the key, is not kept at all.
    assert str(ei.value) == "search failed for 'car bans': the key in TAVILY_API_KEY was refused (401 Unauthorized)"
    [error] = [row[0] for row in store.conn.execute("SELECT error FROM calls WHERE kind='search'")]
    store.close()
    assert KEY not in error and "Secret0123456789" not in error
    assert error == "the key in TAVILY_API_KEY was refused (401 Unauthorized)"


def test_the_cli_redacts_error_messages_before_printing(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "opaque-key-0123456789")

    @click.group(cls=ArenaGroup)
    def cli():
        pass

    @cli.command()
    def fail():
        raise ArenaError("provider said: unknown key opaque-key-0123456789")

    result = CliRunner().invoke(cli, ["fail"])

    assert result.exit_code == 1
    assert "opaque-key-0123456789" not in result.output
    assert "error: provider said: unknown key [redacted] (key redacted)" in result.output


def test_the_user_password_and_query_of_a_url_are_redacted_and_redacting_twice_changes_nothing():
    said = "the server at http://bob:hunter22@127.0.0.1:5/v1?api-key=abc123 refused (see http://docs.example/x)."
    once = redact(said, {})
    assert once == ("the server at http://[redacted]@127.0.0.1:5/v1?[redacted] refused (see http://docs.example/x)."
                    " (key redacted)")
    assert redact(once, {}) == once
