"""Parts many records built from typed objects share, each found once in a bounded cache.

The pods of one template list equal labels, containers and owner references, and most
carry the same annotation keys: each is read into its record's form once and shared by the
records that follow. The shared label maps and owners are those the checked path shares
too (``selectors.shared_labels``, ``field_values.share_owner``), so records built here and
records read the checked way hold the same objects.
"""

from __future__ import annotations

from collections.abc import Mapping
from sys import intern
from typing import Any

from netsight.graph.ingest.api_objects import ObjectMeta, OwnerReference, PodContainer
from netsight.graph.model.core_records import MESH_PROXY_CONTAINERS
from netsight.graph.model.field_values import (
    KEPT_ANNOTATION_PREFIXES,
    interned,
    kept_annotations,
    share_owner,
)
from netsight.graph.model.kinds import kind_id
from netsight.graph.model.records import EMPTY_MAP, ContainerPort
from netsight.graph.model.selectors import shared_labels

LabelItems = tuple[tuple[str, str], ...]

# Label items as listed -> the shared map. The API server writes a label map's keys sorted
# (a Go map), so each label set has one key here. Bounded in two generations: when the
# current one is full it becomes the previous one, from which a lookup takes an entry back,
# so a label set in use survives the cache filling and what no object used for a whole
# generation goes.
_LABELS: dict[LabelItems, Mapping[str, str]] = {}
_LABELS_BEFORE: dict[LabelItems, Mapping[str, str]] = {}
LABEL_GENERATION = 4096  # entries in each generation


def labels_of(meta: ObjectMeta) -> Mapping[str, str]:
    """The shared map of an object's labels."""
    if not meta.labels:
        return EMPTY_MAP
    # The objects of a template list their labels in the same order: found without sorting
    # them, as shared_labels would to look them up.
    items = tuple(meta.labels.items())
    return _LABELS.get(items) or _share_labels(items, meta.labels)


def share_label_items(items: LabelItems) -> Mapping[str, str]:
    """The shared map of label items as listed (the list worker's records, worker_rows.py).
    The generations are rebound here: read them through this module, never imported."""
    if not items:
        return EMPTY_MAP
    return _LABELS.get(items) or _share_labels(items, dict(items))


def _share_labels(items: LabelItems, labels: dict[str, str]) -> Mapping[str, str]:
    global _LABELS, _LABELS_BEFORE  # swapped, not copied
    shared = _LABELS_BEFORE.get(items) or shared_labels(labels, "metadata.labels")
    if len(_LABELS) >= LABEL_GENERATION:
        _LABELS_BEFORE, _LABELS = _LABELS, {}
    _LABELS[items] = shared
    return shared


def labels_cached(items: LabelItems) -> bool:
    """Whether either generation holds the label set ``items``."""
    return items in _LABELS or items in _LABELS_BEFORE


Containers = tuple[PodContainer, ...] | None
# Pods of one template have equal (hashable) containers: one entry serves all of them.
_CONTAINERS: dict[tuple[Containers, Containers], tuple[tuple[ContainerPort, ...], str | None]] = {}
CONTAINERS_LIMIT = 8192


def container_ports(containers: Containers, init: Containers
                    ) -> tuple[tuple[ContainerPort, ...], str | None]:
    """The pod's ports and mesh proxy container, as ``core_records`` finds them."""
    key = (containers, init)
    found = _CONTAINERS.get(key)
    if found is not None:
        return found
    ports: list[ContainerPort] = []
    mesh_proxy: str | None = None
    for section, sidecars_only in ((containers, False), (init, True)):
        for container in section or ():
            if mesh_proxy is None and container.name in MESH_PROXY_CONTAINERS:
                mesh_proxy = container.name
            # Only restartable init containers (sidecars) keep serving after start-up.
            if sidecars_only and container.restartPolicy != "Always":
                continue
            cname = intern(container.name or "")
            for port in container.ports or ():
                ports.append(ContainerPort(
                    port=port.containerPort,
                    protocol="TCP" if port.protocol is None else intern(port.protocol),
                    name=intern(port.name) if port.name else None,
                    container=cname))
    found = (tuple(ports), mesh_proxy)
    if len(_CONTAINERS) >= CONTAINERS_LIMIT:
        _CONTAINERS.clear()
    _CONTAINERS[key] = found
    return found


# Annotation key sets none of which netsight keeps (prometheus.io/scrape, ...): most pods'.
_PLAIN_KEYS: set[tuple[str, ...]] = set()
# Owner references -> the owner they name: the pods of one ReplicaSet have equal ones.
_OWNERS: dict[tuple[OwnerReference, ...], tuple[str, str] | None] = {}
_CACHE_LIMIT = 8192


def annotations_of(raw: Any) -> Mapping[str, str]:
    """As ``field_values.kept_annotations``, without looking at each annotation again when
    its keys are a set seen before that holds none worth keeping."""
    if type(raw) is not dict or not raw:
        return kept_annotations(raw)
    keys = tuple(raw)
    if keys in _PLAIN_KEYS:
        return EMPTY_MAP
    kept = kept_annotations(raw)
    if not any(type(k) is str and k.startswith(KEPT_ANNOTATION_PREFIXES) for k in keys):
        if len(_PLAIN_KEYS) >= _CACHE_LIMIT:
            _PLAIN_KEYS.clear()
        _PLAIN_KEYS.add(keys)
    return kept


def owner_of(refs: tuple[OwnerReference, ...]) -> tuple[str, str] | None:
    """As ``field_values.controller_owner``: the controlling owner, else the first named
    one."""
    owner = _OWNERS.get(refs, _UNSEEN)  # one lookup: hashing refs walks every reference
    if owner is not _UNSEEN:
        return owner  # type: ignore[return-value]  # only owners are stored
    owner = _find_owner(refs)
    if len(_OWNERS) >= _CACHE_LIMIT:
        _OWNERS.clear()
    _OWNERS[refs] = owner
    return owner


_UNSEEN = object()


def _find_owner(refs: tuple[OwnerReference, ...]) -> tuple[str, str] | None:
    chosen: OwnerReference | None
    if len(refs) == 1:
        chosen = refs[0] if refs[0].kind and refs[0].name else None
    else:
        owners = [o for o in refs if o.kind and o.name]
        chosen = next((o for o in owners if o.controller), owners[0] if owners else None)
    if chosen is None:
        return None
    kid = kind_id(chosen.apiVersion or "v1", chosen.kind or "")
    return share_owner((interned(kid), intern(chosen.name or "")))


def cache_sizes() -> dict[str, int]:
    """Entries in this module's bounded caches, for a soak's census
    (``graph/store/footprint.census`` counts the store's own)."""
    return {"cache_typed_labels": len(_LABELS) + len(_LABELS_BEFORE),
            "cache_typed_containers": len(_CONTAINERS),
            "cache_typed_owners": len(_OWNERS)}
