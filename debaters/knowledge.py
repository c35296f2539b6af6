"""A side's knowledge base: numbered sources a speech may cite as [n], and the citations in a speech."""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from arena.records import Reference
from arena.search import SearchResult

KEY_CONTENT_CHARS = 600  # enough for the gist of a source without flooding the prompt
_CITATION = re.compile(r"\[(\d{1,3})\]")


@dataclass(frozen=True)
class Source:
    number: int
    title: str
    url: str
    content: str


@dataclass
class KnowledgeBase:
    """Sources numbered from 1 in the order found; a URL is added once."""

    sources: list[Source] = field(default_factory=list)

    def add(self, results: list[SearchResult]) -> list[Source]:
        """Add new results; return the sources that were new."""
        known = {s.url for s in self.sources}
        added = []
        for r in results:
            if r.url in known or not r.url:
                continue
            known.add(r.url)
            source = Source(len(self.sources) + 1, r.title.strip(), r.url, _gist(r.content))
            self.sources.append(source)
            added.append(source)
        return added

    def render(self) -> str:
        """The sources as the prompts show them: '[n] title (url)' then the key content."""
        return "\n\n".join(f"[{s.number}] {s.title} ({s.url})\n{s.content}" for s in self.sources)

    def cited(self, text: str) -> tuple[Reference, ...]:
        """The sources text cites with [n], in order of first citation; unknown numbers are ignored."""
        by_number = {s.number: s for s in self.sources}
        seen: dict[int, Reference] = {}
        for match in _CITATION.finditer(text):
            n = int(match.group(1))
            if n in by_number and n not in seen:
                seen[n] = Reference(by_number[n].title, by_number[n].url)
        return tuple(seen.values())


def strip_unknown_citations(text: str, kb: KnowledgeBase) -> str:
    """Drop [n] markers that point at no source, so a speech never cites what is not in its references."""
    numbers = {s.number for s in kb.sources}
    return _CITATION.sub(lambda m: m.group(0) if int(m.group(1)) in numbers else "", text)


def _gist(content: str) -> str:
    content = " ".join(content.split())
    if len(content) <= KEY_CONTENT_CHARS:
        return content
    cut = content[:KEY_CONTENT_CHARS].rsplit(" ", 1)[0]
    return cut + " …"
