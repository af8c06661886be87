"""find_blocking_policies: why can (or can't) A reach B on a port, across every policy layer."""

from __future__ import annotations

import re
from itertools import islice
from typing import Annotated, ClassVar

from pydantic import AfterValidator, Field, PrivateAttr

from netsight.analyzers.core.arguments import Port, ToolArgs
from netsight.analyzers.core.base import metadata
from netsight.analyzers.core.contracts import (
    ErrorCode,
    Model,
    ResourceRef,
    ToolFailure,
    ToolResult,
)
from netsight.analyzers.core.declarations import AnalyzerMetadata, Tool, Toolset
from netsight.analyzers.core.object_names import ObjectName
from netsight.analyzers.core.proposal_reading import Document
from netsight.analyzers.core.proposals import Proposal
from netsight.analyzers.core.quoting import quoted
from netsight.analyzers.policy import cni_detection as cni
from netsight.analyzers.policy import proposed_kinds
from netsight.analyzers.policy.endpoints import Endpoint, Resolved, port_targets, resolve
from netsight.analyzers.policy.engine import READS, PolicyEngine
from netsight.analyzers.policy.istio_authz import Request
from netsight.analyzers.policy.proposed_kinds import (
    PROPOSED_HELP,
    deciders,
    described,
    proposed_view,
    word,
)
from netsight.analyzers.policy.results import DetailAware, DirectionOut, WhatIf
from netsight.analyzers.policy.suggest import suggest
from netsight.analyzers.policy.verdict import Verdict
from netsight.graph.model.kinds import Kind
from netsight.graph.model.records import PROTOCOLS, ServiceRecord
from netsight.graph.store.live import GraphView

NAME = "find_blocking_policies"

METADATA = AnalyzerMetadata(
    name=NAME,
    description="Whether a source may reach a destination port, and which policy rule "
    "blocks it (network policies, Istio). Use it when a connection fails.",
    reads=READS | cni.READS | {Kind.SERVICE},
    codes=(),
)

MAX_PAIRS = 10_000  # pod pairs evaluated per answer; beyond it the answer says so


def _protocol(value: str) -> str:
    upper = value.upper()
    if upper not in PROTOCOLS:
        raise ValueError(f"{quoted(value)} is not a protocol: use TCP, UDP or SCTP")
    return upper


Protocol = Annotated[str, AfterValidator(_protocol)]

_TOKEN = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")  # RFC 9110 token
_HOST = re.compile(r"^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?"
                   r"(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*)(:[0-9]{1,5})?$")


def _method(value: str) -> str:
    if len(value) > 32 or not _TOKEN.fullmatch(value):
        raise ValueError(f"{quoted(value)} is not an HTTP method (e.g. 'GET', 'POST')")
    if value != value.upper():
        # Methods are case-sensitive and policies match them exactly.
        raise ValueError(f"{quoted(value)}: HTTP methods are case-sensitive; did you mean "
                         f"{quoted(value.upper())}?")
    return value


def _path(value: str) -> str:
    if not value.startswith("/") or len(value) > 4096 or any(
            c.isspace() or not c.isprintable() for c in value):
        raise ValueError(f"{quoted(value)} is not a request path: it starts with '/' and has no "
                         "spaces (e.g. '/api/v1/items?page=2')")
    return value


def _host(value: str) -> str:
    if len(value) > 261 or not _HOST.fullmatch(value):
        raise ValueError(f"{quoted(value)} is not a Host header value: a DNS name or IP, with an "
                         "optional ':port' (e.g. 'reviews.shop.svc.cluster.local:9080')")
    return value


Method = Annotated[str, AfterValidator(_method)]
RequestPath = Annotated[str, AfterValidator(_path)]
Host = Annotated[str, AfterValidator(_host)]
ENDPOINT_HELP = "'ns/pod', 'Kind/ns/name', Service DNS name or 'ip:ADDR'"


