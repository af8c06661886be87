"""The endpoint-slice controller of the simulated cluster: EndpointSlices follow Services and pods.

It does what kube-controller-manager's endpointslice controller does (``k8s.io/endpointslice``,
``reconciler.go`` and ``utils.go``), synchronously, on the write that calls for it:

- a Service with a selector gets the pods of its namespace that match it, one set of slices
  per address type (``spec.ipFamilies``; else the family of the cluster IP; a headless
  Service without families gets both), labelled ``kubernetes.io/service-name`` and
  ``endpointslice.kubernetes.io/managed-by``, with the Service's own labels;
- pods without an IP or in a terminal phase are left out; an endpoint is ``serving`` when
  the pod is Ready, ``terminating`` once it has a deletionTimestamp, and ``ready`` when
  serving and not terminating (or the Service publishes not-ready addresses);
- each Service port resolves its targetPort against the pod's container ports (a name must
  match a port's name and protocol; a port that does not resolve is left out of that pod's
  ports), and pods with the same resolved ports share slices of at most
  ``max_endpoints_per_slice`` endpoints;
- existing slices are kept and changed as little as upstream's reconciler does: endpoints no
  longer wanted are removed, changed ones rewritten, new ones fill the slices being updated,
  then the fullest unchanged slice they fit in, then new slices; an empty slice is deleted,
  and a Service with no endpoints keeps one placeholder slice without ports;
- Services without a selector, and ExternalName Services, are left alone (their slices,
  if any, are someone else's), and a deleted Service's slices go with it (the garbage
  collector's part, through the owner reference).

The simulator need not hold Node objects: a pod on a node it does not know is still listed
(upstream skips it and retries until the Node appears), with no zone; with a Node, the zone
is its ``topology.kubernetes.io/zone`` label.

The demo runs it (:func:`netsight.sim.demo.load_demo`). Synthetic clusters come with the
slices it would write, and churn keeps them so at benchmark rates
(``tests/sim/test_endpoint_slices.py`` checks that, started over either, it finds nothing
to change), so ``netsight sim --scale`` and the benchmarks do not run it.
"""

from __future__ import annotations

import ipaddress
from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any, Final

from netsight.sim.recorder import EventRecorder
from netsight.sim.resources import ResourceType
from netsight.sim.state import ApiError, Event, Obj, SimState, now, object_key

CONTROLLER: Final = "endpointslice-controller.k8s.io"
SERVICE_NAME: Final = "kubernetes.io/service-name"
MANAGED_BY: Final = "endpointslice.kubernetes.io/managed-by"
HEADLESS: Final = "service.kubernetes.io/headless"
TRIGGER_TIME: Final = "endpoints.kubernetes.io/last-change-trigger-time"
ZONE: Final = "topology.kubernetes.io/zone"
_RESERVED: Final = frozenset({SERVICE_NAME, MANAGED_BY, HEADLESS})
_TERMINAL_PHASES: Final = frozenset({"Succeeded", "Failed"})

PortsKey = tuple[tuple[str, int, str, str], ...]  # (name, port, protocol, appProtocol), sorted
EndpointKey = tuple[str, tuple[str, ...]]  # (pod uid or name, addresses)


def selector_of(service: Obj) -> dict[str, str] | None:
    """The Service's selector; None when it has none (an empty map is stored as none)."""
    selector = (service.get("spec") or {}).get("selector")
    return dict(selector) if selector else None


def address_types(service: Obj) -> list[str]:
    """getAddressTypesForService: from ipFamilies, else from the cluster IP."""
    spec = service.get("spec") or {}
    families = [f"IPv{f[-1]}" for f in spec.get("ipFamilies") or () if f in ("IPv4", "IPv6")]
    if families:
        return sorted(set(families))
    cluster_ip = spec.get("clusterIP") or ""
    if cluster_ip and cluster_ip != "None":
        return ["IPv6" if ":" in cluster_ip else "IPv4"]
    return ["IPv4", "IPv6"]  # headless, or no IP assigned yet: upstream assumes both


def _pod_ips(pod: Obj) -> list[str]:
    status = pod.get("status") or {}
    ips = [entry.get("ip") for entry in status.get("podIPs") or ()]
    # The API server keeps podIP and podIPs[0] equal; objects written by hand may give podIP.
    return [ip for ip in ips if ip] or ([status["podIP"]] if status.get("podIP") else [])


