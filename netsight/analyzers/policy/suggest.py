"""The smallest change that would admit a denied flow, and what else it would open.

Only the layer that denied is changed: a rule added to the NetworkPolicy that isolates the
pod, an Allow rule placed before an ANP's Deny, or (for the BANP, which NetworkPolicy
overrides) a NetworkPolicy — each as a YAML snippet; for Istio, the DENY rule to narrow, an
ALLOW policy for just this principal (or address) and port, or mTLS for a plaintext source.
"""

from __future__ import annotations

from typing import Any

import yaml

from netsight.analyzers.policy.endpoints import Endpoint
from netsight.analyzers.policy.istio_match import Request
from netsight.analyzers.policy.istio_mesh import Dataplane, membership, principal
from netsight.analyzers.policy.istio_model import AUTHZ_KIND, GROUP, PEER_AUTHN_KIND
from netsight.analyzers.policy.peers import NAME_LABEL, Namespaces
from netsight.analyzers.policy.verdict import (
    Action,
    Direction,
    DirectionVerdict,
    Layer,
    Step,
    Verdict,
)
from netsight.graph.model.kinds import Kind, Rel, make_key
from netsight.graph.model.records import PodRecord
from netsight.graph.model.selectors import selector_from_map
from netsight.graph.store.live import GraphView, Source

# Labels that differ pod by pod within one workload: a rule should not pin them.
_VOLATILE = ("pod-template-hash", "controller-revision-hash", "statefulset.kubernetes.io/pod-name",
             "apps.kubernetes.io/pod-index", "pod-template-generation",
             "batch.kubernetes.io/controller-uid", "controller-uid")


def stable_labels(endpoint: Endpoint) -> dict[str, str]:
    return {k: v for k, v in sorted(endpoint.labels.items()) if k not in _VOLATILE}


def suggest(view: GraphView, verdict: Verdict, source: Endpoint, destination: Endpoint,
            request: Request | None = None) -> str | None:
    if verdict.allowed is not False:
        return None
    parts = [_fix_istio(view, part.steps[-1], source, destination, verdict.port,
                        request or Request())
             if part.steps and part.steps[-1].layer is Layer.ISTIO
             else _fix_mesh(part.steps[-1], source, destination, verdict.port)
             if part.steps and part.steps[-1].layer in (Layer.LINKERD, Layer.KUMA)
             else _fix(view, part, source, destination, verdict)
             for part in (verdict.egress, verdict.ingress) if part.allowed is False]
    return "\n\n".join(p for p in parts if p) or None


def _peer(other: Endpoint, policy_namespace: str, layer: Layer) -> dict[str, Any]:
    if other.external:
        key = "networks" if layer is Layer.ANP else "ipBlock"
        host = f"{other.ips[0]}/{32 if ':' not in other.ips[0] else 128}"
        return {key: [host]} if layer is Layer.ANP else {key: {"cidr": host}}
    labels = stable_labels(other)
    if layer is Layer.ANP:
        return {"pods": {"namespaceSelector": {"matchLabels": {NAME_LABEL: other.namespace}},
                         "podSelector": {"matchLabels": labels} if labels else {}}}
    peer: dict[str, Any] = {"podSelector": {"matchLabels": labels} if labels else {}}
    if other.namespace != policy_namespace:
        peer["namespaceSelector"] = {"matchLabels": {NAME_LABEL: other.namespace}}
    return peer


def _dump(data: Any) -> str:
    return yaml.safe_dump(data, sort_keys=False, default_flow_style=False).rstrip()


def _also_opens(view: GraphView, other: Endpoint, policy_pods: int, port: int,
                proto: str, direction: Direction) -> str:
    selected = f"the {policy_pods} pod(s) the policy selects"
    if other.external:
        where = f"from {other.ips[0]} to {selected}" if direction is Direction.INGRESS else \
            f"from {selected} to {other.ips[0]}"
        return f"It opens {port}/{proto} {where} only."
    assert other.namespace is not None
    labels = stable_labels(other)
    peers = sum(1 for _ in view.matching(other.namespace, selector_from_map(labels)))
    group = (f"every pod labelled {selector_from_map(labels).describe()} in "
             f"{other.namespace} ({peers} pod(s) or template(s))")
    where = f"from {group} to {selected}" if direction is Direction.INGRESS else \
        f"from {selected} to {group}"
    return f"It also opens {port}/{proto} {where}."


