"""The live graph the server answers from: informers feeding a GraphStore.

Against a cluster the informers connect with kubernetes-asyncio's configuration (in-cluster
inside a pod, the kubeconfig otherwise); with ``--demo`` the simulated API server runs in
this process, on this loop, loaded with the demo scenario, and the informers reach it over
loopback HTTP exactly as they would reach a real one.

The HTTP server starts before the first list finishes, so ``/healthz`` answers at once and
``/readyz`` reports the sync as it happens. Discovery that fails (API server not reachable
yet) is retried with backoff in the background rather than failing the process.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field, replace

from netsight.graph.ingest.backoff import Backoff
from netsight.graph.ingest.client import KubeTransport
from netsight.graph.ingest.cluster_watcher import ClusterWatcher
from netsight.graph.ingest.informers import InformerSettings
from netsight.graph.store.live import GraphStore, Source
from netsight.probes.runner import Mode, ProbeRunner, RunnerSettings
from netsight.server import warming
from netsight.server.config import ConfigError, Settings
from netsight.sim.demo import demo_cluster

log = logging.getLogger(__name__)

# Seconds the collector is held off for the initial lists at most: a kind that never syncs
# (forbidden, say) must not leave a serving process without cyclic collection for long.
SYNC_WAIT = 120.0


@dataclass
class LiveGraph:
    """The store, the informers keeping it current, and what they report."""

    store: GraphStore
    watcher: ClusterWatcher | None = None
    transport: KubeTransport | None = None  # also posts the reviews that check HTTP callers
    started: bool = False  # discovery done and every informer running
    start_error: str | None = None
    # The graph generation the policy models were last all built from (warming.py).
    warmed: int | None = None
    provider_listeners: list[Callable[[set[str]], None]] = field(default_factory=list)
    # Runs probe pods, where probes are enabled (and the server not read-only).
    probes: ProbeRunner | None = None

    @property
    def providers(self) -> set[str]:
        return set(self.watcher.providers) if self.watcher is not None else set()

    @property
    def ready(self) -> bool:
        return self.started and self.watcher is not None and self.watcher.ready

    def providers_changed(self, providers: set[str]) -> None:
        for listener in self.provider_listeners:
            listener(providers)


@contextlib.asynccontextmanager
async def live_graph(settings: Settings, *, informers: InformerSettings | None = None
                     ) -> AsyncIterator[LiveGraph]:
    """Run the informers (and, for ``--demo``, the simulator) for as long as the context."""
    source = Source.DEMO if settings.demo else Source.CLUSTER
    graph = LiveGraph(GraphStore(source=source, cluster_name=settings.cluster_name))
    async with contextlib.AsyncExitStack() as stack:
        kubeconfig, context = settings.kubeconfig, settings.context
        if settings.demo:
            demo = await stack.enter_async_context(
                demo_cluster(settings.demo_churn_interval))
            kubeconfig, context = demo.kubeconfig, None
            log.info("demo: simulated API server at %s", demo.url)
        try:
            transport = await KubeTransport.connect(kubeconfig, context,
                                                    connections=connections(settings))
        except Exception as exc:  # ConfigException, a missing or unreadable file, ...
            flag = "--context" if context else "--kubeconfig" if kubeconfig else "KUBECONFIG"
            raise ConfigError(flag, f"no usable Kubernetes configuration ({exc}); give "
                              "--kubeconfig/--context, or --demo for a simulated cluster"
                              ) from None
        stack.push_async_callback(transport.close)
        graph.transport = transport
        informer_settings = informers or InformerSettings()
        if not settings.secret_metadata:
            informer_settings = replace(informer_settings, metadata_only=frozenset())
        if settings.dns_config:
            informer_settings = replace(informer_settings, dns_config=True)
        if settings.provider_status:
            informer_settings = replace(informer_settings, provider_status=True)
        watcher = ClusterWatcher(transport, graph.store, informer_settings,
                                 on_providers_changed=graph.providers_changed,
                                 namespaces=settings.namespaces)
        graph.watcher = watcher
        if settings.probes and not settings.read_only:
            graph.probes = ProbeRunner(transport, probe_settings(settings))
            await graph.probes.start()  # its watch and the first orphan sweep
            stack.push_async_callback(graph.probes.stop)
        tasks = [asyncio.create_task(_start(graph, watcher), name="informers:start"),
                 asyncio.create_task(warming.keep_warm(graph), name="policy-models:warm")]
        try:
            yield graph
        finally:
            for task in tasks:
                task.cancel()
            for task in tasks:
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            await watcher.stop()


def connections(settings: Settings) -> int:
    """Connections to the API server at once: each open watch holds one (HTTP/1.1), and
    per-namespace informers hold one each per namespaced kind, beside lists and reviews."""
    return 100 + 32 * len(settings.namespaces or ())


def probe_settings(settings: Settings) -> RunnerSettings:
    return RunnerSettings(image=settings.probe_image, namespace=settings.probe_namespace,
                          max_concurrent=settings.max_concurrent_probes,
                          timeout=settings.probe_timeout, mode=Mode(settings.probe_mode.value),
                          rate_per_minute=settings.probe_rate, namespaces=settings.namespaces)


async def _start(graph: LiveGraph, watcher: ClusterWatcher) -> None:
    backoff = Backoff(base=0.5, cap=30.0)
    while True:
        try:
            await watcher.start()
        except Exception as exc:  # unreachable API server, bad credentials, ...: retry
            graph.start_error = f"{type(exc).__name__}: {exc}"
            log.warning("cannot start informers (%s); retrying", graph.start_error)
            await watcher.stop()
            await asyncio.sleep(backoff.next_delay())
            continue
        graph.started, graph.start_error = True, None
        # The initial lists with the collector held off, then the graph frozen out of its
        # reach and its keeper started (graph/runtime/collector.py): otherwise a full
        # collection rescans the whole graph, on the loop, whenever a call allocates enough
        # to set one off.
        await watcher.wait_synced(SYNC_WAIT)
        return
