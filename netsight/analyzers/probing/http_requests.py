"""probe_http's pure half: the request to send, from where, and the route and backends the
graph predicts for it (diff_routes' own resolution, called), to set beside the response."""

from __future__ import annotations

import urllib.parse
from dataclasses import dataclass
from typing import Literal

from pydantic import Field, model_validator

from netsight.analyzers.core.arguments import PortNumber
from netsight.analyzers.core.base import metadata
from netsight.analyzers.core.contracts import ErrorCode, OmitNone, ToolFailure, ToolResult
from netsight.analyzers.core.object_names import ObjectName
from netsight.analyzers.core.signatures import ProbeFailure
from netsight.analyzers.policy.endpoints import resolve
from netsight.analyzers.probing.connectivity import Observed, ProbeArgs
from netsight.analyzers.tools import diff_routes
from netsight.graph.model.kinds import Kind, make_key
from netsight.graph.model.records import ServiceRecord
from netsight.graph.store.live import GraphView

NAME = "probe_http"
Method = Literal["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]


class Args(ProbeArgs):
    url: str | None = Field(default=None, max_length=2048, pattern=r"^https?://\S+$",
                            description="Or service (+port, path)")
    service: ObjectName | None = Field(default=None, description="'namespace/name'")
    port: PortNumber | None = Field(default=None, description="Service port")
    path: str = Field(default="/", max_length=2048, pattern=r"^/\S*$", description="Path")
    from_: ObjectName | None = Field(default=None, alias="from", description="Client pod or "
                                     "workload")
    method: Method = Field(default="GET", description="Method")
    headers: dict[str, str] = Field(default_factory=dict, max_length=32, description="Headers")

    @model_validator(mode="after")
    def _one_target(self) -> Args:
        if (self.url is None) == (self.service is None):
            raise ValueError("give url, or service (with path), not both")
        if self.url is not None and self.port is not None:
            raise ValueError("port: only with service; put the port in the url")
        return self


class HttpObserved(Observed):
    status: int | None = None
    headers: dict[str, str] | None = None
    tls: dict[str, object] | None = Field(default=None, description="The TLS handshake: "
                                          "version, verified, error")


class PredictedRoute(OmitNone):
    backends: list[str] = Field(description="'namespace/service:port' the graph sends the "
                                "request to")
    layers: list[str] = Field(description="Where the request is routed: 'entry -> route'")
    note: str | None = None


class Result(ToolResult):
    request: str
    observed: HttpObserved
    predicted: PredictedRoute


@dataclass(frozen=True, slots=True)
class Request:
    url: str
    host: str  # the Host header, port included where not the scheme's
    path: str
    source: tuple[str, str] | None  # (namespace, pod) whose identity the probe takes


def plan(view: GraphView, args: Args) -> Request:
    if args.url is not None:
        parts = urllib.parse.urlsplit(args.url)
        if not parts.hostname:
            raise ToolFailure(ErrorCode.INVALID_INPUT, "url: has no host, e.g. "
                              "'http://cart.shop.svc:8080/health'", tool=NAME)
        url, host = args.url, parts.netloc.rpartition("@")[2]
        path = parts.path or "/"
    else:
        assert args.service is not None
        service = view.get(make_key(Kind.SERVICE, args.service.namespace or "",
                                    args.service.name))
        if not isinstance(service, ServiceRecord):
            raise ToolFailure(ErrorCode.NOT_FOUND, f"service: Service {args.service} not "
                              "found", tool=NAME)
        tcp = [p.port for p in service.ports if p.protocol == "TCP"]
        port = args.port if args.port is not None else (tcp[0] if tcp else None)
        if port is None or port not in tcp:
            raise ToolFailure(ErrorCode.NOT_FOUND, f"port: Service {service.ref} has no TCP "
                              f"port {port}; its TCP ports: "
                              f"{', '.join(map(str, tcp)) or 'none'}", tool=NAME)
        host = f"{service.name}.{service.namespace}.svc" + ("" if port == 80 else f":{port}")
        url, path = f"http://{host}{args.path}", args.path
    source = None
    if args.from_ is not None:
        found = resolve(view, args.from_, argument="from", tool=NAME)
        pods = sorted(e.name for e in found.endpoints if not e.template and e.key)
        if not pods:
            raise ToolFailure(ErrorCode.NOT_FOUND, f"from: {args.from_} has no running pod "
                              "to take the identity of", tool=NAME)
        namespace, _, name = pods[0].partition("/")
        source = (namespace, name)
    return Request(url, host, path, source)


def predict(view: GraphView, args: Args, request: Request) -> PredictedRoute:
    """The route and backends diff_routes resolves for the request; for a Service's own
    name, which no route may take, the Service itself."""
    try:
        routed = diff_routes.analyze(view, diff_routes.Args(
            host=request.host, path=request.path, method=args.method,
            headers=args.headers))
    except ToolFailure as failure:
        if failure.code is not ErrorCode.NOT_FOUND and failure.code is not \
                ErrorCode.INVALID_INPUT:
            raise
        return PredictedRoute(backends=[], layers=[], note=f"no route takes this request "
                              f"({failure.message}); it goes to whatever the host resolves to")
    layers = [f"{layer.entry} -> {layer.route or layer.outcome}" for layer in routed.layers]
    backends = [f"{b.backend}:{b.port}" if b.port else b.backend for b in routed.backends]
    service = _service_of(view, request.host)
    if not layers and service is not None:
        return PredictedRoute(backends=[f"{service.ref}:{_port_of(request)}"], layers=[],
                              note="no route takes this host: the request goes straight to "
                              "the Service")
    return PredictedRoute(backends=backends, layers=layers,
                          note=None if layers else "no route takes this host")


def _service_of(view: GraphView, host: str) -> ServiceRecord | None:
    """The Service a cluster DNS name ('name.namespace.svc[.cluster.local][:port]') names."""
    labels = host.rpartition(":")[0].split(".") if ":" in host else host.split(".")
    if len(labels) < 3 or labels[2] != "svc":
        return None
    record = view.get(make_key(Kind.SERVICE, labels[1], labels[0]))
    return record if isinstance(record, ServiceRecord) else None


def _port_of(request: Request) -> int:
    parts = urllib.parse.urlsplit(request.url)
    return parts.port or (443 if parts.scheme == "https" else 80)


def answer(view: GraphView, args: Args, request: Request, observed: HttpObserved,
           predicted: PredictedRoute) -> Result:
    observed = observed.signed(ProbeFailure(
        "http", observed.outcome, http_status=observed.status,
        target_kind="Service" if args.service is not None else None,
        port_named=False))
    return Result(metadata=metadata(view), request=f"{args.method} {request.url}",
                  observed=observed, predicted=predicted)
