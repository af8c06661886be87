"""What ``netsight serve`` runs with: command-line flags over environment variables over defaults.

The environment variables are the ones the architecture decisions name (``CLUSTER_NAME``,
``PORT``, ``LOG_LEVEL``, ``TOOL_TIMEOUT``), plus ``HOST``, ``AUTH_MODE`` and ``KUBECONFIG`` for
symmetry with the flags, and ``SECRET_METADATA`` (watch Secret and ConfigMap names). A bad
value stops the server before it starts, with a message naming the variable (or flag) and what
a valid value looks like: a typo in a Helm values file should fail the rollout, not produce a
server that quietly runs with a default.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m)?\s*$")
_UNIT_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, None: 1.0}
_LOG_LEVELS = {"debug": "DEBUG", "info": "INFO", "warn": "WARNING", "warning": "WARNING",
               "error": "ERROR"}
IN_CLUSTER_HINT = "KUBERNETES_SERVICE_HOST"  # set by the kubelet in every pod


class Transport(StrEnum):
    HTTP = "http"
    STDIO = "stdio"


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
    kubeconfig: str | None = None
    context: str | None = None
    log_level: str = "INFO"  # a logging module level name
    tool_timeout: float = 10.0  # seconds
    auth: Auth = Auth.AUTO
    shutdown_timeout: float = 5.0  # seconds to drain in-flight calls before cancelling them
    # Watch Secrets and ConfigMaps as metadata only (names, for TLS and CA references);
    # needs list/watch on them, which RBAC cannot narrow to metadata.
    secret_metadata: bool = True

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

    demo = bool(flags.get("demo"))
    transport = Transport.HTTP
    if (given := pick("transport", None)) is not None:
        transport = _choice(given, Transport)
    port = 8080 if (given := pick("port", "PORT")) is None else _port(given)
    host = "127.0.0.1" if (given := pick("host", "HOST")) is None else str(given[1])
    log_level = "INFO" if (given := pick("log_level", "LOG_LEVEL")) is None else _level(given)
    tool_timeout = 10.0 if (given := pick("tool_timeout", "TOOL_TIMEOUT")) is None \
        else _duration(given)
    kubeconfig = pick("kubeconfig", None)
    context = pick("context", None)
    if demo and (kubeconfig or context):
        raise ConfigError("--demo", "runs its own simulated cluster; drop --kubeconfig/--context")
    auth = Auth.AUTO
    if (given := pick("auth", "AUTH_MODE")) is not None:
        auth = _auth(given)
    if auth is Auth.NONE and host not in LOOPBACK and not flags.get("insecure_no_auth"):
        raise ConfigError("--auth", f"none on {host} lets anyone who reaches the port read the "
                          "cluster's topology; add --insecure-no-auth to accept that")
    secret_metadata = True if (given := pick("secret_metadata", "SECRET_METADATA")) is None \
        else _bool(given)
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
        kubeconfig=str(kubeconfig[1]) if kubeconfig else None,
        context=str(context[1]) if context else None,
        log_level=log_level, tool_timeout=tool_timeout, auth=auth,
        secret_metadata=secret_metadata,
    )


def _choice(given: tuple[str, Any], enum: type[Transport]) -> Transport:
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
