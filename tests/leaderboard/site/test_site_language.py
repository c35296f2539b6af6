"""The site in the workspace's language: the pages' lang, every label from one catalogue (leaderboard.site.labels),
and the parts of the site every language shares: marked footnotes, rationales in paragraphs, the heatmap's legend,
printed values and margins."""
from __future__ import annotations

import ast
import re
import string
from dataclasses import replace
from html.parser import HTMLParser
from pathlib import Path

import jinja2
import pytest
from jinja2 import nodes

from leaderboard.site import labels
from leaderboard.site import svg
from leaderboard.site.render import TEMPLATES, page_name, publish
from tests.support.helpers import entry, judge, new_workspace, play_round_robin
from tests.support.sites import HOSTILE, hostile_data

ROOT = Path(__file__).resolve().parents[3]


# The web app of `arena serve` speaks the workspace's language from the same catalogue.
WEB_TEMPLATES = ROOT / "arena" / "app" / "people" / "templates"
CODE = ("leaderboard/site/render.py", "leaderboard/site/pages.py", "leaderboard/site/svg.py", "arena/app/people/words.py",
        "arena/app/people/forms.py")


def template_messages() -> dict[str, str]:
    """Every message the templates (the site's and the web app's) translate with the filter t, → the template it
    is in; t of anything but a literal fails (the filter word is for values)."""
    env, found = jinja2.Environment(), {}
    for path in sorted([*TEMPLATES.glob("*.j2"), *WEB_TEMPLATES.glob("*.j2")]):
        for node in env.parse(path.read_text(encoding="utf-8")).find_all(nodes.Filter):
            if node.name == "t":
                assert isinstance(node.node, nodes.Const) and isinstance(node.node.value, str), \
                    f"{path.name}:{node.lineno}: t translates a literal message"
                found.setdefault(node.node.value, path.name)
    return found


def code_messages() -> dict[str, str]:
    """Every literal message the code passes to a translator t() (the site's charts and judge labels, the web app's
    refusals and questions), and every message of a BallotError (the web app shows it translated)."""
    found = {}
    for name in (*CODE, "arena/domain/ballots.py"):
        tree = ast.parse((ROOT / name).read_text(encoding="utf-8"))
        for call in ast.walk(tree):
            if not isinstance(call, ast.Call):
                continue
            callee = call.func.id if isinstance(call.func, ast.Name) else \
                call.func.attr if isinstance(call.func, ast.Attribute) else None
            if callee == "t":
                assert call.args and isinstance(call.args[0], ast.Constant), f"{name}:{call.lineno}: t() of a literal"
                found.setdefault(call.args[0].value, name)
            elif callee == "BallotError":
                assert isinstance(call.args[1], ast.Constant), f"{name}:{call.lineno}: a BallotError's message literal"
                found.setdefault(call.args[1].value, name)
    return found


def fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


def test_the_zh_catalogue_has_every_message_the_site_shows_and_no_other():
    used = {**template_messages(), **code_messages(), **dict.fromkeys(labels.WORDS, "WORDS")}
    assert len(used) > 150  # the templates' labels were found, not an empty scan
    missing = {m: where for m, where in used.items() if m not in labels.ZH}
    assert not missing, f"messages without a zh translation: {missing}"
    assert not set(labels.ZH) - set(used), f"zh entries nothing shows: {set(labels.ZH) - set(used)}"
    for english, chinese in labels.ZH.items():  # the same values filled in, and the text really translated
        assert fields(chinese) == fields(english), english
        assert english in labels.WORDS[-1:] or not re.search(r"[A-Za-z]{3,}", re.sub(r"\{\w+\}", "", chinese)) \
            or re.search(r"[\u4e00-\u9fff]", chinese), english


def test_the_translator_escapes_values_and_resolves_each_message_once():
    _ = labels.translator("zh-Hans")  # the filter t
    assert _("{n} judges", n=HOSTILE) == "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; 位评委"
    assert _("Rating") is _("Rating")  # looked up and escaped once per publish, then reused
    english = labels.translator("en")
    assert english("Cost / match") == "Cost / match" and english("{n} judges", n=2) == "2 judges"
    assert labels.words("zh")("done") == "已完成" and labels.words("zh")("unheard-of") == "unheard-of"
    assert labels.plain("fr")("never met") == "never met"  # a language without a catalogue reads English


