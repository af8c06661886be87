"""A mapping that gives a key twice is refused with its file and line, as kubectl refuses it:
two objects run together without ``---`` would otherwise merge silently into a wrong one."""

from __future__ import annotations

from pathlib import Path

from netsight.graph.ingest.manifests import load_manifests
from netsight.graph.store.live import GraphStore, ProblemKind

RUN_TOGETHER = """\
# two Services, the separator forgotten
apiVersion: v1
kind: Service
metadata: {name: first}
spec: {ports: [{port: 80}]}
apiVersion: v1
kind: Service
metadata: {name: second}
---
apiVersion: v1
kind: Service
metadata: {name: third}
"""

NESTED = """\
apiVersion: v1
kind: Service
metadata:
  name: web
  labels:
    app: web
    app: api
"""

MERGE_KEYS = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: merged
  labels: &common {app: web, tier: front}
  annotations:
    <<: *common
    tier: back
"""


def load(tmp_path: Path, text: str) -> tuple[GraphStore, Path]:
    path = tmp_path / "objects.yaml"
    path.write_text(text)
    store = GraphStore()
    load_manifests(store, [str(path)])
    return store, path


def test_objects_run_together_are_refused_not_merged(tmp_path: Path) -> None:
    store, path = load(tmp_path, RUN_TOGETHER)

    assert set(store.state.graph) == {"Service/default/third"}
    [problem] = store.problems.values()
    assert problem.kind is ProblemKind.UNPARSEABLE
    assert problem.location == f"{path}:6"  # the second apiVersion
    assert problem.message == ("invalid YAML: duplicate key 'apiVersion' (first on line 2; a "
                               "second object without '---' before it?)")


def test_a_key_twice_in_a_nested_mapping_is_refused(tmp_path: Path) -> None:
    store, path = load(tmp_path, NESTED)

    assert set(store.state.graph) == set()
    [problem] = store.problems.values()
    assert problem.location == f"{path}:7"
    assert problem.message == "invalid YAML: duplicate key 'app' (first on line 6)"


def test_a_key_overriding_a_merged_one_is_not_a_duplicate(tmp_path: Path) -> None:
    store, _ = load(tmp_path, MERGE_KEYS)

    assert store.problems == {}
    assert set(store.state.graph) == {"ConfigMap/default/merged"}
