"""The probe tools: check_connectivity and probe_http, and check_dns_resolution with its
active half: the static tool, and a DNS probe from the asking pod (:func:`observe_dns`).

They live in the server, not the catalog, because they do I/O: each asks the API server for
a pod. Their pure halves (what to probe, the static verdict, why the two differ) are
``analyzers.probing``. A probe is refused unless the caller could create that pod
themselves (a SubjectAccessReview of ``create pods`` in its namespace, or ``patch
pods/ephemeralcontainers`` in ephemeral mode): netsight's own right to create pods must not
become its callers'. Where callers are not authenticated (loopback, stdio) the caller is
whoever runs netsight, with its kubeconfig.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
from collections.abc import Awaitable
from typing import Any, TypeVar

from starlette.requests import Request

from netsight.analyzers.core.contracts import ErrorCode, ToolFailure
from netsight.analyzers.core.declarations import AnalyzerMetadata, Tool, Toolset
from netsight.analyzers.policy.engine import READS as POLICY_READS
from netsight.analyzers.probing import connectivity, http_requests, name_resolution
from netsight.analyzers.probing.connectivity import Observed
from netsight.analyzers.probing.http_requests import HttpObserved
from netsight.analyzers.tools import check_dns_resolution, diff_routes
from netsight.graph.model.kinds import Kind
from netsight.graph.store.live import GraphView
from netsight.probes.message import DnsProbe, DnsResult, HttpProbe, ProbeResult, TcpProbe
from netsight.probes.runner import (
    LimitReached,
    Mode,
    NotRun,
    Observation,
    ProbeError,
    ProbeRunner,
    SourceGone,
    TimedOut,
)
from netsight.server.auth import grant_of

# The request of the tool call running now (mcp_tools.run_tool sets it): whose rights a
# probe is checked against.
CALL_REQUEST: contextvars.ContextVar[Request | None] = contextvars.ContextVar(
    "netsight_call_request", default=None)
LOCAL_CALLER = "local"  # the rate-limit key of unauthenticated callers

CONNECTIVITY = AnalyzerMetadata(
    name=connectivity.NAME,
    description="Connect from a probe pod as the source: outcome beside "
    "find_blocking_policies' verdict; why they differ.",
    reads=POLICY_READS | {Kind.SERVICE}, codes=())
HTTP = AnalyzerMetadata(
    name=http_requests.NAME,
    description="HTTP from a probe pod: status, headers, TLS, latency beside "
    "diff_routes' backends.",
    reads=diff_routes.METADATA.reads | {Kind.POD}, codes=())

R = TypeVar("R")


def probe_tools(runner: ProbeRunner | None) -> dict[str, Tool[Any, Any]]:
    """The probe tools, running their probes with ``runner``; without one (the CLI, which
    sends them to a server) they are declarations only. With a runner, check_dns_resolution
    too, in place of the static one: the same name, arguments and answer, with ``observed``
    and ``agree`` set when ``from`` names a pod."""
    def running(tool: str) -> ProbeRunner:
        if runner is None:
            raise ToolFailure(ErrorCode.INVALID_INPUT, f"{tool} runs a probe pod: call it on "
                              "a netsight serve started with --probes (netsight call "
                              f"{tool} --server URL)", tool=tool)
        return runner

    async def check_connectivity(view: GraphView, args: connectivity.Args
                                 ) -> connectivity.Result:
        runner = running(connectivity.NAME)
        chosen = connectivity.plan(view, args)
        predicted = connectivity.predict(view, args, chosen)
        spec = TcpProbe(host=chosen.host, port=chosen.port,
                        timeout_seconds=_within(runner, 3.0))
        seen = await probed(runner, connectivity.NAME, spec, chosen.source_pod)
        return connectivity.answer(view, args, chosen, predicted, observed(seen))

    async def probe_http(view: GraphView, args: http_requests.Args) -> http_requests.Result:
        runner = running(http_requests.NAME)
        request = http_requests.plan(view, args)
        predicted = http_requests.predict(view, args, request)
        spec = HttpProbe(url=request.url, method=args.method, headers=args.headers,
                         timeout_seconds=_within(runner, 5.0))
        seen = await probed(runner, http_requests.NAME, spec, request.source)
        return http_requests.answer(view, args, request, http_observed(seen), predicted)

    async def check_dns(view: GraphView, args: check_dns_resolution.Args
                        ) -> check_dns_resolution.Result:
        result = check_dns_resolution.analyze(view, args)
        if runner is None or args.from_ is None:
            return result  # no pod to ask from: the static answer alone
        pod = check_dns_resolution.find_pod(view, args.from_)
        assert pod.namespace is not None
        spec = DnsProbe(name=args.name, record_type="A",  # name_resolution expects A
                        timeout_seconds=_within(runner, 3.0))
        try:
            seen = await probed(runner, check_dns_resolution.NAME, spec,
                                (pod.namespace, pod.name))
        except ToolFailure as exc:
            # Probes on must not take the static answer from a caller who may not probe
            # (or whose probe failed): it stands, saying why nothing was observed.
            why = f"observed: no DNS probe from {pod.namespace}/{pod.name} ({exc.code.value}: " \
                f"{exc.message})"
            return result.model_copy(update={"not_evaluated": [*result.not_evaluated, why]})
        return dns_observed(result, seen)

    tools: dict[str, Tool[Any, Any]] = {
        connectivity.NAME: Tool(CONNECTIVITY, connectivity.Args, connectivity.Result,
                                check_connectivity, toolset=Toolset.PROBES, read_only=False,
                                open_world=True),
        http_requests.NAME: Tool(HTTP, http_requests.Args, http_requests.Result, probe_http,
                                 toolset=Toolset.PROBES, read_only=False, open_world=True),
    }
    if runner is not None:
        static = check_dns_resolution.TOOL
        # Where the static tool is offered (core), it probes: no new name in the tool list.
        tools[static.name] = Tool(static.metadata, static.args, static.result, check_dns,
                                  toolset=static.toolset, read_only=False, open_world=True)
    return tools


async def while_connected(request: Request | None, work: Awaitable[R]) -> R:
    """``work``, cancelled if the caller's HTTP connection closes first.

    A probe holds a pod while it waits: a client that went away (an agent closed, a
    network gone) must not keep it. The SDK cancels a call whose session is deleted, or
    that the client cancels, but not one whose single-exchange request's connection drops
    while it answers with JSON: netsight listens for ``http.disconnect`` itself."""
    if request is None:
        return await work
    call = asyncio.ensure_future(work)
    gone = asyncio.ensure_future(_disconnected(request))
    try:
        await asyncio.wait({call, gone}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        gone.cancel()
        if not call.done():
            call.cancel()  # also when this task was cancelled: the call must not outlive it
    if call.cancelled() or not call.done():
        with contextlib.suppress(asyncio.CancelledError):
            await call
        raise CallerGone
    return call.result()


class CallerGone(Exception):
    """The caller's connection closed while its probe ran; nobody reads the answer."""


