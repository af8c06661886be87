"""The data plane's own policy evaluator answers the upstream conformance corpus: every
NetworkPolicy e2e and AdminNetworkPolicy/ClusterNetworkPolicy query, replayed with the
Cilium-like profile (every kind enforced). The evaluator shares no code with the analyzers,
so this is its own proof."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from netsight.sim.dataplane.enforcement import Profile, evaluate
from netsight.sim.dataplane.flows import Flow
from netsight.sim.dataplane.snapshot import Cluster, Endpoint, Obj
from tests.conftest import CONFORMANCE, corpus_cases, corpus_id

CASES = corpus_cases("netpol", "anp")


def load(case: Path) -> dict[tuple[str, str], dict[str, Obj]]:
    objects: dict[tuple[str, str], dict[str, Obj]] = {}
    for doc in yaml.safe_load_all((case / "manifests.yaml").read_text()):
        if not doc:
            continue
        group = doc["apiVersion"].rpartition("/")[0]
        meta = doc["metadata"]
        key = f"{meta['namespace']}/{meta['name']}" if meta.get("namespace") else meta["name"]
        objects.setdefault((group, doc["kind"]), {})[key] = doc
    return objects


def endpoint(cluster: Cluster, ref: str) -> Endpoint:
    namespace, _, name = ref.partition("/")
    pod = cluster.get(("", "Pod"), namespace, name)
    assert pod is not None, ref
    return cluster.endpoint(pod["status"]["podIP"])


def test_the_replay_covers_both_corpora() -> None:
    kinds = {c.parent.name for c in CASES}
    assert kinds == {"netpol", "anp"}
    if CONFORMANCE.is_dir():
        assert sum(c.is_relative_to(CONFORMANCE) for c in CASES) >= 10


@pytest.mark.parametrize("case", CASES, ids=corpus_id)
def test_every_query_matches_upstream(case: Path) -> None:
    cluster = Cluster(load(case))
    queries: list[dict[str, Any]] = json.loads((case / "expected.json").read_text())["queries"]
    wrong = []
    for query in queries:
        flow = Flow(endpoint(cluster, query["from"]), endpoint(cluster, query["to"]),
                    query["port"], query["protocol"])
        verdict = evaluate(cluster, flow, Profile.CILIUM_LIKE)
        if verdict.allowed != query["allowed"]:
            wrong.append(f"{query} -> {verdict.allowed}: {verdict.explain()}")
    assert not wrong, "\n".join(wrong)
