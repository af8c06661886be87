"""netsight serve builds the policy models once the informers have synced, and again after
a policy changes, so the first question about a namespace does not pay for them
(server/warming.py); answers are those of a cold graph (tests/analyzers)."""

from __future__ import annotations

from typing import Any

import pytest

from netsight.analyzers.policy.engine import warm
from netsight.graph.store.live import GraphView
from tests.server.conftest import Served, eventually

pytestmark = pytest.mark.anyio


def cold_models(view: GraphView) -> int:
    """Models a pass would build now (and builds: called once per check)."""
    return warm(view, None) + sum(warm(view, ns) for ns in sorted(view.namespaces()))


async def test_models_are_built_after_the_first_sync(served: Served) -> None:
    await eventually(lambda: served.graph.warmed is not None)
    assert cold_models(served.graph.store.view()) == 0


async def test_a_changed_policy_is_built_again_without_a_question(served: Served) -> None:
    await eventually(lambda: served.graph.warmed is not None)
    view = served.graph.store.view()
    policy = next(iter(view.for_each("NetworkPolicy")))
    changed: dict[str, Any] = {
        "apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
        "metadata": {"name": policy.name, "namespace": policy.namespace},
        "spec": {"podSelector": {}, "policyTypes": ["Ingress"],
                 "ingress": [{"from": [{"podSelector": {"matchLabels": {"warm": "yes"}}}]}]}}
    served.sim.state.apply([changed])
    await eventually(lambda: served.graph.store.view().get(policy.key) is not policy)
    generation = served.graph.store.generation
    await eventually(lambda: (served.graph.warmed or 0) >= generation)
    assert warm(served.graph.store.view(), policy.namespace) == 0

