"""What resolved a finding: the graph changes between the last generation where it held and
the first where it no longer did, kept where they touch its evidence, abstracted.

Which changes count, in order (the first that finds any wins):

1. changes to the objects in the finding's evidence (its resource and every evidence
   object), and to objects that are neighbours of them now or were just before the change
   (a pod relabelled into a Service's selector);
2. otherwise objects added, deleted or edited in the namespaces the evidence names, of the
   kinds the finding's analyzer reads (a ReferenceGrant created in the backend's
   namespace) — of pods only relabellings: their churn would pass for a fix; of a kind the
   evidence names objects of, only objects added or deleted.

EndpointSlices and Endpoints are never a fix: a controller writes them as a consequence.
The finding's own object deleted, or its namespace gone, is a *coincidence*, not a fix. No
change found at all (the ring lost them, or nothing netsight keeps changed) is *unobserved*.

A change is described down to the fields that changed, as ``Kind.field.path: before →
after`` with values shaped as signatures shape them
(``DestinationRule.spec.trafficPolicy.tls.mode: DISABLE → ISTIO_MUTUAL``), list entries by
index (``NetworkPolicy.ingress[0].from[1]: added {namespaceSelector: …}``), and maps of labels
as the keys that changed (``Service.selector[version]: changed``). The sorted,
de-duplicated descriptions joined are the fix: the same fix in two clusters reads the same
and is counted together.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from netsight.analyzers.core.signatures import label_key, value_shape
from netsight.graph.model.kinds import Kind, make_key, parse_key
from netsight.graph.model.records import Record
from netsight.graph.store.live import Change, EventType
from netsight.graph.store.view import GraphView

CONSEQUENCES = frozenset({Kind.ENDPOINT_SLICE, Kind.ENDPOINTS})
CHURNING = frozenset({Kind.POD, Kind.REPLICA_SET})
MAX_CHANGES = 12  # described changes per fix at most
_FIELD = re.compile(r"^[a-z][A-Za-z0-9_]*$")  # a field name; other keys are data
# Fields holding label maps (records' snake_case names and the API's): keys, never values.
_LABEL_MAPS = re.compile(r".*[._](labels|selector|matchLabels|match_labels|annotations|"
                         r"nodeSelector|node_selector)$", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Resolution:
    kind: str  # "fix", "coincidence" or "unobserved"
    fix: str
    changes: tuple[str, ...]


def bare(key: str) -> str:
    """A graph key with its kind's API group dropped, as findings name objects."""
    kind, slash, rest = key.partition("/")
    return f"{kind.partition('.')[0]}{slash}{rest}"


def kind_of(key: str) -> str:
    return key.partition("/")[0].partition(".")[0]


def resolve(subject: str, evidence: frozenset[str], namespaces: frozenset[str],
            reads: frozenset[str], held: Mapping[str, Record | None],
            window: Sequence[Change], view: GraphView, *, complete: bool) -> Resolution:
    """How the finding on ``subject`` (a bare key) ended. ``window``: the ring's changes
    after the last generation where it held; ``complete``: the ring still held all of them.
    ``held``: the evidence objects' records when it last held."""
    oid = parse_key(subject)
    if oid.namespace and oid.namespace not in view.namespaces():
        return Resolution("coincidence", "namespace deleted", ("namespace deleted",))
    if any(c.type is EventType.DELETED and bare(c.key) == subject for c in window) \
            or not view.exists(subject):
        return Resolution("coincidence", f"{oid.kind} deleted", (f"{oid.kind} deleted",))
    neighbours = set(evidence)
    for key in evidence:
        # Keys of kinds outside their group's primary one carry the group: not found here,
        # such an object's neighbours are left out.
        if view.exists(key):
            neighbours.update(bare(k) for k in view.adjacent_keys(key))
    touching = [c for c in window if kind_of(c.key) not in CONSEQUENCES and (
        bare(c.key) in neighbours or not evidence.isdisjoint(map(bare, c.related)))]
    if not touching:
        # An edit of another object of a kind the evidence names is not this finding's fix
        # (another Service's selector edited beside a ReferenceGrant added); an object
        # added may be (a second NetworkPolicy admitting what the first refused).
        named = {kind_of(k) for k in evidence}
        touching = [c for c in window if kind_of(c.key) in reads
                    and kind_of(c.key) not in CONSEQUENCES and _deliberate(c)
                    and parse_key(c.key).namespace in namespaces
                    and (c.type is not EventType.MODIFIED or kind_of(c.key) not in named)]
    if not touching:
        kind = "unobserved"
        text = "no change netsight keeps" if complete else "changes lost (ring overflowed)"
        return Resolution(kind, text, (text,))
    described = sorted({line for c in _merged(touching)
                        for line in describe(c, held.get(bare(c.key)), view)})
    described = described[:MAX_CHANGES]
    return Resolution("fix", "; ".join(described), tuple(described))


