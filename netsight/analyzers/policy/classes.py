"""Flows decided for sets of identities at once, instead of one flow per identity.

Every identity of the cluster is a bit (``universe.Universe``); a rule's peers, and the
subjects of a policy, are sets of them, found once through the selector indexes and kept
with the universe. Two evaluations mirror ``PolicyEngine.direction`` over such sets:

- ``FixedEnd``: the direction taken at one end (ingress at a destination) against every
  identity as the other end; the tiers are walked with set operations exactly as
  ``anp.evaluate`` and ``netpol.evaluate`` walk them for one peer;
- ``TowardFixed``: egress at every identity toward one destination. Each rule then has one
  answer (it matches the destination or not) and each policy applies to a set, so the
  identities that share the policies selecting them (their egress signature) share the
  answer without being grouped one by one. Equal rule lists in many namespaces (an
  allow-DNS policy) are answered once; admin-tier answers are kept per vector of rule
  answers, which most destinations share.

``who_can_reach`` combines the two for one destination; ``reachability`` for every
destination identity (grouped by what its ingress depends on: ingress classes).

Exactness: the fast path decides only True and False. Anything it does not model goes to
the per-pod path (``reach.tally`` over ``PolicyEngine``), whose answer is the reference:

- an unknown answer anywhere (namespace labels not given, a rule netsight cannot read, two
  admin policies at one priority disagreeing): those identities go to the per-pod path,
  which also words the reasons;
- identities with host-network pods or standing-in workloads (``Universe.exact``), the
  fixed end's own identities, pods whose IPs or ports a CIDR or named port tells apart;
- namespaces where ``PolicyEngine.unevaluated`` has anything to say, and every policy kind
  the engine reads besides NetworkPolicy, AdminNetworkPolicy, BaselineAdminNetworkPolicy and
  ClusterNetworkPolicy (Cilium's, Istio's, whatever kinds engine.py evaluates or lists as
  unevaluated now or later): flows with an end in a namespace holding one go to the per-pod
  path, and one that is cluster-scoped (a CiliumClusterwideNetworkPolicy) or in a mesh's
  root namespace turns the fast path off. ``FixedEnd`` and ``TowardFixed`` apply this
  themselves (``set_scope``), so no caller can take their answer where it does not hold;
- Calico policies anywhere, unreadable kinds, or both admin API versions in use: the fast
  path is off (Calico's tiers decide every direction of every pod once one exists).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from netsight.analyzers.policy import anp, cnp, netpol
from netsight.analyzers.policy.endpoints import Endpoint, from_pod
from netsight.analyzers.policy.engine import (
    READS,
    ROOT_NAMESPACE,
    UNEVALUATED,
    PolicyEngine,
)
from netsight.analyzers.policy.external_regions import Region
from netsight.analyzers.policy.peer_groups import Group
from netsight.analyzers.policy.peers import IPBlock, Namespaces, PortMatch, ports_match
from netsight.analyzers.policy.reach import Tally, policy_blocks
from netsight.analyzers.policy.results import (
    MEMBERS_SHOWN,
    PeerOut,
    PodCounts,
    Summary,
    peer_out,
    region_out,
)
from netsight.analyzers.policy.universe import Bits, Labels, Sets, Universe, members, universe
from netsight.analyzers.policy.verdict import Action, Direction, Tri
from netsight.graph.model.kinds import POD_LIKE_KINDS, Kind, Rel, parse_key
from netsight.graph.model.records import NetworkPolicyRecord, Record
from netsight.graph.store.live import GraphView, ProblemKind

# Kinds whose meaning the set evaluation models; any other kind the engine reads is a
# policy kind it does not, found generically (see the module docstring).
MODELED: frozenset[str] = frozenset({
    Kind.POD, Kind.NAMESPACE, Kind.NETWORK_POLICY, anp.ANP_KIND, anp.BANP_KIND, anp.CNP_KIND,
    "Node", *POD_LIKE_KINDS,
    # Read only by Istio's layer (a port's protocol), which has no say where no Istio
    # policy is: its kinds send their namespaces to the per-pod path.
    Kind.SERVICE})
# The kinds of policies the engine reads but the set evaluation does not model, besides
# those it lists as unevaluated.
UNMODELED: tuple[str, ...] = tuple(sorted(READS - MODELED - {u.kind for u in UNEVALUATED}))


def _unmodeled_scopes(view: GraphView) -> frozenset[str] | None:
    """Namespaces holding objects of policy kinds the set evaluation does not model (their
    flows go to the per-pod path); None when such an object is cluster-scoped or in the
    mesh root namespace, where it may bear on any flow (the fast path is off)."""
    found: set[str] = set()
    for kind in UNMODELED:
        for record in view.for_each(kind):
            if not record.namespace or record.namespace == ROOT_NAMESPACE:
                return None
            found.add(record.namespace)
    return frozenset(found)


def set_scope(engine: PolicyEngine) -> frozenset[str] | None:
    """Where the set evaluation may answer: None when nowhere (a kind it needs is
    unreadable, both admin API versions are in use, Calico policies exist — Calico then
    decides every direction of every pod, ``calico.evaluate`` — or an unmodeled policy
    object is cluster-scoped); else the namespaces whose pods it leaves to the per-pod path
    (``_unmodeled_scopes``: Cilium, Istio and other policy objects there, kept with the view
    until one of those kinds changes)."""
    if engine.unreadable() or engine.mixed_versions() or engine.calico_present():
        return None
    return engine.view.derived("policy.unmodeled scopes", UNMODELED,
                                _unmodeled_scopes)


def _scoped_out(uni: Universe, scope: frozenset[str]) -> Bits:
    """The identities of ``scope``'s namespaces (for the per-pod path)."""
    bits = 0
    for namespace in scope:
        bits |= uni.ns_bits.get(namespace, 0)
    return bits


