"""VirtualService rules that can never take traffic, and match entries that never match.

Istio tries a VirtualService's rules in order and the first whose match fits wins, so
(as istio's validation warns, pkg/config/validation: analyzeUnreachable*Rules):

- a rule without ``match`` takes everything: any later rule without ``match`` is
  unreachable ("only the last rule can have no matches");
- a match entry equal to one of an earlier rule (its ``name`` aside) is ineffective, and a
  rule all of whose entries are such duplicates is unreachable;
- an http match entry whose ``uri.prefix`` extends an earlier entry's prefix, with the
  same port and the same (or narrower) method, authority, headers, query parameters and
  withoutHeaders, is ineffective: the earlier entry takes its requests. Only prefix URI
  matches are compared this way, and a match without a method counts as GET, as upstream.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from netsight.analyzers.mesh.istio_objects import RouteRule

_EXACT, _PREFIX = "exact:", "prefix:"
# Fields that are maps in the API: an empty one is the same as none.
_MAP_FIELDS = frozenset({"headers", "queryParams", "withoutHeaders", "sourceLabels"})


@dataclass(frozen=True, slots=True)
class Unreachable:
    rule: RouteRule
    reason: str


@dataclass(frozen=True, slots=True)
class Ineffective:
    rule: RouteRule
    match_index: int
    match_label: str
    covered_by: str  # the earlier rule (and entry) that takes its traffic


def _normal(value: Any, key: str = "") -> Any:
    """The match as the API would serialise it: zero values and empty maps left out."""
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            n = _normal(v, k)
            if n is None or n in ("", 0, False, []) or (n == {} and k in _MAP_FIELDS):
                continue
            out[k] = n
        return out
    if isinstance(value, list):
        return [_normal(v) for v in value]
    return value


def _identity(match: Mapping[str, Any], protocol: str) -> bytes:
    data = dict(match)
    if protocol == "http":
        data.pop("name", None)  # a match's name does not change what it matches
    return orjson.dumps(_normal(data), option=orjson.OPT_SORT_KEYS, default=str)


def _label(match: Mapping[str, Any], index: int) -> str:
    name = match.get("name")
    return f'"{name}"' if isinstance(name, str) and name else f"#{index}"


def _exact_or_prefix(raw: Any) -> str:
    if not isinstance(raw, dict):
        return ""
    exact, prefix = raw.get("exact"), raw.get("prefix")
    if isinstance(exact, str) and exact:
        return _EXACT + exact
    if isinstance(prefix, str) and prefix:
        return _PREFIX + prefix
    return ""


def _string_map(raw: Any) -> dict[str, str]:
    return {str(k): _exact_or_prefix(v) for k, v in raw.items()} if isinstance(raw, dict) \
        else {}


@dataclass(frozen=True, slots=True)
class _PrefixMatch:
    rule: RouteRule
    index: int
    match_label: str
    prefix: str
    port: int
    method: str
    authority: str
    headers: dict[str, str]
    query: dict[str, str]
    without_headers: dict[str, str]

    @classmethod
    def of(cls, rule: RouteRule, match: Mapping[str, Any], index: int) -> _PrefixMatch | None:
        uri = match.get("uri")
        prefix = uri.get("prefix") if isinstance(uri, dict) else None
        if not isinstance(prefix, str) or not prefix:
            return None
        port = match.get("port")
        return cls(rule, index, _label(match, index), prefix,
                   port if isinstance(port, int) and not isinstance(port, bool) else 0,
                   _exact_or_prefix(match.get("method")) or _EXACT + "GET",
                   _exact_or_prefix(match.get("authority")),
                   _string_map(match.get("headers")), _string_map(match.get("queryParams")),
                   _string_map(match.get("withoutHeaders")))

    def covers(self, later: _PrefixMatch) -> bool:
        """Upstream's coveredValidation, kept to the letter (its prefix tests included)."""
        if not later.prefix.startswith(self.prefix) or later.port != self.port:
            return False
        if self.method != later.method and not self.method.startswith(later.method):
            return False
        if self.authority != later.authority and \
                not self.authority.startswith(later.authority):
            return False
        for mine, theirs in ((self.headers, later.headers), (self.query, later.query),
                             (self.without_headers, later.without_headers)):
            if len(mine) != len(theirs):
                return False
            for key, value in mine.items():
                if key not in theirs:
                    return False
                if value != theirs[key] and not value.startswith(theirs[key]):
                    return False
        return True


def analyze(rules: tuple[RouteRule, ...]) -> Iterator[Unreachable | Ineffective]:
    """Findings for the rules of one protocol (http, tcp or tls), in spec order."""
    seen: dict[bytes, RouteRule] = {}
    catch_all_seen = False
    prefixes: list[_PrefixMatch] = []
    for rule in rules:
        if not rule.matches:
            if catch_all_seen:
                yield Unreachable(rule, "only the last rule can have no matches")
            catch_all_seen = True
            continue
        duplicates = 0
        for index, match in enumerate(rule.matches):
            key = _identity(match, rule.protocol)
            earlier = seen.get(key)
            if earlier is not None:
                yield Ineffective(rule, index, _label(match, index), earlier.label)
                duplicates += 1
                continue
            seen[key] = rule
            if rule.protocol == "http":
                prefix = _PrefixMatch.of(rule, match, index)
                if prefix is not None:
                    prefixes.append(prefix)
        if duplicates == len(rule.matches):
            yield Unreachable(rule, "all matches used by prior rules")
    for i, first in enumerate(prefixes):
        for later in prefixes[i + 1:]:
            if later.prefix != first.prefix and first.covers(later):
                yield Ineffective(
                    later.rule, later.index,
                    f"{later.match_label} of prefix {later.prefix}",
                    f"{first.match_label} of prefix {first.prefix} on {first.rule.label}")

