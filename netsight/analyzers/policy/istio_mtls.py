"""Whether one connection is mutual TLS, plaintext, or refused by Istio.

The server side is the PeerAuthentication mode of the destination workload's port, as
istiod composes it (``ComposePeerAuthentication``): the oldest policy of each level — mesh
(root namespace, no selector), namespace (no selector), workload (a selector, outside the
root namespace) — is applied mesh, then namespace, then workload, an UNSET mode inheriting
the level above; the workload policy's ``portLevelMtls`` entry for the target port comes
last (UNSET: the workload's mode). With no policy at all the mode is PERMISSIVE.

The client side is what its proxy sends: a pod outside the mesh sends plaintext; an ambient
pod's ztunnel sends HBONE (mTLS) to mesh peers and ignores DestinationRules; a sidecar
follows its DestinationRule's TLS mode, and without one auto mTLS (on unless the mesh config
says ``enableAutoMtls: false``) sends Istio mTLS to sidecar or ambient servers — plaintext
to one whose mode is DISABLE — and plaintext to servers outside the mesh.

Then: plaintext toward STRICT is refused; Istio mTLS toward a server that does not
terminate it (no sidecar, or DISABLE) fails; TLS a client originates with its own
certificates (SIMPLE, MUTUAL) is refused under STRICT and otherwise reaches the application,
which netsight cannot tell speaks TLS.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import StrEnum

from netsight.analyzers.core.contracts import Evidence, ResourceRef
from netsight.analyzers.policy.endpoints import Endpoint
from netsight.analyzers.policy.istio_client_tls import (
    DOMAIN,
    Chosen,
    ClientTls,
    Mesh,
    RuleIndex,
    TlsMode,
    choose,
    rules_for,
)
from netsight.analyzers.policy.istio_mesh import Dataplane, Membership
from netsight.analyzers.policy.istio_model import Mode, PeerAuthn
from netsight.graph.model.kinds import Kind, Rel
from netsight.graph.model.records import ServicePort, ServiceRecord
from netsight.graph.store.live import GraphView


class Outcome(StrEnum):
    MTLS = "mtls"
    PLAINTEXT = "plaintext"
    REFUSED = "refused"
    UNDECIDED = "undecided"


@dataclass(frozen=True, slots=True)
class ServerMode:
    """The PeerAuthentication mode at a workload port and the policy that sets it."""

    mode: Mode
    policy: PeerAuthn | None
    path: str = ""  # spec.mtls.mode or spec.portLevelMtls.<port>.mode
    problems: tuple[str, ...] = ()

    def describe(self) -> str:
        if self.policy is None:
            return f"{self.mode.value} (no PeerAuthentication applies: Istio's default)"
        return f"{self.mode.value} (PeerAuthentication {self.policy.name} {self.path})"


def server_mode(destination: Endpoint, port: int, root: str,
                policies: Callable[[str], list[PeerAuthn]]) -> ServerMode:
    """``policies(namespace)``: that namespace's PeerAuthentications, oldest first."""
    assert destination.namespace is not None
    problems: list[str] = []
    levels: list[PeerAuthn | None] = [None, None, None]  # mesh, namespace, workload
    for namespace in dict.fromkeys((root, destination.namespace)):
        for pa in policies(namespace):
            if pa.problem is not None:
                problems.append(f"PeerAuthentication {pa.name} could not be read "
                                f"({pa.problem}); the mTLS mode is unknown")
                continue
            if pa.selector:
                # Selectors in the root namespace select nothing (istiod ignores them).
                if namespace == root or not all(destination.labels.get(k) == v
                                                for k, v in pa.selector.items()):
                    continue
                level = 2
            else:
                level = 0 if namespace == root else 1
            if levels[level] is None:
                levels[level] = pa
    mode, path = Mode.PERMISSIVE, ""
    chosen: PeerAuthn | None = None
    for level_pa in levels:
        if level_pa is not None and level_pa.mode is not Mode.UNSET:
            mode, chosen, path = level_pa.mode, level_pa, "spec.mtls.mode"
    workload = levels[2]
    port_mode = (workload.port_modes or {}).get(port) if workload is not None else None
    if port_mode is not None and port_mode is not Mode.UNSET:
        mode, chosen, path = port_mode, workload, f"spec.portLevelMtls.{port}.mode"
    return ServerMode(mode, chosen, path, tuple(problems))


@dataclass(frozen=True, slots=True)
class ClientSide:
    """What a sidecar client sends to one server port, per the DestinationRules."""

    chosen: Chosen
    services: tuple[str, ...] = ()  # the Services (ns/name:port) the client may address
    why: str = ""  # why no rule applies, or how the rules of several Services disagree
    split: bool = False  # several Services the client may use give different TLS


