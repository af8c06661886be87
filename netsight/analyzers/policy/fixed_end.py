"""One direction taken at a fixed end, over every identity as the other end.

Ingress at a destination over every source (or egress at a source over every
destination): the admin tiers and the NetworkPolicies are walked with set operations
exactly as ``anp.evaluate`` and ``netpol.evaluate`` walk them for one peer.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from netsight.analyzers.policy import anp, netpol
from netsight.analyzers.policy.endpoints import Endpoint
from netsight.analyzers.policy.engine import PolicyEngine
from netsight.analyzers.policy.peers import PortMatch, ports_match
from netsight.analyzers.policy.set_scope import Outcome, exact_where, scoped_out, set_scope
from netsight.analyzers.policy.universe import Bits, Sets, Universe
from netsight.analyzers.policy.verdict import Action, Direction, Tri

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


def _any(parts: Iterable[Sets]) -> Sets:
    """Kleene OR over sets: true if any is true, else unknown if any is unknown."""
    true = unknown = 0
    for t, u in parts:
        true |= t
        unknown |= u
    return true, unknown & ~true


def rules_admit(rules: Iterable[netpol.Rule], ports: Callable[[netpol.Rule], Sets],
                peers: Callable[[netpol.Rule], Sets]) -> tuple[Bits, Bits, bool]:
    """Where NetworkPolicy ``rules`` of one policy admit, over identities: (true, unknown,
    whether a rule could not be read), from where each rule's ports and peers match
    (``ports(rule)``, ``peers(rule)``: true, unknown). A rule admits where both match."""
    true = unknown = 0
    problem = False
    for rule in rules:
        if rule.problem is not None:
            problem = True
            continue
        ports_true, ports_unknown = ports(rule)
        if not ports_true | ports_unknown:
            continue
        peers_true, peers_unknown = peers(rule)
        hit = peers_true & ports_true
        true |= hit
        unknown |= (peers_true | peers_unknown) & (ports_true | ports_unknown) & ~hit
    return true, unknown, problem


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
        return rules_admit(rules, lambda rule: self.ports(rule.ports),
                           lambda rule: self._peers(rule, home))

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
            return exact_where(out, scoped_out(self.uni, scope))
        chosen, unknown, rest = self.kept_tier(baselines, applies)
        # The default: allow. (A tier over every identity, read for those it is reached by.)
        out.allow |= (chosen[Action.ALLOW] | chosen[Action.PASS] | rest) & onward
        out.deny |= chosen[Action.DENY] & onward
        out.exact |= unknown & onward
        return exact_where(out, scoped_out(self.uni, scope))

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
