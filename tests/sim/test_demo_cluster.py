"""The demo entry point: a running simulator with the demo cluster, its kubeconfig valid for
as long as the context, and a token its TokenReview accepts."""

from __future__ import annotations

from pathlib import Path

import aiohttp
import orjson
import pytest
import yaml

from netsight.sim.demo import DEMO_TOKEN, demo_cluster

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_demo_cluster_serves_the_demo_until_the_context_ends() -> None:
    async with demo_cluster() as demo, aiohttp.ClientSession() as http:
        config = yaml.safe_load(Path(demo.kubeconfig).read_text())
        assert config["clusters"][0]["cluster"]["server"] == demo.url
        async with http.get(demo.url + "/api/v1/namespaces/shop/services/cart") as response:
            assert response.status == 200
        review = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview",
                  "spec": {"token": DEMO_TOKEN}}
        async with http.post(demo.url + "/apis/authentication.k8s.io/v1/tokenreviews",
                             data=orjson.dumps(review),
                             headers={"Authorization": f"Bearer {DEMO_TOKEN}",
                                      "Content-Type": "application/json"}) as response:
            answer = orjson.loads(await response.read())
        assert answer["status"]["authenticated"] is True
    assert not Path(demo.kubeconfig).exists()
    async with aiohttp.ClientSession() as http:
        with pytest.raises(aiohttp.ClientConnectionError):
            await http.get(demo.url + "/version")
