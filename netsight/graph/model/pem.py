"""Whether TLS material in a Secret or ConfigMap is well-formed, decided while the data is
at hand.

A Gateway listener's certificateRef is invalid when "the data within that resource is
malformed" (ListenerReasonInvalidCertificateRef, Gateway API v1), and a BackendTLSPolicy's
caCertificateRef when its ConfigMap holds no usable ``ca.crt`` (InvalidCACertificateRef).
netsight never keeps the data: when a manifest carries it, the record builder asks this
module for a verdict and drops the data. The check is structural — a ``tls.crt`` (or
``ca.crt``) holding PEM CERTIFICATE blocks and a ``tls.key`` holding one PEM private key,
each a base64 DER SEQUENCE — not whether a certificate has expired or matches the key.
"""

from __future__ import annotations

import base64
import binascii
import re
from bisect import bisect_left
from collections import defaultdict
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime

from cryptography import x509

TLS_CERT_KEY, TLS_PRIVATE_KEY = "tls.crt", "tls.key"
CA_CERT_KEY = "ca.crt"  # BackendTLSPolicy: the key a caCertificateRef ConfigMap holds

# One BEGIN or END line, its trailing dashes left unconsumed so that "-----END A-----BEGIN
# B-----" yields both. Pairing the markers afterwards (``pem_blocks``) finds what
# ``-----BEGIN (L)-----(.*?)-----END \1-----`` finds, in n log n: that pattern backtracks
# to the end of the text from every BEGIN without an END, quadratic on data a caller sends
# (diff_routes ``proposed`` takes 1 MiB).
_MARKER = re.compile(r"-----(BEGIN|END) ([A-Z0-9 ]+)(?=-----)")
_DASHES = len("-----")
_DER_SEQUENCE = 0x30  # every X.509 certificate and PKCS#1/#8/SEC1 key is an ASN.1 SEQUENCE


def tls_data_problem(data: object, string_data: object) -> str | None:
    """Why a Secret's ``tls.crt``/``tls.key`` are not a PEM certificate and key; None when
    they are. ``data`` holds base64 values, ``stringData`` plain ones (it wins on a key)."""
    values: dict[str, str] = {}
    if isinstance(data, Mapping):
        for key in (TLS_CERT_KEY, TLS_PRIVATE_KEY):
            raw = data.get(key)
            if isinstance(raw, str):
                try:
                    values[key] = base64.b64decode(raw, validate=True).decode("ascii")
                except (binascii.Error, ValueError):
                    return f"data[{key}] is not base64-encoded ASCII"
    if isinstance(string_data, Mapping):
        for key in (TLS_CERT_KEY, TLS_PRIVATE_KEY):
            raw = string_data.get(key)
            if isinstance(raw, str):
                values[key] = raw
    for key, wanted in ((TLS_CERT_KEY, "a PEM CERTIFICATE block"),
                        (TLS_PRIVATE_KEY, "exactly one PEM PRIVATE KEY block")):
        text = values.get(key)
        if text is None:
            return f"no {key}"
        labels = _der_blocks(text)
        if labels is None:
            return f"{key} holds a PEM block whose body is not base64 DER"
        if key == TLS_CERT_KEY and (not labels or any(x != "CERTIFICATE" for x in labels)):
            return f"{key} does not hold {wanted}"
        if key == TLS_PRIVATE_KEY and (len(labels) != 1 or not labels[0].endswith("PRIVATE KEY")):
            return f"{key} does not hold {wanted}"
    return None


# An Istio gateway credential (credentialName): keys cert and key, else tls.crt and tls.key
# (pilot/pkg/credentials/kube ExtractCertInfo), the first pair with both values non-empty.
ISTIO_CREDENTIAL_PAIRS = (("cert", "key"), (TLS_CERT_KEY, TLS_PRIVATE_KEY))


@dataclass(frozen=True, slots=True)
class Credential:
    """What Istio makes of a Secret as a gateway's serving credential: why it cannot use
    it (None when it can), and the validity of the certificate it would serve, which the
    caller compares with the clock when it asks (it changes with time, the data does not)."""

    problem: str | None
    not_before: str | None = None  # RFC 3339, UTC
    not_after: str | None = None


