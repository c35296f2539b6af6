"""The static site: jinja2 templates rendered to self-contained HTML files (no server, no CDN).

The renderer is handed plain records and rating dicts; it never opens the store. Autoescaping
is on for every template, so model- and user-supplied text renders as text.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Iterable

import jinja2

TEMPLATES = Path(__file__).parent / "templates"


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters["page"] = match_page
    env.filters["safe_url"] = safe_url
    return env


def match_page(match_id: str) -> str:
    """The file name of a match's page; ids are sanitised so a hostile id cannot escape the folder."""
    return "matches/" + re.sub(r"[^A-Za-z0-9_.-]", "_", match_id) + ".html"


def safe_url(url: str) -> str:
    """Only http(s) links survive; a javascript: or data: URL from a model becomes inert."""
    return url if re.match(r"^https?://", url or "", re.IGNORECASE) else "#"


def publish(out: Path, *, title: str, leaderboard: dict, entries: Iterable[dict], matches: Iterable[Any],
            judge: str | None, simulated: bool, generated_at: str) -> Path:
    """Write out/index.html, one page per match, and leaderboard.json; return the index path."""
    out = Path(out)
    (out / "matches").mkdir(parents=True, exist_ok=True)
    env = _environment()
    matches = list(matches)
    entries = {e["name"]: e for e in entries}
    common = {"title": title, "simulated": simulated, "judge": judge, "generated_at": generated_at}
    index = out / "index.html"
    index.write_text(env.get_template("index.html.j2").render(
        leaderboard=leaderboard, entries=entries, matches=matches, root="", **common), encoding="utf-8")
    page = env.get_template("match.html.j2")
    for m in matches:
        (out / match_page(m.id)).write_text(page.render(match=m, root="../", **common), encoding="utf-8")
    (out / "leaderboard.json").write_text(json.dumps(leaderboard, indent=2), encoding="utf-8")
    return index
