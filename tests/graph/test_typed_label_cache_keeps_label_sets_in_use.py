"""The typed decoders' label cache (graph/ingest/shared_parts.py) finds a label map by its
items as listed and is bounded in two generations: a label set some pod used within the last
generation is still there when the cache fills, where emptying it at once made every label
set in use miss again. Whatever the order, a label set decodes to its one shared map."""

from __future__ import annotations

from typing import Any

import orjson

from netsight.graph.ingest import worker_rows
from netsight.graph.ingest.shared_parts import (
    LABEL_GENERATION,
    cache_sizes,
    labels_cached,
    share_label_items,
)
from netsight.graph.ingest.typed_pages import decode_pod_page
from netsight.graph.model.reading import to_record
from netsight.graph.model.records import PodRecord


def labels_of(*labels: dict[str, str]) -> list[Any]:
    items = [{"metadata": {"name": f"p{i}", "namespace": "cache-test", "labels": given}}
             for i, given in enumerate(labels)]
    page = decode_pod_page(orjson.dumps({"metadata": {}, "items": items}))
    assert page is not None
    return [record.labels for record in page.records("v1")]


def cached(labels: dict[str, str]) -> bool:
    return labels_cached(tuple(labels.items()))


def test_a_label_set_in_use_survives_the_cache_filling() -> None:
    hot = {"app": "cache-test-hot", "tier": "web"}
    every = LABEL_GENERATION // 4
    for n in range(3 * LABEL_GENERATION):
        if n % every == 0:
            labels_of(hot)
        labels_of({"app": "cache-test", "serial": str(n)})
        assert cached(hot), n
    held = cache_sizes()["cache_typed_labels"]
    assert LABEL_GENERATION <= held <= 2 * LABEL_GENERATION


def test_one_label_set_in_any_order_is_one_shared_map() -> None:
    listed = {"app": "cache-test-order", "tier": "db", "track": "canary"}
    reordered = dict(reversed(listed.items()))
    first, second = labels_of(listed, reordered)
    assert first is second
    assert dict(first) == listed


def rebuilt_labels(labels: dict[str, str]) -> Any:
    """The labels of a pod sent through the list worker's rows and rebuilt here."""
    record = to_record({"apiVersion": "v1", "kind": "Pod",
                        "metadata": {"name": "p", "namespace": "cache-test", "labels": labels}})
    assert isinstance(record, PodRecord)
    (rebuilt,) = worker_rows.decode(worker_rows.encode([record]))
    return rebuilt.labels


def test_label_sets_rebuilt_from_another_process_use_the_current_generation() -> None:
    # worker_rows.py rebuilds the list worker's records through this cache: after two turns of
    # its generations, a label set it asks for again is shared and cached anew, not found
    # in a generation the cache has dropped.
    rebuilt = {"app": "cache-test-wire"}
    first = rebuilt_labels(rebuilt)
    for turn in range(2 * LABEL_GENERATION + 1):
        share_label_items((("app", f"cache-test-filler-{turn}"),))
    assert not cached(rebuilt)
    assert rebuilt_labels(rebuilt) == first
    assert cached(rebuilt)
