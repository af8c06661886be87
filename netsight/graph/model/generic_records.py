"""Records of the kinds read generically: Secrets and ConfigMaps, whose data is judged and
then dropped, and every other kind, of which networking CRDs keep spec and status."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

import orjson

from netsight.graph.model.field_values import frozen_copy, optional_str
from netsight.graph.model.kinds import api_group
from netsight.graph.model.mesh_settings import read_mesh_settings
from netsight.graph.model.pem import ca_bundle_problem, istio_credential, tls_data_problem
from netsight.graph.model.records import (
    DNS_CONFIG_KEYS,
    DNS_CONFIG_MAPS,
    ConfigMapRecord,
    CustomResourceDefinitionRecord,
    GenericRecord,
    Record,
    SecretRecord,
)

# API groups whose objects keep spec and status on their generic records: the mesh, CNI and
# gateway CRDs that later analyzers read. Other unknown kinds keep identity and labels only.
NETWORKING_GROUPS = frozenset(
    {
        "gateway.networking.k8s.io",
        "gateway.networking.x-k8s.io",
        "policy.networking.k8s.io",
        "networking.istio.io",
        "security.istio.io",
        "telemetry.istio.io",
        "extensions.istio.io",
        "cilium.io",
        "crd.projectcalico.org",
        "projectcalico.org",
        "policy.linkerd.io",
        "linkerd.io",
        "kuma.io",
        "gateway.kgateway.dev",
        "gateway.solo.io",
        "gateway.envoyproxy.io",
    }
)


def _secret(raw: Mapping[str, Any], base: dict[str, Any]) -> Record:
    if api_group(base["api_version"]) != "":
        return generic_record(raw, base)  # a custom kind named Secret
    data, string_data = raw.get("data"), raw.get("stringData")
    checked = isinstance(data, dict) or isinstance(string_data, dict)
    written = raw.get("type")
    # A type that is not a string is one field at fault: the Secret (its identity, which
    # references resolve by, and its data's verdict) is kept and the value reported.
    invalid = None if written is None or isinstance(written, str) else \
        orjson.dumps(written, default=repr).decode()[:100]
    type_ = None if invalid else optional_str(written, "type")
    if not checked:
        return SecretRecord(**base, type=type_, invalid_type=invalid)
    credential = istio_credential(data, string_data)
    return SecretRecord(**base, type=type_, invalid_type=invalid,
                        tls_checked=True, tls_problem=tls_data_problem(data, string_data),
                        credential_problem=credential.problem,
                        credential_not_before=credential.not_before,
                        credential_not_after=credential.not_after)


def _config_map(raw: Mapping[str, Any], base: dict[str, Any]) -> Record:
    if api_group(base["api_version"]) != "":
        return generic_record(raw, base)  # a custom kind named ConfigMap
    data, binary = raw.get("data"), raw.get("binaryData")
    checked = isinstance(data, dict) or isinstance(binary, dict)
    dns_data = None
    if (base["namespace"], base["name"]) in DNS_CONFIG_MAPS and isinstance(data, dict):
        dns_data = MappingProxyType({key: value for key, value in data.items()
                                     if key in DNS_CONFIG_KEYS and isinstance(value, str)})
    linkerd_values = data.get("values") if base["name"] == LINKERD_CONFIG_MAP and \
        isinstance(data, dict) else None
    return ConfigMapRecord(**base, ca_checked=checked,
                           linkerd_values=linkerd_values if isinstance(linkerd_values, str)
                           else None,
                           ca_problem=ca_bundle_problem(data, binary) if checked else None,
                           dns_data=dns_data,
                           mesh_config=read_mesh_settings(base["namespace"], base["name"],
                                                          data))


LINKERD_CONFIG_MAP = "linkerd-config"  # in the control plane's namespace (linkerd by default)


# What the mesh checks read of an Istio EnvoyFilter (analyzers/mesh/envoy_filters.py):
# its configPatches carry whole Envoy configuration (Lua code, clusters, TLS contexts) of
# which only the patch's operation, target and name matter there. A key maps to the shape
# kept below it (True: the value as written); a list shape applies to every item.
ENVOY_FILTER_KEPT: Mapping[str, Any] = MappingProxyType({
    "priority": True,
    "configPatches": [{
        "applyTo": True,
        "match": {"proxy": {"proxyVersion": True},
                  "listener": {"filterChain": {"filter": {"name": True}}}},
        "patch": {"operation": True, "value": {"name": True}},
    }],
})


def kept_fields(raw: Any, shape: Any) -> Any:
    """``raw`` reduced to the fields ``shape`` names. A value of another shape than
    expected (a string where an object belongs) is kept as written, so the reader reports
    it instead of meeting an object that looks empty."""
    if shape is True:
        return raw
    if isinstance(shape, list):
        return [kept_fields(item, shape[0]) for item in raw] if isinstance(raw, list) else raw
    if not isinstance(raw, Mapping):
        return raw
    return {key: kept_fields(raw[key], sub) for key, sub in shape.items() if key in raw}


# Networking kinds whose spec is kept only in part: kind id -> the fields kept.
_SLIM_SPECS: dict[str, Mapping[str, Any]] = {"EnvoyFilter": ENVOY_FILTER_KEPT}


def generic_record(raw: Mapping[str, Any], base: dict[str, Any]) -> GenericRecord:
    if api_group(base["api_version"]) not in NETWORKING_GROUPS:
        return GenericRecord(**base)
    spec, status, specs = raw.get("spec"), raw.get("status"), raw.get("specs")
    kept = _SLIM_SPECS.get(base["kind"])
    if kept is not None and isinstance(spec, dict):
        spec = kept_fields(spec, kept)
    return GenericRecord(
        **base,
        spec=frozen_copy(spec, "spec") if isinstance(spec, dict) else None,
        status=frozen_copy(status, "status") if isinstance(status, dict) else None,
        # Kept as written (a non-object item too): the policy model reports bad shapes.
        specs=tuple(frozen_copy(specs, "specs")) if isinstance(specs, list) else None,
    )


def _crd(raw: Mapping[str, Any], base: dict[str, Any]) -> Record:
    if api_group(base["api_version"]) != "apiextensions.k8s.io":
        return generic_record(raw, base)
    spec = raw.get("spec")
    spec = spec if isinstance(spec, dict) else {}
    names = spec.get("names")
    versions = [v for v in spec.get("versions") or () if isinstance(v, dict)] \
        if isinstance(spec.get("versions"), list) else []
    served = tuple(str(v.get("name")) for v in versions if v.get("served") is True
                   and isinstance(v.get("name"), str))
    storage = next((str(v["name"]) for v in versions if v.get("storage") is True
                    and isinstance(v.get("name"), str)), None)
    return CustomResourceDefinitionRecord(
        **base, group=str(spec.get("group") or ""),
        defines=str(names.get("kind") or "") if isinstance(names, dict) else "",
        served=served, storage=storage)


# Core kinds whose data is judged, then dropped (graph/model/pem.py), and CRDs, whose
# schemas are dropped.
DATA_KINDS: dict[str, Callable[[Mapping[str, Any], dict[str, Any]], Record]] = {
    "Secret": _secret,
    "ConfigMap": _config_map,
    "CustomResourceDefinition": _crd,
}

