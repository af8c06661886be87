"""check_dns_resolution: how a name resolves from a pod, decided on the graph (the static
part); the probe runner adds what a probe pod observes as ``observed`` and ``agree``."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, Field, SerializerFunctionWrapHandler, model_serializer

from netsight.analyzers.checks import cluster_dns_config
from netsight.analyzers.core.arguments import ToolArgs
from netsight.analyzers.core.base import did_you_mean, metadata
from netsight.analyzers.core.contracts import (
    ErrorCode,
    Finding,
    Model,
    ToolFailure,
    ToolResult,
)
from netsight.analyzers.core.declarations import AnalyzerMetadata, Tool, Toolset
from netsight.analyzers.core.lookup import locate
from netsight.analyzers.core.object_names import ObjectName
from netsight.analyzers.core.quoting import as_sent, quoted
from netsight.analyzers.services import cluster_dns, dns
from netsight.graph.model.kinds import Kind, make_key
from netsight.graph.model.records import PodRecord
from netsight.graph.store.live import GraphView

NAME = "check_dns_resolution"

METADATA = AnalyzerMetadata(
    name=NAME,
    description="How a name resolves from a pod: the search-path queries and what cluster "
    "DNS answers each. Use it when a name does not resolve.",
    reads=frozenset({Kind.POD, Kind.SERVICE, Kind.ENDPOINT_SLICE, Kind.ENDPOINTS,
                     Kind.NAMESPACE, cluster_dns.CONFIG_MAP_KIND}),
    codes=(*cluster_dns_config.NAME_CODES, *cluster_dns_config.CONFIG_CODES),
)


def _dns_text(value: str) -> str:
    # Longer text, or text with spaces or control characters, is no name a resolver sends;
    # a name of that shape is still answered (form "invalid") with what is wrong with it.
    if len(value) > 255 or not value.isascii() or not value.isprintable() or " " in value:
        raise ValueError(f"{as_sent(value)} is not a DNS name: give a name such as 'cart', "
                         "'cart.shop', 'cart.shop.svc.cluster.local' or 'api.example.com'")
    return value


class Args(ToolArgs):
    name: Annotated[str, AfterValidator(_dns_text)] = Field(
        description="As the client looks it up, e.g. 'cart.shop'")
    from_: ObjectName | None = Field(
        default=None, alias="from",
        description="The asking pod, 'namespace/name'")


class Resolver(Model):
    policy: str
    nameservers: list[str]
    searches: list[str]
    ndots: int


class Query(Model):
    name: str
    outcome: str = Field(description="answer, nxdomain, nodata, refused, servfail, "
                         "forwarded or undecided")
    records: list[str]
    by: str
    note: str | None = None


class ClusterDns(Model):
    source: str
    domain: str
    domain_assumed: bool


class Result(ToolResult):
    name: str
    form: str
    outcome: str
    answered_by: str | None
    answer: list[str]
    resolver: Resolver
    queries: list[Query]
    cluster_dns: ClusterDns
    findings: list[Finding]
    not_evaluated: list[str]
    # What a probe pod resolved, and whether it agrees with the above: set by the probe
    # runner when a probe ran, absent otherwise.
    observed: dict[str, Any] | None = None
    agree: bool | None = None

    # Unannotated on purpose: pydantic then keeps the model's own JSON schema for output.
    @model_serializer(mode="wrap")
    def _omit_probe(self, handler: SerializerFunctionWrapHandler):  # type: ignore[no-untyped-def]
        data = handler(self)
        for key in ("observed", "agree"):
            if data.get(key) is None:
                data.pop(key, None)
        return data


def find_pod(view: GraphView, name: ObjectName) -> PodRecord:
    named = locate(view, name, ("Pod",), argument="from", tool=NAME)
    record = view.get(make_key(Kind.POD, named.namespace, named.name))
    if not isinstance(record, PodRecord):
        known = {r.name for r in view.for_each(Kind.POD, named.namespace)}
        where = f" in namespace {named.namespace}" if known else \
            f"; namespace {named.namespace} has no pods"
        raise ToolFailure(ErrorCode.NOT_FOUND, f"from: pod {quoted(str(name))} not found"
                          f"{where}{did_you_mean(named.name, known)}", tool=NAME)
    return record


def analyze(view: GraphView, args: Args) -> Result:
    pod = None if args.from_ is None else find_pod(view, args.from_)
    config = cluster_dns.read(view)
    resolution = dns.resolve(view, config, args.name, pod)
    resolver = resolution.resolver
    searches = list(resolver.searches)
    if resolver.namespace_unknown:
        searches.insert(0, f"<namespace>.svc.{config.domain}")
    if resolver.node_searches:
        searches.insert(resolver.node_at + int(resolver.namespace_unknown),
                        "<the node's search domains>")
    return Result(
        metadata=metadata(view, pod.namespace if pod is not None else None),
        name=args.name,
        form=resolution.form,
        outcome=resolution.outcome,
        answered_by=resolution.answered_by,
        answer=list(resolution.records),
        resolver=Resolver(policy=resolver.policy, nameservers=resolver.nameservers,
                          searches=searches, ndots=resolver.ndots),
        queries=[Query(name=q.name, outcome=q.outcome, records=list(q.records), by=q.by,
                       note=q.note) for q in resolution.queries],
        cluster_dns=ClusterDns(source=config.source, domain=config.domain,
                               domain_assumed=config.domain_assumed),
        findings=sorted(resolution.findings, key=lambda f: (f.severity.rank, f.code)),
        not_evaluated=resolution.not_evaluated,
    )


TOOL = Tool(METADATA, Args, Result, analyze, toolset=Toolset.CORE)
