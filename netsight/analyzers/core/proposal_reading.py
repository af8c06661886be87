"""The documents of a proposal's text (diff_routes ``proposed``), read within bounds.

YAML anchors let a short text stand for a huge one: ``rules: [*r, *r, ...]`` repeats a rule
for each alias, and a merge key (``<<: *m``) copies a mapping's entries into each mapping
that names it. Each document is therefore composed first, where an alias is the very node
it names and nothing is copied, and its size once expanded is counted node by node, each
alias as often as it occurs, stopping as soon as a bound is passed; only a document within
the bounds is built into Python objects. JSON has no aliases and is counted the same way
once parsed. The bounds are for the whole proposal, every document together.

Documents are read as manifests are (multi-document YAML, JSON, empty documents skipped),
numbered from 1 among those that hold something, each with the line its content starts on.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass

import orjson
import yaml

from netsight.analyzers.core.quoting import shortened
from netsight.graph.model.yaml_keys import Loader

# As many values and characters as a megabyte of YAML without aliases can hold, so that no
# proposal without them is refused for its size here (proposals.MAX_BYTES bounds the text).
MAX_NODES = 1 << 19
MAX_CHARACTERS = 1 << 20
# Deeper than any Kubernetes object nests; recursive readers downstream stay far from
# Python's recursion limit.
MAX_DEPTH = 100
# Gateway API allows 16 rules per route and 64 matches per rule: the rules of a hundred full
# routes fit, with ten matches each on average; the engine compiles and tries each one.
MAX_RULES = 2_000
MAX_MATCHES = 20_000
# Lists counted as rules or matches wherever they are: route, Ingress and AuthorizationPolicy
# rules, VirtualService http/tcp/tls routes; Gateway API matches, VirtualService match.
RULE_KEYS = frozenset({"rules", "http", "tcp", "tls"})
MATCH_KEYS = frozenset({"matches", "match"})


class TooLarge(ValueError):
    """A bound the proposal passes once expanded; the message names it."""


@dataclass(frozen=True, slots=True)
class Document:
    line: int  # where its content starts
    # The parsed document, or a ValueError saying why it could not be read (TooLarge: a
    # bound it passes).
    body: object


@dataclass(slots=True)
class _Budget:
    """What the documents read so far add up to, expanded."""

    nodes: int = 0
    characters: int = 0
    rules: int = 0
    matches: int = 0

    def node(self, depth: int, characters: int = 0) -> None:
        self.nodes += 1
        self.characters += characters
        if depth > MAX_DEPTH:
            raise TooLarge(f"nested deeper than {MAX_DEPTH} levels")
        if self.nodes > MAX_NODES:
            raise TooLarge(f"more than {MAX_NODES} values once YAML aliases and merge keys "
                           "are expanded")
        if self.characters > MAX_CHARACTERS:
            raise TooLarge(f"more than {MAX_CHARACTERS} characters of text once YAML aliases "
                           "and merge keys are expanded")

    def listed(self, key: object, items: int) -> None:
        """A list of ``items`` under ``key``: rules or matches, when named so."""
        if key in RULE_KEYS:
            self.rules += items
            if self.rules > MAX_RULES:
                raise TooLarge(f"more than {MAX_RULES} rules in all ({', '.join(sorted(RULE_KEYS))}"
                               " lists, aliases expanded)")
        elif key in MATCH_KEYS:
            self.matches += items
            if self.matches > MAX_MATCHES:
                raise TooLarge(f"more than {MAX_MATCHES} matches in all "
                               f"({', '.join(sorted(MATCH_KEYS))} lists, aliases expanded)")

    def count_node(self, root: yaml.Node) -> None:
        """Count a composed document; an alias is its node again, counted again."""
        stack: list[tuple[yaml.Node, int]] = [(root, 1)]
        while stack:
            node, depth = stack.pop()
            if isinstance(node, yaml.ScalarNode):
                self.node(depth, len(node.value))
            elif isinstance(node, yaml.SequenceNode):
                self.node(depth)
                stack.extend((item, depth + 1) for item in node.value)
            elif isinstance(node, yaml.MappingNode):
                self.node(depth)
                for key, value in node.value:
                    if isinstance(key, yaml.ScalarNode) and isinstance(value, yaml.SequenceNode):
                        self.listed(key.value, len(value.value))
                    stack.append((key, depth + 1))
                    stack.append((value, depth + 1))

    def count_value(self, root: object) -> None:
        """Count a parsed JSON document."""
        stack: list[tuple[object, int]] = [(root, 1)]
        while stack:
            value, depth = stack.pop()
            if isinstance(value, dict):
                self.node(depth)
                for key, item in value.items():
                    if isinstance(item, list):
                        self.listed(key, len(item))
                    stack.append((key, depth + 1))
                    stack.append((item, depth + 1))
            elif isinstance(value, list):
                self.node(depth)
                stack.extend((item, depth + 1) for item in value)
            else:
                self.node(depth, len(value) if isinstance(value, str) else 0)


def documents(text: str) -> Iterator[Document]:
    """The documents of ``text`` that hold something, in order; reading stops at the first
    that cannot be read or passes a bound (its ValueError is the last document)."""
    budget = _Budget()
    if text.lstrip().startswith(("{", "[")):
        # JSON first; on failure YAML, a superset of JSON whose errors carry a line.
        with contextlib.suppress(orjson.JSONDecodeError):
            body = orjson.loads(text)
            try:
                budget.count_value(body)
            except TooLarge as exc:
                body = exc
            yield Document(1, body)
            return
    loader = Loader(text)  # libyaml composes in C; a key given twice is refused
    try:
        while True:
            try:
                if not loader.check_node():
                    return
                node = loader.get_node()
            except yaml.YAMLError as exc:
                yield Document(_line(exc), ValueError(f"invalid YAML: {_problem(exc)}"))
                return
            line = node.start_mark.line + 1
            try:
                budget.count_node(node)
            except TooLarge as exc:
                yield Document(line, exc)
                return
            try:
                body = loader.construct_document(node)
            except yaml.YAMLError as exc:
                yield Document(_line(exc, line), ValueError(f"invalid YAML: {_problem(exc)}"))
                return
            except (ValueError, OverflowError) as exc:
                # A scalar YAML resolves to a value Python cannot make: a date such as
                # 2025-13-45, an integer of thousands of digits.
                reason = shortened(str(exc).partition(";")[0])
                yield Document(line, ValueError(f"invalid YAML: {reason}"))
                return
            if body is not None:
                yield Document(line, body)
    finally:
        loader.dispose()


def _line(exc: yaml.YAMLError, default: int = 1) -> int:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    return mark.line + 1 if mark is not None else default


def _problem(exc: yaml.YAMLError) -> str:
    # A problem may quote the text (an unknown tag): a long one is cut.
    return shortened(getattr(exc, "problem", None) or str(exc).splitlines()[0], 400)
