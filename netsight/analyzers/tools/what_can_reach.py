"""what_can_reach: every destination a source may reach, as identities, on a port or on the
ports each destination declares."""

from __future__ import annotations

import bisect
from collections.abc import Callable

from pydantic import Field

from netsight.analyzers.core.arguments import PagedArgs, PortNumber
from netsight.analyzers.core.base import metadata
from netsight.analyzers.core.contracts import Page, ToolResult
from netsight.analyzers.core.declarations import AnalyzerMetadata, Tool, Toolset
from netsight.analyzers.core.object_names import ObjectName
from netsight.analyzers.core.paging import paginate, query_fingerprint
from netsight.analyzers.policy import classes
from netsight.analyzers.policy import cni_detection as cni
from netsight.analyzers.policy.classes import Row, add_rows
from netsight.analyzers.policy.endpoints import Endpoint, resolve
from netsight.analyzers.policy.engine import READS, PolicyEngine
from netsight.analyzers.policy.external_regions import Region, external_regions
from netsight.analyzers.policy.peer_groups import (
    Group,
    cluster_endpoints,
    fixed_groups,
    group,
    peer_endpoint,
)
from netsight.analyzers.policy.reach import (
    Tally,
    flow,
    merge,
    policy_blocks,
    tally,
    unwatched_peers,
)
from netsight.analyzers.policy.results import PeerOut, Summary, peer_out, summarize
from netsight.analyzers.policy.verdict import Direction, Verdict
from netsight.analyzers.tools.find_blocking_policies import ENDPOINT_HELP, Protocol
from netsight.graph.store.live import GraphView

NAME = "what_can_reach"

METADATA = AnalyzerMetadata(
    name=NAME,
    description="Every destination a source may reach, as identities and CIDRs. Use it to see "
    "where a workload can connect.",
    reads=READS | cni.READS,
    codes=(),
)


class Args(PagedArgs):
    source: ObjectName = Field(description=f"From: {ENDPOINT_HELP}")
    port: PortNumber | None = Field(default=None, description="Destination port; default: "
                                    "each one's declared container ports")
    protocol: Protocol | None = Field(default=None, description="TCP, UDP or SCTP (default: "
                                      "TCP with a port, all without)")
    limit: int = Field(default=100, ge=1, le=500, description="Peers per page (1-500)")


class Result(ToolResult):
    source: str
    port: int | None
    protocol: str | None
    source_pods: int = Field(description="Pods the source stands for")
    peers: list[PeerOut] = Field(description="Reachable or undecided destinations: "
                                 "identities by namespace and labels, then outside CIDRs")
    summary: Summary
    unchecked_pods: int = Field(default=0, description="Without a port: destination pods "
                                "declaring no container port (of the protocol), not checked")
    page: Page
    not_evaluated: list[str]


