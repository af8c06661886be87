"""Finding signatures: the same mistake, recognised in any cluster.

A signature is a finding's code plus the *shape* of the objects involved, with everything
that names one cluster's objects abstracted away, and a short stable hash of that text
(``Finding.signature``). Two clusters that make the same mistake get the same signature;
different mistakes get different ones. The knowledge base keys occurrences and learned
fixes by it, and ``explain_finding`` takes it back.

Normalisation, applied to the finding alone (a pure function: no graph, no I/O):

- the code, then ``/severity`` where the finding's severity differs from the code's default
  (NS0105 is critical when a named port resolves nowhere, a warning when only somewhere);
- the finding's resource kind, with the shapes of its own evidence:
  ``Service(spec.selector={2 labels: app,version})``; evidence on other objects follows as
  ``::Kind(...)``, sorted, so the order analyzers list evidence in does not matter;
- field paths keep their field names; list indexes and keyed steps become ``[*]``;
- values become shapes: numbers ``<number>``, IPs ``<ip>``, CIDRs ``<cidr>``, host names
  ``<host>`` (``<wildcard host>``), references ``<ref>``, other strings ``<name>``; enum-like
  tokens the API defines (``TCP``, ``Deny``, ``STRICT``: an upper-case first letter) and
  booleans are kept, since they are the mistake rather than a name;
- a map of strings (labels, selectors) becomes its size and sorted keys, each key kept when
  it is a well-known one (``app``, ``version``, ``app.kubernetes.io/name``, ...) and
  ``<key>`` otherwise; other maps keep their field-name keys and recurse (three levels);
- lists become the set of their items' shapes, without their length.

The hash is the first 12 hex digits of the text's SHA-256: compact answers carry it on every
finding, and 48 bits keep a collision unlikely below millions of patterns.

Failed probes are classified (:func:`classify_probe`) into a :class:`FailureCategory` and
signed the same way (:func:`probe_signature`), from the probe's outcome and what the graph
says about its target: ``PROBE::NO_ENDPOINTS::tcp->Service:<number>``.
"""

from __future__ import annotations

import hashlib
import ipaddress
import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from netsight.analyzers.core.contracts import Evidence, Finding, ResourceRef

HASH_LENGTH = 12
SIGNATURE_FORM = re.compile(rf"^[0-9a-f]{{{HASH_LENGTH}}}$")
_MAX_DEPTH = 3
_INDEX = re.compile(r"\[[^\]]*\]")
_ENUM = re.compile(r"^[A-Z][A-Za-z0-9_]{0,39}$")
_NUMBER = re.compile(r"^-?\d+(\.\d+)?$")
_FIELD_NAME = re.compile(r"^[a-z][A-Za-z0-9]{0,63}$")
_HOST = re.compile(r"^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+\.?$")
# Label keys that mean the same in every cluster; any other key is a name of its own.
_KNOWN_KEYS = frozenset({
    "app", "version", "tier", "component", "role", "name", "env", "environment", "release",
    "k8s-app", "run", "track", "stage", "pod-template-hash", "controller-revision-hash",
    "istio", "istio-injection", "sidecar.istio.io/inject",
})
_KNOWN_PREFIXES = ("app.kubernetes.io/", "kubernetes.io/", "k8s.io/", "istio.io/",
                   "statefulset.kubernetes.io/", "apps.kubernetes.io/", "topology.kubernetes.io/",
                   "service.istio.io/", "networking.istio.io/", "security.istio.io/")


@dataclass(frozen=True, slots=True)
class Signature:
    pattern: str  # the normalised text, readable: NS0101::Service(spec.selector={...})
    hash: str  # its stable short hash, as findings carry it

    @classmethod
    def of(cls, pattern: str) -> Signature:
        return cls(pattern, hash_of(pattern))


def hash_of(pattern: str) -> str:
    return hashlib.sha256(pattern.encode()).hexdigest()[:HASH_LENGTH]


