"""Kubernetes ``List`` objects and JSON arrays, flattened to the objects they hold."""

from __future__ import annotations

from collections.abc import Iterator


def expand_lists(body: object) -> Iterator[object]:
    """Flatten ``List`` kinds and top-level arrays into their items.

    Items of a typed list from the API (``PodList``) carry no kind/apiVersion; they
    take them from the list.
    """
    if isinstance(body, list):
        for item in body:
            yield from expand_lists(item)
        return
    if isinstance(body, dict) and isinstance(body.get("items"), list):
        kind = body.get("kind")
        if isinstance(kind, str) and kind.endswith("List"):
            item_kind = kind[: -len("List")] or None
            for item in body["items"]:
                if isinstance(item, dict) and item_kind and "kind" not in item:
                    item = {**item, "kind": item_kind, "apiVersion": body.get("apiVersion")}
                yield from expand_lists(item)
            return
    yield body
