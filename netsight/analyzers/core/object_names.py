"""How a caller names an object in any tool's arguments, read once for every tool.

The same forms everywhere: ``namespace/name``, ``Kind/namespace/name`` (``Kind/name`` for a
cluster-scoped kind), ``ip:ADDR``, and a Service's DNS name (``name.namespace.svc``, with
or without the cluster domain). A name is kept as the text the caller sent (answers echo
it) with what that text says parsed beside it; which kinds an argument may name, and what
an address or a DNS name stands for, is decided where the graph is at hand.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Any

from pydantic import GetCoreSchemaHandler
from pydantic_core import core_schema

from netsight.analyzers.core.quoting import quoted

# Matched whole (fullmatch): "$" would also match before a final newline ("shop\n").
DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
# An API kind as the API spells it: Service, HTTPRoute, NetworkPolicy.
_KIND = re.compile(r"[A-Z][A-Za-z0-9]{0,62}")
# name.namespace.svc, then the cluster domain if any (cluster.local unless configured).
_SERVICE_DNS = re.compile(r"(?P<name>[a-z0-9]([-a-z0-9]*[a-z0-9])?)\."
                          r"(?P<namespace>[a-z0-9]([-a-z0-9]*[a-z0-9])?)\.svc"
                          r"(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\.?")
# An IPv6 address ending in an IPv4 one (45 characters) with a zone ("%eth0"), which names an
# interface of at most 15 characters: longer text is no address, however much ipaddress takes.
_LONGEST_ADDRESS = 45 + 1 + 15

FORMS = ("'namespace/name', 'Kind/namespace/name', 'ip:ADDR' or a Service DNS name "
         "('name.namespace.svc')")


class ObjectName(str):
    """The caller's text, with what it names: a kind (None: unstated), a namespace and name,
    or an address (``ip:ADDR``). ``dns`` is set when it was a Service DNS name."""

    __slots__ = ("address", "dns", "kind", "name", "namespace")
    kind: str | None
    namespace: str | None
    name: str
    address: str | None
    dns: bool

    @classmethod
    def parse(cls, text: str) -> ObjectName:
        """Raises ValueError saying which forms are accepted."""
        parsed = super().__new__(cls, text)
        parsed.kind, parsed.namespace, parsed.name = None, None, ""
        parsed.address, parsed.dns = None, False
        if text.startswith("ip:"):
            parsed.address = _address(text[3:])
            return parsed
        dns = _SERVICE_DNS.fullmatch(text) if len(text) <= 253 else None
        if dns is not None and "/" not in text:
            parsed.kind, parsed.dns = "Service", True
            parsed.namespace, parsed.name = dns["namespace"], dns["name"]
            return parsed
        parts = text.split("/")
        if len(parts) == 2 and _KIND.fullmatch(parts[0]):
            parsed.kind, parsed.name = parts  # a cluster-scoped object: Kind/name
        elif len(parts) == 2:
            parsed.namespace, parsed.name = parts
        elif len(parts) == 3 and _KIND.fullmatch(parts[0]):
            parsed.kind, parsed.namespace, parsed.name = parts
        elif len(parts) == 1:
            raise ValueError(f"{quoted(text)} has no namespace: give {FORMS}, e.g. 'shop/cart'")
        elif len(parts) == 3 and parts[0][:1].islower():
            raise ValueError(f"{quoted(text)}: kinds are spelled as the API spells them "
                             f"({parts[0][:1].upper()}{parts[0][1:]}, not {parts[0]})")
        else:
            raise ValueError(f"{quoted(text)} names no object: give {FORMS}, e.g. 'shop/cart'")
        if parsed.namespace is not None and (len(parsed.namespace) > 63
                                             or not DNS_LABEL.fullmatch(parsed.namespace)):
            raise ValueError(f"{quoted(parsed.namespace)} is not a namespace name (lowercase "
                             f"letters, digits and '-'); give {FORMS}")
        if len(parsed.name) > 253 or not DNS_SUBDOMAIN.fullmatch(parsed.name):
            raise ValueError(f"{quoted(parsed.name)} is not an object name (lowercase letters, "
                             f"digits, '-' and '.'); give {FORMS}")
        return parsed

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any,
                                     handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        # A plain string on the wire and in the schema; parsed once, on validation.
        return core_schema.no_info_after_validator_function(
            cls.parse, core_schema.str_schema(),
            serialization=core_schema.plain_serializer_function_ser_schema(str))

    def __reduce__(self) -> tuple[Any, ...]:
        return ObjectName.parse, (str(self),)


def _address(text: str) -> str:
    try:
        if len(text) > _LONGEST_ADDRESS:
            raise ValueError(text)
        return ipaddress.ip_address(text).compressed
    except ValueError:
        raise ValueError(f"{quoted(text)} is not an IP address (e.g. 'ip:203.0.113.7')"
                         ) from None
