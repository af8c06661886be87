"""Every analyzer analyze_config runs, in order. A new analyzer module is added here."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from types import ModuleType

from netsight.analyzers import (
    endpoints,
    gateway_api,
    ingest,
    ingresses,
    istio_policies,
    mesh_config,
    network_policies,
    services,
    workloads,
)
from netsight.analyzers.base import AnalyzerMetadata
from netsight.analyzers.contracts import Finding
from netsight.graph.store import GraphView

Check = Callable[[GraphView, str | None], Iterator[Finding]]

ANALYZERS: tuple[ModuleType, ...] = (ingest, services, endpoints, workloads, gateway_api,
                                      network_policies, istio_policies, mesh_config,
                                      ingresses)


def metadata_of(module: ModuleType) -> AnalyzerMetadata:
    meta = module.METADATA
    assert isinstance(meta, AnalyzerMetadata)
    return meta


def check_of(module: ModuleType) -> Check:
    check: Check = module.check
    return check


def by_name() -> dict[str, ModuleType]:
    return {metadata_of(m).name: m for m in ANALYZERS}
