"""The reference probe program: reads its question from ``NETSIGHT_PROBE``, asks it of the
network, and answers through the termination message and its exit code (message.py holds
the contract).

Standard library only, so that the probe image is Python and this one file
(``probe.Dockerfile``): the contract's models live in message.py, and the tests read every
answer of this program with them. DNS questions use the system resolver (``getaddrinfo``,
so the pod's search path and ndots apply) and answer A and AAAA; SRV and CNAME need a DNS
library this image does not carry, and are answered ``error`` saying so.

    NETSIGHT_PROBE='{"type": "tcp", "host": "db.data.svc", "port": 5432}' \\
        python -m netsight.probes.program [--message-path /dev/termination-log]
"""

from __future__ import annotations

import errno
import http.client
import json
import os
import socket
import ssl
import sys
import time
import urllib.parse
from typing import Any

ENV_VAR = "NETSIGHT_PROBE"  # as message.py (tests check they agree)
TERMINATION_MESSAGE_PATH = "/dev/termination-log"
MESSAGE_LIMIT = 4096
EXIT_ANSWERED, EXIT_UNANSWERED, EXIT_UNRUNNABLE = 0, 1, 2
ANSWERED = frozenset({"connected", "responded", "resolved"})
# Response headers worth reporting (message.py's HttpResult): routing and mesh evidence.
KEPT_HEADERS = ("content-type", "server", "location", "via", "x-envoy-upstream-service-time",
                "x-envoy-decorator-operation", "grpc-status", "www-authenticate")
UNREACHABLE = {errno.EHOSTUNREACH, errno.ENETUNREACH}


class Unrunnable(ValueError):
    """The question cannot be read."""


def read_spec(text: str | None) -> dict[str, Any]:
    if not text:
        raise Unrunnable(f"{ENV_VAR} is not set")
    try:
        spec = json.loads(text)
    except ValueError as exc:
        raise Unrunnable(f"{ENV_VAR} is not JSON: {exc}") from None
    if not isinstance(spec, dict) or spec.get("type") not in ("tcp", "http", "dns"):
        raise Unrunnable(f"{ENV_VAR}: type must be tcp, http or dns")
    needed = {"tcp": ("host", "port"), "http": ("url",), "dns": ("name",)}[spec["type"]]
    missing = [key for key in needed if key not in spec]
    if missing:
        raise Unrunnable(f"{ENV_VAR}: {', '.join(missing)} required for {spec['type']}")
    return spec


def _timeout(spec: dict[str, Any], default: float) -> float:
    value = spec.get("timeoutSeconds", default)
    return float(value) if isinstance(value, int | float) and 0 < value <= 60 else default


def _failure(exc: BaseException) -> str:
    if isinstance(exc, socket.gaierror):
        return "dns_failed"
    if isinstance(exc, ssl.SSLError | ssl.CertificateError):
        return "tls_failed"
    if isinstance(exc, ConnectionRefusedError):
        return "refused"
    if isinstance(exc, ConnectionResetError | http.client.RemoteDisconnected | BrokenPipeError):
        return "reset"
    if isinstance(exc, TimeoutError | socket.timeout):
        return "timeout"
    if isinstance(exc, OSError) and exc.errno in UNREACHABLE:
        return "unreachable"
    return "error"


def resolve(host: str, port: int) -> list[str]:
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def probe_tcp(spec: dict[str, Any]) -> dict[str, Any]:
    host, port, timeout = str(spec["host"]), int(spec["port"]), _timeout(spec, 3.0)
    answer: dict[str, Any] = {"type": "tcp"}
    started = time.monotonic()
    try:
        answer["resolved"] = resolve(host, port)[:32]
        with socket.create_connection((answer["resolved"][0], port), timeout=timeout) as sock:
            peer = sock.getpeername()
            answer["peer"] = f"{peer[0]}:{peer[1]}"
        answer["outcome"] = "connected"
    except Exception as exc:
        answer.update(outcome=_failure(exc), error=f"{type(exc).__name__}: {exc}"[:1024])
    answer["latencyMs"] = round((time.monotonic() - started) * 1e3, 3)
    return answer


