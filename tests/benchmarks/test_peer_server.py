"""The peer slot: kubernetes-mcp-server, when installed (benchmarks/get-peer.sh), answers
the benchmark's questions from the simulator over stdio beside netsight's one call; when it
is not, the slot says why and how to install it."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.peer_server import (
    INSTALL,
    PEER_DIR,
    VERSION,
    binary,
    measure,
    missing,
    peer_dir,
)
from tests.benchmarks.simulated_cluster import benchmark_cluster

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_without_the_binary_the_slot_says_how_to_install_it(tmp_path: Path) -> None:
    async with benchmark_cluster(tmp_path) as (_sim, ctx):
        result = await measure(ctx)  # the context's work directory is a fresh one
    assert result["available"] is False
    assert str(binary(peer_dir(ctx.work_dir))) in result["reason"]
    assert f"{INSTALL} {peer_dir(ctx.work_dir)}" in result["reason"]
    assert VERSION in result["reason"]


def test_a_peer_of_another_version_is_not_used(tmp_path: Path) -> None:
    path = binary(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    (tmp_path / "version").write_text("0.0.1\n")
    assert "not the pinned" in (missing(tmp_path) or "")


@pytest.mark.skipif(missing() is not None, reason=f"peer not installed: {missing()}")
async def test_the_peer_fetches_what_the_questions_need_beside_netsights_one_call(
        tmp_path: Path) -> None:
    async with benchmark_cluster(tmp_path, serve_netsight=True, repeats=1,
                                 work_dir=PEER_DIR.parent) as (sim, ctx):
        sim.api.request_log.clear()
        result = await measure(ctx)
        paths = {path for method, path, _ in sim.api.request_log if method == "GET"}
    assert result["available"] is True, result
    reach, no_endpoints = result["questions"]["reach"], result["questions"]["no_endpoints"]
    for question in (reach, no_endpoints):
        assert question["errors"] == []
        assert question["calls"] == len(question["fetched"])
        assert question["bytes"] > 0
        assert question["wall_ms"] > 0
        assert question["netsight"]["calls"] == 1
        assert question["netsight"]["bytes"] > 0
    # The peer read the cluster through the simulator: each list the plan names.
    assert {"/api/v1/namespaces/x/pods", "/api/v1/namespaces/y/pods",
            "/apis/networking.k8s.io/v1/namespaces/y/networkpolicies",
            "/api/v1/namespaces/shop/services/cart", "/api/v1/namespaces/shop/events",
            "/apis/discovery.k8s.io/v1/namespaces/shop/endpointslices"} <= paths
    # The demo serves Istio's policies: the reach plan reads them in both namespaces and in
    # the mesh's root namespace.
    for namespace in ("x", "y", "istio-system"):
        assert {"tool": "resources_list", "apiVersion": "security.istio.io/v1",
                "kind": "PeerAuthentication", "namespace": namespace} in reach["fetched"]
