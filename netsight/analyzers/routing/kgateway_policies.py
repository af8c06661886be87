"""kgateway's policies where they change what a request gets: TrafficPolicy timeouts,
retries and rewrites on the routes of a kgateway Gateway.

A TrafficPolicy (gateway.kgateway.dev/v1alpha1; kgateway-dev/kgateway
api/v1alpha1/kgateway/traffic_policy_types.go) attaches through ``targetRefs`` (Gateway,
optionally one listener by ``sectionName``; HTTPRoute or GRPCRoute, optionally one rule by
``sectionName``), ``targetSelectors`` (routes or Gateways by labels), or an HTTPRoute rule's
``ExtensionRef`` filter. The most specific attachment wins field by field (rule filter, rule,
route, listener, Gateway), the oldest policy first among equals, and an HTTPRoute rule's own
``timeouts`` and ``retry`` win over any TrafficPolicy (upstream translator test "TrafficPolicy
timeout and retry": route-builtin-policies keeps its built-in timeouts).

Everything else a TrafficPolicy holds (authentication, rate limits, CORS, transformations,
...) decides whether a request is admitted or how it is changed, not which backend takes it:
reported as not evaluated. HTTPListenerPolicy (the listener's HTTP connection settings) and
GatewayParameters (the proxy Deployment) are reported the same way.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from netsight.analyzers.routing.backend_kinds import KGATEWAY_GROUP
from netsight.analyzers.routing.gateway_objects import (
    GATEWAY,
    GATEWAY_CLASS,
    GATEWAY_GROUP,
    Route,
    as_list,
    as_map,
    opt_str,
    spec_of,
)
from netsight.analyzers.routing.gateways import GatewayState
from netsight.graph.model.kinds import api_group, make_key
from netsight.graph.model.records import Record
from netsight.graph.store.live import GraphView

TRAFFIC_POLICY = "TrafficPolicy"
HTTP_LISTENER_POLICY = "HTTPListenerPolicy"
GATEWAY_PARAMETERS = "GatewayParameters"
KGATEWAY_POLICY_KINDS = (TRAFFIC_POLICY, HTTP_LISTENER_POLICY, GATEWAY_PARAMETERS)

# The fields evaluated: each changes what a request forwarded by a rule gets.
EVALUATED = ("timeouts", "retry", "urlRewrite", "autoHostRewrite")
_IGNORED = frozenset({"targetRefs", "targetSelectors", *EVALUATED})

# Attachment levels, most specific first.
RULE_FILTER, RULE, ROUTE, LISTENER, GATEWAY_LEVEL = range(5)
_LEVEL_NAMES = ("rule ExtensionRef", "rule", "route", "listener", "Gateway")


@dataclass(frozen=True, slots=True)
class Applied:
    """One TrafficPolicy attached to a route, or to a Gateway (listener) it is on."""

    policy: Record
    level: int
    rule: int | str | None = None  # RULE_FILTER: the rule index; RULE: the rule name
    gateway: str | None = None  # LISTENER, GATEWAY_LEVEL: "namespace/name"
    listener: str | None = None  # LISTENER: the listener name

    @property
    def ref(self) -> str:
        return f"TrafficPolicy {self.policy.namespace}/{self.policy.name}"

    @property
    def where(self) -> str:
        if self.level == LISTENER:
            return f"on Gateway {self.gateway} listener {self.listener}"
        if self.level == GATEWAY_LEVEL:
            return f"on Gateway {self.gateway}"
        if self.level == RULE:
            return f"on rule {self.rule}"
        if self.level == RULE_FILTER:
            return f"ExtensionRef of rule {self.rule}"
        return "on the route"


def _policies(view: GraphView, kind: str, namespace: str) -> list[Record]:
    found = [r for r in view.for_each(kind, namespace)
             if api_group(r.api_version) == KGATEWAY_GROUP]
    return sorted(found, key=lambda r: (r.created or "9999", r.name))


def _targets(policy: Record, group: str, kind: str, name: str,
             labels: Mapping[str, str]) -> Iterator[str | None]:
    """The sectionName (None: the whole object) of each targetRef or targetSelector of
    ``policy`` that takes this object."""
    spec = spec_of(policy)
    for raw in as_list(spec.get("targetRefs")):
        ref = as_map(raw)
        if str(ref.get("group") or "") == group and ref.get("kind") == kind \
                and ref.get("name") == name:
            yield opt_str(ref.get("sectionName"))
    for raw in as_list(spec.get("targetSelectors")):
        selector = as_map(raw)
        wanted = {str(k): str(v) for k, v in as_map(selector.get("matchLabels")).items()}
        if str(selector.get("group") or "") == group and selector.get("kind") == kind \
                and all(labels.get(k) == v for k, v in wanted.items()):
            yield opt_str(selector.get("sectionName"))


def attached(view: GraphView, route: Route, gateways: list[GatewayState]) -> list[Applied]:
    """The TrafficPolicies that reach the route: on it, its rules, and the kgateway Gateways
    it is on (their listeners)."""
    record = route.record
    found: list[Applied] = []
    for policy in _policies(view, TRAFFIC_POLICY, record.namespace):
        for section in _targets(policy, GATEWAY_GROUP, route.kind, record.name,
                                record.labels):
            found.append(Applied(policy, RULE if section else ROUTE, rule=section))
    for i, rule in enumerate(route.rules):
        for flt in as_list(rule.get("filters")):
            ext = as_map(as_map(flt).get("extensionRef"))
            if as_map(flt).get("type") == "ExtensionRef" and \
                    ext.get("group") == KGATEWAY_GROUP and ext.get("kind") == TRAFFIC_POLICY:
                named = view.get(make_key(TRAFFIC_POLICY, record.namespace,
                                          str(ext.get("name"))))
                if named is not None and api_group(named.api_version) == KGATEWAY_GROUP:
                    found.append(Applied(named, RULE_FILTER, rule=i))
    for gateway in gateways:
        g = gateway.record
        for policy in _policies(view, TRAFFIC_POLICY, g.namespace):
            for section in _targets(policy, GATEWAY_GROUP, GATEWAY, g.name, g.labels):
                found.append(Applied(policy, LISTENER if section else GATEWAY_LEVEL,
                                     gateway=gateway.ref, listener=section))
    return found


def _applies(applied: Applied, rule: int, rule_name: str | None, gateway: str | None,
             listener: str | None) -> bool:
    if applied.level == RULE_FILTER:
        return applied.rule == rule
    if applied.level == RULE:
        return applied.rule is not None and applied.rule == rule_name
    if applied.level == ROUTE:
        return True
    if applied.gateway != gateway:
        return False
    return applied.level == GATEWAY_LEVEL or applied.listener == listener


def effective(route: Route, rule: int, policies: list[Applied], gateway: str | None = None,
              listener: str | None = None) -> list[str]:
    """The evaluated settings the rule's requests get on ``listener`` of ``gateway`` (None:
    whatever the Gateway), each with where it comes from."""
    spec = route.rules[rule]
    name = opt_str(spec.get("name"))
    reaching = sorted((a for a in policies if _applies(a, rule, name, gateway, listener)),
                      key=lambda a: a.level)
    settings: list[str] = []
    for field in EVALUATED:
        builtin = spec.get(field) if field in ("timeouts", "retry") else None
        winner = next((a for a in reaching if field in spec_of(a.policy)), None)
        if isinstance(builtin, dict) and builtin:
            overrides = f"; overrides {winner.ref}" if winner is not None else ""
            settings.append(f"{field} {_describe(field, builtin)} (the {route.kind} rule"
                            f"{overrides})")
        elif winner is not None:
            settings.append(f"{field} {_describe(field, spec_of(winner.policy)[field])} "
                            f"({winner.ref} {winner.where})")
    return settings


def _describe(field: str, value: Any) -> str:
    if field == "retry":
        config = as_map(value)
        on = [str(x) for x in [*as_list(config.get("retryOn")),
                               *as_list(config.get("statusCodes")),
                               *as_list(config.get("codes"))]]
        parts = [f"attempts={config.get('attempts', 1)}"]
        if on:
            parts.append("on " + ",".join(on))
        for key in ("perTryTimeout", "backoffBaseInterval", "backoff"):
            if key in config:
                parts.append(f"{key}={config[key]}")
        return " ".join(parts)
    if field == "urlRewrite":
        config = as_map(value)
        parts = []
        for key in ("pathRegex", "path"):  # pathRegex since v2.1; path in earlier versions
            path = as_map(config.get(key))
            if path:
                parts.append(f"path {path.get('pattern')} -> {path.get('substitution')}")
        if "hostname" in config:
            parts.append(f"hostname {config['hostname']}")
        return ", ".join(parts) or "(empty)"
    if isinstance(value, dict):
        return " ".join(f"{k}={v}" for k, v in value.items())
    return str(value)


def not_evaluated(route: Route, policies: list[Applied]) -> list[str]:
    """What the attached TrafficPolicies hold beyond routing, named as not evaluated."""
    notes = []
    for applied in {a.policy.key: a for a in policies}.values():
        rest = sorted(k for k in spec_of(applied.policy) if k not in _IGNORED)
        if rest:
            notes.append(f"{route.ref}: {applied.ref} {applied.where}: {', '.join(rest)} not "
                         "evaluated (they decide whether a request is admitted or how it is "
                         "changed, not which backend takes it)")
    return notes


def gateway_notes(view: GraphView, gateway: GatewayState) -> list[str]:
    """HTTPListenerPolicies and GatewayParameters of a kgateway Gateway: not evaluated."""
    g = gateway.record
    notes = [f"gateway {gateway.ref}: HTTPListenerPolicy {p.namespace}/{p.name} not "
             "evaluated (it sets the listeners' HTTP connection handling, not which route or "
             "backend a request reaches)"
             for p in _policies(view, HTTP_LISTENER_POLICY, g.namespace)
             if any(True for _ in _targets(p, GATEWAY_GROUP, GATEWAY, g.name, g.labels))]
    # The Gateway's own parametersRef (local), else its GatewayClass's (namespaced).
    refs = [(as_map(as_map(spec_of(g).get("infrastructure")).get("parametersRef")),
             g.namespace)]
    if gateway.class_name:
        gateway_class = view.get(make_key(GATEWAY_CLASS, "", gateway.class_name))
        if gateway_class is not None:
            ref = as_map(spec_of(gateway_class).get("parametersRef"))
            refs.append((ref, opt_str(ref.get("namespace")) or ""))
    for ref, namespace in refs:
        if ref.get("group") == KGATEWAY_GROUP and ref.get("kind") == GATEWAY_PARAMETERS:
            name = str(ref.get("name"))
            known = view.get(make_key(GATEWAY_PARAMETERS, namespace, name)) is not None
            notes.append(f"gateway {gateway.ref}: GatewayParameters {namespace}/{name} "
                         f"{'' if known else '(not found) '}not evaluated (it shapes the "
                         "proxy Deployment and Service, not routing)")
            break
    return notes
