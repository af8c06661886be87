"""Kuma's MeshTrafficPermission: the layer after L3/L4, at a meshed destination's sidecar.

"Mutual TLS has to be enabled to make MeshTrafficPermission work" (Kuma's policy docs): in a
Mesh without ``spec.mtls.enabledBackend`` every client is let through. With mTLS on, the
sidecar's RBAC admits a client only if a permission allows it: with no MeshTrafficPermission
applying, every request is denied (Kuma's e2e ``meshtrafficpermission`` suites: "given no
mesh traffic permissions" the call fails with 403). A client without a sidecar has no
certificate: refused in STRICT mode; in PERMISSIVE mode its plaintext is accepted and no
permission applies to it.

Which policies apply: those of the destination's mesh (label ``kuma.io/mesh``, default
``default``) in the system namespace (``kuma-system``) or in the destination's own
namespace, whose top-level targetRef selects the destination's inbound. Their ``from``
entries are merged as Kuma's ``BuildRules`` merges them (``pkg/plugins/policies/core/
rules``): policies ordered by their top-level targetRef kind (Mesh, Dataplane, MeshSubset,
MeshService, MeshServiceSubset: least specific first), then by name, the lexically smallest
last (``SortByTargetRef``); each entry whose client subset the client's tags contain
contributes its ``default``, later ones override earlier ones, so the last matching entry's
action decides. ``rules`` entries (SPIFFE ID matchers) decide before them: any ``deny``
match denies, then any ``allow``/``allowWithShadowDeny`` match allows.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from netsight.analyzers.core.contracts import ResourceRef
from netsight.analyzers.policy.endpoints import Endpoint
from netsight.analyzers.policy.peers import Namespaces
from netsight.analyzers.policy.verdict import Action, Layer, MeshDecision, Step, Tri
from netsight.graph.model.kinds import Kind, Rel, make_key
from netsight.graph.model.records import GenericRecord, ServicePort, ServiceRecord
from netsight.graph.store.live import GraphView, Source

GROUP = "kuma.io"
MTP = "MeshTrafficPermission"
MESH = "Mesh"
MESH_IDENTITY = "MeshIdentity"
KINDS = (MTP, MESH, MESH_IDENTITY)
SYSTEM_NAMESPACES = ("kuma-system", "kong-mesh-system")
MESH_LABEL = "kuma.io/mesh"
SERVICE_TAG = "kuma.io/service"
INJECTION = "kuma.io/sidecar-injection"
INJECTED = "kuma.io/sidecar-injected"  # what the injector writes on the pods it injects
# SortByTargetRef's kind order (api/common/v1alpha1/targetref.go).
KIND_ORDER = {"Mesh": 1, "Dataplane": 2, "MeshSubset": 3, "MeshGateway": 4, "MeshService": 5,
              "MeshExternalService": 6, "MeshMultiZoneService": 7, "MeshServiceSubset": 8,
              "MeshHTTPRoute": 9}
ZONE = "default"  # a standalone control plane's zone name, for SPIFFE ID templates

__all__ = ["KINDS", "SYSTEM_NAMESPACES", "KumaLayer", "mesh_facts"]


def mesh_facts(endpoint: Endpoint) -> tuple[tuple[str, str], ...]:
    """What besides namespace and labels a Kuma verdict reads of a pod's annotations."""
    annotations = endpoint.annotations
    return tuple((k, annotations[k]) for k in (INJECTED, INJECTION, MESH_LABEL)
                 if k in annotations)


@dataclass(frozen=True, slots=True)
class Entry:
    """One ``from`` entry: the client tags it takes (empty: every client) and its action."""

    tags: Mapping[str, str]
    action: str
    index: int


@dataclass(frozen=True, slots=True)
class Permission:
    record: GenericRecord
    target_kind: str
    target: Mapping[str, Any]
    entries: tuple[Entry, ...] = ()
    rules: tuple[tuple[str, str, str], ...] = ()  # (list, match type, value)
    problem: str | None = None

    @property
    def ref(self) -> ResourceRef:
        return ResourceRef(kind=MTP, namespace=self.record.namespace or None,
                           name=self.record.name, api_version=self.record.api_version)


