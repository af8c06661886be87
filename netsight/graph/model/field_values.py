"""Reading one field of a raw API object: its value as the record keeps it, or a
MalformedObject naming the field's path when the API server would not have accepted it."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from datetime import datetime
from typing import Any

import orjson

from netsight.graph.model.errors import MalformedObject
from netsight.graph.model.kinds import kind_id
from netsight.graph.model.records import DEFAULT_DNS, EMPTY_MAP, IANA_SVC_NAME, PodDNS

# Annotations that change networking behaviour; every other annotation is dropped.
KEPT_ANNOTATION_PREFIXES = (
    "kubernetes.io/ingress.class",
    "ingressclass.kubernetes.io/",
    "service.kubernetes.io/",
    "service.beta.kubernetes.io/",
    "networking.istio.io/",
    "sidecar.istio.io/",
    "istio.io/",
    "ambient.istio.io/",
    "traffic.sidecar.istio.io/",
    "linkerd.io/",
    "config.linkerd.io/",
    "kuma.io/",
    "policy.cilium.io/",
    "io.cilium/",
    # Written on Nodes by CNI agents: the CNI detection reads them
    # (analyzers/policy/cni_detection.py).
    "network.cilium.io/",
    "io.cilium.network.",
    "projectcalico.org/",
    "kube-router.io/",
    "flannel.alpha.coreos.com/",
)


def interned(value: str) -> str:
    # Kind members are already singletons, and sys.intern takes exact str only.
    return sys.intern(value) if type(value) is str else value


def timestamp(raw: object) -> str | None:
    # YAML reads an unquoted RFC 3339 timestamp as a datetime; keep the API's string form.
    if isinstance(raw, datetime):
        return shared_timestamp(raw.strftime("%Y-%m-%dT%H:%M:%SZ"))
    if type(raw) is str and raw:
        found = _TIMESTAMPS.get(raw)  # shared_timestamp, inline: once per object
        return found if found is not None else shared_timestamp(raw)
    return raw if isinstance(raw, str) and raw else None


# Objects created together (a ReplicaSet's pods, a rollout) carry the same second: records
# share one string for it. Bounded: cleared when it grows past the limit; lists come in
# name order, so a ReplicaSet's pods arrive together.
_TIMESTAMPS: dict[str, str] = {}
_TIMESTAMPS_LIMIT = 1024


def shared_timestamp(text: str) -> str:
    found = _TIMESTAMPS.get(text)
    if found is None:
        if len(_TIMESTAMPS) >= _TIMESTAMPS_LIMIT:
            _TIMESTAMPS.clear()
        found = _TIMESTAMPS[text] = text
    return found


def frozen_copy(raw: Any, path: str) -> Any:
    """A deep copy of JSON-like data, so a record never shares the caller's containers."""
    try:
        return orjson.loads(orjson.dumps(raw, default=str))
    except orjson.JSONEncodeError as exc:
        # YAML allows keys JSON does not (`80: x`), and nesting beyond orjson's limit.
        raise MalformedObject(path, f"is not JSON-compatible data ({exc})") from None


def kept_annotations(raw: object) -> Mapping[str, str]:
    if not isinstance(raw, dict):
        return EMPTY_MAP
    kept = {
        k: v
        for k, v in raw.items()
        if isinstance(k, str) and isinstance(v, str) and k.startswith(KEPT_ANNOTATION_PREFIXES)
    }
    return kept or EMPTY_MAP


def controller_owner(raw: object) -> tuple[str, str] | None:
    """(kind id, name) of the controlling owner, or of the first owner if none controls."""
    if not isinstance(raw, list):
        return None
    if len(raw) == 1:  # the usual case: one owner, controlling or not
        chosen = raw[0]
        if not isinstance(chosen, dict) or not chosen.get("kind") or not chosen.get("name"):
            return None
    else:
        owners = [o for o in raw if isinstance(o, dict) and o.get("kind") and o.get("name")]
        chosen = next((o for o in owners if o.get("controller")), owners[0] if owners else None)
        if chosen is None:
            return None
    # The kind as keys spell it: apps/v1 ReplicaSet -> ReplicaSet, an Istio Gateway owner
    # -> Gateway.networking.istio.io.
    kid = kind_id(str(chosen.get("apiVersion") or "v1"), str(chosen["kind"]))
    return share_owner((interned(kid), interned(str(chosen["name"]))))


def share_owner(owner: tuple[str, str]) -> tuple[str, str]:
    """One tuple for every record naming the same owner: the pods of one ReplicaSet."""
    shared = _OWNERS.get(owner)
    if shared is None:
        if len(_OWNERS) >= _OWNERS_LIMIT:
            _OWNERS.clear()
        shared = _OWNERS[owner] = owner
    return shared


_OWNERS: dict[tuple[str, str], tuple[str, str]] = {}
_OWNERS_LIMIT = 65536


