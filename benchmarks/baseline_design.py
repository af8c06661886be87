"""The per-call design, measured beside netsight: every tool call lists what it needs from
the API server, then evaluates (``../shared/seeds/architecture-decisions.md``: a dynamic
client for every read, no informers, a session cache of 30 s).

Made as fast as that design honestly can be:

- **discovery once**, at start-up (the design scans discovery once, then watches the CRDs),
  never inside a timed call;
- **only the kinds the tool reads** (its ``AnalyzerMetadata.reads``) that the cluster
  serves, listed **concurrently**, each in one request (no paging round trips), as raw JSON
  through kubernetes-asyncio's ``ApiClient`` (its configuration and auth) decoded by
  orjson (no generated models);
- **only the namespaces the question names**, for the tools whose answer cannot depend on
  another namespace's objects (``SCOPED``): a pair question reads the two namespaces, a
  Service's diagnosis its own, plus the namespaces of mesh-wide configuration;
- **the session cache**: a list is kept 30 s, keyed by kind and namespace, as its parsed
  objects: a warm call only evaluates.

Evaluation is netsight's own: the listed objects go through netsight's graph builder into
a fresh graph (exactly as its informers apply list items), and the same analyzer answers on
it. That keeps the comparison about the design (list per call, build per call) and not
about a second, weaker analyzer; it is also the only way to give the same answers, which
``agrees`` checks per tool against netsight's live graph.
"""

from __future__ import annotations

import asyncio
import inspect
import statistics
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from benchmarks.context import BenchContext
from netsight.analyzers.core.calling import AnyTool, answer, named_namespaces, parse_args, to_json
from netsight.analyzers.tools import TOOLS
from netsight.graph.ingest.api_responses import check_response
from netsight.graph.ingest.client import KubeTransport
from netsight.graph.ingest.discovery import NEVER_WATCHED, WatchedKind, discover
from netsight.graph.store.live import EventType, GraphStore, Source
from netsight.graph.store.sync_status import SyncState, reporting_status

CACHE_TTL_S = 30.0  # the design's session cache
# Namespaces whose objects configure the whole mesh or cluster (Istio's root namespace,
# kube-system's DNS): a scoped call lists them too, as the design would have to.
CONFIG_NAMESPACES = ("istio-system", "kube-system")
# Tools whose answer reads only the namespaces their arguments name (and the cluster-scoped
# kinds): a reach question between two pods, a Service's diagnosis, one namespace's
# Services. The others (who_can_reach: sources anywhere; routes: backends anywhere) list
# the whole cluster.
SCOPED = frozenset({"find_blocking_policies", "diagnose_service", "list_services"})
# What one figure may take at most (at least one call is made): a cold call at 100k pods
# lists ~500 MB. A quick run (CI's) takes less.
BUDGET_S = 10.0
QUICK_BUDGET_S = 2.0


@dataclass
class Session:
    """One agent session of the per-call design: its API connection and its list cache."""

    transport: KubeTransport
    served: Sequence[WatchedKind]
    ttl: float = CACHE_TTL_S
    cache: dict[tuple[str, str | None], tuple[float, list[dict[str, Any]]]] = field(
        default_factory=dict)
    listed_bytes: int = 0  # bytes read from the API server by the last call

    @classmethod
    async def open(cls, kubeconfig: str) -> Session:
        transport = await KubeTransport.connect(kubeconfig)
        return cls(transport, await discover(transport))

    async def close(self) -> None:
        await self.transport.close()

    def forget(self) -> None:
        self.cache.clear()

    def expires_within(self, seconds: float) -> bool:
        soon = time.monotonic() + seconds
        return any(expires < soon for expires, _ in self.cache.values())

    async def call(self, name: str, raw_args: Mapping[str, Any]) -> dict[str, Any]:
        """One tool call: list what it needs (or take it from the cache), build, answer."""
        tool = TOOLS[name]
        scope = scope_of(tool, raw_args)
        wanted = [(kind, namespace) for kind in self.served if kind.kind_id in tool.metadata.reads
                  for namespace in (scope if scope is not None and kind.namespaced
                                    and kind.only is None else (None,))]
        now = time.monotonic()
        missing = [(kind, ns) for kind, ns in wanted
                   if (hit := self.cache.get((kind.status_key, ns))) is None or hit[0] < now]
        self.listed_bytes = 0
        lists = await asyncio.gather(*(self._list(kind, ns) for kind, ns in missing))
        expires = time.monotonic() + self.ttl
        for (kind, ns), items in zip(missing, lists, strict=True):
            self.cache[kind.status_key, ns] = (expires, items)
        store = GraphStore(source=Source.CLUSTER)
        store.state.never_arrive(NEVER_WATCHED)
        for kind, ns in wanted:
            for item in self.cache[kind.status_key, ns][1]:
                # apply() keeps nothing of the dict it reads: the cached item can be reused.
                store.apply(EventType.ADDED, item, default_namespace="")
            status = reporting_status(store.sync, kind.kind_id, None)
            status.state, status.synced_at = SyncState.SYNCED, time.time()
        return to_json(answer(tool, store.view(), raw_args), detail=False)

    async def route_host(self) -> str | None:
        """A hostname some HTTPRoute serves (for diff_routes), listed once, untimed."""
        for kind in self.served:
            if kind.kind_id == "HTTPRoute":
                for route in await self._list(kind, None):
                    hosts = (route.get("spec") or {}).get("hostnames") or []
                    if hosts:
                        return str(hosts[0])
        return None

    async def _list(self, kind: WatchedKind, namespace: str | None) -> list[dict[str, Any]]:
        path = kind.path if namespace is None else kind.path_in(namespace)
        accept = kind.accept
        response = await self.transport.get(path, kind.selection,
                                            accept=accept[0] if accept else None)
        try:
            body = await response.read()
        finally:
            response.release()
        check_response(response, body)
        self.listed_bytes += len(body)
        items: list[dict[str, Any]] = orjson.loads(body).get("items") or []
        for item in items:
            # List items come without kind/apiVersion; the list knows them.
            item["kind"], item["apiVersion"] = kind.kind, kind.api_version
        return [item for item in items if kind.keeps_object(item)]


