"""A simulated cluster's CNI: which policies its data plane enforces, shown as a real one
shows itself.

:func:`install_cni` sets the data plane's profile (``SimState.network.cni``) and writes what
the CNI's installation leaves in a cluster, so that a CNI detector reading the API finds
it: its agent DaemonSet in kube-system (with the status its controller reports: one ready
agent per Node), and the annotations its agent puts on each Node.
"""

from __future__ import annotations

from typing import Any, Final

from netsight.sim.dataplane.enforcement import Profile
from netsight.sim.state import Obj, SimState

NAMESPACE: Final = "kube-system"


def _agent(name: str, labels: dict[str, str], image: str, args: list[str]) -> Obj:
    return {"apiVersion": "apps/v1", "kind": "DaemonSet",
            "metadata": {"name": name, "namespace": NAMESPACE, "labels": labels},
            "spec": {"selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels},
                                  "spec": {"hostNetwork": True, "priorityClassName":
                                           "system-node-critical",
                                           "containers": [{"name": name, "image": image,
                                                           "args": args}]}}}}


# The DaemonSet each profile's model CNI installs, and the Node annotations its agent writes
# ({ip}: the node's InternalIP, {cidr}: its pod range).
AGENTS: Final[dict[Profile, tuple[Obj, dict[str, str]]]] = {
    Profile.NONE: (_agent("kube-flannel-ds", {"app": "flannel", "k8s-app": "flannel"},
                          "docker.io/flannel/flannel:v0.26.1",
                          ["--ip-masq", "--kube-subnet-mgr"]),
                   {"flannel.alpha.coreos.com/backend-type": "vxlan",
                    "flannel.alpha.coreos.com/kube-subnet-manager": "true",
                    "flannel.alpha.coreos.com/public-ip": "{ip}"}),
    Profile.NETPOL: (_agent("kube-router", {"k8s-app": "kube-router"},
                            "docker.io/cloudnativelabs/kube-router:v2.4.1",
                            ["--run-router=true", "--run-firewall=true",
                             "--run-service-proxy=false"]),
                     {"kube-router.io/pod-cidr": "{cidr}"}),
    Profile.CILIUM_LIKE: (_agent("cilium", {"k8s-app": "cilium"},
                                 "quay.io/cilium/cilium:v1.16.5",
                                 ["--config-dir=/tmp/cilium/config-map"]),
                          {"network.cilium.io/ipv4-pod-cidr": "{cidr}",
                           "network.cilium.io/ipv4-cilium-host": "{ip}"}),
}


def install_cni(state: SimState, profile: Profile) -> None:
    """Make ``profile`` the cluster's CNI: the data plane enforces what it enforces, and
    kube-system and the Nodes show it."""
    state.network.cni = profile
    daemonset, annotations = AGENTS[profile]
    nodes = len(state.objects.get(("", "Node"), {}))
    # As the DaemonSet controller reports it once every agent is up (no controller runs here).
    status = {"observedGeneration": 1, "desiredNumberScheduled": nodes,
              "currentNumberScheduled": nodes, "numberReady": nodes,
              "updatedNumberScheduled": nodes, "numberAvailable": nodes,
              "numberMisscheduled": 0}
    # kube-system itself is left to the scenario, as the demo lacks it.
    state.apply([{**daemonset, "metadata": {**daemonset["metadata"], "generation": 1},
                  "status": status}])
    node_type = state.registry.require("v1", "Node")
    for key, node in sorted(state.objects.get(("", "Node"), {}).items()):
        values = {"ip": _internal_ip(node), "cidr": (node.get("spec") or {}).get("podCIDR", "")}
        meta = node["metadata"]
        wanted = {k: v.format(**values) for k, v in annotations.items()}
        if all((meta.get("annotations") or {}).get(k) == v for k, v in wanted.items()):
            continue
        state.replace(node_type, {**node, "metadata": {
            **meta, "annotations": {**(meta.get("annotations") or {}), **wanted}}}, None, key,
            owned=True)


def _internal_ip(node: dict[str, Any]) -> str:
    for address in (node.get("status") or {}).get("addresses") or ():
        if address.get("type") == "InternalIP":
            return str(address.get("address") or "")
    return ""