async def _disconnected(request: Request) -> None:
    while (await request.receive())["type"] != "http.disconnect":
        pass


def _within(runner: ProbeRunner, wanted: float) -> float:
    """The probe's own timeout: ``wanted``, inside what the runner gives the whole pod."""
    return max(0.5, min(wanted, runner.settings.timeout / 2))


async def probed(runner: ProbeRunner, tool: str, spec: TcpProbe | HttpProbe | DnsProbe,
                 source: tuple[str, str] | None) -> Observation:
    """``spec`` run as ``source`` (or from the probe namespace), once the caller is known to
    be allowed to create that pod; probe failures as the error contract names them."""
    namespace = source[0] if source is not None else runner.settings.namespace
    caller = await authorized(runner, namespace, tool)
    return await _mapped(tool, runner.run(spec, source=source, caller=caller))


async def authorized(runner: ProbeRunner, namespace: str, tool: str) -> str:
    """The caller's name for the rate limit, once a SubjectAccessReview said they may do
    what the probe does in ``namespace``."""
    grant = grant_of(request) if (request := CALL_REQUEST.get()) is not None else None
    if grant is None:
        return LOCAL_CALLER
    ephemeral = runner.settings.mode is Mode.EPHEMERAL and namespace != \
        runner.settings.namespace
    action = ("patch", "pods", "ephemeralcontainers", namespace) if ephemeral else \
        ("create", "pods", "", namespace)
    if not await grant.guard.may(grant.caller, action):
        what = "patch pods/ephemeralcontainers" if ephemeral else "create pods"
        raise ToolFailure(ErrorCode.FORBIDDEN, f"{grant.caller.username} may not {what} in "
                          f"namespace {namespace}; netsight runs a probe only where its "
                          "caller could have run it", tool=tool)
    return grant.caller.username