def scope_of(tool: AnyTool, raw_args: Mapping[str, Any]) -> tuple[str, ...] | None:
    """The namespaces a call lists its namespaced kinds in; None: the whole cluster."""
    if tool.name not in SCOPED:
        return None
    named = {namespace for _, namespace in named_namespaces(parse_args(tool, raw_args))}
    if not named:
        return None
    return tuple(sorted(named | set(CONFIG_NAMESPACES)))


def tool_calls(ctx: BenchContext) -> dict[str, dict[str, Any]]:
    """The call measured for each tool: the context's questions, and for the other tools
    one built from them (the same namespaces and port)."""
    calls = {tool: dict(args) for tool, args in ctx.questions.values()}
    reach = dict(ctx.questions["reach"][1])
    service = str(ctx.questions["no_endpoints"][1]["service"])
    calls.setdefault("who_can_reach", {"destination": reach["destination"],
                                       "port": reach["port"]})
    calls.setdefault("list_services", {"namespace": service.split("/")[0]})
    calls.setdefault("check_route_resolution", {"limit": 20})
    calls.setdefault("analyze_config", {"namespace": service.split("/")[0]})
    return calls


def gist(data: Mapping[str, Any]) -> dict[str, Any]:
    """An answer without its metadata (time, source, sync): what must be equal."""
    return {key: value for key, value in data.items() if key != "metadata"}


def _figures(samples: list[float]) -> dict[str, Any]:
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    return {"p50_ms": round(statistics.median(ordered) * 1000, 3),
            "p99_ms": round(p99 * 1000, 3), "n": len(ordered)}


async def _netsight_answer(ctx: BenchContext, tool: str, args: dict[str, Any]
                           ) -> dict[str, Any]:
    result = ctx.netsight_analyze(tool, args)
    if inspect.isawaitable(result):
        result = await result
    if isinstance(result, Mapping):
        return dict(result)
    return to_json(result, detail=False)


async def measure_tool(session: Session, tool: str, args: dict[str, Any], repeats: int,
                       budget: float = BUDGET_S) -> tuple[dict[str, Any], dict[str, Any]]:
    """Cold calls (cache emptied before each) and warm ones (within the TTL), each figure
    stopping early once it has taken ``budget`` seconds; and the last answer."""
    figures: dict[str, Any] = {}
    answered: dict[str, Any] = {}
    for mode in ("cold", "warm"):
        samples: list[float] = []
        started = time.monotonic()
        if mode == "warm":
            session.forget()
            await session.call(tool, args)  # fills the cache; not timed
        while len(samples) < repeats and (not samples or time.monotonic() - started < budget):
            if mode == "cold":
                session.forget()
            elif session.expires_within(2.0):  # the cache would expire mid-call: refill
                session.forget()
                await session.call(tool, args)
            begun = time.perf_counter()
            answered = await session.call(tool, args)
            samples.append(time.perf_counter() - begun)
        figures[mode] = _figures(samples)
        if mode == "cold":
            figures["cold"]["listed_mb"] = round(session.listed_bytes / 1e6, 3)
    return figures, answered


async def measure(ctx: BenchContext) -> dict[str, Any]:
    calls = tool_calls(ctx)
    budget = QUICK_BUDGET_S if ctx.quick else BUDGET_S
    session = await Session.open(str(ctx.kubeconfig))
    tools: dict[str, Any] = {}
    cut: list[str] = []
    try:
        if "diff_routes" not in calls and (host := await session.route_host()) is not None:
            calls["diff_routes"] = {"host": host}
        with ctx.progress("baseline (per-call design)", len(calls)) as bar:
            for tool, args in calls.items():
                if tool not in TOOLS:
                    continue
                figures, answered = await measure_tool(session, tool, args, ctx.repeats,
                                                       budget)
                session.forget()  # the next tool starts cold; a session's cache is not shared
                figures["agrees"] = gist(answered) == gist(await _netsight_answer(ctx, tool,
                                                                                  args))
                figures["args"] = args
                tools[tool] = figures
                if any(figures[m]["n"] < ctx.repeats for m in ("cold", "warm")):
                    cut.append(tool)
                bar.advance()
    finally:
        await session.close()
    notes = (f"per call: discovery done once at start; the tool's served kinds listed "
             f"concurrently as raw JSON (orjson) through kubernetes-asyncio's ApiClient, "
             f"namespaced kinds only in the named namespaces plus {', '.join(CONFIG_NAMESPACES)}"
             f" for {', '.join(sorted(SCOPED))}; netsight's graph builder and analyzer on the "
             f"listed objects; cache {CACHE_TTL_S:.0f} s (cold: emptied before each call). "
             f"'agrees': the answer, metadata aside, equals netsight's live answer.")
    if cut:
        notes += (f" Each figure stops after {budget:.0f} s: fewer than {ctx.repeats} calls "
                  f"for {', '.join(cut)} (see n).")
    return {"available": True, "tools": tools, "notes": notes}
