"""The records of a Pod list page in a compact form, to pass them between processes.

A worker process (list_worker.py) decodes Pod list pages and builds their records; the
informer's process only rebuilds them from this form, for a fraction of what reading the
page's JSON and building them costs (a pod is several KB of JSON, and a short row here).
The form is msgpack of array-like Structs: per page, each distinct label set, owner and
port list once, and each pod as a row referring to them; a row carries a PodRecord's
fields, less its kind and apiVersion (tests/graph/test_fields_are_declared_once.py).
Rebuilding interns the strings the typed path interns and takes label maps and owners from
the same shared caches (shared_parts.py, field_values.py), so the rebuilt records are equal
to the worker's and share their parts as records built in this process would: the graph's
identities and memory are those of an in-process list.

EndpointSlices are not sent this way: rebuilding a slice's endpoints here costs nearly
what reading and building it does, so they stay in-process.
"""

from __future__ import annotations

from collections.abc import Mapping
from sys import intern

import msgspec

from netsight.graph.ingest.shared_parts import CONTAINERS_LIMIT, share_label_items
from netsight.graph.ingest.typed_records import POD_RECORD
from netsight.graph.model.field_values import share_owner, shared_dns, shared_timestamp
from netsight.graph.model.kinds import Kind
from netsight.graph.model.records import EMPTY_MAP, ContainerPort, PodRecord, Record

LabelItems = tuple[tuple[str, str], ...]


class PodRow(msgspec.Struct, array_like=True, gc=False):
    namespace: str
    name: str
    labels: int  # index into the page's label sets
    annotations: dict[str, str] | None
    owner: int  # index into the page's owners; -1: none
    created: str | None
    ips: tuple[str, ...]
    phase: str | None
    ready: bool | None
    terminating: bool
    ports: int  # index into the page's port lists
    node_name: str | None
    host_network: bool
    service_account: str
    hostname: str | None
    subdomain: str | None
    mesh_proxy: str | None
    # PodDNS as its fields, None for the default
    dns: tuple[str, tuple[str, ...], tuple[str, ...], tuple[tuple[str, str | None], ...]] | None
    waiting: str | None


class Page(msgspec.Struct, array_like=True, gc=False):
    """One page's pods, with the parts they share."""

    labels: list[LabelItems]
    owners: list[tuple[str, str]]
    container_ports: list[tuple[tuple[int, str, str | None, str], ...]]
    pods: list[PodRow]


_ENCODER = msgspec.msgpack.Encoder()
_DECODER = msgspec.msgpack.Decoder(Page)


def encodable(kind_id: str) -> bool:
    return kind_id == Kind.POD


def encode(records: list[Record]) -> bytes:
    """The records of one Pod page, in the wire form."""
    labels: dict[int, int] = {}  # id of a shared label map -> its index
    label_items: list[LabelItems] = []
    owners: dict[tuple[str, str], int] = {}
    ports: dict[int, int] = {}
    port_lists: list[tuple[tuple[int, str, str | None, str], ...]] = []
    pods: list[PodRow] = []
    kept: list[object] = []  # what the ids above name stays alive until the page is done

    def label_index(mapping: Mapping[str, str]) -> int:
        index = labels.get(id(mapping))
        if index is None:
            kept.append(mapping)
            index = labels[id(mapping)] = len(label_items)
            label_items.append(tuple(mapping.items()))
        return index

    def owner_index(owner: tuple[str, str] | None) -> int:
        if owner is None:
            return -1
        index = owners.get(owner)
        if index is None:
            index = owners[owner] = len(owners)
        return index

    for record in records:
        if type(record) is PodRecord:
            index = ports.get(id(record.ports))
            if index is None:
                kept.append(record.ports)
                index = ports[id(record.ports)] = len(port_lists)
                port_lists.append(tuple((p.port, p.protocol, p.name, p.container)
                                        for p in record.ports))
            pods.append(PodRow(
                record.namespace, record.name, label_index(record.labels),
                dict(record.annotations) or None, owner_index(record.owner), record.created,
                record.ips, record.phase, record.ready, record.terminating, index,
                record.node_name, record.host_network, record.service_account,
                record.hostname, record.subdomain, record.mesh_proxy,
                None if record.dns is None else (record.dns.policy, record.dns.nameservers,
                                                 record.dns.searches, record.dns.options),
                record.waiting))
        else:
            raise TypeError(f"no wire form for {type(record).__name__}")
    return _ENCODER.encode(Page(label_items, list(owners), port_lists, pods))


def decode(data: bytes | memoryview) -> list[Record]:
    """The records :func:`encode` was given, rebuilt in this process."""
    page: Page = _DECODER.decode(data)
    labels = [share_label_items(items) for items in page.labels]
    owners = [share_owner((intern(kind), intern(name))) for kind, name in page.owners]
    records: list[Record] = []
    append = records.append
    port_lists = [_shared_ports(ports) for ports in page.container_ports]
    for row in page.pods:
        append(POD_RECORD(
            kind=Kind.POD,
            api_version="v1",
            namespace=intern(row.namespace),
            name=intern(row.name),
            labels=labels[row.labels],
            annotations=row.annotations or EMPTY_MAP,
            owner=None if row.owner < 0 else owners[row.owner],
            created=None if row.created is None else shared_timestamp(row.created),
            ips=tuple(map(intern, row.ips)),
            phase=None if row.phase is None else intern(row.phase),
            ready=row.ready,
            terminating=row.terminating,
            ports=port_lists[row.ports],
            node_name=None if row.node_name is None else intern(row.node_name),
            host_network=row.host_network,
            service_account=intern(row.service_account),
            hostname=None if row.hostname is None else intern(row.hostname),
            subdomain=None if row.subdomain is None else intern(row.subdomain),
            mesh_proxy=row.mesh_proxy,
            dns=None if row.dns is None else shared_dns(*row.dns),
            waiting=None if row.waiting is None else intern(row.waiting),
        ))
    return records


# Port lists as sent -> the tuple of ContainerPorts every pod with them shares (as the
# pods of one template share theirs when built in this process, shared_parts.py).
_PORTS: dict[tuple[tuple[int, str, str | None, str], ...], tuple[ContainerPort, ...]] = {}


def _shared_ports(ports: tuple[tuple[int, str, str | None, str], ...]
                  ) -> tuple[ContainerPort, ...]:
    found = _PORTS.get(ports)
    if found is None:
        if len(_PORTS) >= CONTAINERS_LIMIT:
            _PORTS.clear()
        found = _PORTS[ports] = tuple(
            ContainerPort(port=port, protocol=intern(protocol),
                          name=None if name is None else intern(name),
                          container=intern(container))
            for port, protocol, name, container in ports)
    return found