def _deliberate(change: Change) -> bool:
    """Pods and ReplicaSets come and go with every rollout: of those, only a relabelling
    counts (a pod given the labels a selector wants)."""
    if kind_of(change.key) not in CHURNING:
        return True
    return change.type is EventType.MODIFIED and "labels" in change.fields


def _merged(changes: Iterable[Change]) -> list[Change]:
    """One change per object: its first type (ADDED wins) and every field changed."""
    by_key: dict[str, Change] = {}
    for change in changes:
        first = by_key.get(change.key)
        if first is None:
            by_key[change.key] = change
            continue
        fields = tuple(dict.fromkeys((*first.fields, *change.fields)))
        kind = first.type if first.type is EventType.ADDED else change.type
        by_key[change.key] = Change(change.generation, change.at, kind, change.key, fields)
    return list(by_key.values())


def describe(change: Change, before: Record | None, view: GraphView) -> list[str]:
    kind = kind_of(change.key)
    if change.type is EventType.ADDED:
        return [f"added {kind}"]
    if change.type is EventType.DELETED:
        return [f"deleted {kind}"]
    after = view.get(change.key)
    lines = []
    for name in change.fields or ("?",):
        old = getattr(before, name, None) if before is not None else None
        new = getattr(after, name, None) if after is not None else None
        lines.extend(field_change(f"{kind}.{name}", old, new, known=before is not None))
    return lines


def field_change(where: str, old: Any, new: Any, *, known: bool) -> list[str]:
    """``where: before → after``, abstracted, down to the fields that changed (a
    DestinationRule's ``spec.trafficPolicy.tls.mode``, a NetworkPolicy's ``ingress[0].from[1]``
    added); a map of strings by the keys that changed."""
    if not known:
        return [f"{where}: → {value_shape(_plain(new))}"]
    lines: list[str] = []
    _diff(where, _plain(old), _plain(new), lines)
    return lines[:MAX_CHANGES] or [f"{where}: changed"]


def _diff(where: str, old: Any, new: Any, lines: list[str]) -> None:
    if old == new or len(lines) >= MAX_CHANGES:
        return
    if isinstance(old, Mapping) and isinstance(new, Mapping):
        if _LABEL_MAPS.match(where) and \
                all(isinstance(v, str) for v in (*old.values(), *new.values())):
            # Labels and selectors: which keys changed, never their values.
            for key in sorted(set(old) | set(new), key=str):
                what = "added" if key not in old else "removed" if key not in new else \
                    "changed" if old[key] != new[key] else None
                if what is not None:
                    lines.append(f"{where}[{label_key(str(key))}]: {what}")
            return
        for key in sorted(set(old) | set(new), key=str):
            name = key if _FIELD.match(str(key)) else "<key>"
            if key not in old:
                lines.append(f"{where}.{name}: added {value_shape(new[key])}")
            elif key not in new:
                lines.append(f"{where}.{name}: removed")
            else:
                _diff(f"{where}.{name}", old[key], new[key], lines)
        return
    if isinstance(old, list) and isinstance(new, list):
        for i in range(max(len(old), len(new))):
            if i >= len(old):
                lines.append(f"{where}[{i}]: added {value_shape(new[i])}")
            elif i >= len(new):
                lines.append(f"{where}[{i}]: removed")
            else:
                _diff(f"{where}[{i}]", old[i], new[i], lines)
        return
    before, after = value_shape(old), value_shape(new)
    lines.append(f"{where}: {before} → {after}" if before != after else f"{where}: changed")


def _plain(value: Any) -> Any:
    """Records hold tuples of small records: their fields as maps, for shaping."""
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    slots = getattr(type(value), "__slots__", None)
    if slots and not isinstance(value, str | bytes):
        return {s: _plain(getattr(value, s, None)) for s in slots if not s.startswith("_")}
    if hasattr(value, "__dataclass_fields__"):
        return {k: _plain(getattr(value, k)) for k in value.__dataclass_fields__}
    return value


def evidence_keys(resource: Any, evidence: Iterable[Any]) -> frozenset[str]:
    """The bare keys of a finding's resource and evidence objects (ResourceRefs), and of the
    objects evidence values name (a backendRef's Service)."""
    evidence = list(evidence)
    refs = [resource, *(e.resource for e in evidence)]
    keys = {make_key(r.kind, r.namespace or "", r.name) for r in refs if r is not None}
    for item in evidence:
        value = item.value
        if isinstance(value, Mapping) and isinstance(value.get("kind"), str) \
                and isinstance(value.get("name"), str):
            namespace = value.get("namespace") or item.resource.namespace or ""
            keys.add(make_key(value["kind"], str(namespace), value["name"]))
    return frozenset(keys)


def evidence_namespaces(resource: Any, evidence: Iterable[Any]) -> frozenset[str]:
    """Namespaces of the evidence objects and those their values name (a backendRef's)."""
    spaces = {r.namespace for r in (resource, *(e.resource for e in evidence))
              if r is not None and r.namespace}
    for item in evidence:
        value = item.value
        if isinstance(value, Mapping) and isinstance(value.get("namespace"), str):
            spaces.add(value["namespace"])
    return frozenset(spaces)
