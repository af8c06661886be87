"""A TLS Secret (or a CA ConfigMap) from a manifest: whether tls.crt/tls.key are a PEM
certificate and key (or ca.crt a certificate bundle) is decided when the record is built,
and the data itself is not kept."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from netsight.graph.model.reading import to_record
from netsight.graph.model.records import ConfigMapRecord, GenericRecord, SecretRecord

# A throwaway self-signed EC certificate and its key, made for this test.
CERT = (
    "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUJoakNDQVMyZ0F3SUJBZ0lVVDlmc3d3REVueGNvQndnVEEx"
    "cmNIL0NMUmhzd0NnWUlLb1pJemowRUF3SXcKR1RFWE1CVUdBMVVFQXd3T0tpNWxlR0Z0Y0d4bExuUmxjM1F3SGhj"
    "Tk1qWXhNVEl6TWpNME5qQTVXaGNOTXpZeApNVEl3TWpNME5qQTVXakFaTVJjd0ZRWURWUVFEREE0cUxtVjRZVzF3"
    "YkdVdWRHVnpkREJaTUJNR0J5cUdTTTQ5CkFnRUdDQ3FHU000OUF3RUhBMElBQk9lc0JlcmN0YTFpc2llbXYyU2NL"
    "dzhMZngwdS9kODdzaGtkZjZOMzJnMzgKaERtaTJqQXNhL25vSk9WckRDMzVWZXlQTTVuUnN0a0sxMm5FT2Qyc05H"
    "YWpVekJSTUIwR0ExVWREZ1FXQkJTSgpMWkxYSThOMUQ2L2hrNDdkSzd5aFBkVmdqREFmQmdOVkhTTUVHREFXZ0JT"
    "SkxaTFhJOE4xRDYvaGs0N2RLN3loClBkVmdqREFQQmdOVkhSTUJBZjhFQlRBREFRSC9NQW9HQ0NxR1NNNDlCQU1D"
    "QTBjQU1FUUNJQkJnK292RGxteksKanJVNGovdktIOHN5dmVCTXMvK0dJMjdlRWw4M25PZzVBaUI2N09pYi94NVUz"
    "UWxGaytuejdqVVB4ekdrOWhtbApoUEgwdWpUWit2dTU0QT09Ci0tLS0tRU5EIENFUlRJRklDQVRFLS0tLS0K"
)
KEY = (
    "LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0tCk1JR0hBZ0VBTUJNR0J5cUdTTTQ5QWdFR0NDcUdTTTQ5QXdFSEJH"
    "MHdhd0lCQVFRZy9FZytuaEFTb1UxanY3cWwKS3RNN1JjWFFMKzJySnFaTUxDYkxlSjVleWNtaFJBTkNBQVRuckFY"
    "cTNMV3RZcklucHI5a25Dc1BDMzhkTHYzZgpPN0laSFgramQ5b04vSVE1b3Rvd0xHdjU2Q1RsYXd3dCtWWHNqek9a"
    "MGJMWkN0ZHB4RG5kckRSbQotLS0tLUVORCBQUklWQVRFIEtFWS0tLS0tCg=="
)


def secret(**fields: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/tls",
            "metadata": {"name": "edge-tls", "namespace": "infra"}, **fields}


def text(b64: str) -> str:
    return base64.b64decode(b64).decode()


def test_well_formed_data_is_checked_and_not_kept() -> None:
    record = to_record(secret(data={"tls.crt": CERT, "tls.key": KEY}))
    assert isinstance(record, SecretRecord)
    assert (record.type, record.tls_checked, record.tls_problem) == \
        ("kubernetes.io/tls", True, None)
    assert CERT[:40] not in repr(record)
    assert "BEGIN" not in repr(record)


def test_string_data_is_read_as_plain_text_and_wins() -> None:
    record = to_record(secret(data={"tls.crt": "SGVsbG8=", "tls.key": KEY},
                              stringData={"tls.crt": text(CERT)}))
    assert isinstance(record, SecretRecord)
    assert record.tls_problem is None


@pytest.mark.parametrize(("data", "problem"), [
    ({"tls.crt": "SGVsbG8gd29ybGQK", "tls.key": "SGVsbG8gd29ybGQK"},
     "tls.crt does not hold a PEM CERTIFICATE block"),
    ({"tls.crt": CERT}, "no tls.key"),
    ({"tls.crt": CERT, "tls.key": CERT},
     "tls.key does not hold exactly one PEM PRIVATE KEY block"),
    ({"tls.crt": "not base64!", "tls.key": KEY}, "data[tls.crt] is not base64-encoded ASCII"),
    ({"tls.crt": base64.b64encode(b"-----BEGIN CERTIFICATE-----\nSGVsbG8=\n"
                                  b"-----END CERTIFICATE-----\n").decode(), "tls.key": KEY},
     "tls.crt holds a PEM block whose body is not base64 DER"),
])
def test_malformed_data_is_named(data: dict[str, str], problem: str) -> None:
    record = to_record(secret(data=data))
    assert isinstance(record, SecretRecord)
    assert (record.tls_checked, record.tls_problem) == (True, problem)


def test_without_data_nothing_is_decided() -> None:
    record = to_record(secret())
    assert isinstance(record, SecretRecord)
    assert (record.tls_checked, record.tls_problem) == (False, None)


def test_a_custom_kind_named_secret_stays_generic() -> None:
    record = to_record({"apiVersion": "example.com/v1", "kind": "Secret",
                        "metadata": {"name": "x", "namespace": "infra"}, "data": {"a": "b"}})
    assert isinstance(record, GenericRecord)


NO_BUNDLE = "ca.crt does not hold PEM CERTIFICATE blocks"


def config_map(**fields: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "backend-ca", "namespace": "infra"}, **fields}


@pytest.mark.parametrize(("fields", "problem"), [
    ({"data": {"ca.crt": text(CERT)}}, None),
    ({"binaryData": {"ca.crt": CERT}}, None),
    ({"data": {}}, "no ca.crt"),
    ({"data": {"ca.crt": "-----BEGIN CERTIFICATE-----"}}, NO_BUNDLE),
    ({"data": {"ca.crt": text(KEY)}}, NO_BUNDLE),
])
def test_a_config_map_ca_bundle_is_judged(fields: dict[str, Any], problem: str | None) -> None:
    record = to_record(config_map(**fields))
    assert isinstance(record, ConfigMapRecord)
    assert (record.ca_checked, record.ca_problem) == (True, problem)
    assert "BEGIN" not in repr(record)


def test_a_config_map_without_data_is_not_judged() -> None:
    record = to_record(config_map())
    assert isinstance(record, ConfigMapRecord)
    assert (record.ca_checked, record.ca_problem) == (False, None)
