"""diff_reachability: the flows a proposed policy change gains and loses, as np-guard's
``diff`` reports connectivity differences; the proposal is evaluated on an overlay of the
live graph (policy/proposed_kinds.py), the flows compared in policy/flow_changes.py."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field, PrivateAttr

from netsight.analyzers.core import proposals
from netsight.analyzers.core.arguments import Namespace, PagedArgs, PortNumber
from netsight.analyzers.core.base import metadata, require_namespace
from netsight.analyzers.core.contracts import Model, Page, ToolResult
from netsight.analyzers.core.declarations import AnalyzerMetadata, Tool, Toolset
from netsight.analyzers.core.paging import decode_cursor, encode_cursor, query_fingerprint
from netsight.analyzers.core.proposal_reading import Document
from netsight.analyzers.policy.engine import READS, PolicyEngine
from netsight.analyzers.policy.flow_changes import FlowChange, FlowSpace, scan
from netsight.analyzers.policy.proposed_kinds import (
    PROPOSED_HELP,
    described,
    proposed_view,
    word,
)
from netsight.analyzers.policy.results import DetailAware
from netsight.analyzers.tools.find_blocking_policies import Protocol
from netsight.graph.model.kinds import parse_key
from netsight.graph.store.live import GraphView

NAME = "diff_reachability"
# Flows evaluated per page (each twice: live and proposed): a page answers within
# TOOL_TIMEOUT at any cluster size, and the cursor goes on from where it stopped.
MAX_EVALUATED = 5_000

METADATA = AnalyzerMetadata(
    name=NAME,
    description="Flows a proposed policy change gains and loses, and the proposed objects "
    "deciding each. Use it before applying a policy.",
    reads=READS,
    codes=(),
)


class Args(PagedArgs):
    proposed: str = Field(min_length=1, description=PROPOSED_HELP)
    namespaces: list[Namespace] | None = Field(
        default=None, description="Flows with an end here; default: the proposal's")
    ports: list[PortNumber] = Field(min_length=1, max_length=100, description="Ports")
    protocols: list[Protocol] = Field(default_factory=lambda: ["TCP"], min_length=1,
                                      description="TCP, UDP and/or SCTP")
    limit: int = Field(default=100, ge=1, le=1000, description="Flows per page")
    _ahead: list[Document] | None = PrivateAttr(default=None)


class Flow(DetailAware):
    from_: str = Field(alias="from", description="A pod standing for its group")
    to: str
    port: int
    protocol: str
    diff: str = Field(description="added, removed or changed")
    before: str
    after: str
    pairs: int = Field(description="Pod pairs it stands for")
    by: list[str] = Field(description="Proposed objects deciding it")
    path: str | None = Field(default=None, description="Detail mode only: why, after")

    _detail_only: ClassVar[tuple[str, ...]] = ("path",)


class Summary(Model):
    added: int
    removed: int
    changed: int


class Result(ToolResult):
    objects: list[str] = Field(description="'<action> Kind/namespace/name'")
    flows: list[Flow]
    summary: Summary = Field(description="Of this page's flows")
    page: Page
    not_evaluated: list[str]


def _scope(args: Args, proposal: proposals.Proposal) -> set[str] | None:
    if args.namespaces is not None:
        return set(args.namespaces)
    owners = {parse_key(key).namespace for key in proposal.delta}
    return None if "" in owners else owners  # a cluster-scoped policy: every namespace


def analyze(view: GraphView, args: Args) -> Result:
    for namespace in args.namespaces or ():
        require_namespace(view, namespace, tool=NAME)
    overlay, proposal = proposed_view(view, args.proposed, tool=NAME, ahead=args._ahead)
    live, after = PolicyEngine(view, explain=False), PolicyEngine(overlay, explain=False)
    ports, protocols = list(dict.fromkeys(args.ports)), list(dict.fromkeys(args.protocols))
    scope = _scope(args, proposal)
    fingerprint = query_fingerprint(NAME, args.proposed, sorted(scope or ()), ports, protocols)
    start = decode_cursor(args.cursor, fingerprint, tool=NAME)
    space = FlowSpace(live, after, scope, ports, protocols)
    found = scan(live, after, proposal, space, min(start, space.total), args.limit,
                 MAX_EVALUATED)
    flows = [_out(change) for change in found.changes]
    remaining = found.total - found.scanned_to
    return Result(
        metadata=metadata(view, next(iter(scope)) if scope and len(scope) == 1 else None),
        objects=described(proposal),
        flows=flows,
        summary=Summary(**{kind: sum(f.diff == kind for f in flows)
                           for kind in ("added", "removed", "changed")}),
        page=Page(total=found.total, returned=len(flows), remaining=remaining,
                  next_cursor=encode_cursor(found.scanned_to, fingerprint)
                  if remaining else None),
        not_evaluated=list(dict.fromkeys([*proposal.notes, *found.reasons]))[:20],
    )


def _out(change: FlowChange) -> Flow:
    return Flow.model_validate({
        "from": change.source.rep.name, "to": change.destination.rep.name,
        "port": change.port, "protocol": change.protocol, "diff": change.kind,
        "before": word(change.before.allowed), "after": word(change.after.allowed),
        "pairs": change.pairs, "by": change.by,
        "path": f"egress: {change.after.egress.path()} | "
                f"ingress: {change.after.ingress.path()}"})


def read_ahead(args: Args) -> None:
    """Reads the proposal's YAML off the server's event loop (as diff_routes does)."""
    args._ahead = proposals.read_ahead(args.proposed)


TOOL = Tool(METADATA, Args, Result, analyze, toolset=Toolset.WHATIF, prepare=read_ahead)
