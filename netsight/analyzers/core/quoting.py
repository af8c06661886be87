"""A caller's value as error messages quote it: at most a short prefix.

A value can be megabytes long; an error that echoed it whole would send back as much as it
was sent, or more where a message names it twice. A prefix is enough to recognise it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

QUOTED = 80  # characters of a value an error message shows


def quoted(value: object) -> str:
    """``repr(value)``, or of its first :data:`QUOTED` characters and how long it is."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 256:
        # repr() of an integer of more than 4300 digits raises; the size says enough.
        return f"an integer of {value.bit_length()} bits"
    if isinstance(value, str):
        return repr(value) if len(value) <= QUOTED else \
            f"{value[:QUOTED]!r}... ({len(value)} characters)"
    try:
        text = repr(value)
    except (ValueError, RecursionError):  # a huge integer inside, or nesting too deep
        return f"a {type(value).__name__}"
    return text if len(text) <= QUOTED else f"{text[:QUOTED]}... ({len(text)} characters)"


def as_sent(value: object) -> str:
    """A caller's JSON value as an error quotes it: a string or number :func:`quoted`, null
    and true as JSON spells them (not Python's None and True), a list or an object by what
    it is (its items are not what was wrong)."""
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, Mapping):
        return "an object"
    return quoted(value)


def shortened(text: str, most: int = QUOTED) -> str:
    """``text`` as is when short, else its first ``most`` characters and its length (for a
    value shown without quotes, such as an argument's name)."""
    return text if len(text) <= most else f"{text[:most]}... ({len(text)} characters)"


def listed(values: list[str], most: int = 5) -> str:
    """The first ``most`` of ``values``, each :func:`shortened`, joined; and how many more."""
    shown = ", ".join(shortened(value) for value in values[:most])
    return shown if len(values) <= most else f"{shown} and {len(values) - most} more"


def unset_or_quoted(value: str | None) -> str:
    """An optional field of an object, quoted, or "(unset)": never Python's ``None``."""
    return "(unset)" if value is None else repr(value)


def labels_text(labels: Mapping[str, str]) -> str:
    """Labels as ``kubectl -l`` takes them: ``app=web,tier=front``."""
    return ",".join(f"{k}={v}" for k, v in labels.items())


def spec_text(value: object) -> str:
    """A fragment of an object's spec as answers quote it: compact JSON, never a Python repr
    (``{'statusCode': 503}`` reads as no Kubernetes tool writes it)."""
    if isinstance(value, str):
        return value
    return json.dumps(value, separators=(",", ":"), default=str)
