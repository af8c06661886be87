"""Regular expressions as Envoy compiles and matches them: with Google's RE2.

Every regex netsight evaluates goes through here (HTTPRoute and GRPCRoute RegularExpression
matches, VirtualService StringMatch regexes, AuthorizationPolicy path templates). RE2 matches
in time linear in the input, so no pattern from a caller's proposal or a cluster object can
hold the event loop, as a backtracking engine such as Python's ``re`` can (``/(a+)+b``).
RE2 also refuses look-around and backreferences, as Envoy does; such a pattern gets RE2's
reason instead of a verdict.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import re2

# Longer patterns are judged afresh each time: the verdict cache keeps its keys, and a
# proposal may carry patterns of up to its whole size.
_CACHED_PATTERN = 1024


@dataclass(frozen=True, slots=True)
class Verdict:
    error: str | None  # RE2's reason for refusing the pattern, or None
    program_size: int  # 0 when the pattern does not compile


def _options() -> re2.Options:
    options = re2.Options()
    options.log_errors = False  # refusals are reported to the caller, not on stderr
    return options


_OPTIONS = _options()


def _utf8(text: str) -> bytes:
    # A lone surrogate (YAML and JSON let one through) reaches RE2 as the invalid UTF-8 it
    # is: refused in a pattern, matched by nothing in a value.
    return text.encode("utf-8", "surrogatepass")


def _compile(pattern: str) -> Verdict:
    try:
        compiled = re2.compile(_utf8(pattern), _OPTIONS)
    except re2.error as exc:
        message = exc.args[0] if exc.args else exc
        text = message.decode("utf-8", "replace") if isinstance(message, bytes) \
            else str(message)
        return Verdict(text, 0)
    return Verdict(None, int(compiled.programsize))


_cached_compile = lru_cache(maxsize=4096)(_compile)


def judge(pattern: str) -> Verdict:
    """RE2's verdict on one pattern: its error, or the size of its compiled program."""
    return _cached_compile(pattern) if len(pattern) <= _CACHED_PATTERN else _compile(pattern)


def fullmatcher(pattern: str) -> Callable[[str], bool] | str:
    """A predicate matching whole values, as Envoy's safe_regex does, or RE2's reason for
    refusing the pattern."""
    verdict = judge(pattern)
    if verdict.error is not None:
        return verdict.error
    # re2 keeps its own bounded cache of compiled programs (RE2 caps each one's memory).
    compiled = re2.compile(_utf8(pattern), _OPTIONS)
    return lambda value: compiled.fullmatch(_utf8(value)) is not None


def escape(text: str) -> str:
    """``text`` as an RE2 pattern matching exactly it."""
    return str(re2.escape(text))


def submatches(pattern: str, value: str) -> tuple[str, ...] | str | None:
    """The first match of ``pattern`` anywhere in ``value`` as (whole match, group 1, ...),
    as Go's FindStringSubmatch gives it (an unmatched group is ""); None when nothing
    matches; RE2's reason for refusing the pattern as a str."""
    verdict = judge(pattern)
    if verdict.error is not None:
        return verdict.error
    found = re2.compile(_utf8(pattern), _OPTIONS).search(_utf8(value))
    if found is None:
        return None
    groups = (found.group(0), *found.groups())
    return tuple((g or b"").decode("utf-8", "replace") for g in groups)
