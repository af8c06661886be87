"""What probes observe on the simulated data plane, case by case, and the messages it writes
hold to the probe contract (netsight.probes.message.ProbeResult, which the data plane itself
never imports)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pytest

from netsight.probes.message import ProbeResult
from netsight.sim.dataplane.enforcement import Profile
from netsight.sim.dataplane.network import Network, NetworkConfigError
from netsight.sim.dataplane.probing import DataPlane, Observation
from netsight.sim.endpoint_slices import EndpointSliceController
from netsight.sim.state import Obj, SimState


def crd(group: str, kind: str, plural: str, version: str, scope: str = "Namespaced") -> Obj:
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{plural}.{group}"},
            "spec": {"group": group, "scope": scope,
                     "names": {"kind": kind, "plural": plural},
                     "versions": [{"name": version, "served": True, "storage": True}]}}


def namespace(name: str, **labels: str) -> Obj:
    return {"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": name, "labels": labels}}


def pod(ns: str, name: str, ip: str, labels: dict[str, str],
        ports: tuple[tuple[str, int], ...] = (),
        node: str = "node-a", sidecar: bool = False, **spec: Any) -> Obj:
    containers: list[Obj] = [{"name": "app", "image": "app:1", "ports": [
        {"name": n, "containerPort": p, "protocol": "TCP"} for n, p in ports]}]
    if sidecar:
        containers.append({"name": "istio-proxy", "image": "istio/proxyv2:1.24"})
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": ns, "labels": labels},
            "spec": {"nodeName": node, "containers": containers, **spec},
            "status": {"phase": "Running", "podIP": ip, "podIPs": [{"ip": ip}],
                       "conditions": [{"type": "Ready", "status": "True"}]}}


def service(ns: str, name: str, ip: str, selector: dict[str, str] | None,
            ports: list[tuple[int, Any]], **spec: Any) -> Obj:
    body: Obj = {"clusterIP": ip, "ports": [{"name": f"p{port}", "port": port,
                                             "targetPort": target, "protocol": "TCP"}
                                            for port, target in ports], **spec}
    if selector:
        body["selector"] = selector
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": ns},
            "spec": body}


CLUSTER: list[Obj] = [
    crd("policy.networking.k8s.io", "AdminNetworkPolicy", "adminnetworkpolicies", "v1alpha1",
        "Cluster"),
    crd("security.istio.io", "PeerAuthentication", "peerauthentications", "v1"),
    namespace("app", team="app"), namespace("db", team="db"), namespace("mesh"),
    namespace("other"), namespace("locked"), namespace("kube-system"),
    pod("app", "client", "10.1.0.2", {"role": "client"}),
    pod("app", "web-0", "10.1.0.5", {"app": "web"}, (("http", 8080),), node="node-b"),
    pod("app", "tls-0", "10.1.0.7", {"app": "tls"}, (("https", 8443),)),
    pod("app", "stateful-0", "10.1.0.8", {"app": "stateful"}, (("http", 8080),),
        hostname="stateful-0", subdomain="headless"),
    pod("app", "ndots1", "10.1.0.9", {"role": "client"},
        dnsConfig={"options": [{"name": "ndots", "value": "1"}], "searches": ["corp.test"]}),
    pod("app", "hostdns", "10.1.0.10", {"role": "client"}, dnsPolicy="Default"),
    pod("db", "pg-0", "10.2.0.5", {"app": "pg"}, (("pg", 5432),)),
    pod("other", "intruder", "10.3.0.5", {"role": "client"}),
    pod("mesh", "api-0", "10.4.0.5", {"app": "api"}, (("http", 9080),), sidecar=True),
    pod("mesh", "meshclient", "10.4.0.6", {"role": "client"}, sidecar=True),
    pod("locked", "jailed", "10.5.0.5", {"role": "client"}),
    pod("kube-system", "coredns-0", "10.6.0.5", {"k8s-app": "kube-dns"}, (("dns", 53),)),
    service("app", "web", "10.96.0.20", {"app": "web"}, [(80, "http")]),
    service("app", "empty", "10.96.0.21", {"app": "nothing"}, [(80, 8080)]),
    service("app", "headless", "None", {"app": "stateful"}, [(8080, 8080)]),
    service("app", "tls", "10.96.0.50", {"app": "tls"}, [(443, "https")]),
    service("app", "ext", "", None, [], type="ExternalName", externalName="example.com"),
    service("app", "gone", "", None, [], type="ExternalName", externalName="db.nowhere.test"),
    service("db", "pg", "10.96.0.30", {"app": "pg"}, [(5432, "pg")]),
    service("mesh", "api", "10.96.0.40", {"app": "api"}, [(9080, 9080)]),
    {**service("kube-system", "kube-dns", "10.96.0.10", {"k8s-app": "kube-dns"}, [(53, 53)]),
     "spec": {"clusterIP": "10.96.0.10", "selector": {"k8s-app": "kube-dns"},
              "ports": [{"name": "dns", "port": 53, "targetPort": 53, "protocol": "UDP"}]}},
    {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
     "metadata": {"name": "deny-all", "namespace": "db"},
     "spec": {"podSelector": {}, "policyTypes": ["Ingress"]}},
    {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
     "metadata": {"name": "from-app-clients", "namespace": "db"},
     "spec": {"podSelector": {"matchLabels": {"app": "pg"}},
              "ingress": [{"from": [{"namespaceSelector": {"matchLabels": {"team": "app"}},
                                     "podSelector": {"matchLabels": {"role": "client"}}}],
                           "ports": [{"port": "pg"}]}]}},
    {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
     "metadata": {"name": "no-egress", "namespace": "locked"},
     "spec": {"podSelector": {}, "policyTypes": ["Egress"]}},
    {"apiVersion": "policy.networking.k8s.io/v1alpha1", "kind": "AdminNetworkPolicy",
     "metadata": {"name": "other-may-reach-db"},
     "spec": {"priority": 10,
              "subject": {"namespaces": {"matchLabels": {"team": "db"}}},
              "ingress": [{"name": "from-other", "action": "Allow", "from": [
                  {"namespaces": {"matchLabels": {"kubernetes.io/metadata.name": "other"}}}],
                           "ports": [{"portNumber": {"protocol": "TCP", "port": 5432}}]}]}},
    {"apiVersion": "security.istio.io/v1", "kind": "PeerAuthentication",
     "metadata": {"name": "default", "namespace": "mesh"},
     "spec": {"mtls": {"mode": "STRICT"}}},
]


@dataclass(frozen=True)
class Case:
    id: str
    source: str  # ns/name
    spec: dict[str, Any]
    outcome: str
    expect: dict[str, Any] = field(default_factory=dict)  # result fields that must hold
    cni: Profile = Profile.NETPOL
    network: dict[str, Any] = field(default_factory=dict)  # POST /sim/dataplane bodies' keys


def tcp(host: str, port: int) -> dict[str, Any]:
    return {"type": "tcp", "host": host, "port": port, "timeoutSeconds": 2}


def dns(name: str, record_type: str = "A") -> dict[str, Any]:
    return {"type": "dns", "name": name, "recordType": record_type}


def http(url: str, **more: Any) -> dict[str, Any]:
    return {"type": "http", "url": url, **more}


CASES = [
    # policy, per CNI profile
    Case("np-allows-named-port", "app/client", tcp("pg.db", 5432), "connected"),
    Case("np-denies", "app/web-0", tcp("pg.db", 5432), "timeout", {"latencyMs": 2000}),
    Case("flannel-enforces-nothing", "app/web-0", tcp("pg.db", 5432), "connected",
         cni=Profile.NONE),
    Case("anp-allow-beats-np-deny", "other/intruder", tcp("pg.db", 5432), "connected",
         cni=Profile.CILIUM_LIKE),
    Case("anp-not-enforced-by-netpol-cni", "other/intruder", tcp("pg.db", 5432), "timeout"),
    Case("egress-default-deny-blocks-dns", "locked/jailed", tcp("pg.db", 5432), "dns_failed",
         {"dns": {"rcode": "TIMEOUT", "answers": []}}),
    Case("egress-default-deny-blocks-by-ip", "locked/jailed", tcp("10.2.0.5", 5432), "timeout"),
    # listeners, Services, nodes
    Case("pod-ip", "app/client", tcp("10.1.0.5", 8080), "connected",
         {"peer": "10.1.0.5:8080"}),
    Case("not-declared", "app/client", tcp("10.1.0.5", 9999), "refused"),
    Case("missing-listener", "app/client", tcp("web", 80), "refused",
         network={"closePort": {"pod": "app/web-0", "port": 8080}}),
    Case("no-ready-endpoint", "app/client", tcp("empty", 80), "refused"),
    Case("no-such-service-port", "app/client", tcp("web", 81), "timeout"),
    Case("node-drops", "app/client", tcp("web", 80), "timeout", network={"dropNode": "node-b"}),
    Case("unknown-address", "app/client", tcp("10.200.0.1", 80), "timeout"),
    # DNS
    Case("dns-short-name", "app/client", dns("web"), "resolved",
         {"dns": {"rcode": "NOERROR", "answers": ["10.96.0.20"],
                  "canonicalName": "web.app.svc.cluster.local"}}),
    Case("dns-namespace-qualified", "app/client", dns("pg.db"), "resolved",
         {"resolved": ["10.96.0.30"], "dns": {"rcode": "NOERROR", "answers": ["10.96.0.30"],
                                              "canonicalName": "pg.db.svc.cluster.local"}}),
    Case("dns-other-namespace-short-name", "app/client", dns("pg"), "dns_failed",
         {"dns": {"rcode": "NXDOMAIN", "answers": []}}),
    Case("dns-trailing-dot-skips-search", "app/client", dns("web."), "dns_failed"),
    Case("dns-headless", "app/client", dns("headless"), "resolved", {"resolved": ["10.1.0.8"]}),
    Case("dns-headless-hostname", "app/client", dns("stateful-0.headless"), "resolved",
         {"resolved": ["10.1.0.8"]}),
    Case("dns-pod-record", "app/client", dns("10-1-0-5.app.pod.cluster.local"), "resolved",
         {"resolved": ["10.1.0.5"]}),
    Case("dns-external-name", "app/client", dns("ext"), "resolved",
         {"resolved": ["93.184.215.14"]}),
    Case("dns-external-name-cname", "app/client", dns("ext", "CNAME"), "resolved",
         {"dns": {"rcode": "NOERROR", "answers": ["example.com"],
                  "canonicalName": "ext.app.svc.cluster.local"}}),
    Case("dns-external-name-dangling", "app/client", dns("gone"), "dns_failed",
         {"dns": {"rcode": "NXDOMAIN", "answers": []}}),
    Case("dns-ndots-5-searches-first", "app/client", dns("example.com"), "resolved",
         {"dns": {"rcode": "NOERROR", "answers": ["93.184.215.14"],
                  "canonicalName": "example.com"}, "latencyMs": 3.2}),
    Case("dns-ndots-1-absolute-first", "app/ndots1", dns("example.com"), "resolved",
         {"latencyMs": 0.8}),
    Case("dns-custom-search", "app/ndots1", dns("db"), "resolved",
         {"dns": {"rcode": "NOERROR", "answers": ["10.20.0.1"],
                  "canonicalName": "db.corp.test"}},
         network={"external": {"db.corp.test": ["10.20.0.1"]}}),
    Case("dns-policy-default-knows-no-services", "app/hostdns", dns("web"), "dns_failed"),
    Case("dns-aaaa-nodata", "app/client", dns("web", "AAAA"), "dns_failed",
         {"dns": {"rcode": "NOERROR", "answers": []}}),
    Case("dns-srv", "app/client", dns("_p80._tcp.web", "SRV"), "resolved",
         {"dns": {"rcode": "NOERROR", "answers": ["0 100 80 web.app.svc.cluster.local."],
                  "canonicalName": "_p80._tcp.web.app.svc.cluster.local"}}),
    Case("dns-down", "app/client", dns("web"), "dns_failed",
         {"dns": {"rcode": "SERVFAIL", "answers": []}}, network={"dnsDown": True}),
    Case("dns-down-tcp", "app/client", tcp("web", 80), "dns_failed", network={"dnsDown": True}),
    # mesh
    Case("mtls-strict-resets-plaintext", "app/client", tcp("api.mesh", 9080), "reset"),
    Case("mtls-strict-takes-a-sidecar", "mesh/meshclient", tcp("api", 9080), "connected"),
    Case("mtls-http-through-the-mesh", "mesh/meshclient", http("http://api:9080/"),
         "responded", {"http": {"status": 200, "headers": {
             "content-type": "text/plain; charset=utf-8", "server": "istio-envoy",
             "x-envoy-upstream-service-time": "2"}}}),
    # HTTP and TLS
    Case("http-200", "app/client", http("http://web/"), "responded",
         {"http": {"status": 200, "headers": {"content-type": "text/plain; charset=utf-8",
                                              "server": "netsight-sim"}}}),
    Case("http-configured-status", "app/client", http("http://web.app.svc.cluster.local/x"),
         "responded", {"http": {"status": 503, "headers": {
             "content-type": "text/plain; charset=utf-8", "server": "netsight-sim"}}},
         network={"httpStatus": {"pod": "app/web-0", "status": 503}}),
    Case("https-verified", "app/client", http("https://tls.app/"), "responded"),
    Case("https-to-plain-port", "app/client", http("https://web:80/"), "tls_failed"),
    Case("http-to-tls-port", "app/client", http("http://tls:443/"), "responded",
         {"http": {"status": 400, "headers": {"content-type": "text/plain; charset=utf-8",
                                              "server": "netsight-sim"}}}),
    Case("https-by-address-fails-verification", "app/client",
         http("https://10.96.0.50/"), "tls_failed"),
    Case("https-by-address-insecure", "app/client",
         http("https://10.96.0.50/", insecureSkipVerify=True), "responded"),
    Case("http-refused", "app/client", http("http://empty/"), "refused"),
    # the spec itself
    Case("unreadable-spec", "app/client", {"type": "tcp", "host": "web"}, "error"),
    Case("unknown-field", "app/client", {**tcp("web", 80), "retries": 3}, "error"),
]


def observe(case: Case) -> Observation:
    state = SimState()
    state.apply(CLUSTER)
    EndpointSliceController(state).start()
    state.network.cni = case.cni
    state.network.configure(case.network)
    namespace_, _, name = case.source.partition("/")
    source = state.objects[("", "Pod")][f"{namespace_}/{name}"]
    return DataPlane(state.objects, state.network).probe(source, json.dumps(case.spec))


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_what_the_probe_observes(case: Case) -> None:
    observation = observe(case)
    result = observation.result
    assert result["outcome"] == case.outcome, (result, observation.steps)
    for key, value in case.expect.items():
        assert result.get(key) == value, (key, result, observation.steps)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_every_message_holds_to_the_probe_contract(case: Case) -> None:
    observation = observe(case)
    message = observation.message()
    assert len(message.encode()) <= 4096
    parsed = ProbeResult.model_validate_json(message)
    assert parsed.outcome.value == case.outcome
    assert parsed.exit_code() == observation.exit_code
    assert parsed.type == case.spec.get("type", "tcp")


def test_https_reports_the_handshake() -> None:
    result = observe(next(c for c in CASES if c.id == "https-verified")).result
    tls = result["http"]["tls"]
    assert tls["verified"] is True
    assert tls["version"] == "TLSv1.3"
    assert "tls.app.svc.cluster.local" in tls["peerSans"]


@pytest.mark.parametrize(("body", "error"), [
    ({"cni": "calico"}, "cni must be one of none, netpol, cilium-like"),
    ({"closePort": {"pod": "web-0", "port": 80}}, "closePort.pod must be a pod as namespace/name"),
    ({"closePort": {"pod": "app/web-0", "port": 0}}, "closePort.port must be a port number"),
    ({"httpStatus": {"pod": "app/web-0", "status": 700}}, "httpStatus.status must be 100-599"),
])
def test_bad_settings_say_what_to_fix(body: dict[str, Any], error: str) -> None:
    with pytest.raises(NetworkConfigError, match=error):
        Network().configure(body)
