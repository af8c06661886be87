"""The demo's data plane: its CNI shows and enforces its policies, healthy flows connect, and
each fault the README says only ``check_connectivity`` reveals is observed by a probe."""

from __future__ import annotations

import json
import re

import pytest

from netsight.sim.dataplane.enforcement import Profile
from netsight.sim.dataplane.probing import DataPlane
from netsight.sim.demo import load_demo
from netsight.sim.state import SimState
from tests.conftest import ROOT

# | fault | revealed by `check_connectivity` | `Pod/namespace/name` |
PROBE_ROW = re.compile(r"^\|[^|]+\|\s*revealed by `check_connectivity`\s*\|\s*`Pod/([^`]+)`\s*\|$")
SOURCE = "shop/frontend-6f7c-a"


@pytest.fixture(scope="module")
def demo() -> SimState:
    state = SimState()
    load_demo(state)
    return state


def probe(state: SimState, host: str, port: int, source: str = SOURCE) -> str:
    pod = state.objects[("", "Pod")][source]
    spec = json.dumps({"type": "tcp", "host": host, "port": port})
    return DataPlane(state.objects, state.network).probe(pod, spec).outcome


def readme_probe_faults() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("### The demo\n", 1)[1].split("\n#", 1)[0]
    return [m[1] for line in section.splitlines() if (m := PROBE_ROW.match(line))]


def test_the_demo_shows_and_runs_a_cilium_like_cni(demo: SimState) -> None:
    assert demo.network.cni is Profile.CILIUM_LIKE
    assert "kube-system/cilium" in demo.objects[("apps", "DaemonSet")]
    nodes = demo.objects[("", "Node")].values()
    assert nodes
    assert all("network.cilium.io/ipv4-cilium-host" in n["metadata"]["annotations"]
               for n in nodes)


def test_healthy_flows_connect_and_policies_hold(demo: SimState) -> None:
    assert probe(demo, "frontend", 80, "shop/cart-7d9f-a") == "connected"
    assert probe(demo, "postgres.data", 5432) == "timeout"  # data/deny-all, enforced


def test_linkerd_refuses_the_identity_its_server_does_not_authorize(demo: SimState) -> None:
    # books/api's Server admits only service account web; books/web runs as storefront.
    assert probe(demo, "api.books", 80, "books/web-7b4f-a") == "reset"
    assert probe(demo, "api.books", 80) == "reset"  # unmeshed: no identity at all


def test_linkerd_admits_the_identity_its_server_authorizes() -> None:
    state = SimState()
    load_demo(state)
    web = json.loads(json.dumps(state.objects[("", "Pod")]["books/web-7b4f-a"]))
    web["metadata"] = {**web["metadata"], "name": "web-7b4f-b", "resourceVersion": None}
    web["spec"]["serviceAccountName"] = "web"
    web["status"] = {**web["status"], "podIP": "10.250.0.249", "podIPs": [{"ip": "10.250.0.249"}]}
    state.apply([web])
    assert probe(state, "api.books", 80, "books/web-7b4f-b") == "connected"


def test_every_fault_only_a_probe_reveals_is_observed(demo: SimState) -> None:
    pods = readme_probe_faults()
    assert pods == ["shop/invoices-8b2d-a"]
    for key in pods:
        pod = demo.objects[("", "Pod")][key]
        ready = {c["type"]: c["status"] for c in pod["status"]["conditions"]}["Ready"]
        assert ready == "True"  # nothing in the objects gives it away
        port = pod["spec"]["containers"][0]["ports"][0]["containerPort"]
        assert probe(demo, pod["status"]["podIP"], port) == "refused"
    assert probe(demo, "invoices", 80) == "refused"
