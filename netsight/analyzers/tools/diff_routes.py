"""diff_routes: where one HTTP request goes through the Gateway API, and why not elsewhere.

The routing itself is routing/request_resolution.py; this module reads the arguments into
the question it answers, and shapes the answer.
"""

from __future__ import annotations

from pydantic import Field, PrivateAttr

from netsight.analyzers.core import proposals
from netsight.analyzers.core.arguments import GenerationOrTime, Namespace, PortNumber, ToolArgs
from netsight.analyzers.core.base import metadata
from netsight.analyzers.core.contracts import ErrorCode, Finding, ToolFailure, ToolResult
from netsight.analyzers.core.declarations import AnalyzerMetadata, Tool, Toolset
from netsight.analyzers.core.lookup import locate, services_at
from netsight.analyzers.core.object_names import ObjectName
from netsight.analyzers.core.proposal_reading import Document
from netsight.analyzers.core.quoting import shortened
from netsight.analyzers.mesh.istio_objects import (
    DESTINATION_RULE,
    ISTIO_GATEWAY,
    SERVICE_ENTRY,
    SIDECAR,
    VIRTUAL_SERVICE,
)
from netsight.analyzers.routing import istio_rules
from netsight.analyzers.routing.addresses import gateways_at
from netsight.analyzers.routing.change_history import ChangeOut
from netsight.analyzers.routing.declared import REQUEST_CODES, ROUTE_READS
from netsight.analyzers.routing.gateway_objects import GATEWAY
from netsight.analyzers.routing.request_answers import Asked, BackendShare, Layer, Shadowed
from netsight.analyzers.routing.request_resolution import answer_request
from netsight.analyzers.routing.requests import Request, request_host
from netsight.analyzers.routing.what_if import ProposedOut
from netsight.graph.model.kinds import Kind
from netsight.graph.store.live import GraphView

NAME = "diff_routes"
DESCRIBED = 2048  # characters of the request line an answer repeats (most servers take 8 KiB)

METADATA = AnalyzerMetadata(
    name=NAME,
    description="Where one HTTP request goes through Gateway API, Ingress or Istio routing: "
    "rule, backends, shadowed rules; what changed, or what proposed YAML would change. "
    "Use it when a request reaches the wrong backend.",
    reads=ROUTE_READS | {Kind.INGRESS, Kind.INGRESS_CLASS, VIRTUAL_SERVICE, DESTINATION_RULE,
                         ISTIO_GATEWAY, SERVICE_ENTRY, Kind.POD, SIDECAR},
    codes=REQUEST_CODES,
)


class Args(ToolArgs):
    host: str = Field(min_length=1, max_length=253,
                      description="Host header, e.g. shop.example.com")
    path: str = Field(default="/", pattern=r"^/", description="Request path, starting with /")
    method: str = Field(default="GET", pattern=r"^[A-Z]+$", description="HTTP method")
    headers: dict[str, str] = Field(default_factory=dict, description="Request headers")
    query: dict[str, str] = Field(default_factory=dict, description="Query parameters")
    gateway: ObjectName | None = Field(
        default=None, description="Enter at this Gateway ('namespace/name'); default: all "
        "with a listener for the host")
    port: PortNumber | None = Field(default=None, description="Only listeners on this port")
    expected_backend: ObjectName | None = Field(
        default=None, description="The Service ('namespace/name') the request should reach")
    against: GenerationOrTime | None = Field(
        default=None, description="Also list changes since then to the objects on the way: a "
        "graph generation (metadata.graphGeneration), an RFC 3339 time or a duration ('10m')")
    proposed: str | None = Field(
        default=None, description="What-if: YAML or JSON objects (at most 100, 1 MiB) that "
        "replace or add live ones (annotation netsight.io/delete: \"true\" deletes); "
        "resolved on an overlay, nothing written, and compared with the live answer")
    via: str | None = Field(
        default=None, description="Route as Istio does: 'mesh' (a sidecar client; give "
        "sourceNamespace) or 'gateway <namespace>/<name>' (an Istio Gateway)")
    source_namespace: Namespace | None = Field(
        default=None, description="With via 'mesh': the client's namespace")
    source_labels: dict[str, str] | None = Field(
        default=None, description="With via 'mesh': the client's labels (sourceLabels "
        "matches; without them undecided)")
    # The proposal's documents, once read_ahead has read them.
    _ahead: list[Document] | None = PrivateAttr(default=None)


