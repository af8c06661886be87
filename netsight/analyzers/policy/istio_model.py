"""Istio's security.istio.io policies as matchers: AuthorizationPolicy and PeerAuthentication.

Built once per object version from its spec, never failing: a spec netsight cannot read
(a shape the API server's schema or Istio's validation would reject) becomes a model with
a ``problem``, and whatever it governs is left undecided rather than guessed.

Semantics follow the API reference (istio.io/docs/reference/config/security/
authorization-policy): "A match occurs when at least one source, one operation and all
conditions matches the request. An empty rule is always matched."; "Fields in the source
are ANDed together"; string fields support "Exact, Prefix, Suffix and Presence match".
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from netsight.analyzers.core import regex
from netsight.analyzers.core.contracts import ResourceRef
from netsight.analyzers.policy.spec_reading import digits
from netsight.graph.model.records import GenericRecord

GROUP = "security.istio.io"
AUTHZ_KIND = "AuthorizationPolicy"  # the kind id of security.istio.io's; Linkerd's is suffixed
PEER_AUTHN_KIND = "PeerAuthentication"
DRY_RUN = "istio.io/dry-run"

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


class Action(StrEnum):
    ALLOW = "ALLOW"
    DENY = "DENY"
    AUDIT = "AUDIT"
    CUSTOM = "CUSTOM"


class Attribute(StrEnum):
    """What a rule field or condition compares, named as Istio's attributes are."""

    PRINCIPAL = "source.principal"
    NAMESPACE = "source.namespace"
    SOURCE_IP = "source.ip"
    REMOTE_IP = "remote.ip"
    REQUEST_PRINCIPAL = "request.auth.principal"
    PORT = "destination.port"
    HOST = "request.host"
    METHOD = "request.method"
    PATH = "request.path"
    OTHER = "other"  # a condition netsight does not evaluate (JWT claims, headers, SNI, ...)


# Rule fields: (YAML name, attribute, negative)
SOURCE_FIELDS: tuple[tuple[str, Attribute, bool], ...] = (
    ("principals", Attribute.PRINCIPAL, False), ("notPrincipals", Attribute.PRINCIPAL, True),
    ("requestPrincipals", Attribute.REQUEST_PRINCIPAL, False),
    ("notRequestPrincipals", Attribute.REQUEST_PRINCIPAL, True),
    ("namespaces", Attribute.NAMESPACE, False), ("notNamespaces", Attribute.NAMESPACE, True),
    ("ipBlocks", Attribute.SOURCE_IP, False), ("notIpBlocks", Attribute.SOURCE_IP, True),
    ("remoteIpBlocks", Attribute.REMOTE_IP, False),
    ("notRemoteIpBlocks", Attribute.REMOTE_IP, True),
)
OPERATION_FIELDS: tuple[tuple[str, Attribute, bool], ...] = (
    ("hosts", Attribute.HOST, False), ("notHosts", Attribute.HOST, True),
    ("ports", Attribute.PORT, False), ("notPorts", Attribute.PORT, True),
    ("methods", Attribute.METHOD, False), ("notMethods", Attribute.METHOD, True),
    ("paths", Attribute.PATH, False), ("notPaths", Attribute.PATH, True),
)
# Attributes only an HTTP-aware proxy sees (ztunnel does not).
L7 = frozenset({Attribute.HOST, Attribute.METHOD, Attribute.PATH, Attribute.REQUEST_PRINCIPAL,
                Attribute.REMOTE_IP, Attribute.OTHER})
# Condition keys (istio.io/docs/reference/config/security/conditions); [..] ones by prefix.
_CONDITION_KEYS = {"source.ip": Attribute.SOURCE_IP, "remote.ip": Attribute.REMOTE_IP,
                   "source.namespace": Attribute.NAMESPACE,
                   "source.principal": Attribute.PRINCIPAL,
                   "request.auth.principal": Attribute.REQUEST_PRINCIPAL,
                   "destination.port": Attribute.PORT,
                   "request.auth.audiences": Attribute.OTHER,
                   "request.auth.presenter": Attribute.OTHER,
                   "destination.ip": Attribute.OTHER, "connection.sni": Attribute.OTHER}
