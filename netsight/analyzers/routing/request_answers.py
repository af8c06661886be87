"""The answer about one HTTP request (diff_routes): the question, the layers that take it
(one per entry: a Gateway listener, Ingress, or an Istio proxy), the rules they shadow, and
the verdict: which backends it reaches and whether the expected one is among them.

Layers are decided on the whole graph and shown as the caller may see them: a route or an
entry Gateway in a namespace they may not read is a layer all the same, unnamed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from pydantic import Field

from netsight.analyzers.core import codes
from netsight.analyzers.core.contracts import Finding, Model, OmitNone
from netsight.analyzers.routing.istio_rules import Via
from netsight.analyzers.routing.report import BackendTLSOut
from netsight.analyzers.routing.requests import Request

HIDDEN_ROUTE = "a route in a namespace you may not read"
HIDDEN_GATEWAY = "a Gateway in a namespace you may not read"


@dataclass(slots=True)
class Asked:
    """One request as the caller asks about it: where it enters and what it should reach."""

    request: Request
    described: str  # "GET shop.example.com/cart", as findings name the request
    authority: str  # the Host header as given (its port included), lowercased
    tool: str  # the tool asking, named in the failures it raises
    gateway: str | None = None  # the entry Gateway, 'namespace/name'; None: every one
    port: int | None = None  # only listeners on this port
    expected_backend: str | None = None  # the Service it should reach, 'namespace/name'
    via: Via | None = None  # routed as Istio does instead of through the Gateway API
    source_namespace: str | None = None  # with via mesh: the client's namespace
    source_labels: Mapping[str, str] | None = None  # with via mesh: the client's labels


class BackendShare(OmitNone):
    backend: str
    port: int | None = None
    weight: int
    share: float = Field(description="Percent of the rule's requests")
    resolved: bool
    reason: str | None = None
    ready_endpoints: int | None = None
    mirror: bool | None = None
    tls: BackendTLSOut | None = None  # backend TLS (BackendTLSPolicy)
    subset: str | None = None  # a VirtualService destination's DestinationRule subset


class Layer(OmitNone):
    layer: str = Field(default="gateway-api",
                       description='"gateway-api", "ingress" or "virtual-service"')
    entry: str = Field(description='"namespace/gateway/listener", "ingress/<class>", "mesh" '
                       'or "gateway <namespace>/<name>" (via), or an unnamed Gateway the '
                       'caller may not read')
    port: int | None = None
    route: str | None = None
    kind: str | None = None
    rule: int | None = None
    match: dict[str, object] | None = None
    filters: list[str] | None = None
    policies: list[str] | None = Field(
        default=None, description="Timeouts, retries and rewrites the rule's requests get "
        "(the route's own, or a kgateway TrafficPolicy's), and where each comes from")
    backends: list[BackendShare]
    outcome: str = Field(description='"forwarded", "redirect", "direct" (a DirectResponse '
                         'filter or a VirtualService directResponse replies), "404", "500", '
                         '"503" or "undecided"')
    hidden: bool | None = Field(
        default=None, description="The rule that takes the request belongs to a route in "
        "a namespace the caller may not read: its name, match and backends are left out")
    entry_hidden: bool | None = Field(
        default=None, description="The entry Gateway is in a namespace the caller may not "
        "read: its name, listener and port are left out")
    undecided: str | None = Field(
        default=None, description="Why netsight cannot decide which rule takes the request "
        "here (outcome 'undecided')")
    delegated_from: str | None = Field(
        default=None, description="The VirtualService rule ('namespace/name http[i]') that "
        "delegates to the one that takes the request (its match and settings merged in)")


class Shadowed(Model):
    route: str
    kind: str
    rule: int
    shadowed_by: str
    because: str = Field(description="The precedence criterion that decided")


@dataclass
class Answer:
    """The request through one graph (the live one, or with a proposal applied)."""

    layers: list[Layer] = field(default_factory=list)
    conflicts: list[Shadowed] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # (winner, loser, deciding criterion, backends the loser would have reached)
    losers: list[tuple[str, str, str, set[str]]] = field(default_factory=list)
    reached: dict[tuple[str, int | None, str | None], BackendShare] = \
        field(default_factory=dict)
    matches_expected: bool | None = None
    expected_detail: str | None = None
    incomplete: list[str] = field(default_factory=list)


def verdict(answer: Answer, asked: Asked) -> None:
    """The backends reached, whether the expected one is among them, and what hidden
    layers leave incomplete."""
    findings = answer.findings
    expected = asked.expected_backend
    for layer in answer.layers:
        if layer.outcome in ("forwarded", "503"):
            for b in layer.backends:
                if b.resolved and not b.mirror and b.weight:
                    answer.reached.setdefault((b.backend, b.port, b.subset), b)
    # Hidden layers that may reach backends (a 404 or a redirect reaches none).
    hidden = [layer for layer in answer.layers if layer.hidden
              and layer.outcome in ("forwarded", "503", "undecided")]
    if any(layer.entry_hidden for layer in hidden):
        answer.incomplete.append(f"the request goes through {HIDDEN_GATEWAY}, where "
                                 f"{HIDDEN_ROUTE} takes it: which backends it reaches "
                                 "there is not shown")
    if any(not layer.entry_hidden for layer in hidden):
        answer.incomplete.append(f"{HIDDEN_ROUTE} takes the request on some entry: which "
                                 "backends it reaches there is not shown")
    if expected is not None:
        answer.matches_expected = any(b.backend == expected for b in answer.reached.values())
        undecided = [layer.undecided for layer in answer.layers if layer.undecided]
        if not answer.matches_expected and hidden:
            answer.matches_expected = None  # a hidden route's backends are not shown
            answer.expected_detail = f"{HIDDEN_ROUTE} takes the request on some entry; " \
                "whether it reaches the expected backend is not shown"
        elif not answer.matches_expected and undecided:
            answer.matches_expected = None
            answer.expected_detail = f"which rule takes the request is undecided: " \
                f"{undecided[0]}"
        elif not answer.matches_expected:
            answer.expected_detail = _explain_miss(expected, answer.layers, answer.losers)
            findings.append(codes.REQUEST_MISSES_EXPECTED_BACKEND.finding(
                None, f"{asked.described} does not reach {expected}",
                detail=answer.expected_detail,
                suggestion="Make the intended rule more specific (exact path, longer prefix, "
                "method, headers) or remove the rule that takes precedence."))
    findings.sort(key=lambda f: (f.severity.rank, str(f.resource or ""), f.code, f.summary))


def _explain_miss(expected: str, layers: list[Layer],
                  losers: list[tuple[str, str, str, set[str]]]) -> str:
    for winner, loser, because, backends in losers:
        if expected in backends:
            return f"{loser} routes to {expected} but {winner} takes precedence ({because})"
    taken = [f"{layer.route} rule {layer.rule} ({layer.outcome})" if layer.rule is not None
             else f"{layer.route}, no rule matching ({layer.outcome})" for layer in layers
             if layer.route]
    if taken:
        return f"the request is taken by {', '.join(taken)}; no matching rule routes to " \
            f"{expected}"
    return f"no rule matches the request, so it reaches no backend, {expected} included"