def _fix(view: GraphView, part: DirectionVerdict, source: Endpoint, destination: Endpoint,
         verdict: Verdict) -> str | None:
    step = part.steps[-1]
    if step.action is not Action.DENY or step.policy is None:
        return None
    direction = part.direction
    subject, other = (destination, source) if direction is Direction.INGRESS else \
        (source, destination)
    port, proto = verdict.port, verdict.protocol
    ports = [{"port": port, "protocol": proto}]
    field = direction.peers_field
    policy = step.policy
    if step.layer is Layer.NETWORK_POLICY:
        assert policy.namespace is not None
        key = make_key(Kind.NETWORK_POLICY, policy.namespace, policy.name)
        selected = sum(1 for _ in view.neighbors(key, Rel.APPLIES_TO))
        rule: dict[str, Any] = {field: [_peer(other, policy.namespace, step.layer)], "ports": ports}
        return (f"Add this {direction.value} rule to NetworkPolicy {policy.namespace}/"
                f"{policy.name} (spec.{direction.value}):\n{_dump([rule])}\n"
                + _also_opens(view, other, selected, port, proto, direction))
    if step.layer is Layer.ANP:
        anp_ports = [{"portNumber": {"port": port, "protocol": proto}}]
        name = "allow-" + other.name.replace("/", "-").replace(":", "-")
        allow: dict[str, Any] = {
            "name": name[:100], "action": "Allow", field: [_peer(other, "", Layer.ANP)],
            "ports": anp_ports}
        return (f"AdminNetworkPolicy {policy.name} denies this at spec.{direction.value}"
                f"[{step.rule}], and no NetworkPolicy can override an ANP Deny. Insert this "
                f"rule before it (or narrow that rule's {field}):\n{_dump([allow])}")
    if step.layer in (Layer.CILIUM, Layer.CALICO):
        return _cni_fix(step, direction, subject, other, port, proto)
    # BANP: any NetworkPolicy isolating the pod takes precedence over it.
    assert subject.namespace is not None
    new = {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
           "metadata": {"name": f"allow-{direction.value}-{port}-{proto.lower()}",
                        "namespace": subject.namespace},
           "spec": {"podSelector": {"matchLabels": stable_labels(subject)},
                    "policyTypes": [direction.policy_type],
                    direction.value: [{field: [_peer(other, subject.namespace,
                                                     Layer.NETWORK_POLICY)],
                                       "ports": ports}]}}
    return (f"BaselineAdminNetworkPolicy {policy.name} denies this at spec."
            f"{direction.value}[{step.rule}]; a NetworkPolicy selecting {subject.name} "
            f"takes precedence over it. Careful: the new policy isolates those pods for "
            f"{direction.value}, so all other {direction.value} they need must be admitted "
            f"too:\n{_dump(new)}")


