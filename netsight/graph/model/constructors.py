"""Faster constructors for the frozen, slotted dataclasses an initial list builds by the
hundred thousand (PodRecord, Endpoint, Change).

A frozen dataclass's ``__init__`` sets each field through ``object.__setattr__``, which
looks the attribute up on the type again for every field: most of what building a
PodRecord's twenty fields costs. :func:`builder` generates the same initialisation (as
dataclasses itself does, with ``exec``) that sets each slot through its descriptor
directly, then runs ``__post_init__`` as ``__init__`` would. Every field must be passed, by
keyword: a field added later with a default fails loudly instead of being silently skipped.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields, is_dataclass
from typing import Any, TypeVar

T = TypeVar("T")


def builder(cls: type[T]) -> Callable[..., T]:
    """A function taking every init field of ``cls`` by keyword and returning the instance
    ``cls(**fields)`` would return."""
    if not is_dataclass(cls) or not hasattr(cls, "__slots__"):
        raise TypeError(f"{cls.__name__}: builder() needs a slotted dataclass")
    names = [f.name for f in fields(cls) if f.init]
    post_init = getattr(cls, "__post_init__", None)
    lines = [f"def build(*, {', '.join(names)}):", "    self = _new(_cls)"]
    lines += [f"    _set_{name}(self, {name})" for name in names]
    if post_init is not None:
        lines.append("    _post_init(self)")
    lines.append("    return self")
    namespace: dict[str, Any] = {"_new": object.__new__, "_cls": cls, "_post_init": post_init}
    for name in names:
        namespace[f"_set_{name}"] = getattr(cls, name).__set__  # the slot's descriptor
    exec("\n".join(lines), namespace)  # generated from the field names alone
    build: Callable[..., T] = namespace["build"]
    build.__qualname__ = f"builder({cls.__name__})"
    return build
