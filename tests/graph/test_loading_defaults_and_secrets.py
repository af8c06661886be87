"""Objects without a namespace land in "default" (cluster-scoped kinds in none), and Secret
data never reaches a record."""

from __future__ import annotations

from netsight.graph.model.kinds import Rel
from netsight.graph.model.records import SecretRecord
from tests.conftest import store_from_yaml

SECRET = """
apiVersion: v1
kind: Secret
metadata:
  name: db-password
  namespace: shop
  annotations:
    kubectl.kubernetes.io/last-applied-configuration: '{"data":{"password":"aHVudGVyMg=="}}'
type: Opaque
data:
  password: aHVudGVyMg==
stringData:
  token: hunter2
"""


def test_objects_without_namespace_default_to_default() -> None:
    store = store_from_yaml("""
apiVersion: v1
kind: Service
metadata: {name: web}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: ""}
---
apiVersion: v1
kind: Namespace
metadata: {name: default}
---
apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: {name: nginx}
---
apiVersion: v1
kind: Node
metadata: {name: node-1}
""")
    assert store.problems == {}
    assert set(store.state.graph) == {
        "Service/default/web", "ConfigMap/default/settings", "Namespace/default",
        "IngressClass/nginx", "Node/node-1",
    }
    contained = {v for _, v, d in store.state.graph.out_edges("Namespace/default", data=True)
                 if Rel.CONTAINS in d}
    assert contained == {"Service/default/web", "ConfigMap/default/settings"}


def test_secret_data_is_never_stored() -> None:
    store = store_from_yaml(SECRET)

    record = store.state.record("Secret/shop/db-password")
    assert isinstance(record, SecretRecord)
    assert record.annotations == {}
    # Only a verdict on the data as a TLS certificate is kept (graph/model/pem.py).
    assert record.tls_problem == "no tls.crt"
    node = store.state.graph.nodes["Secret/shop/db-password"]
    for text in (repr(record), repr(node)):
        assert "aHVudGVyMg" not in text
        assert "hunter2" not in text
