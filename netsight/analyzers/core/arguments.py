"""Typed tool arguments: the schema agents see and the validation they get.

Every tool takes a pydantic model. Types are strict (no "80" for 80), unknown fields are
rejected, and each check says what a valid value looks like.
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator, ConfigDict, Field

from netsight.analyzers.core.contracts import Model
from netsight.analyzers.core.quoting import quoted
from netsight.graph.model.records import IANA_SVC_NAME

# Matched whole (fullmatch): "$" would also match before a final newline ("shop\n").
_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")


def _namespace(value: str) -> str:
    if len(value) > 63 or not _DNS_LABEL.fullmatch(value):
        raise ValueError(
            f"{quoted(value)} is not a namespace name: lowercase letters, digits and '-', "
            "at most 63 characters"
        )
    return value


def _namespaced_name(value: str) -> str:
    namespace, sep, name = value.partition("/")
    if not sep or len(name) > 253 or not _DNS_LABEL.fullmatch(namespace) \
            or not _DNS_SUBDOMAIN.fullmatch(name):
        raise ValueError(f"must be 'namespace/name', e.g. 'shop/cart'; got {quoted(value)}")
    return value


def _port_name(value: str) -> str:
    if not IANA_SVC_NAME.fullmatch(value):
        # isascii: "²".isdigit() holds too, and is no port number.
        number = value.isascii() and value.isdigit()
        hint = "; give a port number as a JSON number" if number else ""
        raise ValueError(
            f"{quoted(value)} is not a port name (lowercase letters, digits and '-', at least "
            f"one letter, at most 15 characters){hint}"
        )
    return value


Namespace = Annotated[str, AfterValidator(_namespace)]
NamespacedName = Annotated[str, AfterValidator(_namespaced_name)]
PortNumber = Annotated[int, Field(ge=1, le=65535)]
PortName = Annotated[str, AfterValidator(_port_name)]


class ToolArgs(Model):
    """Base of every tool's arguments."""

    model_config = ConfigDict(strict=True, frozen=True)

    detail: bool = Field(
        default=False,
        description="Add detail, suggestion and evidence (exact field paths) to each finding",
    )


class PagedArgs(ToolArgs):
    limit: int = Field(default=10, ge=1, le=500, description="Items per page (1-500)")
    cursor: str | None = Field(
        default=None, description="nextCursor from the previous page of the same query"
    )
