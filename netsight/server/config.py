"""What ``netsight serve`` runs with: command-line flags over environment variables over defaults.

The environment variables are the ones the architecture decisions name (``CLUSTER_NAME``,
``PORT``, ``LOG_LEVEL``, ``TOOL_TIMEOUT``, ``PROBE_NAMESPACE``, ``PROBE_IMAGE``,
``MAX_CONCURRENT_PROBES``), plus ``HOST``, ``AUTH_MODE``, ``AUTH_AUDIENCES``,
``MCP_RESPONSES`` and ``KUBECONFIG`` for symmetry with the flags, ``SECRET_METADATA``
(watch Secret and ConfigMap names), ``DNS_CONFIG`` (watch the cluster DNS
ConfigMaps), ``TOOLSETS`` (the groups of tools offered),
``LOG_FORMAT`` (text or JSON lines; telemetry's ``OTEL_*`` variables are the OpenTelemetry
SDK's, read where the exporters are built: exporting.py),
``NAMESPACE`` (the design's: watch only these namespaces, comma-separated),
``READ_ONLY`` (hide every tool that writes to the cluster) and the probes' ``PROBES``,
``PROBE_MODE``, ``PROBE_TIMEOUT`` and ``PROBE_RATE``. The probe settings are checked even
while probes are off: a deployment configured for them fails on a bad value at once, not
the day they are turned on.

A bad value stops the server before it starts, with a message naming the variable (or flag)
and what a valid value looks like: a typo in a Helm values file should fail the rollout, not
produce a server that quietly runs with a default.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, TypeVar

from netsight.analyzers.core.declarations import Toolset

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m)?\s*$")
_UNIT_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, None: 1.0}
_LOG_LEVELS = {"debug": "DEBUG", "info": "INFO", "warn": "WARNING", "warning": "WARNING",
               "error": "ERROR"}
IN_CLUSTER_HINT = "KUBERNETES_SERVICE_HOST"  # set by the kubelet in every pod
# A namespace name is a DNS-1123 label.
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
# An image reference (the distribution reference grammar, without its length rules): an
# optional registry host[:port], lower-case path components, then :tag and/or @digest.
_IMAGE = re.compile(
    r"^(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*"
    r"(?::[0-9]+)?/)?[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
    r"(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*"
    r"(?::[\w][\w.-]{0,127})?(?:@sha256:[a-f0-9]{64})?$")
# Seconds between the demo's churn steps: a rollout every four steps, about every 30 s.
DEMO_CHURN_INTERVAL = 7.5
PROBE_NAMESPACE = "mcp-diagnostics"
PROBE_IMAGE = "ghcr.io/mcp-k8s-networking/probe:latest"
MAX_CONCURRENT_PROBES = 5
PROBE_TIMEOUT = 30.0  # seconds a probe has to answer, pod start included
PROBE_RATE = 30.0  # probes a caller may start a minute


class ProbeMode(StrEnum):
    POD = "pod"  # a pod of its own in the source's namespace, with its labels
    EPHEMERAL = "ephemeral"  # an ephemeral container in the source pod itself


class Transport(StrEnum):
    HTTP = "http"
    STDIO = "stdio"


class LogFormat(StrEnum):
    TEXT = "text"
    JSON = "json"  # one JSON object a line, for log pipelines that parse


class Responses(StrEnum):
    """How a Streamable HTTP POST carries its answer: one JSON body, or an SSE stream."""

    JSON = "json"  # no per-answer stream: the cheaper exchange; netsight sends no progress
    SSE = "sse"


class Auth(StrEnum):
    AUTO = "auto"  # required off loopback, off on 127.0.0.1/::1
    TOKENREVIEW = "tokenreview"
    NONE = "none"


LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})


class ConfigError(ValueError):
    """A setting that cannot be used; ``source`` names the flag or variable to fix."""

    def __init__(self, source: str, message: str) -> None:
        super().__init__(f"{source}: {message}")
        self.source = source


@dataclass(frozen=True, slots=True)
class Settings:
    cluster_name: str
    host: str = "127.0.0.1"
    port: int = 8080
    transport: Transport = Transport.HTTP
    demo: bool = False
    # With --demo: seconds between the demo's churn steps; None (--demo-static): no churn.
    demo_churn_interval: float | None = DEMO_CHURN_INTERVAL
    kubeconfig: str | None = None
    context: str | None = None
    log_level: str = "INFO"  # a logging module level name
    log_format: LogFormat = LogFormat.TEXT
    tool_timeout: float = 10.0  # seconds
    auth: Auth = Auth.AUTO
    shutdown_timeout: float = 5.0  # seconds to drain in-flight calls before cancelling them
    # Watch Secrets and ConfigMaps as metadata only (names, for TLS and CA references);
    # needs list/watch on them, which RBAC cannot narrow to metadata.
    secret_metadata: bool = True
    # Watch the cluster DNS ConfigMaps (kube-system/coredns, kube-dns) whole, each by name,
    # for check_dns_resolution's Corefile: off unless asked for, as they are not networking
    # objects and the grant is one more the chart must give.
    dns_config: bool = False
    # Watch the providers' controllers and agents (Deployments and DaemonSets of their
    # namespaces), Nodes and Istio's injection webhooks, for check_provider_status and the
    # CNI detection: off unless asked for (or --demo), as each is one more grant.
    provider_status: bool = False
    responses: Responses = Responses.JSON
    # TokenReview spec.audiences; empty: the API server's own audiences (the field omitted)
    auth_audiences: tuple[str, ...] = ()
    # Diagnostic probe pods (netsight/probes): off unless enabled.
    probes: bool = False
    probe_namespace: str = PROBE_NAMESPACE
    probe_image: str = PROBE_IMAGE
    max_concurrent_probes: int = MAX_CONCURRENT_PROBES
    probe_mode: ProbeMode = ProbeMode.POD
    probe_timeout: float = PROBE_TIMEOUT
    probe_rate: float = PROBE_RATE
    # Hide every tool that writes to the cluster (the probes), whatever else is enabled.
    read_only: bool = False
    # The groups of tools offered; None: every tool but the notes toolset's (those of absent
    # providers still hidden).
    toolsets: frozenset[Toolset] | None = None
    # Watch only these namespaces (with Roles, no cluster-wide list); None: the cluster.
    namespaces: tuple[str, ...] | None = None
    # The knowledge base (netsight/knowledge): a SQLite file path or a postgresql:// URL;
    # None: off, nothing recorded.
    knowledge_db: str | None = None

    @property
    def authenticates(self) -> bool:
        """Whether HTTP callers must present a bearer token that TokenReview accepts."""
        return self.auth is Auth.TOKENREVIEW or (self.auth is Auth.AUTO
                                                 and self.host not in LOOPBACK)


def load_settings(flags: Mapping[str, Any], environ: Mapping[str, str] | None = None
                  ) -> Settings:
    """Settings from flags (None or absent: not given) over ``environ`` over defaults.

    Raises:
        ConfigError: naming the flag or variable whose value is unusable.
    """
    env = os.environ if environ is None else environ

    def pick(flag: str, variable: str | None) -> tuple[str, Any] | None:
        value = flags.get(flag)
        if value is not None:
            return f"--{flag.replace('_', '-')}", value
        if variable is not None and env.get(variable, "") != "":
            return variable, env[variable]
        return None

    static = bool(flags.get("demo_static"))
    demo = bool(flags.get("demo")) or static
    transport = Transport.HTTP
    if (given := pick("transport", None)) is not None:
        transport = _choice(given, Transport)
    responses = Responses.JSON
    if (given := pick("responses", "MCP_RESPONSES")) is not None:
        responses = _choice(given, Responses)
    port = 8080 if (given := pick("port", "PORT")) is None else _port(given)
    host = "127.0.0.1" if (given := pick("host", "HOST")) is None else str(given[1])
    log_level = "INFO" if (given := pick("log_level", "LOG_LEVEL")) is None else _level(given)
    log_format = LogFormat.TEXT
    if (given := pick("log_format", "LOG_FORMAT")) is not None:
        log_format = _choice(given, LogFormat)
    tool_timeout = 10.0 if (given := pick("tool_timeout", "TOOL_TIMEOUT")) is None \
        else _duration(given)
    kubeconfig = pick("kubeconfig", None)
    context = pick("context", None)
    if demo and (kubeconfig or context):
        raise ConfigError("--demo-static" if static else "--demo",
                          "runs its own simulated cluster; drop --kubeconfig/--context")
    auth = Auth.AUTO
    if (given := pick("auth", "AUTH_MODE")) is not None:
        auth = _auth(given)
    if auth is Auth.NONE and host not in LOOPBACK and not flags.get("insecure_no_auth"):
        raise ConfigError("--auth", f"none on {host} lets anyone who reaches the port read the "
                          "cluster's topology; add --insecure-no-auth to accept that")
    secret_metadata = True if (given := pick("secret_metadata", "SECRET_METADATA")) is None \
        else _bool(given)
    dns_config = False if (given := pick("dns_config", "DNS_CONFIG")) is None else _bool(given)
    provider_status = demo if (given := pick("provider_status", "PROVIDER_STATUS")) is None \
        else _bool(given)
    audiences: tuple[str, ...] = ()
    if (given := pick("auth_audience", "AUTH_AUDIENCES")) is not None:
        audiences = _audiences(given)
    probe_namespace = PROBE_NAMESPACE
    if (given := pick("probe_namespace", "PROBE_NAMESPACE")) is not None:
        probe_namespace = _namespace(given)
    probe_image = PROBE_IMAGE
    if (given := pick("probe_image", "PROBE_IMAGE")) is not None:
        probe_image = _image(given)
    max_probes = MAX_CONCURRENT_PROBES
    if (given := pick("max_concurrent_probes", "MAX_CONCURRENT_PROBES")) is not None:
        max_probes = _positive_int(given)
    probes = False if (given := pick("probes", "PROBES")) is None else _bool(given)
    probe_mode = ProbeMode.POD
    if (given := pick("probe_mode", "PROBE_MODE")) is not None:
        probe_mode = _choice(given, ProbeMode)
    probe_timeout = PROBE_TIMEOUT if (given := pick("probe_timeout", "PROBE_TIMEOUT")) is None \
        else _duration(given)
    probe_rate = PROBE_RATE if (given := pick("probe_rate", "PROBE_RATE")) is None \
        else float(_positive_int(given))
    read_only = False if (given := pick("read_only", "READ_ONLY")) is None else _bool(given)
    if probes and auth is Auth.NONE and host not in LOOPBACK:
        # Probes are checked against the caller's own right to create pods: a caller nobody
        # authenticated has none to check.
        raise ConfigError("--probes", f"needs authenticated callers on {host}: drop --auth "
                          "none, or serve on 127.0.0.1")
    toolsets = None if (given := pick("toolsets", "TOOLSETS")) is None else _toolsets(given)
    namespaces = None if (given := pick("namespaces", "NAMESPACE")) is None \
        else parse_namespaces(given)
    if demo and namespaces is not None:
        raise ConfigError("--namespaces", "the demo watches its own whole cluster; drop it")
    knowledge_db = None if (given := pick("knowledge_db", "KNOWLEDGE_DB")) is None \
        else _knowledge_db(given)
    cluster = pick("cluster_name", "CLUSTER_NAME")
    if cluster is not None:
        cluster_name = _name(cluster)
    elif demo:
        cluster_name = "demo"
    elif env.get(IN_CLUSTER_HINT) and kubeconfig is None and context is None:
        # In a pod nothing else says which cluster this is, and answers from several
        # clusters must be told apart (ClusterMetadata.clusterName).
        raise ConfigError("CLUSTER_NAME", "required when running in a cluster, e.g. 'prod-eu-1'")
    else:
        cluster_name = str(context[1]) if context else "local"
    return Settings(
        cluster_name=cluster_name, host=host, port=port, transport=transport, demo=demo,
        demo_churn_interval=None if static else DEMO_CHURN_INTERVAL,
        kubeconfig=str(kubeconfig[1]) if kubeconfig else None,
        context=str(context[1]) if context else None,
        log_level=log_level, log_format=log_format, tool_timeout=tool_timeout, auth=auth,
        responses=responses,
        auth_audiences=audiences, probe_namespace=probe_namespace, probe_image=probe_image,
        max_concurrent_probes=max_probes, probes=probes, probe_mode=probe_mode,
        probe_timeout=probe_timeout, probe_rate=probe_rate, read_only=read_only,
        secret_metadata=secret_metadata, dns_config=dns_config,
        provider_status=provider_status, toolsets=toolsets,
        namespaces=namespaces, knowledge_db=knowledge_db,
    )


E = TypeVar("E", bound=StrEnum)


def _choice(given: tuple[str, Any], enum: type[E]) -> E:
    source, value = given
    try:
        return enum(str(value).lower())
    except ValueError:
        raise ConfigError(source, f"one of {', '.join(enum)}; got {value!r}") from None


def _auth(given: tuple[str, Any]) -> Auth:
    source, value = given
    try:
        return Auth(str(value).lower())
    except ValueError:
        raise ConfigError(source, f"one of {', '.join(Auth)}; got {value!r}") from None


def _bool(given: tuple[str, Any]) -> bool:
    source, value = given
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("true", "1", "yes", "on"):
        return True
    if text in ("false", "0", "no", "off"):
        return False
    raise ConfigError(source, f"true or false; got {value!r}")


def _port(given: tuple[str, Any]) -> int:
    source, value = given
    try:
        port = int(str(value).strip())
    except ValueError:
        port = -1
    if not 0 <= port <= 65535:
        raise ConfigError(source, f"a port number 1-65535 (0: any free port); got {value!r}")
    return port


def _level(given: tuple[str, Any]) -> str:
    source, value = given
    level = _LOG_LEVELS.get(str(value).strip().lower())
    if level is None:
        raise ConfigError(source, f"one of debug, info, warn, error; got {value!r}")
    return level


def parse_duration(text: str) -> float | None:
    """``"10s"`` -> 10.0, ``"250ms"`` -> 0.25, ``"1m"`` -> 60.0, ``"3"`` -> 3.0; else None."""
    match = _DURATION.match(text)
    if match is None:
        return None
    return float(match.group(1)) * _UNIT_SECONDS[match.group(2)]


def _duration(given: tuple[str, Any]) -> float:
    source, value = given
    seconds = parse_duration(str(value))
    if seconds is None or seconds <= 0:
        raise ConfigError(source, f"a positive duration such as 10s, 500ms or 1m; got {value!r}")
    return seconds


def _name(given: tuple[str, Any]) -> str:
    source, value = given
    name = str(value).strip()
    if not name or len(name) > 253 or any(c.isspace() for c in name):
        raise ConfigError(source, f"a non-empty name without spaces; got {value!r}")
    return name


def _audiences(given: tuple[str, Any]) -> tuple[str, ...]:
    """A comma-separated list (the variable), or the repeated flag's list."""
    source, value = given
    items = value if isinstance(value, list | tuple) else str(value).split(",")
    audiences = tuple(dict.fromkeys(str(item).strip() for item in items))
    if not audiences or any(not a or any(c.isspace() for c in a) for a in audiences):
        raise ConfigError(source, "audiences without spaces, comma-separated, e.g. "
                          f"'netsight' or 'netsight,https://netsight.example.com'; got {value!r}")
    return audiences


