"""Which HTTPRoute rule a request takes on a listener: matching and precedence.

HTTPRouteMatch semantics (v1): a PathPrefix matches whole path elements (``/foo`` matches
``/foo`` and ``/foo/bar``, not ``/foobar``; a trailing ``/`` in the value is ignored); header
names compare case-insensitively; a rule without matches matches every request (the default
is PathPrefix ``/``). Precedence among matching rules (HTTPRouteRule.matches): the route with
the most specific matching hostname (non-wildcard characters, then characters), then exact
path, longest prefix, method, most header matches, most query param matches, the oldest
route, the route first in ``namespace/name`` order, and within a route the first rule and
match in list order. RegularExpression matches are implementation-specific: netsight matches
whole values with RE2, as Envoy does, and ranks them after prefix matches (rules with a pattern
RE2 refuses are dropped by ``rules.invalid_rules``).
"""

from __future__ import annotations

from collections.abc import Callable, Container, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, NamedTuple

from netsight.analyzers.core import deadline, regex
from netsight.analyzers.routing import hostnames
from netsight.analyzers.routing.gateway_objects import GRPC_ROUTE, Route, as_list, as_map


@dataclass(frozen=True, slots=True)
class Request:
    host: str
    path: str
    method: str = "GET"
    headers: Mapping[str, str] = field(default_factory=dict)
    query: Mapping[str, str] = field(default_factory=dict)
    # Header names compare case-insensitively: lowered once per request, not per match.
    lowered: Mapping[str, str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "lowered", {k.lower(): v for k, v in self.headers.items()})


class Candidate(NamedTuple):
    """One rule match that fits the request, with the key that orders candidates (a named
    tuple: one is made for every matching rule of every entry listener)."""

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
    if hostname is not None and len(hostname) > _LONGEST_HOSTNAME:
        return _rank(hostname)  # not a DNS name: not kept in the cache
    return _cached_rank(hostname)


_LONGEST_HOSTNAME = 253  # a DNS name; a proposal's hostname may be any length


def _rank(hostname: str | None) -> tuple[int, int]:
    if hostname is None:
        return (0, 0)
    if hostnames.is_wildcard(hostname):
        return (0, len(hostname))
    return (len(hostname), len(hostname))


# Read for every candidate rule: a few hostnames, many times.
_cached_rank = lru_cache(maxsize=4096)(_rank)


