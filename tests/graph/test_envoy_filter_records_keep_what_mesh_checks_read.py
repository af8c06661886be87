"""An EnvoyFilter's record keeps only what the mesh checks read of it: priority, and per
configPatch its applyTo, operation, value name, proxyVersion and matched filter name.
Patch bodies (Envoy configuration, Lua code) are dropped; a field of an unexpected shape
is kept as written so that the reader can report it."""

from __future__ import annotations

from netsight.graph.model.generic_records import kept_fields
from netsight.graph.model.reading import to_record
from netsight.graph.model.records import GenericRecord

RAW = {
    "apiVersion": "networking.istio.io/v1alpha3", "kind": "EnvoyFilter",
    "metadata": {"name": "lua", "namespace": "x"},
    "spec": {
        "workloadSelector": {"labels": {"app": "cart"}},
        "priority": 3,
        "configPatches": [
            {"applyTo": "HTTP_FILTER",
             "match": {"context": "SIDECAR_INBOUND", "proxy": {"proxyVersion": "^1\\.2.*",
                                                                "metadata": {"a": "b"}},
                       "listener": {"portNumber": 80, "filterChain": {
                           "sni": "x.example", "filter": {"name": "hcm",
                                                          "subFilter": {"name": "router"}}}}},
             "patch": {"operation": "INSERT_AFTER", "filterClass": "AUTHZ",
                       "value": {"name": "x.lua", "typed_config": {"inlineCode": "code"}}}},
            {"applyTo": "CLUSTER", "patch": "not an object"},
        ],
    },
}


def test_only_the_read_fields_are_kept() -> None:
    record = to_record(RAW)
    assert isinstance(record, GenericRecord)
    assert record.spec == {
        "priority": 3,
        "configPatches": [
            {"applyTo": "HTTP_FILTER",
             "match": {"proxy": {"proxyVersion": "^1\\.2.*"},
                       "listener": {"filterChain": {"filter": {"name": "hcm"}}}},
             "patch": {"operation": "INSERT_AFTER", "value": {"name": "x.lua"}}},
            {"applyTo": "CLUSTER", "patch": "not an object"},
        ],
    }


def test_other_istio_kinds_keep_their_spec() -> None:
    raw = {**RAW, "kind": "Sidecar"}
    record = to_record(raw)
    assert isinstance(record, GenericRecord)
    assert record.spec == RAW["spec"]


def test_a_value_of_another_shape_is_kept_as_written() -> None:
    shape = {"a": {"b": True}, "l": [{"c": True}]}
    assert kept_fields({"a": 5, "l": "x", "z": 1}, shape) == {"a": 5, "l": "x"}
    assert kept_fields({"l": [{"c": 1, "d": 2}, 7]}, shape) == {"l": [{"c": 1}, 7]}