class Args(ToolArgs):
    source: ObjectName = Field(description=f"From: {ENDPOINT_HELP}")
    destination: ObjectName = Field(description=f"To: {ENDPOINT_HELP}")
    port: Port = Field(description="Destination port (for a Service: its port)")
    protocol: Protocol = Field(default="TCP", description="TCP, UDP or SCTP")
    method: Method | None = Field(default=None, description="HTTP method (Istio only)")
    path: RequestPath | None = Field(default=None, description="HTTP path (Istio only)")
    host: Host | None = Field(default=None, description="HTTP Host (Istio only)")
    proposed: str | None = Field(default=None, description=PROPOSED_HELP)
    _ahead: list[Document] | None = PrivateAttr(default=None)


class PairCounts(Model):
    total: int
    allowed: int
    denied: int
    unknown: int
    denied_pairs: list[str] = Field(description="Up to 5 denied 'source -> destination' pairs")


class Result(ToolResult, DetailAware):
    source: str
    destination: str
    port: int
    protocol: str
    allowed: bool | None = Field(description="null: the input cannot decide; see notEvaluated")
    blocking_policies: list[ResourceRef]
    explained: str | None = Field(default=None,
                                  description="The pod pair the decisions are for")
    decisions: list[DirectionOut] = Field(description="Egress at the source, then ingress at "
                                          "the destination")
    pairs: PairCounts | None = Field(default=None, description="When several pods take part")
    not_evaluated: list[str]
    suggestion: str | None = Field(default=None, description="Detail mode only: the smallest "
                                   "change that admits the traffic, and what else it opens")
    proposed: WhatIf | None = None

    _detail_only: ClassVar[tuple[str, ...]] = ("suggestion",)


def port_number(resolved: Resolved, port: int | str, protocol: str, *, tool: str = NAME) -> int:
    """``port`` as a number: a name is looked up on the Service's ports, else on the
    destination pods' container ports (where it must mean one number)."""
    if isinstance(port, int):
        return port
    service = resolved.service
    if service is not None:
        numbers = {p.port for p in service.ports if p.name == port and p.protocol == protocol}
        names = {p.name for p in service.ports if p.name}
        owner = f"Service {service.ref}"
    else:
        numbers = {p.port for e in resolved.endpoints for p in e.ports
                   if p.name == port and p.protocol == protocol}
        names = {p.name for e in resolved.endpoints for p in e.ports if p.name}
        owner = f"the containers of {resolved.text}"
    if len(numbers) == 1:
        return numbers.pop()
    if not numbers:
        raise ToolFailure(ErrorCode.NOT_FOUND, f"port: no {protocol} port named {port!r} on "
                          f"{owner}; its named ports: {', '.join(sorted(names)) or 'none'} "
                          "(or give a number)", tool=tool)
    raise ToolFailure(ErrorCode.INVALID_INPUT, f"port: {port!r} is port "
                      f"{', '.join(map(str, sorted(numbers)))} on different pods of "
                      f"{resolved.text}; give the number", tool=tool)


