"""The contract between netsight and a probe image: what a probe is asked, what it answers.

A probe pod carries its question in the annotation ``netsight.io/probe`` (a :data:`ProbeSpec`
as JSON, readable with kubectl) and receives the same JSON in the environment variable
``NETSIGHT_PROBE`` through the downward API, so the annotation is the only copy. The probe
answers through its container's termination message (``/dev/termination-log``, at most
4096 bytes as the kubelet truncates beyond that) with a :class:`ProbeResult` as JSON, and
through its exit code:

====  ===========================================================================
exit  meaning
====  ===========================================================================
0     the probe ran and the target answered (``connected``, ``resolved``, ``responded``)
1     the probe ran and the target did not (any other outcome)
2     the probe could not run: the spec was unreadable (``outcome: error``)
====  ===========================================================================

Any image whose entry point honours this contract may be named by ``PROBE_IMAGE``; the
reference program is :mod:`netsight.probes.program`. The simulated data plane
(``netsight.sim``) writes the same messages without importing this module, so a test that
reads the simulator's answers with these models checks both sides of the contract.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter
from pydantic.alias_generators import to_camel

ANNOTATION = "netsight.io/probe"
ENV_VAR = "NETSIGHT_PROBE"
TERMINATION_MESSAGE_PATH = "/dev/termination-log"
MESSAGE_LIMIT = 4096  # bytes the kubelet keeps of a termination message
VERSION: Literal[1] = 1

EXIT_ANSWERED, EXIT_UNANSWERED, EXIT_UNRUNNABLE = 0, 1, 2


class _Wire(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid",
                              frozen=True)


Seconds = Annotated[float, Field(gt=0, le=60)]
Port = Annotated[int, Field(ge=1, le=65535)]


class TcpProbe(_Wire):
    """Open a TCP connection to ``host:port`` (a name is resolved first)."""

    type: Literal["tcp"] = "tcp"
    host: Annotated[str, Field(min_length=1, max_length=253)]
    port: Port
    timeout_seconds: Seconds = 3.0


class HttpProbe(_Wire):
    """Send one HTTP request and report the response's status and chosen headers."""

    type: Literal["http"] = "http"
    url: Annotated[str, Field(min_length=1, max_length=2048, pattern=r"^https?://")]
    method: Literal["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"] = "GET"
    headers: dict[str, str] = Field(default_factory=dict, max_length=32)
    # https: report the handshake and the certificate; verification failures are
    # reported as tls_failed unless the caller asked to go on regardless.
    insecure_skip_verify: bool = False
    timeout_seconds: Seconds = 5.0


class DnsProbe(_Wire):
    """Resolve ``name`` with the pod's resolver (its search path and ndots apply)."""

    type: Literal["dns"] = "dns"
    name: Annotated[str, Field(min_length=1, max_length=253)]
    record_type: Literal["A", "AAAA", "SRV", "CNAME"] = "A"
    timeout_seconds: Seconds = 3.0


ProbeSpec = Annotated[TcpProbe | HttpProbe | DnsProbe, Field(discriminator="type")]
SPEC: TypeAdapter[TcpProbe | HttpProbe | DnsProbe] = TypeAdapter(ProbeSpec)


class Outcome(StrEnum):
    CONNECTED = "connected"  # tcp: the handshake completed
    RESPONDED = "responded"  # http: a response arrived, whatever its status
    RESOLVED = "resolved"  # dns: at least one answer
    REFUSED = "refused"  # RST: nothing listens, or a policy rejects
    TIMEOUT = "timeout"  # no answer within timeoutSeconds: dropped, or too slow
    UNREACHABLE = "unreachable"  # ICMP unreachable / no route
    DNS_FAILED = "dns_failed"  # the name did not resolve (NXDOMAIN, SERVFAIL, no server)
    TLS_FAILED = "tls_failed"  # the TLS handshake or verification failed
    RESET = "reset"  # the connection was reset after it opened (a mesh refusing plaintext)
    ERROR = "error"  # the probe could not run; ``error`` says why

    @property
    def answered(self) -> bool:
        return self in _ANSWERED


_ANSWERED = frozenset({Outcome.CONNECTED, Outcome.RESPONDED, Outcome.RESOLVED})


class TlsResult(_Wire):
    version: str | None = None  # "TLSv1.3"
    cipher: str | None = None
    verified: bool = False
    peer_subject: str | None = None
    peer_sans: list[str] = Field(default_factory=list, max_length=16)
    error: str | None = None


class HttpResult(_Wire):
    status: int
    # A subset: content-type, server, location, via, x-envoy-upstream-service-time,
    # x-envoy-decorator-operation, grpc-status, www-authenticate.
    headers: dict[str, str] = Field(default_factory=dict)
    tls: TlsResult | None = None


class DnsResult(_Wire):
    rcode: str = "NOERROR"  # NOERROR, NXDOMAIN, SERVFAIL, REFUSED, TIMEOUT
    answers: list[str] = Field(default_factory=list, max_length=32)
    # The fully-qualified name that answered, after the search path was applied.
    canonical_name: str | None = None


class ProbeResult(_Wire):
    """What a probe reports in its termination message."""

    version: Literal[1] = VERSION
    type: Literal["tcp", "http", "dns"]
    outcome: Outcome
    latency_ms: Annotated[float, Field(ge=0)] | None = None
    # The addresses the host resolved to, and the one the connection went to.
    resolved: list[str] = Field(default_factory=list, max_length=32)
    peer: str | None = None
    http: HttpResult | None = None
    dns: DnsResult | None = None
    error: Annotated[str, Field(max_length=1024)] | None = None

    def exit_code(self) -> int:
        if self.outcome is Outcome.ERROR:
            return EXIT_UNRUNNABLE
        return EXIT_ANSWERED if self.outcome.answered else EXIT_UNANSWERED