def targeting(view: GraphView, destination: Endpoint, port: int
              ) -> Iterator[tuple[ServiceRecord, ServicePort]]:
    """The Services selecting ``destination``, each with its TCP port that targets ``port``
    (a named targetPort resolved on the destination's container ports)."""
    if destination.key is None:
        return
    for service in view.neighbors(destination.key, Rel.SELECTS, incoming=True,
                                  kind=Kind.SERVICE):
        if not isinstance(service, ServiceRecord):
            continue
        for entry in service.ports:
            target = entry.target_port
            if isinstance(target, str):
                target = next((p.port for p in destination.ports
                               if p.name == target and p.protocol == entry.protocol), -1)
            if entry.protocol == "TCP" and target == port:
                yield service, entry


def service_ports(view: GraphView, destination: Endpoint, port: int
                  ) -> list[tuple[ServiceRecord, int]]:
    """The Services selecting ``destination`` with a TCP port that targets ``port``."""
    return [(service, entry.port) for service, entry in targeting(view, destination, port)]


def client_side(view: GraphView, index: RuleIndex, mesh: Mesh, source: Endpoint,
                destination: Endpoint, port: int,
                via: tuple[ServiceRecord, int] | None = None) -> ClientSide:
    """``via``: the Service and port the client addresses, where the question names it;
    else every Service of the destination's port, which must agree."""
    assert source.namespace is not None
    choices: dict[object, list[str]] = {}
    picked: dict[object, Chosen] = {}
    for service, service_port in [via] if via else service_ports(view, destination, port):
        host = f"{service.name}.{service.namespace}.svc.{DOMAIN}"
        rules = rules_for(index, source.namespace, host, mesh.root_namespace)
        chosen = choose(rules, source.labels, service_port, destination.labels)
        key: object = (chosen.tls.mode if chosen.tls else None, chosen.problem,
               tuple((n, t.mode if t else None) for n, t in chosen.subsets))
        choices.setdefault(key, []).append(f"{service.ref}:{service_port}")
        picked.setdefault(key, chosen)
    if not choices:
        return ClientSide(Chosen(None, None), why=f"no Service targets port {port} of "
                          f"{destination.name}, so no DestinationRule applies")
    if len(choices) > 1:
        ways = "; ".join(f"via {', '.join(names)}: {_describe(picked[k])}"
                         for k, names in choices.items())
        return ClientSide(Chosen(None, None), why="the TLS the client sends depends on "
                          f"which Service name it uses ({ways})", split=True)
    (only, names), = choices.items()
    return ClientSide(picked[only], tuple(names))


def _describe(chosen: Chosen) -> str:
    owner = f" ({chosen.rule.name})" if chosen.rule is not None else ""
    return _client_mode(chosen.tls) + owner


def _client_mode(tls: ClientTls | None) -> str:
    return tls.mode.value if tls is not None and tls.mode is not None else \
        "no TLS setting (auto mTLS)"


@dataclass(frozen=True, slots=True)
class TlsVerdict:
    outcome: Outcome
    why: str
    client: str  # what the client sends, in words
    server: ServerMode
    rule: ResourceRef | None = None  # the DestinationRule that decided the client's TLS
    evidence: tuple[Evidence, ...] = ()

    @property
    def deciding(self) -> tuple[ResourceRef, ...]:
        refs = [] if self.server.policy is None else [self.server.policy.ref]
        return tuple(refs + ([self.rule] if self.rule is not None else []))