def _exact_where(out: Outcome, bits: Bits) -> Outcome:
    """``out`` with the identities of ``bits`` left to the per-pod path."""
    if bits:
        out.allow &= ~bits
        out.deny &= ~bits
        out.exact |= bits
    return out


def _unevaluated_anywhere(engine: PolicyEngine) -> bool:
    """Whether ``PolicyEngine.unevaluated`` could have anything to say about any flow: an
    object of a kind it lists, or any object that could not be read. When not, asking it
    per namespace is skipped."""
    view = engine.view
    for kind in UNEVALUATED:
        if kind.kind == anp.CNP_KIND:
            if any(not cnp.evaluated(r) for r in view.for_each(kind.kind)):
                return True
        elif view.count(kind.kind):
            return True
    return engine.mixed_versions() is not None or any(
        p.kind is ProblemKind.MALFORMED for p in view.problems())


# --- one direction at a fixed end, over every peer identity -----------------------------


def admin_tier(policies: Sequence[anp.AdminPolicy], direction: Direction, live: Bits,
               applying: Callable[[anp.AdminPolicy], Sets],
               rule_sets: Callable[[anp.Rule], Sets]
               ) -> tuple[dict[Action, Bits], Bits, Bits]:
    """``anp.evaluate`` over sets: (chosen per action, unknown, matched no rule).

    ``applying(policy)``: the identities it applies to (true, unknown), those where the
    subject is the varying end, else all or none; ``rule_sets(rule)``: where the rule
    matches (true, unknown). Per identity, exactly anp.evaluate's walk: by priority, the
    first matching rule of each policy; at one priority, policies that disagree (or a
    policy or rule netsight cannot read) leave it unknown."""
    chosen_all: dict[Action, Bits] = {Action.ALLOW: 0, Action.DENY: 0, Action.PASS: 0}
    unknown = 0
    rest = live
    i = 0
    while i < len(policies) and rest:
        priority = policies[i].priority
        j = i
        while j < len(policies) and policies[j].priority == priority:
            j += 1
        active = rest  # the identities entering this priority, minus those found unknown
        chosen: dict[Action, Bits] = {Action.ALLOW: 0, Action.DENY: 0, Action.PASS: 0}
        for policy in policies[i:j]:
            if not active:
                break
            if not (policy.record.spec or {}).get(direction.value):
                continue  # no rules in this direction: it does not take part
            applies_true, applies_unknown = applying(policy)
            lost = active & applies_unknown
            pending = active & applies_true & ~lost
            for rule in policy.rules(direction):
                if not pending:
                    break
                if rule.problem is not None or rule.action is Action.UNKNOWN:
                    lost |= pending
                    break
                true, maybe = rule_sets(rule)
                lost |= pending & maybe
                hit = pending & true & ~maybe
                for action in chosen:
                    if action is not rule.action:
                        lost |= hit & chosen[action]
                chosen[rule.action] |= hit & ~lost
                pending &= ~(hit | maybe)
            if lost:
                unknown |= lost
                active &= ~lost
                for action in chosen:
                    chosen[action] &= ~lost
        decided = 0
        for action, bits in chosen.items():
            chosen_all[action] |= bits
            decided |= bits
        rest = active & ~decided
        i = j
    return chosen_all, unknown, rest


@dataclass
class Outcome:
    """A direction's answer over peer identities: allowed, denied, or for the per-pod path."""

    allow: Bits = 0
    deny: Bits = 0
    exact: Bits = 0


def _any(parts: Iterable[Sets]) -> Sets:
    """Kleene OR over sets: true if any is true, else unknown if any is unknown."""
    true = unknown = 0
    for t, u in parts:
        true |= t
        unknown |= u
    return true, unknown & ~true


