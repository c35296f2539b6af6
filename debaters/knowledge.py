"""A side's knowledge base: numbered sources a speech may cite as [n], and the citations in a speech."""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from arena.records import Reference
from arena.search import SearchResult

KEY_CONTENT_CHARS = 600  # enough for the gist of a source without flooding the prompt
_MARKER = re.compile(r"( ?)\[(\d{1,3})\]")  # a citation with the space before it


@dataclass(frozen=True)
class Source:
    number: int
    title: str
    url: str
    content: str
    score: float = 0.0  # the search's relevance score: the lowest go first when a prompt must shrink


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
            source = Source(len(self.sources) + 1, r.title.strip(), r.url, _gist(r.content), r.score)
            self.sources.append(source)
            added.append(source)
        return added

    def render(self, drop: int = 0) -> str:
        """The sources as the prompts show them: '[n] title (url)' then the key content.

        drop leaves out that many of the lowest-ranked sources (to fit a context window); the
        rest keep their numbers.
        """
        left_out = set(self.ranked()[len(self.sources) - drop:]) if drop else set()
        return "\n\n".join(f"[{s.number}] {s.title} ({s.url})\n{s.content}" for s in self.sources
                            if s.number not in left_out)

    def ranked(self) -> list[int]:
        """Source numbers, best first: by the search's relevance score, then in the order found."""
        return [s.number for s in sorted(self.sources, key=lambda s: (-s.score, s.number))]

    def cite(self, text: str) -> tuple[str, tuple[Reference, ...]]:
        """The speech with its citations renumbered 1, 2, … in order of first use, and its references.

        A marker for a number not in the base is dropped, so a speech cites exactly its
        references and [k] in the text is the k-th reference.
        """
        by_number = {s.number: s for s in self.sources}
        order: dict[int, int] = {}

        def renumber(match: re.Match) -> str:
            space, n = match.group(1), int(match.group(2))
            if n not in by_number:
                return ""  # with the space before it, so no gap is left behind
            order.setdefault(n, len(order) + 1)
            return f"{space}[{order[n]}]"

        renumbered = _MARKER.sub(renumber, text)
        return renumbered, tuple(Reference(by_number[n].title, by_number[n].url) for n in order)


def _gist(content: str) -> str:
    content = " ".join(content.split())
    if len(content) <= KEY_CONTENT_CHARS:
        return content
    cut = content[:KEY_CONTENT_CHARS].rsplit(" ", 1)[0]
    return cut + " …"
