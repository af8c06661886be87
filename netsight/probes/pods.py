"""The probe pod: what netsight asks the API server to run, and whose identity it borrows.

A probe is an ordinary Pod held to the ``restricted`` Pod Security Standard, so it is
admitted in any namespace that enforces it, and short-lived by construction
(``activeDeadlineSeconds``, ``restartPolicy: Never``). To answer "can A reach B" it must be
treated as A by whatever filters traffic, so it is made in A's namespace with A's labels and
service account (mode ``pod``), or runs inside A's pod itself (mode ``ephemeral``).

Which of A's labels are copied: all of them, less the bookkeeping labels controllers put on
the pods they own. NetworkPolicy, AdminNetworkPolicy, Cilium, Calico and Istio policies may
select on any label, so copying fewer would leave the probe outside policies A is under.
Dropped, and why:

- ``pod-template-hash`` (ReplicaSets of a Deployment select on it), ``controller-revision-hash``
  (StatefulSets and DaemonSets), ``statefulset.kubernetes.io/pod-name`` and
  ``apps.kubernetes.io/pod-index`` (a per-pod Service selects on them), the Job labels
  (``controller-uid``, ``job-name`` and their ``batch.kubernetes.io/`` forms): with them a
  controller could count the probe as one of its pods, and a per-pod Service route to it.
- ``app.kubernetes.io/managed-by``: replaced by ``netsight``, which is how the sweep and
  kubectl find probes. A policy selecting A on that label would not apply to the probe;
  :func:`identity_notes` says so in the answer.

A controller whose selector carries no hash of its own (a bare ReplicaSet, a
ReplicationController, a DaemonSet) would still adopt an orphan pod matching it. The probe
is no orphan: its controller reference names its own Namespace (cluster-scoped, alive as
long as the pod can be, no ``blockOwnerDeletion``), and controllers adopt only pods without
a controller. What remains: for the probe's few seconds, Services selecting A list it as a
not-ready endpoint (it is never Ready, so none routes to it), and a PodDisruptionBudget
selecting A counts a pod it cannot scale, which may hold evictions back meanwhile.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from netsight.graph.ingest.discovery import PROBE_ID_LABEL
from netsight.probes.message import ANNOTATION, ENV_VAR, TERMINATION_MESSAGE_PATH

MANAGED_BY = "app.kubernetes.io/managed-by"
MANAGER = "netsight"
CONTAINER = "probe"  # the probe container's name; its status holds the answer
NAME_PREFIX = "netsight-probe-"
# tcpmux's port: the probe program listens on nothing, so this readiness check always
# fails and the pod is never Ready, whatever the image holds (an exec check needs a binary).
NEVER_LISTENING = 1
RUN_AS = 65532  # the "nonroot" user of distroless images
REQUESTS = {"cpu": "10m", "memory": "32Mi"}
LIMITS = {"cpu": "200m", "memory": "64Mi"}
# Seconds the kubelet gives the pod beyond the probe's own deadline (start, image pull).
START_ALLOWANCE = 30

# Labels controllers set on the pods they own (see the module's docstring).
CONTROLLER_LABELS = frozenset({
    "pod-template-hash", "controller-revision-hash", "statefulset.kubernetes.io/pod-name",
    "apps.kubernetes.io/pod-index", "controller-uid", "job-name",
    "batch.kubernetes.io/controller-uid", "batch.kubernetes.io/job-name",
    "batch.kubernetes.io/job-completion-index",
})
# Annotations that ask a mesh to inject its proxy, or configure that proxy: a probe standing
# for a meshed pod must be meshed alike. Not the injectors' own record of an injection
# (``sidecar.istio.io/status``): with it the injector would take the probe as done.
MESH_ANNOTATION_PREFIXES = ("sidecar.istio.io/", "proxy.istio.io/", "traffic.sidecar.istio.io/",
                            "config.linkerd.io/", "config.alpha.linkerd.io/", "kuma.io/")
MESH_ANNOTATIONS = frozenset({"linkerd.io/inject", "istio.io/rev"})
INJECTOR_RECORDS = frozenset({"sidecar.istio.io/status", "kuma.io/sidecar-injected",
                              "kuma.io/envoy-admin-port", "kuma.io/transparent-proxying"})


@dataclass(frozen=True, slots=True)
class Identity:
    """Whom the probe stands for: a namespace, labels, a service account, mesh settings."""

    namespace: str
    labels: Mapping[str, str]
    service_account: str | None = None
    annotations: Mapping[str, str] | None = None
    dns_policy: str | None = None
    dns_config: Mapping[str, Any] | None = None
    source: str | None = None  # "namespace/pod" it was copied from; None: no source pod


def anonymous(namespace: str) -> Identity:
    """A probe of no pod in particular (a probe without ``from``)."""
    return Identity(namespace, {})


def copied_labels(labels: Mapping[str, str]) -> dict[str, str]:
    return {k: v for k, v in labels.items() if k not in CONTROLLER_LABELS and k != MANAGED_BY}


def mesh_annotations(annotations: Mapping[str, str]) -> dict[str, str]:
    return {k: v for k, v in annotations.items()
            if (k in MESH_ANNOTATIONS or k.startswith(MESH_ANNOTATION_PREFIXES))
            and k not in INJECTOR_RECORDS}


def identity_of(pod: Mapping[str, Any]) -> Identity:
    """The identity of a live Pod object (as the API server returns it)."""
    meta = pod.get("metadata") or {}
    spec = pod.get("spec") or {}
    return Identity(
        namespace=str(meta.get("namespace") or "default"),
        labels=copied_labels(meta.get("labels") or {}),
        service_account=spec.get("serviceAccountName") or None,
        annotations=mesh_annotations(meta.get("annotations") or {}),
        dns_policy=spec.get("dnsPolicy") or None,
        dns_config=spec.get("dnsConfig") or None,
        source=f"{meta.get('namespace')}/{meta.get('name')}",
    )


def identity_notes(pod: Mapping[str, Any]) -> list[str]:
    """Where the probe cannot be the source exactly, said for the answer."""
    meta = pod.get("metadata") or {}
    spec = pod.get("spec") or {}
    notes = []
    managed = (meta.get("labels") or {}).get(MANAGED_BY)
    if managed is not None and managed != MANAGER:
        notes.append(f"the probe carries {MANAGED_BY}={MANAGER}, not the source's "
                     f"{managed!r}: a policy selecting on that label does not apply to it")
    if spec.get("hostNetwork"):
        notes.append("the source uses the node's network (hostNetwork), which the restricted "
                     "Pod Security Standard forbids: the probe runs on the pod network")
    return notes


def deadline_seconds(timeout: float) -> int:
    """``activeDeadlineSeconds`` for a probe answering within ``timeout`` seconds."""
    return max(1, math.ceil(timeout)) + START_ALLOWANCE


def probe_name(probe_id: str) -> str:
    return f"{NAME_PREFIX}{probe_id}"


def security_context() -> dict[str, Any]:
    """The container's: what ``restricted`` requires, and a read-only root."""
    return {"allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True,
            "runAsNonRoot": True, "runAsUser": RUN_AS, "runAsGroup": RUN_AS,
            "capabilities": {"drop": ["ALL"]}, "seccompProfile": {"type": "RuntimeDefault"}}


