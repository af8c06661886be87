"""The Corefile's syntax: CoreDNS reads it with the Caddyfile grammar of Caddy v1.

Tokens are separated by white space; ``"..."`` quotes a token (``\\"`` escapes a quote, a
backslash before anything else stays), ``#`` starts a comment to the end of the line. A
server block is its keys (zones, ``[scheme://]zone[:port]``, separated by spaces or commas)
followed by ``{ ... }``, or, without braces, the rest of the file. Inside, each line is a
directive with its arguments, optionally followed by a ``{ ... }`` block of its own lines.

What netsight cannot evaluate is said, never guessed: ``import`` and snippets (the files
and snippets are not at hand), ``{$VAR}`` environment placeholders (CoreDNS's environment
is unknown); a syntax error makes the whole Corefile unevaluated, as it makes CoreDNS refuse
to load it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# {$VAR} and {%VAR%} (Windows form), replaced from the environment by Caddy's parser.
_ENV = re.compile(r"\{\$[^}]*\}|\{%[^}]*%\}")
_SCHEMES = ("dns://", "tls://", "grpc://", "https://", "quic://", "grpcs://")
# A Corefile's size is bounded by the ConfigMap's (1 MiB); so is what we keep of it.
MAX_TOKENS = 100_000


class CorefileError(ValueError):
    """The Corefile does not parse; CoreDNS would refuse it as well."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(f"line {line}: {message}")
        self.line = line


@dataclass(frozen=True, slots=True)
class Token:
    text: str
    line: int
    quoted: bool = False


@dataclass(frozen=True, slots=True)
class Directive:
    """One line of a block: a plugin (or a plugin's option) and its arguments."""

    name: str
    args: tuple[str, ...]
    line: int
    block: tuple[Directive, ...] | None = None  # its own { ... }, if any
    # Arguments holding environment placeholders: their value is unknown.
    placeholders: tuple[str, ...] = ()

    def options(self, name: str) -> list[Directive]:
        return [d for d in self.block or () if d.name == name]


@dataclass(frozen=True, slots=True)
class ServerKey:
    """One key of a server block: the zone it serves and on which port and transport."""

    text: str
    zone: str  # lower case, fully qualified ("cluster.local."; "." for the root)
    port: int | None  # None: the default (53)
    scheme: str  # "dns", "tls", ...


@dataclass(frozen=True, slots=True)
class ServerBlock:
    keys: tuple[ServerKey, ...]
    directives: tuple[Directive, ...]
    line: int

    def plugins(self, name: str) -> list[Directive]:
        return [d for d in self.directives if d.name == name]


@dataclass(frozen=True, slots=True)
class Corefile:
    blocks: tuple[ServerBlock, ...]
    # Constructs read but not evaluated (imports, snippets, placeholders), with their lines.
    not_evaluated: tuple[str, ...] = ()


def tokenize(text: str) -> list[Token]:
    """Caddy v1's lexer: whitespace-separated tokens, double quotes, # comments."""
    tokens: list[Token] = []
    line = 1
    value: list[str] = []
    start = 1
    quoted = escaped = comment = False
    for ch in text:
        if quoted:
            if not escaped:
                if ch == "\\":
                    escaped = True
                    continue
                if ch == '"':
                    tokens.append(Token("".join(value), start, True))
                    value, quoted = [], False
                    continue
            if ch == "\n":
                line += 1
            if escaped and ch != '"':
                value.append("\\")  # only a quote is escaped
            value.append(ch)
            escaped = False
            continue
        if ch.isspace():
            if ch == "\n":
                line += 1
                comment = False
            if value:
                tokens.append(Token("".join(value), start))
                value = []
            continue
        if ch == "#":
            comment = True
        if comment:
            continue
        if not value:
            start = line
            if ch == '"':
                quoted = True
                continue
        value.append(ch)
        if len(tokens) > MAX_TOKENS:
            raise CorefileError(line, f"more than {MAX_TOKENS} tokens")
    if value or quoted:  # an unclosed quote runs to the end, as Caddy reads it
        tokens.append(Token("".join(value), start, quoted))
    return tokens


def parse(text: str) -> Corefile:
    """The server blocks of a Corefile.

    Raises:
        CorefileError: where the text is not a Corefile CoreDNS would load.
    """
    return _Parser(tokenize(text)).corefile()