def request_host(value: str) -> str:
    """The host a request names, without its port: ``shop.example.com:8443`` ->
    ``shop.example.com``, ``[2001:db8::1]:80`` -> ``2001:db8::1`` (an IPv6 literal keeps its
    colons), lowercased as DNS names compare."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[1:value.index("]")] if "]" in value else value
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


def best_hostname(effective: list[str] | None, host: str) -> tuple[bool, str | None]:
    """(matches, the most specific hostname covering ``host``; the first of equals)."""
    if effective is None:
        return True, None
    best = None
    for hostname in effective:
        if hostnames.matches(hostname, host) and (
                best is None or host_rank(hostname) > host_rank(best)):
            best = hostname
    return best is not None, best


_Test = Callable[[Request], bool]


def _value_test(kind: str, pattern: str) -> Callable[[str | None], bool]:
    if kind == "Exact":
        return lambda value: value == pattern
    fits = regex.fullmatcher(pattern)
    if isinstance(fits, str):  # refused by RE2: the rule is dropped, never matched
        return lambda value: False
    return lambda value: value is not None and fits(value)


def _path_test(kind: str, value: str) -> Callable[[str], bool]:
    if kind == "Exact":
        return lambda path: path == value
    if kind == "PathPrefix":
        prefix = value.rstrip("/")
        if not prefix:
            return lambda path: True
        below = prefix + "/"
        return lambda path: path == prefix or path.startswith(below)
    fits = regex.fullmatcher(value)
    return (lambda path: False) if isinstance(fits, str) else fits


def _values_test(matches: list[tuple[str, Callable[[str | None], bool]]],
                 values: Callable[[Request], Mapping[str, str]]) -> _Test | None:
    if not matches:
        return None
    return lambda request: all(fits(values(request).get(name)) for name, fits in matches)


def _header_tests(spec: Mapping[str, Any]) -> list[tuple[str, Callable[[str | None], bool]]]:
    found = []
    for raw in as_list(spec.get("headers")):
        header = as_map(raw)
        found.append((str(header.get("name")).lower(),
                      _value_test(str(header.get("type") or "Exact"), str(header.get("value")))))
    return found


def _all(tests: list[_Test]) -> _Test:
    if len(tests) == 1:
        return tests[0]
    return lambda request: all(test(request) for test in tests)


def http_test(spec: Mapping[str, Any]) -> _Test:
    """An HTTPRouteMatch as a predicate over requests, read once (diff_routes keeps it
    with the parsed route, see ``compile_matches``)."""
    path = as_map(spec.get("path")) or {"type": "PathPrefix", "value": "/"}
    path_fits = _path_test(str(path.get("type") or "PathPrefix"), str(path.get("value") or "/"))
    tests: list[_Test] = [lambda request: path_fits(request.path)]
    method = spec.get("method")
    if method is not None:
        tests.append(lambda request: method == request.method)
    headers = _values_test(_header_tests(spec), lambda request: request.lowered)
    if headers is not None:
        tests.append(headers)
    query = _values_test(
        [(str(as_map(p).get("name")), _value_test(str(as_map(p).get("type") or "Exact"),
                                                  str(as_map(p).get("value"))))
         for p in as_list(spec.get("queryParams"))], lambda request: request.query)
    if query is not None:
        tests.append(query)
    return _all(tests)


def matches(spec: Mapping[str, Any], request: Request) -> bool:
    return http_test(spec)(request)


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


def grpc_test(spec: Mapping[str, Any]) -> _Test:
    """GRPCRouteMatch: the request path is /<service>/<method>; unset parts match all."""
    want = as_map(spec.get("method"))
    kind = str(want.get("type") or "Exact")
    parts = [(i, _value_test(kind, str(pattern)))
             for i, pattern in ((1, want.get("service")), (2, want.get("method")))
             if pattern is not None]
    tests: list[_Test] = []
    if parts:
        tests.append(lambda request: all(
            fits([*request.path.split("/", 2), "", ""][i]) for i, fits in parts))
    headers = _values_test(_header_tests(spec), lambda request: request.lowered)
    if headers is not None:
        tests.append(headers)
    return _all(tests) if tests else (lambda request: True)


def grpc_matches(spec: Mapping[str, Any], request: Request) -> bool:
    return grpc_test(spec)(request)


def grpc_rank(spec: Mapping[str, Any]) -> tuple[int, int, int]:
    """GRPCRouteRule.matches: characters in the matching service, method; header matches."""
    want = as_map(spec.get("method"))
    return (len(str(want.get("service") or "")), len(str(want.get("method") or "")),
            len(as_list(spec.get("headers"))))


def candidates(route: Route, hostname: str | None, request: Request,
               dropped: Container[int], matches: Sequence[Match] | None = None
               ) -> list[Candidate]:
    """The route's rule matches that fit the request, ``hostname`` being the route hostname
    that covers it; ``matches`` are the route's compiled ones, when kept (else compiled)."""
    found = []
    characters, length = host_rank(hostname)
    host = ((-characters, -length),)  # the rank's first item; the rest is the match's
    for i, j, spec, fits, order in compile_matches(route) if matches is None else matches:
        # A regex match is linear in the request (RE2), but the request may be megabytes
        # and the matches thousands: TOOL_TIMEOUT is checked between two.
        deadline.check()
        if i not in dropped and fits(request):
            found.append(Candidate(route, i, j, spec, hostname, host + order))
    return found


# (rule, match, spec, the match as a predicate, the rest of its rank after the hostname)
Match = tuple[int, int | None, Mapping[str, Any], _Test, tuple[Any, ...]]


def compile_matches(route: Route) -> list[Match]:
    """The route's matches, each as a predicate and the rank it sorts by: what does not
    depend on the request, read once per parsed route where it is kept."""
    grpc = route.kind == GRPC_ROUTE
    created = route.record.created or "9999"  # unknown creation time: treated as newest
    found: list[Match] = []
    for i, rule in enumerate(deadline.checked(route.rules)):  # a proposal's may be thousands
        specs: list[tuple[int | None, Mapping[str, Any]]] = [
            (j, as_map(m)) for j, m in enumerate(as_list(rule.get("matches")))]
        for j, spec in specs or [(None, {})]:
            specificity = grpc_rank(spec) if grpc else match_rank(spec)
            order = (tuple(-x for x in specificity), created, route.ref, i,
                     j if j is not None else 0)
            found.append((i, j, spec, grpc_test(spec) if grpc else http_test(spec), order))
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
