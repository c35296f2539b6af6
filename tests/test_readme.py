"""The README's Quickstart is what CI runs."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def quickstart_commands() -> list[str]:
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Quickstart", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```\n(.+?)\n```", section)


def test_quickstart_has_exactly_two_commands_demo_and_tests():
    demo, tests = quickstart_commands()
    assert demo.endswith("arena demo") and "pip install" in demo
    assert "pytest" in tests and "'.[test]'" in tests


def test_ci_runs_the_readme_test_command():
    _, tests = quickstart_commands()
    assert tests in (ROOT / ".ci" / "run").read_text().splitlines()


def test_the_getting_started_page_gives_the_readme_commands_exactly():
    page = (ROOT / "docs" / "getting-started.md").read_text(encoding="utf-8")
    section = page.split("## Two commands", 1)[1].split("\n## ", 1)[0]
    assert re.findall(r"```\n(.+?)\n```", section) == quickstart_commands()