def analyze(view: GraphView, args: Args) -> Result:
    resolved = resolve(view, args.source, argument="source", tool=NAME)
    engine = PolicyEngine(view, explain=False)
    # Destinations' IPs meet only the source's egress ipBlocks (and admin networks); the
    # source's IPs meet every destination's ingress ipBlocks, which matter only when
    # several source pods are grouped.
    blocks = policy_blocks(engine, resolved.endpoints, Direction.EGRESS)
    mesh = engine.istio.anywhere()
    fixed = fixed_groups(((e, None) for e in resolved.endpoints),
                         policy_blocks(engine) if len(resolved.endpoints) > 1 else (), mesh)
    source_external = resolved.endpoints[0].external
    several = len(resolved.endpoints) > 1
    reasons: dict[str, None] = {}
    entries: list[PeerOut] = []
    unchecked = 0

    def evaluating(port: int, protocol: str
                   ) -> Callable[[Group, int | None, Endpoint], Verdict | None]:
        def evaluate(source: Group, _: int | None, peer: Endpoint) -> Verdict | None:
            return flow(engine, source.rep, peer, port, protocol, Direction.EGRESS)
        return evaluate

    fast: classes.Sources | None = None
    if args.port is not None:
        protocol = args.protocol or "TCP"
        # Identities the set evaluation decides are rows; the rest (host network, the
        # source's own identity, identities the grouping would split, anything undecided)
        # are asked about pod by pod. With Istio anywhere, the per-pod path groups by
        # service account and mesh membership too: it answers alone.
        fast = None if mesh or source_external else classes.what_can_reach(
            engine, [g for g, _ in fixed], args.port, protocol, blocks)
        if fast is not None:
            alone = resolved.endpoints[0].key if len(resolved.endpoints) == 1 else None
            peers = group([e for r in fast.exact
                           if (e := peer_endpoint(view, r, alone)) is not None],
                          blocks, True, mesh)
        else:
            peers = group(cluster_endpoints(view, resolved.endpoints), blocks, True, mesh)
        found = tally(peers, fixed, evaluating(args.port, protocol))
        # Entries in order: identities (per-pod groups and the set evaluation's rows,
        # both by namespace and labels), then outside CIDRs; only the page asked for
        # becomes PeerOut.
        listed: list[Row | tuple[Group, Tally] | Region] = \
            list(fast.rows) if fast is not None else []
        for p, t in found:
            if t.allowed or t.unknown:
                bisect.insort(listed, (p, t), key=classes.listing_order)
        for _, t in found:
            reasons.update(t.reasons)
        if not source_external:
            port = args.port
            regions = external_regions(blocks, lambda ext: [
                (engine.evaluate(g.rep, ext, port, protocol), len(g.members)) for g, _ in fixed])
            for region in regions:
                if region.tally.allowed or region.tally.unknown:
                    listed.append(region)
                    reasons.update(region.tally.reasons)
        fingerprint = query_fingerprint(NAME, args.source, args.port, args.protocol,
                                        args.detail)
        page_listed, page = paginate(listed, limit=args.limit, cursor=args.cursor,
                                     fingerprint=fingerprint, tool=NAME)
        summary = summarize(found)
        if fast is not None:
            summary = add_rows(summary, fast)
        return _result(view, args, resolved.endpoints, source_external,
                       [classes.listed_out(item, blocks, several=several, detail=args.detail)
                        for item in page_listed], summary, 0, page, reasons)
    peers = group(cluster_endpoints(view, resolved.endpoints), blocks, True, mesh)
    found = []
    for peer in peers:
        declared = sorted({(p.port, p.protocol) for p in peer.rep.ports
                           if args.protocol is None or p.protocol == args.protocol})
        if not declared:
            unchecked += len(peer.members)
            continue
        ports: dict[str, Tally] = {}
        for number, protocol in declared:
            for _, t in tally([peer], fixed, evaluating(number, protocol)):
                ports[f"{number}/{protocol}"] = t
                reasons.update(t.reasons)
        if not ports:
            continue  # the source itself, alone in its group
        overall = Tally(reasons={r: None for t in ports.values() for r in t.reasons},
                        ports={p: t.verdict for p, t in ports.items()})
        if any(v is True for v in overall.ports.values()):
            overall.allowed = len(peer.members)
        elif any(v is None for v in overall.ports.values()):
            overall.unknown = len(peer.members)
        else:
            overall.denied = len(peer.members)
        found.append((peer, overall))
    found = merge(found)
    for peer, overall in found:
        allowed = [p for p, v in overall.ports.items() if v is True]
        unknown = [p for p, v in overall.ports.items() if v is None]
        if allowed or unknown:
            entry = peer_out(peer, overall, several=False, detail=args.detail)
            entries.append(entry.model_copy(update={
                "ports": allowed or None, "unknown_ports": unknown or None}))
    if not source_external:
        reasons["outside addresses are listed only when a port is given"] = None
    fingerprint = query_fingerprint(NAME, args.source, args.port, args.protocol, args.detail)
    page_items, page = paginate(entries, limit=args.limit, cursor=args.cursor,
                                fingerprint=fingerprint, tool=NAME)
    return _result(view, args, resolved.endpoints, source_external, page_items,
                   summarize(found), unchecked, page, reasons)


def _result(view: GraphView, args: Args, sources: tuple[Endpoint, ...], source_external: bool,
            peers: list[PeerOut], summary: Summary, unchecked: int, page: Page,
            reasons: dict[str, None]) -> Result:
    unwatched = unwatched_peers(view)
    if unwatched is not None:
        reasons = {unwatched: None, **reasons}
    return Result(
        metadata=metadata(view, None if source_external else sources[0].namespace,
                          enforcement=cni.enforcement(view)),
        source=args.source, port=args.port,
        protocol=args.protocol or ("TCP" if args.port is not None else None),
        source_pods=len(sources),
        peers=peers,
        summary=summary,
        unchecked_pods=unchecked,
        page=page,
        not_evaluated=list(reasons)[:20],
    )


TOOL = Tool(METADATA, Args, Result, analyze, toolset=Toolset.POLICY)
