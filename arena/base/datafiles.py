"""Users' YAML and JSON read as plain data within arena.base.limits: a document that repeats a mapping's key, nests
deeper than MAX_DEPTH or stands for more than MAX_YAML_NODES nodes is a UserError naming the file and line.

Aliases and merge keys (<<) are allowed, but count as what they expand to, and the count is kept as the parser
goes: an alias bomb is refused at the alias that passes the limit, before anything is expanded.
"""
from __future__ import annotations

import json
from typing import Any, Callable

import yaml
from yaml.composer import Composer, ComposerError
from yaml.constructor import SafeConstructor
from yaml.error import Mark
from yaml.nodes import MappingNode, Node, ScalarNode
from yaml.resolver import Resolver

from arena.base.errors import UserError
from arena.base.limits import MAX_DEPTH, MAX_YAML_NODES, nesting

try:  # libyaml's scanner and parser where PyYAML has them (its wheels do): several times faster than PyYAML's own
    from yaml._yaml import CParser

    def _start(loader: _Loader, text: str) -> None:
        CParser.__init__(loader, text)

    _PARSING: tuple[type, ...] = (CParser,)
except ImportError:  # pragma: no cover - a PyYAML built without libyaml
    from yaml.parser import Parser
    from yaml.reader import Reader
    from yaml.scanner import Scanner

    def _start(loader: _Loader, text: str) -> None:
        Reader.__init__(loader, text)
        Scanner.__init__(loader)
        Parser.__init__(loader)

    _PARSING = (Reader, Scanner, Parser)


_SEE = " (see Limits in docs/reference/index.md)"
_TOO_DEEP = object()


class _Refused(ComposerError):
    """A document past a limit, or with a repeated key: well-formed YAML, but not data we read."""

    def __init__(self, problem: str, mark: Mark) -> None:
        super().__init__(None, None, problem, mark)
        self.at = mark  # problem_mark, known to be set: each raise names where
        self.what = problem


class _Bounded(Composer):
    """PyYAML's composer, measuring each node as it is made: its expanded size (1 + its children's, an alias
    counting as the whole node it names) and height, so that the document's expanded size and depth are known
    at every step."""

    # The parser's, which _Loader mixes in
    peek_event: Callable[[], Any]
    check_event: Callable[..., bool]

    def __init__(self) -> None:
        Composer.__init__(self)
        self._level = 0  # nodes from the root to the one being composed, that one included
        self._total = 0  # expanded nodes so far
        self._measures: dict[int, tuple[int, int]] = {}  # id(node) -> (expanded size, height); the tree keeps ids

    def compose_node(self, parent: Node | None, index: Node | int | None) -> Node | None:
        mark = self.peek_event().start_mark
        if self.check_event(yaml.AliasEvent):
            # types-PyYAML says index is an int; PyYAML passes a mapping value's key node too, which this hands on
            node = Composer.compose_node(self, parent, index)  # type: ignore[arg-type]
            if id(node) not in self._measures:  # still being composed: the alias is inside what it names
                raise _Refused("an alias inside the node it names (a structure that holds itself)", mark)
            size, height = self._measures[id(node)]
            self._grow(size, self._level + height, mark)
            return node
        self._level += 1
        self._grow(1, self._level, mark)
        before = self._total
        node = Composer.compose_node(self, parent, index)  # type: ignore[arg-type]  # as above
        assert node is not None  # an event was there to compose
        self._level -= 1
        children = ([] if isinstance(node, ScalarNode) else
                    [part for pair in node.value for part in pair] if isinstance(node, MappingNode) else node.value)
        self._measures[id(node)] = (self._total - before + 1, 1 + max((self._measures[id(c)][1] for c in children),
                                                                       default=0))
        return node

    # types-PyYAML says anchor is a dict; PyYAML passes the anchor's name, or None
    def compose_mapping_node(self, anchor: str | None) -> MappingNode:  # type: ignore[override]
        node = Composer.compose_mapping_node(self, anchor)  # type: ignore[arg-type]
        first: dict[tuple[str, str], Node] = {}
        for key, _ in node.value:
            if isinstance(key, ScalarNode):
                seen = first.setdefault((key.tag, key.value), key)
                if seen is not key:
                    raise _Refused(f"key {key.value!r} repeated (first on line {seen.start_mark.line + 1}): a "
                                   "mapping's keys must differ", key.start_mark)
        return node

    def _grow(self, size: int, depth: int, mark: Mark) -> None:
        self._total += size
        if self._total > MAX_YAML_NODES:
            raise _Refused(f"more than {MAX_YAML_NODES:,} nodes (aliases and merge keys counted as what they "
                           f"stand for){_SEE}", mark)
        if depth > MAX_DEPTH:
            raise _Refused(f"nested more than {MAX_DEPTH} levels deep{_SEE}", mark)


class _Loader(_Bounded, *_PARSING, SafeConstructor, Resolver):  # type: ignore[misc]  # bases known at import
    """SafeLoader's parts, with the bounded composer first so that its methods win over CParser's own."""

    def __init__(self, text: str) -> None:
        _start(self, text)
        _Bounded.__init__(self)
        SafeConstructor.__init__(self)
        Resolver.__init__(self)


def load_yaml(text: str, name: str) -> tuple[Node | None, Any]:
    """(node, data) of a one-document YAML text, the node keeping line numbers for messages; a UserError names
    name and the line of what is wrong."""
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        return node, (None if node is None else loader.construct_document(node))
    except _Refused as e:
        raise UserError(f"{name}: line {e.at.line + 1}: {e.what}") from None
    except yaml.MarkedYAMLError as e:
        if "nesting depth" in str(e.problem) and e.problem_mark is not None:
            # PyYAML 6.0.4 on stops at 1,000 levels while scanning ahead, before the composer counts 32: our limit
            raise UserError(f"{name}: line {e.problem_mark.line + 1}: nested more than {MAX_DEPTH} levels deep"
                            f"{_SEE}") from None
        raise UserError(f"{name}: not valid YAML: {_describe(e)}") from None
    except yaml.YAMLError as e:
        raise UserError(f"{name}: not valid YAML: {_describe(e)}") from None
    finally:
        loader.dispose()


def load_json(text: str, where: str) -> Any:
    """One JSON value (a line of a JSONL file) nested at most MAX_DEPTH deep; a UserError starts with where."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise UserError(f"{where}: not valid JSON: {e.msg} (column {e.colno})") from None
    except RecursionError:  # json's parser recurses per level, as deep as Python's recursion limit lets it
        data = _TOO_DEEP
    if data is _TOO_DEEP or nesting(data) > MAX_DEPTH:
        raise UserError(f"{where}: nested more than {MAX_DEPTH} levels deep{_SEE}")
    return data


def _describe(e: yaml.YAMLError) -> str:
    mark = getattr(e, "problem_mark", None)
    problem = getattr(e, "problem", None) or str(e)
    return f"{problem} (line {mark.line + 1}, column {mark.column + 1})" if mark else problem
