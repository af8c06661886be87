"""Whether a request matches an AuthorizationPolicy rule, with what matched or why not.

"A match occurs when at least one source, one operation and all conditions matches the
request. An empty rule is always matched." A value the query does not give (HTTP method,
path, host; a JWT; headers) makes a rule reading it "may match": None, with the reason.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable
from dataclasses import dataclass

from netsight.analyzers.policy.istio_model import (
    Action,
    Attribute,
    AuthzPolicy,
    Clause,
    Rule,
    path_matches,
    string_matches,
)
from netsight.analyzers.policy.verdict import Tri

# Percent-escapes, dot segments, doubled or back slashes: what path normalization rewrites.
_NEEDS_NORMALIZING = re.compile(r"%|//|\\|/\.\.?(/|$)")


@dataclass(frozen=True, slots=True)
class Request:
    """HTTP attributes the caller knows; None: not given (rules reading it may match)."""

    method: str | None = None
    path: str | None = None
    host: str | None = None

    def get(self, attribute: Attribute) -> str | None:
        if attribute is Attribute.METHOD:
            return self.method
        if attribute is Attribute.PATH:
            return self.path
        return self.host if attribute is Attribute.HOST else None


@dataclass(frozen=True, slots=True)
class Peer:
    """The source as the destination's proxy sees it."""

    name: str
    ips: tuple[str, ...]
    principal: str | None  # None: plaintext, no peer certificate
    namespace: str | None
    known: bool = True  # False: whether it sends mTLS is unknown
    plaintext: str = ""  # why there is no principal


@dataclass(frozen=True, slots=True)
class Match:
    """A matcher's answer: for True what matched, for False what did not, for None why it
    cannot be told."""

    value: Tri
    why: str
    path: str = ""


def _all(parts: Iterable[Match], path: str) -> Match:
    unknown: list[Match] = []
    matched: list[Match] = []
    for part in parts:
        if part.value is False:
            return part
        if part.value is None:
            unknown.append(part)
        else:
            matched.append(part)
    if unknown:
        return Match(None, "; ".join(u.why for u in unknown), unknown[0].path)
    # One field decided it: point at that field.
    return Match(True, ", ".join(m.why for m in matched) or "matches everything",
                 matched[0].path if len(matched) == 1 else path)


def _any(parts: Iterable[Match], path: str, what: str) -> Match:
    unknown: list[Match] = []
    missed: list[Match] = []
    for part in parts:
        if part.value is True:
            return part
        if part.value is None:
            unknown.append(part)
        else:
            missed.append(part)
    if unknown:
        return Match(None, "; ".join(u.why for u in unknown), unknown[0].path)
    if len(missed) == 1:
        return missed[0]
    return Match(False, f"no {what} matches" + (f" ({missed[0].why}, ...)" if missed else ""),
                 path)


@dataclass(frozen=True, slots=True)
class Context:
    peer: Peer
    port: int
    request: Request
    # Why the port carries opaque TCP (a Service declares it so), or "": then "the method
    # field (as will all HTTP based attributes) cannot be processed. For a DENY rule,
    # missing attributes are treated as matches", and an ALLOW rule reading them never
    # matches.
    tcp: str = ""


def _ip_in(networks: tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...],
           ips: tuple[str, ...]) -> Tri:
    if not ips:
        return None
    answers = set()
    for text in ips:
        ip = ipaddress.ip_address(text)
        answers.add(any(ip.version == n.version and ip in n for n in networks))
    return answers.pop() if len(answers) == 1 else None


