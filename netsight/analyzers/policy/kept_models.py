"""What the policy engine keeps with a view across calls: a model per policy record and the
admin tiers.

Kept in ``GraphView.kept``, so a scoped view keeps its own and an overlay nothing: a scoped
caller never shares an entry with the whole graph. An overlay (a what-if answer) reads the
models kept beneath it and builds only its own records' models, which it never writes
there: the live graph's keepings are the same after a what-if call as before. A model is
rebuilt only when its record changes (records are immutable, so identity says
"unchanged"); the tiers are collected again when an admin policy kind changed.
"""

from __future__ import annotations

from collections import ChainMap
from collections.abc import Callable, MutableMapping
from dataclasses import dataclass, field
from typing import TypeVar

from netsight.analyzers.policy import anp, cnp, istio_authz
from netsight.analyzers.policy.peers import IPBlock
from netsight.analyzers.policy.verdict import Tri
from netsight.graph.model.records import GenericRecord, Record
from netsight.graph.store.live import GraphView
from netsight.graph.store.overlay import OverlayView

M = TypeVar("M")
_MODEL_LIMIT = 100_000  # models kept per view at most (cleared past it)
ADMIN_KINDS = (anp.ANP_KIND, anp.BANP_KIND, anp.CNP_KIND)


@dataclass
class Tiers:
    """The cluster-scoped policies, sorted, and per namespace the ones that could select its
    pods. Kept across calls while the policy records are the same objects (records are
    immutable: same objects, same policies), so a call pays one pass over the records, not
    a rebuild."""

    records: tuple[Record, ...]
    admins: list[anp.AdminPolicy]
    baselines: list[anp.AdminPolicy]
    kinds: frozenset[str]
    # namespace -> (its Namespace record when filtered, admins, baselines)
    by_namespace: dict[str, tuple[Record | None, list[anp.AdminPolicy],
                                  list[anp.AdminPolicy]]] = field(default_factory=dict)
    # PolicyEngine.applicable across calls: (namespace, labels, host network) -> (the
    # Namespace record it was found with, admins, baselines, applies by id).
    applicable: dict[tuple[str, tuple[tuple[str, str], ...], bool], tuple[
        Record | None, list[anp.AdminPolicy], list[anp.AdminPolicy], dict[int, Tri]]] = \
        field(default_factory=dict)
    _networks: tuple[IPBlock, ...] | None = None

    def networks(self) -> tuple[IPBlock, ...]:
        """Every ``networks`` CIDR of the admin policies' rules."""
        if self._networks is None:
            found: dict[IPBlock, None] = {}
            for policy in (*self.admins, *self.baselines):
                for admin_rule in (*policy.ingress, *policy.egress):
                    for admin_peer in admin_rule.peers:
                        found.update(dict.fromkeys(admin_peer.networks))
            self._networks = tuple(found)
        return self._networks


@dataclass(eq=False)
class Kept:
    """What the policy engine keeps with one view across calls (``GraphView.kept``, so a
    scoped view keeps its own and an overlay none): a model per policy record, rebuilt
    only when its record changes (records are immutable, so identity says "unchanged"),
    and the admin tiers while no admin policy changed."""

    models: MutableMapping[str, tuple[Record, object]] = field(default_factory=dict)
    istio: MutableMapping[str, tuple[GenericRecord, istio_authz.M]] = field(
        default_factory=dict)
    built: int = 0  # models built so far: what warm() tells its caller
    # the admin kinds' generations the tiers were collected at, and the tiers
    tiers: tuple[tuple[int, ...], Tiers] | None = None

    def model(self, record: Record, build: Callable[[M], object]) -> object:
        cached = self.models.get(record.key)
        if cached is not None and cached[0] is record:
            return cached[1]
        self.built += 1
        if len(self.models) >= _MODEL_LIMIT:
            self.models.clear()  # bounded: deleted policies never pile up
        model = build(record)  # type: ignore[arg-type]
        self.models[record.key] = (record, model)
        return model

    def admin_tiers(self, view: GraphView) -> Tiers:
        # While no admin policy changed in this graph, the tiers last collected stand.
        generations = tuple(view.kind_generation(kind) for kind in ADMIN_KINDS)
        held = self.tiers
        if held is not None and held[0] == generations:
            return held[1]
        records = tuple(r for kind in ADMIN_KINDS for r in view.for_each(kind))
        tiers = held[1] if held is not None and held[1].records == records else \
            self._collect_tiers(records)
        self.tiers = (generations, tiers)
        return tiers

    def _collect_tiers(self, records: tuple[Record, ...]) -> Tiers:
        admins: list[anp.AdminPolicy] = []
        baselines: list[anp.AdminPolicy] = []
        for record in records:
            if not isinstance(record, GenericRecord):
                continue
            if record.kind == anp.CNP_KIND:
                if not cnp.evaluated(record):
                    continue  # another group or version: see engine.UNEVALUATED
                model = self.model(record, cnp.build)
            elif not record.api_version.startswith(anp.GROUP + "/") or (
                    record.kind == anp.BANP_KIND and record.name != anp.BANP_NAME):
                continue  # the API server admits no other BANP name
            else:
                model = self.model(record, anp.build)
            assert isinstance(model, anp.AdminPolicy)
            (baselines if model.baseline else admins).append(model)
        for tier in (admins, baselines):
            tier.sort(key=lambda p: (p.priority, p.record.name))
        kinds = frozenset(p.record.kind for tier in (admins, baselines) for p in tier)
        return Tiers(records, admins, baselines, kinds)


def kept(view: GraphView) -> Kept:
    """The engine's keepings for ``view`` (fresh for a view that keeps nothing; over an
    overlay, reading the keepings beneath)."""
    store = view.kept()
    found = store.get("policy.engine")
    if not isinstance(found, Kept):
        found = store["policy.engine"] = _over(view)
    return found


def _over(view: GraphView) -> Kept:
    if not isinstance(view, OverlayView):
        return Kept()
    beneath = view.base.kept().get("policy.engine")
    if not isinstance(beneath, Kept):
        return Kept()
    # Reads fall through to the models beneath; writes (the delta's models) stay here.
    return Kept(models=ChainMap({}, beneath.models), istio=ChainMap({}, beneath.istio))