async def _mapped(tool: str, running: Awaitable[R]) -> R:
    try:
        return await running
    except LimitReached as exc:
        raise ToolFailure(ErrorCode.PROBE_LIMIT_REACHED, str(exc), tool=tool) from None
    except TimedOut as exc:
        raise ToolFailure(ErrorCode.PROBE_TIMEOUT, str(exc), tool=tool) from None
    except SourceGone as exc:
        raise ToolFailure(ErrorCode.NOT_FOUND, f"source: {exc}", tool=tool) from None
    except (NotRun, ProbeError) as exc:
        raise ToolFailure(ErrorCode.INTERNAL_ERROR, str(exc), tool=tool) from None


def observed(seen: Observation) -> Observed:
    result = seen.result
    return Observed(outcome=result.outcome.value, latency_ms=result.latency_ms,
                    peer=result.peer, error=result.error, probe=seen.pod,
                    identity=seen.identity, notes=seen.notes or None)


def http_observed(seen: Observation) -> HttpObserved:
    result = seen.result
    http = result.http
    tls = http.tls.model_dump(mode="json", by_alias=True, exclude_none=True) \
        if http is not None and http.tls is not None else None
    return HttpObserved(**observed(seen).model_dump(), status=http.status if http else None,
                        headers=dict(http.headers) if http else None, tls=tls)


async def observe_dns(runner: ProbeRunner, name: str, source: tuple[str, str] | None, *,
                      record_type: str = "A", tool: str = "check_dns_resolution"
                      ) -> tuple[ProbeResult, DnsResult | None]:
    """The active half of check_dns_resolution: ``name`` resolved by a probe pod as
    ``source`` (its namespace, search path and ndots), the caller's right checked as for
    every probe; the probe's result and its DNS answer (None when it did not run)."""
    spec = DnsProbe(name=name, record_type=record_type,  # type: ignore[arg-type]
                    timeout_seconds=_within(runner, 3.0))
    seen = await probed(runner, tool, spec, source)
    return seen.result, seen.result.dns


def dns_agree(expected: set[str] | None, result: ProbeResult) -> bool | None:
    """Whether the observed answers are the static expectation: the same addresses (or
    NXDOMAIN, for a name expected not to exist); None when the static side cannot say or
    the probe could not run."""
    if result.outcome.value == "error":
        return None
    dns = result.dns or DnsResult()
    return name_resolution.agree(expected, dns.rcode, dns.answers)


def dns_observed(result: check_dns_resolution.Result, seen: Observation
                 ) -> check_dns_resolution.Result:
    """The static answer with what the probe was answered, whether the two agree, and the
    likeliest reasons when they do not."""
    probe = seen.result
    dns = probe.dns or DnsResult()
    agree = dns_agree(name_resolution.expected(result), probe)
    observed: dict[str, Any] = {
        "outcome": probe.outcome.value, "rcode": dns.rcode, "answers": dns.answers,
        "canonicalName": dns.canonical_name, "latencyMs": probe.latency_ms,
        "error": probe.error, "probe": seen.pod, "identity": seen.identity}
    if agree is False:
        observed["explanations"] = [
            e.model_dump(mode="json", by_alias=True)
            for e in name_resolution.explain(result, dns.rcode, dns.answers, probe.error)]
    observed = {k: v for k, v in observed.items() if v is not None}
    return result.model_copy(update={"observed": observed, "agree": agree})

