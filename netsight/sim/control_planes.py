"""The control planes a simulated cluster runs, shown as a real one shows them: istiod's
Deployment (with the status its controller reports) and the injection webhooks of its
revision and revision tag, as ``istioctl install`` and ``istioctl tag set`` leave them.

Nothing here acts: the demo's sidecars are injected already. It is what
check_provider_status reads.
"""

from __future__ import annotations

from typing import Final

from netsight.sim.state import Obj, SimState

ISTIO_NAMESPACE: Final = "istio-system"
LINKERD_NAMESPACE: Final = "linkerd"


def _deployment(name: str, namespace: str, labels: dict[str, str], image: str,
                replicas: int) -> Obj:
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": namespace, "labels": labels,
                         "generation": 1},
            "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels},
                                  "spec": {"containers": [{"name": "discovery",
                                                           "image": image}]}}},
            # As the Deployment controller reports it once the rollout is done.
            "status": {"observedGeneration": 1, "replicas": replicas,
                       "readyReplicas": replicas, "updatedReplicas": replicas,
                       "availableReplicas": replicas}}


def _webhook(name: str, labels: dict[str, str]) -> Obj:
    return {"apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "MutatingWebhookConfiguration",
            "metadata": {"name": name, "labels": labels},
            "webhooks": [{"name": "namespace.sidecar-injector.istio.io",
                          "admissionReviewVersions": ["v1"], "sideEffects": "None",
                          "clientConfig": {"service": {"name": "istiod",
                                                       "namespace": ISTIO_NAMESPACE,
                                                       "path": "/inject"}}}]}


def install_linkerd(state: SimState, version: str) -> None:
    """Linkerd's control plane at ``version``, as its Helm chart labels it (the demo's
    proxies are injected already)."""
    state.apply([{"apiVersion": "v1", "kind": "Namespace",
                  "metadata": {"name": LINKERD_NAMESPACE,
                               "labels": {"kubernetes.io/metadata.name": LINKERD_NAMESPACE,
                                          "linkerd.io/is-control-plane": "true"}}}])
    state.apply([
        _deployment(f"linkerd-{component}", LINKERD_NAMESPACE,
                    {"linkerd.io/control-plane-component": component,
                     "linkerd.io/control-plane-ns": LINKERD_NAMESPACE},
                    f"cr.l5d.io/linkerd/{image}:{version}", 1)
        for component, image in (("destination", "controller"), ("identity", "controller"),
                                 ("proxy-injector", "controller"))])


def install_istio(state: SimState, version: str) -> None:
    """istiod of the default revision at ``version``, its injector webhook and the
    revision tag ``default`` pointing to it."""
    state.apply([
        _deployment("istiod", ISTIO_NAMESPACE, {"app": "istiod", "istio": "pilot"},
                    f"docker.io/istio/pilot:{version}", 1),
        _webhook("istio-sidecar-injector", {"app": "sidecar-injector",
                                            "istio.io/rev": "default"}),
        _webhook("istio-revision-tag-default", {"istio.io/tag": "default",
                                                "istio.io/rev": "default"}),
    ])