_CONDITION_PREFIXES = ("request.headers[", "request.auth.claims[",
                       "experimental.envoy.filters.")


@dataclass(frozen=True, slots=True)
class Clause:
    """One rule field (``principals: [...]``) or condition: its values against one attribute."""

    path: str  # e.g. spec.rules[0].from[1].source.principals
    attribute: Attribute
    values: tuple[str, ...]
    negative: bool
    networks: tuple[Network, ...] = ()  # parsed, for IP attributes
    key: str = ""  # a condition's key


@dataclass(frozen=True, slots=True)
class Rule:
    index: int
    sources: tuple[tuple[Clause, ...], ...] | None  # None: no ``from`` (any source)
    operations: tuple[tuple[Clause, ...], ...] | None
    conditions: tuple[Clause, ...]

    @property
    def clauses(self) -> tuple[Clause, ...]:
        return (*(c for s in self.sources or () for c in s),
                *(c for o in self.operations or () for c in o), *self.conditions)


@dataclass(frozen=True, slots=True)
class TargetRef:
    group: str
    kind: str
    name: str


@dataclass(frozen=True, slots=True)
class AuthzPolicy:
    record: GenericRecord
    action: Action = Action.ALLOW
    selector: Mapping[str, str] | None = None  # matchLabels; None: every workload in scope
    target_refs: tuple[TargetRef, ...] = ()
    rules: tuple[Rule, ...] = ()
    provider: str | None = None
    dry_run: bool = False
    problem: str | None = None  # "field: what is wrong"

    ref: ResourceRef = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:  # built once: verdicts cite it for every flow
        object.__setattr__(self, "ref", ResourceRef(
            kind=AUTHZ_KIND, namespace=self.record.namespace, name=self.record.name,
            api_version=self.record.api_version))

    @property
    def name(self) -> str:
        return f"{self.record.namespace}/{self.record.name}"

    @property
    def layer7(self) -> bool:
        """Whether any rule reads what only an HTTP proxy sees."""
        return any(c.attribute in L7 for r in self.rules for c in r.clauses)


class Mode(StrEnum):
    UNSET = "UNSET"
    DISABLE = "DISABLE"
    PERMISSIVE = "PERMISSIVE"
    STRICT = "STRICT"


@dataclass(frozen=True, slots=True)
class PeerAuthn:
    record: GenericRecord
    selector: Mapping[str, str] | None = None
    mode: Mode = Mode.UNSET
    port_modes: Mapping[int, Mode] | None = None
    problem: str | None = None

    ref: ResourceRef = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "ref", ResourceRef(
            kind=PEER_AUTHN_KIND, namespace=self.record.namespace, name=self.record.name,
            api_version=self.record.api_version))

    @property
    def name(self) -> str:
        return f"{self.record.namespace}/{self.record.name}"


class Invalid(Exception):
    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}")


# --- building ------------------------------------------------------------------------------


def _map(raw: Any, path: str) -> Mapping[str, Any]:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise Invalid(path, "must be an object")
    return raw


def _list(raw: Any, path: str) -> tuple[Any, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list | tuple):
        raise Invalid(path, "must be a list")
    return tuple(raw)


def _strings(raw: Any, path: str) -> tuple[str, ...]:
    values = _list(raw, path)
    for i, value in enumerate(values):
        if not isinstance(value, str) or not value:
            raise Invalid(f"{path}[{i}]", "must be a non-empty string")
    return values


def _selector(raw: Any, path: str) -> Mapping[str, str] | None:
    if raw is None:
        return None
    labels = _map(_map(raw, path).get("matchLabels"), f"{path}.matchLabels")
    for key, value in labels.items():
        if not isinstance(value, str):
            raise Invalid(f"{path}.matchLabels.{key}", "must be a string")
    return dict(labels)


