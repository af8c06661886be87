"""What every mesh check shares: the objects read once, the host map, and what was skipped."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import TypeVar

from netsight.analyzers.core import codes
from netsight.analyzers.core.base import evidence, ref
from netsight.analyzers.core.contracts import Finding
from netsight.analyzers.mesh import defaults
from netsight.analyzers.mesh.hosts import HostRegistry
from netsight.analyzers.mesh.istio_objects import (
    DESTINATION_RULE,
    ENVOY_FILTER,
    GROUP,
    ISTIO_GATEWAY,
    SERVICE_ENTRY,
    SIDECAR,
    TELEMETRY,
    TELEMETRY_GROUP,
    VIRTUAL_SERVICE,
    DestinationRule,
    EnvoyFilter,
    IstioGateway,
    ServiceEntry,
    Sidecar,
    Telemetry,
    Unreadable,
    VirtualService,
    describe,
    istio_records,
    read_destination_rule,
    read_envoy_filter,
    read_gateway,
    read_service_entry,
    read_sidecar,
    read_telemetry,
    read_virtual_service,
)
from netsight.analyzers.mesh.visibility import build_hosts
from netsight.graph.model.kinds import POD_LIKE_KINDS, Kind
from netsight.graph.model.records import (
    GenericRecord,
    PodRecord,
    Record,
    ServiceRecord,
    WorkloadRecord,
)
from netsight.graph.model.selectors import LabelSelector
from netsight.graph.store.live import GraphView

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class PodLabels:
    """A pod, or a workload's pod template standing for its pods, and its labels."""

    record: Record
    labels: dict[str, str]
    assumed: bool = False


@dataclass
class MeshContext:
    view: GraphView
    namespace: str | None
    findings: list[Finding] = field(default_factory=list)
    not_evaluated: list[str] = field(default_factory=list)

    def in_scope(self, record: Record) -> bool:
        return self.namespace is None or record.namespace == self.namespace

    def unknown(self, *kinds: str) -> str | None:
        """Why objects of one of ``kinds`` may be missing from the graph, or None."""
        for kind in kinds:
            reason = self.view.untracked(kind)
            if reason is not None:
                return reason
        return None

    def pods_unknown(self) -> str | None:
        """Why pods (and, from manifests, the workload templates standing for the pods they
        would make) may be missing from the graph, or None. From a cluster the pods are
        what runs: workload kinds, which netsight does not watch there, hide no pod; one
        that is watched must have been listed."""
        reason = self.unknown(Kind.POD)
        for kind in sorted(POD_LIKE_KINDS - {Kind.POD}):
            reason = reason or self.view.unreadable(kind)
        return reason

    def skip(self, what: str, reason: str) -> None:
        note = f"{what}: not evaluated ({reason})"
        if note not in self.not_evaluated:
            self.not_evaluated.append(note)

    def report(self, finding: Finding) -> None:
        self.findings.append(finding)

    def _read(self, kind: str, reader: Callable[[GenericRecord], T], *,
              group: str = GROUP) -> list[T]:
        """The kind's objects read once per version of the kind (kept with the store until
        one of them changes); those that cannot be read are reported."""
        def build(view: GraphView) -> tuple[tuple[T, ...],
                                             tuple[tuple[GenericRecord, Unreadable], ...]]:
            read, unreadable = [], []
            for record in istio_records(view, kind, group=group):
                try:
                    read.append(reader(record))
                except Unreadable as exc:
                    unreadable.append((record, exc))
            return tuple(read), tuple(unreadable)

        read, unreadable = self.view.derived(("mesh_config", kind), (kind,), build)
        for record, exc in unreadable:
            if self.in_scope(record):
                self.report(codes.MESH_CONFIG_NOT_EVALUATED.finding(
                    ref(record), f"{describe(record)} cannot be read: {exc}",
                    detail="Istio's schema rejects this field's shape (or netsight cannot "
                    "read it); the mesh checks that need the object leave it out, and "
                    "references to it are not decided from it.",
                    suggestion="Fix the field to the shape the Istio API reference gives.",
                    evidence=[evidence(record, exc.path, str(exc))],
                ))
        return list(read)

    @cached_property
    def virtual_services(self) -> list[VirtualService]:
        return self._read(VIRTUAL_SERVICE, read_virtual_service)

    @cached_property
    def destination_rules(self) -> list[DestinationRule]:
        return self._read(DESTINATION_RULE, read_destination_rule)

    @cached_property
    def gateways(self) -> list[IstioGateway]:
        return self._read(ISTIO_GATEWAY, read_gateway)

    @cached_property
    def service_entries(self) -> list[ServiceEntry]:
        return self._read(SERVICE_ENTRY, read_service_entry)

    @cached_property
    def sidecars(self) -> list[Sidecar]:
        return self._read(SIDECAR, read_sidecar)

    @cached_property
    def telemetries(self) -> list[Telemetry]:
        return self._read(TELEMETRY, read_telemetry, group=TELEMETRY_GROUP)

    @cached_property
    def envoy_filters(self) -> list[EnvoyFilter]:
        return self._read(ENVOY_FILTER, read_envoy_filter)

    @cached_property
    def hosts(self) -> HostRegistry:
        # Kept until a Service or ServiceEntry changes; never mutated by the checks.
        return self.view.derived(("mesh_config", "hosts"), (Kind.SERVICE, SERVICE_ENTRY),
                                 build_hosts)

    @cached_property
    def namespaces(self) -> list[str]:
        return sorted(self.view.namespaces())

    @cached_property
    def stand_in_pod(self) -> PodRecord | None:
        return defaults.assumed_pod(self.view)

    @cached_property
    def stand_in_service(self) -> ServiceRecord | None:
        return defaults.assumed_service(self.view)

    def pods(self) -> Iterator[PodLabels]:
        """Every pod, and every workload template (in manifests, the pods it would make),
        plus istioctl's stand-in ingress pod when netsight assumes it."""
        for kind in sorted(POD_LIKE_KINDS):
            for record in self.view.for_each(kind):
                yield PodLabels(record, _labels_of(record))
        if self.stand_in_pod is not None:
            yield PodLabels(self.stand_in_pod, dict(self.stand_in_pod.labels), assumed=True)

    def pods_matching(self, labels: Mapping[str, str]) -> Iterator[PodLabels]:
        """Pods and workload templates of any namespace carrying ``labels`` (all of them;
        an empty map matches every pod), found through the graph's label index."""
        selector = LabelSelector(match_labels=tuple(sorted(labels.items())))
        for namespace in self.namespaces:
            for record in self.view.matching(namespace, selector):
                yield PodLabels(record, _labels_of(record))
        if self.stand_in_pod is not None and selector.matches(self.stand_in_pod.labels):
            yield PodLabels(self.stand_in_pod, dict(self.stand_in_pod.labels), assumed=True)

    def services_unknown(self) -> str | None:
        return self.unknown(Kind.SERVICE, "ServiceEntry")


def pods_or_templates(records: Iterable[Record]) -> list[Record]:
    """The pods among ``records``, or where there is none (manifests without pods) the
    workload templates standing for them, in key order: a pod and the template it was
    made from are one workload, not two."""
    found = list(records)
    pods: list[Record] = [r for r in found if isinstance(r, PodRecord)]
    if not pods:
        pods = [r for r in found if isinstance(r, WorkloadRecord)]
    return sorted(pods, key=lambda r: r.key)


def _labels_of(record: Record) -> dict[str, str]:
    if isinstance(record, WorkloadRecord):
        return dict(record.pod_labels)
    return dict(record.labels)
