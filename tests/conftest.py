"""Shared pytest fixtures: loopback fakes for the LLM provider and Tavily, the local LLM, a store, and the
headless Chromium of the browser tests.

No real network, no real keys: tests that need a key pass a dummy one ("sk-test",
"tvly-test") explicitly.
"""

import os

# Must be set before litellm is first imported: use the bundled price map, never fetch it.
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"

# Never let a developer's real credentials (or proxies) leak into a test run.
for _var in (
    "OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_API_BASE", "OPENAI_ORG_ID",
    "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "MISTRAL_API_KEY",
    "GROQ_API_KEY", "TOGETHER_API_KEY", "OPENROUTER_API_KEY", "DEEPSEEK_API_KEY",
    "XAI_API_KEY", "COHERE_API_KEY", "TAVILY_API_KEY", "TAVILY_PROJECT", "TAVILY_ORG_ID",
    "TAVILY_HTTP_PROXY", "TAVILY_HTTPS_PROXY",
):
    os.environ.pop(_var, None)
# Loopback must never go through a proxy.
_no_proxy = ",".join(filter(None, [os.environ.get("NO_PROXY"), "127.0.0.1", "localhost"]))
os.environ["NO_PROXY"] = os.environ["no_proxy"] = _no_proxy

import pytest  # noqa: E402

from tests.support.fakes.openai_server import FakeOpenAI  # noqa: E402
from tests.support.fakes.tavily_server import FakeTavily  # noqa: E402
from arena.store import Store  # noqa: E402
from tests.support.local_llm import LocalLLM  # noqa: E402
from tests.support import browser as chromium  # noqa: E402
from tests.support.fixtures import builds  # noqa: E402,F401  (a session fixture: workspaces built once, copied per test)


@pytest.fixture
def fake_llm():
    """A started FakeOpenAI; use ``fake_llm.api_base`` with model ``openai/<name>``."""
    with FakeOpenAI() as server:
        yield server


@pytest.fixture
def fake_tavily():
    """A started FakeTavily; use ``fake_tavily.base_url`` as ``api_base_url``."""
    with FakeTavily() as server:
        yield server


@pytest.fixture(scope="session")
def local_llm():
    """A real LLM (SmolLM2-135M-Instruct on llama.cpp's OpenAI-compatible server), started once per session
    on first use; use ``local_llm.model`` with ``api_base=local_llm.api_base``. Never skipped: a missing
    llama-cpp-python is an error that says how to install it."""
    with LocalLLM() as server:
        yield server


@pytest.fixture
def store(tmp_path):
    """A fresh arena.db in the test's folder."""
    s = Store(tmp_path / "arena.db")
    yield s
    s.close()


@pytest.fixture(scope="session")
def chromium_installed() -> None:
    """Debian's chromium and its driver, installed with apt-get when missing (tests/support/browser.py)."""
    chromium.install_chromium()


@pytest.fixture(scope="module")
def browser(chromium_installed):
    """A headless Chromium (Selenium's driver) shared by one test module's tests (tests/support/browser.py)."""
    with chromium.chromium() as driver:
        yield driver


# The test files that take longest, longest first: the real-model ones (their servers' tokens are most of the suite's
# time), each beside the other in a process of its own.
LONGEST = ("tests/test_local_model_e2e.py", "tests/debaters/test_local_model_agent4debate.py")


def pytest_collection_modifyitems(config, items):
    """The longest files first: the LONGEST in their order, then the other files of real-model tests, then those
    with a test marked slow, then the rest, each file whole and each group in collection order. Under pytest-xdist
    (the README's command: each file whole in one process, handed out in this order, --no-loadscope-reorder) the
    processes start on the longest files at once and share the rest, so that the last file to finish is a short
    one."""
    def rank(item) -> tuple[int, int]:
        path = item.nodeid.split("::", 1)[0]
        if path in LONGEST:
            return 0, LONGEST.index(path)
        if "local_llm" in getattr(item, "fixturenames", ()):
            return 1, 0
        return (2 if item.get_closest_marker("slow") else 3), 0

    files: dict[str, tuple[int, int]] = {}
    for item in items:
        path = item.nodeid.split("::", 1)[0]
        files[path] = min(files.get(path, (9, 0)), rank(item))
    items.sort(key=lambda item: files[item.nodeid.split("::", 1)[0]])