def _namespace(given: tuple[str, Any]) -> str:
    source, value = given
    name = str(value).strip()
    if not _DNS_LABEL.match(name):
        raise ConfigError(source, "a namespace name (lower-case letters, digits and '-', at "
                          f"most 63 characters), e.g. 'mcp-diagnostics'; got {value!r}")
    return name


def parse_namespaces(given: tuple[str, Any]) -> tuple[str, ...]:
    """Namespace names, comma-separated (the variable) or the repeated flag's list; sorted,
    each once."""
    source, value = given
    items = value if isinstance(value, list | tuple) else [value]
    names = [n.strip() for item in items for n in str(item).split(",") if n.strip()]
    bad = [n for n in names if not _DNS_LABEL.match(n)]
    if bad or not names:
        raise ConfigError(source, "namespace names (lower-case letters, digits and '-', at "
                          "most 63 characters), comma-separated, e.g. 'shop,data'; got "
                          f"{value!r}")
    return tuple(sorted(set(names)))


def _image(given: tuple[str, Any]) -> str:
    source, value = given
    image = str(value).strip()
    if len(image) > 512 or not _IMAGE.match(image):
        raise ConfigError(source, "an image reference such as "
                          f"'ghcr.io/mcp-k8s-networking/probe:0.1.0'; got {value!r}")
    return image


