"""A list page's metadata (its continue token) is found without reading its items, and is
the same wherever in the page it is written; a page whose head is not a list object gives
None."""

from __future__ import annotations

import orjson
import pytest

from netsight.graph.ingest.decoding import list_metadata

META = {"resourceVersion": "7", "continue": "abc", "remainingItemCount": 3}
ITEMS = [{"metadata": {"name": "p"}, "spec": {"volumes": [{"configMap": {
    "name": "c", "items": [{"key": "k", "path": "p"}]}}]}}]


@pytest.mark.parametrize("body", [
    orjson.dumps({"kind": "PodList", "metadata": META, "items": ITEMS}),
    orjson.dumps({"items": ITEMS, "metadata": META}),  # items first: a nested ,"items":
    orjson.dumps({"kind": "PodList", "items": ITEMS, "metadata": META}),
    b'{"metadata" : {"resourceVersion":"7","continue":"abc","remainingItemCount":3},'
    b' "items" : []}',
])
def test_the_metadata_is_found_wherever_the_page_writes_it(body: bytes) -> None:
    assert list_metadata(body) == META


def test_a_page_without_metadata_has_empty_metadata() -> None:
    assert list_metadata(b'{"items":[]}') == {}


@pytest.mark.parametrize("body", [b"not json", b"[1,2]", b'{"metadata":"x","items":[]}'])
def test_what_is_not_a_list_object_gives_none(body: bytes) -> None:
    assert list_metadata(body) is None


def test_broken_items_are_left_to_whoever_reads_them() -> None:
    # The informer's reader of the items (typed, or the checked path) reports the error.
    assert list_metadata(b'{"metadata":{"resourceVersion":"7"},"items":[}') == {
        "resourceVersion": "7"}
