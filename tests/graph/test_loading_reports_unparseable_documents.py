"""A document that does not parse, or is not an object, becomes a problem with its file and
line; the other documents of the file still load."""

from __future__ import annotations

from pathlib import Path

from netsight.graph.ingest.manifests import load_manifests
from netsight.graph.store.live import GraphStore, ProblemKind

BROKEN_MIDDLE = """\
apiVersion: v1
kind: Service
metadata:
  name: first
---
apiVersion: v1
kind: Service
metadata:
  name: broken
  labels: {app: web
spec: {}
---
apiVersion: v1
kind: Service
metadata:
  name: last
"""


def test_invalid_yaml_in_the_middle_is_reported_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "services.yaml"
    path.write_text(BROKEN_MIDDLE)
    store = GraphStore()

    report = load_manifests(store, [str(path)])

    assert set(store.state.graph) == {"Service/default/first", "Service/default/last"}
    [problem] = store.problems.values()
    assert problem.kind is ProblemKind.UNPARSEABLE
    assert problem.message.startswith("invalid YAML")
    # The parser notices the unclosed flow mapping of line 10 on line 11 of the file (line 6
    # of the second document): the location counts lines of the whole file.
    assert problem.location == f"{path}:11"
    assert report.problems == 1


def test_tab_indentation_error_points_at_the_tab_line(tmp_path: Path) -> None:
    path = tmp_path / "tabs.yaml"
    path.write_text("apiVersion: v1\nkind: Pod\nmetadata:\n  name: ok\n---\n"
                    "apiVersion: v1\nkind: Pod\nmetadata:\n\tname: tabbed\n")
    store = GraphStore()

    load_manifests(store, [str(path)])

    [problem] = store.problems.values()
    assert problem.kind is ProblemKind.UNPARSEABLE
    assert problem.location == f"{path}:9"
    assert set(store.state.graph) == {"Pod/default/ok"}


def test_scalar_document_is_not_an_object(tmp_path: Path) -> None:
    path = tmp_path / "scalar.yaml"
    path.write_text("just a string\n---\n42\n---\napiVersion: v1\nkind: Pod\n"
                    "metadata:\n  name: ok\n")
    store = GraphStore()

    load_manifests(store, [str(path)])

    problems = sorted(store.problems.values(), key=lambda p: p.location or "")
    assert [(p.kind, p.location) for p in problems] == [
        (ProblemKind.NOT_AN_OBJECT, f"{path}:1"),
        (ProblemKind.NOT_AN_OBJECT, f"{path}:3"),
    ]
    assert "got str" in problems[0].message
    assert "got int" in problems[1].message
    assert set(store.state.graph) == {"Pod/default/ok"}


def test_map_without_kind_is_not_an_object(tmp_path: Path) -> None:
    path = tmp_path / "values.yaml"
    path.write_text("replicaCount: 2\nimage: {tag: latest}\n")
    store = GraphStore()

    load_manifests(store, [str(path)])

    [problem] = store.problems.values()
    assert problem.kind is ProblemKind.NOT_AN_OBJECT
    assert problem.field_path == "apiVersion"
    assert problem.location == f"{path}:1"


def test_values_python_cannot_hold_are_reported_not_raised(tmp_path: Path) -> None:
    # YAML reads 5,000 digits as one integer (past Python's int-from-text limit) and
    # 2025-13-45 as a date that does not exist: each is that document's problem.
    path = tmp_path / "odd.yaml"
    path.write_text("apiVersion: v1\nkind: Pod\nmetadata:\n  name: big\n"
                    f"  labels: {{n: {'9' * 5000}}}\n---\n"
                    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: date\n"
                    "  annotations: {at: 2025-13-45}\n---\n"
                    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: ok\n")
    store = GraphStore()

    load_manifests(store, [str(path)])

    problems = sorted(store.problems.values(), key=lambda p: p.location or "")
    assert [(p.kind, p.location) for p in problems] == [
        (ProblemKind.UNPARSEABLE, f"{path}:1"),
        (ProblemKind.UNPARSEABLE, f"{path}:7"),
    ]
    assert all(p.message.startswith("invalid YAML") for p in problems)
    assert set(store.state.graph) == {"Pod/default/ok"}
