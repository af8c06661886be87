"""What churn can change in a simulated cluster, and where each pod sits.

Taken once from the stored objects, then kept current by the churn driver as it writes:
the nodes with the pod IPs in use in their /24, the apps (a ReplicaSet's live pods and the
Service slices that list them), and the NetworkPolicies.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from random import Random

from netsight.sim.state import ApiError, Obj, object_key

MAX_PODS_PER_NODE = 110  # the kubelet's default --max-pods
SERVICE_NAME = "kubernetes.io/service-name"  # the label tying a slice to its Service


@dataclass
class Node:
    name: str
    prefix: str  # "10.64.3." : the node's /24 pod CIDR
    host_ip: str
    zone: str
    used: set[int] = field(default_factory=set)  # host octets in use
    pods: int = 0

    def allocate(self, rng: Random) -> str:
        used = self.used
        if len(used) < 200:  # at most 110 pods a node: a free octet is found in ~2 tries
            octet = rng.randrange(2, 255)
            while octet in used:
                octet = rng.randrange(2, 255)
        else:
            octet = rng.choice([i for i in range(2, 255) if i not in used])
        used.add(octet)
        self.pods += 1
        return f"{self.prefix}{octet}"

    def release(self, ip: str) -> None:
        self.used.discard(int(ip.rpartition(".")[2]))
        self.pods -= 1

    @property
    def has_room(self) -> bool:
        return self.pods < MAX_PODS_PER_NODE and len(self.used) < 253


@dataclass
class App:
    """A ReplicaSet with live pods, and the Service (with its slices) that selects them."""

    namespace: str
    replica_set: str
    deployment: str | None
    labels: dict[str, str]  # the pod template's labels
    pods: list[str]
    service: str | None = None
    slices: list[str] = field(default_factory=list)
    initial: int = 0  # replicas when churn began: scaling drifts back towards it


@dataclass
class Inventory:
    nodes: dict[str, Node] = field(default_factory=dict)
    node_names: list[str] = field(default_factory=list)
    pod_node: dict[str, str] = field(default_factory=dict)  # pod key -> node name
    pod_slice: dict[str, str] = field(default_factory=dict)  # pod key -> its slice's name
    apps: list[App] = field(default_factory=list)
    app_of: dict[str, App] = field(default_factory=dict)  # pod key -> app
    scalable: list[App] = field(default_factory=list)
    policies: list[tuple[str, str]] = field(default_factory=list)

    @classmethod
    def of(cls, *, pods: Mapping[str, Obj], slices: Mapping[str, Obj],
           replica_sets: Mapping[str, Obj], policies: Mapping[str, Obj]) -> Inventory:
        """The inventory of the stored objects (each kind's store, keyed by object key)."""
        found = cls()
        zones: dict[str, str] = {}
        slices_of: dict[tuple[str, str], list[str]] = {}
        for key in sorted(slices):
            obj = slices[key]
            meta = obj["metadata"]
            ns = meta.get("namespace", "")
            service = (meta.get("labels") or {}).get(SERVICE_NAME)
            if service:
                slices_of.setdefault((ns, service), []).append(meta["name"])
            for endpoint in obj.get("endpoints") or ():
                target = endpoint.get("targetRef") or {}
                if target.get("kind") == "Pod" and target.get("name"):
                    found.pod_slice[object_key(ns, target["name"])] = meta["name"]
                if endpoint.get("nodeName") and endpoint.get("zone"):
                    zones[endpoint["nodeName"]] = endpoint["zone"]
        by_rs: dict[str, App] = {}
        for key in sorted(pods):
            obj = pods[key]
            meta, spec, status = obj["metadata"], obj.get("spec") or {}, obj.get("status") or {}
            ns, node_name, ip = meta.get("namespace", ""), spec.get("nodeName"), status.get("podIP")
            if not (node_name and ip):
                continue
            node = found.nodes.get(node_name)
            if node is None:
                node = found.nodes[node_name] = Node(
                    node_name, ip.rpartition(".")[0] + ".", status.get("hostIP") or "",
                    zones.get(node_name, ""))
            node.used.add(int(ip.rpartition(".")[2]))
            node.pods += 1
            found.pod_node[key] = node_name
            owner = next((o for o in meta.get("ownerReferences") or ()
                          if o.get("kind") == "ReplicaSet"), None)
            rs = replica_sets.get(object_key(ns, owner["name"])) if owner else None
            if rs is None:
                continue
            rs_key = object_key(ns, rs["metadata"]["name"])
            app = by_rs.get(rs_key)
            if app is None:
                deployment = next((o["name"] for o in rs["metadata"].get("ownerReferences") or ()
                                   if o.get("kind") == "Deployment"), None)
                template = (rs.get("spec") or {}).get("template") or {}
                labels = dict((template.get("metadata") or {}).get("labels") or {})
                app = by_rs[rs_key] = App(ns, rs["metadata"]["name"], deployment, labels, [])
                found.apps.append(app)
            app.pods.append(meta["name"])
            found.app_of[key] = app
            slice_name = found.pod_slice.get(key)
            if slice_name and app.service is None:
                service = (slices[object_key(ns, slice_name)]["metadata"].get("labels")
                           or {}).get(SERVICE_NAME)
                if service:
                    app.service = service
                    app.slices = slices_of.get((ns, service), [])
        found.node_names = sorted(found.nodes)
        for app in found.apps:
            app.initial = len(app.pods)
        scalable = [app for app in found.apps if app.deployment is not None]
        # A one-replica app can only grow; scaling it would make the cluster drift larger.
        found.scalable = [app for app in scalable if app.initial > 1] or scalable
        found.policies = [(p["metadata"].get("namespace", ""), p["metadata"]["name"])
                          for p in (policies[k] for k in sorted(policies))]
        return found

    def node_with_room(self, rng: Random) -> Node:
        """A node below its pod limit: a few random draws, then the first in name order."""
        for _ in range(8):
            node = self.nodes[rng.choice(self.node_names)]
            if node.has_room:
                return node
        for name in self.node_names:
            node = self.nodes[name]
            if node.has_room:
                return node
        raise ApiError(422, "Invalid", "churn: every node is full")

    def add_pod(self, app: App, key: str, node: Node) -> None:
        self.pod_node[key] = node.name
        self.app_of[key] = app

    def forget_pod(self, app: App, name: str, ip: str) -> str | None:
        """Drop a deleted pod; returns the name of the slice that listed it."""
        key = object_key(app.namespace, name)
        app.pods.remove(name)
        del self.app_of[key]
        self.nodes[self.pod_node.pop(key)].release(ip)
        return self.pod_slice.pop(key, None)
