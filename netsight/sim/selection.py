"""What one list or watch asks for: a namespace, label and field selectors."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from netsight.graph.model.selectors import LabelSelector


@dataclass(frozen=True, slots=True)
class FieldRequirement:
    path: tuple[str, ...]
    value: str
    equal: bool

    def matches(self, obj: Mapping[str, Any]) -> bool:
        current: Any = obj
        for part in self.path:
            current = current.get(part) if isinstance(current, dict) else None
        actual = "" if current is None else str(current)
        return (actual == self.value) == self.equal


def parse_field_selector(text: str) -> tuple[FieldRequirement, ...]:
    requirements = []
    for term in filter(None, (t.strip() for t in text.split(","))):
        if "!=" in term:
            path, _, value = term.partition("!=")
            equal = False
        elif "=" in term:
            path, _, value = term.replace("==", "=").partition("=")
            equal = True
        else:
            raise ValueError(f"cannot read field selector term {term!r}")
        requirements.append(FieldRequirement(tuple(path.strip().split(".")), value.strip(),
                                             equal))
    return tuple(requirements)


@dataclass(frozen=True, slots=True)
class Selection:
    """What one list or watch asks for: a namespace and label/field selectors."""

    namespace: str | None = None
    labels: LabelSelector | None = None
    fields: tuple[FieldRequirement, ...] = ()

    @property
    def everything(self) -> bool:
        return not self.namespace and self.labels is None and not self.fields

    def matches(self, obj: Mapping[str, Any]) -> bool:
        meta = obj.get("metadata") or {}
        if self.namespace and meta.get("namespace") != self.namespace:
            return False
        if self.labels is not None and not self.labels.matches(meta.get("labels") or {}):
            return False
        return all(req.matches(obj) for req in self.fields)
