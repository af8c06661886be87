"""Calico's selector language: a lexer and a recursive-descent parser into a small tree.

Grammar (Calico policy reference, "Selectors"), loosest binding first::

    selector := or | ""                       (empty: all())
    or       := and ( "||" and )*
    and      := unary ( "&&" unary )*
    unary    := "!" unary | "(" or ")" | "all()" | "global()" | "has(" KEY ")"
              | KEY ( "==" | "!=" ) STRING
              | KEY ( "in" | "not in" ) "{" [ STRING ( "," STRING )* ] "}"
              | KEY ( "contains" | "starts with" | "ends with" ) STRING

``k != "v"`` and ``k not in {...}`` also match objects without ``k``; ``==``, ``in`` and the
string operators need ``k``. ``global()`` matches only non-namespaced resources (global
network sets, host endpoints): never a pod. Matching is three-valued: a label the input
does not give (``UNKNOWN``) makes the answer None unless the rest decides it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from netsight.analyzers.policy.verdict import Tri

UNKNOWN = object()  # a label value the graph cannot tell
Lookup = Callable[[str], object]  # key -> value (str), None (absent) or UNKNOWN


class SelectorError(ValueError):
    """A malformed selector: says where (character offset) and what was expected."""

    def __init__(self, text: str, position: int, message: str) -> None:
        super().__init__(f"selector {text!r}: {message} at character {position}")
        self.position, self.reason = position, message


# --- lexing ------------------------------------------------------------------------------

_TOKEN = re.compile(r"""
    (?P<space>\s+)
  | (?P<all>all\(\s*\))
  | (?P<global>global\(\s*\))
  | (?P<has>has\()
  | (?P<notin>not\s+in\b)
  | (?P<startswith>starts\s+with\b)
  | (?P<endswith>ends\s+with\b)
  | (?P<op>==|!=|&&|\|\||!|\(|\)|\{|\}|,)
  | (?P<string>"[^"]*"|'[^']*')
  | (?P<word>[A-Za-z0-9_.\-/]+)
""", re.VERBOSE)
_KEYWORDS = {"in": "in", "contains": "contains"}


@dataclass(frozen=True, slots=True)
class Token:
    kind: str  # all, global, has, op, string, key, in, notin, contains, startswith, ...
    text: str
    position: int


def tokens(text: str) -> list[Token]:
    found: list[Token] = []
    position = 0
    while position < len(text):
        match = _TOKEN.match(text, position)
        if match is None:
            raise SelectorError(text, position, f"unexpected character {text[position]!r}")
        kind = match.lastgroup
        assert kind is not None
        value = match.group()
        if kind == "word":
            kind = _KEYWORDS.get(value, "key")
        elif kind == "string":
            value = value[1:-1]
        if kind != "space":
            found.append(Token(kind, value, position))
        position = match.end()
    return found


# --- the tree ----------------------------------------------------------------------------


class Node:
    def matches(self, lookup: Lookup, *, global_: bool = False) -> Tri:
        raise NotImplementedError

    def keys(self) -> set[str]:
        return set()


@dataclass(frozen=True, slots=True)
class All(Node):
    def matches(self, lookup: Lookup, *, global_: bool = False) -> Tri:
        return True

    def __str__(self) -> str:
        return "all()"


@dataclass(frozen=True, slots=True)
class Global(Node):
    def matches(self, lookup: Lookup, *, global_: bool = False) -> Tri:
        return global_

    def __str__(self) -> str:
        return "global()"


@dataclass(frozen=True, slots=True)
class Compare(Node):
    key: str
    operator: str  # ==, !=, in, not in, has, contains, starts with, ends with
    values: tuple[str, ...] = ()

    def matches(self, lookup: Lookup, *, global_: bool = False) -> Tri:
        value = lookup(self.key)
        if value is UNKNOWN:
            return None
        if self.operator == "has":
            return value is not None
        if self.operator in ("!=", "not in"):
            return value is None or value not in self.values
        if not isinstance(value, str):
            return False
        match self.operator:
            case "==" | "in":
                return value in self.values
            case "contains":
                return self.values[0] in value
            case "starts with":
                return value.startswith(self.values[0])
            case _:
                return value.endswith(self.values[0])

    def keys(self) -> set[str]:
        return {self.key}

    def __str__(self) -> str:
        if self.operator == "has":
            return f"has({self.key})"
        if self.operator in ("in", "not in"):
            return f"{self.key} {self.operator} {{{', '.join(repr(v) for v in self.values)}}}"
        return f"{self.key} {self.operator} {self.values[0]!r}"


@dataclass(frozen=True, slots=True)
class Not(Node):
    inner: Node

    def matches(self, lookup: Lookup, *, global_: bool = False) -> Tri:
        found = self.inner.matches(lookup, global_=global_)
        return None if found is None else not found

    def keys(self) -> set[str]:
        return self.inner.keys()

    def __str__(self) -> str:
        return f"!{self.inner}" if isinstance(self.inner, Compare | All | Global) \
            else f"!({self.inner})"


@dataclass(frozen=True, slots=True)
class And(Node):
    parts: tuple[Node, ...]

    def matches(self, lookup: Lookup, *, global_: bool = False) -> Tri:
        unknown = False
        for part in self.parts:
            found = part.matches(lookup, global_=global_)
            if found is False:
                return False
            unknown |= found is None
        return None if unknown else True

    def keys(self) -> set[str]:
        return set().union(*(p.keys() for p in self.parts))

    def __str__(self) -> str:
        return " && ".join(f"({p})" if isinstance(p, Or) else str(p) for p in self.parts)


@dataclass(frozen=True, slots=True)
class Or(Node):
    parts: tuple[Node, ...]

    def matches(self, lookup: Lookup, *, global_: bool = False) -> Tri:
        unknown = False
        for part in self.parts:
            found = part.matches(lookup, global_=global_)
            if found is True:
                return True
            unknown |= found is None
        return None if unknown else False

    def keys(self) -> set[str]:
        return set().union(*(p.keys() for p in self.parts))

    def __str__(self) -> str:
        return " || ".join(str(p) for p in self.parts)


# --- parsing -----------------------------------------------------------------------------


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = tokens(text)
        self.index = 0

    def peek(self) -> Token | None:
        return self.tokens[self.index] if self.index < len(self.tokens) else None

    def take(self) -> Token:
        token = self.peek()
        if token is None:
            raise SelectorError(self.text, len(self.text), "unexpected end of selector")
        self.index += 1
        return token

    def expect(self, kind: str, text: str | None, what: str) -> Token:
        token = self.peek()
        if token is None or token.kind != kind or (text is not None and token.text != text):
            where = len(self.text) if token is None else token.position
            got = "the end" if token is None else repr(token.text)
            raise SelectorError(self.text, where, f"expected {what}, got {got}")
        self.index += 1
        return token

    def is_op(self, text: str) -> bool:
        token = self.peek()
        return token is not None and token.kind == "op" and token.text == text

    def parse(self) -> Node:
        if not self.tokens:
            return All()
        node = self.or_()
        token = self.peek()
        if token is not None:
            raise SelectorError(self.text, token.position,
                                f"unexpected {token.text!r} (expected && or || or the end)")
        return node

    def or_(self) -> Node:
        parts = [self.and_()]
        while self.is_op("||"):
            self.take()
            parts.append(self.and_())
        return parts[0] if len(parts) == 1 else Or(tuple(parts))

    def and_(self) -> Node:
        parts = [self.unary()]
        while self.is_op("&&"):
            self.take()
            parts.append(self.unary())
        return parts[0] if len(parts) == 1 else And(tuple(parts))

    def unary(self) -> Node:
        token = self.take()
        if token.kind == "op" and token.text == "!":
            return Not(self.unary())
        if token.kind == "op" and token.text == "(":
            inner = self.or_()
            self.expect("op", ")", "')'")
            return inner
        if token.kind == "all":
            return All()
        if token.kind == "global":
            return Global()
        if token.kind == "has":
            key = self.expect("key", None, "a label key inside has(...)")
            self.expect("op", ")", "')' closing has(")
            return Compare(key.text, "has")
        if token.kind != "key":
            raise SelectorError(self.text, token.position,
                                f"expected a label key, '!', '(', has(), all() or global(), "
                                f"got {token.text!r}")
        operator = self.take()
        if operator.kind == "op" and operator.text in ("==", "!="):
            value = self.expect("string", None, f"a quoted value after {operator.text}")
            return Compare(token.text, operator.text, (value.text,))
        if operator.kind in ("in", "notin"):
            return Compare(token.text, "in" if operator.kind == "in" else "not in",
                           self.set_())
        if operator.kind in ("contains", "startswith", "endswith"):
            value = self.expect("string", None, f"a quoted value after {operator.text}")
            name = {"contains": "contains", "startswith": "starts with",
                    "endswith": "ends with"}[operator.kind]
            return Compare(token.text, name, (value.text,))
        raise SelectorError(self.text, operator.position,
                            f"expected ==, !=, in, not in, contains, starts with or ends with "
                            f"after {token.text!r}, got {operator.text!r}")

    def set_(self) -> tuple[str, ...]:
        self.expect("op", "{", "'{' opening a set of values")
        values: list[str] = []
        if self.is_op("}"):
            self.take()
            return ()
        while True:
            values.append(self.expect("string", None, "a quoted value in the set").text)
            if self.is_op("}"):
                self.take()
                return tuple(values)
            self.expect("op", ",", "',' or '}' in the set")


def parse(text: str) -> Node:
    """The selector's tree; raises SelectorError naming the offset of what is wrong."""
    if not isinstance(text, str):
        raise SelectorError(repr(text), 0, "must be a string")
    return _Parser(text).parse()
