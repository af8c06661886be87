"""After a list, nothing in the API client keeps the page: the generated ApiClient holds its
last response (and the body once read) until its next call, which after a large list
could be megabytes for as long as the watches stay quiet."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from netsight.graph.ingest.client import KubeTransport
from netsight.graph.ingest.discovery import discover
from netsight.graph.ingest.informers import Informer
from netsight.graph.model.kinds import Kind
from netsight.graph.store.live import GraphStore
from netsight.sim.apiserver import SimServer
from netsight.sim.synthetic import generate
from tests.watching.conftest import FAST

pytestmark = pytest.mark.anyio


async def test_a_listed_page_is_not_kept_after_it_is_applied(tmp_path: Path) -> None:
    async with SimServer() as sim:
        sim.state.apply(generate(pods=30, seed=3).objects())
        transport = await KubeTransport.connect(str(sim.write_kubeconfig(tmp_path / "kc")))
        try:
            store = GraphStore()
            pods = next(k for k in await discover(transport) if k.kind_id == Kind.POD)
            await Informer(transport, store, pods, FAST).list_and_reconcile()
            assert store.view().count(Kind.POD) == 30
            gc.collect()
            pages = [o for o in gc.get_objects()
                     if type(o).__name__ == "ClientResponse" and getattr(o, "_body", None)]
            assert pages == []
        finally:
            await transport.close()
