"""Why an object from the cluster or a manifest could not become a record."""

from __future__ import annotations


class MalformedObject(ValueError):
    """An object whose shape netsight cannot read; carries the field path at fault."""

    def __init__(self, field_path: str, message: str) -> None:
        super().__init__(f"{field_path}: {message}")
        self.field_path = field_path
        self.message = message