class FixedEnd:
    """Evaluates the direction taken at ``subject`` against every identity of the universe
    as the other end (ingress at a destination over sources, egress at a source over
    destinations), mirroring ``PolicyEngine.direction``."""

    def __init__(self, engine: PolicyEngine, uni: Universe, direction: Direction,
                 subject: Endpoint, port: int, protocol: str, *,
                 memo: dict[object, object] | None = None) -> None:
        self.engine, self.uni, self.direction = engine, uni, direction
        self.subject, self.port, self.protocol = subject, port, protocol
        # Shared by the FixedEnds of one call on one port: admin-tier answers per list of
        # policies (callers pass the same list objects for subjects alike).
        self.memo = memo

    def ports(self, rule_ports: tuple[PortMatch, ...] | None) -> Sets:
        if self.direction is Direction.INGRESS:  # the subject is the destination
            answer = ports_match(rule_ports, self.port, self.protocol, self.subject)
            everyone = self.uni.all
            return (everyone, 0) if answer else (0, everyone) if answer is None else (0, 0)
        return self.uni.port_match(rule_ports, self.port, self.protocol)

    def admin_peer(self, peer: anp.Peer) -> Sets:
        uni = self.uni
        if peer.networks:
            return _any(uni.block(n) for n in peer.networks)
        if peer.nodes is not None:
            return 0, 0  # a pod-network pod is no node (host-network pods are exact)
        return uni.selection(self.engine.view, self.engine.namespaces, peer.namespaces,
                             peer.pods, None)

    def np_peer(self, peer: netpol.Peer, home: str) -> Sets:
        uni = self.uni
        if peer.ip_block is not None:
            return uni.block(peer.ip_block)
        return uni.selection(self.engine.view, self.engine.namespaces, peer.namespaces,
                             peer.pods, home if peer.namespaces is None else None)

    def _peers(self, rule: anp.Rule | netpol.Rule, home: str) -> Sets:
        """A rule's peers as sets, kept with the universe for as long as the rule lives."""
        kept: dict[int, tuple[object, Sets]] = self.uni.derived.setdefault("rule peers", {})
        found = kept.get(id(rule))
        if found is not None and found[0] is rule:
            return found[1]
        if isinstance(rule, anp.Rule):
            sets = _any(self.admin_peer(p) for p in rule.peers)
        elif rule.peers is None:
            sets = (self.uni.all, 0)
        else:
            sets = _any(self.np_peer(p, home) for p in rule.peers)
        kept[id(rule)] = (rule, sets)
        return sets

    def admin_rule(self, rule: anp.Rule) -> Sets:
        ports_true, ports_unknown = self.ports(rule.ports)
        if not ports_true | ports_unknown:
            return 0, 0
        peers_true, peers_unknown = self._peers(rule, "")
        true = peers_true & ports_true
        return true, (peers_true | peers_unknown) & (ports_true | ports_unknown) & ~true

    def admin_tier(self, policies: Sequence[anp.AdminPolicy], applies: dict[int, Tri],
                   live: Bits) -> tuple[dict[Action, Bits], Bits, Bits]:
        everyone = self.uni.all

        def applying(policy: anp.AdminPolicy) -> Sets:
            answer = None if policy.subject_problem is not None else applies[id(policy)]
            return (everyone, 0) if answer else (0, everyone) if answer is None else (0, 0)

        return admin_tier(policies, self.direction, live, applying, self.admin_rule)

    def np_tier(self, policies: list[netpol.NetPol]) -> Outcome | None:
        isolating = [p for p in policies if self.direction in p.types]
        if not isolating:
            return None
        allow = unknown = 0
        problem = False
        for policy in isolating:
            true, maybe, unreadable = self.rule_sets(policy.rules(self.direction),
                                                     policy.record.namespace)
            allow |= true
            unknown |= maybe
            problem |= unreadable
        everyone = self.uni.all
        unknown = (everyone if problem else unknown) & ~allow
        return Outcome(allow, everyone & ~allow & ~unknown, unknown)

    def rule_sets(self, rules: Iterable[netpol.Rule], home: str) -> tuple[Bits, Bits, bool]:
        """What NetworkPolicy ``rules`` of a policy in ``home`` admit: (true, unknown and
        not true, whether a rule could not be read)."""
        true = unknown = 0
        problem = False
        for rule in rules:
            if rule.problem is not None:
                problem = True
                continue
            ports_true, ports_unknown = self.ports(rule.ports)
            if not ports_true | ports_unknown:
                continue
            peers_true, peers_unknown = self._peers(rule, home)
            hit = peers_true & ports_true
            true |= hit
            unknown |= (peers_true | peers_unknown) & (ports_true | ports_unknown) & ~hit
        return true, unknown, problem

    def evaluate(self, applicable: tuple[list[anp.AdminPolicy], list[anp.AdminPolicy],
                                         dict[int, Tri]] | None = None,
                 policies: list[netpol.NetPol] | None = None) -> Outcome | None:
        """None when the subject is one the per-pod path must take (host network).
        ``applicable``: ``engine.applicable(subject)``, ``policies``:
        ``engine.network_policies(subject)``, when already known."""
        subject, engine = self.subject, self.engine
        scope = set_scope(engine)
        if subject.external or subject.host_network or scope is None or \
                subject.namespace in scope:
            return None
        admins, baselines, applies = applicable or engine.applicable(subject)
        chosen, unknown, rest = self.kept_tier(admins, applies)
        out = Outcome(chosen[Action.ALLOW], chosen[Action.DENY], unknown)
        onward = chosen[Action.PASS] | rest
        np = self.np_tier(engine.network_policies(subject) if policies is None else policies)
        if np is not None:
            out.allow |= np.allow & onward
            out.deny |= np.deny & onward
            out.exact |= np.exact & onward
            return _exact_where(out, _scoped_out(self.uni, scope))
        chosen, unknown, rest = self.kept_tier(baselines, applies)
        # The default: allow. (A tier over every identity, read for those it is reached by.)
        out.allow |= (chosen[Action.ALLOW] | chosen[Action.PASS] | rest) & onward
        out.deny |= chosen[Action.DENY] & onward
        out.exact |= unknown & onward
        return _exact_where(out, _scoped_out(self.uni, scope))

    def kept_tier(self, policies: list[anp.AdminPolicy], applies: dict[int, Tri]
                  ) -> tuple[dict[Action, Bits], Bits, Bits]:
        """``admin_tier`` over every identity, kept with the universe per input: which of
        the tier's policies apply to the subject, and (only where a rule names a port) the
        subject's container ports, which are all it reads of the subject."""
        tiers = self.engine.tiers
        kept: tuple[object, dict[tuple[object, ...], tuple[dict[Action, Bits], Bits, Bits]]]
        kept = self.uni.derived.get("fixed tiers") or (None, {})
        if kept[0] is not tiers:  # the policies stay alive with it, so ids stay theirs
            kept = (tiers, {})
            self.uni.derived["fixed tiers"] = kept
        # Per tier set and direction: the policies with rules in it, and whether any of
        # their rules names a port.
        flags: tuple[set[int], bool] | None = kept[1].get((self.direction,))  # type: ignore[assignment]
        if flags is None:
            direction = self.direction.value
            with_rules = [p for p in (*tiers.admins, *tiers.baselines)
                          if (p.record.spec or {}).get(direction)]
            flags = ({id(p) for p in with_rules},
                     any(m.name is not None for p in with_rules
                         for r in p.rules(self.direction) for m in r.ports or ()))
            kept[1][(self.direction,)] = flags  # type: ignore[assignment]
        ids, named = flags
        ported = self.subject.ports if named and self.direction is Direction.INGRESS else ()
        memo = self.memo
        if memo is not None:
            held = memo.get((id(policies), self.direction, ported))
            if held is not None and held[0] is policies:  # type: ignore[index]
                return held[1]  # type: ignore[index,no-any-return]
        taking = [p for p in policies if id(p) in ids]
        key = (self.direction, self.port, self.protocol,
               tuple((id(p), applies[id(p)]) for p in taking),
               self.subject.ports if named and self.direction is Direction.INGRESS else ())
        found = kept[1].get(key)
        if found is None:
            found = self.admin_tier(taking, applies, self.uni.all)
            kept[1][key] = found
        if memo is not None:
            memo[(id(policies), self.direction, ported)] = (policies, found)
        return found


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
class _AdminIndex:
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