def _fix_mesh(step: Step, source: Endpoint, destination: Endpoint, port: int) -> str | None:
    """Linkerd's and Kuma's refusals: an authorization naming the client."""
    if step.action is not Action.DENY or destination.namespace is None:
        return None
    ns = destination.namespace
    client = source.name.replace("/", "-").replace(":", "-")[:50]
    if step.layer is Layer.KUMA:
        if source.namespace is None:
            return None
        mtp = {"apiVersion": "kuma.io/v1alpha1", "kind": "MeshTrafficPermission",
               "metadata": {"name": f"allow-{client}", "namespace": ns},
               "spec": {"targetRef": {"kind": "Dataplane",
                                      "labels": stable_labels(destination)},
                        "from": [{"targetRef": {"kind": "MeshSubset", "tags": {
                            "k8s.kuma.io/namespace": source.namespace,
                            **stable_labels(source)}},
                            "default": {"action": "Allow"}}]}}
        return ("If the client runs a Kuma sidecar in the same mesh, allow it (add the "
                "mesh's kuma.io/mesh label if it is not 'default'); a Deny entry of a more "
                f"specific policy still overrides it:\n{_dump(mtp)}")
    if step.policy is None or step.policy.kind != "Server":
        return (f"Linkerd's default inbound policy of {destination.name} refuses this: set "
                "config.linkerd.io/default-inbound-policy on the pod (or its namespace, "
                "before injection) to one that admits the client, or select the port with "
                "a Server and authorize the client with an AuthorizationPolicy.")
    if source.namespace is not None:
        authn: dict[str, Any] = {
            "apiVersion": "policy.linkerd.io/v1alpha1", "kind": "MeshTLSAuthentication",
            "metadata": {"name": f"{client}-identity", "namespace": ns},
            "spec": {"identityRefs": [{"kind": "ServiceAccount",
                                       "name": source.service_account or "default",
                                       "namespace": source.namespace}]}}
        note = "The client must run the Linkerd proxy to present this identity."
    elif source.ips:
        authn = {"apiVersion": "policy.linkerd.io/v1alpha1", "kind": "NetworkAuthentication",
                 "metadata": {"name": f"{client}-network", "namespace": ns},
                 "spec": {"networks": [{"cidr": source.ips[0]}]}}
        note = "An address outside the mesh can only be admitted by its network."
    else:
        return None
    policy = {"apiVersion": "policy.linkerd.io/v1alpha1", "kind": "AuthorizationPolicy",
              "metadata": {"name": f"allow-{client}", "namespace": ns},
              "spec": {"targetRef": {"group": "policy.linkerd.io", "kind": "Server",
                                     "name": step.policy.name},
                       "requiredAuthenticationRefs": [{
                           "group": "policy.linkerd.io", "kind": authn["kind"],
                           "name": authn["metadata"]["name"]}]}}
    return (f"Authorize the client on Server {step.policy.name} (port {port}). {note}\n"
            f"{_dump([authn, policy])}")


def _fix_istio(view: GraphView, step: Step, source: Endpoint, destination: Endpoint,
               port: int, request: Request) -> str | None:
    """The smallest change that admits a flow Istio denies: the DENY rule to narrow, an
    ALLOW policy for just this source and port, or mTLS for a plaintext source."""
    policy = step.policy
    mesh = membership(source, Namespaces(view), live=view.source is not Source.MANIFESTS)
    in_mesh = mesh.dataplane in (Dataplane.SIDECAR, Dataplane.AMBIENT)
    if policy is not None and policy.kind == PEER_AUTHN_KIND:
        return (f"PeerAuthentication {policy.namespace}/{policy.name} requires mTLS, and "
                f"{mesh.why}. Bring {source.name} into the mesh (e.g. label namespace "
                f"{source.namespace} istio-injection=enabled and restart the pod), or admit "
                f"plaintext on this port only with a workload PeerAuthentication selecting "
                f"{destination.name} and portLevelMtls: {{{port}: {{mode: PERMISSIVE}}}}.")
    if step.rule is not None and policy is not None and step.action is Action.DENY:
        narrow = {"notPrincipals": [principal(source)]} if in_mesh else \
            {"notIpBlocks": list(source.ips)} if source.ips else None
        shown = yaml.safe_dump(narrow, default_flow_style=True).strip()
        how = (f"add {shown} to each of its from[].source entries (or, if it has no from, "
               f"from: [{{source: {shown}}}])") if narrow else "narrow its from, to or when"
        return (f"DENY AuthorizationPolicy {policy.namespace}/{policy.name} matches this at "
                f"spec.rules[{step.rule}]; no ALLOW policy can override a DENY. Narrow that "
                f"rule so that it no longer matches {source.name}: {how}.")
    if step.action is not Action.DENY or destination.namespace is None:
        return None
    if in_mesh:
        peer: dict[str, list[str]] = {"principals": [principal(source)]}
        same = sum(1 for r in view.for_each(Kind.POD, source.namespace)
                   if isinstance(r, PodRecord) and r.service_account == source.service_account)
        who = (f"every pod running as service account {source.service_account} in "
               f"namespace {source.namespace} ({same} pod(s) now)")
    elif source.ips:
        peer = {"ipBlocks": list(source.ips)}
        who = f"{', '.join(source.ips)} only"
    else:
        return None
    operation: dict[str, list[str]] = {"ports": [str(port)]}
    if request.method:
        operation["methods"] = [request.method]
    if request.path:
        operation["paths"] = [request.path.split("?")[0]]
    labels = {k: v for k, v in sorted(destination.labels.items())
              if k not in ("pod-template-hash", "controller-revision-hash",
                           "statefulset.kubernetes.io/pod-name", "apps.kubernetes.io/pod-index")}
    name = ("allow-" + (source.name.replace("/", "-").replace(":", "-")))[:60].rstrip("-")
    new = {"apiVersion": f"{GROUP}/v1", "kind": AUTHZ_KIND,
           "metadata": {"name": f"{name}-{port}", "namespace": destination.namespace},
           "spec": {"selector": {"matchLabels": labels}, "action": "ALLOW",
                    "rules": [{"from": [{"source": peer}], "to": [{"operation": operation}]}]}}
    return (f"No ALLOW AuthorizationPolicy of {destination.name} matches this request. Add "
            f"this one (ALLOW policies add up):\n"
            f"{yaml.safe_dump(new, sort_keys=False).rstrip()}\nIt opens port {port} of the "
            f"pods labelled {selector_from_map(labels).describe()} in "
            f"{destination.namespace} to {who}.")


