"""The suite's synthetic clusters: scales, and the objects the simulator serves for each.

A scale is a pod count with L's proportions (100k pods: 40 NetworkPolicies a namespace,
i.e. 10k; 500 AdminNetworkPolicies; 2k HTTPRoutes; an Istio slice of one namespace in ten).
The bulk comes from ``netsight.sim.synthetic.generate`` (Services, EndpointSlices,
Deployments, ...); this module adds what the generator has none of, and the fixed objects
the questions every design answers are about (:data:`QUESTIONS`): pods x/a and y/b with
the NetworkPolicy that decides x/a -> y/b:80, and a Service shop/cart whose selector
matches no pod.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from netsight.sim.scenarios import (
    GATEWAY_API_CRDS,
    ISTIO_NETWORKING_CRDS,
    ISTIO_SECURITY_CRDS,
    parse_scale,
)
from netsight.sim.synthetic import generate

Raw = dict[str, Any]

CREATED = "2024-05-01T00:00:00Z"
NAMED = {"S": 1_000, "M": 10_000, "L": 100_000, "XL": 150_000}
L_PODS = 100_000

# The questions each design answers (BenchContext.questions): tool and arguments.
QUESTIONS: dict[str, tuple[str, dict[str, Any]]] = {
    "reach": ("find_blocking_policies", {"source": "x/a", "destination": "y/b", "port": 80}),
    "no_endpoints": ("diagnose_service", {"service": "shop/cart"}),
}


@dataclass(frozen=True)
class Scale:
    """``name`` is S, M, L, XL or the pod count asked for; the rest follows from ``pods``."""

    name: str
    pods: int

    @classmethod
    def parse(cls, text: str) -> Scale:
        named = NAMED.get(text.upper())
        if named is not None:
            return cls(text.upper(), named)
        return cls(text, parse_scale(text))

    @property
    def admin_policies(self) -> int:
        return max(1, round(500 * self.pods / L_PODS))

    @property
    def http_routes(self) -> int:
        return max(1, round(2_000 * self.pods / L_PODS))

    policies_per_namespace: int = 40  # 10k NetworkPolicies at 100k pods
    mesh_share: int = 10  # one namespace in this many runs Istio sidecars


def _crd(group: str, kind: str, plural: str, version: str, scope: str = "Namespaced") -> Raw:
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{plural}.{group}"},
            "spec": {"group": group, "scope": scope,
                     "names": {"kind": kind, "plural": plural, "singular": kind.lower(),
                               "listKind": f"{kind}List"},
                     "versions": [{"name": version, "served": True, "storage": True}]}}


CRDS: list[Raw] = [
    *GATEWAY_API_CRDS, *ISTIO_NETWORKING_CRDS, *ISTIO_SECURITY_CRDS,
    _crd("security.istio.io", "AuthorizationPolicy", "authorizationpolicies", "v1"),
    _crd("policy.networking.k8s.io", "AdminNetworkPolicy", "adminnetworkpolicies",
         "v1alpha1", "Cluster"),
    _crd("policy.networking.k8s.io", "BaselineAdminNetworkPolicy",
         "baselineadminnetworkpolicies", "v1alpha1", "Cluster"),
]


def objects(scale: Scale, seed: int) -> tuple[Iterator[Raw], dict[str, int]]:
    """Every object but the CRDs, in load order (namespaces first), and counts by kind."""
    cluster = generate(pods=scale.pods, seed=seed,
                       policies_per_namespace=scale.policies_per_namespace)
    rng = random.Random(seed)
    extra = [*admin_policies(cluster.namespaces, scale.admin_policies, rng),
             *http_routes(cluster.services, scale.http_routes, rng),
             *mesh_slice(cluster.namespaces, cluster.pods, cluster.services, scale.mesh_share,
                         rng),
             *fixed_objects()]
    counts = dict(cluster.counts())
    for obj in extra:
        counts[obj["kind"]] = counts.get(obj["kind"], 0) + 1
        # What the API server sets on create (the objects are loaded as they are), and
        # the simulator's writes (churn replacing a policy) carry over.
        meta = obj["metadata"]
        meta.setdefault("uid", str(uuid.uuid5(uuid.NAMESPACE_URL, "/".join(
            (obj["kind"], meta.get("namespace", ""), meta["name"])))))
        meta.setdefault("creationTimestamp", CREATED)
    namespaces = [o for o in extra if o["kind"] == "Namespace"]
    rest = [o for o in extra if o["kind"] != "Namespace"]

    def ordered() -> Iterator[Raw]:
        yield from namespaces
        yield from cluster.objects()
        yield from rest

    return ordered(), counts


def admin_policies(namespaces: list[Raw], count: int, rng: random.Random) -> list[Raw]:
    """``count`` ANPs at distinct priorities over namespaces by team, env or name, and a BANP."""
    teams = sorted({n["metadata"]["labels"].get("team", "") for n in namespaces} - {""})
    names = [n["metadata"]["name"] for n in namespaces]
    found: list[Raw] = []
    for i in range(count):
        subject_ns = rng.choice([{"matchLabels": {"team": rng.choice(teams)}},
                                 {"matchLabels": {"kubernetes.io/metadata.name":
                                                  rng.choice(names)}},
                                 {"matchLabels": {"env": "staging"}}])
        subject: Raw = {"namespaces": subject_ns} if rng.random() < 0.6 else {
            "pods": {"namespaceSelector": subject_ns,
                     "podSelector": {"matchLabels": {"tier": rng.choice(
                         ["backend", "frontend", "db", "worker"])}}}}
        peer = rng.choice([{"namespaces": {"matchLabels": {"team": rng.choice(teams)}}},
                           {"namespaces": {"matchLabels": {"env": "staging"}}},
                           {"pods": {"namespaceSelector": {},
                                     "podSelector": {"matchLabels": {"tier": "frontend"}}}}])
        action = rng.choice(["Pass", "Pass", "Allow", "Deny"])
        rule: Raw = {"name": f"r{i}", "action": action, "from": [peer]}
        if rng.random() < 0.5:
            rule["ports"] = [{"portNumber": {"protocol": "TCP",
                                             "port": rng.choice([5432, 6379, 8080, 9090])}}]
        spec: Raw = {"priority": i, "subject": subject, "ingress": [rule]}
        if rng.random() < 0.3:
            spec["egress"] = [{"name": "out", "action": rng.choice(["Pass", "Deny"]),
                               "to": [{"networks": ["169.254.169.254/32"]}]}]
        found.append({"apiVersion": "policy.networking.k8s.io/v1alpha1",
                      "kind": "AdminNetworkPolicy", "metadata": {"name": f"anp-{i}"},
                      "spec": spec})
    found.append({"apiVersion": "policy.networking.k8s.io/v1alpha1",
                  "kind": "BaselineAdminNetworkPolicy", "metadata": {"name": "default"},
                  "spec": {"subject": {"namespaces": {}}, "ingress": [{
                      "name": "staging-in", "action": "Deny",
                      "from": [{"namespaces": {"matchLabels": {"env": "staging"}}}]}]}})
    return found


ROUTES_PER_GATEWAY = 40


def http_routes(services: list[Raw], count: int, rng: random.Random) -> list[Raw]:
    """``count`` HTTPRoutes to the generated Services, 40 a Gateway in a namespace of its
    own, each route in its backend's namespace (so no ReferenceGrant is needed)."""
    gateways = max(1, -(-count // ROUTES_PER_GATEWAY))
    found: list[Raw] = [
        {"apiVersion": "v1", "kind": "Namespace",
         "metadata": {"name": "gateways", "labels": {"kubernetes.io/metadata.name": "gateways"}}},
        {"apiVersion": "gateway.networking.k8s.io/v1", "kind": "GatewayClass",
         "metadata": {"name": "bench"}, "spec": {"controllerName": "example.com/gateway"}}]
    for g in range(gateways):
        found.append({"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
                      "metadata": {"name": f"gw-{g}", "namespace": "gateways"},
                      "spec": {"gatewayClassName": "bench", "listeners": [
                          {"name": "http", "port": 80, "protocol": "HTTP",
                           "hostname": f"*.gw-{g}.example.com",
                           "allowedRoutes": {"namespaces": {"from": "All"}}}]}})
    with_ports = [s for s in services if s["spec"].get("ports")]
    for r in range(count):
        service = rng.choice(with_ports)
        meta = service["metadata"]
        found.append({
            "apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
            "metadata": {"name": f"route-{r}", "namespace": meta["namespace"]},
            "spec": {"parentRefs": [{"name": f"gw-{r % gateways}", "namespace": "gateways"}],
                     "hostnames": [f"r{r}.gw-{r % gateways}.example.com"],
                     "rules": [{"matches": [{"path": {"type": "PathPrefix",
                                                      "value": f"/{meta['name']}"}}],
                                "backendRefs": [{"name": meta["name"],
                                                 "port": service["spec"]["ports"][0]["port"]}]}]}})
    return found


def mesh_slice(namespaces: list[Raw], pods: list[Raw], services: list[Raw], share: int,
               rng: random.Random) -> list[Raw]:
    """Istio in one namespace of ``share``: injection label, sidecars in their pods, a
    STRICT mesh-wide PeerAuthentication, an AuthorizationPolicy a namespace, and a
    VirtualService and DestinationRule for a Service in each."""
    meshed = {n["metadata"]["name"] for i, n in enumerate(namespaces) if i % share == 0}
    for namespace in namespaces:
        if namespace["metadata"]["name"] in meshed:
            # Copied before the change: the generator shares nested parts between objects.
            namespace["metadata"] = {**namespace["metadata"], "labels": {
                **namespace["metadata"]["labels"], "istio-injection": "enabled"}}
    proxy = {"name": "istio-proxy", "image": "istio/proxyv2:1.27.0"}
    for pod in pods:
        if pod["metadata"]["namespace"] in meshed:
            pod["spec"] = {**pod["spec"], "containers": [*pod["spec"]["containers"], proxy]}
    found: list[Raw] = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {
            "name": "istio-system", "labels": {"kubernetes.io/metadata.name": "istio-system"}}},
        {"apiVersion": "security.istio.io/v1", "kind": "PeerAuthentication",
         "metadata": {"name": "default", "namespace": "istio-system"},
         "spec": {"mtls": {"mode": "STRICT"}}}]
    for ns in sorted(meshed):
        found.append({"apiVersion": "security.istio.io/v1", "kind": "AuthorizationPolicy",
                      "metadata": {"name": "same-namespace", "namespace": ns},
                      "spec": {"rules": [{"from": [
                          {"source": {"principals": [f"cluster.local/ns/{ns}/*"]}},
                          {"source": {"namespaces": ["istio-system"]}}]}]}})
        local = [s for s in services
                 if s["metadata"]["namespace"] == ns and s["spec"].get("ports")]
        if not local:
            continue
        service = rng.choice(local)
        name = service["metadata"]["name"]
        found += [
            {"apiVersion": "networking.istio.io/v1", "kind": "DestinationRule",
             "metadata": {"name": name, "namespace": ns},
             "spec": {"host": name, "trafficPolicy": {"tls": {"mode": "ISTIO_MUTUAL"}}}},
            {"apiVersion": "networking.istio.io/v1", "kind": "VirtualService",
             "metadata": {"name": name, "namespace": ns},
             "spec": {"hosts": [name], "http": [{"timeout": "5s", "route": [
                 {"destination": {"host": name,
                                  "port": {"number": service["spec"]["ports"][0]["port"]}}}]}]}},
        ]
    return found


