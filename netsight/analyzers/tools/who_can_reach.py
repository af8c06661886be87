"""who_can_reach: every source allowed to reach a destination on a port, as identities."""

from __future__ import annotations

import bisect
from collections.abc import Iterable

from pydantic import Field, PrivateAttr

from netsight.analyzers.core.arguments import PagedArgs, Port
from netsight.analyzers.core.base import metadata
from netsight.analyzers.core.contracts import ErrorCode, Page, ToolFailure, ToolResult
from netsight.analyzers.core.declarations import AnalyzerMetadata, Tool, Toolset
from netsight.analyzers.core.object_names import ObjectName
from netsight.analyzers.core.paging import paginate, query_fingerprint
from netsight.analyzers.core.proposal_reading import Document
from netsight.analyzers.policy import classes, proposed_kinds
from netsight.analyzers.policy import cni_detection as cni
from netsight.analyzers.policy.classes import Row, add_rows
from netsight.analyzers.policy.endpoints import Endpoint, port_targets, resolve
from netsight.analyzers.policy.engine import READS, PolicyEngine
from netsight.analyzers.policy.external_regions import Region, external_regions
from netsight.analyzers.policy.peer_groups import (
    Group,
    cluster_endpoints,
    fixed_groups,
    group,
    peer_endpoint,
)
from netsight.analyzers.policy.proposed_kinds import PROPOSED_HELP, described, proposed_view
from netsight.analyzers.policy.reach import (
    Tally,
    flow,
    narrowed_sources,
    policy_blocks,
    tally,
    unwatched_peers,
)
from netsight.analyzers.policy.results import PeerOut, Summary, WhatIf, summarize
from netsight.analyzers.policy.verdict import Direction, Verdict
from netsight.analyzers.tools.find_blocking_policies import (
    ENDPOINT_HELP,
    Protocol,
    port_number,
)
from netsight.graph.model.kinds import Kind
from netsight.graph.store.live import GraphView

NAME = "who_can_reach"

METADATA = AnalyzerMetadata(
    name=NAME,
    description="Every source allowed to reach a destination port, as identities and "
    "CIDRs. Use it to see a workload's exposure.",
    reads=READS | cni.READS | {Kind.SERVICE},
    codes=(),
)


class Args(PagedArgs):
    destination: ObjectName = Field(description=f"To: {ENDPOINT_HELP}")
    port: Port = Field(description="Destination port (for a Service: its port)")
    protocol: Protocol = Field(default="TCP", description="TCP, UDP or SCTP")
    limit: int = Field(default=100, ge=1, le=500, description="Peers per page")
    proposed: str | None = Field(default=None, description=PROPOSED_HELP)
    _ahead: list[Document] | None = PrivateAttr(default=None)


class Result(ToolResult):
    destination: str
    port: int
    protocol: str
    destination_pods: int = Field(description="Pods the destination stands for")
    peers: list[PeerOut] = Field(description="Allowed or undecided sources: identities by "
                                 "namespace and labels, then outside CIDRs")
    summary: Summary
    page: Page
    not_evaluated: list[str]
    proposed: WhatIf | None = None


