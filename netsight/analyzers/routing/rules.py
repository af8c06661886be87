"""Route rules a conformant controller cannot implement: enum values it does not know.

RouteConditionReason UnsupportedValue ("a value for an Enum is not recognized") and
IncompatibleFilters (e.g. URLRewrite with RequestRedirect in one HTTPRoute rule). A route
with some such rules drops them (PartiallyInvalid); with only such rules it is not accepted.
A RegularExpression match is implementation-specific; netsight judges it as Envoy-based
implementations do, with RE2, and drops a rule whose pattern RE2 refuses (UnsupportedValue).
A rule whose ExternalAuth filter calls a backendRef that does not resolve is kept, and
refuses its requests: it too makes the route PartiallyInvalid.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from netsight.analyzers.core import regex
from netsight.analyzers.routing import conditions as c
from netsight.analyzers.routing.gateway_objects import (
    GRPC_ROUTE,
    HTTP_ROUTE,
    Route,
    as_list,
    as_map,
)
from netsight.analyzers.routing.references import BackendResolution

_PATH_TYPES = frozenset({"Exact", "PathPrefix", "RegularExpression"})
_VALUE_MATCH_TYPES = frozenset({"Exact", "RegularExpression"})
_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE",
                      "PATCH"})
_HTTP_FILTERS = frozenset({"RequestHeaderModifier", "ResponseHeaderModifier", "RequestMirror",
                           "RequestRedirect", "URLRewrite", "ExtensionRef", "CORS",
                           "ExternalAuth", "DirectResponse"})
_GRPC_FILTERS = frozenset({"RequestHeaderModifier", "ResponseHeaderModifier", "RequestMirror",
                           "ExtensionRef"})


def invalid_rules(route: Route) -> dict[int, tuple[str, str]]:
    """Rule index -> (reason, message) for each rule that would be dropped."""
    if route.kind not in (HTTP_ROUTE, GRPC_ROUTE):
        return {}
    found = {}
    for i, rule in enumerate(route.rules):
        problem = _http_rule(rule) if route.kind == HTTP_ROUTE else _grpc_rule(rule)
        if problem is not None:
            found[i] = problem
    return found


def _enum(value: object, allowed: frozenset[str], field: str) -> tuple[str, str] | None:
    if value is not None and (not isinstance(value, str) or value not in allowed):
        return c.UNSUPPORTED_VALUE, f"{field} {value!r} is not one of {', '.join(sorted(allowed))}"
    return None


_QUOTED = 60  # characters of a refused pattern quoted back


def _regex(kind: object, value: object, field: str) -> tuple[str, str] | None:
    if kind != "RegularExpression" or value is None:
        return None
    pattern = str(value)
    error = regex.judge(pattern).error
    if error is None:
        return None
    quoted = repr(pattern[:_QUOTED]) + ("..." if len(pattern) > _QUOTED else "")
    return c.UNSUPPORTED_VALUE, f"{field} {quoted} is not valid RE2, the syntax Envoy " \
        f"matches with ({error[:_QUOTED * 2]})"


def _values(matches: object, field: str) -> tuple[str, str] | None:
    for j, entry in enumerate(as_list(matches)):
        entry = as_map(entry)
        problem = (_enum(entry.get("type"), _VALUE_MATCH_TYPES, f"{field}[{j}].type")
                   or _regex(entry.get("type"), entry.get("value"), f"{field}[{j}].value"))
        if problem:
            return problem
    return None


def _filters(rule: Mapping[str, Any], allowed: frozenset[str]) -> tuple[str, str] | None:
    types = [as_map(f).get("type") for f in as_list(rule.get("filters"))]
    for j, kind in enumerate(types):
        problem = _enum(kind, allowed, f"filters[{j}].type")
        if problem:
            return problem
    if "URLRewrite" in types and "RequestRedirect" in types:
        return c.INCOMPATIBLE_FILTERS, "URLRewrite and RequestRedirect in one rule"
    return None


def _http_rule(rule: Mapping[str, Any]) -> tuple[str, str] | None:
    for i, match in enumerate(as_list(rule.get("matches"))):
        match = as_map(match)
        path = as_map(match.get("path"))
        problem = (_enum(path.get("type"), _PATH_TYPES, f"matches[{i}].path.type")
                   or _regex(path.get("type"), path.get("value"), f"matches[{i}].path.value")
                   or _values(match.get("headers"), f"matches[{i}].headers")
                   or _values(match.get("queryParams"), f"matches[{i}].queryParams")
                   or _enum(match.get("method"), _METHODS, f"matches[{i}].method"))
        if problem:
            return problem
        value = path.get("value")
        if path.get("type", "PathPrefix") in ("Exact", "PathPrefix") and value is not None \
                and not str(value).startswith("/"):
            return c.UNSUPPORTED_VALUE, f"matches[{i}].path.value {value!r} must start with /"
    return _filters(rule, _HTTP_FILTERS)


def _grpc_rule(rule: Mapping[str, Any]) -> tuple[str, str] | None:
    for i, match in enumerate(as_list(rule.get("matches"))):
        match = as_map(match)
        method = as_map(match.get("method"))
        kind = method.get("type") or "Exact"
        problem = (_enum(method.get("type"), _VALUE_MATCH_TYPES, f"matches[{i}].method.type")
                   or _regex(kind, method.get("service"), f"matches[{i}].method.service")
                   or _regex(kind, method.get("method"), f"matches[{i}].method.method")
                   or _values(match.get("headers"), f"matches[{i}].headers"))
        if problem:
            return problem
    return _filters(rule, _GRPC_FILTERS)


def refused_rules(backends: list[BackendResolution]) -> dict[int, str]:
    """Rule index -> why, for rules whose ExternalAuth filter calls a backendRef that does
    not resolve. Such a rule is invalid but not dropped: the filter cannot be skipped, so
    the requests it matches are refused (403 or 5xx; conformance
    HTTPRouteExternalAuthPartiallyInvalid), and a route made only of such rules stays
    Accepted (HTTPRouteExternalAuthBackendRefNotFound)."""
    return {b.ref.rule: b.message for b in backends
            if b.ref.external_auth and b.reason not in (None, c.PENDING)}


def partially_invalid(conditions: dict[str, c.Cond], route: Route,
                      dropped: Mapping[int, object], refused: dict[int, str]) -> None:
    """RouteConditionPartiallyInvalid for rules refused by an unresolved ExternalAuth
    backendRef, when the route also has valid rules ("a combination of both valid and
    invalid rules")."""
    refused = {i: why for i, why in refused.items() if i not in dropped}
    accepted = conditions[c.ACCEPTED]
    if not refused or not accepted.ok or len(refused) + len(dropped) >= len(route.rules):
        return
    message = "; ".join(f"rule {i} refuses its requests: {why}"
                        for i, why in sorted(refused.items()))
    earlier = conditions.get(c.PARTIALLY_INVALID)
    conditions[c.PARTIALLY_INVALID] = c.true(
        c.UNSUPPORTED_VALUE, f"{earlier.message}; {message}" if earlier else message)