def fixed_objects() -> list[Raw]:
    """What :data:`QUESTIONS` ask about, at every scale: x/a -> y/b:80, allowed by y's
    NetworkPolicy; shop/cart, whose selector (version v1) matches no pod (they are v2)."""

    def namespace(name: str) -> Raw:
        return {"apiVersion": "v1", "kind": "Namespace",
                "metadata": {"name": name, "labels": {"kubernetes.io/metadata.name": name}}}

    # 10.250.0.0/24 lies outside the generator's pod CIDRs (10.64.0.0/11).
    def pod(ns: str, name: str, labels: dict[str, str], port: int, ip: str) -> Raw:
        return {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": name, "namespace": ns, "labels": labels},
                "spec": {"containers": [{"name": "app", "image": f"bench/{name}:1",
                                         "ports": [{"name": "http", "containerPort": port,
                                                    "protocol": "TCP"}]}],
                         "nodeName": "node-fixed"},
                "status": {"phase": "Running", "podIP": ip, "podIPs": [{"ip": ip}],
                           "conditions": [{"type": "Ready", "status": "True"}]}}

    return [
        namespace("x"), namespace("y"), namespace("shop"),
        pod("x", "a", {"app": "a"}, 8080, "10.250.0.10"),
        pod("y", "b", {"app": "b"}, 80, "10.250.0.11"),
        {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
         "metadata": {"name": "b-from-x-a", "namespace": "y"},
         "spec": {"podSelector": {"matchLabels": {"app": "b"}}, "policyTypes": ["Ingress"],
                  "ingress": [{"from": [{
                      "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "x"}},
                      "podSelector": {"matchLabels": {"app": "a"}}}],
                      "ports": [{"protocol": "TCP", "port": 80}]}]}},
        pod("shop", "cart-7d9f-a", {"app": "cart", "version": "v2"}, 8080, "10.250.0.12"),
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "cart", "namespace": "shop"},
         "spec": {"selector": {"app": "cart", "version": "v1"}, "type": "ClusterIP",
                  "clusterIP": "10.111.250.10", "clusterIPs": ["10.111.250.10"],
                  "ports": [{"name": "http", "port": 80, "targetPort": 8080,
                             "protocol": "TCP"}]}},
    ]
