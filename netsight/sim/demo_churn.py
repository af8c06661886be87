"""Gentle churn for the demo: a cluster that shows life without changing what is wrong with it.

Every step is one of, in turn: a **rollout** of a background Deployment (a new ReplicaSet,
each pod replaced by one of the new revision, surge first, so the Service never loses its
last ready endpoint), a **pod restart** (its ReplicaSet's replacement comes up, then the old
pod terminates and goes), a **policy edit** (a port added to a background NetworkPolicy's
first rule) and its **revert**. Only the healthy background is touched (namespaces with
Deployments; the demo's faults are bare pods and objects of their own), and the
endpoint-slice controller keeps the slices in step, so the demo's findings stay its
deliberate faults, give or take a transient.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import itertools
import logging
from collections.abc import AsyncIterator, Callable
from random import Random
from typing import Final

from netsight.sim.resources import ResourceType
from netsight.sim.state import Obj, SimState, now, object_key

log = logging.getLogger(__name__)

_ALPHABET: Final = "bcdfghjklmnpqrstvwxz2456789"  # as the API server's generateName suffixes
_RESTARTED_AT: Final = "kubectl.kubernetes.io/restartedAt"
_EDITED_PORT: Final = {"port": 8443, "protocol": "TCP"}
# Replacement pods take addresses from the last /16 of the synthetic pod CIDR
# (10.64.0.0/11), which a cluster of the demo's size never reaches.
_FIRST_IP: Final = (10 << 24) | (95 << 16)


class DemoChurn:
    """Applies the steps, one per :meth:`step`; :meth:`running` paces them."""

    def __init__(self, state: SimState, *, seed: int = 0) -> None:
        self.state, self.rng = state, Random(seed)
        self.pod_type = state.registry.require("v1", "Pod")
        self.rs_type = state.registry.require("apps/v1", "ReplicaSet")
        self.deployment_type = state.registry.require("apps/v1", "Deployment")
        self.policy_type = state.registry.require("networking.k8s.io/v1", "NetworkPolicy")
        self.steps: dict[str, int] = {}  # steps taken, by name
        self._edited: tuple[str, str, Obj] | None = None  # (ns, name, spec before the edit)
        self._ips = (f"{_FIRST_IP >> 24}.{(_FIRST_IP >> 16) & 255}.{i >> 8}.{i & 255}"
                     for i in itertools.cycle(range(1, 65_535)))
        self._cycle = itertools.cycle(
            [("rollout", self.rollout), ("restart", self.restart),
             ("edit-policy", self.edit_policy), ("revert-policy", self.revert_policy)])

    def _store(self, rtype: ResourceType) -> dict[str, Obj]:
        return self.state.objects.get((rtype.group, rtype.kind), {})

    def step(self) -> str:
        """Take the next step; returns its name."""
        name, take = next(self._cycle)
        take()
        self.steps[name] = self.steps.get(name, 0) + 1
        return name

    @contextlib.asynccontextmanager
    async def running(self, interval: float) -> AsyncIterator[DemoChurn]:
        """Take a step every ``interval`` seconds for as long as the context."""
        if interval <= 0:
            raise ValueError("the churn interval must be positive")

        async def pace() -> None:
            while True:
                await asyncio.sleep(interval)
                try:
                    self.step()
                except Exception:  # one failed step must not end the demo's life
                    log.exception("demo churn step failed")

        task = asyncio.create_task(pace(), name="demo-churn")
        try:
            yield self
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            if self._edited is not None:
                self.revert_policy()  # leave the policy as found

    # --- pods ----------------------------------------------------------------------------

    def _owned(self, store: dict[str, Obj], owner: Obj) -> list[Obj]:
        uid, prefix = owner["metadata"]["uid"], f"{owner['metadata']['namespace']}/"
        return [o for k, o in sorted(store.items()) if k.startswith(prefix) and any(
            ref.get("uid") == uid for ref in o["metadata"].get("ownerReferences") or ())]

    def _next_ip(self) -> str:
        used = {(p.get("status") or {}).get("podIP") for p in self._store(self.pod_type).values()}
        ip = next(self._ips)
        while ip in used:
            ip = next(self._ips)
        return ip

    def _replacement(self, pod: Obj, rs: Obj) -> Obj:
        """A new pod of ``rs`` on ``pod``'s node, up and ready."""
        meta, ns = rs["metadata"], rs["metadata"]["namespace"]
        prefix = f"{meta['name']}-"
        name = prefix + "".join(self.rng.choices(_ALPHABET, k=5))
        while object_key(ns, name) in self._store(self.pod_type):
            name = prefix + "".join(self.rng.choices(_ALPHABET, k=5))
        template = rs["spec"]["template"]
        ip, started = self._next_ip(), now()
        status = copy.deepcopy(pod.get("status") or {})
        status.update(podIP=ip, podIPs=[{"ip": ip}], startTime=started, phase="Running")
        status["conditions"] = [{**c, "status": "True", "lastTransitionTime": started}
                                if c.get("type") in ("Ready", "ContainersReady") else c
                                for c in status.get("conditions") or ()]
        status["containerStatuses"] = [
            {**c, "ready": True, "started": True, "restartCount": 0,
             "state": {"running": {"startedAt": started}}, "lastState": {}}
            for c in status.get("containerStatuses") or ()]
        return {
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "generateName": prefix, "namespace": ns,
                         "labels": dict(template["metadata"].get("labels") or {}),
                         "annotations": dict(template["metadata"].get("annotations") or {}),
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                              "name": meta["name"], "uid": meta["uid"],
                                              "controller": True,
                                              "blockOwnerDeletion": True}]},
            "spec": {**copy.deepcopy(template["spec"]),
                     "nodeName": (pod.get("spec") or {}).get("nodeName")},
            "status": status,
        }

    def _replace(self, pod: Obj, rs: Obj) -> None:
        """Surge first: the replacement is ready before the old pod terminates and goes."""
        ns, name = pod["metadata"]["namespace"], pod["metadata"]["name"]
        self.state.create(self.pod_type, self._replacement(pod, rs), ns)
        terminating = copy.deepcopy(pod)
        terminating["metadata"]["deletionTimestamp"] = now()
        terminating["metadata"]["deletionGracePeriodSeconds"] = 30
        terminating["metadata"].pop("resourceVersion", None)
        self.state.replace(self.pod_type, terminating, ns, name)
        self.state.delete(self.pod_type, ns, name)

    def _serving(self) -> list[tuple[Obj, Obj, list[Obj]]]:
        """(Deployment, its current ReplicaSet, that ReplicaSet's pods), for every
        Deployment whose current ReplicaSet has pods."""
        found = []
        replica_sets, pods = self._store(self.rs_type), self._store(self.pod_type)
        for _, deployment in sorted(self._store(self.deployment_type).items()):
            current = [rs for rs in self._owned(replica_sets, deployment)
                       if (rs.get("spec") or {}).get("replicas")]
            if current:
                owned = self._owned(pods, current[-1])
                if owned:
                    found.append((deployment, current[-1], owned))
        return found

    def restart(self) -> None:
        """A pod of a background Deployment is deleted and its ReplicaSet replaces it."""
        serving = self._serving()
        if not serving:
            return
        _, rs, pods = self.rng.choice(serving)
        self._replace(self.rng.choice(pods), rs)

    def rollout(self) -> None:
        """``kubectl rollout restart`` of a background Deployment, run to completion."""
        serving = self._serving()
        if not serving:
            return
        deployment, old_rs, pods = self.rng.choice(serving)
        ns, name = deployment["metadata"]["namespace"], deployment["metadata"]["name"]
        template = copy.deepcopy(deployment["spec"]["template"])
        template_meta = template.setdefault("metadata", {})
        template_meta["annotations"] = {**(template_meta.get("annotations") or {}),
                                        _RESTARTED_AT: now()}
        pod_hash = "".join(self.rng.choices(_ALPHABET, k=10))
        template_meta["labels"] = {**(template_meta.get("labels") or {}),
                                   "pod-template-hash": pod_hash}
        revision = int((deployment["metadata"].get("annotations") or {}).get(
            "deployment.kubernetes.io/revision", "1")) + 1
        replicas = len(pods)
        selector = {**deployment["spec"]["selector"].get("matchLabels", {}),
                    "pod-template-hash": pod_hash}
        new_rs = self.state.create(self.rs_type, {
            "apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": f"{name}-{pod_hash}", "namespace": ns,
                         "labels": dict(template_meta["labels"]),
                         "annotations": {"deployment.kubernetes.io/revision": str(revision)},
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment",
                                              "name": name,
                                              "uid": deployment["metadata"]["uid"],
                                              "controller": True,
                                              "blockOwnerDeletion": True}]},
            "spec": {"replicas": replicas, "selector": {"matchLabels": selector},
                     "template": template},
            "status": {"replicas": replicas, "readyReplicas": replicas,
                       "availableReplicas": replicas, "observedGeneration": 1},
        }, ns)
        for pod in pods:
            self._replace(pod, new_rs)
        self._set_replicas(old_rs, 0)
        for retired in self._owned(self._store(self.rs_type), deployment):
            if retired["metadata"]["name"] not in (new_rs["metadata"]["name"],
                                                   old_rs["metadata"]["name"]):
                self.state.delete(self.rs_type, ns, retired["metadata"]["name"])
        self._update(self.deployment_type, deployment, lambda d: d.update(
            spec={**d["spec"], "template": template},
            metadata={**d["metadata"], "generation": int(d["metadata"].get("generation") or 1)
                      + 1, "annotations": {**(d["metadata"].get("annotations") or {}),
                                           "deployment.kubernetes.io/revision": str(revision)}}))

    def _set_replicas(self, rs: Obj, replicas: int) -> None:
        self._update(self.rs_type, rs, lambda r: r.update(
            spec={**r["spec"], "replicas": replicas},
            status={**(r.get("status") or {}), "replicas": replicas,
                    "readyReplicas": replicas, "availableReplicas": replicas}))

    def _update(self, rtype: ResourceType, obj: Obj, change: Callable[[Obj], None]) -> None:
        current = self.state.get(rtype, obj["metadata"].get("namespace"),
                                 obj["metadata"]["name"])
        updated = {**current, "metadata": {**current["metadata"]}}
        change(updated)
        updated["metadata"].pop("resourceVersion", None)
        meta = updated["metadata"]
        self.state.replace(rtype, updated, meta.get("namespace"), meta["name"])

    # --- policies --------------------------------------------------------------------------

    def edit_policy(self) -> None:
        """Add a port to the first ingress rule of a background policy that has one."""
        if self._edited is not None:
            return
        namespaces = {d["metadata"]["namespace"]
                      for d in self._store(self.deployment_type).values()}
        policies = [p for _, p in sorted(self._store(self.policy_type).items())
                    if p["metadata"]["namespace"] in namespaces
                    and (p.get("spec") or {}).get("ingress")]
        if not policies:
            return
        policy = self.rng.choice(policies)
        before = copy.deepcopy(policy["spec"])
        spec = copy.deepcopy(before)
        spec["ingress"][0]["ports"] = [*(spec["ingress"][0].get("ports") or ()), dict(_EDITED_PORT)]
        self._edited = (policy["metadata"]["namespace"], policy["metadata"]["name"], before)
        self._update(self.policy_type, policy, lambda p: p.update(spec=spec))

    def revert_policy(self) -> None:
        """Put back the policy :meth:`edit_policy` changed, if it is still there."""
        if self._edited is None:
            return
        ns, name, before = self._edited
        self._edited = None
        current = self._store(self.policy_type).get(object_key(ns, name))
        if current is not None:
            self._update(self.policy_type, current, lambda p: p.update(spec=before))
