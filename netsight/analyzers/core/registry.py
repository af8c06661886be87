"""Every analyzer analyze_config runs, in order. A new analyzer module is added here."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from types import ModuleType

from netsight.analyzers.checks import (
    gateway_routes,
    ingress_lint,
    input_problems,
    istio_policy_lint,
    mesh_config,
    network_policy_lint,
    orphan_slices,
    statefulset_services,
)
from netsight.analyzers.core.base import AnalyzerMetadata
from netsight.analyzers.core.contracts import Finding
from netsight.analyzers.services import inspection
from netsight.graph.store.live import GraphView

Check = Callable[[GraphView, str | None], Iterator[Finding]]

ANALYZERS: tuple[ModuleType, ...] = (input_problems, inspection, orphan_slices,
                                      statefulset_services, gateway_routes,
                                      network_policy_lint, istio_policy_lint, mesh_config,
                                      ingress_lint)


def metadata_of(module: ModuleType) -> AnalyzerMetadata:
    meta = module.METADATA
    assert isinstance(meta, AnalyzerMetadata)
    return meta


def check_of(module: ModuleType) -> Check:
    check: Check = module.check
    return check


def by_name() -> dict[str, ModuleType]:
    return {metadata_of(m).name: m for m in ANALYZERS}
