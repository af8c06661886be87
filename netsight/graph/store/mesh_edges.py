"""The Services Istio routing objects name, as graph edges.

A VirtualService routes the requests for its ``spec.hosts`` (``configures``) to the
destinations of its http, tls and tcp routes (``routes_to``); a DestinationRule sets the
traffic policy of its ``spec.host`` (``configures``). As edges they put a mesh object next to
the Service it acts on, in the graph's export and for an analyzer going from a Service to what
routes to it. A host names a Service when it is a short name (completed in the object's
namespace, as Istio does) or ``name.namespace.svc.cluster.local``; wildcards and other dotted
names (ServiceEntry hosts) yield no edge. Whether the route is *valid* (subsets, exportTo,
ports) is the mesh analyzers' question; an edge says only "names".
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from netsight.graph.model.kinds import Kind, Rel, make_key
from netsight.graph.model.records import GenericRecord

GROUP = "networking.istio.io"
ROUTE_SECTIONS = ("http", "tls", "tcp")
# name.namespace.svc.cluster.local: meshConfig's default domain, as the mesh analyzers read it.
_SERVICE_FQDN = re.compile(r"([a-z0-9-]+)\.([a-z0-9-]+)\.svc\.cluster\.local")
_SHORT_NAME = re.compile(r"[a-z0-9-]+")

Edge = tuple[str, str, Rel]


def service_key(namespace: str, host: object) -> str | None:
    """The key of the Service ``host`` names from ``namespace``, or None if it names none."""
    if not isinstance(host, str):
        return None
    # fullmatch: ``$`` would also match before a trailing newline, naming no Service.
    if _SHORT_NAME.fullmatch(host):
        return make_key(Kind.SERVICE, namespace, host)
    match = _SERVICE_FQDN.fullmatch(host)
    if match is None:
        return None
    return make_key(Kind.SERVICE, match.group(2), match.group(1))


def references(record: GenericRecord) -> Iterator[Edge]:
    if record.api_version.rpartition("/")[0] != GROUP or not isinstance(record.spec, Mapping):
        return
    spec = record.spec
    if record.kind == "DestinationRule":
        target = service_key(record.namespace, spec.get("host"))
        if target is not None:
            yield record.key, target, Rel.CONFIGURES
    elif record.kind == "VirtualService":
        for host in _list(spec.get("hosts")):
            target = service_key(record.namespace, host)
            if target is not None:
                yield record.key, target, Rel.CONFIGURES
        for section in ROUTE_SECTIONS:
            for route in _list(spec.get(section)):
                if not isinstance(route, Mapping):
                    continue
                for weighted in _list(route.get("route")):
                    destination = weighted.get("destination") \
                        if isinstance(weighted, Mapping) else None
                    if isinstance(destination, Mapping):
                        target = service_key(record.namespace, destination.get("host"))
                        if target is not None:
                            yield record.key, target, Rel.ROUTES_TO


def _list(raw: object) -> list[Any]:
    return list(raw) if isinstance(raw, list | tuple) else []