def probe_http(spec: dict[str, Any]) -> dict[str, Any]:
    url = urllib.parse.urlsplit(str(spec["url"]))
    timeout = _timeout(spec, 5.0)
    answer: dict[str, Any] = {"type": "http"}
    port = url.port or (443 if url.scheme == "https" else 80)
    started = time.monotonic()
    connection: http.client.HTTPConnection
    try:
        answer["resolved"] = resolve(url.hostname or "", port)[:32]
        if url.scheme == "https":
            context = ssl.create_default_context()
            if spec.get("insecureSkipVerify"):
                context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
            connection = http.client.HTTPSConnection(url.hostname or "", port,
                                                     timeout=timeout, context=context)
        else:
            connection = http.client.HTTPConnection(url.hostname or "", port, timeout=timeout)
        path = url.path or "/"
        if url.query:
            path += f"?{url.query}"
        connection.request(str(spec.get("method") or "GET"), path,
                           headers=dict(spec.get("headers") or {}))
        response = connection.getresponse()
        peer = connection.sock.getpeername() if connection.sock else None
        result: dict[str, Any] = {"status": response.status, "headers": {
            name: value for name in KEPT_HEADERS if (value := response.getheader(name))}}
        if isinstance(connection.sock, ssl.SSLSocket):
            result["tls"] = _tls(connection.sock, verified=not spec.get("insecureSkipVerify"))
        response.read(65536)
        connection.close()
        answer.update(outcome="responded", http=result)
        if peer:
            answer["peer"] = f"{peer[0]}:{peer[1]}"
    except Exception as exc:
        answer.update(outcome=_failure(exc), error=f"{type(exc).__name__}: {exc}"[:1024])
        if isinstance(exc, ssl.SSLError | ssl.CertificateError):
            answer["http"] = None
    answer["latencyMs"] = round((time.monotonic() - started) * 1e3, 3)
    return answer


def _tls(sock: ssl.SSLSocket, *, verified: bool) -> dict[str, Any]:
    cert: dict[str, Any] = dict(sock.getpeercert() or {})
    subject = ", ".join(f"{pair[0]}={pair[1]}" for part in cert.get("subject", ())
                        for pair in part)
    sans = [pair[1] for pair in cert.get("subjectAltName", ()) if pair[0] == "DNS"][:16]
    cipher = sock.cipher()
    return {"version": sock.version(), "cipher": cipher[0] if cipher else None,
            "verified": verified, "peerSubject": subject or None, "peerSans": sans}


def probe_dns(spec: dict[str, Any]) -> dict[str, Any]:
    name, record = str(spec["name"]), str(spec.get("recordType") or "A")
    answer: dict[str, Any] = {"type": "dns"}
    if record not in ("A", "AAAA"):
        return {**answer, "outcome": "error",
                "error": f"record type {record} needs a DNS library; this probe resolves A "
                         "and AAAA with the system resolver"}
    family = socket.AF_INET if record == "A" else socket.AF_INET6
    socket.setdefaulttimeout(_timeout(spec, 3.0))
    started = time.monotonic()
    try:
        infos = socket.getaddrinfo(name, None, family, socket.SOCK_STREAM,
                                   flags=socket.AI_CANONNAME)
        addresses = list(dict.fromkeys(str(info[4][0]) for info in infos))[:32]
        canonical = next((info[3] for info in infos if info[3]), None)
        answer.update(outcome="resolved", resolved=addresses, dns={
            "rcode": "NOERROR", "answers": addresses, "canonicalName": canonical})
    except socket.gaierror as exc:
        rcode = "NXDOMAIN" if exc.errno in (socket.EAI_NONAME, getattr(
            socket, "EAI_NODATA", socket.EAI_NONAME)) else "SERVFAIL"
        answer.update(outcome="dns_failed", dns={"rcode": rcode, "answers": []},
                      error=f"{exc}"[:1024])
    except Exception as exc:
        answer.update(outcome=_failure(exc), error=f"{type(exc).__name__}: {exc}"[:1024])
    answer["latencyMs"] = round((time.monotonic() - started) * 1e3, 3)
    return answer


PROBES = {"tcp": probe_tcp, "http": probe_http, "dns": probe_dns}


def run(text: str | None) -> tuple[dict[str, Any], int]:
    """The answer to the question ``text``, and the exit code."""
    try:
        spec = read_spec(text)
    except Unrunnable as exc:
        return {"version": 1, "type": "tcp", "outcome": "error", "error": str(exc)}, \
            EXIT_UNRUNNABLE
    answer = {"version": 1, **PROBES[spec["type"]](spec)}
    answer = {k: v for k, v in answer.items() if v is not None}
    if answer["outcome"] == "error":
        return answer, EXIT_UNRUNNABLE
    return answer, EXIT_ANSWERED if answer["outcome"] in ANSWERED else EXIT_UNANSWERED


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    path = args[1] if len(args) == 2 and args[0] == "--message-path" else \
        TERMINATION_MESSAGE_PATH
    answer, code = run(os.environ.get(ENV_VAR))
    message = json.dumps(answer, separators=(",", ":")).encode()[:MESSAGE_LIMIT]
    print(message.decode(errors="replace"))
    try:
        with open(path, "wb") as out:
            out.write(message)
    except OSError as exc:  # not in a pod: the answer on stdout is all there is
        print(f"cannot write {path}: {exc}", file=sys.stderr)
    return code


if __name__ == "__main__":
    raise SystemExit(main())
