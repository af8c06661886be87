"""An Ingress ROUTES_TO each Service its backends name (once per Service) and USES_CLASS its
IngressClass, named by ingressClassName or the legacy annotation."""

from __future__ import annotations

from typing import Any

from netsight.graph.model.kinds import Rel
from netsight.graph.store.live import GraphStore
from netsight.graph.store.record_edges import record_references
from tests.graph.factories import apply_all, rels, service, targets

INGRESS = "Ingress/default/web"


def ingress(class_name: str | None = None, annotation: str | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "web"}
    if annotation is not None:
        meta["annotations"] = {"kubernetes.io/ingress.class": annotation}
    spec: dict[str, Any] = {
        "defaultBackend": {"service": {"name": "fallback", "port": {"number": 80}}},
        "rules": [{"host": "shop.example.com", "http": {"paths": [
            {"path": "/", "pathType": "Prefix",
             "backend": {"service": {"name": "web", "port": {"name": "http"}}}},
            {"path": "/static", "pathType": "Prefix",
             "backend": {"service": {"name": "web", "port": {"number": 8080}}}},
        ]}}],
    }
    if class_name is not None:
        spec["ingressClassName"] = class_name
    return {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": meta,
            "spec": spec}


def ingress_class(name: str) -> dict[str, Any]:
    return {"apiVersion": "networking.k8s.io/v1", "kind": "IngressClass",
            "metadata": {"name": name}, "spec": {"controller": "k8s.io/ingress-nginx"}}


def test_ingress_routes_to_each_backend_service() -> None:
    store = GraphStore()
    apply_all(store, ingress(), service("web"), service("fallback"), service("unrelated"))

    assert targets(store, INGRESS, Rel.ROUTES_TO) == {
        "Service/default/web", "Service/default/fallback"
    }
    record = store.state.record(INGRESS)
    assert record is not None
    assert record_references(record).count(
        (INGRESS, "Service/default/web", Rel.ROUTES_TO)
    ) == 1


def test_ingress_uses_class_by_field_or_annotation() -> None:
    store = GraphStore()
    apply_all(store, ingress_class("nginx"), ingress_class("traefik"), ingress("nginx"))
    assert rels(store, INGRESS, "IngressClass/nginx") == {Rel.USES_CLASS}

    store.apply("MODIFIED", ingress(annotation="traefik"))
    assert targets(store, INGRESS, Rel.USES_CLASS) == {"IngressClass/traefik"}

    store.apply("MODIFIED", ingress())
    assert targets(store, INGRESS, Rel.USES_CLASS) == set()


def test_legacy_extensions_ingress_routes_too() -> None:
    store = GraphStore()
    legacy = {
        "apiVersion": "extensions/v1beta1",
        "kind": "Ingress",
        "metadata": {"name": "web"},
        "spec": {"backend": {"serviceName": "web", "servicePort": 80}},
    }
    apply_all(store, legacy, service("web"))

    assert targets(store, INGRESS, Rel.ROUTES_TO) == {"Service/default/web"}
