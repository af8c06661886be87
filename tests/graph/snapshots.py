"""Comparable, frozen snapshots of a GraphState, and a check for leftover empty index entries."""

from __future__ import annotations

from typing import Any

from netsight.graph.model.kinds import Rel
from netsight.graph.model.records import Record
from netsight.graph.store.graph_state import GraphState
from netsight.graph.store.record_edges import SELECTOR_RELS

REL_VALUES = frozenset(Rel)


def snapshot(state: GraphState) -> dict[str, Any]:
    """Everything a GraphState holds, copied into immutable values that compare with ``==``.

    Copies every set and dict, so a snapshot taken before a change is not altered by it.
    Raises AssertionError if a node or an edge does not have the shape the store promises.
    """
    graph = state.graph
    nodes: dict[str, Record] = {}
    for key, data in graph.nodes(data=True):
        assert set(data) == {"record"}, f"node {key} carries {sorted(data)}"
        record = data["record"]
        assert isinstance(record, Record)
        assert record.key == key, f"node {key} holds the record of {record.key}"
        nodes[key] = record
    edges: dict[tuple[str, str], frozenset[str]] = {}
    for source, target, data in graph.edges(data=True):
        assert data, f"edge {source} -> {target} has no relationship left"
        assert set(data) <= REL_VALUES, f"edge {source} -> {target} has keys {sorted(data)}"
        assert all(value is True for value in data.values()), (source, target, data)
        # Selector relationships are never stored (they live in the identity index).
        assert not SELECTOR_RELS.intersection(data), (source, target, data)
    for source, target, rels in state.edges():
        edges[(source, target)] = rels
    return {
        "nodes": nodes,
        "edges": edges,
        "by_kind": {
            kind: {ns: frozenset(keys) for ns, keys in per_ns.items()}
            for kind, per_ns in state.by_kind.items()
        },
        "by_label": {k: frozenset(key for identity in v for key in identity.members)
                     for k, v in state.by_label.items()},
        "selected": {owner: frozenset(frozenset(i.members) for i in identities)
                     for owner, identities in state.selected.items()},
        "identities": {
            (ns, frozenset(identity.labels.items())): (
                frozenset(identity.members), dict(identity.selected_by))
            for ns, per_ns in state.identities.items() for identity in per_ns.values()
        },
        "by_label_key": {k: frozenset(v) for k, v in state.by_label_key.items()},
        "selectors": {ns: dict(index.owners) for ns, index in state.selectors.items()},
        "selector_anchors": {
            ns: (
                {k: frozenset(v) for k, v in index.by_pair.items()},
                {k: frozenset(v) for k, v in index.by_key.items()},
                frozenset(index.everything),
                frozenset(index.unanchored),
            )
            for ns, index in state.selectors.items()
        },
        "pending": {k: frozenset(v) for k, v in state.pending.items()},
    }


def empty_index_entries(state: GraphState) -> list[str]:
    """Paths of index entries that are empty sets, dicts or tuples (which should be deleted)."""
    found: list[str] = []
    for kind, per_ns in state.by_kind.items():
        if not per_ns:
            found.append(f"by_kind[{kind!r}]")
        found.extend(f"by_kind[{kind!r}][{ns!r}]" for ns, keys in per_ns.items() if not keys)
    found.extend(f"by_label[{k!r}]" for k, v in state.by_label.items() if not v)
    for ns, per_ns in state.identities.items():
        if not per_ns:
            found.append(f"identities[{ns!r}]")
        found.extend(f"identities[{ns!r}][{identity!r}]" for identity in per_ns.values()
                     if not identity.members)
    found.extend(f"by_label_key[{k!r}]" for k, v in state.by_label_key.items() if not v)
    for ns, index in state.selectors.items():
        if not index:
            found.append(f"selectors[{ns!r}]")
        found.extend(f"selectors[{ns!r}].by_pair[{k!r}]" for k, v in index.by_pair.items()
                     if not v)
        found.extend(f"selectors[{ns!r}].by_key[{k!r}]" for k, v in index.by_key.items()
                     if not v)
    found.extend(f"pending[{k!r}]" for k, v in state.pending.items() if not v)
    found.extend(f"selected[{k!r}]" for k, v in state.selected.items() if not v)
    found.extend(f"pending[{k!r}] (target present)" for k in state.pending if k in state.graph)
    return found


def diff(left: dict[str, Any], right: dict[str, Any]) -> str:
    """A readable account of where two snapshots differ, for assertion messages."""
    lines: list[str] = []
    for part in left:
        a, b = left[part], right[part]
        if a == b:
            continue
        for key in sorted(set(a) | set(b), key=repr):
            if a.get(key) != b.get(key):
                lines.append(f"{part}[{key!r}]: {a.get(key)!r} != {b.get(key)!r}")
    return "\n".join(lines)
