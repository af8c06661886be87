"""Patches as the API server applies them: RFC 7386 JSON merge patches (and strategic merge
patches, merged the same way here) and RFC 6902 JSON patches."""

from __future__ import annotations

import copy
from typing import Any


class PatchError(ValueError):
    """A patch the API server would refuse with 400 Bad Request."""


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    if not isinstance(target, dict):
        target = {}
    for key, value in patch.items():
        if value is None:
            target.pop(key, None)
        else:
            target[key] = merge_patch(target.get(key), value)
    return target


def json_patch(target: dict[str, Any], operations: Any) -> dict[str, Any]:
    """RFC 6902 JSON patch: add, remove, replace (enough for kubectl and tests)."""
    if not isinstance(operations, list):
        raise PatchError("a JSON patch must be a list of operations")
    for op in operations:
        if not isinstance(op, dict):
            raise PatchError("a JSON patch operation must be an object")
        parts = [p.replace("~1", "/").replace("~0", "~")
                 for p in str(op.get("path", "")).split("/")[1:]]
        if not parts:
            raise PatchError("JSON patch path must not be empty")
        parent: Any = target
        for part in parts[:-1]:
            parent = parent[int(part)] if isinstance(parent, list) else parent.setdefault(part, {})
        last = parts[-1]
        action = op.get("op")
        if isinstance(parent, list):
            index = len(parent) if last == "-" else int(last)
            if action == "add":
                parent.insert(index, op.get("value"))
            elif action == "remove":
                parent.pop(index)
            elif action == "replace":
                parent[index] = op.get("value")
        elif action in ("add", "replace"):
            parent[last] = op.get("value")
        elif action == "remove":
            parent.pop(last, None)
        else:
            raise PatchError(f"unsupported JSON patch op {action!r}")
    return target