def istio_credential(data: object, string_data: object) -> Credential:
    """Judge a Secret's data as Istio's gateway reads a credentialName: a pair of keys
    with values, the certificate's first PEM block an X.509 certificate (the private key
    is not parsed, as Istio's analysis does not). ``data`` holds base64 values,
    ``stringData`` plain ones (it wins on a key)."""
    wanted = {k for pair in ISTIO_CREDENTIAL_PAIRS for k in pair}
    values: dict[str, bytes] = {}
    names: set[str] = set()
    if isinstance(data, Mapping):
        names.update(str(k) for k in data)
        for key in wanted & set(data):
            raw = data[key]
            if not isinstance(raw, str):
                continue
            try:
                values[key] = base64.b64decode(raw, validate=True)
            except (binascii.Error, ValueError):
                return Credential(f"data[{key}] is not base64-encoded")
    if isinstance(string_data, Mapping):
        names.update(str(k) for k in string_data)
        for key in wanted & set(string_data):
            if isinstance(string_data[key], str):
                values[key] = string_data[key].encode()
    pair = next((p for p in ISTIO_CREDENTIAL_PAIRS if all(values.get(k) for k in p)), None)
    if pair is None:
        empty = next((p for p in ISTIO_CREDENTIAL_PAIRS if all(k in values for k in p)), None)
        if empty is not None:
            return Credential(f"found keys {empty[0]!r} and {empty[1]!r}, but they are empty")
        return Credential("has neither keys 'cert' and 'key' nor 'tls.crt' and 'tls.key' "
                          f"(keys: {', '.join(sorted(names)) or 'none'})")
    return _certificate(values[pair[0]], pair[0])


def _certificate(raw: bytes, key: str) -> Credential:
    for _, body in pem_blocks(raw.decode("latin-1")):
        try:
            der = base64.b64decode("".join(body.split()), validate=True)
        except (binascii.Error, ValueError):
            continue  # as Go's pem.Decode: a block that does not decode is skipped
        try:
            certificate = x509.load_der_x509_certificate(der)
        except ValueError:
            return Credential(f"{key}'s first PEM block is not an X.509 certificate")
        return Credential(None, _rfc3339(certificate.not_valid_before_utc),
                          _rfc3339(certificate.not_valid_after_utc))
    return Credential(f"{key} holds no PEM block")


def _rfc3339(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def pem_blocks(text: str) -> Iterator[tuple[str, str]]:
    """(label, body) of each PEM block, leftmost first, as the regex above would match them
    (a block ends at the first END line of its label; the search resumes after it)."""
    markers = [(m.group(1), m.group(2), m.start(), m.end() + _DASHES)
               for m in _MARKER.finditer(text)]
    ends: dict[str, list[int]] = defaultdict(list)  # label -> where its END lines start
    for kind, label, start, _ in markers:
        if kind == "END":
            ends[label].append(start)
    resume = 0
    for kind, label, start, stop in markers:
        if kind != "BEGIN" or start < resume:
            continue
        found = ends.get(label, [])
        i = bisect_left(found, stop)
        if i == len(found):
            continue  # no END for it: the next BEGIN is tried
        yield label, text[stop:found[i]]
        resume = found[i] + len(f"-----END {label}-----")


def _der_blocks(text: str) -> list[str] | None:
    """The labels of the PEM blocks in ``text``; None when a block's body is not DER."""
    labels = []
    for label, raw in pem_blocks(text):
        body = "".join(raw.split())
        try:
            der = base64.b64decode(body, validate=True)
        except (binascii.Error, ValueError):
            return None
        if not der or der[0] != _DER_SEQUENCE:
            return None
        labels.append(label)
    return labels


def ca_bundle_problem(data: object, binary_data: object) -> str | None:
    """Why a ConfigMap's ``ca.crt`` is not a PEM certificate bundle; None when it is.
    ``data`` holds plain values, ``binaryData`` base64 ones."""
    text = data.get(CA_CERT_KEY) if isinstance(data, Mapping) else None
    if not isinstance(text, str) and isinstance(binary_data, Mapping):
        raw = binary_data.get(CA_CERT_KEY)
        if isinstance(raw, str):
            try:
                text = base64.b64decode(raw, validate=True).decode("ascii")
            except (binascii.Error, ValueError):
                return f"binaryData[{CA_CERT_KEY}] is not base64-encoded ASCII"
    if not isinstance(text, str):
        return f"no {CA_CERT_KEY}"
    labels = _der_blocks(text)
    if labels is None:
        return f"{CA_CERT_KEY} holds a PEM block whose body is not base64 DER"
    if not labels or any(x != "CERTIFICATE" for x in labels):
        return f"{CA_CERT_KEY} does not hold PEM CERTIFICATE blocks"
    return None
