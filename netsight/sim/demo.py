"""The demo cluster ``netsight serve --demo`` answers from: the server's one way into the sim.

The simulated API server runs in the caller's process, on its loop, loaded with the demo
scenario, its endpoint-slice controller and kubelet running (probe pods get their answers
from the simulated data plane) and, unless static, gentle churn
(:mod:`netsight.sim.demo_churn`) keeping it alive; the caller reaches it over loopback HTTP
through a kubeconfig, exactly as it would reach a real API server.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from netsight.sim.access import SERVICE_ACCOUNT_TOKEN
from netsight.sim.apiserver import SimServer
from netsight.sim.cni import install_cni
from netsight.sim.control_planes import install_istio, install_linkerd
from netsight.sim.dataplane.enforcement import Profile
from netsight.sim.demo_churn import DemoChurn
from netsight.sim.endpoint_slices import EndpointSliceController
from netsight.sim.kubelet import KubeletConfig
from netsight.sim.recorder import EventRecorder
from netsight.sim.scenarios import (
    DEMO_CLOSED_PORTS,
    DEMO_CRASH_LOOPING,
    ISTIO_VERSION,
    LINKERD_VERSION,
    demo,
)
from netsight.sim.state import SimState

# A bearer token the demo cluster's TokenReview accepts: its service account's.
DEMO_TOKEN: Final = SERVICE_ACCOUNT_TOKEN


def load_demo(state: SimState, seed: int = 7) -> EndpointSliceController:
    """Load the demo scenario and start the endpoint-slice controller that writes its
    EndpointSlices and keeps them current. Its CNI is Cilium-like, so its data plane
    enforces the demo's policies, istiod and Linkerd's control plane run the proxies'
    versions, its one data-plane fault is set, and its crash-looping pod's Warning Event is
    recorded."""
    state.apply(demo(seed))
    install_cni(state, Profile.CILIUM_LIKE)
    install_istio(state, ISTIO_VERSION)
    install_linkerd(state, LINKERD_VERSION)
    for pod, port in DEMO_CLOSED_PORTS:
        state.network.close_port(pod, port)
    # Loaded with the status its kubelet gave it, the crash-looping pod comes with the
    # Warning that kubelet recorded as it restarted the container.
    looping = state.objects[("", "Pod")][DEMO_CRASH_LOOPING]
    EventRecorder(state, "kubelet", "node-1").record(
        looping, "Warning", "BackOff",
        f"Back-off restarting failed container app in pod {looping['metadata']['name']}",
        "Restarting")
    controller = EndpointSliceController(state)
    controller.start()
    return controller


@dataclass(frozen=True)
class DemoCluster:
    """Where the running demo cluster answers."""

    kubeconfig: str  # a kubeconfig for the simulator; removed when the context ends
    url: str


@contextlib.asynccontextmanager
async def demo_cluster(churn_interval: float | None = None) -> AsyncIterator[DemoCluster]:
    """Run the simulated API server with the demo cluster for as long as the context,
    churning a step every ``churn_interval`` seconds (None: static).

    Without its control endpoints: nothing but the churn drives the demo, and served they
    would let any local user rewrite who netsight's callers are (``/sim/access``)."""
    sim = SimServer(control=False, kubelet=KubeletConfig())
    load_demo(sim.state)
    sim.state.compact()  # nobody watches from before the load: drop its events
    async with sim, contextlib.AsyncExitStack() as stack:
        if churn_interval is not None:
            await stack.enter_async_context(DemoChurn(sim.state).running(churn_interval))
        with tempfile.TemporaryDirectory(prefix="netsight-") as directory:
            kubeconfig = sim.write_kubeconfig(Path(directory) / "kubeconfig")
            yield DemoCluster(kubeconfig=str(kubeconfig), url=sim.url)