def analyze(view: GraphView, args: Args) -> Result:
    live = view
    proposal = None
    if args.proposed is not None:  # a bad proposal fails the call before any work
        view, proposal = proposed_view(view, args.proposed, tool=NAME, ahead=args._ahead)
    sources = resolve(view, args.source, argument="source", tool=NAME)
    destinations = resolve(view, args.destination, argument="destination", tool=NAME)
    if sources.endpoints[0].external and destinations.endpoints[0].external:
        raise ToolFailure(ErrorCode.INVALID_INPUT, "destination: source and destination are "
                          "both outside the cluster; no cluster policy applies between them",
                          tool=NAME)
    asked = port_number(destinations, args.port, args.protocol)
    targets, notes = port_targets(destinations, asked, args.protocol, tool=NAME)
    if proposal is not None:
        notes = [*proposal.notes, *notes]
    if not targets:
        raise ToolFailure(ErrorCode.NOT_FOUND, f"port: Service {args.destination} port "
                          f"{asked}/{args.protocol} resolves on none of its pods; see "
                          "diagnose_service", tool=NAME)
    request = Request(args.method, args.path, args.host)
    # Compact answers carry no evidence: the rules a denial missed are looked up only for
    # detail mode (the verdicts, steps and texts are the same either way).
    service = destinations.service
    engine = PolicyEngine(view, request=request, explain=args.detail,
                          via=(service, asked) if service is not None else None)
    verdicts: list[tuple[Verdict, Endpoint, Endpoint]] = []
    every = ((src, dst, port) for src in sources.endpoints for dst, port in targets
             # a pod to itself: plugins differ (loopback); not a policy question
             if src.key is None or src.key != dst.key)
    pairs = list(islice(every, MAX_PAIRS + 1))  # never the whole product in memory
    truncated = len(pairs) > MAX_PAIRS
    if truncated:
        notes.append(f"only the first {MAX_PAIRS} of about "
                     f"{len(sources.endpoints) * len(targets)} pod pairs were evaluated")
    for src, dst, port in pairs[:MAX_PAIRS]:
        verdicts.append((engine.evaluate(src, dst, port, args.protocol), src, dst))
    if not verdicts:
        raise ToolFailure(ErrorCode.INVALID_INPUT, "destination: the same pod as source; "
                          "traffic of a pod to itself is not subject to policy", tool=NAME)
    allowed = [v for v in verdicts if v[0].allowed is True]
    denied = [v for v in verdicts if v[0].allowed is False]
    unknown = [v for v in verdicts if v[0].allowed is None]
    verdict, src, dst = (denied or unknown or allowed)[0]
    # Unevaluated pairs leave "all allowed" undecided; one denied pair decides "no".
    overall = False if denied else None if unknown or truncated else True
    blocking: dict[str, ResourceRef] = {}
    for v, _, _ in denied:
        for ref in v.blocking:
            blocking.setdefault(str(ref), ref)
    # Allowed pairs may carry notes too: L7 rules (Cilium) not evaluated on top of an L4 allow.
    reasons = list(dict.fromkeys([*notes, *(r for v, _, _ in (*unknown, *allowed)
                                            for r in v.reasons())]))
    several = len(verdicts) > 1
    what_if = None
    if proposal is not None:
        what_if = _what_if(live, proposal, verdicts, overall, truncated, args, service, asked)
    return Result(
        metadata=metadata(view, dst.namespace, enforcement=cni.enforcement(view)),
        source=args.source,
        destination=args.destination,
        port=asked,
        protocol=args.protocol,
        allowed=overall,
        blocking_policies=list(blocking.values()),
        explained=f"{src.name} -> {dst.name}" if several else None,
        decisions=[DirectionOut.of(verdict.egress, detail=args.detail),
                   DirectionOut.of(verdict.ingress, detail=args.detail)],
        pairs=PairCounts(total=len(verdicts), allowed=len(allowed), denied=len(denied),
                         unknown=len(unknown),
                         denied_pairs=[f"{s.name} -> {d.name}" for _, s, d in denied[:5]])
        if several else None,
        not_evaluated=reasons,
        # Detail only: it counts the pods a change would open to.
        suggestion=suggest(view, verdict, src, dst, request) if args.detail else None,
        proposed=what_if,
    )


def _what_if(live: GraphView, proposal: Proposal,
             verdicts: list[tuple[Verdict, Endpoint, Endpoint]], overall: bool | None,
             truncated: bool, args: Args, service: ServiceRecord | None, asked: int) -> WhatIf:
    """The proposed objects, and the live verdict where it differs, with the proposed
    objects that decided the pairs whose verdict changed."""
    engine = PolicyEngine(live, request=Request(args.method, args.path, args.host),
                          explain=False, via=(service, asked) if service is not None else None)
    changed: list[Verdict] = []
    answers: list[bool | None] = []
    for after, src, dst in verdicts:
        before = engine.evaluate(src, dst, after.port, after.protocol)
        answers.append(before.allowed)
        if before.allowed != after.allowed:
            changed += (before, after)
    was = False if False in answers else None if None in answers or truncated else True
    return WhatIf(objects=described(proposal),
                  live=word(was) if was != overall or changed else None,
                  by=deciders(proposal, changed) if changed else None)



TOOL = Tool(METADATA, Args, Result, analyze, toolset=Toolset.POLICY,
            prepare=proposed_kinds.read_into, prepares=proposed_kinds.proposes)
