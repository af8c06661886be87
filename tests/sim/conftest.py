"""What the simulator's own tests share: a pod in namespace ``x`` and where pods live."""

from __future__ import annotations

from typing import Any

PODS = "/api/v1/namespaces/x/pods"


def pod(name: str, **labels: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "x", "labels": labels}}
