"""Which HTTPRoute rule a request takes on a listener: matching and precedence.

HTTPRouteMatch semantics (v1): a PathPrefix matches whole path elements (``/foo`` matches
``/foo`` and ``/foo/bar``, not ``/foobar``; a trailing ``/`` in the value is ignored); header
names compare case-insensitively; a rule without matches matches every request (the default
is PathPrefix ``/``). Precedence among matching rules (HTTPRouteRule.matches): the route with
the most specific matching hostname (non-wildcard characters, then characters), then exact
path, longest prefix, method, most header matches, most query param matches, the oldest
route, the route first in ``namespace/name`` order, and within a route the first rule and
match in list order. RegularExpression matches are implementation-specific: netsight uses
Python's re (full match) and ranks them after prefix matches.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from netsight.analyzers.routing import hostnames
from netsight.analyzers.routing.objects import GRPC_ROUTE, Route, as_list, as_map


@dataclass(frozen=True, slots=True)
class Request:
    host: str
    path: str
    method: str = "GET"
    headers: Mapping[str, str] = field(default_factory=dict)
    query: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Candidate:
    """One rule match that fits the request, with the key that orders candidates."""

    route: Route
    rule: int
    match: int | None  # None: the rule has no matches (matches everything)
    match_spec: Mapping[str, Any]
    hostname: str | None  # the route hostname that matched; None: any
    rank: tuple[Any, ...]

    @property
    def label(self) -> str:
        where = f"rule {self.rule}" + (f" match {self.match}" if self.match is not None else "")
        return f"{self.route.kind} {self.route.ref} {where}"


def host_rank(hostname: str | None) -> tuple[int, int]:
    """More specific first: non-wildcard characters, then characters."""
    if hostname is None:
        return (0, 0)
    if hostnames.is_wildcard(hostname):
        return (0, len(hostname))
    return (len(hostname), len(hostname))


def best_hostname(effective: list[str] | None, host: str) -> tuple[bool, str | None]:
    """(matches, the most specific hostname covering ``host``)."""
    if effective is None:
        return True, None
    covering = [h for h in effective if hostnames.matches(h, host)]
    if not covering:
        return False, None
    return True, max(covering, key=host_rank)


def _path_matches(kind: str, value: str, path: str) -> bool:
    if kind == "Exact":
        return path == value
    if kind == "PathPrefix":
        prefix = value.rstrip("/")
        return not prefix or path == prefix or path.startswith(prefix + "/")
    try:
        return re.fullmatch(value, path) is not None
    except re.error:
        return False


def _value_matches(kind: str, pattern: str, value: str | None) -> bool:
    if value is None:
        return False
    if kind == "Exact":
        return value == pattern
    try:
        return re.fullmatch(pattern, value) is not None
    except re.error:
        return False


def matches(spec: Mapping[str, Any], request: Request) -> bool:
    path = as_map(spec.get("path")) or {"type": "PathPrefix", "value": "/"}
    if not _path_matches(str(path.get("type") or "PathPrefix"), str(path.get("value") or "/"),
                         request.path):
        return False
    method = spec.get("method")
    if method is not None and method != request.method:
        return False
    if not _headers_match(spec, request):
        return False
    for param in as_list(spec.get("queryParams")):
        param = as_map(param)
        if not _value_matches(str(param.get("type") or "Exact"), str(param.get("value")),
                              request.query.get(str(param.get("name")))):
            return False
    return True


def match_rank(spec: Mapping[str, Any]) -> tuple[int, int, int, int, int]:
    """Higher sorts first: exact path, prefix length, method, headers, query params."""
    path = as_map(spec.get("path")) or {"type": "PathPrefix", "value": "/"}
    kind, value = str(path.get("type") or "PathPrefix"), str(path.get("value") or "/")
    exact = 1 if kind == "Exact" else 0
    prefix = len(value.rstrip("/")) + 1 if kind in ("Exact", "PathPrefix") else 0
    return (exact, prefix, int(spec.get("method") is not None),
            len(as_list(spec.get("headers"))), len(as_list(spec.get("queryParams"))))


def is_grpc(request: Request) -> bool:
    """A gRPC request: content-type application/grpc[+proto|...] (gRPC over HTTP/2)."""
    content_type = {k.lower(): v for k, v in request.headers.items()}.get("content-type", "")
    return content_type.startswith("application/grpc")


def _headers_match(spec: Mapping[str, Any], request: Request) -> bool:
    headers = {k.lower(): v for k, v in request.headers.items()}
    return all(_value_matches(str(as_map(h).get("type") or "Exact"),
                              str(as_map(h).get("value")),
                              headers.get(str(as_map(h).get("name")).lower()))
               for h in as_list(spec.get("headers")))


def grpc_matches(spec: Mapping[str, Any], request: Request) -> bool:
    """GRPCRouteMatch: the request path is /<service>/<method>; unset parts match all."""
    _, service, method = [*request.path.split("/", 2), "", ""][:3]
    want = as_map(spec.get("method"))
    kind = str(want.get("type") or "Exact")
    for pattern, value in ((want.get("service"), service), (want.get("method"), method)):
        if pattern is not None and not _value_matches(kind, str(pattern), value):
            return False
    return _headers_match(spec, request)


def grpc_rank(spec: Mapping[str, Any]) -> tuple[int, int, int]:
    """GRPCRouteRule.matches: characters in the matching service, method; header matches."""
    want = as_map(spec.get("method"))
    return (len(str(want.get("service") or "")), len(str(want.get("method") or "")),
            len(as_list(spec.get("headers"))))


def candidates(route: Route, hostname: str | None, request: Request,
               dropped: set[int]) -> list[Candidate]:
    found = []
    created = route.record.created or "9999"  # unknown creation time: treated as newest
    grpc = route.kind == GRPC_ROUTE
    host = tuple(-x for x in host_rank(hostname))
    for i, j, spec, specificity in _matches_of(route):
        if i in dropped or not (grpc_matches(spec, request) if grpc else
                                matches(spec, request)):
            continue
        rank = (host, specificity, created, route.ref, i, j if j is not None else 0)
        found.append(Candidate(route, i, j, spec, hostname, rank))
    return found


_Match = tuple[int, int | None, Mapping[str, Any], tuple[int, ...]]
# Route -> its (rule, match, spec, negated specificity): what does not depend on the request,
# read once per parsed route (diff_routes keeps parsed routes between answers).
_MATCHES: dict[int, tuple[Route, list[_Match]]] = {}
_MATCHES_KEPT = 20_000


def _matches_of(route: Route) -> list[_Match]:
    held = _MATCHES.get(id(route))
    if held is not None and held[0] is route:
        return held[1]
    grpc = route.kind == GRPC_ROUTE
    found: list[_Match] = []
    for i, rule in enumerate(route.rules):
        specs: list[tuple[int | None, Mapping[str, Any]]] = [
            (j, as_map(m)) for j, m in enumerate(as_list(rule.get("matches")))]
        for j, spec in specs or [(None, {})]:
            specificity = grpc_rank(spec) if grpc else match_rank(spec)
            found.append((i, j, spec, tuple(-x for x in specificity)))
    if len(_MATCHES) >= _MATCHES_KEPT:
        _MATCHES.clear()
    _MATCHES[id(route)] = (route, found)
    return found


def why_shadowed(winner: Candidate, loser: Candidate) -> str:
    """The first precedence criterion that decided between two candidates."""
    names = ("hostname specificity", "match specificity", "older route",
             "route name order", "rule order", "match order")
    for name, a, b in zip(names, winner.rank, loser.rank, strict=True):
        if a != b:
            if name == "match specificity":
                fields = ("service length", "method length", "header matches") \
                    if winner.route.kind == GRPC_ROUTE else \
                    ("exact path", "path prefix length", "method", "header matches",
                     "query param matches")
                for part, x, y in zip(fields, a, b, strict=True):
                    if x != y:
                        return part
            return name
    return "identical"