def signature_of(finding: Finding) -> Signature:
    """The signature of ``finding`` (built with its detail: evidence is what it reads)."""
    return Signature.of(finding_pattern(finding.code, finding.severity.value, finding.resource,
                                        finding.evidence or ()))


def finding_pattern(code: str, severity: str, resource: ResourceRef | None,
                    evidence: tuple[Evidence, ...] | list[Evidence], *,
                    default_severity: str | None = None) -> str:
    from netsight.analyzers.core.codes import CODES  # codes builds findings with this module

    known = CODES.get(code)
    default = default_severity or (known.severity.value if known is not None else severity)
    head = code if severity == default else f"{code}/{severity}"
    own: list[str] = []
    others: dict[str, set[str]] = {}
    for item in evidence:
        shape = f"{field_path(item.field_path)}={value_shape(item.value)}"
        if resource is not None and _same(item.resource, resource):
            own.append(shape)
        else:
            others.setdefault(item.resource.kind, set()).add(shape)
    subject = resource.kind if resource is not None else "-"
    parts = [head, f"{subject}({', '.join(sorted(set(own)))})"]
    parts += [f"{kind}({', '.join(sorted(shapes))})" for kind, shapes in sorted(others.items())]
    return "::".join(parts)


def _same(a: ResourceRef, b: ResourceRef) -> bool:
    return (a.kind, a.namespace, a.name) == (b.kind, b.namespace, b.name)


def field_path(path: str) -> str:
    """``spec.ports[2].targetPort`` -> ``spec.ports[*].targetPort``."""
    return _INDEX.sub("[*]", path)


def label_key(key: str) -> str:
    """A label key as signatures keep it: well-known keys as they are, others ``<key>``."""
    if key in _KNOWN_KEYS or key.startswith(_KNOWN_PREFIXES):
        return key
    prefix, slash, _ = key.partition("/")
    if slash and prefix.endswith((".istio.io", ".k8s.io", ".kubernetes.io")):
        return key
    return "<key>"


