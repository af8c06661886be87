"""BackendTLSPolicy: how a Gateway connects to a backend Service over TLS (GEP-1897).

Follows ``BackendTLSPolicy`` of gateway.networking.k8s.io v1 and v1alpha3 (the two define
the same spec and reasons): ``spec.targetRefs`` name Services (Extended support; other
kinds are implementation-specific), a ``sectionName`` narrows a ref to one Service port by
name; ``spec.validation`` gives the SNI ``hostname``, optional ``subjectAltNames``, and
either ``caCertificateRefs`` (one ConfigMap is Core support) or
``wellKnownCACertificates: System``. Conditions as a conformant controller sets them:

- Accepted: False/Invalid for a spec no controller can use; False/TargetNotFound when no
  target exists; False/NoValidCACertificate when every caCertificateRef is invalid;
  False/Conflicted when an older policy (creationTimestamp, then namespace/name) targets the
  same Service and sectionName. A policy on one port and another on the whole Service do not
  conflict: the port's is more specific and applies there.
- ResolvedRefs: False/InvalidKind for a ref that is not a core ConfigMap, False/
  InvalidCACertificateRef for one that does not exist. ConfigMap existence is decided only
  where the graph knows every ConfigMap: manifests, or a cluster whose ConfigMaps are
  watched by name (SECRET_METADATA); otherwise the condition is Unknown rather than
  guessed. The graph keeps no ConfigMap data: where a manifest carries it, whether
  ``ca.crt`` is a PEM certificate bundle is judged when the record is built (graph/model/pem.py)
  and a malformed one is InvalidCACertificateRef; a watched ConfigMap resolves by existence.

Targets are found through the graph's ``target_ref`` edges (graph/store/policy_edges.py):
the policies of a Service are its incoming edges, not a scan of every policy.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from netsight.analyzers.routing import conditions as c
from netsight.analyzers.routing.gateway_objects import (
    SERVICE,
    as_list,
    as_map,
    is_gateway_api,
    not_in_input,
    opt_str,
    spec_of,
)
from netsight.graph.model.kinds import Kind, Rel, make_key
from netsight.graph.model.records import ConfigMapRecord, Record, ServiceRecord
from netsight.graph.store.live import GraphView, Source

BACKEND_TLS_POLICY = "BackendTLSPolicy"
CONFIG_MAP = "ConfigMap"
WELL_KNOWN_SYSTEM = "System"

# Policy reasons (PolicyConditionReason) beyond the route and listener ones.
INVALID = "Invalid"
TARGET_NOT_FOUND = "TargetNotFound"
CONFLICTED = "Conflicted"
NO_VALID_CA_CERTIFICATE = "NoValidCACertificate"
INVALID_CA_CERTIFICATE_REF = "InvalidCACertificateRef"


@dataclass(frozen=True, slots=True)
class PolicyTarget:
    """spec.targetRefs[index] of a BackendTLSPolicy (LocalPolicyTargetReferenceWithSectionName)."""

    index: int
    group: str
    kind: str
    name: str
    section_name: str | None

    @property
    def is_service(self) -> bool:
        return (self.group, self.kind) == ("", SERVICE)

    @property
    def path(self) -> str:
        return f"spec.targetRefs[{self.index}]"

    def describe(self, namespace: str) -> str:
        port = f" port {self.section_name}" if self.section_name else ""
        what = "Service" if self.is_service else f"{self.kind} ({self.group or 'core'})"
        return f"{what} {namespace}/{self.name}{port}"


@dataclass(frozen=True, slots=True)
class CARef:
    path: str
    group: str
    kind: str
    name: str


@dataclass(eq=False)
class BackendTLSState:
    """One BackendTLSPolicy as read, with its conditions computed on first use: route
    resolution finds the policy of every backend, but only some answers show it."""

    record: Record
    targets: tuple[PolicyTarget, ...]
    hostname: str | None
    ca_refs: tuple[CARef, ...]
    well_known: str | None
    subject_alt_names: tuple[str, ...]  # "Hostname:x" or "URI:y"
    owner: BackendTLSPolicies | None = field(default=None, repr=False)
    _conditions: dict[str, c.Cond] | None = field(default=None, repr=False)
    _notes: list[str] = field(default_factory=list, repr=False)
    # Per failed reference: (field path, reason, message) — for findings.
    _ref_problems: list[tuple[str, str, str]] = field(default_factory=list, repr=False)
    # Targets another policy takes: (target description, the winner's namespace/name).
    _lost: list[tuple[str, str]] = field(default_factory=list, repr=False)

    def _evaluated(self) -> None:
        if self._conditions is None:
            self._conditions = {}
            if self.owner is not None:
                self.owner.compute_conditions(self)

    @property
    def conditions(self) -> dict[str, c.Cond]:
        self._evaluated()
        assert self._conditions is not None
        return self._conditions

    @property
    def notes(self) -> list[str]:
        self._evaluated()
        return self._notes

    @property
    def ref_problems(self) -> list[tuple[str, str, str]]:
        self._evaluated()
        return self._ref_problems

    @property
    def lost(self) -> list[tuple[str, str]]:
        self._evaluated()
        return self._lost

    @property
    def ref(self) -> str:
        return f"{self.record.namespace}/{self.record.name}"

    @property
    def accepted(self) -> bool:
        return self.conditions[c.ACCEPTED].ok


def read_policy(record: Record) -> BackendTLSState:
    spec = spec_of(record)
    targets = []
    for i, raw in enumerate(as_list(spec.get("targetRefs"))):
        raw = as_map(raw)
        name = opt_str(raw.get("name"))
        kind = opt_str(raw.get("kind"))
        if name is None or kind is None:
            continue
        targets.append(PolicyTarget(i, str(raw.get("group") or ""), kind, name,
                                    opt_str(raw.get("sectionName"))))
    validation = as_map(spec.get("validation"))
    ca_refs = tuple(
        CARef(f"spec.validation.caCertificateRefs[{i}]", str(as_map(r).get("group") or ""),
              str(as_map(r).get("kind") or ""), str(as_map(r).get("name") or ""))
        for i, r in enumerate(as_list(validation.get("caCertificateRefs"))))
    sans = []
    for raw in as_list(validation.get("subjectAltNames")):
        raw = as_map(raw)
        kind = str(raw.get("type") or "")
        value = raw.get("uri") if kind == "URI" else raw.get("hostname")
        sans.append(f"{kind}:{value}")
    hostname = opt_str(validation.get("hostname"))
    return BackendTLSState(
        record, tuple(targets), hostname.lower() if hostname else None, ca_refs,
        opt_str(validation.get("wellKnownCACertificates")), tuple(sans))


def seniority(record: Record) -> tuple[str, str, str]:
    """Precedence among conflicting policies: the older creationTimestamp (an unknown one
    counts as newest), then namespace/name in alphabetical order."""
    return record.created or "9999", record.namespace, record.name


class BackendTLSPolicies:
    """BackendTLSPolicies over one view for one answer, each evaluated once."""

    def __init__(self, view: GraphView) -> None:
        self.view = view
        self._states: dict[str, BackendTLSState] = {}
        self._for_backend: dict[tuple[str, int | None], BackendTLSState | None] = {}

    def of_service(self, service_key: str) -> list[Record]:
        """BackendTLSPolicies whose targetRefs name the Service (the graph's edges)."""
        return [r for r in self.view.neighbors(service_key, Rel.TARGET_REF, incoming=True,
                                               kind=BACKEND_TLS_POLICY) if is_gateway_api(r)]

    def evaluate(self, record: Record) -> BackendTLSState:
        """The policy, read once per answer; its conditions are computed when first read."""
        state = self._states.get(record.key)
        if state is None or state.record is not record:
            state = self._states[record.key] = read_policy(record)
            state.owner = self
        return state

    def targets(self, record: Record) -> tuple[PolicyTarget, ...]:
        return self.evaluate(record).targets

    def for_backend(self, service: ServiceRecord, port: int | None) -> BackendTLSState | None:
        """The policy that configures TLS to this Service port, if any: one naming the
        port's name in sectionName before one naming the whole Service; among equals, the
        one with precedence."""
        key = (service.key, port)
        if key not in self._for_backend:
            self._for_backend[key] = self._choose(service, port)
        return self._for_backend[key]

    def _choose(self, service: ServiceRecord, port: int | None) -> BackendTLSState | None:
        policies = self.of_service(service.key)
        if not policies:
            return None
        port_name = next((p.name for p in service.ports if p.port == port), None)
        best: tuple[int, tuple[str, str, str]] | None = None
        chosen: Record | None = None
        for record in policies:
            for target in self.targets(record):
                if not target.is_service or target.name != service.name:
                    continue
                if target.section_name is None:
                    rank = 1
                elif port_name is not None and target.section_name == port_name:
                    rank = 0
                else:
                    continue
                candidate = (rank, seniority(record))
                if best is None or candidate < best:
                    best, chosen = candidate, record
        return None if chosen is None else self.evaluate(chosen)

    # --- conditions --------------------------------------------------------------------------

    def compute_conditions(self, state: BackendTLSState) -> None:
        resolved, usable, pending = self._resolved_refs(state)
        state.conditions[c.RESOLVED_REFS] = resolved
        accepted = self._invalid(state)
        if accepted is None:
            accepted, found = self._targets(state)
            if accepted is None and state.ca_refs and usable == 0 and not pending:
                accepted = c.false(NO_VALID_CA_CERTIFICATE,
                                   f"no valid caCertificateRef: {resolved.message}")
            elif accepted is None and state.ca_refs and usable == 0:
                # Every ref left is one not evaluated: whether any is valid is not known.
                accepted = c.unknown("whether a caCertificateRef is valid is not evaluated: "
                                     f"{resolved.message}")
            if accepted is None:
                accepted = self._conflicts(state, found)
        state.conditions[c.ACCEPTED] = accepted or c.true(c.ACCEPTED, "policy accepted")

    def _invalid(self, state: BackendTLSState) -> c.Cond | None:
        """Accepted=False/Invalid: a spec the API server's validation would refuse, or a
        wellKnownCACertificates value no implementation recognises."""
        if not state.targets:
            return c.false(INVALID, "spec.targetRefs names no object (group, kind and name "
                           "are required)")
        if state.hostname is None:
            return c.false(INVALID, "spec.validation.hostname is required (the SNI and the "
                           "name the backend's certificate must match)")
        if state.ca_refs and state.well_known:
            return c.false(INVALID, "spec.validation sets both caCertificateRefs and "
                           "wellKnownCACertificates; only one may be given")
        if not state.ca_refs and not state.well_known:
            return c.false(INVALID, "spec.validation needs caCertificateRefs or "
                           "wellKnownCACertificates")
        if state.well_known and state.well_known != WELL_KNOWN_SYSTEM:
            return c.false(INVALID, f"wellKnownCACertificates {state.well_known!r} is not "
                           f"recognised ({WELL_KNOWN_SYSTEM} is the only value)")
        if state.well_known:
            state.notes.append(f"BackendTLSPolicy {state.ref}: wellKnownCACertificates is "
                               "implementation-specific; whether this controller supports it "
                               "(else Accepted=False/Invalid) is not evaluated")
        return None

    def _targets(self, state: BackendTLSState) -> tuple[c.Cond | None, list[PolicyTarget]]:
        """(Accepted=False/TargetNotFound or Unknown, else None; the Service targets found)."""
        ns = state.record.namespace
        found: list[PolicyTarget] = []
        missing = []
        for target in state.targets:
            if not target.is_service:
                state.notes.append(f"BackendTLSPolicy {state.ref} {target.path}: "
                                   f"{target.describe(ns)} is an implementation-specific "
                                   "target; not evaluated")
                continue
            service = self.view.get(make_key(Kind.SERVICE, ns, target.name))
            if not isinstance(service, ServiceRecord):
                missing.append(f"{target.describe(ns)}: Service not found")
            elif target.section_name is not None and all(
                    p.name != target.section_name for p in service.ports):
                names = ", ".join(p.name for p in service.ports if p.name) or "none"
                missing.append(f"{target.describe(ns)}: the Service has no port named "
                               f"{target.section_name} (named ports: {names})")
            else:
                found.append(target)
        if found:
            for problem in missing:
                state.notes.append(f"BackendTLSPolicy {state.ref}: {problem}")
            return None, found
        if missing:
            return c.false(TARGET_NOT_FOUND, "; ".join(missing)), found
        return c.unknown("only implementation-specific targets, not evaluated"), found

    def _conflicts(self, state: BackendTLSState, found: list[PolicyTarget]) -> c.Cond | None:
        """Accepted=False/Conflicted when a policy with precedence takes every target found;
        losing only some is noted."""
        ns = state.record.namespace
        mine = seniority(state.record)
        for target in found:
            winner = None
            for rival in self.of_service(make_key(Kind.SERVICE, ns, target.name)):
                if rival.key == state.record.key or seniority(rival) >= mine:
                    continue
                same_port = any(t.is_service and t.name == target.name
                                and t.section_name == target.section_name
                                for t in self.targets(rival))
                if same_port and (winner is None or seniority(rival) < seniority(winner)):
                    winner = rival
            if winner is not None:
                state.lost.append((target.describe(ns), f"{winner.namespace}/{winner.name}"))
        if not state.lost:
            return None
        taken = "; ".join(f"{what} is taken by BackendTLSPolicy {winner}, which has "
                          "precedence (older, or first by namespace/name)"
                          for what, winner in state.lost)
        if len(state.lost) == len(found):
            return c.false(CONFLICTED, taken)
        state.notes.append(f"BackendTLSPolicy {state.ref}: {taken}")
        return None

    def _resolved_refs(self, state: BackendTLSState) -> tuple[c.Cond, int, int]:
        """(ResolvedRefs, how many caCertificateRefs are usable, how many not decided)."""
        if not state.ca_refs:
            return c.true(c.RESOLVED_REFS, "no caCertificateRefs to resolve"), 0, 0
        ns = state.record.namespace
        failed: list[tuple[str, str]] = []
        undecided = []
        absent: list[str] = []  # not in the manifests: may be created elsewhere
        # The graph keeps a ConfigMap's identity only (watched as metadata, like Secrets). If
        # ConfigMaps are not watched, or may not be listed, a missing one may still exist.
        untracked = self.view.untracked(CONFIG_MAP)
        for ref in state.ca_refs:
            where = f"{ref.path} ({ref.kind or '?'} {ns}/{ref.name})"
            problem: tuple[str, str] | None = None
            if (ref.group, ref.kind) != ("", CONFIG_MAP):
                problem = (c.INVALID_KIND, f"{where}: kind {ref.kind or '(none)'} of group "
                           f"{ref.group or 'core'} is not supported (a core ConfigMap is)")
            elif not ref.name:
                # name is required (ObjectName, minLength 1): nothing made elsewhere matches.
                problem = (INVALID_CA_CERTIFICATE_REF, f"{where}: the reference has no name")
            elif untracked is not None:
                undecided.append(where)
            else:
                config_map = self.view.get(make_key(CONFIG_MAP, ns, ref.name))
                if config_map is None and self.view.source is Source.MANIFESTS:
                    absent.append(not_in_input(CONFIG_MAP, where))
                elif config_map is None:
                    problem = (INVALID_CA_CERTIFICATE_REF, f"{where}: ConfigMap not found")
                elif isinstance(config_map, ConfigMapRecord) and config_map.ca_problem:
                    problem = (INVALID_CA_CERTIFICATE_REF,
                               f"{where}: ConfigMap data is malformed ({config_map.ca_problem})")
            if problem is not None:
                failed.append(problem)
                state.ref_problems.append((ref.path, *problem))
        if len(state.ca_refs) > 1:
            state.notes.append(f"BackendTLSPolicy {state.ref}: more than one caCertificateRef "
                               "is implementation-specific (one ConfigMap is Core)")
        for message in absent:
            state.notes.append(f"BackendTLSPolicy {state.ref} {message}")
        pending = len(undecided) + len(absent)
        usable = len(state.ca_refs) - len(failed) - pending
        if failed:
            reason, message = failed[0]
            more = f" (and {len(failed) - 1} more)" if len(failed) > 1 else ""
            return c.false(reason, message + more), usable, pending
        if absent:
            return c.unknown("; ".join(absent)), usable, pending
        if undecided:
            state.notes.append(f"BackendTLSPolicy {state.ref} {', '.join(undecided)}: "
                               f"ConfigMap existence not evaluated ({untracked})")
            return c.unknown(f"ConfigMap existence not evaluated ({untracked})"), usable, \
                pending
        return c.true(c.RESOLVED_REFS, "caCertificateRefs resolved (ca.crt is checked only "
                      "where the input carries a ConfigMap's data)"), usable, pending