def as_list(raw: object, path: str) -> list[Any]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise MalformedObject(path, f"must be a list, got {type(raw).__name__}")
    return raw


def as_dict(raw: object, path: str) -> dict[str, Any]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise MalformedObject(path, f"must be an object, got {type(raw).__name__}")
    return raw


def as_written(raw: object) -> str:
    """A field's bad value as a manifest would spell it: a string quoted, anything else as
    JSON (``["TCP"]``, ``null``), never a Python repr."""
    if isinstance(raw, str):
        return repr(raw)
    try:
        return orjson.dumps(raw, default=str).decode()
    except (TypeError, orjson.JSONEncodeError):
        return type(raw).__name__


def port_number(raw: object, path: str, *, optional: bool = False) -> int | None:
    if raw is None and optional:
        return None
    # bool is an int subclass in Python; YAML `true` is never a port.
    if not isinstance(raw, int) or isinstance(raw, bool) or not 1 <= raw <= 65535:
        raise MalformedObject(path, f"must be a port number from 1 to 65535, got {as_written(raw)}")
    return raw


def port_protocol(raw: object, path: str) -> str:
    """A protocol as written. A string outside TCP/UDP/SCTP is kept (and reported by
    :func:`invalid_values`): dropping the whole object would hide more than it shows."""
    if raw is None:
        return "TCP"
    if not isinstance(raw, str) or not raw:
        raise MalformedObject(path, f"must be TCP, UDP or SCTP, got {as_written(raw)}")
    return interned(raw)


def optional_str(raw: object, path: str) -> str | None:
    if raw is None or raw == "":
        return None
    if not isinstance(raw, str):
        raise MalformedObject(path, f"must be a string, got {type(raw).__name__}")
    # Port, node, container and account names repeat across thousands of objects.
    return interned(raw)


def int_or_port_name(raw: object, path: str) -> int | str:
    """An IntOrString port reference: a number, or an IANA_SVC_NAME naming a container port."""
    if isinstance(raw, str):
        if not IANA_SVC_NAME.match(raw):
            raise MalformedObject(
                path,
                f"{raw!r} is neither a port number nor a valid port name (IANA_SVC_NAME: "
                "lowercase letters, digits and '-', at least one letter, at most 15 characters)",
            )
        return raw
    number = port_number(raw, path)
    assert number is not None
    return number


def policy_rules(raw: object, path: str) -> tuple[Mapping[str, Any], ...]:
    rules = as_list(raw, path)
    for i, rule in enumerate(rules):
        if not isinstance(rule, dict):
            raise MalformedObject(f"{path}[{i}]", "must be an object")
    return tuple(frozen_copy(rules, path))


def cache_sizes() -> dict[str, int]:
    """Entries in this module's bounded caches (graph/store/footprint.py)."""
    return {"cache_record_owners": len(_OWNERS), "cache_timestamps": len(_TIMESTAMPS)}


_DNS: dict[PodDNS, PodDNS] = {}
_DNS_LIMIT = 4096


def shared_dns(policy: str | None, nameservers: tuple[str, ...], searches: tuple[str, ...],
               options: tuple[tuple[str, str | None], ...]) -> PodDNS | None:
    """A pod's DNS settings, one value per distinct setting (pods of a template share it);
    None for the default (ClusterFirst, no dnsConfig)."""
    dns = PodDNS(interned(policy) if policy else "ClusterFirst", nameservers, searches, options)
    if dns == DEFAULT_DNS:
        return None
    found = _DNS.get(dns)
    if found is None:
        if len(_DNS) >= _DNS_LIMIT:
            _DNS.clear()
        found = _DNS[dns] = dns
    return found


def pod_dns(spec: Mapping[str, Any], path: str) -> PodDNS | None:
    """spec.dnsPolicy and spec.dnsConfig of a pod (or pod template) spec."""
    policy = optional_str(spec.get("dnsPolicy"), f"{path}.dnsPolicy")
    config = as_dict(spec.get("dnsConfig"), f"{path}.dnsConfig")

    def strings(name: str) -> tuple[str, ...]:
        items = as_list(config.get(name), f"{path}.dnsConfig.{name}")
        for i, item in enumerate(items):
            if not isinstance(item, str):
                raise MalformedObject(f"{path}.dnsConfig.{name}[{i}]",
                                      f"must be a string, got {type(item).__name__}")
        return tuple(items)

    options: list[tuple[str, str | None]] = []
    for i, option in enumerate(as_list(config.get("options"), f"{path}.dnsConfig.options")):
        where = f"{path}.dnsConfig.options[{i}]"
        entry = as_dict(option, where)
        name = optional_str(entry.get("name"), f"{where}.name")
        value = optional_str(entry.get("value"), f"{where}.value")
        if name is not None:
            options.append((name, value))
    return shared_dns(policy, strings("nameservers"), strings("searches"), tuple(options))
