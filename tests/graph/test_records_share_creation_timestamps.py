"""Objects created in the same second (a ReplicaSet's pods) share one timestamp string in
their records, whichever way the records were read: the checked path, the typed pages,
and the list worker's rows."""

from __future__ import annotations

from typing import Any

import orjson

from netsight.graph.ingest import worker_rows
from netsight.graph.ingest.typed_pages import decode_pod_page
from netsight.graph.model.reading import to_record
from netsight.graph.model.records import Record

WHEN = "2024-05-03T14:55:14Z"


def pods() -> list[dict[str, Any]]:
    # Each object gets its own string, as JSON decoding gives it one.
    return [{"apiVersion": "v1", "kind": "Pod",
             "metadata": {"name": f"web-{i}", "namespace": "shop",
                          "creationTimestamp": "".join(WHEN)},
             "spec": {"containers": [{"name": "c"}]},
             "status": {"phase": "Running", "podIP": f"10.0.0.{i + 1}"}}
            for i in range(3)]


def assert_one_string(records: list[Record]) -> None:
    assert [r.created for r in records] == [WHEN] * 3
    assert len({id(r.created) for r in records}) == 1


def test_checked_path_shares_the_timestamp() -> None:
    objects = pods()
    assert len({id(o["metadata"]["creationTimestamp"]) for o in objects}) == 3
    assert_one_string([to_record(o) for o in objects])


def test_typed_pages_and_worker_rows_share_the_timestamp() -> None:
    body = orjson.dumps({"apiVersion": "v1", "kind": "PodList", "metadata": {},
                         "items": pods()})
    typed = decode_pod_page(body)
    assert typed is not None
    records = list(typed.records("v1"))
    assert_one_string(records)
    assert_one_string(worker_rows.decode(worker_rows.encode(records)))
