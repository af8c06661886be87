"""Hostname matching between listeners, routes and requests, wildcards included.

Gateway API Hostname: a leading ``*.`` label is a suffix match over one *or more* labels
(``*.example.com`` matches ``a.example.com`` and ``a.b.example.com``, never
``example.com``) — unlike Ingress, where the wildcard covers exactly one label.
"""

from __future__ import annotations

from collections.abc import Sequence


def is_wildcard(hostname: str) -> bool:
    return hostname.startswith("*.")


def matches(pattern: str, host: str) -> bool:
    """Whether ``host`` (precise, or itself a wildcard) is covered by ``pattern``."""
    if pattern == host:
        return True
    if not pattern.startswith("*."):  # is_wildcard, inline: read for every listener
        return False
    suffix = pattern[1:]  # ".example.com"
    if host.startswith("*."):
        # *.a.example.com is inside *.example.com; *.example.com is not inside itself's parent.
        return host[1:].endswith(suffix) and len(host) > len(pattern)
    return host.endswith(suffix)


def intersect(a: str, b: str) -> str | None:
    """The hostnames both cover, as one hostname (the more specific), or None."""
    if matches(a, b):
        return b
    if matches(b, a):
        return a
    return None


def effective(listener: str | None, route: Sequence[str]) -> list[str] | None:
    """Hostnames a route serves on a listener; ``[]`` means no intersection.

    HTTPRoute.spec.hostnames: when both specify hostnames, route hostnames that do not
    match the listener's are ignored, and with none left the route is not accepted.
    ``None`` means "any hostname" (neither side restricts).
    """
    if listener is None:
        return list(route) or None
    if not route:
        return [listener]
    found = []
    for hostname in route:
        common = intersect(listener, hostname)
        if common is not None and common not in found:
            found.append(common)
    return found
