"""The direction at every identity, toward (or from) one fixed end.

Egress at every identity toward one destination: each rule then has one answer (it
matches the destination or not) and each policy applies to a set, so the identities that
share the policies selecting them (their egress signature) share the answer without being
grouped one by one. Equal rule lists in many namespaces (an allow-DNS policy) are answered
once; admin-tier answers are kept per vector of rule answers, which most destinations
share. With ``Direction.INGRESS``: ingress at every identity from one fixed source.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from netsight.analyzers.policy import anp, netpol
from netsight.analyzers.policy.endpoints import Endpoint
from netsight.analyzers.policy.engine import PolicyEngine
from netsight.analyzers.policy.fixed_end import admin_tier, rules_admit
from netsight.analyzers.policy.peers import Namespaces
from netsight.analyzers.policy.set_scope import Outcome, exact_where, scoped_out, set_scope
from netsight.analyzers.policy.universe import Bits, Sets, Universe
from netsight.analyzers.policy.verdict import Action, Direction, Tri
from netsight.graph.model.kinds import Kind, parse_key
from netsight.graph.model.records import NetworkPolicyRecord
from netsight.graph.store.live import GraphView

if TYPE_CHECKING:  # reachability passes one in
    from netsight.analyzers.policy.identity_matrix import Transposed


# --- the direction at every peer identity, toward one fixed end -------------------------


@dataclass(eq=False)
class _NamespacePolicies:
    """One namespace's NetworkPolicies isolating for egress, with the identities each
    applies to, kept while they are the same records."""

    anchors: tuple[object, ...]
    isolated: Bits = 0
    # (the policy's egress rules, the namespace they mean when a peer names none, or None
    # when no peer does) -> the identities those policies apply to
    wide: dict[tuple[tuple[netpol.Rule, ...], str | None], Bits] = field(default_factory=dict)
    # peers that can only be pods of this namespace: (rules, subjects) per policy
    local: list[tuple[tuple[netpol.Rule, ...], Bits]] = field(default_factory=list)


@dataclass(eq=False)
class _EgressIndex:
    """Every namespace's egress isolation summed up; rebuilt from the per-namespace entries
    when a NetworkPolicy changed. Equal rule lists (an allow-DNS policy in every namespace)
    are one entry whose subjects are the union, so a destination is matched against each
    distinct rule list once."""

    generation: int
    isolated: Bits = 0
    wide: dict[tuple[tuple[netpol.Rule, ...], str | None], Bits] = field(default_factory=dict)


@dataclass(eq=False)
class AdminIndex:
    """The admin policies with egress rules, their distinct rules numbered once (equal
    rules in many policies answer alike against one destination), and tier answers kept per
    vector of rule answers."""

    tiers: object
    admins: list[anp.AdminPolicy]
    baselines: list[anp.AdminPolicy]
    rules: list[anp.Rule]  # one of each distinct rule
    number: dict[int, int]  # id(rule) -> its distinct rule's number
    answers: dict[tuple[object, ...], tuple[dict[Action, Bits], Bits, Bits]] = field(
        default_factory=dict)


def _changed_namespaces(view: GraphView, since: int) -> set[str] | None:
    """Namespaces of NetworkPolicies changed after graph generation ``since``, from the
    change ring; None when the ring may have dropped some of them (its oldest change is
    newer than ``since``: check every namespace)."""
    oldest = next(iter(view.changes_since(0)), None)
    if oldest is None or oldest.generation > since + 1:
        return None
    prefix = f"{Kind.NETWORK_POLICY}/"
    return {parse_key(c.key).namespace for c in view.changes_since(since)
            if c.key.startswith(prefix)}


def _is_local(rules: tuple[netpol.Rule, ...]) -> bool:
    return all(rule.problem is None and rule.peers is not None and all(
        peer.ip_block is None and peer.namespaces is None for peer in rule.peers)
        for rule in rules)


def peer_home(rules: tuple[netpol.Rule, ...], namespace: str) -> str | None:
    """The namespace a policy's peers mean, if any peer leaves it to the policy."""
    return namespace if any(p.namespaces is None and p.ip_block is None
                            for r in rules for p in r.peers or ()) else None


