"""What can be wrong with an Ingress on its own and among its peers (networking.k8s.io/v1).

Class (IngressSpec.ingressClassName, else the one default IngressClass), service backends
(the Service and its port, by number or name, must exist), TLS secrets (existence only,
never their data), and rules that claim the same host, path and pathType as another Ingress
of the same class — which one a controller serves is its own decision.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field

from netsight.analyzers.core import codes
from netsight.analyzers.core.base import evidence, ref
from netsight.analyzers.core.contracts import Finding
from netsight.analyzers.routing.gateway_objects import SECRET, not_in_input
from netsight.analyzers.routing.ingresses import backend_target
from netsight.graph.model.kinds import Kind, make_key
from netsight.graph.model.records import IngressBackend, IngressClassRecord, IngressRecord
from netsight.graph.store.live import GraphView, Source


@dataclass
class ClassChoice:
    name: str | None
    source: str  # "spec", "annotation", "default" or "none"
    problem: str | None = None


@dataclass
class IngressReport:
    ingress: IngressRecord
    klass: ClassChoice
    findings: list[Finding] = field(default_factory=list)
    not_evaluated: list[str] = field(default_factory=list)


def choose_class(view: GraphView, ingress: IngressRecord) -> ClassChoice:
    if ingress.class_name is not None:
        source = "annotation" if ingress.class_from_annotation else "spec"
        return ClassChoice(ingress.class_name, source)
    defaults = sorted(r.name for r in view.for_each(Kind.INGRESS_CLASS)
                      if isinstance(r, IngressClassRecord) and r.is_default)
    if len(defaults) == 1:
        return ClassChoice(defaults[0], "default")
    problem = "no IngressClass is marked default" if not defaults else \
        f"several IngressClasses are marked default ({', '.join(defaults)})"
    return ClassChoice(None, "none", problem)


def backends(ingress: IngressRecord) -> Iterator[tuple[str, IngressBackend]]:
    """(field path, backend) for the default backend and every rule path."""
    if ingress.default_backend is not None:
        yield "spec.defaultBackend", ingress.default_backend
    for i, rule in enumerate(ingress.rules):
        for j, path in enumerate(rule.paths):
            yield f"spec.rules[{i}].http.paths[{j}].backend", path.backend


def inspect(view: GraphView, ingress: IngressRecord) -> IngressReport:
    report = IngressReport(ingress, choose_class(view, ingress))
    _class(view, report)
    for path, backend in backends(ingress):
        _backend(view, report, path, backend)
    _tls(view, report)
    return report


def _class(view: GraphView, report: IngressReport) -> None:
    ingress, klass = report.ingress, report.klass
    if klass.problem is not None:
        report.findings.append(codes.INGRESS_HAS_NO_CLASS.finding(
            ref(ingress), f"Ingress {ingress.ref} has no class: {klass.problem}",
            detail="Without spec.ingressClassName and a single default IngressClass, only a "
            "controller configured to watch class-less Ingresses serves it.",
            suggestion="Set spec.ingressClassName.",
            evidence=[evidence(ingress, "spec.ingressClassName", None)]))
    elif klass.source == "spec" and view.source is Source.MANIFESTS \
            and not view.count(Kind.INGRESS_CLASS):
        # IngressClasses come with the controller's installation, rarely with the app's
        # manifests: with none in the input, a missing one is not evidence.
        report.not_evaluated.append(f"Ingress {ingress.ref}: IngressClass {klass.name} is "
                                    "not in the input (installed with the controller?)")
    elif klass.source == "spec" and not view.exists(make_key(Kind.INGRESS_CLASS, "",
                                                             klass.name or "")):
        report.findings.append(codes.INGRESS_CLASS_NOT_FOUND.finding(
            ref(ingress), f"Ingress {ingress.ref}: IngressClass {klass.name} not found",
            detail="spec.ingressClassName names an IngressClass that does not exist: no "
            "controller claims the Ingress.",
            suggestion="Create the IngressClass, or use an existing class name.",
            evidence=[evidence(ingress, "spec.ingressClassName", klass.name)]))
    elif klass.source == "annotation":
        report.not_evaluated.append(
            f"Ingress {ingress.ref}: class {klass.name} comes from the deprecated "
            "kubernetes.io/ingress.class annotation; controllers match it by their own rules")


def _backend(view: GraphView, report: IngressReport, path: str,
             backend: IngressBackend) -> None:
    ingress = report.ingress
    if backend.resource is not None:
        report.not_evaluated.append(f"Ingress {ingress.ref} {path}: resource backend "
                                    f"{backend.resource[0]}/{backend.resource[1]} is "
                                    "controller-specific")
        return
    _, _, problem = backend_target(view, ingress, backend)
    if problem is None:
        return
    target = f"{ingress.namespace}/{backend.service}"
    report.findings.append(codes.INGRESS_BACKEND_NOT_FOUND.finding(
        ref(ingress), f"Ingress {ingress.ref}: backend {target}:{backend.port} — {problem}",
        detail=f"{path} points at Service {target} port {backend.port}: {problem}. The "
        "controller answers 503 (or its default backend) for these requests.",
        suggestion=f"Create Service {target} with that port, or fix {path}.",
        evidence=[evidence(ingress, path, {"service": backend.service,
                                           "port": backend.port})]))


def _tls(view: GraphView, report: IngressReport) -> None:
    ingress = report.ingress
    for i, (hosts, secret) in enumerate(ingress.tls):
        if secret is None:
            continue
        unknown = view.untracked(SECRET)
        if unknown is not None:
            report.not_evaluated.append(f"Ingress {ingress.ref} spec.tls[{i}]: Secret "
                                        f"existence not evaluated ({unknown})")
            continue
        if view.exists(make_key(SECRET, ingress.namespace, secret)):
            continue
        if view.source is Source.MANIFESTS:  # as a Gateway listener's certificateRef
            report.not_evaluated.append(not_in_input(
                SECRET, f"Ingress {ingress.ref} spec.tls[{i}] (Secret "
                f"{ingress.namespace}/{secret})"))
            continue
        report.findings.append(codes.INGRESS_TLS_SECRET_NOT_FOUND.finding(
            ref(ingress), f"Ingress {ingress.ref}: TLS Secret {ingress.namespace}/{secret} "
            "not found",
            detail=f"spec.tls[{i}] ({', '.join(hosts) or 'all hosts'}) names Secret "
            f"{secret}; without it the controller serves its default certificate.",
            suggestion="Create the Secret (type kubernetes.io/tls) or fix secretName.",
            evidence=[evidence(ingress, f"spec.tls[{i}].secretName", secret)]))


def conflicts(reports: list[IngressReport]) -> Iterator[Finding]:
    """Rules of Ingresses of one class claiming the same host, path and pathType."""
    claims: dict[tuple[str | None, str, str, str], list[tuple[IngressRecord, str]]] = \
        defaultdict(list)
    for report in reports:
        ingress = report.ingress
        for i, rule in enumerate(ingress.rules):
            for j, entry in enumerate(rule.paths):
                key = (report.klass.name, (rule.host or "*").lower(), entry.path or "/",
                       entry.path_type)
                claims[key].append((ingress, f"spec.rules[{i}].http.paths[{j}]"))
    for (klass, host, path, path_type), owners in sorted(claims.items(),
                                                          key=lambda kv: str(kv[0])):
        ingresses = {ing.key for ing, _ in owners}
        if len(ingresses) < 2:
            continue
        ordered = sorted(owners, key=lambda o: (o[0].created or "9999", o[0].ref))
        names = ", ".join(f"{ing.ref} {where}" for ing, where in ordered)
        for ingress, where in ordered[1:]:
            yield codes.INGRESS_RULE_CONFLICT.finding(
                ref(ingress), f"Ingress {ingress.ref}: {host}{path} ({path_type}) is also "
                f"claimed by {ordered[0][0].ref}",
                detail=f"Ingresses of class {klass or '(none)'} claim the same host, path and "
                f"pathType: {names}. Which one is served is up to the controller "
                "(ingress-nginx: the oldest).",
                suggestion="Keep each host and path in one Ingress.",
                evidence=[evidence(ingress, where, f"{host}{path}")])
