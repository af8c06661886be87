"""Reading a probe's question: the JSON of the ``netsight.io/probe`` annotation.

The schema is netsight's probe contract (``netsight/probes/message.py``, documented in the
README); the data plane reads it with its own code, as any probe image would, and a probe
it cannot read ends with outcome ``error`` and exit code 2, as the contract says.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Final
from urllib.parse import urlsplit

ANNOTATION: Final = "netsight.io/probe"
ENV_VAR: Final = "NETSIGHT_PROBE"
_METHODS: Final = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
_RECORD_TYPES: Final = frozenset({"A", "AAAA", "SRV", "CNAME"})
_KEYS: Final = {
    "tcp": ({"type", "host", "port", "timeoutSeconds"}, 3.0),
    "http": ({"type", "url", "method", "headers", "insecureSkipVerify", "timeoutSeconds"}, 5.0),
    "dns": ({"type", "name", "recordType", "timeoutSeconds"}, 3.0),
}


class SpecError(ValueError):
    """The probe's spec is unreadable; the message says which field and why."""


@dataclass(frozen=True)
class ProbeSpec:
    type: str  # tcp, http, dns
    timeout_seconds: float
    host: str = ""  # tcp, http (from the URL)
    port: int = 0  # tcp, http
    url: str = ""
    scheme: str = ""  # http, https
    method: str = "GET"
    headers: dict[str, str] = field(default_factory=dict)
    insecure_skip_verify: bool = False
    name: str = ""  # dns
    record_type: str = "A"


def parse(text: str | None) -> ProbeSpec:
    if not text:
        raise SpecError(f"no probe spec: neither the {ANNOTATION} annotation nor {ENV_VAR}")
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SpecError(f"the probe spec is not JSON: {exc}") from None
    if not isinstance(raw, dict):
        raise SpecError("the probe spec must be a JSON object")
    kind = raw.get("type")
    if kind not in _KEYS:
        raise SpecError(f"type must be tcp, http or dns, got {kind!r}")
    allowed, default_timeout = _KEYS[kind]
    extra = sorted(set(raw) - allowed)
    if extra:
        raise SpecError(f"unknown field(s) for a {kind} probe: {', '.join(extra)}")
    timeout = raw.get("timeoutSeconds", default_timeout)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) \
            or not 0 < timeout <= 60:
        raise SpecError("timeoutSeconds must be a number in (0, 60]")
    if kind == "tcp":
        host, port = raw.get("host"), raw.get("port")
        if not isinstance(host, str) or not 1 <= len(host) <= 253:
            raise SpecError("host must be a name or address of 1-253 characters")
        return ProbeSpec("tcp", float(timeout), host=host, port=_port(port))
    if kind == "http":
        return _http(raw, float(timeout))
    name, record_type = raw.get("name"), raw.get("recordType", "A")
    if not isinstance(name, str) or not 1 <= len(name) <= 253:
        raise SpecError("name must be a DNS name of 1-253 characters")
    if record_type not in _RECORD_TYPES:
        raise SpecError(f"recordType must be one of {', '.join(sorted(_RECORD_TYPES))}")
    return ProbeSpec("dns", float(timeout), name=name, record_type=str(record_type))


def _port(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 65535:
        raise SpecError("port must be an integer 1-65535")
    return value


def _http(raw: dict[str, Any], timeout: float) -> ProbeSpec:
    url, method = raw.get("url"), raw.get("method", "GET")
    if not isinstance(url, str) or not 1 <= len(url) <= 2048 \
            or not url.startswith(("http://", "https://")):
        raise SpecError("url must be an http:// or https:// URL of at most 2048 characters")
    if method not in _METHODS:
        raise SpecError(f"method must be one of {', '.join(sorted(_METHODS))}")
    headers = raw.get("headers", {})
    if not isinstance(headers, dict) or len(headers) > 32 or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in headers.items()):
        raise SpecError("headers must map at most 32 names to string values")
    insecure = raw.get("insecureSkipVerify", False)
    if not isinstance(insecure, bool):
        raise SpecError("insecureSkipVerify must be true or false")
    try:
        parts = urlsplit(url)
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError as exc:
        raise SpecError(f"url: {exc}") from None
    if not parts.hostname:
        raise SpecError("url has no host")
    return ProbeSpec("http", timeout, host=parts.hostname, port=port, url=url,
                     scheme=parts.scheme, method=str(method), headers=dict(headers),
                     insecure_skip_verify=insecure)
