"""Cluster DNS as kube-dns/CoreDNS serves it, and a pod's resolver as the kubelet writes it.

Records (Kubernetes "DNS for Services and Pods"): ``<svc>.<ns>.svc.<domain>`` is the
ClusterIP, a headless Service's ready endpoint addresses (all of them with
``publishNotReadyAddresses``), or a CNAME to an ExternalName; ``<hostname>.<svc>.<ns>.svc``
names a headless endpoint with a hostname; ``<a-b-c-d>.<ns>.pod.<domain>`` is that address
(CoreDNS ``pods insecure``); SRV ``_<port>._<proto>.<svc>.<ns>.svc`` for named ports. Names
outside the domain go upstream (:attr:`Network.external`).

The resolver (``/etc/resolv.conf`` as the kubelet writes it): with ``dnsPolicy``
ClusterFirst the search path ``<ns>.svc.<domain> svc.<domain> <domain>`` and ``ndots:5``,
then ``dnsConfig`` (searches appended, options overriding); ``Default`` (and ClusterFirst
on the host network) the node's resolver, which knows no cluster names; ``None`` only
``dnsConfig``. A name with fewer dots than ``ndots`` tries the search path first, then
itself; one with as many or more the reverse; a trailing dot means itself only.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from netsight.sim.dataplane.network import Network
from netsight.sim.dataplane.snapshot import SERVICE, SLICE, Cluster, host_network, namespace_of

CLUSTER_DNS_IP: Final = "10.96.0.10"  # kube-dns's ClusterIP where the cluster has none
MAX_CNAMES: Final = 8


@dataclass
class Answer:
    rcode: str = "NOERROR"  # NOERROR, NXDOMAIN, SERVFAIL, TIMEOUT
    answers: list[str] = field(default_factory=list)
    canonical_name: str | None = None  # the FQDN that answered, search path applied
    tried: list[str] = field(default_factory=list)  # every FQDN asked, in order

    @property
    def resolved(self) -> bool:
        return self.rcode == "NOERROR" and bool(self.answers)

    def addresses(self) -> list[str]:
        found = []
        for value in self.answers:
            try:
                ipaddress.ip_address(value)
            except ValueError:
                continue
            found.append(value)
        return found


@dataclass(frozen=True)
class ResolvConf:
    nameservers: tuple[str, ...]
    searches: tuple[str, ...]
    ndots: int
    cluster: bool  # the cluster DNS is among the nameservers

    @classmethod
    def of(cls, pod: Mapping[str, Any], network: Network, dns_ip: str) -> ResolvConf:
        spec = pod.get("spec") or {}
        policy = spec.get("dnsPolicy") or "ClusterFirst"
        config = spec.get("dnsConfig") or {}
        domain = network.cluster_domain
        namespace = namespace_of(pod)
        if policy == "ClusterFirst" and host_network(pod):
            policy = "Default"  # the kubelet gives host-network pods the node's resolver
        if policy in ("ClusterFirst", "ClusterFirstWithHostNet"):
            nameservers = [dns_ip]
            searches = [f"{namespace}.svc.{domain}", f"svc.{domain}", domain]
            ndots = 5
        elif policy == "None":
            nameservers, searches, ndots = [], [], 1
        else:  # Default: the node's resolv.conf, which the simulated nodes keep empty
            nameservers, searches, ndots = ["node-resolver"], [], 1
        nameservers += [str(s) for s in config.get("nameservers") or ()]
        searches += [str(s) for s in config.get("searches") or ()]
        for option in config.get("options") or ():
            if option.get("name") == "ndots" and str(option.get("value", "")).isdigit():
                ndots = min(int(option["value"]), 15)  # glibc caps ndots at 15
        return cls(tuple(nameservers), tuple(searches), ndots, dns_ip in nameservers)

    def candidates(self, name: str) -> list[str]:
        if name.endswith("."):
            return [name.rstrip(".")]
        expanded = [f"{name}.{search}" for search in self.searches]
        if name.count(".") >= self.ndots:
            return [name, *expanded]
        return [*expanded, name]


class ClusterDns:
    """The records of one cluster at one moment."""

    def __init__(self, cluster: Cluster, network: Network) -> None:
        self.cluster, self.network = cluster, network
        self.domain = network.cluster_domain.lower()

    def server_ip(self) -> str:
        service = self.cluster.get(SERVICE, "kube-system", "kube-dns")
        ip = ((service or {}).get("spec") or {}).get("clusterIP")
        return str(ip) if ip and ip != "None" else CLUSTER_DNS_IP

    def resolve(self, conf: ResolvConf, name: str, record_type: str) -> Answer:
        answer = Answer()
        if not conf.nameservers:
            answer.rcode = "SERVFAIL"  # no nameserver: the resolver has nobody to ask
            return answer
        if conf.cluster and self.network.dns_down:
            answer.rcode = "SERVFAIL"
            answer.tried = conf.candidates(name.lower())[:1]
            return answer
        last = "NXDOMAIN"
        for candidate in conf.candidates(name.lower()):
            answer.tried.append(candidate)
            rcode, values = self.query(candidate, record_type, cluster=conf.cluster)
            if rcode == "NOERROR" and values:
                answer.rcode, answer.answers, answer.canonical_name = rcode, values, candidate
                return answer
            if rcode == "NOERROR":
                last = "NOERROR"  # NODATA: the name exists without this record type
        answer.rcode = last
        return answer

    def query(self, fqdn: str, record_type: str, *, cluster: bool) -> tuple[str, list[str]]:
        """(rcode, answers) for one fully-qualified name; CNAMEs followed for A/AAAA."""
        name = fqdn.rstrip(".")
        chain: list[str] = []
        for _ in range(MAX_CNAMES):
            rcode, values, cname = self._lookup(name, record_type, cluster=cluster)
            if cname is None or record_type == "CNAME":
                return rcode, values
            chain.append(cname)
            name = cname
        return "SERVFAIL", []  # a CNAME loop

    def _lookup(self, name: str, record_type: str, *, cluster: bool
                ) -> tuple[str, list[str], str | None]:
        suffix = f".{self.domain}"
        if not name.endswith(suffix) or not cluster:
            if name.endswith(suffix):
                return "NXDOMAIN", [], None  # the node's resolver knows no cluster names
            addresses = self.network.external.get(name)
            if addresses is None:
                return "NXDOMAIN", [], None
            return "NOERROR", _of_type(addresses, record_type), None
        labels = name[: -len(suffix)].split(".")
        if len(labels) >= 3 and labels[-1] == "svc":
            return self._service_record(labels[:-1], record_type)
        if len(labels) == 3 and labels[-1] == "pod":
            address = labels[0].replace("-", ".")
            try:
                ipaddress.IPv4Address(address)
            except ValueError:
                return "NXDOMAIN", [], None
            return "NOERROR", _of_type([address], record_type), None
        return "NXDOMAIN", [], None

    def _service_record(self, labels: list[str], record_type: str
                        ) -> tuple[str, list[str], str | None]:
        if labels[0].startswith("_") and len(labels) == 4:
            return self._srv(labels, record_type)
        if len(labels) == 2:
            hostname, (service_name, namespace) = None, labels
        elif len(labels) == 3:
            hostname, service_name, namespace = labels
        else:
            return "NXDOMAIN", [], None
        service = self.cluster.get(SERVICE, namespace, service_name)
        if service is None:
            return "NXDOMAIN", [], None
        spec = service.get("spec") or {}
        if spec.get("type") == "ExternalName":
            if hostname is not None:
                return "NXDOMAIN", [], None
            target = str(spec.get("externalName") or "").lower().rstrip(".")
            if record_type == "CNAME":
                return "NOERROR", [target], None
            return "NOERROR", [], target
        cluster_ip = spec.get("clusterIP")
        if cluster_ip and cluster_ip != "None":
            if hostname is not None:
                return "NXDOMAIN", [], None
            return "NOERROR", _of_type([str(cluster_ip)], record_type), None
        endpoints = self.headless_endpoints(service)
        if hostname is not None:
            endpoints = [e for e in endpoints if e.get("hostname") == hostname]
            if not endpoints:
                return "NXDOMAIN", [], None
        addresses = [str(a) for e in endpoints for a in e.get("addresses") or ()]
        return "NOERROR", _of_type(addresses, record_type), None

    def headless_endpoints(self, service: Mapping[str, Any]) -> list[Mapping[str, Any]]:
        publish = bool((service.get("spec") or {}).get("publishNotReadyAddresses"))
        return [e for s in self.slices(service) for e in s.get("endpoints") or ()
                if publish or (e.get("conditions") or {}).get("ready") is not False]

    def slices(self, service: Mapping[str, Any]) -> list[Mapping[str, Any]]:
        meta = service.get("metadata") or {}
        return [s for s in self.cluster.each(SLICE, meta.get("namespace"))
                if ((s.get("metadata") or {}).get("labels") or {}).get(
                    "kubernetes.io/service-name") == meta.get("name")]

    def _srv(self, labels: list[str], record_type: str) -> tuple[str, list[str], str | None]:
        port_name, protocol, service_name, namespace = labels
        service = self.cluster.get(SERVICE, namespace, service_name)
        if service is None:
            return "NXDOMAIN", [], None
        ports = [p for p in (service.get("spec") or {}).get("ports") or ()
                 if f"_{p.get('name') or ''}" == port_name
                 and f"_{(p.get('protocol') or 'TCP').lower()}" == protocol]
        if not ports or record_type != "SRV":
            return ("NOERROR" if ports else "NXDOMAIN"), [], None
        target = f"{service_name}.{namespace}.svc.{self.domain}."
        return "NOERROR", [f"0 100 {int(ports[0]['port'])} {target}"], None


def _of_type(addresses: list[str], record_type: str) -> list[str]:
    family = {"A": 4, "AAAA": 6}.get(record_type)
    if family is None:
        return []
    return [a for a in addresses if ipaddress.ip_address(a).version == family]
