"""The networkx DiGraph's own tables (``_node``, ``_succ``, ``_pred``), read and written here only.

networkx's public API builds a view or merges an attribute dict on every call
(``graph.nodes[key]``, ``add_edge``), which the store's per-event paths cannot afford; they
use these accessors instead, so a networkx release that changes its tables breaks this
module alone. Everything else reads the graph through the store and its views.

A node's attributes are one slotted :class:`NodeData` holding its record. An edge's data is
the set of its relationships as ``{Rel: True}`` keys, one dict shared by every edge with
the same set and never mutated: changing an edge's relationships swaps in another shared
dict (copy-on-write). Readers must treat edge data as read-only.

A node without out-edges (every pod) or in-edges holds :data:`NO_EDGES`, one shared
read-only mapping, in that table rather than an empty dict of its own; its first edge gives
it a dict, its last one leaving gives the dict back.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping, MutableMapping
from types import MappingProxyType
from typing import Any

import networkx as nx

from netsight.graph.model.kinds import Rel
from netsight.graph.model.records import Record

EdgeData = dict[Rel, bool]
# node key -> neighbour key -> the edge's data
Adjacency = dict[str, Mapping[str, EdgeData]]

# Read-only, so that anything writing an edge other than through this module (networkx's
# add_edge) fails loudly instead of giving every edgeless node that edge.
NO_EDGES: Mapping[str, EdgeData] = MappingProxyType({})


class NodeData(MutableMapping[str, Any]):
    """A node's attributes: just its record, in one slot instead of a dict; it reads the
    same through networkx (``graph.nodes[key]["record"]``, ``graph.nodes(data=True)``)."""

    __slots__ = ("record",)

    def __init__(self, record: Record) -> None:
        self.record = record

    def __getitem__(self, name: str) -> Any:
        if name != "record":
            raise KeyError(name)
        return self.record

    def __setitem__(self, name: str, value: Any) -> None:
        if name != "record" or not isinstance(value, Record):
            raise KeyError(f"a node holds one attribute, 'record' (a Record); got {name!r}")
        self.record = value

    def __delitem__(self, name: str) -> None:
        raise KeyError(f"a node's record cannot be deleted ({name!r}); remove the node")

    def __iter__(self) -> Iterator[str]:
        yield "record"

    def __len__(self) -> int:
        return 1


def nodes(graph: nx.DiGraph) -> dict[str, NodeData]:
    """The node table: key -> attributes. Read-only for callers."""
    table: dict[str, NodeData] = graph._node
    return table


def successors(graph: nx.DiGraph) -> Adjacency:
    """The out-edge table: source -> target -> edge data. Read-only for callers."""
    table: Adjacency = graph._succ
    return table


def predecessors(graph: nx.DiGraph) -> Adjacency:
    """The in-edge table: target -> source -> edge data. Read-only for callers."""
    table: Adjacency = graph._pred
    return table


def add_node(graph: nx.DiGraph, record: Record) -> None:
    """What ``DiGraph.add_node`` does for a key it does not hold, with a slotted attribute
    holder instead of a dict."""
    key = record.key
    graph._node[key] = NodeData(record)
    graph._succ[key] = NO_EDGES
    graph._pred[key] = NO_EDGES


def set_record(graph: nx.DiGraph, key: str, record: Record) -> None:
    """Replace the record of a node the graph holds."""
    graph._node[key].record = record


_EDGE_DATA: dict[frozenset[Rel], EdgeData] = {}


def _edge_data(rels: frozenset[Rel]) -> EdgeData:
    data = _EDGE_DATA.get(rels)
    if data is None:
        data = _EDGE_DATA[rels] = dict.fromkeys(sorted(rels), True)
    return data


_SINGLE: dict[Rel, EdgeData] = {}


def _single(rel: Rel) -> EdgeData:
    data = _SINGLE[rel] = _edge_data(frozenset((rel,)))
    return data


def link(graph: nx.DiGraph, source: str, target: str, rel: Rel) -> None:
    """Add ``rel`` to the edge source -> target; both nodes must exist."""
    succ = graph._succ[source]
    data = succ.get(target)
    if data is None:  # the usual case: a new edge with one relationship
        shared = _SINGLE.get(rel) or _single(rel)
        if succ is NO_EDGES:  # its first edge: a dict of its own
            succ = graph._succ[source] = {}
    elif rel in data:
        return
    else:
        shared = _edge_data(frozenset(data) | {rel})
    succ[target] = shared
    pred = graph._pred[target]
    if pred is NO_EDGES:
        pred = graph._pred[target] = {}
    pred[source] = shared


def link_new(graph: nx.DiGraph, source: str, target: str, rel: Rel) -> None:
    """:func:`link` of an edge known to be absent: one end is a node just added."""
    shared = _SINGLE.get(rel) or _single(rel)
    # Inline, not a helper: this runs for every edge an event adds.
    table = graph._succ
    adjacent = table[source]
    if adjacent is NO_EDGES:  # its first edge: a dict of its own
        adjacent = table[source] = {}
    adjacent[target] = shared
    table = graph._pred
    adjacent = table[target]
    if adjacent is NO_EDGES:
        adjacent = table[target] = {}
    adjacent[source] = shared


def unlink(graph: nx.DiGraph, source: str, target: str, rel: Rel) -> None:
    """Remove ``rel`` from the edge source -> target, and the edge with its last one."""
    succ = graph._succ.get(source)
    data = succ.get(target) if succ is not None else None
    if data is None or rel not in data:
        return
    rest = frozenset(data) - {rel}
    if rest:
        shared = _edge_data(rest)
        succ[target] = shared
        graph._pred[target][source] = shared
    else:
        _drop(graph._succ, source, target)
        _drop(graph._pred, target, source)


def _drop(table: dict[str, Any], key: str, other: str) -> None:
    """Remove ``other`` from the node's adjacency; its last edge gone, the node shares
    NO_EDGES again (a dict keeps its table however few keys remain)."""
    adjacent: dict[str, EdgeData] = table[key]
    if len(adjacent) == 1:
        table[key] = NO_EDGES
    else:
        del adjacent[other]


def remove_node(graph: nx.DiGraph, key: str) -> None:
    """What ``DiGraph.remove_node`` does for a node the graph holds, its neighbours left
    without edges sharing NO_EDGES again."""
    del graph._node[key]
    for target in graph._succ.pop(key):
        _drop(graph._pred, target, key)
    for source in graph._pred.pop(key):
        _drop(graph._succ, source, key)


def table_bytes(graph: nx.DiGraph) -> int:
    """Bytes of the three tables keyed by node (their own hash tables, not what they hold)."""
    return sum(map(sys.getsizeof, (graph._node, graph._succ, graph._pred)))
