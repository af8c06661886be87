"""A Secret from a manifest, read as an Istio gateway credential (credentialName): which key
pair Istio would read, whether its certificate parses as X.509, and the certificate's
validity are kept on the record; the data is not."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from netsight.graph.model.pem import Credential, istio_credential
from netsight.graph.model.reading import to_record
from netsight.graph.model.records import SecretRecord
from tests.graph.test_tls_data_is_judged_then_dropped import CERT, KEY, text

VALID = Credential(None, "2026-11-23T23:46:09Z", "2036-11-20T23:46:09Z")


def b64(value: str) -> str:
    return base64.b64encode(value.encode()).decode()


@pytest.mark.parametrize(("data", "string_data", "expected"), [
    ({"tls.crt": CERT, "tls.key": KEY}, None, VALID),
    ({"cert": CERT, "key": KEY}, None, VALID),
    (None, {"cert": text(CERT), "key": text(KEY)}, VALID),
    # cert/key wins over tls.crt/tls.key when both pairs have values.
    ({"cert": b64("junk\n"), "key": KEY, "tls.crt": CERT, "tls.key": KEY}, None,
     Credential("cert holds no PEM block")),
    # An empty pair is passed over for the next one.
    ({"cert": "", "key": "", "tls.crt": CERT, "tls.key": KEY}, None, VALID),
    ({"cert": "", "key": ""}, None,
     Credential("found keys 'cert' and 'key', but they are empty")),
    ({"tls.cert": CERT, "tls.key": KEY}, None,
     Credential("has neither keys 'cert' and 'key' nor 'tls.crt' and 'tls.key' "
                "(keys: tls.cert, tls.key)")),
    ({"tls.crt": KEY, "tls.key": KEY}, None,
     Credential("tls.crt's first PEM block is not an X.509 certificate")),
    ({"tls.crt": "%%%", "tls.key": KEY}, None,
     Credential("data[tls.crt] is not base64-encoded")),
    ({}, {}, Credential("has neither keys 'cert' and 'key' nor 'tls.crt' and 'tls.key' "
                        "(keys: none)")),
])
def test_a_credential_is_judged_as_istio_reads_it(
        data: Any, string_data: Any, expected: Credential) -> None:
    assert istio_credential(data, string_data) == expected


def test_the_record_keeps_the_verdict_not_the_data() -> None:
    record = to_record({"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
                        "metadata": {"name": "edge", "namespace": "gateways"},
                        "data": {"cert": CERT, "key": KEY}})
    assert isinstance(record, SecretRecord)
    assert (record.credential_problem, record.credential_not_before,
            record.credential_not_after) == (None, VALID.not_before, VALID.not_after)
    assert CERT not in repr(record)
    assert text(CERT).splitlines()[1] not in repr(record)


def test_a_secret_without_data_is_not_judged() -> None:
    record = to_record({"apiVersion": "v1", "kind": "Secret",
                        "metadata": {"name": "edge", "namespace": "gateways"}})
    assert isinstance(record, SecretRecord)
    assert not record.tls_checked
    assert record.credential_problem is None
