"""The documentation site: it builds clean, its generated parts match the code, and README.md is its front door."""
from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
ARCHITECTURE = DOCS / "architecture.md"


def _gen():
    spec = importlib.util.spec_from_file_location("docs_gen", DOCS / "gen.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


gen = _gen()


@pytest.mark.slow
def test_mkdocs_builds_the_site_strictly(tmp_path):
    # strict: a broken link or anchor, or a page left out of the nav, fails the build (mkdocs.yml's validation)
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(tmp_path / "site")],
                          cwd=ROOT, capture_output=True, text=True, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "site" / "reference" / "cli" / "index.html").is_file()


@pytest.mark.slow
def test_the_generated_parts_of_the_docs_are_up_to_date():
    done = subprocess.run([sys.executable, str(DOCS / "gen.py"), "--check"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, f"{done.stderr.strip()} (the docs fall behind the code)"


def test_a_stale_usage_line_or_a_missing_option_row_is_rewritten_from_the_code():
    page = gen.CLI_PAGE
    text = page.read_text(encoding="utf-8")
    tree = gen.command_tree()
    stale = text.replace("Usage: arena run [OPTIONS]\n", "Usage: arena run [OPTIONS] EXTRA\n", 1)
    assert stale != text and gen.regenerate(page, stale, tree) == text
    # the row the README's table once lacked comes back, with --help's words when the page had none
    without = re.sub(r"^\| `--workers [^|]*\|.*\n", "", text, count=1, flags=re.M)
    region = lambda text: text.split("<!-- generated:cli arena run -->")[1].split("<!-- /generated")[0]  # noqa: E731
    assert "`--workers" not in region(without)
    run = region(gen.regenerate(page, without, tree))
    row = next(line for line in run.splitlines() if line.startswith("| `--workers"))
    assert "Worker processes sharing the matches" in row and "`1`" in row


def test_a_command_without_a_section_gets_one_after_the_command_before_it():
    text = gen.CLI_PAGE.read_text(encoding="utf-8")
    start = text.index("### `arena entry show`")
    end = text.index("\n#", text.index("<!-- /generated -->", start))
    without = text[:start] + text[end + 1:]
    placed = gen.place_new_commands(without, gen.command_tree())
    section = placed[placed.index("### `arena entry show`"):]
    assert placed.index("### `arena entry add`") < placed.index("### `arena entry show`")
    assert section.startswith("### `arena entry show`\n\n<!-- generated:cli arena entry show -->\n")


def test_the_architecture_page_lists_every_module_and_only_modules_that_exist():
    listed = set(re.findall(r"`((?:arena|debaters|judges|leaderboard|motions)/[\w/]*\.py)`",
                            ARCHITECTURE.read_text(encoding="utf-8")))
    modules = {p.as_posix() for p in gen.modules()}
    assert {"arena/app/runner/workers.py", "arena/app/people/web.py", "arena/match/claims.py", "arena/domain/ballots.py",
            "arena/gateway/wire.py"} <= modules
    assert not modules - listed, f"docs/architecture.md leaves out {sorted(modules - listed)}"
    assert not listed - modules, f"docs/architecture.md lists {sorted(listed - modules)}, which do not exist"


def test_every_page_is_in_the_nav():
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    pages = {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")}
    assert pages == set(re.findall(r":\s*([\w/.-]+\.md)\s*$", nav, re.M))


def test_the_readme_is_a_front_door_whose_links_lead_somewhere():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 250
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", readme)
    local = [link for link in links if not re.match(r"\w+://", link)]
    assert {"docs/reference/cli.md", "docs/guides/tournaments.md", "docs/architecture.md"} <= set(local)
    missing = [link for link in local if not (ROOT / link).exists()]
    assert not missing, f"README.md links to {missing}, which do not exist"