def clause_matches(clause: Clause, ctx: Context) -> Match:
    """One field: positive ones match when a value does; negative ones when none does."""
    attribute, peer = clause.attribute, ctx.peer
    shown = clause.path.rsplit(".", 1)[-1]
    if attribute in (Attribute.PRINCIPAL, Attribute.NAMESPACE):
        if not peer.known:
            return Match(None, f"{clause.path} reads the peer identity, and whether "
                         f"{peer.name} sends mTLS is unknown ({peer.plaintext})", clause.path)
        value = peer.principal if attribute is Attribute.PRINCIPAL else peer.namespace
        what = "principal" if attribute is Attribute.PRINCIPAL else "namespace"
        if value is None:
            # No peer certificate: a positive match fails, a negative one holds.
            return Match(clause.negative, f"{peer.name} has no {what} ({peer.plaintext})",
                         clause.path)
        hit = next((p for p in clause.values if string_matches(p, value)), None)
        if clause.negative:
            return Match(hit is None, f"{what} {value} " + (
                f"matches {shown} {hit!r}" if hit else f"is not in {shown}"), clause.path)
        return Match(hit is not None, f"{what} {value} " + (
            f"matches {shown} {hit!r}" if hit else f"is not in {shown}"), clause.path)
    if attribute is Attribute.SOURCE_IP:
        inside = _ip_in(clause.networks, peer.ips)
        if inside is None:
            return Match(None, f"{clause.path}: the address of {peer.name} is unknown or its "
                         "addresses disagree", clause.path)
        return Match(inside != clause.negative, f"source IP {'/'.join(peer.ips)} "
                     f"{'is' if inside else 'is not'} in {shown}", clause.path)
    if attribute is Attribute.PORT:
        listed = str(ctx.port) in clause.values
        return Match(listed != clause.negative, f"port {ctx.port} "
                     f"{'is' if listed else 'is not'} "
                     f"in {shown}", clause.path)
    if attribute in (Attribute.METHOD, Attribute.PATH, Attribute.HOST):
        value = ctx.request.get(attribute)
        name = attribute.value.rsplit(".", 1)[-1]
        if value is None:
            return Match(None, f"{clause.path} reads the HTTP {name}, which the query does "
                         f"not give (pass {name} to decide it)", clause.path)
        if attribute is Attribute.PATH:
            value = value.split("?")[0].split("#")[0]  # policies match the path alone
            if _NEEDS_NORMALIZING.search(value):
                return Match(None, f"{clause.path}: the proxy normalizes path {value} before "
                             "matching (meshConfig pathNormalization), which netsight does "
                             "not model", clause.path)
            hit = next((p for p in clause.values if path_matches(p, value)), None)
        else:
            hit = next((p for p in clause.values if string_matches(
                p, value, fold=attribute is Attribute.HOST)), None)
        return Match((hit is not None) != clause.negative, f"{name} {value} " + (
            f"matches {shown} {hit!r}" if hit else f"is not in {shown}"), clause.path)
    if attribute is Attribute.REQUEST_PRINCIPAL:
        return Match(None, f"{clause.path} reads the request's JWT principal, which "
                     "netsight cannot know", clause.path)
    if attribute is Attribute.REMOTE_IP:
        return Match(None, f"{clause.path} reads the client address from X-Forwarded-For or "
                     "the PROXY protocol, which netsight cannot know", clause.path)
    return Match(None, f"{clause.path}: condition {clause.key!r} is not evaluated by "
                 "netsight", clause.path)


def http_only(clause: Clause) -> bool:
    return clause.attribute in (Attribute.HOST, Attribute.METHOD, Attribute.PATH,
                                Attribute.REQUEST_PRINCIPAL) or clause.key.startswith(
                                    "request.")


def rule_matches(rule: Rule, ctx: Context, action: Action = Action.ALLOW) -> Match:
    path = f"spec.rules[{rule.index}]"
    if ctx.tcp and any(http_only(c) for c in rule.clauses):
        if action is Action.ALLOW:
            return Match(False, f"{path} reads HTTP attributes, which Istio cannot see on "
                         f"TCP port {ctx.port} ({ctx.tcp}), so it never matches", path)
        return _tcp_rule(rule, ctx, path)
    parts: list[Match] = []
    if rule.sources is not None:
        parts.append(_any((_all((clause_matches(c, ctx) for c in source), path)
                           for source in rule.sources), f"{path}.from", "from[] source"))
    if rule.operations is not None:
        parts.append(_any((_all((clause_matches(c, ctx) for c in op), path)
                           for op in rule.operations), f"{path}.to", "to[] operation"))
    parts.extend(clause_matches(c, ctx) for c in rule.conditions)
    found = _all(parts, path)
    if found.value is True and not parts:
        return Match(True, "the empty rule matches every request", path)
    return found


def _tcp_rule(rule: Rule, ctx: Context, path: str) -> Match:
    """A DENY (or CUSTOM, AUDIT) rule on a TCP port: its HTTP attributes count as matched."""
    def check(clause: Clause) -> Match:
        if http_only(clause):
            return Match(True, f"{clause.path} is treated as matched on TCP port {ctx.port} "
                         f"({ctx.tcp})", clause.path)
        return clause_matches(clause, ctx)

    parts: list[Match] = []
    if rule.sources is not None:
        parts.append(_any((_all((check(c) for c in source), path)
                           for source in rule.sources), f"{path}.from", "from[] source"))
    if rule.operations is not None:
        parts.append(_any((_all((check(c) for c in op), path)
                           for op in rule.operations), f"{path}.to", "to[] operation"))
    parts.extend(check(c) for c in rule.conditions)
    return _all(parts, path)


def policy_matches(policy: AuthzPolicy, ctx: Context) -> tuple[Match, int | None]:
    """(match, the first rule that matches or may match). No rules: "If not set, the match
    will never occur"."""
    unknown: tuple[Match, int] | None = None
    for rule in policy.rules:
        found = rule_matches(rule, ctx, policy.action)
        if found.value is True:
            return found, rule.index
        if found.value is None and unknown is None:
            unknown = (found, rule.index)
    if unknown is not None:
        return unknown
    if not policy.rules:
        return Match(False, "it has no rules, so it matches nothing", "spec.rules"), None
    first = rule_matches(policy.rules[0], ctx, policy.action)
    if len(policy.rules) == 1:
        return first, None
    return Match(False, f"none of its {len(policy.rules)} rules matches (rules[0]: "
                 f"{first.why}, ...)", "spec.rules"), None
