"""check_connectivity's pure half: the question, where the probe runs and what it dials, the
static verdict beside the observed one, and the answer.

The static verdict is find_blocking_policies' own (the same engine, called, not copied), for
the one source pod whose identity the probe carries. The server runs the probe in between
(netsight/server/probe_tools.py), since that is I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Literal, Self

from pydantic import AfterValidator, Field
from pydantic.json_schema import SkipJsonSchema

from netsight.analyzers.core.arguments import Port, ToolArgs
from netsight.analyzers.core.base import metadata
from netsight.analyzers.core.contracts import (
    ErrorCode,
    Model,
    OmitNone,
    ResourceRef,
    ToolFailure,
    ToolResult,
)
from netsight.analyzers.core.object_names import ObjectName
from netsight.analyzers.core.quoting import quoted
from netsight.analyzers.core.signatures import ProbeFailure, classify_probe, probe_signature
from netsight.analyzers.policy.endpoints import Endpoint, Resolved, port_targets, resolve
from netsight.analyzers.probing.explanations import Explanation, Flow, explain
from netsight.analyzers.tools import find_blocking_policies as blocking
from netsight.graph.model.records import PodRecord
from netsight.graph.store.live import GraphView

NAME = "check_connectivity"
# What a probe can tell apart: a TCP handshake. UDP has none (silence is both "dropped" and
# "nobody answered"), so a probe could not decide it.
PROBED_PROTOCOLS = frozenset({"TCP"})
ANSWERED = frozenset({"connected", "responded", "resolved"})


def _tcp(value: str) -> str:
    upper = value.upper()
    if upper not in PROBED_PROTOCOLS:
        raise ValueError(f"{quoted(value)}: probes test TCP only (a UDP or SCTP probe "
                         "cannot tell dropped from unanswered); ask find_blocking_policies "
                         "for the static verdict")
    return upper


class ProbeArgs(ToolArgs):
    """A probe's arguments: no ``detail`` (a probe's answer has one level)."""

    detail: SkipJsonSchema[bool] = False


class Args(ProbeArgs):
    source: ObjectName = Field(description="Client pod or workload")
    destination: ObjectName = Field(description="As in find_blocking_policies")
    port: Port = Field(description="Port")
    protocol: Annotated[str, AfterValidator(_tcp)] = Field(default="TCP", description="TCP")


class Observed(OmitNone):
    outcome: str = Field(description="connected, refused, timeout, unreachable, dns_failed, "
                         "tls_failed, reset or error")
    latency_ms: float | None = None
    peer: str | None = Field(default=None, description="The address connected to")
    error: str | None = None
    probe: str = Field(description="The probe pod ('namespace/name'), deleted since")
    identity: str | None = Field(default=None, description="The pod whose identity it had")
    notes: list[str] | None = None
    # A failed probe, as the knowledge base files it (core/signatures.py): its category
    # and signature, for explain_finding and for matching failures across clusters.
    failure: str | None = None
    signature: str | None = None

    def signed(self, failure: ProbeFailure) -> Self:
        """This answer with its failure's category and signature, if it failed."""
        category, signature = classify_probe(failure), probe_signature(failure)
        if category is None or signature is None:
            return self
        return self.model_copy(update={"failure": category.value,
                                       "signature": signature.hash})


class Predicted(Model):
    allowed: bool | None = Field(description="null: the graph cannot decide")
    blocking_policies: list[ResourceRef]
    not_evaluated: list[str]


class Result(ToolResult):
    source: str
    destination: str
    port: int
    protocol: str
    observed: Observed
    predicted: Predicted
    agree: bool | None = Field(description="null: the static verdict is undecided")
    explanations: list[Explanation] = Field(description="When they disagree: likeliest "
                                            "first, each with its evidence")


@dataclass(frozen=True, slots=True)
class Plan:
    """Where the probe runs (``source``, a pod) and what it dials (``host``:``port``)."""

    source: Endpoint
    destination: Resolved
    host: str
    port: int
    targets: list[tuple[Endpoint, int]] = field(default_factory=list)

    @property
    def source_pod(self) -> tuple[str, str]:
        namespace, _, name = self.source.name.partition("/")
        return namespace, name


def plan(view: GraphView, args: Args) -> Plan:
    """The probe for ``args``; NOT_FOUND / INVALID_INPUT say what to send instead."""
    sources = resolve(view, args.source, argument="source", tool=NAME)
    pods = [e for e in sources.endpoints if not e.template and e.key is not None]
    if sources.endpoints[0].external:
        raise ToolFailure(ErrorCode.INVALID_INPUT, "source: a probe runs in the cluster; give "
                          "the client pod or workload, not an address", tool=NAME)
    if not pods:
        raise ToolFailure(ErrorCode.NOT_FOUND, f"source: {args.source} has no running pod to "
                          "take the identity of", tool=NAME)
    source = min(pods, key=lambda e: (not _ready(view, e), e.name))
    destination = resolve(view, args.destination, argument="destination", tool=NAME)
    port = blocking.port_number(destination, args.port, args.protocol, tool=NAME)
    targets, _ = port_targets(destination, port, args.protocol, tool=NAME)
    service = destination.service
    if service is not None:
        host = f"{service.name}.{service.namespace}.svc"
    else:
        first = destination.endpoints[0]
        address = next((e.ips[0] for e in destination.endpoints if e.ips), None)
        if address is None:
            raise ToolFailure(ErrorCode.NOT_FOUND, f"destination: {first.name} has no address "
                              "yet (no running pod); nothing to connect to", tool=NAME)
        host = address
    return Plan(source, destination, host, port, targets)


def _ready(view: GraphView, endpoint: Endpoint) -> bool:
    record = view.get(endpoint.key) if endpoint.key else None
    return isinstance(record, PodRecord) and record.ready is True


def predict(view: GraphView, args: Args, chosen: Plan) -> blocking.Result:
    """find_blocking_policies for the pod the probe stands for."""
    return blocking.analyze(view, blocking.Args(
        source=ObjectName.parse(chosen.source.name), destination=args.destination,
        port=chosen.port, protocol=args.protocol))


def answer(view: GraphView, args: Args, chosen: Plan, predicted: blocking.Result,
           observed: Observed) -> Result:
    allowed = predicted.allowed
    connected = observed.outcome in ANSWERED
    agree = None if allowed is None or observed.outcome == "error" else connected == allowed
    ready = sum(_ready(view, e) for e, _ in chosen.targets)
    observed = observed.signed(ProbeFailure(
        "tcp", observed.outcome,
        target_kind="Service" if chosen.destination.service is not None else
        "Pod" if chosen.targets else None,
        port_named=isinstance(args.port, str),
        policy_denied=None if allowed is None else not allowed,
        ready_endpoints=ready if chosen.destination.service is not None else None))
    explanations: list[Explanation] = []
    if agree is False:
        flow = Flow(chosen.source, chosen.destination, chosen.targets, chosen.port,
                    predicted.blocking_policies)
        explanations = explain(view, flow, allowed=bool(allowed), outcome=observed.outcome)
    return Result(
        metadata=metadata(view, chosen.source.namespace),
        source=chosen.source.name, destination=str(args.destination), port=chosen.port,
        protocol=args.protocol, observed=observed,
        predicted=Predicted(allowed=allowed, blocking_policies=predicted.blocking_policies,
                            not_evaluated=predicted.not_evaluated),
        agree=agree, explanations=explanations)


Outcome = Literal["connected", "refused", "timeout", "unreachable", "dns_failed",
                  "tls_failed", "reset", "error"]
