"""Kubernetes label-selector semantics written out independently of netsight."""

from __future__ import annotations

from typing import Any


def selector_matches(selector: dict[str, Any] | None, labels: dict[str, str]) -> bool:
    """metav1.LabelSelector: matchLabels AND every matchExpression; empty matches all."""
    if not selector:
        return True
    if any(labels.get(k) != v for k, v in (selector.get("matchLabels") or {}).items()):
        return False
    for expr in selector.get("matchExpressions") or []:
        key, op, values = expr["key"], expr["operator"], expr.get("values") or []
        ok = {
            "In": key in labels and labels[key] in values,
            # NotIn also matches objects that do not have the key at all.
            "NotIn": key not in labels or labels[key] not in values,
            "Exists": key in labels,
            "DoesNotExist": key not in labels,
        }[op]
        if not ok:
            return False
    return True
