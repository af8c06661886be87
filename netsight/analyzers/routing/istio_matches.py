"""Whether an Istio HTTPMatchRequest fits one request (pilot/pkg/networking/core/route).

Within a VirtualService's http rules, the first whose match fits takes the request (match
entries are ORed, fields of one entry ANDed). ``sourceLabels``, ``sourceNamespace`` and
``gateways`` of an entry select the proxy; ``uri``, ``method``, ``authority``, ``headers``,
``queryParams``, ``withoutHeaders`` and ``port`` the request. Regexes are RE2's (Envoy's
engine), matched whole. A fit that cannot be decided (``scheme``, a sidecar's
``sourceLabels`` or ``port`` the request does not give, a gateway's source fields) is the
reason why, not a guess.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from netsight.analyzers.core import deadline, regex
from netsight.analyzers.mesh.istio_objects import MESH_GATEWAY
from netsight.analyzers.routing.istio_rules import MESH, Rule, Source, Via, gateway_name
from netsight.analyzers.routing.requests import Request

# A fit: True, False, or the reason it cannot be decided.
Fit = bool | str


def string_fit(spec: Any, value: str | None, *, ignore_case: bool = False) -> Fit:
    """An Istio StringMatch (exact, prefix or regex; an empty one: the value is present)."""
    if not isinstance(spec, Mapping):
        return "a StringMatch that is not an object"
    if value is None:
        return False
    if "exact" in spec or "prefix" in spec:
        want = str(spec.get("exact", spec.get("prefix")))
        got = value.lower() if ignore_case else value
        want = want.lower() if ignore_case else want
        return got == want if "exact" in spec else got.startswith(want)
    if "regex" in spec:
        pattern = str(spec["regex"])
        fits = regex.fullmatcher(pattern)
        if isinstance(fits, str):
            return f"regex {pattern!r} is not valid RE2 ({fits}): the proxies refuse the route"
        return fits(value)
    return True  # {}: Istio makes it a presence match


def _all(fits: list[Fit]) -> Fit:
    if any(f is False for f in fits):
        return False
    reasons = [f for f in fits if isinstance(f, str)]
    return reasons[0] if reasons else True


def _map_fit(spec: Any, values: Mapping[str, str], *, lower: bool, invert: bool) -> Fit:
    if not isinstance(spec, Mapping):
        return True
    fits: list[Fit] = []
    for name, want in spec.items():
        fit = string_fit(want, values.get(str(name).lower() if lower else str(name)))
        fits.append(fit if isinstance(fit, str) or not invert else not fit)
    return _all(fits)


def match_fit(match: Mapping[str, Any], request: Request, *, authority: str, via: Via,
              vs_namespace: str, port: int | None, source: Source | None) -> Fit:
    """Whether one HTTPMatchRequest fits the request on this proxy."""
    fits: list[Fit] = []
    gateways = match.get("gateways")
    if isinstance(gateways, list) and gateways:
        names = {MESH if g == MESH_GATEWAY else gateway_name(str(g), vs_namespace)
                 for g in gateways}
        fits.append((MESH if via.gateway is None else "/".join(via.gateway)) in names)
    labels = match.get("sourceLabels")
    if isinstance(labels, Mapping) and labels:
        if via.gateway is not None:
            fits.append("sourceLabels on a gateway select its pods, whose labels netsight "
                        "does not compare")
        elif source is None or source.labels is None:
            fits.append("the match has sourceLabels and the request gives no source_labels")
        else:
            fits.append(all(source.labels.get(k) == v for k, v in labels.items()))
    namespace = match.get("sourceNamespace")
    if isinstance(namespace, str) and namespace:
        if via.gateway is not None or source is None:
            fits.append("sourceNamespace on a gateway is its pods' namespace, which netsight "
                        "does not look up")
        else:
            fits.append(source.namespace == namespace)
    want_port = match.get("port")
    if isinstance(want_port, int) and want_port:
        fits.append(want_port == port if port is not None else
                    "the match has a port and the request gives none")
    if "uri" in match:
        fits.append(string_fit(match["uri"], request.path,
                               ignore_case=bool(match.get("ignoreUriCase"))))
    if "scheme" in match:
        fits.append("scheme matches are not evaluated (the request's scheme is not given)")
    if "method" in match:
        fits.append(string_fit(match["method"], request.method))
    if "authority" in match:
        fits.append(string_fit(match["authority"], authority))
    fits.append(_map_fit(match.get("headers"), request.lowered, lower=True, invert=False))
    fits.append(_map_fit(match.get("withoutHeaders"), request.lowered, lower=True,
                         invert=True))
    fits.append(_map_fit(match.get("queryParams"), request.query, lower=False, invert=False))
    return _all(fits)


def rule_fit(rule: Rule, request: Request, *, authority: str, via: Via, port: int | None,
             source: Source | None) -> tuple[Fit, int | None]:
    """(whether the rule takes the request, the match entry that fits)."""
    raw = rule.spec.get("match")
    matches = [m for m in raw if isinstance(m, Mapping)] if isinstance(raw, list) else []
    if not matches:
        return True, None
    reasons: list[str] = []
    for i, match in enumerate(matches):
        deadline.check()  # each entry may match megabytes of request with RE2
        fit = match_fit(match, request, authority=authority, via=via,
                        vs_namespace=rule.vs.record.namespace, port=port, source=source)
        if fit is True:
            # An earlier undecided entry may have fitted first; the rule fits either way.
            return True, i if not reasons else None
        if isinstance(fit, str):
            reasons.append(fit)
    return (reasons[0] if reasons else False), None
