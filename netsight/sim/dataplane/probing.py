"""What a probe observes: the simulated data plane's answer to one probe, as its message.

A probe runs in a source pod (the probe pod itself, or the pod an ephemeral probe container
joined) and opens a connection, sends an HTTP request or resolves a name. The answer is
decided from the cluster's objects and the :class:`Network` settings, step by step: DNS
(reachable? which records?), kube-proxy (a Service's ready endpoints), the nodes (dropping
traffic?), the CNI's policies, the destination's listener, its sidecar's mTLS mode, and for
HTTP its TLS and its answer. It returns the termination message the probe image would write
(the ProbeResult schema of netsight's probe contract), the exit code, and how long the
probe took (simulated).
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from netsight.sim.dataplane import linkerd
from netsight.sim.dataplane.enforcement import evaluate
from netsight.sim.dataplane.flows import Flow
from netsight.sim.dataplane.mesh import refuses_plaintext
from netsight.sim.dataplane.name_service import Answer, ClusterDns, ResolvConf
from netsight.sim.dataplane.network import Network
from netsight.sim.dataplane.services import route, service_at
from netsight.sim.dataplane.snapshot import (
    SERVICE,
    Cluster,
    Endpoint,
    Obj,
    Objects,
    container_ports,
    has_sidecar,
    key_of,
    name_of,
    namespace_of,
)
from netsight.sim.dataplane.spec import ProbeSpec, SpecError, parse

MESSAGE_LIMIT: Final = 4096  # bytes the kubelet keeps of a termination message
ERROR_LIMIT: Final = 1024
EXIT_ANSWERED, EXIT_UNANSWERED, EXIT_UNRUNNABLE = 0, 1, 2
_ANSWERED: Final = frozenset({"connected", "responded", "resolved"})
_TLS_PORT_NAMES: Final = ("https", "tls", "grpcs")


@dataclass
class Observation:
    """A probe's answer: the message it writes, its exit code, and its simulated duration."""

    result: dict[str, Any]
    steps: list[str] = field(default_factory=list)  # how the data plane decided, for tests

    @property
    def outcome(self) -> str:
        return str(self.result["outcome"])

    @property
    def exit_code(self) -> int:
        if self.outcome == "error":
            return EXIT_UNRUNNABLE
        return EXIT_ANSWERED if self.outcome in _ANSWERED else EXIT_UNANSWERED

    @property
    def seconds(self) -> float:
        return float(self.result.get("latencyMs") or 0.0) / 1000

    def message(self) -> str:
        text = json.dumps(self.result, separators=(",", ":"), sort_keys=True)
        return text.encode()[:MESSAGE_LIMIT].decode(errors="ignore")


@dataclass
class _Connection:
    outcome: str  # connected, refused, timeout, reset, unreachable
    latency_ms: float
    peer: str | None
    dst_pod: Obj | None = None
    service: Mapping[str, Any] | None = None
    why: str = ""
    pod_port: int = 0  # the port at the destination pod, after a Service's translation