class Texts(HTMLParser):
    """A page's text nodes and labelling attributes, but those inside an element marked with another language
    (content, and the explanations kept in English) and scripts and styles."""

    def __init__(self, lang: str):
        super().__init__()
        self.lang, self.stack, self.texts = lang, [], []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "html":
            self.lang = attrs.get("lang")
        foreign = bool(self.stack and self.stack[-1][1]) or tag in ("script", "style") or \
            ("lang" in attrs and tag != "html" and attrs["lang"] != self.lang)
        if tag not in ("meta", "br", "img", "input", "link", "stop", "rect", "line", "circle", "polygon",
                       "polyline", "path"):
            self.stack.append((tag, foreign))
        if not foreign:
            self.texts += [attrs[k] for k in ("title", "aria-label") if attrs.get(k)]

    def handle_endtag(self, tag):
        while self.stack:
            if self.stack.pop()[0] == tag:
                break

    def handle_data(self, data):
        if data.strip() and not (self.stack and self.stack[-1][1]):
            self.texts.append(data.strip())


def shown_texts(html: str) -> list[str]:
    parser = Texts("")
    parser.feed(html)
    return parser.texts


@pytest.fixture(scope="module")
def sites(tmp_path_factory) -> dict[str, Path]:
    """The same small tournament (Chinese motions, three offline entries) published in zh and in en."""
    out = {}
    for language in ("zh", "en"):
        path = new_workspace(tmp_path_factory.mktemp(language) / "ws", motions=["builtin:zh"],
                             arena={"language": "zh", "judge_runs": 1},
                             entries=[entry(n, strength=s) for n, s in (("ace", 1.0), ("bold", 0.0), ("calm", -1.0))],
                             judges=[judge("j1")])
        play_round_robin(path)
        if language == "en":  # the same content, labelled in English: only the workspace's language differs
            config = path / "arena.toml"
            config.write_text(config.read_text(encoding="utf-8").replace('language = "zh"', 'language = "en"'),
                              encoding="utf-8")
        from arena.app import commands as app
        ws = app.open_workspace(path)
        try:
            app.publish(ws)
        finally:
            ws.close()
        out[language] = path / "site"
    return out


def test_a_zh_workspace_publishes_pages_in_zh_with_no_english_label(sites):
    english = {m for m in labels.ZH if not fields(m) and re.search(r"[A-Za-z]{2}", m)} - set(labels.WORDS)
    pages = sorted(sites["zh"].rglob("*.html"))
    assert len(pages) >= 10
    for page in pages:
        html = page.read_text(encoding="utf-8")
        assert html.startswith('<!doctype html>\n<html lang="zh">'), page
        left = [text for text in shown_texts(html) if text.rstrip(".:") in english or text in english]
        assert not left, f"{page.name} shows English labels: {left}"
    index = (sites["zh"] / "index.html").read_text(encoding="utf-8")
    for label in ("评分", "95% 置信区间", "胜–平–负", "排行榜", "方法"):
        assert f">{label}<" in index
    assert all(f">{label}<" not in index for label in ("Rating", "95% CI", "W–T–L", "Leaderboard", "Methodology"))
    # The English site of the same content is labelled in English.
    english_index = (sites["en"] / "index.html").read_text(encoding="utf-8")
    assert english_index.startswith('<!doctype html>\n<html lang="en">') and ">Rating<" in english_index
    assert ">评分<" not in english_index
    match = (sites["zh"] / page_name("matches", "m00001")).read_text(encoding="utf-8")
    assert re.search(r"<h2>立论 · PRO · \w+</h2>", match)  # the stages' titles in the format's zh


def test_the_font_stack_names_the_common_cjk_fonts_after_the_latin_ones(sites):
    index = (sites["zh"] / "index.html").read_text(encoding="utf-8")
    stack = re.search(r"body \{ font: 15px/1\.5 ([^;]+);", index).group(1)
    faces = [f.strip().strip('"') for f in stack.split(",")]
    cjk = ["Noto Sans CJK SC", "Source Han Sans SC", "PingFang SC", "Microsoft YaHei", "WenQuanYi Micro Hei"]
    assert all(face in faces for face in cjk) and faces[-1] == "sans-serif"
    assert max(faces.index(f) for f in ("Segoe UI", "Roboto", "Arial")) < min(faces.index(f) for f in cjk)


def test_a_cost_with_unknown_prices_is_marked_where_the_footnote_points(tmp_path):
    data = hostile_data()
    priced = publish(tmp_path / "priced", data).read_text(encoding="utf-8")
    assert 'id="note-cost"' not in priced and "price is unknown" not in priced  # nothing to point at, no note
    unknown = replace(data, entries=[{**data.entries[0], "cost_unknown": True}])
    site = tmp_path / "unknown"
    index = publish(site, unknown).read_text(encoding="utf-8")
    cell = re.search(r'<td class="num" data-value="0\.0">\$0\.0000(.*?)</td>', index).group(1)
    assert 'href="#note-cost"' in cell and ">*</a>" in cell
    assert index.count('id="note-cost"') == 1
    assert re.search(r'<p class="note" id="note-cost"><sup>\*</sup> cost includes calls whose price is unknown</p>',
                     index)
    entry_page = (site / page_name("entries", data.entries[0]["name"])).read_text(encoding="utf-8")
    assert 'href="#note-cost"' in entry_page and 'id="note-cost"' in entry_page


