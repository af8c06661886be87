"""A tool that needs a provider's CRDs names a provider the informers know, so a live server
offers it exactly while that provider is installed."""

from __future__ import annotations

from netsight.analyzers.tools import TOOLS
from netsight.graph.ingest.discovery import PROVIDER_GROUPS


def test_provider_tools_name_known_providers() -> None:
    known = {provider for provider, _ in PROVIDER_GROUPS.values()}
    declared = {name: spec.provider for name, spec in TOOLS.items() if spec.provider}
    assert declared == {"check_route_resolution": "gateway-api",
                        "check_gateway_status": "gateway-api",
                        "gateway_list": "gateway-api", "gateway_get": "gateway-api",
                        "check_mesh_config": "istio",
                        "istio_mtls_status": "istio"}
    assert set(declared.values()) <= known
