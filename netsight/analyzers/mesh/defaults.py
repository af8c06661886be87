"""The ingress gateway istioctl assumes when it analyzes files.

``istioctl analyze`` on files alone adds a stand-in ``istio-ingressgateway`` (a pod labelled
``istio: ingressgateway`` and its Service, in istio-system; pkg/config/analysis/local
defaults.go) so Gateways selecting the standard ingress are not reported for lack of one.
It reads them before the user's files, so an object of the files with the same name
replaces its stand-in and the other stays: manifests that define the ingress Service but
no gateway pods keep the stand-in pod, which their Service then fronts. netsight assumes
the same, from manifests only; findings that lean on it say so. A live cluster has its own.
"""

from __future__ import annotations

from types import MappingProxyType

from netsight.graph.model.kinds import Kind
from netsight.graph.model.records import PodRecord, ServicePort, ServiceRecord
from netsight.graph.store.live import GraphView, Source

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


def assumed_pod(view: GraphView) -> PodRecord | None:
    """istioctl's stand-in ingress pod, when netsight analyzes manifests that lack it."""
    if view.source is not Source.MANIFESTS or view.exists(INGRESS_POD.key):
        return None
    return INGRESS_POD


def assumed_service(view: GraphView) -> ServiceRecord | None:
    """istioctl's stand-in ingress Service, when netsight analyzes manifests that lack it."""
    if view.source is not Source.MANIFESTS or view.exists(INGRESS_SERVICE.key):
        return None
    return INGRESS_SERVICE