def test_a_rationale_keeps_its_paragraphs_and_stays_escaped(tmp_path):
    data = hostile_data()
    match = data.matches[0]
    rationale = f"First point {HOSTILE}.\n\nSecond point.\nA line of it."
    verdict = replace(match.verdicts[0], rationale=rationale)
    site = tmp_path / "site"
    publish(site, replace(data, matches=[replace(match, verdicts=(verdict,))]))
    html = (site / page_name("matches", match.id)).read_text(encoding="utf-8")
    cell = re.search(r'<td class="text rationale" lang="en">(.*?)</td>', html, re.S).group(1)
    assert cell == "First point &lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;.\n\nSecond point.\nA line of it."
    assert re.search(r"td\.rationale \{ white-space: pre-line;", html)  # the breaks shown as they were written


def heatmap_of(names: list[str], cell: int = 0, t=svg.english) -> str:
    n = len(names)
    predicted = [[0.5 + (j - i) / (2 * n) for j in range(n)] for i in range(n)]
    observed = [[None if i == j else 0.5 for j in range(n)] for i in range(n)]
    counts = [[0 if i == j or (i + j) % 2 else 2 for j in range(n)] for i in range(n)]
    return svg.heatmap(names, predicted, observed, counts, cell=cell, t=t)


def test_the_heatmap_prints_its_values_has_a_legend_and_no_blank_band():
    names = ["ace", "bold", "calm", "deft"]
    chart = heatmap_of(names)
    values = re.findall(r'class="value">([^<]*)</text>', chart)
    assert len(values) == 12 and values[:3] == ["0.62", "0.75", "0.88"]  # row ace: every other entry, in order
    # The legend: the scale's colours from 0 to 1, its marks labelled, and what it measures.
    assert re.findall(r'class="tick">([^<]*)</text>', chart) == ["0", "0.25", "0.5", "0.75", "1"]
    assert '<stop offset="0" stop-color="rgb(255,115,115)"/>' in chart and "P(row beats column)" in chart
    assert 'stop-color="rgb(85,145,255)"' in chart
    # The grid starts just below the rotated column names: short names leave no band above it.
    top = min(float(y) for y in re.findall(r'<rect x="[\d.]+" y="([\d.]+)" width="\d+"', chart))
    assert top < 50
    longer = heatmap_of(["a-much-longer-entry-name", "b"])
    assert 100 < min(float(y) for y in re.findall(r'<rect x="[\d.]+" y="([\d.]+)" width="\d+"', longer)) <= 170
    # Chinese names are wider per character: the margin grows with them.
    wide = heatmap_of(["甲乙丙丁戊", "b"])
    assert min(float(y) for y in re.findall(r'<rect x="[\d.]+" y="([\d.]+)" width="\d+"', wide)) > 55
    # Cells too small to read a value keep only their colour and title; hover titles stay.
    small = heatmap_of([f"e{k}" for k in range(50)])
    assert 'class="value"' not in small and small.count("<title>") == 1 + 50 * 49
    assert "never met" in chart and "observed share 0.50 over 2 matches" in chart


def test_the_heatmap_in_zh():
    chart = heatmap_of(["甲", "乙"], t=labels.plain("zh"))
    assert "P（行胜列）" in chart and "未曾交手" in chart and "预测胜率：行对列" in chart
    assert "never" not in chart and "predicted" not in chart


def test_a_site_republished_in_another_language_matches_a_fresh_publish(tmp_path):
    """The language is part of every match page's key: a publish in zh over an English site renders them anew."""
    from leaderboard.site import published

    data = hostile_data()
    english = tmp_path / "en"
    publish(english, data)
    zh = replace(data, language="zh")
    again, fresh = tmp_path / "again", tmp_path / "fresh"
    publish(again, zh, previous=english)
    publish(fresh, zh)
    names = [p.relative_to(fresh).as_posix() for p in fresh.rglob("*") if p.is_file()]
    assert [n for n in names if (again / n).read_bytes() != (fresh / n).read_bytes() and n != published.MANIFEST] == []
    match = (again / page_name("matches", data.matches[0].id)).read_text(encoding="utf-8")
    assert match.startswith('<!doctype html>\n<html lang="zh">') and "裁决" in match