class DataPlane:
    """Decides probes against one moment of the cluster: build one per probe."""

    def __init__(self, objects: Objects, network: Network) -> None:
        self.cluster = Cluster(objects)
        self.network = network
        self.dns = ClusterDns(self.cluster, network)
        self.steps: list[str] = []

    def probe(self, source: Obj, spec_text: str | None) -> Observation:
        try:
            spec = parse(spec_text)
        except SpecError as exc:
            return Observation({"version": 1, "type": _type_of(spec_text), "outcome": "error",
                                "error": str(exc)[:ERROR_LIMIT]}, [str(exc)])
        match spec.type:
            case "tcp":
                result = self._tcp(source, spec)
            case "http":
                result = self._http(source, spec)
            case _:
                result = self._dns(source, spec)
        result = {"version": 1, "type": spec.type,
                  **{k: v for k, v in result.items() if v is not None}}
        result["latencyMs"] = round(min(float(result.get("latencyMs") or 0.0),
                                        spec.timeout_seconds * 1000), 3)
        if result.get("error"):
            result["error"] = str(result["error"])[:ERROR_LIMIT]
        return Observation(result, self.steps)

    # --- the three kinds ---------------------------------------------------------------

    def _dns(self, source: Obj, spec: ProbeSpec) -> dict[str, Any]:
        answer, elapsed, error = self._resolve(source, spec.name, spec.record_type, spec)
        dns: dict[str, Any] = {"rcode": answer.rcode, "answers": answer.answers[:32]}
        if answer.canonical_name:
            dns["canonicalName"] = answer.canonical_name
        result: dict[str, Any] = {"outcome": "resolved" if answer.resolved else "dns_failed",
                                  "latencyMs": elapsed, "dns": dns,
                                  "resolved": answer.addresses()[:32]}
        if not answer.resolved:
            result["error"] = error or _dns_error(spec.name, answer)
        return result

    def _opened(self, source: Obj, spec: ProbeSpec
                ) -> tuple[_Connection | None, dict[str, Any]]:
        """Resolve the probe's host and open its connection: the connection (None when the
        name did not resolve) and the message so far."""
        addresses, elapsed, failure = self._addresses(source, spec)
        if failure is not None:
            return None, failure
        connection = self._connect(source, addresses[0], spec.port)
        return connection, {"outcome": connection.outcome,
                            "latencyMs": elapsed + connection.latency_ms,
                            "resolved": addresses[:32], "peer": _peer(connection.peer, spec.port)}

    def _tcp(self, source: Obj, spec: ProbeSpec) -> dict[str, Any]:
        connection, result = self._opened(source, spec)
        if connection is None:
            return result
        if connection.outcome == "timeout":
            result["latencyMs"] = spec.timeout_seconds * 1000
        if connection.outcome != "connected":
            result["error"] = connection.why
        return result

    def _http(self, source: Obj, spec: ProbeSpec) -> dict[str, Any]:
        connection, result = self._opened(source, spec)
        if connection is None:
            return result
        if connection.outcome != "connected" or connection.dst_pod is None:
            if connection.outcome == "timeout":
                result["latencyMs"] = spec.timeout_seconds * 1000
            if connection.outcome == "connected":  # an address outside the cluster
                result["outcome"] = "responded"
                result["http"] = {"status": 200, "headers": {"server": "external"}}
            else:
                result["error"] = connection.why
            return result
        pod = connection.dst_pod
        serves_tls = _serves_tls(pod, connection.pod_port, connection.service, spec.port)
        http: dict[str, Any] = {}
        if spec.scheme == "https":
            result["latencyMs"] += self.network.tls_ms
            if not serves_tls:
                result.update(outcome="tls_failed", error="TLS handshake failed: wrong version "
                              "number (the server speaks plain HTTP on this port)")
                return result
            names = _certificate_names(self.cluster, pod, self.network.cluster_domain)
            verified = spec.host.lower() in names
            tls: dict[str, Any] = {"version": "TLSv1.3", "cipher": "TLS_AES_128_GCM_SHA256",
                                   "verified": verified, "peerSubject": f"CN={names[0]}",
                                   "peerSans": names[:16]}
            if not verified and not spec.insecure_skip_verify:
                result.update(outcome="tls_failed", error=(
                    f"certificate verify failed: hostname {spec.host!r} is not among the "
                    "certificate's names"))
                return result
            http["tls"] = tls
        result["latencyMs"] += self.network.http_ms
        mesh = has_sidecar(pod) and has_sidecar(source)
        if spec.scheme == "http" and serves_tls:
            status = 400  # what Go and nginx answer a plain request on a TLS port
        else:
            status = self.network.http_status.get(key_of(pod), 200)
        headers = {"content-type": "text/plain; charset=utf-8",
                   "server": "istio-envoy" if mesh else "netsight-sim"}
        if mesh:
            headers["x-envoy-upstream-service-time"] = str(int(self.network.http_ms))
        http.update(status=status, headers=headers)
        result.update(outcome="responded", http=http)
        return result

    # --- steps -------------------------------------------------------------------------

    def _addresses(self, source: Obj, spec: ProbeSpec
                   ) -> tuple[list[str], float, dict[str, Any] | None]:
        """The host's addresses and the time spent finding them, or the probe's result when
        the name does not resolve."""
        try:
            ipaddress.ip_address(spec.host)
        except ValueError:
            pass
        else:
            return [spec.host], 0.0, None
        answer, elapsed, error = self._resolve(source, spec.host, "A", spec)
        addresses = answer.addresses()
        if answer.resolved and addresses:
            return addresses, elapsed, None
        return [], elapsed, {"outcome": "dns_failed", "latencyMs": elapsed,
                             "dns": {"rcode": answer.rcode, "answers": answer.answers[:32]},
                             "error": error or _dns_error(spec.host, answer)}

    def _resolve(self, source: Obj, name: str, record_type: str, spec: ProbeSpec
                 ) -> tuple[Answer, float, str | None]:
        conf = ResolvConf.of(source, self.network, self.dns.server_ip())
        if conf.cluster:
            blocked = self._dns_blocked(source)
            if blocked is not None:
                self.steps.append(blocked)
                return Answer(rcode="TIMEOUT"), spec.timeout_seconds * 1000, blocked
        answer = self.dns.resolve(conf, name, record_type)
        self.steps.append(f"dns {name} {record_type}: tried {answer.tried} -> {answer.rcode} "
                          f"{answer.answers}")
        if answer.rcode == "SERVFAIL" and self.network.dns_down and conf.cluster:
            return answer, self.network.dns_ms, "the cluster DNS answers SERVFAIL (DNS down)"
        return answer, self.network.dns_ms * max(1, len(answer.tried)), None

    def _dns_blocked(self, source: Obj) -> str | None:
        """Why the pod's queries never reach the cluster DNS, if they do not: its node drops
        them, or a policy denies UDP 53 to the kube-dns pods. Without a kube-system/kube-dns
        Service the simulated DNS sits off the pod network (as a node-local cache would)."""
        node = _node_name(source)
        if node in self.network.dropping_nodes:
            return f"DNS timed out: node {node} drops the pod's traffic"
        service = self.cluster.get(SERVICE, "kube-system", "kube-dns")
        if service is None:
            return None
        routed = route(self.cluster, service, 53, "UDP", key_of(source))
        if routed is None or routed.backend is None:
            return "DNS timed out: kube-system/kube-dns has no ready endpoint on 53/UDP"
        dst = self.cluster.endpoint(routed.backend.ip)
        flow = Flow(self.cluster.pod_endpoint(source), dst, routed.backend.port, "UDP")
        verdict = evaluate(self.cluster, flow, self.network.cni)
        if not verdict.allowed:
            return f"DNS timed out: the CNI drops UDP 53 to kube-dns: {verdict.explain()}"
        return None

    def _connect(self, source: Obj, ip: str, port: int) -> _Connection:
        service = service_at(self.cluster, ip)
        if service is not None:
            routed = route(self.cluster, service, port, "TCP", key_of(source))
            if routed is None:
                why = (f"Service {key_of(service)} has no port {port}/TCP: nothing intercepts "
                       "the packet and no host holds the address")
                self.steps.append(why)
                return _Connection("timeout", 0.0, ip, why=why)
            self.steps.append(routed.reason)
            if routed.backend is None:
                return _Connection("refused", self.network.hop_ms, ip, service=service,
                                   why=routed.reason)
            connection = self._connect_pod(source, routed.backend.ip, routed.backend.port)
            connection.peer, connection.service = ip, service
            return connection
        return self._connect_pod(source, ip, port)

    def _connect_pod(self, source: Obj, ip: str, port: int) -> _Connection:
        cluster, network = self.cluster, self.network
        dst = cluster.endpoint(ip)
        src = cluster.pod_endpoint(source)
        for end in (src, dst):
            node = _node_name(end.pod) if end.pod is not None else (
                name_of(end.node) if end.node is not None else None)
            if node in network.dropping_nodes:
                why = f"node {node} drops every packet to and from its pods"
                self.steps.append(why)
                return _Connection("timeout", 0.0, ip, dst.pod, why=why)
        external = any(ip in addresses for addresses in network.external.values())
        if dst.pod is None and dst.node is None and not external:
            why = f"no pod, node or known host holds {ip}"
            self.steps.append(why)
            return _Connection("timeout", 0.0, ip, why=why)
        verdict = evaluate(cluster, Flow(src, dst, port, "TCP"), network.cni)
        self.steps.append(f"policy: {verdict.explain()}")
        if not verdict.allowed:
            return _Connection("timeout", 0.0, ip, dst.pod,
                               why=f"the CNI drops the connection: {verdict.explain()}")
        latency = 3 * (network.hop_ms if _same_node(src, dst) else network.node_hop_ms)
        if dst.pod is None:
            if external:
                return _Connection("connected", latency, ip)
            return _Connection("refused", latency, ip,
                               why=f"nothing listens on {dst.describe()} port {port}")
        declared = any(int(p.get("containerPort") or 0) == port
                       and (p.get("protocol") or "TCP") == "TCP"
                       for p in container_ports(dst.pod))
        if not network.listens(key_of(dst.pod), port, declared):
            why = (f"pod {key_of(dst.pod)} declares port {port} but nothing listens on it"
                   if declared else f"pod {key_of(dst.pod)} does not listen on port {port}")
            self.steps.append(why)
            return _Connection("refused", latency, ip, dst.pod, why=why)
        refusal = refuses_plaintext(cluster, src.pod, dst.pod, port) or \
            linkerd.refuses(cluster, src.pod, dst.pod, port)
        if refusal is not None:
            self.steps.append(refusal)
            return _Connection("reset", latency, ip, dst.pod, why=refusal)
        return _Connection("connected", latency, ip, dst.pod, pod_port=port)