def value_shape(value: Any, depth: int = 0) -> str:
    """The shape of an evidence value; never one of its names or addresses."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return "<number>"
    if isinstance(value, str):
        return string_shape(value)
    if depth >= _MAX_DEPTH:
        return "<...>"
    if isinstance(value, Mapping):
        if all(isinstance(v, str) for v in value.values()):
            keys = ",".join(sorted({label_key(str(k)) for k in value}))
            count = len(value)
            return f"{{{count} label{'s' * (count != 1)}: {keys}}}" if count else "{}"
        items = sorted(f"{k if _FIELD_NAME.match(str(k)) else '<key>'}: "
                       f"{value_shape(v, depth + 1)}" for k, v in value.items())
        return "{" + ", ".join(dict.fromkeys(items)) + "}"
    if isinstance(value, list | tuple | set | frozenset):
        shapes = sorted({value_shape(v, depth + 1) for v in value})
        return "[" + "|".join(shapes) + "]"
    return f"<{type(value).__name__}>"


def string_shape(text: str) -> str:
    if not text:
        return "<empty>"
    if _ENUM.match(text):
        return text
    if _NUMBER.match(text):
        return "<number>"
    try:
        ipaddress.ip_address(text)
    except ValueError:
        pass
    else:
        return "<ip>"
    if "/" in text:
        try:
            ipaddress.ip_network(text, strict=False)
        except ValueError:
            return "<ref>"
        return "<cidr>"
    if text == "*":
        return "*"
    if _HOST.match(text.lower()):
        return "<wildcard host>" if text.startswith("*.") else "<host>"
    return "<name>"


# --- failed probes -------------------------------------------------------------------------

class FailureCategory(StrEnum):
    """Why a probe failed, as the knowledge base files it."""

    NO_ENDPOINTS = "NO_ENDPOINTS"  # the target Service has no ready endpoint
    POLICY_DENIED = "POLICY_DENIED"  # netsight's policy verdict denies the connection
    CONNECTION_REFUSED = "CONNECTION_REFUSED"
    TIMEOUT = "TIMEOUT"
    UNREACHABLE = "UNREACHABLE"
    DNS_FAILURE = "DNS_FAILURE"
    TLS_FAILURE = "TLS_FAILURE"
    CONNECTION_RESET = "CONNECTION_RESET"  # opened, then reset: often a mesh refusing plaintext
    HTTP_CLIENT_ERROR = "HTTP_CLIENT_ERROR"  # 4xx
    HTTP_SERVER_ERROR = "HTTP_SERVER_ERROR"  # 5xx
    PROBE_ERROR = "PROBE_ERROR"  # the probe itself could not run
    UNKNOWN = "UNKNOWN"


# ProbeResult outcomes (netsight/probes/message.py) by their wire values: analyzers do not
# import the probes package, its sibling layer.
_BY_OUTCOME = {
    "refused": FailureCategory.CONNECTION_REFUSED,
    "timeout": FailureCategory.TIMEOUT,
    "unreachable": FailureCategory.UNREACHABLE,
    "dns_failed": FailureCategory.DNS_FAILURE,
    "tls_failed": FailureCategory.TLS_FAILURE,
    "reset": FailureCategory.CONNECTION_RESET,
    "error": FailureCategory.PROBE_ERROR,
}
# Outcomes a missing endpoint or a dropping policy explains: nothing answers, or the
# packets are dropped (NetworkPolicy) or rejected (some CNIs, Istio).
_NOT_CONNECTED = frozenset({"refused", "timeout", "unreachable", "reset"})
_ANSWERED = frozenset({"connected", "resolved", "responded"})


@dataclass(frozen=True, slots=True)
class ProbeFailure:
    """A probe's answer and what the graph says about its target, as classification
    reads them. ``outcome`` is the ProbeResult's outcome value; ``policy_denied`` and
    ``ready_endpoints`` are None where netsight could not decide."""

    probe: str  # "tcp", "http" or "dns"
    outcome: str
    http_status: int | None = None
    target_kind: str | None = None  # "Service", "Pod", or None for a bare address or name
    port_named: bool = False  # the probe's port is a named one (a Service port name)
    policy_denied: bool | None = None
    ready_endpoints: int | None = None


def classify_probe(failure: ProbeFailure) -> FailureCategory | None:
    """The category of a failed probe; None when it did not fail (an answer, or an HTTP
    status below 400). The graph's explanation wins over the bare outcome: a refusal to a
    Service without ready endpoints is NO_ENDPOINTS, a timeout a policy denies is
    POLICY_DENIED."""
    outcome = failure.outcome
    if outcome in _ANSWERED:
        if outcome == "responded" and failure.http_status is not None:
            if failure.http_status >= 500:
                return FailureCategory.HTTP_SERVER_ERROR
            if failure.http_status >= 400:
                return FailureCategory.HTTP_CLIENT_ERROR
        return None
    if outcome in _NOT_CONNECTED:
        if failure.target_kind == "Service" and failure.ready_endpoints == 0:
            return FailureCategory.NO_ENDPOINTS
        if failure.policy_denied:
            return FailureCategory.POLICY_DENIED
    return _BY_OUTCOME.get(outcome, FailureCategory.UNKNOWN)


def probe_signature(failure: ProbeFailure) -> Signature | None:
    """``PROBE::<category>::<probe>-><target>``; None for a probe that did not fail."""
    category = classify_probe(failure)
    if category is None:
        return None
    target = failure.target_kind or ("<name>" if failure.probe == "dns" else "<address>")
    port = "" if failure.probe == "dns" else (":<port name>" if failure.port_named
                                             else ":<number>")
    status = f"::{failure.http_status // 100}xx" if failure.http_status and \
        category in (FailureCategory.HTTP_CLIENT_ERROR, FailureCategory.HTTP_SERVER_ERROR) else ""
    return Signature.of(f"PROBE::{category.value}::{failure.probe}->{target}{port}{status}")