def _cni_fix(step: Step, direction: Direction, subject: Endpoint, other: Endpoint, port: int,
             proto: str) -> str:
    """Cilium: deny rules beat every allow, so a matching one must be narrowed; otherwise an
    allow rule for the peer. Calico: an Allow rule placed before the deciding rule (or, at
    the end of a tier, in a policy of that tier selecting the pod)."""
    policy = step.policy
    assert policy is not None
    name = f"{policy.namespace}/{policy.name}" if policy.namespace else policy.name
    labels = stable_labels(other)
    if step.layer is Layer.CILIUM:
        if step.rule is not None:
            return (f"{policy.kind} {name} denies this with a deny rule "
                    f"({direction.value}Deny[{step.rule}]); deny rules take precedence over "
                    "every allow in Cilium, so narrow that rule's peers or ports.")
        ends = "fromEndpoints" if direction is Direction.INGRESS else "toEndpoints"
        peer: dict[str, Any]
        if other.external:
            key = "fromCIDR" if direction is Direction.INGRESS else "toCIDR"
            host = f"{other.ips[0]}/{32 if ':' not in other.ips[0] else 128}"
            peer = {key: [host]}
        else:
            peer = {ends: [{"matchLabels": {**labels,
                                            "k8s:io.kubernetes.pod.namespace": other.namespace}}]}
        rule = {**peer, "toPorts": [{"ports": [{"port": str(port), "protocol": proto}]}]}
        example = f" (e.g. {name}, spec.{direction.value})" \
            if policy.kind.startswith("Cilium") else ""
        return (f"Add this {direction.value} rule to a Cilium policy selecting "
                f"{subject.name}{example}:\n{_dump([rule])}")
    end = "source" if direction is Direction.INGRESS else "destination"
    target: dict[str, Any]
    if other.external:
        target = {"nets": [f"{other.ips[0]}/{32 if ':' not in other.ips[0] else 128}"]}
    else:
        selector = " && ".join(f"{k} == '{v}'" for k, v in labels.items()) or "all()"
        target = {"selector": selector,
                  "namespaceSelector": f"projectcalico.org/name == '{other.namespace}'"}
    allow: dict[str, Any] = {"action": "Allow", "protocol": proto, end: target}
    if end == "source":
        allow["destination"] = {"ports": [port]}
    else:
        target["ports"] = [port]
    where = (f"before spec.{direction.value}[{step.rule}] of {policy.kind} {name}"
             if step.rule is not None else
             f"in a policy of the same tier that selects {subject.name}, as the end of that "
             "tier drops what no rule decides")
    return f"Calico: add this {direction.value} rule {where}:\n{_dump([allow])}"
