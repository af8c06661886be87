"""How big each of the graph's per-object structures is: a census for leak hunting.

Every structure the store keeps per object, per label set or per selector is counted here
by entries, so a test can check that objects created and deleted again leave each one where
it was (tests/graph/test_deleted_objects_release_their_structures.py), and a soak can show
that the counts stay put while RSS does (benchmarks/informers.py soak). Module-level caches
that are bounded by design (cleared when full) are counted too, for the soak, but tests
leave them out: a cache may keep what a deleted object used until it is next cleared.
"""

from __future__ import annotations

import sys

from netsight.graph.model import core_records, field_values, selectors
from netsight.graph.store import building, digraph
from netsight.graph.store.live import GraphStore

# What a create-then-delete cycle must leave unchanged (the change ring, the generation and
# the kinds' generations record history, and grow by design).
PER_OBJECT = (
    "nodes", "edges", "by_kind_keys", "identities", "label_sets", "identity_members", "label_index",
    "label_index_entries", "label_keys", "label_key_values", "selector_namespaces",
    "selector_owners", "selector_buckets", "selected_owners", "selected_entries",
    "selected_by_entries", "pending_targets", "pending_edges", "problems", "invalid",
    "shared_label_maps",
)


def census(store: GraphStore, *, edges: bool = True) -> dict[str, int]:
    """Entries in each structure; ``edges=False`` skips the edge count (a pass over every
    node), for frequent sampling."""
    state = store.state
    # One pass, one namespace's label contents at a time: a soak takes censuses in the
    # process it measures, so what the census allocates must not show as RSS (every
    # identity's frozenset at once would leave a hole in the heap, which the soak's RSS
    # slope would then measure).
    identities = label_sets = members = selected_by = 0
    for per_ns in state.identities.values():
        contents: set[frozenset[tuple[str, str]]] = set()
        for identity in per_ns.values():
            identities += 1
            contents.add(frozenset(identity.labels.items()))
            members += len(identity.members)
            selected_by += len(identity.selected_by)
        label_sets += len(contents)
    buckets = 0
    for index in state.selectors.values():
        buckets += sum(map(len, index.by_pair.values())) + sum(map(len, index.by_key.values()))
        buckets += len(index.everything) + len(index.unanchored)
    return {
        "nodes": len(digraph.nodes(state.graph)),
        "edges": int(state.graph.number_of_edges()) if edges else -1,
        "by_kind_keys": sum(len(keys) for per_ns in state.by_kind.values()
                            for keys in per_ns.values()),
        "identities": identities,
        # Distinct (namespace, label content): equal to identities unless two identities
        # hold equal labels in two maps (a label map not shared as it should be).
        "label_sets": label_sets,
        "identity_members": members,
        "selected_by_entries": selected_by,
        "label_index": len(state.by_label),
        "label_index_entries": sum(map(len, state.by_label.values())),
        "label_keys": len(state.by_label_key),
        "label_key_values": sum(map(len, state.by_label_key.values())),
        "selector_namespaces": len(state.selectors),
        "selector_owners": sum(len(index.owners) for index in state.selectors.values()),
        "selector_buckets": buckets,
        "selected_owners": len(state.selected),
        "selected_entries": sum(map(len, state.selected.values())),
        "pending_targets": len(state.pending),
        "pending_edges": sum(map(len, state.pending.values())),
        "problems": len(store.problems),
        "invalid": len(store.invalid_keys),
        "shared_label_maps": selectors.shared_label_maps(),
        "changes": len(store.changes),
        "kind_generations": len(store.kind_generations),
        "derived": len(store.derived),
        "kept": len(store.kept),
        # Bounded caches (cleared when full); the typed decoders' are counted by their
        # module (ingest/shared_parts.cache_sizes), which the store does not reach.
        **core_records.cache_sizes(),
        **field_values.cache_sizes(),
        **building.cache_sizes(),
        # Bytes of the hash tables keyed by object (the graph's node and adjacency dicts,
        # the by-kind key sets). Not entries: a table never shrinks when keys are deleted,
        # and grows by doubling once new keys (restarted pods' new names) have used up its
        # free slots: such a step of RSS is live memory, not fragmentation.
        "table_bytes": digraph.table_bytes(state.graph)
        + sum(sys.getsizeof(keys) for per_ns in state.by_kind.values()
              for keys in per_ns.values()),
    }


def container_bytes(store: GraphStore) -> dict[str, int]:
    """Bytes of the containers in each family of per-object structures (``sys.getsizeof``:
    a dict's or set's own table, not what it holds). A Python dict or set never shrinks
    when entries go, so under churn each one's table follows the most entries it has held;
    a family whose bytes rise while its entry counts (``census``) stay flat is tables
    settling to their high-water marks. A pass over every node: for a soak's census, not
    for frequent sampling."""
    state = store.state
    graph = state.graph
    size = sys.getsizeof
    members = selected_by = 0
    for per_ns in state.identities.values():
        for identity in per_ns.values():
            members += size(identity.members)
            selected_by += size(identity.selected_by)
    buckets = 0
    for index in state.selectors.values():
        buckets += size(index.owners) + size(index.by_pair) + size(index.by_key)
        buckets += sum(map(size, index.by_pair.values())) + sum(map(size, index.by_key.values()))
    return {
        "bytes_node_attrs": sum(map(size, digraph.nodes(graph).values())),
        "bytes_successors": sum(size(adjacent) for adjacent in digraph.successors(graph).values()
                                if adjacent is not digraph.NO_EDGES),
        "bytes_predecessors": sum(size(adjacent) for adjacent
                                  in digraph.predecessors(graph).values()
                                  if adjacent is not digraph.NO_EDGES),
        "bytes_identity_members": members,
        "bytes_identity_selected_by": selected_by,
        "bytes_label_index": size(state.by_label) + sum(map(size, state.by_label.values()))
        + size(state.by_label_key) + sum(map(size, state.by_label_key.values())),
        "bytes_selected": size(state.selected) + sum(map(size, state.selected.values())),
        "bytes_selector_buckets": buckets,
        "bytes_pending": size(state.pending) + sum(map(size, state.pending.values())),
    }