def _is_ready(pod: Obj) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (pod.get("status") or {}).get("conditions") or ())


def _find_port(pod: Obj, service_port: Mapping[str, Any]) -> int | None:
    """findPort: a number is taken as is; a name must name a container port of the same
    protocol (containers first, then sidecars: init containers that always restart)."""
    target = service_port.get("targetPort", service_port.get("port"))
    if isinstance(target, int):
        return target
    protocol = service_port.get("protocol") or "TCP"
    spec = pod.get("spec") or {}
    sidecars = [c for c in spec.get("initContainers") or () if c.get("restartPolicy") == "Always"]
    for container in [*(spec.get("containers") or ()), *sidecars]:
        for port in container.get("ports") or ():
            if port.get("name") == target and (port.get("protocol") or "TCP") == protocol:
                return int(port["containerPort"])
    return None


def endpoint_ports(service: Obj, pod: Obj) -> list[Obj]:
    """getEndpointPorts: the Service's ports as this pod serves them."""
    ports: list[Obj] = []
    for entry in (service.get("spec") or {}).get("ports") or ():
        number = _find_port(pod, entry)
        if number is None:
            continue
        port: Obj = {"name": entry.get("name") or "", "port": number,
                     "protocol": entry.get("protocol") or "TCP"}
        if entry.get("appProtocol"):
            port["appProtocol"] = entry["appProtocol"]
        ports.append(port)
    return ports


def ports_key(ports: Iterable[Mapping[str, Any]]) -> PortsKey:
    return tuple(sorted((p.get("name") or "", int(p.get("port") or 0), p.get("protocol") or "TCP",
                         p.get("appProtocol") or "") for p in ports))


def pod_endpoint(pod: Obj, service: Obj, address_type: str, zones: Mapping[str, str]
                 ) -> Obj | None:
    """podToEndpoint, or None when the pod has no address of this type."""
    family = 6 if address_type == "IPv6" else 4
    addresses = [ip for ip in _pod_ips(pod) if ipaddress.ip_address(ip).version == family]
    if not addresses:
        return None
    meta, spec = pod["metadata"], pod.get("spec") or {}
    serving = _is_ready(pod)
    terminating = bool(meta.get("deletionTimestamp"))
    publish = bool((service.get("spec") or {}).get("publishNotReadyAddresses"))
    endpoint: Obj = {
        "addresses": addresses,
        "conditions": {"ready": publish or (serving and not terminating), "serving": serving,
                       "terminating": terminating},
        "targetRef": {"kind": "Pod", "namespace": meta.get("namespace"), "name": meta["name"],
                      "uid": meta.get("uid")},
    }
    if spec.get("hostname") and spec.get("subdomain") == service["metadata"]["name"]:
        endpoint["hostname"] = spec["hostname"]
    node = spec.get("nodeName")
    if node:
        endpoint["nodeName"] = node
        if zones.get(node):
            endpoint["zone"] = zones[node]
    return endpoint


def endpoint_key(endpoint: Mapping[str, Any]) -> EndpointKey:
    ref = endpoint.get("targetRef") or {}
    return (str(ref.get("uid") or ref.get("name") or ""), tuple(endpoint.get("addresses") or ()))


def slice_labels(service: Obj) -> dict[str, str]:
    """setEndpointSliceLabels: the Service's labels, bar the reserved ones, plus those."""
    labels = {k: v for k, v in (service["metadata"].get("labels") or {}).items()
              if k not in _RESERVED}
    cluster_ip = (service.get("spec") or {}).get("clusterIP") or ""
    if cluster_ip in ("", "None"):
        labels[HEADLESS] = ""
    labels[SERVICE_NAME] = service["metadata"]["name"]
    labels[MANAGED_BY] = CONTROLLER
    return labels


def _owned_by(slice_: Obj, service: Obj) -> bool:
    uid = service["metadata"].get("uid")
    return any(o.get("uid") == uid and o.get("kind") == "Service" and o.get("apiVersion") == "v1"
               for o in slice_["metadata"].get("ownerReferences") or ())


