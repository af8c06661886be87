"""Ready-made clusters for the simulator: the demo, and synthetic clusters at any scale."""

from __future__ import annotations

from typing import Any

from netsight.sim.synthetic import generate

Obj = dict[str, Any]

# The protocol of each background port, by number, as a mesh-enabled cluster declares it
# (appProtocol): Istio need not guess, and the demo's only findings are its faults.
_APP_PROTOCOLS = {80: "http", 8080: "http", 9090: "http", 9000: "grpc", 6379: "redis",
                  3306: "mysql"}


# Ports the demo's pods declare but do not listen on: (pod "namespace/name", port).
DEMO_CLOSED_PORTS: tuple[tuple[str, int], ...] = (("shop/invoices-8b2d-a", 8080),)


def parse_scale(text: str) -> int:
    """``"100k"`` -> 100000, ``"1.5m"`` -> 1500000, ``"2500"`` -> 2500."""
    value = text.strip().lower()
    factor = {"k": 1_000, "m": 1_000_000}.get(value[-1:], 1)
    number = value[:-1] if factor > 1 else value
    try:
        pods = int(float(number) * factor)
    except ValueError:
        raise ValueError(f"scale must be a pod count such as 2500, 10k or 100k; "
                         f"got {text!r}") from None
    if pods < 1:
        raise ValueError(f"scale must be at least 1 pod; got {text!r}")
    return pods


def synthetic(pods: int, seed: int = 1) -> list[Obj]:
    return list(generate(pods=pods, seed=seed).objects())


def _crd(group: str, kind: str, plural: str, version: str = "v1",
         scope: str = "Namespaced") -> Obj:
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{plural}.{group}"},
            "spec": {"group": group, "scope": scope,
                     "names": {"kind": kind, "plural": plural, "singular": kind.lower(),
                               "listKind": f"{kind}List"},
                     "versions": [{"name": version, "served": True, "storage": True}]}}


GATEWAY_API_CRDS = [
    _crd("gateway.networking.k8s.io", "GatewayClass", "gatewayclasses", scope="Cluster"),
    _crd("gateway.networking.k8s.io", "Gateway", "gateways"),
    _crd("gateway.networking.k8s.io", "HTTPRoute", "httproutes"),
    _crd("gateway.networking.k8s.io", "ReferenceGrant", "referencegrants", "v1beta1"),
]

ISTIO_NETWORKING_CRDS = [
    _crd("networking.istio.io", "VirtualService", "virtualservices"),
    _crd("networking.istio.io", "DestinationRule", "destinationrules"),
    _crd("networking.istio.io", "Gateway", "gateways"),
    _crd("networking.istio.io", "ServiceEntry", "serviceentries"),
]
ISTIO_SECURITY_CRDS = [_crd("security.istio.io", "PeerAuthentication", "peerauthentications")]
LINKERD_POLICY_CRDS = [
    _crd("policy.linkerd.io", "Server", "servers", "v1beta3"),
    _crd("policy.linkerd.io", "AuthorizationPolicy", "authorizationpolicies", "v1alpha1"),
    _crd("policy.linkerd.io", "MeshTLSAuthentication", "meshtlsauthentications", "v1alpha1"),
]


def _background(pods: int, seed: int) -> list[Obj]:
    """A healthy synthetic cluster for the demo's faults to stand out against: every pod
    ready, every port's protocol declared, the TLS Secrets its Ingresses name, and the Nodes
    its pods run on (whose zones the endpoint-slice controller copies). Its EndpointSlices
    are the controller's to write."""
    cluster = generate(pods=pods, seed=seed, not_ready_fraction=0.0)
    zones = {e["nodeName"]: e["zone"] for s in cluster.endpoint_slices
             for e in s["endpoints"] if e.get("zone")}
    nodes = [{"apiVersion": "v1", "kind": "Node",
              "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name,
                                                    "topology.kubernetes.io/zone": zone}}}
             for name, zone in sorted({**zones, "node-1": "zone-a"}.items())]
    for service in cluster.services:
        service["spec"]["ports"] = [{**port, "appProtocol": _APP_PROTOCOLS.get(port["port"], "tcp")}
                                    for port in service["spec"]["ports"]]
    cluster.endpoint_slices.clear()
    # The certificates the Ingresses name (netsight reads Secrets' names only).
    secrets = [{"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/tls",
                "metadata": {"name": tls["secretName"],
                             "namespace": ingress["metadata"]["namespace"]}}
               for ingress in cluster.ingresses for tls in ingress["spec"].get("tls") or ()]
    return [*nodes, *cluster.objects(), *secrets]


# The Istio version of the demo's sidecars and of its istiod (sim/control_planes.py).
ISTIO_VERSION = "1.27.0"
LINKERD_VERSION = "edge-25.8.1"  # of the demo's Linkerd proxies and control plane

# The demo pod whose container keeps exiting: load_demo records the kubelet's Warning about it.
DEMO_CRASH_LOOPING = "shop/recommender-4d8e-a"


