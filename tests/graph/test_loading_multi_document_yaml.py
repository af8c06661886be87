"""Multi-document YAML as Helm renders it: ``---`` separators (with trailing comments),
``# Source:`` comment-only documents and empty documents are skipped, not reported."""

from __future__ import annotations

from pathlib import Path

from netsight.graph.ingest.manifests import load_manifests
from netsight.graph.store.live import GraphStore

HELM_OUTPUT = """\
---
# Source: shop/templates/serviceaccount.yaml
---
# Source: shop/templates/service.yaml
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector:
    app: web
  ports:
  - port: 80
--- # Source: shop/templates/deployment.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
spec:
  template:
    metadata:
      labels:
        app: web
---

---
# Source: shop/templates/empty.yaml
# (rendered to nothing)
...
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
data:
  text: "--- not a separator inside a string"
  block: |
    ---
    still inside the block scalar
"""


def test_helm_output_loads_every_object_and_skips_comment_documents(tmp_path: Path) -> None:
    path = tmp_path / "rendered.yaml"
    path.write_text(HELM_OUTPUT)
    store = GraphStore()

    report = load_manifests(store, [str(path)])

    assert store.problems == {}
    assert set(store.state.graph) == {
        "Service/default/web", "Deployment/shop/web", "ConfigMap/default/settings"
    }
    assert (report.files, report.documents, report.objects, report.problems) == (1, 3, 3, 0)


def test_document_locations_are_their_first_lines(tmp_path: Path) -> None:
    path = tmp_path / "two.yaml"
    path.write_text("apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\n---\n"
                    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: 7\n")
    store = GraphStore()

    load_manifests(store, [str(path)])

    [problem] = store.problems.values()
    assert problem.location == f"{path}:6"
    assert problem.field_path == "metadata.name"


def test_empty_file_loads_nothing(tmp_path: Path) -> None:
    path = tmp_path / "empty.yaml"
    path.write_text("# nothing here\n---\n---\n")
    store = GraphStore()

    report = load_manifests(store, [str(path)])

    assert (report.documents, report.objects, report.problems) == (0, 0, 0)
    assert store.generation == 0
