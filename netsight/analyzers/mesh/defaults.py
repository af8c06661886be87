"""The ingress gateway istioctl assumes when it analyzes files.

``istioctl analyze`` on files alone adds a stand-in ``istio-ingressgateway`` (a pod labelled
``istio: ingressgateway`` and its Service, in istio-system; pkg/config/analysis/local
defaults.go) so Gateways selecting the standard ingress are not reported for lack of one.
netsight assumes the same, from manifests only and only where the manifests do not define
that Service themselves; findings that lean on it say so. A live cluster has its own.
"""

from __future__ import annotations

from types import MappingProxyType

from netsight.graph.model import Kind, make_key
from netsight.graph.records import PodRecord, ServicePort, ServiceRecord
from netsight.graph.store import GraphView, Source

NAMESPACE = "istio-system"  # istioctl's --istioNamespace default
SERVICE = "istio-ingressgateway"  # meshConfig.ingressService's default
_LABELS = MappingProxyType({"istio": "ingressgateway"})

INGRESS_POD = PodRecord(kind=Kind.POD, api_version="v1", namespace=NAMESPACE,
                        name=f"{SERVICE}-dummypod", labels=_LABELS, mesh_proxy="istio-proxy")
INGRESS_SERVICE = ServiceRecord(
    kind=Kind.SERVICE, api_version="v1", namespace=NAMESPACE, name=SERVICE,
    selector=_LABELS,
    ports=(ServicePort(80, 80, "TCP", "http2"), ServicePort(443, 443, "TCP", "https"),
           ServicePort(31400, 31400, "TCP", "tcp"), ServicePort(15443, 15443, "TCP", "tls")),
)


def assumed(view: GraphView) -> tuple[PodRecord, ServiceRecord] | None:
    """istioctl's stand-in ingress gateway, when netsight analyzes manifests that lack it."""
    if view.source is not Source.MANIFESTS:
        return None
    if view.exists(make_key(Kind.SERVICE, NAMESPACE, SERVICE)):
        return None
    return INGRESS_POD, INGRESS_SERVICE