class EndpointSliceController:
    """Keeps the EndpointSlices of a :class:`SimState` in step with its Services and pods.

    :meth:`start` reconciles every Service once (writing nothing where the slices are
    already right) and then follows every write to the state."""

    def __init__(self, state: SimState, *, max_endpoints_per_slice: int = 100) -> None:
        if not 1 <= max_endpoints_per_slice <= 1000:
            raise ValueError("max_endpoints_per_slice must be between 1 and 1000")
        self.state, self.most = state, max_endpoints_per_slice
        registry = state.registry
        self.service_type = registry.require("v1", "Service")
        self.pod_type = registry.require("v1", "Pod")
        self.slice_type = registry.require("discovery.k8s.io/v1", "EndpointSlice")
        self.node_type = registry.require("v1", "Node")
        self.writes = 0  # slices created, updated or deleted
        self._writing = False
        self.recorder = EventRecorder(state, "endpointslice-controller.k8s.io")

    def _store(self, rtype: ResourceType) -> dict[str, Obj]:
        return self.state.objects.get((rtype.group, rtype.kind), {})

    def start(self) -> None:
        self.state.observers.append(self.observe)
        pods_by_namespace: dict[str, list[Obj]] = defaultdict(list)
        for pod in self._store(self.pod_type).values():
            pods_by_namespace[pod["metadata"].get("namespace") or ""].append(pod)
        slices = self._slices_by_service()
        zones = self._zones()
        for service in list(self._store(self.service_type).values()):
            meta = service["metadata"]
            self._reconcile(service, pods_by_namespace.get(meta.get("namespace") or "", []),
                            slices.get((meta.get("namespace") or "", meta["name"]), []), zones)

    def stop(self) -> None:
        if self.observe in self.state.observers:
            self.state.observers.remove(self.observe)

    # --- what calls for a reconcile ------------------------------------------------------

    def observe(self, event: Event) -> None:
        if self._writing:
            return  # the controller's own writes
        kind = event.storage
        if kind == ("", "Service"):
            meta = event.new["metadata"]
            self.reconcile(meta.get("namespace") or "", meta["name"])
        elif kind == ("", "Pod"):
            self._pod_changed(event)
        elif kind == ("discovery.k8s.io", "EndpointSlice"):
            # Someone else changed or deleted a managed slice: put it right, as upstream
            # does when its tracker sees a slice it did not expect.
            labels = event.new["metadata"].get("labels") or {}
            if labels.get(MANAGED_BY) == CONTROLLER and labels.get(SERVICE_NAME):
                self.reconcile(event.new["metadata"].get("namespace") or "",
                               labels[SERVICE_NAME])
        elif kind == ("", "Node"):
            for service in list(self._store(self.service_type).values()):
                meta = service["metadata"]
                self.reconcile(meta.get("namespace") or "", meta["name"])

    def _pod_changed(self, event: Event) -> None:
        meta = event.new["metadata"]
        namespace = meta.get("namespace") or ""
        label_sets = [meta.get("labels") or {}]
        if event.old is not None:
            label_sets.append(event.old["metadata"].get("labels") or {})
        prefix = f"{namespace}/"
        for key, service in list(self._store(self.service_type).items()):
            if not key.startswith(prefix):
                continue
            selector = selector_of(service)
            if selector is not None and any(
                    all(labels.get(k) == v for k, v in selector.items())
                    for labels in label_sets):
                self.reconcile(namespace, service["metadata"]["name"])

    # --- reconciling -----------------------------------------------------------------------

    def reconcile(self, namespace: str, name: str) -> None:
        """Bring the slices of one Service (gone or not) in line with its pods."""
        service = self._store(self.service_type).get(object_key(namespace, name))
        existing = [s for s in self._store(self.slice_type).values()
                    if s["metadata"].get("namespace") == namespace
                    and (s["metadata"].get("labels") or {}).get(SERVICE_NAME) == name
                    and (s["metadata"].get("labels") or {}).get(MANAGED_BY) == CONTROLLER]
        if service is None:
            self._write_all([], [], existing)  # the garbage collector's part
            return
        prefix = f"{namespace}/"
        pods = [p for k, p in self._store(self.pod_type).items() if k.startswith(prefix)]
        self._reconcile(service, pods, existing, self._zones())

    def _reconcile(self, service: Obj, pods: list[Obj], existing: list[Obj],
                   zones: Mapping[str, str]) -> None:
        selector = selector_of(service)
        if selector is None or (service.get("spec") or {}).get("type") == "ExternalName":
            return  # no selector, or a DNS name: its slices (if any) are someone else's
        chosen = sorted((p for p in pods
                         if all((p["metadata"].get("labels") or {}).get(k) == v
                                for k, v in selector.items())
                         and (p.get("status") or {}).get("phase") not in _TERMINAL_PHASES
                         and _pod_ips(p)),
                        key=lambda p: p["metadata"]["name"])
        types = address_types(service)
        to_create: list[Obj] = []
        to_update: list[Obj] = []
        to_delete = [s for s in existing if s.get("addressType") not in types]
        for address_type in types:
            mine = [s for s in existing if s.get("addressType") == address_type]
            created, updated, deleted = self._by_address_type(service, chosen, mine,
                                                              address_type, zones)
            to_create += created
            to_update += updated
            to_delete += deleted
        try:
            self._write_all(to_create, to_update, to_delete)
        except ApiError as exc:
            # As upstream's syncService does: the Service carries the failure, and the next
            # change to it or its pods tries again.
            self.recorder.record(service, "Warning", "FailedToUpdateEndpointSlices",
                                 f"Error updating Endpoint Slices for Service "
                                 f"{service['metadata'].get('namespace')}/"
                                 f"{service['metadata']['name']}: {exc}", "Reconcile")

    def _by_address_type(self, service: Obj, pods: list[Obj], existing: list[Obj],
                         address_type: str, zones: Mapping[str, str]
                         ) -> tuple[list[Obj], list[Obj], list[Obj]]:
        desired: dict[PortsKey, tuple[list[Obj], dict[EndpointKey, Obj]]] = {}
        for pod in pods:
            ports = endpoint_ports(service, pod)
            group = desired.setdefault(ports_key(ports), (ports, {}))
            endpoint = pod_endpoint(pod, service, address_type, zones)
            if endpoint is not None:
                group[1][endpoint_key(endpoint)] = endpoint
        by_ports: dict[PortsKey, list[Obj]] = defaultdict(list)
        to_delete: list[Obj] = []
        for slice_ in existing:
            if _owned_by(slice_, service):
                by_ports[ports_key(slice_.get("ports") or ())].append(slice_)
            else:
                to_delete.append(slice_)  # left by an earlier Service of the same name
        to_create: list[Obj] = []
        to_update: list[Obj] = []
        for key, (ports, endpoints) in desired.items():
            created, updated, deleted = self._by_ports(service, by_ports.get(key, []),
                                                       endpoints, ports, address_type)
            to_create += created
            to_update += updated
            to_delete += deleted
        for key, slices in by_ports.items():
            if key not in desired:
                to_delete += slices
        if len(existing) == len(to_delete) and not to_create:
            placeholder = self._new_slice(service, [], address_type)
            if len(to_delete) == 1 and _same_placeholder(to_delete[0], placeholder, service):
                to_delete = []  # the placeholder is already there
            else:
                to_create.append(placeholder)
        # finalize: a slice about to be deleted is reused for one about to be created.
        while to_create and to_delete:
            old = next((s for s in to_delete if _owned_by(s, service)), None)
            if old is None:
                break
            to_delete.remove(old)
            new = to_create.pop()
            new["metadata"] = {**old["metadata"], "labels": new["metadata"]["labels"]}
            to_update.append(new)
        return to_create, to_update, to_delete

    def _by_ports(self, service: Obj, existing: list[Obj], desired: dict[EndpointKey, Obj],
                  ports: list[Obj], address_type: str
                  ) -> tuple[list[Obj], list[Obj], list[Obj]]:
        """reconcileByPortMapping: keep, fill, then add slices."""
        labels = slice_labels(service)
        updated: dict[str, Obj] = {}
        unchanged: dict[str, Obj] = {}
        to_delete: list[Obj] = []
        for slice_ in sorted(existing, key=lambda s: s["metadata"]["name"]):
            kept: list[Obj] = []
            changed = False
            for endpoint in slice_.get("endpoints") or ():
                want = desired.pop(endpoint_key(endpoint), None)
                if want is not None:
                    kept.append(want)
                    changed = changed or want != endpoint
            name = slice_["metadata"]["name"]
            if changed or len(kept) != len(slice_.get("endpoints") or ()):
                if not kept:
                    to_delete.append(slice_)
                else:
                    updated[name] = self._changed(slice_, labels, kept)
            elif slice_["metadata"].get("labels") != labels:
                updated[name] = self._changed(slice_, labels, kept)
            else:
                unchanged[name] = slice_
        remaining = list(desired.values())
        for slice_ in sorted(updated.values(), key=lambda s: -len(s["endpoints"])):
            room = self.most - len(slice_["endpoints"])
            if room > 0 and remaining:
                slice_["endpoints"] = [*slice_["endpoints"], *remaining[:room]]
                remaining = remaining[room:]
        to_create: list[Obj] = []
        while remaining:
            fill: Obj | None = None
            if len(remaining) < self.most and unchanged:
                fill = _slice_to_fill(list(unchanged.values()), len(remaining), self.most)
            if fill is None:
                fill = self._new_slice(service, ports, address_type)
                to_create.append(fill)
            else:
                name = fill["metadata"]["name"]
                del unchanged[name]
                fill = updated[name] = self._changed(fill, labels, list(fill["endpoints"]))
            room = self.most - len(fill["endpoints"])
            fill["endpoints"] = [*fill["endpoints"], *remaining[:room]]
            remaining = remaining[room:]
        return to_create, list(updated.values()), to_delete

    @staticmethod
    def _changed(slice_: Obj, labels: dict[str, str], endpoints: list[Obj]) -> Obj:
        return {**slice_, "metadata": {**slice_["metadata"], "labels": dict(labels)},
                "endpoints": endpoints}

    def _new_slice(self, service: Obj, ports: list[Obj], address_type: str) -> Obj:
        meta = service["metadata"]
        return {
            "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
            "metadata": {
                "generateName": f"{meta['name']}-", "namespace": meta.get("namespace"),
                "labels": slice_labels(service),
                "ownerReferences": [{"apiVersion": "v1", "kind": "Service",
                                     "name": meta["name"], "uid": meta.get("uid"),
                                     "controller": True, "blockOwnerDeletion": True}],
            },
            "addressType": address_type,
            "endpoints": [],
            "ports": [dict(p) for p in ports],
        }

    def _write_all(self, to_create: list[Obj], to_update: list[Obj],
                   to_delete: list[Obj]) -> None:
        state, rtype = self.state, self.slice_type
        stamp = now()
        self._writing = True
        try:
            for slice_ in to_create:
                slice_["metadata"]["annotations"] = {TRIGGER_TIME: stamp}
                state.create(rtype, slice_, slice_["metadata"]["namespace"], owned=True)
            for slice_ in to_update:
                meta = slice_["metadata"] = {**slice_["metadata"]}
                meta["annotations"] = {**(meta.get("annotations") or {}), TRIGGER_TIME: stamp}
                meta.pop("resourceVersion", None)
                state.replace(rtype, slice_, meta["namespace"], meta["name"], owned=True)
            for slice_ in to_delete:
                meta = slice_["metadata"]
                try:
                    state.delete(rtype, meta.get("namespace"), meta["name"])
                except ApiError as exc:
                    if exc.code != 404:  # already gone (its namespace went first)
                        raise
        finally:
            self._writing = False
        self.writes += len(to_create) + len(to_update) + len(to_delete)

    def _slices_by_service(self) -> dict[tuple[str, str], list[Obj]]:
        found: dict[tuple[str, str], list[Obj]] = defaultdict(list)
        for slice_ in self._store(self.slice_type).values():
            meta = slice_["metadata"]
            labels = meta.get("labels") or {}
            if labels.get(MANAGED_BY) == CONTROLLER and labels.get(SERVICE_NAME):
                found[(meta.get("namespace") or "", labels[SERVICE_NAME])].append(slice_)
        return found

    def _zones(self) -> dict[str, str]:
        return {name: zone for name, node in self._store(self.node_type).items()
                if (zone := (node["metadata"].get("labels") or {}).get(ZONE))}


def _same_placeholder(slice_: Obj, placeholder: Obj, service: Obj) -> bool:
    return (not slice_.get("endpoints") and not slice_.get("ports")
            and _owned_by(slice_, service)
            and slice_["metadata"].get("labels") == placeholder["metadata"]["labels"])


def _slice_to_fill(slices: list[Obj], count: int, most: int) -> Obj | None:
    """getSliceToFill: the slice that ``count`` more endpoints bring closest to full."""
    best: Obj | None = None
    closest = most
    for slice_ in sorted(slices, key=lambda s: s["metadata"]["name"]):
        gap = most - (count + len(slice_.get("endpoints") or ()))
        if 0 <= gap < closest:
            best, closest = slice_, gap
            if gap == 0:
                break
    return best