class TowardFixed:
    """Evaluates egress at every identity of the universe toward one fixed destination,
    mirroring ``PolicyEngine.direction`` per identity: each rule's match against the
    destination is one answer, and the identities a policy applies to are the set.

    With ``direction`` INGRESS: ingress at every identity from one fixed source
    (what_can_reach). A rule's peers then have one answer against the source, and its
    ports one per identity as the destination (named ports resolve on its pods:
    ``Universe.port_match``)."""

    def __init__(self, engine: PolicyEngine, uni: Universe, destination: Endpoint,
                 port: int, protocol: str, *, known: Transposed | None = None,
                 direction: Direction = Direction.EGRESS) -> None:
        self.engine, self.uni, self.direction = engine, uni, direction
        # The fixed end: the destination (egress), or the source (ingress).
        self.other = destination
        self.port, self.protocol = port, protocol
        # Where what is kept per direction lives in the universe.
        self._name = "" if direction is Direction.EGRESS else " (ingress)"
        # The destination's answers to every rule, when already found for every
        # destination at once (full reachability), positioned at this destination.
        self.known = known
        self._subjects: dict[int, tuple[anp.AdminPolicy, Sets]] = uni.derived.setdefault(
            "admin subjects", {})

    def _const(self, answer: Tri) -> Sets:
        everyone = self.uni.all
        return (everyone, 0) if answer else (0, everyone) if answer is None else (0, 0)

    def applying(self, policy: anp.AdminPolicy) -> Sets:
        """The identities ``policy`` applies to (unknown: where namespace labels are)."""
        found = self._subjects.get(id(policy))
        if found is not None and found[0] is policy:
            return found[1]
        if policy.subject_problem is not None:
            sets: Sets = (0, self.uni.all)
        else:
            engine = self.engine
            sets = self.uni.selection(engine.view, engine.namespaces,
                                      policy.subject_namespaces, policy.subject_pods, None)
        self._subjects[id(policy)] = (policy, sets)
        return sets

    def admin_index(self) -> AdminIndex:
        tiers = self.engine.tiers
        found = self.uni.derived.get("admin index" + self._name)
        if isinstance(found, AdminIndex) and found.tiers is tiers:
            return found
        taking = self.direction.value
        admins = [p for p in tiers.admins if (p.record.spec or {}).get(taking)]
        baselines = [p for p in tiers.baselines if (p.record.spec or {}).get(taking)]
        distinct: dict[anp.Rule, int] = {}
        number: dict[int, int] = {}
        for policy in (*admins, *baselines):
            for rule in policy.rules(self.direction):
                number[id(rule)] = distinct.setdefault(rule, len(distinct))
        found = self.uni.derived["admin index" + self._name] = AdminIndex(
            tiers, admins, baselines, list(distinct), number)
        return found

    def policies(self, namespace: str, checked: bool) -> _NamespacePolicies:
        """The namespace's isolating NetworkPolicies, kept with the universe while they are
        the same records (``checked``: no NetworkPolicy changed since they were)."""
        view, uni = self.engine.view, self.uni
        kept: dict[str, _NamespacePolicies] = uni.derived.setdefault(
            "isolating" + self._name, {})
        found = kept.get(namespace)
        if found is not None and checked:
            return found
        records = tuple(r for r in view.for_each(Kind.NETWORK_POLICY, namespace)
                        if isinstance(r, NetworkPolicyRecord))
        if found is not None and _same(found.anchors, records):
            return found
        found = kept[namespace] = _NamespacePolicies(records)
        for record in records:
            model = self.engine.network_policy(record)
            if self.direction not in model.types:
                continue
            subjects, _ = uni.selection(view, self.engine.namespaces, None,
                                        record.pod_selector, namespace)
            found.isolated |= subjects
            rules = model.rules(self.direction)
            if _is_local(rules):
                found.local.append((rules, subjects))
            else:
                key = (rules, peer_home(rules, namespace))
                found.wide[key] = found.wide.get(key, 0) | subjects
        return found

    def egress_index(self) -> _EgressIndex:
        # Records are immutable and a change bumps the kind's generation: while it is the
        # one last summed up, the index stands without looking at each record again.
        generation = self.engine.view.kind_generation(Kind.NETWORK_POLICY)
        found = self.uni.derived.get("egress index" + self._name)
        if isinstance(found, _EgressIndex) and found.generation == generation:
            return found
        changed = _changed_namespaces(self.engine.view, found.generation) \
            if isinstance(found, _EgressIndex) else None
        found = _EgressIndex(generation)
        for namespace in self.uni.ns_bits:
            # Namespaces the change ring names are checked again; None: check them all.
            entry = self.policies(namespace, changed is not None and namespace not in changed)
            found.isolated |= entry.isolated
            for key, subjects in entry.wide.items():
                found.wide[key] = found.wide.get(key, 0) | subjects
        self.uni.derived["egress index" + self._name] = found
        return found

    def _np_answer(self, rules: tuple[netpol.Rule, ...], namespace: str) -> Tri:
        """Whether a policy with these rules admits the destination: True if a rule does,
        None if one might, else False (netpol.evaluate's answer for one policy)."""
        answer: Tri = False
        for rule in rules:
            if rule.problem is not None:
                answer = None
                continue
            peers, ports = rule.matches(self.other, self.other, self.port,
                                        self.protocol, namespace, self.engine.namespaces)
            if peers and ports:
                return True
            if answer is False and None in (peers, ports) and False not in (peers, ports):
                answer = None
        return answer

    def _np_sets(self, rules: tuple[netpol.Rule, ...], namespace: str) -> Sets:
        """Ingress: where a policy with these rules admits the fixed source, over every
        identity as the destination (``_np_answer`` per identity)."""
        ns = self.engine.namespaces
        true, unknown, problem = rules_admit(
            rules, lambda rule: self.uni.port_match(rule.ports, self.port, self.protocol),
            lambda rule: self._const(_peers_answer(rule, self.other, namespace, ns)))
        return true, (self.uni.all if problem else unknown) & ~true

    def np_tier(self) -> Outcome:
        """Per identity, as ``netpol.evaluate`` over the policies isolating it."""
        index = self.egress_index()
        allow = unknown = 0
        known = self.known
        ingress = self.direction is Direction.INGRESS
        for key, subjects in index.wide.items():
            if ingress:
                true, maybe = self._np_sets(key[0], key[1] or "")
                allow |= subjects & true
                unknown |= subjects & maybe
                continue
            answer = self._np_answer(key[0], key[1] or "") if known is None else \
                known.wide(key)
            if answer:
                allow |= subjects
            elif answer is None:
                unknown |= subjects
        other = self.other
        # A NetworkPolicy peer never matches a host-network pod for certain (None).
        spaces = self.uni.ns_bits if other.host_network else \
            [other.namespace] if other.namespace in self.uni.ns_bits else []
        for namespace in spaces:
            for rules, subjects in self.policies(namespace, True).local:
                if not subjects & ~allow:
                    continue
                if ingress:
                    true, maybe = self._np_sets(rules, namespace)
                    allow |= subjects & true
                    unknown |= subjects & maybe
                    continue
                answer = self._np_answer(rules, namespace)
                if answer:
                    allow |= subjects
                elif answer is None:
                    unknown |= subjects
        unknown &= ~allow
        return Outcome(allow, index.isolated & ~allow & ~unknown, unknown)

    def admin_tiers(self) -> tuple[tuple[dict[Action, Bits], Bits, Bits],
                                   tuple[dict[Action, Bits], Bits, Bits] | None]:
        """(Admin tier over every identity, Baseline tier over every identity), each kept
        per vector of rule answers: most destinations answer every rule alike."""
        index = self.admin_index()
        ns = self.engine.namespaces
        if self.direction is Direction.INGRESS:
            # Peers against the source; ports per identity, fixed by port and protocol.
            peers = tuple(_admin_peers(rule, self.other, ns) for rule in index.rules)
            vector: tuple[object, ...] = (self.port, self.protocol, peers)
        else:
            vector = tuple(rule.matches(self.other, self.other, self.port, self.protocol,
                                        ns) for rule in index.rules) if self.known is None \
                else self.known.vector(index)
        found = index.answers.get(vector)
        if found is None:
            def rule_sets(rule: anp.Rule) -> Sets:
                number = index.number[id(rule)]
                if self.direction is Direction.EGRESS:
                    return self._const(vector[number])  # type: ignore[arg-type]
                if rule.problem is not None:
                    return 0, self.uni.all
                answer = peers[number]
                if answer is False:
                    return 0, 0
                ports_true, ports_unknown = self.uni.port_match(rule.ports, self.port,
                                                                self.protocol)
                if answer:
                    return ports_true, ports_unknown
                return 0, ports_true | ports_unknown
            found = index.answers[vector] = admin_tier(
                index.admins, self.direction, self.uni.all, self.applying, rule_sets)
            index.answers[(vector, "baseline")] = admin_tier(
                index.baselines, self.direction, self.uni.all, self.applying, rule_sets)
        return found, index.answers[(vector, "baseline")]

    def evaluate(self) -> Outcome | None:
        """None when the fixed end is one the sets do not model (see ``set_scope``)."""
        scope = set_scope(self.engine)
        if scope is None or self.other.namespace in scope:
            return None
        (chosen, unknown, rest), baseline = self.admin_tiers()
        out = Outcome(chosen[Action.ALLOW], chosen[Action.DENY], unknown)
        onward = chosen[Action.PASS] | rest
        np = self.np_tier()
        out.allow |= np.allow & onward
        out.deny |= np.deny & onward
        out.exact |= np.exact & onward
        onward &= ~(np.allow | np.deny | np.exact)
        # The Baseline tier, kept over every identity, read for those it is reached by.
        assert baseline is not None
        chosen, unknown, rest = baseline
        out.allow |= (chosen[Action.ALLOW] | chosen[Action.PASS] | rest) & onward
        out.deny |= chosen[Action.DENY] & onward
        out.exact |= unknown & onward
        return exact_where(out, scoped_out(self.uni, scope))


def _peers_answer(rule: netpol.Rule, other: Endpoint, namespace: str,
                  ns: Namespaces) -> Tri:
    """Whether a NetworkPolicy rule's peers match ``other`` (as ``Rule.matches``)."""
    if rule.peers is None:
        return True
    found: Tri = False
    for peer in rule.peers:
        answer = peer.matches(other, namespace, ns)
        if answer:
            return True
        if answer is None:
            found = None
    return found


def _admin_peers(rule: anp.Rule, other: Endpoint, ns: Namespaces) -> Tri:
    """Whether an admin rule's peers match ``other`` (as ``anp.Rule.matches``)."""
    found: Tri = False
    for peer in rule.peers:
        answer = peer.matches(other, ns)
        if answer:
            return True
        if answer is None:
            found = None
    return found


def _same(a: tuple[object, ...], b: tuple[object, ...]) -> bool:
    return len(a) == len(b) and all(x is y for x, y in zip(a, b, strict=True))
