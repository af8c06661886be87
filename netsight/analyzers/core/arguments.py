"""Typed tool arguments: the schema agents see and the validation they get.

Every tool takes a pydantic model. Types are strict (no "true" for true), but a port may be
sent as a number or a numeric string ("5432"), and where the tool can look it up, as a
port name. Unknown fields are rejected, and each check says what a valid value looks like.
Objects are named by :class:`~netsight.analyzers.core.object_names.ObjectName`.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, ConfigDict, Field, PlainValidator, WithJsonSchema

from netsight.analyzers.core.contracts import Model
from netsight.analyzers.core.object_names import DNS_LABEL
from netsight.analyzers.core.quoting import as_sent
from netsight.graph.model.records import IANA_SVC_NAME


def _namespace(value: str) -> str:
    if len(value) > 63 or not DNS_LABEL.fullmatch(value):
        raise ValueError(
            f"{as_sent(value)} is not a namespace name: lowercase letters, digits and '-', "
            "at most 63 characters"
        )
    return value


def _port_number(value: object) -> int:
    # bool is an int in Python; JSON true is no port.
    if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= 5:
        value = int(value)
    if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= 65535:
        return value
    if isinstance(value, str) and IANA_SVC_NAME.fullmatch(value):
        raise ValueError(f"{as_sent(value)} is a port name; this argument takes a port number "
                         "(1-65535), as it names no one object to look the name up on")
    raise ValueError(f"{as_sent(value)} is not a port: give a number from 1 to 65535")


def _port(value: object) -> int | str:
    if isinstance(value, str) and IANA_SVC_NAME.fullmatch(value):
        return value
    try:
        return _port_number(value)
    except ValueError:
        raise ValueError(
            f"{as_sent(value)} is not a port: give a number from 1 to 65535 or a port name "
            "(lowercase letters, digits and '-', at least one letter, at most 15 characters)"
        ) from None


def _generation_or_time(value: object) -> int | str:
    if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    raise ValueError(f"{as_sent(value)}: give a graph generation (a whole number) or a time "
                     "as text ('2025-06-01T10:00:00Z', '10m')")


Namespace = Annotated[str, AfterValidator(_namespace)]
# Either form, one validator each: a union would report every member's failure, in
# pydantic's own words ("constrained-int", "function-after[...]").
PortNumber = Annotated[int, PlainValidator(_port_number), WithJsonSchema(
    {"anyOf": [{"type": "integer", "minimum": 1, "maximum": 65535},
               {"type": "string", "pattern": "^[0-9]{1,5}$"}]})]
Port = Annotated[int | str, PlainValidator(_port), WithJsonSchema(
    {"anyOf": [{"type": "integer", "minimum": 1, "maximum": 65535}, {"type": "string"}]})]
# A generation or a time (checked against the graph by the tool that reads it).
GenerationOrTime = Annotated[int | str, PlainValidator(_generation_or_time), WithJsonSchema(
    {"anyOf": [{"type": "integer"}, {"type": "string"}]})]


class ToolArgs(Model):
    """Base of every tool's arguments."""

    model_config = ConfigDict(strict=True, frozen=True)

    detail: bool = Field(
        default=False,
        description="With evidence",
    )


class PagedArgs(ToolArgs):
    limit: int = Field(default=10, ge=1, le=500, description="Items per page")
    cursor: str | None = Field(
        default=None, description="nextCursor of the previous page"
    )