class Result(ToolResult):
    request: str
    layers: list[Layer]
    backends: list[BackendShare] = Field(description="Effective weighted backends reached")
    matches_expected: bool | None = None
    expected_detail: str | None = None
    conflicts: list[Shadowed]
    findings: list[Finding]
    not_evaluated: list[str]
    incomplete: list[str] | None = Field(
        default=None, description="Why the answer is incomplete for this caller: layers in "
        "namespaces they may not read on which the verdict depends")
    changes: list[ChangeOut] | None = Field(
        default=None, description="With against: changes since then to the objects the "
        "request goes through, newest first")
    proposed: ProposedOut | None = Field(
        default=None, description="With proposed: the answer with those objects applied, "
        "and how it differs from the live one")


def analyze(view: GraphView, args: Args) -> Result:
    asked = _asked(view, args)  # a bad via fails the call before any work
    answered = answer_request(view, asked, against=args.against, proposed=args.proposed,
                              ahead=args._ahead)
    live = answered.live
    return Result(
        metadata=metadata(view),
        request=asked.described,
        layers=live.layers,
        backends=list(live.reached.values()),
        matches_expected=live.matches_expected,
        expected_detail=live.expected_detail,
        conflicts=live.conflicts,
        findings=live.findings,
        not_evaluated=list(dict.fromkeys(live.notes)),
        incomplete=list(dict.fromkeys(live.incomplete)) or None,
        changes=answered.changes,
        proposed=answered.proposed,
    )


def _asked(view: GraphView, args: Args) -> Asked:
    via = parse_via(args)
    gateway = None if args.gateway is None else locate(
        view, args.gateway, (GATEWAY,), argument="gateway", tool=NAME, at_address=gateways_at)
    backend = None if args.expected_backend is None else locate(
        view, args.expected_backend, ("Service",), argument="expected_backend", tool=NAME,
        at_address=services_at)
    host = request_host(args.host)
    return Asked(
        request=Request(host, args.path.split("?")[0], args.method, args.headers, args.query),
        # Named in the answer and in each finding: a path of megabytes is shown by a prefix.
        described=shortened(f"{args.method} {host}{args.path}", DESCRIBED),
        authority=args.host.strip().lower(),
        tool=NAME, gateway=gateway.ref if gateway else None, port=args.port,
        expected_backend=backend.ref if backend else None,
        via=via, source_namespace=args.source_namespace, source_labels=args.source_labels)


def parse_via(args: Args) -> istio_rules.Via | None:
    """``via`` and the arguments that go with it, checked together."""
    if args.via is None:
        if args.source_namespace is not None or args.source_labels is not None:
            raise ToolFailure(ErrorCode.INVALID_INPUT, "source_namespace, source_labels: "
                              "only with via 'mesh' (the sidecar-injected client they "
                              "describe); add via: 'mesh' or leave them out", tool=NAME)
        return None
    via = istio_rules.parse_via(args.via)
    if isinstance(via, str):
        raise ToolFailure(ErrorCode.INVALID_INPUT, f"via: {via}", tool=NAME)
    if args.gateway is not None:
        raise ToolFailure(ErrorCode.INVALID_INPUT, "gateway: names a Gateway API entry, and "
                          "via routes the request through Istio instead; give one of them",
                          tool=NAME)
    if via.gateway is None and args.source_namespace is None:
        raise ToolFailure(ErrorCode.INVALID_INPUT, "source_namespace: required with via "
                          "'mesh' (the client's namespace, where VirtualService exportTo and "
                          "short hosts are resolved), e.g. 'shop'", tool=NAME)
    if via.gateway is not None and (args.source_namespace is not None
                                    or args.source_labels is not None):
        raise ToolFailure(ErrorCode.INVALID_INPUT, "source_namespace, source_labels: only "
                          "with via 'mesh'; through a gateway the client is the gateway",
                          tool=NAME)
    return via


def read_ahead(args: Args) -> None:
    """Reads the proposal's YAML, which takes time in proportion to its size and needs no
    graph: a server does it off its event loop."""
    if args.proposed is not None:
        args._ahead = proposals.read_ahead(args.proposed)


TOOL = Tool(METADATA, Args, Result, analyze, toolset=Toolset.ROUTING, prepare=read_ahead)
