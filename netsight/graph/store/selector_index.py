"""The selectors of one namespace, indexed by a label each requires.

When a pod arrives or its labels change, the graph must find every Service and policy
selector of its namespace that matches it. Testing all of them costs O(selectors) per pod
(about a hundred in a busy namespace), which would be much of a large sync. Instead each
selector is filed under one *anchor* - a label it cannot match without - and a pod looks up
only the anchors its own labels name, then tests those few candidates in full.

Anchors, best first: a ``matchLabels`` pair; an ``In`` requirement (filed under each of its
values); an ``Exists`` requirement (filed under the key). An empty selector matches every
pod and needs no test; a selector with only ``NotIn``/``DoesNotExist`` terms has no anchor
and is tested against every pod.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from netsight.graph.model.kinds import Rel
from netsight.graph.model.selectors import LabelSelector, Operator

Selected = tuple[Rel, LabelSelector]


@dataclass(slots=True)
class NamespaceSelectors:
    owners: dict[str, Selected] = field(default_factory=dict)
    # (label key, value) -> owners whose selector requires that pair (or lists it under In)
    by_pair: dict[tuple[str, str], set[str]] = field(default_factory=dict)
    # label key -> owners whose selector requires the key to exist
    by_key: dict[str, set[str]] = field(default_factory=dict)
    # owners whose selector is empty: they select every pod of the namespace
    everything: set[str] = field(default_factory=set)
    # owners whose selector has no anchor: tested against every pod
    unanchored: set[str] = field(default_factory=set)

    def __bool__(self) -> bool:
        return bool(self.owners)

    def add(self, owner: str, selected: Selected) -> None:
        self.discard(owner)
        self.owners[owner] = selected
        for bucket in self._buckets(selected[1], create=True):
            bucket.add(owner)

    def discard(self, owner: str) -> Selected | None:
        selected = self.owners.pop(owner, None)
        if selected is None:
            return None
        selector = selected[1]
        for bucket in self._buckets(selector, create=False):
            bucket.discard(owner)
        # Drop emptied buckets so the index never keeps entries for departed selectors.
        for pair in _anchor_pairs(selector):
            if not self.by_pair.get(pair, True):
                del self.by_pair[pair]
        key = _anchor_key(selector)
        if key is not None and not self.by_key.get(key, True):
            del self.by_key[key]
        return selected

    def matching(self, labels: Mapping[str, str]) -> Iterator[tuple[str, Rel]]:
        """Every owner whose selector matches ``labels``, with its edge type."""
        owners = self.owners
        for owner in self.everything:
            yield owner, owners[owner][0]
        candidates: set[str] = set(self.unanchored)
        by_pair, by_key = self.by_pair, self.by_key
        if by_pair:
            for pair in labels.items():
                found = by_pair.get(pair)
                if found:
                    candidates |= found
        if by_key:
            for key in labels:
                found = by_key.get(key)
                if found:
                    candidates |= found
        for owner in candidates:
            rel, selector = owners[owner]
            if selector.matches(labels):
                yield owner, rel

    def _buckets(self, selector: LabelSelector, *, create: bool) -> Iterator[set[str]]:
        if selector.is_empty:
            yield self.everything
            return
        pairs = _anchor_pairs(selector)
        if pairs:
            for pair in pairs:
                bucket = self.by_pair.setdefault(pair, set()) if create \
                    else self.by_pair.get(pair)
                if bucket is not None:
                    yield bucket
            return
        key = _anchor_key(selector)
        if key is not None:
            bucket = self.by_key.setdefault(key, set()) if create else self.by_key.get(key)
            if bucket is not None:
                yield bucket
            return
        yield self.unanchored


def _anchor_pairs(selector: LabelSelector) -> tuple[tuple[str, str], ...]:
    if selector.match_labels:
        return selector.match_labels[:1]
    for req in selector.requirements:
        if req.operator is Operator.IN:
            # An In with no values matches nothing: no pairs, so it ends up unanchored and
            # is tested (and fails) like any selector without an anchor.
            return tuple((req.key, value) for value in sorted(req.values))
    return ()


def _anchor_key(selector: LabelSelector) -> str | None:
    if selector.match_labels:
        return None
    if any(req.operator is Operator.IN for req in selector.requirements):
        return None
    for req in selector.requirements:
        if req.operator is Operator.EXISTS:
            return req.key
    return None