def analyze(view: GraphView, args: Args) -> Result:
    proposal = None
    if args.proposed is not None:  # a bad proposal fails the call before any work
        view, proposal = proposed_view(view, args.proposed, tool=NAME, ahead=args._ahead)
    resolved = resolve(view, args.destination, argument="destination", tool=NAME)
    port = port_number(resolved, args.port, args.protocol, tool=NAME)
    targets, notes = port_targets(resolved, port, args.protocol, tool=NAME)
    if not targets:
        raise ToolFailure(ErrorCode.NOT_FOUND, f"port: Service {args.destination} port "
                          f"{port}/{args.protocol} resolves on none of its pods; see "
                          "diagnose_service", tool=NAME)
    engine = PolicyEngine(view, explain=False)
    ends = [e for e, _ in targets]
    # Sources' IPs meet only the destinations' ingress ipBlocks; the destinations' IPs meet
    # every source's egress ipBlocks, which matter only when destinations are grouped.
    blocks = policy_blocks(engine, ends, Direction.INGRESS)
    mesh = engine.istio.anywhere()
    fixed = fixed_groups(targets, policy_blocks(engine) if len(ends) > 1 else (), mesh)
    protocol = args.protocol

    def evaluate(target: Group, port: int | None, peer: Endpoint) -> Verdict | None:
        if peer.external and target.rep.external:
            return None
        assert port is not None
        return flow(engine, peer, target.rep, port, protocol, Direction.INGRESS)

    several = sum(len(g.members) for g, _ in fixed) > 1
    fast = classes.who_can_reach(engine, fixed, protocol)
    narrowed = None if fast is not None else narrowed_sources(engine, fixed, protocol)
    if fast is not None:
        # Identities the set evaluation decided are rows; the rest (host network, the
        # destination's own identity, anything undecided) are asked about pod by pod.
        alone = resolved.endpoints[0].key if len(resolved.endpoints) == 1 else None
        sources: Iterable[Endpoint] = [
            e for r in fast.exact if (e := peer_endpoint(view, r, alone)) is not None]
    else:
        sources = cluster_endpoints(view, resolved.endpoints) if narrowed is None \
            else narrowed[0]
    peers = group(sources, blocks, False, mesh)
    found = tally(peers, fixed, evaluate)
    # Entries in order: identities (per-pod groups and the set evaluation's rows, both by
    # namespace and labels; an identity is in one of them), then outside CIDRs. Only the
    # page asked for is turned into PeerOut.
    listed: list[Row | tuple[Group, Tally] | Region] = \
        list(fast.rows) if fast is not None else []
    for p, t in found:
        if t.allowed or t.unknown:
            bisect.insort(listed, (p, t), key=classes.listing_order)
    summary = summarize(found)
    if fast is not None:
        summary = add_rows(summary, fast)
    entries = listed
    reasons = dict.fromkeys([*(proposal.notes if proposal else ()), *notes])
    unwatched = unwatched_peers(view)
    if unwatched is not None:
        reasons[unwatched] = None
    for _, t in found:
        reasons.update(t.reasons)
    if not all(g.rep.external for g, _ in fixed):
        regions = external_regions(blocks, lambda ext: [
            (engine.evaluate(ext, g.rep, port, protocol), len(g.members))
            for g, port in fixed if port is not None and not g.rep.external])
        for region in regions:
            if region.tally.allowed or region.tally.unknown:
                entries.append(region)
                reasons.update(region.tally.reasons)
    if narrowed is not None:  # the sources never tried are denied by the destination
        tried = sum(len(p.members) for p in peers)
        summary = summary.model_copy(update={
            "denied_pods": summary.denied_pods + narrowed[1] - tried})
    fingerprint = query_fingerprint(NAME, args.destination, port, args.protocol,
                                    args.detail, args.proposed)
    page_items, page = paginate(entries, limit=args.limit, cursor=args.cursor,
                                fingerprint=fingerprint, tool=NAME)
    return Result(
        metadata=metadata(view, None if resolved.endpoints[0].external
                          else resolved.endpoints[0].namespace,
                          enforcement=cni.enforcement(view)),
        destination=args.destination, port=port, protocol=args.protocol,
        destination_pods=sum(len(g.members) for g, _ in fixed),
        peers=[classes.listed_out(item, blocks, several=several, detail=args.detail)
               for item in page_items],
        summary=summary,
        page=page,
        not_evaluated=list(reasons)[:20],
        proposed=None if proposal is None else WhatIf(objects=described(proposal)),
    )



TOOL = Tool(METADATA, Args, Result, analyze, toolset=Toolset.POLICY,
            prepare=proposed_kinds.read_into, prepares=proposed_kinds.proposes)
