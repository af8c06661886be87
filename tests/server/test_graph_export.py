"""The streamed export reads the live graph between chunks and still yields a consistent
document: links only between nodes it wrote, objects deleted mid-way left out."""

from __future__ import annotations

import json
import tracemalloc

import pytest

from netsight.graph.store.live import EventType
from netsight.server.graph_api import Selection, export, select_keys
from tests.conftest import store_from_yaml

pytestmark = pytest.mark.anyio

CLUSTER = "\n---\n".join(
    [f"""
apiVersion: v1
kind: Pod
metadata: {{name: web-{i}, namespace: shop, labels: {{app: web}}}}
""" for i in range(6)] + ["""
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec: {selector: {app: web}, ports: [{port: 80}]}
""", """
apiVersion: v1
kind: Namespace
metadata: {name: shop}
"""])


async def test_changes_between_chunks_leave_the_document_consistent() -> None:
    store = store_from_yaml(CLUSTER)
    view = store.view()
    keys = select_keys(view, Selection(kinds=frozenset({"Service", "Pod", "Namespace"})))
    assert keys[0].startswith("Namespace/")  # kinds in order: Namespace, Pod, Service
    chunks = export(view, keys, {"generation": store.generation}, chunk=2, link_chunk=3)
    body = [await anext(chunks), await anext(chunks)]  # the head and two nodes written
    written = {n["id"] for n in json.loads(b"[" + body[1].lstrip(b",") + b"]")}
    gone = next(k for k in keys if k.startswith("Pod/") and k not in written)
    store.apply(EventType.DELETED, {"apiVersion": "v1", "kind": "Pod",
                                    "metadata": {"name": gone.rsplit("/", 1)[1],
                                                 "namespace": "shop"}})
    store.apply(EventType.ADDED, {"apiVersion": "v1", "kind": "Pod",
                                  "metadata": {"name": "late", "namespace": "shop",
                                               "labels": {"app": "web"}}})
    body.extend([chunk async for chunk in chunks])
    document = json.loads(b"".join(body))
    ids = {node["id"] for node in document["nodes"]}
    assert gone not in ids
    assert "Pod/shop/late" not in ids  # not in the key list; /api/graph/changes brings it
    assert len(ids) == len(keys) - 1
    assert all(link["source"] in ids and link["target"] in ids for link in document["links"])
    selected = {link["target"] for link in document["links"]
                if (link["source"], link["type"], link["key"]) == ("Service/shop/web",
                                                                   "selects", "selects")}
    assert selected == {k for k in ids if k.startswith("Pod/")}
    assert len(selected) == 5


async def test_export_is_the_node_link_document_of_the_graph() -> None:
    # The encoder writes JSON fragments; the document must be what encoding the node and
    # link dicts gives, for namespaced and cluster-scoped nodes, stored and selector edges.
    store = store_from_yaml(CLUSTER)
    view = store.view()
    keys = select_keys(view, Selection())
    body = b"".join([chunk async for chunk in export(view, keys, {"generation": 7},
                                                       chunk=3, link_chunk=2)])
    nodes = []
    for key in keys:
        record = view.get(key)
        assert record is not None
        nodes.append({"id": key, "kind": record.kind, "namespace": record.namespace or None,
                      "name": record.name})
    links = [{"source": key, "target": target, "type": rel, "key": rel}
             for key in keys for target, rel in view.out_edges(key)]
    assert json.loads(body) == {"directed": True, "multigraph": True,
                                "graph": {"generation": 7}, "nodes": nodes, "links": links}
    assert {n["namespace"] for n in nodes} == {None, "shop"}
    assert {link["type"] for link in links} >= {"contains", "selects"}


async def test_an_export_holds_little_memory_per_node_between_chunks() -> None:
    """What the export keeps from one chunk to the next (the encoded keys of the nodes it
    wrote, for their links) stays small per node: a whole-graph export at 100k pods must
    not double the server's memory (issue 20, point 7)."""
    pods = 3000
    store = store_from_yaml("\n---\n".join(
        f"apiVersion: v1\nkind: Pod\nmetadata: {{name: web-{i}, namespace: shop, "
        "labels: {app: web}}" for i in range(pods)))
    view = store.view()
    keys = select_keys(view, Selection())
    tracemalloc.start()
    try:
        held = 0
        chunks = export(view, keys, {"generation": store.generation}, chunk=500)
        async for chunk in chunks:
            held = max(held, tracemalloc.get_traced_memory()[0] - len(chunk))
    finally:
        tracemalloc.stop()
    assert held / pods < 400, f"{held / pods:.0f} bytes held per node"