def _type_of(text: str | None) -> str:
    try:
        kind = json.loads(text or "").get("type")
    except (json.JSONDecodeError, AttributeError):
        return "tcp"
    return kind if kind in ("tcp", "http", "dns") else "tcp"


def _dns_error(name: str, answer: Answer) -> str:
    if answer.rcode == "NOERROR":
        return f"{name}: the name exists but has no record of that type"
    return f"{name}: {answer.rcode} (tried {', '.join(answer.tried) or 'no server'})"


def _node_name(pod: Mapping[str, Any] | None) -> str | None:
    node = ((pod or {}).get("spec") or {}).get("nodeName")
    return str(node) if node else None


def _same_node(a: Endpoint, b: Endpoint) -> bool:
    return _node_name(a.pod) is not None and _node_name(a.pod) == _node_name(b.pod)


def _serves_tls(pod: Mapping[str, Any], port: int, service: Mapping[str, Any] | None,
                service_port: int) -> bool:
    """Whether the application speaks TLS on ``port``: its container port is named so
    (https, tls, grpcs…), or the Service port it came through declares appProtocol https."""
    for entry in container_ports(pod):
        name = str(entry.get("name") or "")
        if int(entry.get("containerPort") or 0) == port and name.startswith(_TLS_PORT_NAMES):
            return True
    for entry in ((service or {}).get("spec") or {}).get("ports") or ():
        if int(entry.get("port") or 0) == service_port and (
                entry.get("appProtocol") in ("https", "kubernetes.io/wss")
                or str(entry.get("name") or "").startswith(_TLS_PORT_NAMES)):
            return True
    return False


def _certificate_names(cluster: Cluster, pod: Mapping[str, Any], domain: str) -> list[str]:
    """The names on the certificate the pod serves: its Services' DNS names (issued by the
    cluster's CA, which the probe trusts), then the pod's own name."""
    namespace = namespace_of(pod)
    labels = (pod.get("metadata") or {}).get("labels") or {}
    names: list[str] = []
    for service in cluster.each(SERVICE, namespace):
        selector = (service.get("spec") or {}).get("selector") or {}
        if selector and all(labels.get(k) == v for k, v in selector.items()):
            svc = name_of(service)
            names += [svc, f"{svc}.{namespace}", f"{svc}.{namespace}.svc",
                      f"{svc}.{namespace}.svc.{domain}"]
    return [*names, name_of(pod)]


def _peer(ip: str | None, port: int) -> str | None:
    """As the probe program writes it: the address and port it connected to."""
    return None if ip is None else f"{ip}:{port}"
