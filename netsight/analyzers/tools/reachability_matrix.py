"""reachability_matrix: allowed or not, for every pod pair, port and protocol asked about."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field, PrivateAttr

from netsight.analyzers.core import deadline
from netsight.analyzers.core.arguments import Namespace, PagedArgs, PortNumber
from netsight.analyzers.core.base import metadata, require_namespace
from netsight.analyzers.core.contracts import Page, ToolResult
from netsight.analyzers.core.declarations import AnalyzerMetadata, Tool, Toolset
from netsight.analyzers.core.object_names import ObjectName
from netsight.analyzers.core.paging import decode_cursor, encode_cursor, query_fingerprint
from netsight.analyzers.core.proposal_reading import Document
from netsight.analyzers.policy import cni_detection as cni
from netsight.analyzers.policy import proposed_kinds
from netsight.analyzers.policy.endpoints import Endpoint, from_pod, live, resolve
from netsight.analyzers.policy.engine import READS, PolicyEngine
from netsight.analyzers.policy.proposed_kinds import (
    PROPOSED_HELP,
    deciders,
    described,
    proposed_view,
    word,
)
from netsight.analyzers.policy.results import DetailAware, WhatIf
from netsight.analyzers.tools.find_blocking_policies import Protocol
from netsight.graph.model.kinds import WORKLOAD_KINDS, Kind
from netsight.graph.model.records import PodRecord, WorkloadRecord
from netsight.graph.model.selectors import selector_from_map
from netsight.graph.store.live import GraphView, Source

NAME = "reachability_matrix"

METADATA = AnalyzerMetadata(
    name=NAME,
    description="Allowed or denied for every pod pair of the given namespaces or pods, "
    "per port. Use it to review a namespace's isolation.",
    reads=READS | cni.READS,
    codes=(),
)


class Args(PagedArgs):
    namespaces: list[Namespace] | None = Field(
        default=None, description="Pods of these namespaces (with pods: both)")
    pods: list[ObjectName] | None = Field(default=None, description="These pods, 'ns/pod'")
    ports: list[PortNumber] = Field(min_length=1, max_length=100,
                                    description="Destination ports")
    protocols: list[Protocol] = Field(default_factory=lambda: ["TCP"], min_length=1,
                                      description="TCP, UDP and/or SCTP")
    # Generous, so one call (the CLI's, too) returns a matrix of a few dozen pods whole:
    # 16 pods x 6 ports x 3 protocols is 4,320 entries.
    limit: int = Field(default=5000, ge=1, le=20_000, description="Entries per page")
    proposed: str | None = Field(default=None, description=PROPOSED_HELP)
    _ahead: list[Document] | None = PrivateAttr(default=None)


class Entry(DetailAware):
    from_: str = Field(alias="from")
    to: str
    port: int
    protocol: str
    allowed: bool | None
    path: str | None = Field(default=None, description="Detail mode only: why")
    what_if: WhatIf | None = Field(default=None, description="With proposed, where the live "
                                   "verdict differs")

    _detail_only: ClassVar[tuple[str, ...]] = ("path",)


class Result(ToolResult):
    pods: int = Field(description="Endpoints in the matrix")
    entries: list[Entry]
    page: Page
    not_evaluated: list[str]
    proposed: WhatIf | None = None


def _endpoints(view: GraphView, args: Args) -> list[Endpoint]:
    chosen: dict[str, Endpoint] = {}
    namespaces: list[str | None] = list(args.namespaces or [])
    if args.namespaces is None and args.pods is None:
        namespaces = [None]
    for namespace in deadline.checked(namespaces):
        require_namespace(view, namespace, tool=NAME)
        for record in view.for_each(Kind.POD, namespace):
            if isinstance(record, PodRecord) and live(record):
                chosen[record.key] = from_pod(record)
        if view.source is Source.MANIFESTS:
            for kind in sorted(WORKLOAD_KINDS):
                for workload in view.for_each(kind, namespace):
                    if not isinstance(workload, WorkloadRecord):
                        continue
                    # No selector (a CronJob's jobs): its pods carry the template labels.
                    selector = workload.selector or selector_from_map(workload.pod_labels)
                    if not any(isinstance(r, PodRecord)
                               for r in view.matching(workload.namespace, selector)):
                        chosen[workload.key] = from_pod(workload)
    for i, name in enumerate(args.pods or []):
        for endpoint in resolve(view, name, argument=f"pods[{i}]", tool=NAME).endpoints:
            if endpoint.key is not None:
                chosen[endpoint.key] = endpoint
    return sorted(chosen.values(), key=lambda e: e.name)


def analyze(view: GraphView, args: Args) -> Result:
    proposal, live = None, None
    if args.proposed is not None:  # a bad proposal fails the call before any work
        live = PolicyEngine(view, explain=False)
        view, proposal = proposed_view(view, args.proposed, tool=NAME, ahead=args._ahead)
    endpoints = _endpoints(view, args)
    ports, protocols = list(dict.fromkeys(args.ports)), list(dict.fromkeys(args.protocols))
    per_pair = len(ports) * len(protocols)
    n = len(endpoints)
    total = n * (n - 1) * per_pair
    fingerprint = query_fingerprint(NAME, args.namespaces, args.pods, ports, protocols,
                                    args.proposed)
    offset = min(decode_cursor(args.cursor, fingerprint, tool=NAME), total)
    end = min(offset + args.limit, total)
    engine = PolicyEngine(view)
    entries: list[Entry] = []
    reasons: dict[str, None] = {}
    # Entries are numbered; a page evaluates only its own, whatever the matrix's size.
    for index in range(offset, end):
        deadline.check(lambda: entries)  # over TOOL_TIMEOUT: the entries done so far
        pair, within = divmod(index, per_pair)
        i, j = divmod(pair, n - 1)
        j += j >= i  # skip the pod itself
        port, protocol = ports[within // len(protocols)], protocols[within % len(protocols)]
        src, dst = endpoints[i], endpoints[j]
        verdict = engine.evaluate(src, dst, port, protocol)
        if verdict.allowed is None:
            reasons.update(dict.fromkeys(verdict.reasons()))
        what_if = None
        if live is not None and proposal is not None:
            before = live.evaluate(src, dst, port, protocol)
            if before.allowed != verdict.allowed:
                what_if = WhatIf(live=word(before.allowed),
                                 by=deciders(proposal, (before, verdict)))
        entries.append(Entry.model_validate({
            "from": src.name, "to": dst.name, "port": port, "protocol": protocol,
            "allowed": verdict.allowed, "what_if": what_if,
            "path": f"egress: {verdict.egress.path()} | ingress: {verdict.ingress.path()}"}))
    remaining = total - end
    return Result(
        metadata=metadata(view, args.namespaces[0] if args.namespaces and
                          len(args.namespaces) == 1 else None,
                          enforcement=cni.enforcement(view)),
        pods=n,
        entries=entries,
        page=Page(total=total, returned=len(entries), remaining=remaining,
                  next_cursor=encode_cursor(end, fingerprint) if remaining else None),
        not_evaluated=list(dict.fromkeys([*(proposal.notes if proposal else ()),
                                          *reasons]))[:20],
        proposed=None if proposal is None else WhatIf(objects=described(proposal)),
    )



TOOL = Tool(METADATA, Args, Result, analyze, toolset=Toolset.POLICY,
            prepare=proposed_kinds.read_into, prepares=proposed_kinds.proposes)
