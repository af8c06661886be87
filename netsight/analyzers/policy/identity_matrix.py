"""Full identity reachability for one port: every (source identity, destination identity).

Destinations are grouped by what their ingress depends on (ingress classes) and by their
egress signature, so each group is evaluated once with :class:`fixed_end.FixedEnd` and
:class:`toward_fixed.TowardFixed`; what ``TowardFixed`` asks of one destination is
answered for every destination at once (:class:`Transposed`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from netsight.analyzers.policy import anp, netpol
from netsight.analyzers.policy.endpoints import Endpoint, from_pod
from netsight.analyzers.policy.engine import PolicyEngine
from netsight.analyzers.policy.fixed_end import FixedEnd
from netsight.analyzers.policy.peers import IPBlock
from netsight.analyzers.policy.reach import policy_blocks
from netsight.analyzers.policy.set_scope import Outcome, set_scope, unevaluated_anywhere
from netsight.analyzers.policy.toward_fixed import AdminIndex, TowardFixed, peer_home
from netsight.analyzers.policy.universe import Bits, Sets, Universe, indexed_universe, members
from netsight.analyzers.policy.verdict import Direction, Tri
from netsight.graph.model.kinds import Rel
from netsight.graph.model.records import NetworkPolicyRecord


class Transposed:
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

    def vector(self, index: AdminIndex) -> tuple[Tri, ...]:
        """As ``rule.matches`` of each of ``index.rules`` for the current destination."""
        return tuple(self._read(id(rule), self.admin_rule(rule)) for rule in index.rules)


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
    if set_scope(engine) != frozenset() or unevaluated_anywhere(engine):
        return None
    uni = indexed_universe(view)
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
    known = Transposed(engine, uni, port, protocol)
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
    when one names none (``peer_home``), as numbers of distinct ones (a union: order and
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
                number = distinct.setdefault((rules, peer_home(rules, policy.record.namespace)),
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
