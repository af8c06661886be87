"""A GraphView that remembers which kinds an analyzer read, for the registry meta-tests."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from collections.abc import Set as AbstractSet

from netsight.graph.model.kinds import Rel, parse_key
from netsight.graph.model.records import Record
from netsight.graph.model.selectors import LabelSelector
from netsight.graph.store.live import GraphStore, GraphView


class RecordingView(GraphView):
    __slots__ = ("read",)

    def __init__(self, store: GraphStore) -> None:
        super().__init__(store)
        self.read: set[str] = set()

    def get(self, key: str) -> Record | None:
        self.read.add(parse_key(key).kind)
        return super().get(key)

    def exists(self, key: str) -> bool:
        self.read.add(parse_key(key).kind)
        return super().exists(key)

    def for_each(self, kind: str, namespace: str | None = None) -> Iterator[Record]:
        self.read.add(kind)
        return super().for_each(kind, namespace)

    def untracked(self, kind: str) -> str | None:
        self.read.add(kind)  # whether a missing object of the kind may exist is about it
        return super().untracked(kind)

    def count(self, kind: str, namespace: str | None = None) -> int:
        self.read.add(kind)
        return super().count(kind, namespace)

    def neighbors(self, key: str, rel: Rel, *, incoming: bool = False,
                  kind: str | None = None) -> Iterator[Record]:
        for record in super().neighbors(key, rel, incoming=incoming, kind=kind):
            self.read.add(record.kind)
            yield record

    def matching(self, namespace: str, selector: LabelSelector) -> Iterator[Record]:
        for record in super().matching(namespace, selector):
            self.read.add(record.kind)
            yield record

    def identities(self) -> Iterator[tuple[str, Mapping[str, str], AbstractSet[str],
                                           Mapping[str, Rel]]]:
        for identity in super().identities():
            self.read.update(parse_key(key).kind for key in identity[2])
            yield identity

    def matching_label_maps(self, namespace: str, selector: LabelSelector
                            ) -> Iterator[Mapping[str, str]]:
        for labels in super().matching_label_maps(namespace, selector):
            self.read.add("Pod")  # identities of pod-likes; which kinds, the maps do not say
            yield labels