class _Parser:
    def __init__(self, tokens: list[Token]) -> None:
        self.tokens = tokens
        self.at = 0
        self.not_evaluated: list[str] = []

    def peek(self) -> Token | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def take(self) -> Token:
        token = self.tokens[self.at]
        self.at += 1
        return token

    def corefile(self) -> Corefile:
        blocks: list[ServerBlock] = []
        while self.peek() is not None:
            first = self.peek()
            assert first is not None
            if first.text.startswith("(") and first.text.endswith(")") and not first.quoted:
                self.take()
                self.not_evaluated.append(
                    f"line {first.line}: snippet {first.text} (snippets and import are not "
                    "evaluated)")
                if self.peek() is not None and self._is("{"):
                    self.take()
                    self._lines(until_brace=True)
                continue
            if first.text == "import" and not first.quoted:
                self._import(self.take())
                continue
            blocks.append(self._server_block())
        return Corefile(tuple(blocks), tuple(self.not_evaluated))

    def _is(self, text: str) -> bool:
        token = self.peek()
        return token is not None and token.text == text and not token.quoted

    def _import(self, token: Token) -> None:
        args = self._rest_of_line(token.line)
        self.not_evaluated.append(f"line {token.line}: import {' '.join(args)} (imported "
                                  "files and snippets are not evaluated)")

    def _rest_of_line(self, line: int) -> list[str]:
        args = []
        while (token := self.peek()) is not None and token.line == line \
                and not (token.text in ("{", "}") and not token.quoted):
            args.append(self.take().text)
        return args

    def _server_block(self) -> ServerBlock:
        first = self.peek()
        assert first is not None
        keys: list[str] = []
        expecting = False  # the last key ended in a comma: another must follow
        line = first.line
        while (token := self.peek()) is not None:
            if token.text == "{" and not token.quoted:
                if expecting:
                    raise CorefileError(token.line, "a server block key is missing after ','")
                break
            if token.text == "}" and not token.quoted:
                raise CorefileError(token.line, "unexpected '}'")
            if not expecting and token.line != line:
                break  # keys end at the line's end unless the last ends in a comma
            self.take()
            line = token.line
            for part in token.text.split(","):
                if part:
                    keys.append(part)
            expecting = token.text.endswith(",")
        if not keys:
            raise CorefileError(first.line, "a server block has no key (zone)")
        parsed = tuple(_server_key(key, first.line) for key in keys)
        if self._is("{"):
            self.take()
            directives = self._lines(until_brace=True)
        else:  # without braces, the rest of the file is the block (a lone server)
            directives = self._lines(until_brace=False)
        return ServerBlock(parsed, tuple(directives), first.line)

    def _lines(self, *, until_brace: bool, depth: int = 0) -> list[Directive]:
        if depth > 8:
            raise CorefileError(self.tokens[self.at - 1].line, "blocks nested too deeply")
        directives: list[Directive] = []
        while True:
            token = self.peek()
            if token is None:
                if until_brace:
                    raise CorefileError(self.tokens[-1].line, "a block is not closed with '}'")
                return directives
            if token.text == "}" and not token.quoted:
                if not until_brace:
                    raise CorefileError(token.line, "unexpected '}'")
                self.take()
                return directives
            if token.text == "{" and not token.quoted:
                raise CorefileError(token.line, "unexpected '{'")
            name = self.take()
            if name.text == "import" and not name.quoted:
                self._import(name)
                continue
            args = self._rest_of_line(name.line)
            block = None
            if self._is("{") and (opening := self.peek()) is not None \
                    and opening.line == name.line:
                self.take()
                block = tuple(self._lines(until_brace=True, depth=depth + 1))
            placeholders = tuple(a for a in (name.text, *args) if _ENV.search(a))
            if placeholders:
                self.not_evaluated.append(
                    f"line {name.line}: {name.text}: environment placeholder "
                    f"{placeholders[0]} (CoreDNS's environment is not known)")
            directives.append(Directive(name.text, tuple(args), name.line, block, placeholders))


def _server_key(text: str, line: int) -> ServerKey:
    key = text.lower()
    scheme = "dns"
    for prefix in _SCHEMES:
        if key.startswith(prefix):
            scheme, key = prefix[:-3], key[len(prefix):]
            break
    port: int | None = None
    zone, colon, rest = key.rpartition(":")
    if colon and rest.isascii() and rest.isdigit() and "]" not in rest:
        port = int(rest)
        if not 0 < port < 65536:
            raise CorefileError(line, f"server block key {text}: port {rest} is out of range")
        key = zone
    if not key:
        raise CorefileError(line, f"server block key {text} has no zone")
    return ServerKey(text, fqdn(key), port, scheme)


def fqdn(name: str) -> str:
    """``name`` lower case with its final dot; the root is "."."""
    name = name.lower()
    return name if name.endswith(".") else f"{name}."