def _networks(values: tuple[str, ...], path: str) -> tuple[Network, ...]:
    found = []
    for i, value in enumerate(values):
        try:
            found.append(ipaddress.ip_network(value, strict=False))
        except ValueError:
            raise Invalid(f"{path}[{i}]", f"{value!r} is not an IP address or CIDR") from None
    return tuple(found)


def _clause(path: str, attribute: Attribute, values: tuple[str, ...], negative: bool,
            key: str = "") -> Clause:
    networks: tuple[Network, ...] = ()
    if attribute in (Attribute.SOURCE_IP, Attribute.REMOTE_IP):
        networks = _networks(values, path)
    elif attribute is Attribute.PORT:
        for i, value in enumerate(values):
            number = digits(value)
            if number is None or not 0 < number <= 65535:
                raise Invalid(f"{path}[{i}]", f"{value!r} is not a port number")
    return Clause(path, attribute, values, negative, networks, key)


def _fields(raw: Mapping[str, Any], fields: tuple[tuple[str, Attribute, bool], ...],
            path: str) -> tuple[Clause, ...]:
    known = {name for name, _, _ in fields}
    for name in raw:
        if name not in known:
            raise Invalid(f"{path}.{name}", "unknown field")
    clauses = tuple(_clause(f"{path}.{name}", attribute, values, negative)
                    for name, attribute, negative in fields
                    if (values := _strings(raw.get(name), f"{path}.{name}")))
    if not clauses:
        raise Invalid(path, "must set at least one field")  # as Istio's validation says
    return clauses


def _condition(raw: Any, path: str) -> Clause:
    entry = _map(raw, path)
    key = entry.get("key")
    if not isinstance(key, str) or not key:
        raise Invalid(f"{path}.key", "must be set")
    attribute = _CONDITION_KEYS.get(key)
    if attribute is None:
        if not key.startswith(_CONDITION_PREFIXES):
            raise Invalid(f"{path}.key", f"{key!r} is not a supported attribute")
        attribute = Attribute.OTHER
    values = _strings(entry.get("values"), f"{path}.values")
    not_values = _strings(entry.get("notValues"), f"{path}.notValues")
    if not values and not not_values:
        raise Invalid(path, "at least one of values or notValues must be set")
    # With both, the condition holds when a value matches and no notValue does: this is
    # the positive clause, _rule adds the negative one.
    return _clause(f"{path}.values" if values else f"{path}.notValues", attribute,
                   values or not_values, not values, key)


def _rule(raw: Any, index: int) -> Rule:
    path = f"spec.rules[{index}]"
    entry = _map(raw, path)
    sources = None
    if entry.get("from") is not None:
        sources = tuple(
            _fields(_map(_map(f, f"{path}.from[{i}]").get("source"),
                         f"{path}.from[{i}].source"), SOURCE_FIELDS, f"{path}.from[{i}].source")
            for i, f in enumerate(_list(entry.get("from"), f"{path}.from")))
    operations = None
    if entry.get("to") is not None:
        operations = tuple(
            _fields(_map(_map(t, f"{path}.to[{i}]").get("operation"),
                         f"{path}.to[{i}].operation"), OPERATION_FIELDS,
                    f"{path}.to[{i}].operation")
            for i, t in enumerate(_list(entry.get("to"), f"{path}.to")))
    conditions: list[Clause] = []
    for i, raw_condition in enumerate(_list(entry.get("when"), f"{path}.when")):
        conditions.append(_condition(raw_condition, f"{path}.when[{i}]"))
        both = _map(raw_condition, f"{path}.when[{i}]")
        if both.get("values") and both.get("notValues"):
            base = conditions[-1]
            conditions.append(_clause(f"{path}.when[{i}].notValues", base.attribute,
                                      _strings(both["notValues"], f"{path}.when[{i}].notValues"),
                                      True, base.key))
    return Rule(index, sources, operations, tuple(conditions))