def decide(source: Endpoint, src: Membership, destination: Endpoint, dst: Membership,
           port: int, server: ServerMode, side: Callable[[], ClientSide], mesh: Mesh
           ) -> TlsVerdict:
    """The outcome of ``source`` connecting to ``destination`` on a port whose server mode
    is ``server``; ``side`` computes the client's DestinationRule TLS when it matters."""
    pa_ev: tuple[Evidence, ...] = () if server.policy is None else (
        Evidence(resource=server.policy.ref, field_path=server.path,
                 value=server.mode.value),)
    strict = server.mode is Mode.STRICT and dst.dataplane is not Dataplane.NONE

    def verdict(outcome: Outcome, why: str, client: str, chosen: Chosen | None = None
                ) -> TlsVerdict:
        evidence = pa_ev if outcome is not Outcome.MTLS or server.policy else ()
        rule = None
        if chosen is not None and chosen.rule is not None and chosen.tls is not None:
            rule = chosen.rule.ref
            evidence = (*evidence, Evidence(resource=rule, field_path=chosen.tls.path,
                                            value=_client_mode(chosen.tls)))
        return TlsVerdict(outcome, why, client, server, rule, evidence)

    if dst.dataplane is None:
        return verdict(Outcome.UNDECIDED, dst.why, "unknown")
    if server.problems and dst.dataplane is not Dataplane.NONE:
        return verdict(Outcome.UNDECIDED, server.problems[0], "unknown")
    if src.dataplane is None:
        return verdict(Outcome.UNDECIDED, src.why, "unknown")
    requires = f"{_server(destination, server)} requires mTLS (STRICT) on port {port}"
    if src.dataplane is Dataplane.NONE:
        client = f"plaintext ({src.why})"
        if strict:
            return verdict(Outcome.REFUSED, f"{requires}, and {src.why}, so it sends "
                           "plaintext", client)
        return verdict(Outcome.PLAINTEXT, f"{src.why}, so it sends plaintext", client)
    if src.dataplane is Dataplane.AMBIENT:
        if dst.dataplane is Dataplane.NONE:
            return verdict(Outcome.PLAINTEXT, f"{destination.name} is outside the mesh; the "
                           f"ztunnel of {source.name} sends it plaintext", "plaintext (ztunnel)")
        return verdict(Outcome.MTLS, f"the ztunnel of {source.name} sends HBONE (mTLS) to "
                       f"{destination.name}", "HBONE mTLS (ztunnel)")
    client_side_ = side()
    chosen = client_side_.chosen
    if chosen.problem is not None:
        return verdict(Outcome.UNDECIDED, chosen.problem, "unknown")
    if client_side_.split:
        return verdict(Outcome.UNDECIDED, client_side_.why, "depends on the Service name")
    if chosen.subsets:
        names = ", ".join(f"{n} ({_client_mode(t)})" for n, t in chosen.subsets)
        owner = chosen.rule.name if chosen.rule is not None else ""
        return verdict(Outcome.UNDECIDED, f"DestinationRule {owner} gives subsets {names} "
                       f"that {destination.name} belongs to another TLS mode: it depends on "
                       "whether a VirtualService routes the client to them",
                       "depends on the subset", chosen)
    mode = chosen.tls.mode if chosen.tls is not None else None
    by = f"DestinationRule {chosen.rule.name} sets {chosen.tls.path} {_client_mode(chosen.tls)}" \
        if chosen.rule is not None and chosen.tls is not None else ""
    if mode is None:
        if not mesh.auto_mtls:
            mode, by = TlsMode.DISABLE, f"auto mTLS is off ({mesh.source}) and no " \
                "DestinationRule sets TLS"
        elif dst.dataplane is Dataplane.NONE or (
                server.mode is Mode.DISABLE and dst.dataplane is Dataplane.SIDECAR):
            where = "is outside the mesh" if dst.dataplane is Dataplane.NONE else \
                f"disables mTLS ({server.describe()})"
            return verdict(Outcome.PLAINTEXT, f"auto mTLS: {destination.name} {where}, so "
                           f"the sidecar of {source.name} sends plaintext", "plaintext (auto "
                           "mTLS)", chosen)
        else:
            return verdict(Outcome.MTLS, f"auto mTLS: the sidecar of {source.name} sends "
                           f"Istio mTLS to {destination.name}" + (
                               f" ({server.describe()})" if server.policy else ""),
                           "ISTIO_MUTUAL (auto mTLS)", chosen)
    client = f"{mode.value} ({by})"
    if mode is TlsMode.DISABLE:
        if strict:
            return verdict(Outcome.REFUSED, f"{requires}, and the sidecar of {source.name} "
                           f"sends plaintext: {by}", client, chosen)
        return verdict(Outcome.PLAINTEXT, f"the sidecar of {source.name} sends plaintext: "
                       f"{by}", client, chosen)
    if mode is TlsMode.ISTIO_MUTUAL:
        if dst.dataplane is Dataplane.NONE:
            return verdict(Outcome.REFUSED, f"{by}, so the sidecar of {source.name} opens "
                           f"Istio mTLS, and {destination.name} has no proxy to terminate it "
                           f"({dst.why})", client, chosen)
        if server.mode is Mode.DISABLE and dst.dataplane is Dataplane.SIDECAR:
            return verdict(Outcome.REFUSED, f"{by}, so the sidecar of {source.name} opens "
                           f"Istio mTLS, and {_server(destination, server)} accepts only "
                           f"plaintext on port {port}", client, chosen)
        return verdict(Outcome.MTLS, f"{by}: the sidecar of {source.name} sends Istio mTLS",
                       client, chosen)
    # SIMPLE or MUTUAL: TLS with the rule's own certificates, not Istio's.
    if strict:
        return verdict(Outcome.REFUSED, f"{by}, which originates TLS with its own "
                       f"certificates, and {requires} with Istio's", client, chosen)
    return verdict(Outcome.UNDECIDED, f"{by}, which originates TLS to "
                   f"{destination.name}, which only works if the application terminates TLS "
                   "(netsight cannot tell)", client, chosen)


def _server(destination: Endpoint, server: ServerMode) -> str:
    if server.policy is None:
        return f"{destination.name} ({server.describe()})"
    return f"PeerAuthentication {server.policy.name}"