def probe_pod(probe_id: str, identity: Identity, spec: Mapping[str, Any], *, image: str,
              timeout: float, owner_uid: str | None = None) -> dict[str, Any]:
    """The Pod that runs one probe. ``spec`` is the probe's :mod:`message` JSON;
    ``owner_uid``: the uid of the Namespace ``identity.namespace`` (its controller
    reference, so that no workload controller adopts the pod)."""
    labels = {**identity.labels, MANAGED_BY: MANAGER, PROBE_ID_LABEL: probe_id}
    annotations = {**(identity.annotations or {}),
                   ANNOTATION: orjson.dumps(spec).decode()}
    metadata: dict[str, Any] = {"name": probe_name(probe_id), "namespace": identity.namespace,
                                "labels": labels, "annotations": annotations}
    if owner_uid:
        metadata["ownerReferences"] = [{"apiVersion": "v1", "kind": "Namespace",
                                        "name": identity.namespace, "uid": owner_uid,
                                        "controller": True}]
    pod_spec: dict[str, Any] = {
        "restartPolicy": "Never",
        "activeDeadlineSeconds": deadline_seconds(timeout),
        "automountServiceAccountToken": False,
        "enableServiceLinks": False,
        "terminationGracePeriodSeconds": 1,
        "securityContext": {"runAsNonRoot": True, "runAsUser": RUN_AS, "runAsGroup": RUN_AS,
                            "seccompProfile": {"type": "RuntimeDefault"}},
        "containers": [{
            "name": CONTAINER,
            "image": image,
            "imagePullPolicy": "IfNotPresent",
            "env": [{"name": ENV_VAR, "valueFrom": {"fieldRef": {
                "fieldPath": f"metadata.annotations['{ANNOTATION}']"}}}],
            "resources": {"requests": dict(REQUESTS), "limits": dict(LIMITS)},
            "securityContext": security_context(),
            "terminationMessagePath": TERMINATION_MESSAGE_PATH,
            "terminationMessagePolicy": "FallbackToLogsOnError",
            "readinessProbe": {"tcpSocket": {"port": NEVER_LISTENING}, "periodSeconds": 3600,
                               "failureThreshold": 1},
        }],
    }
    if identity.service_account:
        pod_spec["serviceAccountName"] = identity.service_account
    # The source's resolver settings: a DNS probe must expand names as the source does.
    if identity.dns_policy:
        pod_spec["dnsPolicy"] = identity.dns_policy
    if identity.dns_config:
        pod_spec["dnsConfig"] = dict(identity.dns_config)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": pod_spec}


def ephemeral_container(probe_id: str, spec: Mapping[str, Any], *, image: str
                        ) -> dict[str, Any]:
    """The probe as an ephemeral container of the source pod itself (mode ``ephemeral``).
    Ephemeral containers take no resources, ports or probes; the spec goes in as a plain
    value, since the source pod carries no annotation of netsight's."""
    return {
        "name": f"{CONTAINER}-{probe_id}",
        "image": image,
        "imagePullPolicy": "IfNotPresent",
        "env": [{"name": ENV_VAR, "value": orjson.dumps(spec).decode()}],
        "securityContext": security_context(),
        "terminationMessagePath": TERMINATION_MESSAGE_PATH,
        "terminationMessagePolicy": "FallbackToLogsOnError",
    }
