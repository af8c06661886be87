"""The findings attached policies give (NS0530-NS0549): BackendTLSPolicy conditions, and
targetRefs that name a listener the Gateway does not have.

Shared by ``gateway_get``, the route tools (a backend's TLS) and the ``gateway_api``
analyzer, so one problem reads the same wherever it is reported.
"""

from __future__ import annotations

from netsight.analyzers.core import codes
from netsight.analyzers.core.base import evidence, ref
from netsight.analyzers.core.contracts import Finding
from netsight.analyzers.routing import backend_tls as tls
from netsight.analyzers.routing import conditions as c
from netsight.analyzers.routing.gateway_objects import GATEWAY_GROUP, as_list, as_map, spec_of
from netsight.analyzers.routing.gateways import GatewayState
from netsight.analyzers.routing.policies import Attachment
from netsight.graph.model.records import Record
from netsight.graph.store.live import GraphView
from netsight.graph.store.policy_edges import target_key

BACKEND_TLS_CODES = (codes.BACKEND_TLS_POLICY_CONFLICTED, codes.BACKEND_TLS_POLICY_INVALID,
                     codes.BACKEND_TLS_POLICY_TARGET_NOT_FOUND,
                     codes.BACKEND_TLS_CA_CERTIFICATE_REF_INVALID,
                     codes.BACKEND_TLS_CA_CERTIFICATE_KIND_INVALID,
                     codes.BACKEND_TLS_NO_VALID_CA_CERTIFICATE)
# What gateway_get reports; analyze_config adds POLICY_TARGET_NOT_FOUND (a policy no
# Gateway's answer reaches).
CODES = (*BACKEND_TLS_CODES, codes.POLICY_TARGET_SECTION_NOT_FOUND)
# Targets whose absence a policy of a known provider kind cannot mean anything but a typo
# or an object yet to be created: the Gateway API's own kinds.
_GATEWAY_API_TARGETS = frozenset({"Gateway", "GatewayClass", "HTTPRoute", "GRPCRoute",
                                  "TLSRoute", "TCPRoute", "UDPRoute"})

_ACCEPTED = {
    tls.CONFLICTED: (codes.BACKEND_TLS_POLICY_CONFLICTED, "spec.targetRefs",
                     "Remove one of the policies, or give them different sectionNames (Service "
                     "port names)."),
    tls.INVALID: (codes.BACKEND_TLS_POLICY_INVALID, "spec.validation",
                  "Set validation.hostname and exactly one of caCertificateRefs or "
                  "wellKnownCACertificates: System."),
    tls.TARGET_NOT_FOUND: (codes.BACKEND_TLS_POLICY_TARGET_NOT_FOUND, "spec.targetRefs",
                           "Target an existing Service (sectionName: one of its port names)."),
    tls.NO_VALID_CA_CERTIFICATE: (codes.BACKEND_TLS_NO_VALID_CA_CERTIFICATE,
                                  "spec.validation.caCertificateRefs",
                                  "Reference an existing ConfigMap holding the CA bundle under "
                                  "the key ca.crt, in the policy's namespace."),
}
_REFS = {
    tls.INVALID_CA_CERTIFICATE_REF: (codes.BACKEND_TLS_CA_CERTIFICATE_REF_INVALID,
                                     "Create the ConfigMap (key ca.crt) in the policy's "
                                     "namespace, or fix the reference."),
    c.INVALID_KIND: (codes.BACKEND_TLS_CA_CERTIFICATE_KIND_INVALID,
                     "Reference a ConfigMap (group \"\", kind ConfigMap)."),
}


def backend_tls_findings(state: tls.BackendTLSState) -> list[Finding]:
    record = state.record
    name = f"BackendTLSPolicy {state.ref}"
    accepted = state.conditions[c.ACCEPTED]
    found: list[Finding] = []
    if accepted.status == c.FALSE and accepted.reason in _ACCEPTED:
        code, path, hint = _ACCEPTED[accepted.reason]
        found.append(code.finding(
            ref(record), f"{name} not accepted: {accepted.reason}", detail=accepted.message,
            suggestion=hint, evidence=[evidence(record, path, _value(state, path))]))
    if accepted.reason != tls.NO_VALID_CA_CERTIFICATE:
        # Every ref invalid is reported once, as NoValidCACertificate; a part of them each.
        for path, reason, message in state.ref_problems:
            code, hint = _REFS[reason]
            found.append(code.finding(
                ref(record), f"{name}: caCertificateRef {reason}", detail=message,
                suggestion=hint, evidence=[evidence(record, path, None)]))
    return found


def _value(state: tls.BackendTLSState, path: str) -> object:
    if path == "spec.targetRefs":
        return [t.describe(state.record.namespace) for t in state.targets]
    if path == "spec.validation.caCertificateRefs":
        return [f"{r.kind}/{r.name}" for r in state.ca_refs]
    return {"hostname": state.hostname, "wellKnownCACertificates": state.well_known,
            "caCertificateRefs": [f"{r.kind}/{r.name}" for r in state.ca_refs]}


def attachment_findings(gateway: GatewayState, attachments: list[Attachment]) -> list[Finding]:
    found = []
    for attachment in attachments:
        if attachment.scope == "Listener" and not attachment.listeners:
            names = ", ".join(ls.listener.name for ls in gateway.listeners) or "none"
            policy = attachment.policy
            found.append(codes.POLICY_TARGET_SECTION_NOT_FOUND.finding(
                ref(policy), f"{attachment.ref}: Gateway {gateway.ref} has no listener "
                f"{attachment.section_name}",
                detail=f"{attachment.path} names listener {attachment.section_name} of Gateway "
                f"{gateway.ref}, whose listeners are {names}: the policy applies nowhere "
                "there.",
                suggestion="Set sectionName to a listener name of the Gateway, or leave it out "
                "to target the whole Gateway.",
                evidence=[evidence(policy, f"{attachment.path}.sectionName",
                                   attachment.section_name)]))
    return found


def missing_target_findings(view: GraphView, policy: Record) -> list[Finding]:
    """A targetRef to a Gateway API object (Gateway, route, GatewayClass) that does not
    exist. BackendTLSPolicy reports its own (TargetNotFound)."""
    spec = spec_of(policy)
    refs = [(f"spec.targetRefs[{i}]", as_map(r))
            for i, r in enumerate(as_list(spec.get("targetRefs")))]
    if isinstance(spec.get("targetRef"), dict):
        refs.append(("spec.targetRef", as_map(spec.get("targetRef"))))
    found = []
    name = f"{policy.kind.partition('.')[0]} {policy.namespace}/{policy.name}"
    for path, raw in refs:
        kind = raw.get("kind")
        if raw.get("group") != GATEWAY_GROUP or not isinstance(kind, str) \
                or kind not in _GATEWAY_API_TARGETS:
            continue
        key = target_key(raw, policy.namespace)
        if key is None or view.exists(key):
            continue
        what = f"{raw['kind']} {key.partition('/')[2]}"
        found.append(codes.POLICY_TARGET_NOT_FOUND.finding(
            ref(policy), f"{name}: target {what} not found",
            detail=f"{path} names {what}, which does not exist: the policy applies nowhere "
            "until it does.",
            suggestion="Fix the targetRef's name (and kind), or create the target.",
            evidence=[evidence(policy, path, {k: raw.get(k) for k in ("group", "kind", "name")
                                              if raw.get(k) is not None})]))
    return found
