"""A side's knowledge base: numbered sources a speech may cite as [n], the findings compiled from them, and the
citations in a speech.

Sources are numbered from 1 in the order found, once for the whole match: [n] means the same source in every
speech of the side, and a speech's references carry those numbers.
"""
from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field

from arena.domain.records import Reference
from arena.gateway.search import SearchResult

KEY_CONTENT_CHARS = 600  # of a source's text in prompts: the gist, the compiled findings carry the rest
SOURCE_CHARS = 2000  # of a source's text kept at all: a search snippet is shorter, a whole page is not needed
_MARKER = re.compile(r"( ?)\[(\d{1,3})\]")  # a citation with the space before it


@dataclass(frozen=True)
class Source:
    number: int
    title: str
    url: str
    content: str
    score: float = 0.0  # the search's relevance score: the lowest go first when a prompt must shrink


@dataclass(frozen=True)
class Finding:
    """One claim or fact the Searcher compiled from the sources it rests on."""

    topic: str
    text: str
    bearing: str  # "for us", "against us" or "background"
    sources: tuple[int, ...]


@dataclass
class KnowledgeBase:
    """Sources numbered from 1 in the order found (a URL is added once), and the findings compiled from them."""

    sources: list[Source] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    gaps: list[str] = field(default_factory=list)  # what the latest compilation says is still missing

    def add(self, results: list[SearchResult]) -> list[Source]:
        """Add new results; return the sources that were new."""
        known = {s.url for s in self.sources}
        added = []
        for r in results:
            if r.url in known or not r.url:
                continue
            known.add(r.url)
            source = Source(len(self.sources) + 1, r.title.strip(), r.url, _clip(r.content, SOURCE_CHARS), r.score)
            self.sources.append(source)
            added.append(source)
        return added

    def record(self, findings: Iterable[Finding], gaps: Iterable[str]) -> None:
        """Keep a compilation's findings (those resting on known sources) and its list of what is missing."""
        known = {s.number for s in self.sources}
        for f in findings:
            cited = tuple(dict.fromkeys(n for n in f.sources if n in known))
            if cited and f.text.strip():
                self.findings.append(Finding(f.topic.strip(), f.text.strip(), f.bearing, cited))
        self.gaps = [g.strip() for g in gaps if g.strip()]

    def render(self, drop: int = 0, *, only: Collection[int] | None = None, full: bool = False) -> str:
        """The sources as the prompts show them: '[n] title (url)' then the gist of the content.

        drop leaves out that many of the lowest-ranked sources (to fit a context window); the
        rest keep their numbers. only: just those sources; full: all of each one's text.
        """
        left_out = self._dropped(drop)
        shown = [s for s in self.sources if s.number not in left_out and (only is None or s.number in only)]
        return "\n\n".join(f"[{s.number}] {s.title} ({s.url})\n{s.content if full else _clip(s.content)}"
                           for s in shown)

    def render_findings(self, drop: int = 0) -> str:
        """The findings, grouped by topic, each with the numbers of its sources; a finding whose sources were all
        dropped (see render) goes with them."""
        left_out = self._dropped(drop)
        by_topic: dict[str, list[str]] = {}
        for f in self.findings:
            if any(n not in left_out for n in f.sources):
                marks = "".join(f"[{n}]" for n in f.sources)
                by_topic.setdefault(f.topic, []).append(f"- ({f.bearing}) {f.text} {marks}")
        return "\n\n".join(f"{topic}:\n" + "\n".join(lines) for topic, lines in by_topic.items())

    def ranked(self) -> list[int]:
        """Source numbers, best first: by the search's relevance score, then in the order found."""
        return [s.number for s in sorted(self.sources, key=lambda s: (-s.score, s.number))]

    def cite(self, text: str) -> tuple[str, tuple[Reference, ...]]:
        """The speech with its citations checked, and its references: the sources it cites, by number.

        Numbers are the base's own, the same in every speech of the match; a marker for a number
        not in the base is dropped, so a speech cites exactly its references.
        """
        by_number = {s.number: s for s in self.sources}
        cited: set[int] = set()

        def check(match: re.Match[str]) -> str:
            n = int(match.group(2))
            if n not in by_number:
                return ""  # with the space before it, so no gap is left behind
            cited.add(n)
            return match.group(0)

        checked = _MARKER.sub(check, text)
        return checked, tuple(Reference(by_number[n].title, by_number[n].url, by_number[n].content, n)
                              for n in sorted(cited))

    def _dropped(self, drop: int) -> set[int]:
        return set(self.ranked()[len(self.sources) - drop:]) if drop else set()


def _clip(content: str, limit: int = KEY_CONTENT_CHARS) -> str:
    content = " ".join(content.split())
    if len(content) <= limit:
        return content
    return content[:limit].rsplit(" ", 1)[0] + " …"