def build(record: GenericRecord) -> Permission:
    spec: Mapping[str, Any] = record.spec or {}
    target = spec.get("targetRef") or {"kind": "Mesh"}
    if not isinstance(target, Mapping) or not isinstance(target.get("kind"), str):
        return Permission(record, "", {}, problem="spec.targetRef: has no kind")
    entries = []
    for i, item in enumerate(spec.get("from") or ()):
        ref = item.get("targetRef") if isinstance(item, Mapping) else None
        default = item.get("default") if isinstance(item, Mapping) else None
        action = default.get("action") if isinstance(default, Mapping) else None
        if not isinstance(ref, Mapping) or action not in ("Allow", "Deny",
                                                          "AllowWithShadowDeny"):
            return Permission(record, target["kind"], target,
                              problem=f"spec.from[{i}]: no targetRef or no action")
        tags = _subset(ref)
        if tags is None:
            return Permission(record, target["kind"], target, problem=(
                f"spec.from[{i}].targetRef.kind: {ref.get('kind')!r} is not a client "
                "subset Kuma reads as tags"))
        entries.append(Entry(tags, action, i))
    rules = []
    for i, rule in enumerate(spec.get("rules") or ()):
        default = rule.get("default") if isinstance(rule, Mapping) else None
        if not isinstance(default, Mapping):
            return Permission(record, target["kind"], target,
                              problem=f"spec.rules[{i}]: no default")
        for key in ("deny", "allowWithShadowDeny", "allow"):
            for j, match in enumerate(default.get(key) or ()):
                spiffe = match.get("spiffeID") if isinstance(match, Mapping) else None
                if not isinstance(spiffe, Mapping) or spiffe.get("type") not in (
                        "Exact", "Prefix") or not isinstance(spiffe.get("value"), str):
                    return Permission(record, target["kind"], target, problem=(
                        f"spec.rules[{i}].default.{key}[{j}]: not a spiffeID Exact or "
                        "Prefix match"))
                rules.append((key, spiffe["type"], spiffe["value"]))
    return Permission(record, target["kind"], target, tuple(entries), tuple(rules))


def _subset(ref: Mapping[str, Any]) -> Mapping[str, str] | None:
    """``asSubset``: the tags a client targetRef stands for."""
    kind, name, tags = ref.get("kind"), ref.get("name"), ref.get("tags") or {}
    if not isinstance(tags, Mapping):
        return None
    if kind == "Mesh":
        return {}
    if kind == "MeshSubset":
        return {str(k): str(v) for k, v in tags.items()}
    if kind == "MeshService" and isinstance(name, str):
        return {SERVICE_TAG: name}
    if kind == "MeshServiceSubset" and isinstance(name, str):
        return {SERVICE_TAG: name, **{str(k): str(v) for k, v in tags.items()}}
    return None


@dataclass(frozen=True, slots=True)
class MeshSettings:
    mtls: Tri
    permissive: bool = False
    why: str = ""


def _step(action: Action, text: str, policy: Permission | None = None) -> Step:
    return Step(Layer.KUMA, action, text, None if policy is None else policy.ref)


