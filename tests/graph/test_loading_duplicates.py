"""An object defined twice in one load is a DUPLICATE problem; the later definition wins."""

from __future__ import annotations

from pathlib import Path

from netsight.graph.ingest.manifests import load_manifests
from netsight.graph.model.records import ServiceRecord
from netsight.graph.store.live import GraphStore, ProblemKind


def service_yaml(port: int, namespace: str | None = None) -> str:
    ns = f"  namespace: {namespace}\n" if namespace else ""
    return (f"apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n{ns}"
            f"spec:\n  ports:\n  - port: {port}\n")


def test_later_definition_wins_and_is_reported(tmp_path: Path) -> None:
    first, second = tmp_path / "a.yaml", tmp_path / "b.yaml"
    first.write_text(service_yaml(80))
    # Same identity: no namespace means "default".
    second.write_text(service_yaml(8080, namespace="default"))
    store = GraphStore()

    load_manifests(store, [str(first), str(second)])

    record = store.state.record("Service/default/web")
    assert isinstance(record, ServiceRecord)
    assert [p.port for p in record.ports] == [8080]
    [problem] = store.problems.values()
    assert problem.kind is ProblemKind.DUPLICATE
    assert problem.location == f"{second}:1"
    assert (problem.object_kind, problem.namespace, problem.name) == ("Service", "default", "web")
    assert problem.key == "Service/default/web#duplicate"


def test_same_name_in_other_namespace_or_kind_is_not_a_duplicate(tmp_path: Path) -> None:
    path = tmp_path / "a.yaml"
    path.write_text(service_yaml(80) + "---\n" + service_yaml(80, namespace="other")
                    + "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n")
    store = GraphStore()

    load_manifests(store, [str(path)])

    assert store.problems == {}
    assert len(store.state.graph) == 3


def test_duplicate_within_one_file(tmp_path: Path) -> None:
    path = tmp_path / "a.yaml"
    path.write_text(service_yaml(80) + "---\n" + service_yaml(81) + "---\n" + service_yaml(82))
    store = GraphStore()

    load_manifests(store, [str(path)])

    record = store.state.record("Service/default/web")
    assert isinstance(record, ServiceRecord)
    assert [p.port for p in record.ports] == [82]
    [problem] = store.problems.values()
    assert problem.location == f"{path}:17"  # the third definition
