"""What the kubernetes plugin of CoreDNS answers for a name of the cluster domain, decided on
the graph (plugin/kubernetes): a Service's ClusterIP, a headless Service's ready endpoints
(with publishNotReadyAddresses, all of them), an ExternalName's CNAME, SRV records of named
ports, a headless endpoint by its pod's hostname or its address with dashes, and pods by
address as the ``pods`` option allows. ``plugin`` None: the Corefile was not read, and the
plugin's defaults hold where they do not decide the answer."""

from __future__ import annotations

import ipaddress

from netsight.analyzers.services.cluster_dns import ClusterAnswer, Kubernetes, in_zone
from netsight.analyzers.services.corefile import fqdn
from netsight.analyzers.services.service_reports import TERMINAL_PHASES
from netsight.graph.model.kinds import Kind, Rel, make_key
from netsight.graph.model.records import (
    EndpointSliceRecord,
    EndpointsRecord,
    PodRecord,
    ServiceRecord,
)
from netsight.graph.store.live import GraphView, Source


class KubernetesRecords:
    def __init__(self, view: GraphView, domain: str) -> None:
        self.view, self.domain, self.zone = view, domain, fqdn(domain)

    def answer(self, name: str, plugin: Kubernetes | None) -> ClusterAnswer:
        zone = self.zone
        if plugin is not None:
            zone = max((z for z in plugin.zones if in_zone(name, z)), key=len, default=zone)
        relative = name[:-len(zone)].rstrip(".") if zone != "." else name.rstrip(".")
        labels = relative.split(".") if relative else []
        if not labels:
            return ClusterAnswer(rcode="nodata", why="the zone's apex holds no address")
        if labels[-1] == "pod":
            return self.pod_record(labels[:-1], plugin)
        if labels[-1] != "svc":
            return ClusterAnswer(rcode="nxdomain", why="neither a Service nor a pod name")
        parts = labels[:-1]
        if not parts:
            return ClusterAnswer(rcode="nodata")
        namespace = parts[-1]
        if plugin is not None and plugin.namespaces is not None \
                and namespace not in plugin.namespaces:
            return ClusterAnswer(rcode="nxdomain", why=f"namespace {namespace} is not in the "
                                 "kubernetes plugin's namespaces")
        if namespace not in self.view.namespaces():
            if self.view.source is Source.MANIFESTS and not self.view.namespaces():
                return ClusterAnswer(rcode="undecided", why="the input holds no namespace")
            return ClusterAnswer(rcode="nxdomain", why=f"no namespace {namespace}")
        if len(parts) == 1:
            return ClusterAnswer(rcode="nodata", why=f"namespace {namespace} only")
        service = self.view.get(make_key(Kind.SERVICE, namespace, parts[-2]))
        if not isinstance(service, ServiceRecord):
            return ClusterAnswer(rcode="nxdomain",
                                 why=f"no Service {parts[-2]} in namespace {namespace}")
        rest = parts[:-2]
        if not rest:
            return self.service_records(service, plugin)
        if len(rest) == 2 and rest[0].startswith("_") and rest[1].startswith("_"):
            return self.srv_records(service, rest[0][1:], rest[1][1:])
        if len(rest) == 1:
            return self.endpoint_record(service, rest[0], plugin)
        return ClusterAnswer(rcode="nxdomain", why="too many labels for a Service name")

    def service_records(self, service: ServiceRecord, plugin: Kubernetes | None
                        ) -> ClusterAnswer:
        if service.type == "ExternalName":
            target = service.external_name
            if not target:
                return ClusterAnswer(rcode="nxdomain", why="ExternalName Service without "
                                     "spec.externalName")
            return ClusterAnswer((f"CNAME {fqdn(target)}",), cname=target)
        if service.headless:
            addresses = self.ready_addresses(service)
            if isinstance(addresses, str):
                return ClusterAnswer(rcode="undecided", why=addresses)
            if not addresses:
                return ClusterAnswer(rcode="nxdomain", why=f"headless Service {service.ref} "
                                     "has no ready endpoints")
            return ClusterAnswer(tuple(f"A {a}" if ":" not in a else f"AAAA {a}"
                                       for a in addresses))
        if plugin is not None and plugin.ignore_empty_service:
            addresses = self.ready_addresses(service)
            if addresses == []:
                return ClusterAnswer(rcode="nxdomain", why="no ready endpoints, and the "
                                     "kubernetes plugin has ignore empty_service")
        ips = [ip for ip in service.cluster_ips if ip != "None"]
        if not ips:
            return ClusterAnswer((f"A <ClusterIP of {service.ref}, allocated by the API "
                                  "server>",))
        return ClusterAnswer(tuple(f"A {ip}" if ":" not in ip else f"AAAA {ip}"
                                   for ip in ips))

    def srv_records(self, service: ServiceRecord, port_name: str, protocol: str
                    ) -> ClusterAnswer:
        target = f"{service.name}.{service.namespace}.svc.{self.domain}."
        for port in service.ports:
            if port.name == port_name and port.protocol.lower() == protocol:
                if service.headless:
                    addresses = self.ready_addresses(service)
                    if isinstance(addresses, str):
                        return ClusterAnswer(rcode="undecided", why=addresses)
                    return ClusterAnswer(tuple(
                        f"SRV 0 {100 // max(len(addresses), 1)} {port.port} "
                        f"{dashed(a)}.{target}" for a in addresses),
                        rcode="answer" if addresses else "nxdomain")
                return ClusterAnswer((f"SRV 0 100 {port.port} {target}",))
        named = ", ".join(f"_{p.name}._{p.protocol.lower()}" for p in service.ports
                          if p.name) or "none"
        return ClusterAnswer(rcode="nxdomain", why=f"Service {service.ref} has no port named "
                             f"{port_name} over {protocol.upper()} (its named ports: {named})")

    def endpoint_record(self, service: ServiceRecord, label: str, plugin: Kubernetes | None
                        ) -> ClusterAnswer:
        if not service.headless:
            return ClusterAnswer(rcode="nxdomain", why=f"Service {service.ref} is not "
                                 "headless: it has no per-pod names")
        addresses = self.ready_addresses(service)
        if isinstance(addresses, str):
            return ClusterAnswer(rcode="undecided", why=addresses)
        found = [a for a in addresses if dashed(a) == label]
        for pod in self.view.for_each(Kind.POD, service.namespace):
            if not isinstance(pod, PodRecord):
                continue
            named = (pod.hostname == label and pod.subdomain == service.name) or (
                plugin is not None and plugin.endpoint_pod_names and pod.name == label)
            if named:
                found.extend(ip for ip in pod.ips if ip in addresses)
        if not found:
            return ClusterAnswer(rcode="nxdomain", why=f"no ready endpoint of {service.ref} "
                                 f"is named {label} (a pod's hostname with subdomain "
                                 f"{service.name}, or its address with dashes)")
        return ClusterAnswer(tuple(f"A {a}" for a in dict.fromkeys(found)))

    def pod_record(self, parts: list[str], plugin: Kubernetes | None) -> ClusterAnswer:
        if len(parts) != 2:
            return ClusterAnswer(rcode="nxdomain", why="a pod name is <address with dashes>."
                                 "<namespace>.pod")
        label, namespace = parts
        address = undashed(label)
        if address is None:
            return ClusterAnswer(rcode="nxdomain", why=f"{label} is not an address with "
                                 "dashes")
        if plugin is None:
            return ClusterAnswer(rcode="undecided", why="the kubernetes plugin's pods mode "
                                 "(disabled by default) is not known without the Corefile")
        if plugin.pods == "insecure":
            return ClusterAnswer((f"A {address}",))
        if plugin.pods == "verified":
            for pod in self.view.for_each(Kind.POD, namespace):
                if isinstance(pod, PodRecord) and address in pod.ips:
                    return ClusterAnswer((f"A {address}",))
            return ClusterAnswer(rcode="nxdomain", why=f"pods verified: no pod of "
                                 f"{namespace} has the address {address}")
        return ClusterAnswer(rcode="nxdomain", why="the kubernetes plugin's pods mode is "
                             f"{plugin.pods}")

    def ready_addresses(self, service: ServiceRecord) -> list[str] | str:
        """The addresses a headless Service's name answers with (ready endpoints, or all with
        publishNotReadyAddresses), or why they are not known."""
        view = self.view
        unreadable = view.unreadable(Kind.ENDPOINT_SLICE)
        if unreadable:
            return f"endpoints: {unreadable}"
        found: list[str] = []
        groups = [s.group for s in view.neighbors(service.key, Rel.BELONGS_TO, incoming=True,
                                                  kind=Kind.ENDPOINT_SLICE)
                  if isinstance(s, EndpointSliceRecord)]
        if not groups:
            groups = [g for e in view.neighbors(service.key, Rel.BELONGS_TO, incoming=True,
                                                kind=Kind.ENDPOINTS)
                      if isinstance(e, EndpointsRecord) for g in e.subsets]
        if groups:
            for group in groups:
                for endpoint in group.endpoints:
                    if endpoint.is_ready or service.publish_not_ready:
                        found.extend(endpoint.addresses)
            return list(dict.fromkeys(found))
        if view.source is not Source.MANIFESTS:
            return []
        if service.selector is None:
            return "the Service has no selector and the input holds no EndpointSlices for it"
        unknown = False
        for pod in view.neighbors(service.key, Rel.SELECTS, kind=Kind.POD):
            if not isinstance(pod, PodRecord) or pod.phase in TERMINAL_PHASES:
                continue
            if service.publish_not_ready or (pod.ready and not pod.terminating):
                found.extend(pod.ips)
            unknown |= pod.ready is None
        if not found and unknown:
            return "the readiness of the selected pods is not stated in the input"
        return list(dict.fromkeys(found))


def dashed(address: str) -> str:
    return address.replace(".", "-").replace(":", "-")


def undashed(label: str) -> str | None:
    """The address a pod-form label names (1-2-3-4; IPv6 with '-' for ':'), or None."""
    for candidate in (label.replace("-", "."), label.replace("-", ":")):
        try:
            return ipaddress.ip_address(candidate).compressed
        except ValueError:
            continue
    return None
