"""The networkx DiGraph's own tables (``_node``, ``_succ``, ``_pred``), read and written here only.

networkx's public API builds a view or merges an attribute dict on every call
(``graph.nodes[key]``, ``add_edge``), which the store's per-event paths cannot afford; they
use these accessors instead, so a networkx release that changes its tables breaks this
module alone. Everything else reads the graph through the store and its views.

A node's attributes are one slotted :class:`NodeData` holding its record. An edge's data is
the set of its relationships as ``{Rel: True}`` keys, one dict shared by every edge with
the same set and never mutated: changing an edge's relationships swaps in another shared
dict (copy-on-write). Readers must treat edge data as read-only.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, MutableMapping
from typing import Any

import networkx as nx

from netsight.graph.model.kinds import Rel
from netsight.graph.model.records import Record

EdgeData = dict[Rel, bool]
# node key -> neighbour key -> the edge's data
Adjacency = dict[str, dict[str, EdgeData]]


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
    graph._succ[key] = {}
    graph._pred[key] = {}


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
    elif rel in data:
        return
    else:
        shared = _edge_data(frozenset(data) | {rel})
    succ[target] = shared
    graph._pred[target][source] = shared


def link_new(graph: nx.DiGraph, source: str, target: str, rel: Rel) -> None:
    """:func:`link` of an edge known to be absent: one end is a node just added."""
    shared = _SINGLE.get(rel) or _single(rel)
    graph._succ[source][target] = shared
    graph._pred[target][source] = shared


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
        del succ[target]
        del graph._pred[target][source]


def table_bytes(graph: nx.DiGraph) -> int:
    """Bytes of the three tables keyed by node (their own hash tables, not what they hold)."""
    return sum(map(sys.getsizeof, (graph._node, graph._succ, graph._pred)))