@dataclass
class KumaLayer:
    view: GraphView
    namespaces: Namespaces
    _models: dict[str, tuple[GenericRecord, Permission]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.live = self.view.source is not Source.MANIFESTS
        self.objects = bool(self.view.count(MTP) or self.view.count(MESH))

    def membership(self, endpoint: Endpoint) -> tuple[Tri, str]:
        """Whether ``endpoint`` runs a Kuma sidecar; the injector's annotation on injected
        pods, else (pods yet to be created) the injection label, the pod's over its
        namespace's."""
        if endpoint.external:
            return False, f"{endpoint.name} is outside the cluster"
        if endpoint.annotations.get(INJECTED) == "true":
            return True, f"{endpoint.name} runs the Kuma sidecar"
        if endpoint.host_network:
            return False, f"{endpoint.name} uses the host network"
        if self.live and not endpoint.template:
            return False, f"{endpoint.name} has no Kuma sidecar ({INJECTED} absent)"
        own = endpoint.labels.get(INJECTION) or endpoint.annotations.get(INJECTION)
        if own is not None:
            return own == "enabled", f"{endpoint.name}: {INJECTION}={own}"
        assert endpoint.namespace is not None
        labels = self.namespaces.labels(endpoint.namespace)
        if labels is None:
            return None, (f"namespace {endpoint.namespace} is not in the input, so whether "
                          f"{endpoint.name} gets a Kuma sidecar is unknown")
        ns = labels.get(INJECTION)
        return ns == "enabled", f"{endpoint.name}: namespace {INJECTION}={ns or 'unset'}"

    def mesh_of(self, endpoint: Endpoint) -> str:
        assert endpoint.namespace is not None
        return endpoint.annotations.get(MESH_LABEL) or endpoint.labels.get(MESH_LABEL) or \
            (self.namespaces.labels(endpoint.namespace) or {}).get(MESH_LABEL) or "default"

    def mesh(self, name: str) -> MeshSettings:
        record = self.view.get(make_key(MESH, "", name))
        if not isinstance(record, GenericRecord):
            return MeshSettings(None, why=f"Mesh {name} is not in the input, so whether it "
                                "enables mTLS (and so enforces MeshTrafficPermissions) is "
                                "unknown")
        mtls = (record.spec or {}).get("mtls")
        enabled = mtls.get("enabledBackend") if isinstance(mtls, Mapping) else None
        if not enabled:
            identity = next((r for r in self.view.for_each(MESH_IDENTITY)
                             if r.labels.get(MESH_LABEL, "default") == name), None)
            if identity is not None:
                # A MeshIdentity issues the proxies' certificates in place of a backend.
                return MeshSettings(True, why=f"MeshIdentity {identity.ref} gives mesh {name}'s "
                                    "proxies mTLS identities")
            return MeshSettings(False, why=f"Mesh {name} does not enable mTLS, so "
                                "MeshTrafficPermissions are not enforced")
        mode = "STRICT"
        for backend in (mtls or {}).get("backends") or ():
            if isinstance(backend, Mapping) and backend.get("name") == enabled:
                mode = str(backend.get("mode") or "STRICT")
        return MeshSettings(True, mode == "PERMISSIVE",
                            f"Mesh {name} enables mTLS ({enabled}, {mode})")

    def permissions(self, mesh: str, namespace: str) -> list[Permission]:
        found = []
        for ns in (*SYSTEM_NAMESPACES, namespace):
            for record in self.view.for_each(MTP, ns):
                if not isinstance(record, GenericRecord) or \
                        not record.api_version.startswith(GROUP + "/") or \
                        record.labels.get(MESH_LABEL, "default") != mesh:
                    continue
                kept = self._models.get(record.key)
                if kept is None or kept[0] is not record:
                    kept = self._models[record.key] = (record, build(record))
                found.append(kept[1])
        # Least specific first; equal kinds: the lexically smallest name last (it wins).
        found.sort(key=lambda p: (KIND_ORDER.get(p.target_kind, 0),
                                  _descending(p.record.name)))
        return found

    # --- tags -----------------------------------------------------------------------------

    def inbound_tags(self, endpoint: Endpoint, port: int | None
                     ) -> dict[str, set[str]]:
        """The tags of ``endpoint``'s inbounds (of the one for ``port`` if given): its labels,
        its namespace, and ``kuma.io/service`` ``<svc>_<ns>_svc_<port>`` per Service port
        that reaches it."""
        assert endpoint.namespace is not None
        tags: dict[str, set[str]] = {k: {v} for k, v in endpoint.labels.items()}
        tags.setdefault("k8s.kuma.io/namespace", set()).add(endpoint.namespace)
        for service, entry in _reaching(self.view, endpoint, port):
            tags.setdefault(SERVICE_TAG, set()).add(
                f"{service.name}_{service.namespace}_svc_{entry.port}")
            tags.setdefault("k8s.kuma.io/service-name", set()).add(service.name)
            tags.setdefault("k8s.kuma.io/service-port", set()).add(str(entry.port))
        return tags

    def _targets(self, policy: Permission, destination: Endpoint, port: int
                 ) -> tuple[Tri, str]:
        target, kind = policy.target, policy.target_kind
        assert destination.namespace is not None
        if policy.problem is not None:
            return None, policy.problem
        if kind == "Mesh":
            return True, "targets the whole mesh"
        tags = self.inbound_tags(destination, port)
        if kind in ("MeshSubset", "MeshServiceSubset"):
            want = {str(k): str(v) for k, v in (target.get("tags") or {}).items()}
            if kind == "MeshServiceSubset":
                want[SERVICE_TAG] = str(target.get("name"))
            ok = all(v in tags.get(k, ()) for k, v in want.items())
            return ok, f"targets {kind} {_tags(want)}"
        if kind == "MeshService":
            name = str(target.get("name"))
            ns = target.get("namespace") or policy.record.namespace
            ok = name in tags.get(SERVICE_TAG, ()) or (
                ns == destination.namespace and name in tags.get("k8s.kuma.io/service-name",
                                                                  ()))
            return ok, f"targets MeshService {name}"
        if kind == "Dataplane":
            labels = target.get("labels") or {}
            pod, pod_ns = target.get("name"), target.get("namespace")
            ok = all(v in tags.get(k, ()) for k, v in labels.items()) and \
                (pod is None or destination.name == f"{destination.namespace}/{pod}") and \
                (pod_ns is None or pod_ns == destination.namespace)
            section = target.get("sectionName")
            if ok and section is not None:
                ok = any(p.port == port and p.name == section for p in destination.ports) or \
                    str(port) == str(section)
            return ok, f"targets Dataplane {_tags(labels) or pod}"
        return None, f"its targetRef kind {kind} is not evaluated by netsight"

    # --- the decision ---------------------------------------------------------------------

    def evaluate(self, source: Endpoint, destination: Endpoint, port: int, protocol: str
                 ) -> MeshDecision | None:
        if destination.external or destination.namespace is None or (not self.objects and \
                INJECTED not in destination.annotations):
            return None
        meshed, why = self.membership(destination)
        if meshed is False:
            return None
        if meshed is None:
            return MeshDecision(None, _step(Action.UNKNOWN, why), not_evaluated=(why,))
        mesh_name = self.mesh_of(destination)
        mesh = self.mesh(mesh_name)
        if mesh.mtls is None:
            return MeshDecision(None, _step(Action.UNKNOWN, mesh.why),
                                not_evaluated=(mesh.why,))
        if mesh.mtls is False:
            if not self.view.count(MTP):
                return None
            return MeshDecision(True, _step(Action.ALLOW, mesh.why))
        if protocol != "TCP":
            return MeshDecision(True, _step(Action.ALLOW, f"Kuma's sidecar proxies TCP "
                                            f"only; {protocol} bypasses it"))
        client, client_why = self.membership(source)
        if client is None:
            return MeshDecision(None, _step(Action.UNKNOWN, client_why),
                                not_evaluated=(client_why,))
        if client is False:
            if mesh.permissive:
                return MeshDecision(True, _step(Action.ALLOW, (
                    f"{mesh.why}: {client_why}, and its plaintext is accepted in PERMISSIVE "
                    "mode, where no MeshTrafficPermission applies to it")))
            return MeshDecision(False, _step(Action.DENY, (
                f"{mesh.why}: {client_why}, so it presents no certificate and "
                f"{destination.name}'s sidecar refuses it")))
        if self.mesh_of(source) != mesh_name:
            why = (f"{source.name} is in mesh {self.mesh_of(source)}, {destination.name} in "
                   f"mesh {mesh_name}: traffic across meshes is not evaluated")
            return MeshDecision(None, _step(Action.UNKNOWN, why), not_evaluated=(why,))
        return self._permit(source, destination, port, mesh_name, mesh)

    def _permit(self, source: Endpoint, destination: Endpoint, port: int, mesh_name: str,
                mesh: MeshSettings) -> MeshDecision:
        applying: list[Permission] = []
        unknown: list[str] = []
        for policy in self.permissions(mesh_name, destination.namespace or ""):
            found, why = self._targets(policy, destination, port)
            if found is True:
                applying.append(policy)
            elif found is None:
                unknown.append(f"MeshTrafficPermission {policy.record.ref}: {why}")
        if unknown:
            return MeshDecision(None, _step(Action.UNKNOWN, unknown[0]),
                                not_evaluated=tuple(unknown))
        head = f"{mesh.why}"
        # rules[]: SPIFFE ID matchers; deny first.
        with_rules = [p for p in applying if p.rules]
        if with_rules:
            decided = self._rules(with_rules, source, mesh_name, head)
            if decided is not None:
                return decided
        client_tags = self.inbound_tags(source, None)
        for policy in reversed(applying):
            for entry in reversed(policy.entries):
                found = _contains(client_tags, entry.tags)
                if found is None:
                    why = (f"MeshTrafficPermission {policy.record.ref} from[{entry.index}] "
                           f"takes clients tagged {_tags(entry.tags)}, and {source.name}'s "
                           f"{SERVICE_TAG} is unknown (no Service selects it)")
                    return MeshDecision(None, _step(Action.UNKNOWN, why, policy),
                                        not_evaluated=(why,))
                if found:
                    who = "every client" if not entry.tags else f"clients {_tags(entry.tags)}"
                    text = (f"{head}; MeshTrafficPermission {policy.record.ref} "
                            f"from[{entry.index}] ({who}): {entry.action}, the last matching "
                            f"entry in Kuma's merge order")
                    if entry.action == "Deny":
                        return MeshDecision(False, _step(Action.DENY, text, policy),
                                            (policy.ref,))
                    if entry.action == "AllowWithShadowDeny":
                        text += " (logged as if denied)"
                    return MeshDecision(True, _step(Action.ALLOW, text, policy))
        names = ", ".join(p.record.ref for p in applying)
        text = (f"{head} and no MeshTrafficPermission allows {source.name}" +
                (f" ({names} apply, none of their entries takes it)" if applying else
                 f": none targets {destination.name}'s inbound on port {port}, and Kuma "
                 "denies by default under mTLS"))
        return MeshDecision(False, _step(Action.DENY, text,
                                         applying[-1] if len(applying) == 1 else None),
                            tuple(p.ref for p in applying))

    def _rules(self, policies: list[Permission], source: Endpoint, mesh_name: str,
               head: str) -> MeshDecision | None:
        spiffe, why = self._spiffe_id(source, mesh_name)
        if spiffe is None:
            return MeshDecision(None, _step(Action.UNKNOWN, why), not_evaluated=(why,))
        for wanted in ("deny", "allowWithShadowDeny", "allow"):
            for policy in policies:
                for key, kind, value in policy.rules:
                    if key == wanted and (spiffe == value if kind == "Exact"
                                          else spiffe.startswith(value)):
                        text = (f"{head}; MeshTrafficPermission {policy.record.ref} "
                                f"rules {key} matches {spiffe} ({kind} {value}){why}")
                        if key == "deny":
                            return MeshDecision(False, _step(Action.DENY, text, policy),
                                                (policy.ref,))
                        return MeshDecision(True, _step(Action.ALLOW, text, policy))
        return None

    def _spiffe_id(self, source: Endpoint, mesh_name: str) -> tuple[str | None, str]:
        """The client's SPIFFE ID as a MeshIdentity of its mesh renders it."""
        assert source.namespace is not None
        for record in self.view.for_each(MESH_IDENTITY):
            if not isinstance(record, GenericRecord) or \
                    record.labels.get(MESH_LABEL, "default") != mesh_name:
                continue
            spec = record.spec or {}
            template = spec.get("spiffeID") or {}
            domain = str(template.get("trustDomain") or "{{ .Mesh }}.{{ .Zone }}.mesh.local")
            path = str(template.get("path") or "/ns/{{ .Namespace }}/sa/{{ .ServiceAccount }}")
            values = {"Mesh": mesh_name, "Zone": ZONE, "Namespace": source.namespace,
                      "ServiceAccount": source.service_account or "default"}
            rendered = f"spiffe://{domain}{path}"
            for key, value in values.items():
                for form in (f"{{{{ .{key} }}}}", f"{{{{.{key}}}}}"):
                    rendered = rendered.replace(form, value)
            if "{{" in rendered:
                return None, f"MeshIdentity {record.ref}'s SPIFFE ID template is not evaluated"
            note = f" (zone {ZONE!r} assumed)" if "Zone" in domain + path else ""
            return rendered, note
        return None, (f"no MeshIdentity of mesh {mesh_name} in the input: {source.name}'s "
                      "SPIFFE ID, which MeshTrafficPermission rules match, is unknown")


def _reaching(view: GraphView, endpoint: Endpoint, port: int | None
              ) -> Iterator[tuple[ServiceRecord, ServicePort]]:
    """The Services selecting ``endpoint``, each with its TCP ports that reach ``port``
    (every TCP port when None): each is an inbound of its dataplane."""
    if endpoint.key is None:
        return
    for service in view.neighbors(endpoint.key, Rel.SELECTS, incoming=True,
                                  kind=Kind.SERVICE):
        if isinstance(service, ServiceRecord):
            for entry in service.ports:
                target = entry.target_port
                if isinstance(target, str):
                    target = next((p.port for p in endpoint.ports if p.name == target), -1)
                if entry.protocol == "TCP" and (port is None or target == port):
                    yield service, entry


def _tags(tags: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in tags.items())


def _contains(client: Mapping[str, set[str]], wanted: Mapping[str, str]) -> Tri:
    for key, value in wanted.items():
        have = client.get(key)
        if have is None:
            return None if key == SERVICE_TAG else False
        if value not in have:
            return False
    return True


def _descending(name: str) -> tuple[int, ...]:
    return (*tuple(-ord(c) for c in name), 1)
