"""Reading a policy object's spec field by field, refusing what netsight does not evaluate.

Every policy kind is built through these: an unknown field, a value of the wrong type or
one the API server would reject raises :class:`Unsupported` with the field's path, and the
policy is then reported and decides nothing, rather than being evaluated as if the field
were absent.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Mapping
from typing import Any

from netsight.graph.model.errors import MalformedObject
from netsight.graph.model.records import PROTOCOLS
from netsight.graph.model.selectors import LabelSelector, parse_label_selector


class Unsupported(Exception):
    """A policy shape netsight does not evaluate (or the API server would reject)."""

    def __init__(self, field_path: str, message: str) -> None:
        super().__init__(f"{field_path}: {message}")
        self.field_path, self.message = field_path, message


def fields(raw: Any, path: str, known: Iterable[str]) -> Mapping[str, Any]:
    """``raw`` as an object holding only ``known`` keys; anything else is Unsupported."""
    if not isinstance(raw, dict):
        raise Unsupported(path, f"must be an object, got {type(raw).__name__}")
    extra = sorted(set(raw) - set(known))
    if extra:
        raise Unsupported(f"{path}.{extra[0]}", "a field netsight does not evaluate")
    return raw


def items(raw: Any, path: str) -> list[Any]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise Unsupported(path, f"must be a list, got {type(raw).__name__}")
    return raw


def selector(raw: Any, path: str) -> LabelSelector:
    if raw is not None:
        fields(raw, path, ("matchLabels", "matchExpressions"))
    try:
        return parse_label_selector(raw, path)
    except MalformedObject as exc:
        raise Unsupported(exc.field_path or path, exc.message) from None


def network(raw: Any, path: str) -> ipaddress.IPv4Network | ipaddress.IPv6Network:
    if not isinstance(raw, str):
        raise Unsupported(path, "must be a CIDR string")
    try:
        return ipaddress.ip_network(raw, strict=False)
    except ValueError:
        raise Unsupported(path, f"{raw!r} is not a CIDR") from None


def protocol(raw: Any, path: str) -> str:
    value = "TCP" if raw is None else raw
    if not isinstance(value, str) or value not in PROTOCOLS:
        raise Unsupported(path, f"protocol {raw!r} is not TCP, UDP or SCTP")
    return str(value)


def digits(text: str) -> int | None:
    """The number ``text`` writes in ASCII digits, else None: "²" is a digit to
    str.isdigit and no number to int, and int() refuses thousands of digits, which are no
    port anyway (kept as a number past any port)."""
    if not (text.isascii() and text.isdigit()):
        return None
    return int(text) if len(text) <= 20 else 10**20


def port_number(raw: Any, path: str) -> int:
    if not isinstance(raw, int) or isinstance(raw, bool) or not 1 <= raw <= 65535:
        raise Unsupported(path, f"must be a port number 1-65535, got {raw!r}")
    return raw
