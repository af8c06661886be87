"""Where one HTTP request goes through Ingress objects (networking.k8s.io/v1).

Class: ``spec.ingressClassName`` (or the legacy annotation), else the IngressClass marked
``ingressclass.kubernetes.io/is-default-class`` (with several defaults, none is chosen).
Host: exact, or a ``*.`` wildcard covering exactly *one* label (unlike Gateway API); a rule
without host matches every host. Path (HTTPIngressPath.pathType): Exact compares the whole
path; Prefix compares whole path elements; ImplementationSpecific is left to the controller
(netsight reads it as Prefix and says so). Among matching paths the longest wins, Exact
before Prefix at equal length; rules naming the host come before host-less ones. With no
matching rule the Ingress's defaultBackend takes the request. How controllers merge several
Ingresses for one host is theirs to decide: netsight orders them oldest first, then by name.
"""

from __future__ import annotations

from dataclasses import dataclass

from netsight.analyzers.routing.requests import Request
from netsight.graph.model.kinds import Kind, make_key
from netsight.graph.model.records import (
    IngressBackend,
    IngressClassRecord,
    IngressRecord,
    ServiceRecord,
)
from netsight.graph.store.live import GraphView


@dataclass(frozen=True, slots=True)
class IngressMatch:
    ingress: IngressRecord
    rule: int | None  # None: the defaultBackend
    path: int | None
    backend: IngressBackend
    rank: tuple[object, ...]
    note: str | None = None

    @property
    def label(self) -> str:
        where = "defaultBackend" if self.rule is None else \
            f"rules[{self.rule}].http.paths[{self.path}]"
        return f"Ingress {self.ingress.ref} {where}"


def ingress_class(view: GraphView, ingress: IngressRecord) -> str | None:
    """The IngressClass that serves the Ingress, or None when none does."""
    if ingress.class_name is not None:
        return ingress.class_name
    defaults = [r.name for r in view.for_each(Kind.INGRESS_CLASS)
                if isinstance(r, IngressClassRecord) and r.is_default]
    return defaults[0] if len(defaults) == 1 else None


def host_matches(rule_host: str | None, host: str) -> bool:
    if rule_host is None:
        return True
    rule_host = rule_host.lower()
    if rule_host.startswith("*."):
        # IngressRule.host: the wildcard covers exactly one DNS label.
        head, sep, rest = host.partition(".")
        return bool(sep) and bool(head) and "." + rest == rule_host[1:]
    return rule_host == host


def path_matches(path_type: str, value: str | None, path: str) -> bool:
    value = value or "/"
    if path_type == "Exact":
        return path == value
    prefix = value.rstrip("/")
    return not prefix or path == prefix or path.startswith(prefix + "/")


def matches(view: GraphView, request: Request, ingress_class_name: str | None,
            ) -> tuple[list[IngressMatch], list[str]]:
    """Every Ingress path (or default backend) that takes the request, best first."""
    found: list[IngressMatch] = []
    notes: list[str] = []
    for record in view.for_each(Kind.INGRESS):
        if not isinstance(record, IngressRecord):
            continue
        klass = ingress_class(view, record)
        if klass is None or (ingress_class_name is not None and klass != ingress_class_name):
            continue
        created = record.created or "9999"
        best: list[IngressMatch] = []
        for i, rule in enumerate(record.rules):
            if not host_matches(rule.host, request.host):
                continue
            host_rank = 0 if rule.host is None else (1 if rule.host.startswith("*.") else 2)
            for j, entry in enumerate(rule.paths):
                note = None
                if entry.path_type not in ("Exact", "Prefix"):
                    note = (f"Ingress {record.ref} rules[{i}].http.paths[{j}]: pathType "
                            f"{entry.path_type} is controller-specific; read as Prefix")
                if path_matches(entry.path_type, entry.path, request.path):
                    length = len((entry.path or "/").rstrip("/"))
                    rank = (-host_rank, -length, 0 if entry.path_type == "Exact" else 1,
                            created, record.ref, i, j)
                    best.append(IngressMatch(record, i, j, entry.backend, rank, note))
        if not best and record.default_backend is not None:
            best.append(IngressMatch(record, None, None, record.default_backend,
                                     (1, 1, 1, created, record.ref, 0, 0)))
        found.extend(best)
        notes.extend(m.note for m in best if m.note)
    found.sort(key=lambda m: m.rank)
    return found, notes


def backend_target(view: GraphView, ingress: IngressRecord,
                   backend: IngressBackend) -> tuple[ServiceRecord | None, int | None, str | None]:
    """(Service, service port number, problem) for an Ingress backend."""
    if backend.resource is not None:
        return None, None, f"resource backend {backend.resource[0]}/{backend.resource[1]}"
    service = view.get(make_key(Kind.SERVICE, ingress.namespace, backend.service or ""))
    if not isinstance(service, ServiceRecord):
        return None, None, "Service not found"
    for port in service.ports:
        if port.port == backend.port or (port.name is not None and port.name == backend.port):
            return service, port.port, None
    return service, None, f"Service has no port {backend.port}"
