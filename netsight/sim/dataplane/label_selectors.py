"""Label selectors as the API server defines them (``metav1.LabelSelector``), on raw objects.

Written for the data plane alone: it must not share the analyzers' selector code, so that
when both agree on a verdict the agreement means something.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def matches(selector: Mapping[str, Any] | None, labels: Mapping[str, str]) -> bool:
    """Whether ``labels`` satisfy ``selector``: every matchLabels pair and every
    matchExpressions requirement. An empty selector selects everything; so does a missing
    one here (callers decide what a missing selector means where the API says otherwise)."""
    if not selector:
        return True
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    return all(_requirement(expr, labels) for expr in selector.get("matchExpressions") or ())


def _requirement(expr: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    key, operator = expr.get("key", ""), expr.get("operator")
    values = expr.get("values") or ()
    match operator:
        case "In":
            return key in labels and labels[key] in values
        case "NotIn":
            return key not in labels or labels[key] not in values
        case "Exists":
            return key in labels
        case "DoesNotExist":
            return key not in labels
    return False  # an operator the API server would have refused: select nothing


def labels_of(obj: Mapping[str, Any]) -> Mapping[str, str]:
    labels: Mapping[str, str] = (obj.get("metadata") or {}).get("labels") or {}
    return labels