def _target_refs(spec: Mapping[str, Any]) -> tuple[TargetRef, ...]:
    raw = [("spec.targetRef", spec["targetRef"])] if spec.get("targetRef") is not None else []
    raw += [(f"spec.targetRefs[{i}]", r)
            for i, r in enumerate(_list(spec.get("targetRefs"), "spec.targetRefs"))]
    found = []
    for path, ref in raw:
        entry = _map(ref, path)
        kind, name = entry.get("kind"), entry.get("name")
        if not isinstance(kind, str) or not isinstance(name, str) or not kind or not name:
            raise Invalid(path, "kind and name must be set")
        group = entry.get("group") or ""
        found.append(TargetRef(str(group), kind, name))
    return tuple(found)


def build_authz(record: GenericRecord) -> AuthzPolicy:
    dry_run = record.annotations.get(DRY_RUN, "").lower() == "true"
    try:
        spec = _map(record.spec, "spec")
        action_raw = spec.get("action") or "ALLOW"
        try:
            action = Action(action_raw)
        except ValueError:
            raise Invalid("spec.action", f"{action_raw!r} is not ALLOW, DENY, AUDIT or "
                          "CUSTOM") from None
        selector = _selector(spec.get("selector"), "spec.selector")
        refs = _target_refs(spec)
        if selector is not None and refs:
            raise Invalid("spec.selector", "at most one of selector and targetRefs can be set")
        provider_raw = _map(spec.get("provider"), "spec.provider").get("name")
        provider = provider_raw if isinstance(provider_raw, str) and provider_raw else None
        if (action is Action.CUSTOM) != (provider is not None):
            raise Invalid("spec.provider", "is required with action CUSTOM and only with it")
        rules = tuple(_rule(r, i) for i, r in enumerate(_list(spec.get("rules"), "spec.rules")))
    except Invalid as error:
        return AuthzPolicy(record, dry_run=dry_run, problem=str(error))
    return AuthzPolicy(record, action, selector, refs, rules, provider, dry_run)


def build_peer_authn(record: GenericRecord) -> PeerAuthn:
    try:
        spec = _map(record.spec, "spec")
        selector = _selector(spec.get("selector"), "spec.selector")
        mode = _mode(spec.get("mtls"), "spec.mtls")
        ports: dict[int, Mode] = {}
        for key, value in _map(spec.get("portLevelMtls"), "spec.portLevelMtls").items():
            path = f"spec.portLevelMtls.{key}"
            number = digits(str(key))
            if number is None or not 0 < number <= 65535:
                raise Invalid(path, "must be a port number")
            ports[number] = _mode(value, path)
        if ports and not selector:
            raise Invalid("spec.portLevelMtls", "requires a workload selector")
    except Invalid as error:
        return PeerAuthn(record, problem=str(error))
    return PeerAuthn(record, selector, mode, ports or None)


def _mode(raw: Any, path: str) -> Mode:
    value = _map(raw, path).get("mode") or "UNSET"
    try:
        return Mode(value)
    except ValueError:
        raise Invalid(f"{path}.mode", f"{value!r} is not UNSET, DISABLE, PERMISSIVE or "
                      "STRICT") from None


# --- matching strings ----------------------------------------------------------------------

_TEMPLATE = re.compile(r"\{\*\*?\}")


def string_matches(pattern: str, value: str, *, fold: bool = False) -> bool:
    """Exact, ``abc*`` prefix, ``*abc`` suffix, ``*`` presence (value not empty)."""
    if fold:
        pattern, value = pattern.lower(), value.lower()
    if pattern == "*":
        return value != ""
    if pattern.startswith("*"):
        return value.endswith(pattern[1:])
    if pattern.endswith("*"):
        return value.startswith(pattern[:-1])
    return value == pattern


def path_matches(pattern: str, path: str) -> bool:
    """As string_matches, plus path templates: ``{*}`` one segment, ``{**}`` any."""
    if not _TEMPLATE.search(pattern):
        return string_matches(pattern, path)
    # RE2, not re: a pattern of several {**} would backtrack polynomially in the path.
    parts = []
    for piece in re.split(r"(\{\*\*?\})", pattern):
        parts.append("[^/]+" if piece == "{*}" else ".+" if piece == "{**}"
                     else regex.escape(piece))
    fits = regex.fullmatcher("".join(parts))
    return not isinstance(fits, str) and fits(path)
