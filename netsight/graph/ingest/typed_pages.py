"""Typed list pages: Pods, EndpointSlices, Services, NetworkPolicies and Namespaces
validated by msgspec while decoding (api_objects.py), built into records directly
(typed_records.py).

An initial sync is mostly Pod and EndpointSlice pages; checking every field in Python, as
:func:`netsight.graph.model.reading.to_record` does, would cost as much again as reading
them. Whatever does not fit the typed objects — one malformed object, a value of an unusual
type anywhere in the page — makes :func:`decode_typed_page` return None, and the informer
reads the page the checked way (decoding.py), which reports the bad field. The typed path
never has to reject anything itself.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import msgspec

from netsight.graph.ingest.api_objects import (
    EndpointSlice,
    Namespace,
    NetworkPolicy,
    Pod,
    Service,
)
from netsight.graph.ingest.typed_records import (
    namespace_record,
    network_policy_record,
    pod_record,
    service_record,
    slice_record,
)
from netsight.graph.model.errors import MalformedObject
from netsight.graph.model.kinds import Kind
from netsight.graph.model.records import Record

Item = TypeVar("Item", bound=msgspec.Struct)


class ListPage(msgspec.Struct, Generic[Item], gc=False):
    """A list page of one kind, as msgspec decodes it."""

    metadata: Any = None
    items: list[Item] | None = None


@dataclass(frozen=True, slots=True)
class TypedPage:
    """A list page decoded typed: its metadata, its items, and their records to build."""

    metadata: Any
    items: list[Any]
    build: Callable[[Any, str], Record]  # (item, the list's apiVersion) -> its record

    def records(self, api_version: str) -> Iterator[Record]:
        build = self.build
        for item in self.items:
            yield build(item, api_version)


def _pod(item: Pod, api_version: str) -> Record:
    return pod_record(item)  # a listed Pod is v1


# Kind id -> the decoder of its list pages, and the builder of an item's record.
_KINDS: dict[str, tuple[msgspec.json.Decoder[Any], Callable[[Any, str], Record]]] = {
    Kind.POD: (msgspec.json.Decoder(ListPage[Pod]), _pod),
    Kind.ENDPOINT_SLICE: (msgspec.json.Decoder(ListPage[EndpointSlice]), slice_record),
    Kind.SERVICE: (msgspec.json.Decoder(ListPage[Service]), service_record),
    Kind.NETWORK_POLICY: (msgspec.json.Decoder(ListPage[NetworkPolicy]),
                          network_policy_record),
    Kind.NAMESPACE: (msgspec.json.Decoder(ListPage[Namespace]), namespace_record),
}


def list_page_records(kind_id: str, body: bytes | memoryview, api_version: str
                      ) -> tuple[Any, list[Record]] | None:
    """A list page's metadata and the records of its items, read typed; None if the kind
    has no typed shape or anything in the page is unusual: then read it the checked way,
    which reports the bad field."""
    page = decode_typed_page(kind_id, body)
    if page is None:
        return None
    try:
        return page.metadata, list(page.records(api_version))
    except MalformedObject:  # a value the checked path's own functions refused
        return None


def decode_typed_page(kind_id: str, body: bytes | memoryview) -> TypedPage | None:
    """A list page as Structs, or None if the kind has no typed shape or anything in the
    page is unusual (or not JSON)."""
    known = _KINDS.get(kind_id)
    if known is None:
        return None
    decoder, build = known
    try:
        page: ListPage[Any] = decoder.decode(body)
    except (msgspec.ValidationError, msgspec.DecodeError):
        return None
    return TypedPage(page.metadata, page.items or [], build)


def decode_pod_page(body: bytes) -> TypedPage | None:
    """A Pod list page as Structs, or None if anything in it is unusual (or not JSON)."""
    return decode_typed_page(Kind.POD, body)