def _home(rules: tuple[netpol.Rule, ...], namespace: str) -> str | None:
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
                 port: int, protocol: str, *, known: _Transposed | None = None,
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

    def admin_index(self) -> _AdminIndex:
        tiers = self.engine.tiers
        found = self.uni.derived.get("admin index" + self._name)
        if isinstance(found, _AdminIndex) and found.tiers is tiers:
            return found
        taking = self.direction.value
        admins = [p for p in tiers.admins if (p.record.spec or {}).get(taking)]
        baselines = [p for p in tiers.baselines if (p.record.spec or {}).get(taking)]
        distinct: dict[anp.Rule, int] = {}
        number: dict[int, int] = {}
        for policy in (*admins, *baselines):
            for rule in policy.rules(self.direction):
                number[id(rule)] = distinct.setdefault(rule, len(distinct))
        found = self.uni.derived["admin index" + self._name] = _AdminIndex(
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
                key = (rules, _home(rules, namespace))
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
        true = unknown = 0
        problem = False
        for rule in rules:
            if rule.problem is not None:
                problem = True
                continue
            ports_true, ports_unknown = self.uni.port_match(rule.ports, self.port,
                                                            self.protocol)
            if not ports_true | ports_unknown:
                continue
            peers = _peers_answer(rule, self.other, namespace, self.engine.namespaces)
            if peers:
                true |= ports_true
                unknown |= ports_unknown
            elif peers is None:
                unknown |= ports_true | ports_unknown
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
        return _exact_where(out, _scoped_out(self.uni, scope))


class _Transposed:
    """What ``TowardFixed`` asks of one destination (does each distinct NetworkPolicy rule
    list, each distinct admin egress rule admit it?), answered for every destination at
    once as sets, through the same peer and port sets as ``FixedEnd`` at a source (so
    exactly as ``Rule.matches`` per destination), then read per destination from its
    namespace's slice. Only for destinations whose pods agree on every CIDR and named port
    (``Matrix.per_pod`` leaves the others out)."""

    def __init__(self, engine: PolicyEngine, uni: Universe, port: int, protocol: str) -> None:
        self.uni = uni
        self.probe = FixedEnd(engine, uni, Direction.EGRESS, Endpoint(""), port, protocol)
        self._wide: dict[int, tuple[object, Sets]] = {}
        self._rules: dict[int, tuple[anp.Rule, Sets]] = {}
        self._slices: dict[int, tuple[int, int]] = {}
        self._namespace = ""
        self._start = 0
        self._offset = 0

    def at(self, position: int, namespace: str, start: int) -> None:
        """Read the answers of the destination at ``position`` (its namespace's identities
        start at ``start``) from now on."""
        if namespace != self._namespace:
            self._namespace, self._start = namespace, start
            self._slices = {}
        self._offset = position - start

    def _read(self, key: int, sets: Sets) -> Tri:
        sliced = self._slices.get(key)
        if sliced is None:
            mask = self.uni.ns_bits[self._namespace] >> self._start
            sliced = self._slices[key] = ((sets[0] >> self._start) & mask,
                                          (sets[1] >> self._start) & mask)
        if sliced[0] >> self._offset & 1:
            return True
        return None if sliced[1] >> self._offset & 1 else False

    def wide(self, key: tuple[tuple[netpol.Rule, ...], str | None]) -> Tri:
        """As ``TowardFixed._np_answer(rules, home)`` for the current destination."""
        return self._read(id(key), self.rule_list(key, key[0], key[1] or ""))

    def sliced(self, key: object, sets: Sets) -> tuple[int, int]:
        """``sets`` read for the current namespace's identities (bit 0: its first)."""
        self._read(id(key), sets)
        return self._slices[id(key)]

    def rule_list(self, key: object, rules: tuple[netpol.Rule, ...], home: str) -> Sets:
        """Every destination a policy with these rules admits (true), or may (unknown):
        ``TowardFixed._np_answer`` over every destination; kept by ``key``'s identity (the
        index's keys live as long as it does, and hashing rule lists by value at every
        destination cost more than the answers)."""
        kept = self._wide.get(id(key))
        if kept is not None and kept[0] is key:
            return kept[1]
        true, unknown, problem = self.probe.rule_sets(rules, home)
        sets = (true, (self.uni.all if problem else unknown) & ~true)
        self._wide[id(key)] = (key, sets)
        return sets

    def admin_rule(self, rule: anp.Rule) -> Sets:
        """Every destination ``rule`` matches (true) or may (unknown)."""
        kept = self._rules.get(id(rule))
        if kept is None or kept[0] is not rule:
            kept = self._rules[id(rule)] = (rule, self.probe.admin_rule(rule))
        return kept[1]

    def signatures(self, toward: TowardFixed, namespace: str) -> list[tuple[int, ...]]:
        """Per identity of the current namespace (by offset): everything ``TowardFixed``
        reads of it as a destination — which distinct admin egress rules, NetworkPolicy
        rule lists and the namespace's pod-only rule lists admit it, or may — as the
        positions of those that do not answer alike for the whole namespace. Identities of
        one signature get one egress answer."""
        mask = self.uni.ns_bits[namespace] >> self._start
        size = mask.bit_length()
        true_of: list[list[int]] = [[] for _ in range(size)]
        maybe_of: list[list[int]] = [[] for _ in range(size)]
        parts: list[tuple[object, Sets]] = [
            (rule, self.admin_rule(rule)) for rule in toward.admin_index().rules]
        parts.extend((key, self.rule_list(key, key[0], key[1] or ""))
                     for key in toward.egress_index().wide)
        parts.extend((entry, self.rule_list(entry, entry[0], namespace))
                     for entry in toward.policies(namespace, True).local)
        for number, (key, sets) in enumerate(parts):
            true, unknown = self.sliced(key, sets)
            if not unknown and true in (0, mask):
                continue  # alike for the whole namespace
            for offset in members(true):
                true_of[offset].append(number)
            for offset in members(unknown):
                maybe_of[offset].append(~number)
        return [(*true_of[i], *maybe_of[i]) for i in range(size)]

    def vector(self, index: _AdminIndex) -> tuple[Tri, ...]:
        """As ``rule.matches`` of each of ``index.rules`` for the current destination."""
        return tuple(self._read(id(rule), self.admin_rule(rule)) for rule in index.rules)


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


def _universe(view: GraphView) -> Universe | None:
    """The view's universe; None for a view that keeps no identity index (an overlay)."""
    try:
        return universe(view)
    except NotImplementedError:
        return None


# --- who_can_reach's core ---------------------------------------------------------------


@dataclass
class Row:
    """One identity decided by the fast path, for every pod of the fixed end."""

    namespace: str
    labels: Labels
    keys: list[str]
    allowed: int  # pods of the fixed end it reaches
    denied: int

    @property
    def tally(self) -> Tally:
        return Tally(allowed=self.allowed, denied=self.denied)


@dataclass
class Sources:
    rows: list[Row]  # identities allowed with at least one fixed pod
    denied_pods: int  # pods of fast identities denied with every fixed pod
    exact: list[Record]  # pod-likes left to the per-pod path


def who_can_reach(engine: PolicyEngine, fixed: list[tuple[Group, int | None]],
                  protocol: str) -> Sources | None:
    """Every in-cluster source against the fixed end; None when the fast path cannot run
    (then the caller asks the per-pod path about every source)."""
    view = engine.view
    scopes = set_scope(engine)
    if scopes is None:
        return None
    targets: list[tuple[Group, int]] = []
    for target, port in fixed:
        rep = target.rep
        if port is None or rep.external or rep.host_network or rep.namespace in scopes:
            return None
        targets.append((target, port))
    uni = _universe(view)
    if uni is None:
        return None
    exact = 0
    # The fixed end's own identities: a pod and itself is no question (tally counts it).
    for g, _ in targets:
        for m in g.members:
            position = uni.index.get((m.namespace or "", id(m.labels)))
            if position is not None:
                exact |= 1 << position
    quiet = not scopes and not _unevaluated_anywhere(engine)
    for namespace, bits in uni.ns_bits.items():
        if quiet:
            break
        probe = Endpoint("", namespace)
        if namespace in scopes or any(engine.unevaluated(probe, g.rep) != ((), ())
                                      for g, _ in targets):
            exact |= bits
    ingress: list[Outcome] = []
    for g, port in targets:
        outcome = FixedEnd(engine, uni, Direction.INGRESS, g.rep, port, protocol).evaluate()
        assert outcome is not None
        exact |= outcome.exact
        ingress.append(outcome)
    allowed = []
    for outcome, (g, port) in zip(ingress, targets, strict=True):
        egress = TowardFixed(engine, uni, g.rep, port, protocol).evaluate()
        assert egress is not None  # (the destination is in scope: checked above)
        # The egress verdict matters only where the ingress allows (False either way).
        exact |= outcome.allow & egress.exact
        allowed.append(outcome.allow & egress.allow)
    return _sources(view, uni, [len(g.members) for g, _ in targets], allowed, exact)


def what_can_reach(engine: PolicyEngine, fixed: list[Group], port: int, protocol: str,
                   blocks: tuple[IPBlock, ...]) -> Sources | None:
    """Every in-cluster destination from the fixed sources on one port: egress at each
    source over every identity (``FixedEnd``), ingress at every identity from it
    (``TowardFixed`` INGRESS). None when the fast path cannot run. Identities the per-pod
    path would split (pods apart under one of ``blocks`` — what it groups by — or in
    their container ports) are left to it, so rows are the identities it would list."""
    view = engine.view
    scopes = set_scope(engine)
    if scopes is None:
        return None
    for g in fixed:
        rep = g.rep
        if rep.external or rep.host_network or rep.namespace in scopes:
            return None
    uni = _universe(view)
    if uni is None:
        return None
    exact = 0
    for g in fixed:  # the sources' own identities: a pod and itself is no question
        for m in g.members:
            position = uni.index.get((m.namespace or "", id(m.labels)))
            if position is not None:
                exact |= 1 << position
    for block in blocks:
        exact |= uni.block(block)[1]
    for position, variants in enumerate(uni.ports):
        if len(variants) > 1:
            exact |= 1 << position
    if scopes or _unevaluated_anywhere(engine):
        for namespace, bits in uni.ns_bits.items():
            probe = Endpoint("", namespace)
            if namespace in scopes or any(engine.unevaluated(g.rep, probe) != ((), ())
                                          for g in fixed):
                exact |= bits
    allowed = []
    for g in fixed:
        egress = FixedEnd(engine, uni, Direction.EGRESS, g.rep, port, protocol).evaluate()
        ingress = TowardFixed(engine, uni, g.rep, port, protocol,
                              direction=Direction.INGRESS).evaluate()
        if egress is None or ingress is None:
            return None
        # The ingress verdict matters only where the egress allows (False either way).
        exact |= egress.exact | (egress.allow & ingress.exact)
        allowed.append(egress.allow & ingress.allow)
    return _sources(view, uni, [len(g.members) for g in fixed], allowed, exact)


def _sources(view: GraphView, uni: Universe, fixed_pods: list[int], allowed: list[Bits],
             exact: Bits) -> Sources:
    """Rows for the identities allowed with at least one fixed pod (``allowed``: per
    fixed group), the pods of the rest counted as denied, ``exact`` left to the per-pod
    path."""
    rows: list[Row] = []
    any_allowed = 0
    for bits in allowed:
        any_allowed |= bits
    any_allowed &= ~exact
    row_pods = 0
    every = sum(fixed_pods)
    for position in members(any_allowed):
        reached = every
        if len(fixed_pods) > 1:
            reached = sum(count for count, bits in zip(fixed_pods, allowed, strict=True)
                          if bits >> position & 1)
        keys = uni.keys[position]
        row_pods += len(keys)
        rows.append(Row(uni.namespaces[position], uni.label_keys[position], keys, reached,
                        every - reached))
    exact_pods = 0
    left: list[Record] = []
    get: Callable[[str], Record | None] = view.get
    for position in members(exact & uni.all):
        keys = uni.keys[position]
        exact_pods += len(keys)
        left.extend(r for k in keys if (r := get(k)) is not None)
    left.extend(r for k in uni.exact if (r := get(k)) is not None)
    return Sources(rows, uni.pods - exact_pods - row_pods, left)


def row_out(row: Row, *, several: bool, detail: bool) -> PeerOut:
    """As ``reach.peer_out`` for a group of the identity's pods, never split."""
    tally = row.tally
    return PeerOut(namespace=row.namespace, labels=dict(row.labels), pods=len(row.keys),
                   allowed=tally.verdict,
                   counts=PodCounts(allowed=tally.allowed, denied=tally.denied,
                                    unknown=tally.unknown) if several else None,
                   members=[k.partition("/")[2] for k in row.keys[:MEMBERS_SHOWN]]
                   if detail else None)


Listed = Row | tuple[Group, Tally] | Region  # one peer line of who/what_can_reach


def listing_order(item: Listed) -> tuple[str, Labels, str]:
    """Where a peer line sorts: namespace, labels, then the group's first pod."""
    if isinstance(item, Row):
        return item.namespace, item.labels, ""
    assert isinstance(item, tuple)
    return item[0].namespace, item[0].labels, item[0].rep.name


def listed_out(item: Listed, blocks: tuple[IPBlock, ...], *, several: bool,
               detail: bool) -> PeerOut:
    """A peer line as shown: an identity of the set path, a region outside, or a group."""
    if isinstance(item, Row):
        return row_out(item, several=several, detail=detail)
    if isinstance(item, Region):
        return region_out(item, blocks, several=several)
    return peer_out(item[0], item[1], several=several, detail=detail)


def add_rows(summary: Summary, sources: Sources) -> Summary:
    """``summary`` with the fast path's identities added (as ``reach.summarize`` counts)."""
    allowed = partial = 0
    for row in sources.rows:
        if not row.denied:
            allowed += len(row.keys)
        else:
            partial += len(row.keys)
    return Summary(identities=summary.identities + len(sources.rows),
                   allowed_pods=summary.allowed_pods + allowed,
                   partial_pods=summary.partial_pods + partial,
                   unknown_pods=summary.unknown_pods,
                   denied_pods=summary.denied_pods + sources.denied_pods)


# --- full identity reachability -----------------------------------------------------------


@dataclass
class Matrix:
    """Every (source identity, destination identity) on one port: per destination, the
    sources allowed, and those left to the per-pod path (``exact``). Destinations whose
    pods differ in what a policy can see of them (IPs against a CIDR, container ports) or
    that the universe leaves out (host network) are not in the matrix: ``per_pod``."""

    uni: Universe
    allowed: dict[int, Bits] = field(default_factory=dict)
    exact: dict[int, Bits] = field(default_factory=dict)
    per_pod: Bits = 0  # destination identities for the per-pod path
    ingress_classes: int = 0


def reachability(engine: PolicyEngine, port: int, protocol: str) -> Matrix | None:
    """Full identity reachability for one port; None when the fast path cannot run."""
    view = engine.view
    if set_scope(engine) != frozenset() or _unevaluated_anywhere(engine):
        return None
    uni = _universe(view)
    if uni is None:
        return None
    found = Matrix(uni)
    # A destination's IPs meet egress CIDRs, its ports named ports: pods of one identity
    # that could differ there are asked about one by one.
    for block in _every_block(engine):
        found.per_pod |= uni.block(block)[1]
    for position, variants in enumerate(uni.ports):
        if len(variants) > 1:
            found.per_pod |= 1 << position
    ingress_by_class: dict[tuple[object, ...], Outcome] = {}
    if len(uni.derived.get("ingress content", ())) > _CONTENT_LIMIT:
        # Models of changed policies pile up there; renumbered only between calls.
        del uni.derived["ingress content"], uni.derived["ingress rule lists"], \
            uni.derived["ingress rule lists naming a port"]
    subjects = TowardFixed(engine, uni, Endpoint(""), port, protocol)
    known = _Transposed(engine, uni, port, protocol)
    admin_named = any(m.name is not None
                      for p in (*engine.tiers.admins, *engine.tiers.baselines)
                      for r in p.ingress for m in r.ports or ())
    named: set[int] = uni.derived.setdefault("ingress rule lists naming a port", set())
    # A namespace's identities are consecutive positions: its slice of each policy's
    # subjects is a small integer. Most admin policies apply to a namespace's identities
    # alike (namespace subjects); the few that tell them apart (pod subjects) make each
    # identity's signature, and what engine.applicable would say is found once per
    # signature, not per destination.
    memo: dict[object, object] = {}
    by_signature: dict[tuple[tuple[int, ...], tuple[int, ...]], _Applicable] = {}
    signatures: list[tuple[tuple[int, ...], tuple[int, ...]]] = []
    start = -1
    namespace = ""
    for position in members(uni.all & ~found.per_pod):
        if uni.namespaces[position] != namespace:
            namespace = uni.namespaces[position]
            start = position
            while start and uni.namespaces[start - 1] == namespace:
                start -= 1
            by_signature, signatures = _signatures(engine, subjects, uni, namespace, start)
            known.at(position, namespace, start)
            egress_signatures = known.signatures(subjects, namespace)
            egress_by_signature: dict[tuple[int, ...], Outcome] = {}
        record = view.get(uni.keys[position][0])
        assert record is not None
        destination = from_pod(record)  # type: ignore[arg-type]
        signature = signatures[position - start]
        applicable = by_signature[signature]
        # engine.network_policies(destination), from the identity's selector owners
        # (applies_to edges come from NetworkPolicies only); the ingress class reads
        # their ingress rules by content, so apps with policies alike share one.
        policies = [engine.network_policy(r) for owner, rel in uni.selected[position].items()
                    if rel is Rel.APPLIES_TO and
                    isinstance(r := view.get(owner), NetworkPolicyRecord)]
        content = _ingress_content(uni, policies)
        # The destination's container ports matter only where a rule names a port.
        key = (applicable.key, content,
               destination.ports if admin_named or any(n in named for n in content) else ())
        ingress = ingress_by_class.get(key)
        if ingress is None:
            outcome = FixedEnd(engine, uni, Direction.INGRESS, destination, port,
                               protocol, memo=memo).evaluate(
                (applicable.admins, applicable.baselines, applicable.applies), policies)
            assert outcome is not None
            ingress = ingress_by_class[key] = outcome
        egress_signature = egress_signatures[position - start]
        egress = egress_by_signature.get(egress_signature)
        if egress is None:
            known.at(position, namespace, start)
            egress = TowardFixed(engine, uni, destination, port, protocol,
                                 known=known).evaluate()
            assert egress is not None  # (every namespace is in scope: checked above)
            egress_by_signature[egress_signature] = egress
        found.allowed[position] = ingress.allow & egress.allow
        found.exact[position] = ingress.exact | (ingress.allow & egress.exact)
    found.ingress_classes = len(ingress_by_class)
    return found


_CONTENT_LIMIT = 100_000  # policy models numbered by _ingress_content, kept at most


def _ingress_content(uni: Universe, policies: list[netpol.NetPol]) -> frozenset[int]:
    """What ``FixedEnd.np_tier`` reads of a destination's NetworkPolicies for ingress: the
    rule lists of those isolating it for ingress, each with the namespace its peers mean
    when one names none (``_home``), as numbers of distinct ones (a union: order and
    repeats do not matter). Numbered once per policy model, kept with the universe; those
    whose rules name a port are noted (the destination's container ports then matter)."""
    kept: dict[int, tuple[netpol.NetPol, int]] = uni.derived.setdefault(
        "ingress content", {})
    distinct: dict[tuple[tuple[netpol.Rule, ...], str | None], int] = uni.derived.setdefault(
        "ingress rule lists", {})
    named: set[int] = uni.derived.setdefault("ingress rule lists naming a port", set())
    found = []
    for policy in policies:
        held = kept.get(id(policy))
        if held is None or held[0] is not policy:
            number = -1
            if Direction.INGRESS in policy.types:
                rules = policy.ingress
                number = distinct.setdefault((rules, _home(rules, policy.record.namespace)),
                                             len(distinct))
                if any(m.name is not None for r in rules for m in r.ports or ()):
                    named.add(number)
            held = kept[id(policy)] = (policy, number)
        if held[1] >= 0:
            found.append(held[1])
    return frozenset(found)


@dataclass(eq=False)
class _Applicable:
    """``PolicyEngine.applicable`` for the identities of one signature (the lists are
    the same objects for all of them, which keeps per-tier answers per list)."""

    admins: list[anp.AdminPolicy]
    baselines: list[anp.AdminPolicy]
    applies: dict[int, Tri]
    key: tuple[object, ...] = ()  # what the ingress admin tiers read of it

    def __post_init__(self) -> None:
        applies = self.applies
        self.key = (tuple((id(p), applies[id(p)]) for p in self.admins if p.ingress),
                    tuple((id(p), applies[id(p)]) for p in self.baselines if p.ingress))


def _signatures(engine: PolicyEngine, subjects: TowardFixed, uni: Universe, namespace: str,
                start: int) -> tuple[dict[tuple[tuple[int, ...], tuple[int, ...]],
                                          _Applicable],
                                     list[tuple[tuple[int, ...], tuple[int, ...]]]]:
    """For the namespace whose identities start at position ``start``: each identity's
    signature (the admin policies that may apply to some of its identities only: those
    that do, those that might), in position order, and per signature what
    ``engine.applicable`` says of its identities, read from the policies' subject sets."""
    admins, baselines = engine.admin_policies_for(namespace)
    policies = (*admins, *baselines)
    mask = uni.ns_bits[namespace] >> start
    size = mask.bit_length()
    common: dict[int, Tri] = {}
    true_of: list[list[int]] = [[] for _ in range(size)]
    maybe_of: list[list[int]] = [[] for _ in range(size)]
    for index, policy in enumerate(policies):
        true, unknown = subjects.applying(policy)
        true, unknown = (true >> start) & mask, (unknown >> start) & mask
        if not unknown and true in (0, mask):
            common[id(policy)] = bool(true)
            continue
        for offset in members(true):
            true_of[offset].append(index)
        for offset in members(unknown):
            maybe_of[offset].append(index)
    signatures = [(tuple(true_of[i]), tuple(maybe_of[i])) for i in range(size)]
    by_signature: dict[tuple[tuple[int, ...], tuple[int, ...]], _Applicable] = {}
    for signature in dict.fromkeys(signatures):
        applies = dict(common)
        for index, policy in enumerate(policies):
            if id(policy) not in applies:
                applies[id(policy)] = True if index in signature[0] else \
                    None if index in signature[1] else False
        by_signature[signature] = _Applicable(
            [p for p in admins if applies[id(p)] is not False],
            [p for p in baselines if applies[id(p)] is not False], applies)
    return by_signature, signatures


def _every_block(engine: PolicyEngine) -> tuple[IPBlock, ...]:
    return policy_blocks(engine)