def crash_looping(pod: Obj) -> Obj:
    """``pod`` as the kubelet reports a pod whose one container keeps exiting."""
    status = pod["status"]
    status["conditions"] = [{"type": "Ready", "status": "False", "reason": "ContainersNotReady"}]
    status["containerStatuses"] = [{
        "name": "app", "ready": False, "restartCount": 12, "started": False,
        "image": pod["spec"]["containers"][0]["image"], "imageID": "",
        "lastState": {"terminated": {"exitCode": 1, "reason": "Error"}},
        "state": {"waiting": {"reason": "CrashLoopBackOff",
                              "message": "back-off 5m0s restarting failed container=app"}}}]
    return pod


def demo(seed: int = 7) -> list[Obj]:
    """A small, healthy synthetic cluster plus deliberate faults, each one a question to ask.

    Load it with :func:`netsight.sim.demo.load_demo`, which starts the endpoint-slice
    controller: the objects hold no EndpointSlices. The README lists the findings the faults
    produce; ``tests/sim/test_demo_findings.py`` holds the demo to that list.

    - ``shop/cart``: the selector says version v1, the pods are v2 (diagnose_service);
    - ``shop/checkout``: targetPort names a port the container does not declare;
    - ``data/deny-all``: a default-deny ingress policy isolates the database namespace;
    - ``shop/storefront``: an HTTPRoute whose cross-namespace backendRef has no
      ReferenceGrant (Gateway API installed through its CRDs);
    - ``shop/cart`` again, through the mesh: a VirtualService sends it to subset v1, whose
      DestinationRule labels (version v1) no pod carries (Istio networking CRDs installed);
    - ``shop/invoices``: its pod declares port 8080 and is Ready, but nothing listens there
      (:data:`DEMO_CLOSED_PORTS`, a data-plane fault no object shows: only a probe finds it).
    - ``shop/recommender``: its one pod crash-loops (CrashLoopBackOff, not ready), and the
      kubelet's BackOff Warning about it is in the cluster's Events (load_demo records it);
    - ``pay/ledger``: its pods run Istio sidecars under a STRICT PeerAuthentication, and
      its DestinationRule makes clients send plaintext (tls DISABLE): pay/billing's
      connections are refused (istio_mtls_status, find_blocking_policies).
    - ``books/api``: its Linkerd Server admits only the identity of service account ``web``
      (AuthorizationPolicy api-from-web), and books/web's pods run as ``storefront``: their
      requests are refused (find_blocking_policies).
    """
    objects = _background(240, seed)
    objects.extend(GATEWAY_API_CRDS)
    objects.extend(ISTIO_NETWORKING_CRDS)
    objects.extend(ISTIO_SECURITY_CRDS)
    objects.extend(LINKERD_POLICY_CRDS)
    pod_ip = iter(f"10.250.0.{i}" for i in range(10, 250))
    cluster_ip = iter(f"10.96.250.{i}" for i in range(10, 250))

    def pod(name: str, ns: str, labels: dict[str, str], port: tuple[str, int],
            sidecar: bool = False, linkerd: str | None = None) -> Obj:
        # Sidecars as injected, without an injection label: one would make every other
        # namespace a "not injected" finding. ``linkerd``: the service account of a pod
        # Linkerd's injector injected (its proxy, annotation and label).
        proxy = [{"name": "istio-proxy", "image": f"istio/proxyv2:{ISTIO_VERSION}"}] \
            if sidecar else []
        meta: dict[str, object] = {"name": name, "namespace": ns, "labels": labels}
        extra: dict[str, object] = {}
        if linkerd is not None:
            proxy = [{"name": "linkerd-proxy",
                      "image": f"cr.l5d.io/linkerd/proxy:{LINKERD_VERSION}"}]
            meta = {**meta, "labels": {**labels, "linkerd.io/control-plane-ns": "linkerd"},
                    "annotations": {"linkerd.io/proxy-version": LINKERD_VERSION}}
            extra = {"serviceAccountName": linkerd}
        return {"apiVersion": "v1", "kind": "Pod",
                "metadata": meta,
                "spec": {"containers": [{"name": "app", "image": f"demo/{name}:1",
                                         "ports": [{"name": port[0], "containerPort": port[1],
                                                    "protocol": "TCP"}]}, *proxy],
                         "nodeName": "node-1", **extra},
                "status": {"phase": "Running", "podIP": (ip := next(pod_ip)),
                           "podIPs": [{"ip": ip}],
                           "conditions": [{"type": "Ready", "status": "True"}]}}

    def service(name: str, ns: str, selector: dict[str, str], port: int,
                target: int | str) -> Obj:
        return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": ns},
                "spec": {"selector": selector, "type": "ClusterIP",
                         "clusterIP": (ip := next(cluster_ip)), "clusterIPs": [ip],
                         "ipFamilies": ["IPv4"], "ipFamilyPolicy": "SingleStack",
                         "ports": [{"name": "http", "port": port, "targetPort": target,
                                    "protocol": "TCP"}]}}

    for ns in ("shop", "data", "edge", "pay", "books"):
        objects.append({"apiVersion": "v1", "kind": "Namespace",
                        "metadata": {"name": ns, "labels": {"kubernetes.io/metadata.name": ns}}})
    objects += [
        pod("cart-7d9f-a", "shop", {"app": "cart", "version": "v2"}, ("http", 8080)),
        pod("cart-7d9f-b", "shop", {"app": "cart", "version": "v2"}, ("http", 8080)),
        service("cart", "shop", {"app": "cart", "version": "v1"}, 80, "http"),
        pod("checkout-5c4b-a", "shop", {"app": "checkout"}, ("http-api", 8443)),
        service("checkout", "shop", {"app": "checkout"}, 443, "https"),
        pod("frontend-6f7c-a", "shop", {"app": "frontend"}, ("http", 8080)),
        service("frontend", "shop", {"app": "frontend"}, 80, "http"),
        pod("postgres-0", "data", {"app": "postgres"}, ("pg", 5432)),
        service("postgres", "data", {"app": "postgres"}, 5432, "pg"),
        pod("invoices-8b2d-a", "shop", {"app": "invoices"}, ("http", 8080)),
        service("invoices", "shop", {"app": "invoices"}, 80, "http"),
        {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
         "metadata": {"name": "deny-all", "namespace": "data"},
         "spec": {"podSelector": {}, "policyTypes": ["Ingress"]}},
        # Accepted, as its controller would report: the demo's gateway faults are its routes'.
        {"apiVersion": "gateway.networking.k8s.io/v1", "kind": "GatewayClass",
         "metadata": {"name": "demo", "generation": 1},
         "spec": {"controllerName": "example.com/gateway"},
         "status": {"conditions": [{"type": "Accepted", "status": "True",
                                    "reason": "Accepted", "message": "",
                                    "observedGeneration": 1,
                                    "lastTransitionTime": "2026-01-01T00:00:00Z"}]}},
        {"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
         "metadata": {"name": "public", "namespace": "edge"},
         "spec": {"gatewayClassName": "demo", "listeners": [
             {"name": "http", "port": 80, "protocol": "HTTP",
              "allowedRoutes": {"namespaces": {"from": "All"}}}]}},
        {"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
         "metadata": {"name": "storefront", "namespace": "edge"},
         "spec": {"parentRefs": [{"name": "public"}], "hostnames": ["shop.example.com"],
                  "rules": [{"backendRefs": [{"name": "frontend", "namespace": "shop",
                                              "port": 80}]}]}},
        {"apiVersion": "networking.istio.io/v1", "kind": "DestinationRule",
         "metadata": {"name": "cart", "namespace": "shop"},
         "spec": {"host": "cart", "subsets": [{"name": "v1",
                                               "labels": {"app": "cart", "version": "v1"}}]}},
        {"apiVersion": "networking.istio.io/v1", "kind": "VirtualService",
         "metadata": {"name": "cart", "namespace": "shop"},
         "spec": {"hosts": ["cart"],
                  "http": [{"route": [{"destination": {"host": "cart", "subset": "v1"}}]}]}},
        crash_looping(pod("recommender-4d8e-a", "shop", {"app": "recommender"},
                          ("http", 8080))),
        service("recommender", "shop", {"app": "recommender"}, 80, "http"),
        pod("ledger-0", "pay", {"app": "ledger"}, ("http", 8080), sidecar=True),
        service("ledger", "pay", {"app": "ledger"}, 80, "http"),
        pod("billing-0", "pay", {"app": "billing"}, ("http", 8080), sidecar=True),
        {"apiVersion": "security.istio.io/v1", "kind": "PeerAuthentication",
         "metadata": {"name": "default", "namespace": "pay"},
         "spec": {"mtls": {"mode": "STRICT"}}},
        {"apiVersion": "networking.istio.io/v1", "kind": "DestinationRule",
         "metadata": {"name": "ledger", "namespace": "pay"},
         "spec": {"host": "ledger", "trafficPolicy": {"tls": {"mode": "DISABLE"}}}},
        pod("api-5d8c-a", "books", {"app": "api"}, ("http", 8080), linkerd="api"),
        service("api", "books", {"app": "api"}, 80, "http"),
        pod("web-7b4f-a", "books", {"app": "web"}, ("http", 8080), linkerd="storefront"),
        {"apiVersion": "policy.linkerd.io/v1beta3", "kind": "Server",
         "metadata": {"name": "api-http", "namespace": "books"},
         "spec": {"podSelector": {"matchLabels": {"app": "api"}}, "port": "http",
                  "proxyProtocol": "HTTP/1"}},
        {"apiVersion": "policy.linkerd.io/v1alpha1", "kind": "MeshTLSAuthentication",
         "metadata": {"name": "web-identity", "namespace": "books"},
         "spec": {"identityRefs": [{"kind": "ServiceAccount", "name": "web"}]}},
        {"apiVersion": "policy.linkerd.io/v1alpha1", "kind": "AuthorizationPolicy",
         "metadata": {"name": "api-from-web", "namespace": "books"},
         "spec": {"targetRef": {"group": "policy.linkerd.io", "kind": "Server",
                                "name": "api-http"},
                  "requiredAuthenticationRefs": [{"group": "policy.linkerd.io",
                                                  "kind": "MeshTLSAuthentication",
                                                  "name": "web-identity"}]}},
    ]
    return objects