def _positive_int(given: tuple[str, Any]) -> int:
    source, value = given
    try:
        number = int(str(value).strip())
    except ValueError:
        number = 0
    if number < 1:
        raise ConfigError(source, f"a whole number of at least 1; got {value!r}")
    return number


def _knowledge_db(given: tuple[str, Any]) -> str | None:
    """A SQLite file path or a postgresql:// URL; ``off`` for none."""
    source, value = given
    text = str(value).strip()
    if text.lower() in {"off", "none", "false"}:
        return None
    if "://" in text and not text.startswith(("postgresql://", "postgres://", "sqlite://")):
        raise ConfigError(source, "a SQLite file path, a postgresql:// URL, or 'off'; got "
                          f"{text.partition('://')[0]!r}://...")
    return text


def _toolsets(given: tuple[str, Any]) -> frozenset[Toolset]:
    """A comma-separated list of toolset names."""
    source, value = given
    names = [name.strip().lower() for name in str(value).split(",") if name.strip()]
    valid = ", ".join(Toolset)
    unknown = [name for name in names if name not in {t.value for t in Toolset}]
    if unknown:
        raise ConfigError(source, f"unknown toolset {', '.join(map(repr, unknown))}; valid "
                          f"toolsets: {valid} (comma-separated, e.g. 'core,policy')")
    if not names:
        raise ConfigError(source, f"at least one toolset of {valid}, comma-separated; "
                          f"got {value!r}")
    return frozenset(Toolset(name) for name in names)
