"""Every expectation of the shared Gateway API conformance corpus, checked through
check_route_resolution and check_gateway_status (and once through the real CLI).

Expectations read as the corpus README says: ``reason: null`` accepts any reason;
``accepted_by_any_parent: false`` means no parent accepts the route; an expected
``supportedKinds`` must be present in the answer (implementations may support more), and
an empty one means none; ``totalAttachedRoutes`` sums the listeners. Two assertion types
upstream makes are read too: a Gateway's own ``conditions`` (GatewayMustHaveCondition), in
the same form as a listener's, and a condition given as ``null``, which must be absent
(GatewayListenerMustNotHaveCondition); a listener without ``supportedKinds`` leaves them
unchecked (GatewayListenerMustHaveConditions and ...AttachedRoutes assert none), one without
``attachedRoutes`` its count (GatewayAndRoutesMustBeAccepted asserts conditions only). Optional
``policies[]`` (BackendTLSPolicyMustHaveCondition) give a BackendTLSPolicy's ``policy``
("ns/name"), the ``ancestor`` Gateway upstream reads its status under, and its
``conditions``; they are read from gateway_get on that Gateway, which lists the
BackendTLSPolicies of its backends, those that lost a conflict too.

ListenerSet assertions (GEP-1713; this project's cases under tests/corpus/gateway/listenerset-*)
add three things, read from check_gateway_status and check_route_resolution:
``gateways[].attachedListenerSets`` (GatewayMustHaveAttachedListeners: the Gateway's
status.attachedListenerSets); ``listenersets[]`` — ``{"listenerset": "ns/name", "kind":
"ListenerSet" | "XListenerSet", "conditions": {...}, "listeners": [{"name", "conditions",
and optionally "attachedRoutes" and "supportedKinds"}]}`` (ListenerSetMustHaveCondition,
ListenerSetListenersMustHaveConditions, ListenerSetStatusMustHaveListeners), found under
the Gateway that the ListenerSet names; and a route parent's optional ``kind`` (a
ListenerSet parentRef: RoutesAndParentMustBeAccepted with a ListenerSet resource ref), absent
for a Gateway.

A condition netsight answers Unknown (reason Pending, with its message saying why) is
undecided, not wrong: the input lacks what decides it — above all Secrets and CA ConfigMaps
the conformance suite creates at run time, which a case's manifests do not hold (see
routing/objects.not_in_input). It satisfies no expectation and contradicts none; a case
passes only if it decides something, and the undecided ones are listed in the test's
report (``-rA`` shows them).
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from netsight.analyzers.core.calling import to_json
from netsight.analyzers.tools import call_tool
from netsight.cli import main
from netsight.graph.ingest.manifests import load_manifests
from netsight.graph.store.live import GraphStore
from tests.conftest import CONFORMANCE, OWN_CORPUS, corpus_cases, corpus_id, needs_shared_corpus

GATEWAY_CASES = corpus_cases("gateway")  # the shared corpus's and tests/corpus's


def load(case: Path) -> GraphStore:
    store = GraphStore(cluster_name="conformance")
    load_manifests(store, [str(case / "manifests.yaml")])
    assert not store.problems, list(store.problems.values())
    return store


def answers(case: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    view = load(case).view()
    routes = to_json(call_tool(view, "check_route_resolution", {"limit": 500}), detail=True)
    gateways = to_json(call_tool(view, "check_gateway_status", {"limit": 500}), detail=True)
    return routes, gateways


def backend_tls_policies(case: Path, gateway: str) -> dict[str, dict[str, Any]]:
    """The BackendTLSPolicies gateway_get shows for one Gateway, by "ns/name"."""
    answer = to_json(call_tool(load(case).view(), "gateway_get", {"gateway": gateway}),
                     detail=True)
    return {entry["tls"]["policy"]: entry["tls"] for entry in answer.get("backendTls", [])}


class Tally:
    """What a case's checks decided, and what netsight left undecided."""

    def __init__(self) -> None:
        self.decided = 0
        self.undecided: list[str] = []


def assert_conditions(expected: dict[str, Any], actual: dict[str, Any], where: str,
                      tally: Tally | None = None) -> None:
    tally = tally or Tally()
    for kind, want in expected.items():
        if want is None:
            assert kind not in actual, f"{where}: {kind} must not be set, got {actual[kind]}"
            tally.decided += 1
            continue
        assert kind in actual, f"{where}: no {kind} condition in {actual}"
        got = actual[kind]
        if got["status"] == "Unknown" and want["status"] != "Unknown":
            assert got["reason"] == "Pending", f"{where} {kind}: {got}"
            assert got.get("message"), f"{where} {kind}: undecided without saying why"
            tally.undecided.append(f"{where} {kind}: {got['message']}")
            continue
        tally.decided += 1
        assert got["status"] == want["status"], f"{where} {kind}: {got} != {want}"
        if want.get("reason") is not None:
            assert got["reason"] == want["reason"], f"{where} {kind}: {got} != {want}"


def find_parent(parents: list[dict[str, Any]], parent: str,
                kind: str | None = None) -> dict[str, Any]:
    namespace, name, *section = parent.split("/")
    for entry in parents:
        if entry["parent"] == f"{namespace}/{name}" and entry.get("kind") == kind and \
                entry.get("sectionName") == (section[0] if section else entry.get("sectionName")):
            return entry
    raise AssertionError(f"{kind or 'Gateway'} parent {parent} not in "
                         f"{[(p.get('kind'), p['parent']) for p in parents]}")


def assert_listener(want: dict[str, Any], got: dict[str, Any], where: str,
                    tally: Tally) -> None:
    if "attachedRoutes" in want:  # GatewayListenerMustHaveConditions asserts none
        assert got["attachedRoutes"] == want["attachedRoutes"], where
        tally.decided += 1
    if "supportedKinds" in want:  # GatewayListenerMustHaveAttachedRoutes has none
        kinds = {(k["group"], k["kind"]) for k in got["supportedKinds"]}
        wanted = {(k["group"], k["kind"]) for k in want["supportedKinds"]}
        assert wanted <= kinds if wanted else not kinds, f"{where}: {kinds}"
    assert_conditions(want.get("conditions", {}), got["conditions"], where, tally)


@needs_shared_corpus
def test_corpus_has_gateway_cases() -> None:
    assert len([c for c in GATEWAY_CASES if c.is_relative_to(CONFORMANCE)]) >= 10


@pytest.mark.parametrize("case", GATEWAY_CASES, ids=corpus_id)
def test_gateway_case(case: Path) -> None:
    expected = json.loads((case / "expected.json").read_text())
    routes, gateways = answers(case)
    tally = Tally()
    by_route = {(r["route"], r["kind"]): r for r in routes["routes"]}
    for want in expected["routes"]:
        route = by_route.get((want["route"], want["kind"]))
        assert route is not None, f"{want['route']} missing from {sorted(by_route)}"
        for parent in want["parents"]:
            got = find_parent(route["parents"], parent["parent"], parent.get("kind"))
            assert_conditions(parent["conditions"], got["conditions"],
                              f"{want['route']} -> {parent['parent']}", tally)
        if want.get("accepted_by_any_parent") is False:
            accepted = [p["parent"] for p in route["parents"]
                        if p["conditions"]["Accepted"]["status"] == "True"]
            assert not accepted, f"{want['route']} accepted by {accepted}"
            tally.decided += 1
    for want in expected.get("policies", []):
        assert want["kind"] == "BackendTLSPolicy", want
        shown = backend_tls_policies(case, want["ancestor"])
        tls = shown.get(want["policy"])
        assert tls is not None, f"{want['policy']} not shown for {want['ancestor']}: {shown}"
        got = {"Accepted": tls["accepted"]}
        if "resolvedRefs" in tls:  # not shown for a policy Accepted=False/Conflicted
            got["ResolvedRefs"] = tls["resolvedRefs"]
        assert_conditions(want["conditions"], got, want["policy"], tally)
    by_gateway = {g["gateway"]: g for g in gateways["gateways"]}
    for want in expected["gateways"]:
        gateway = by_gateway.get(want["gateway"])
        assert gateway is not None, f"{want['gateway']} missing from {sorted(by_gateway)}"
        assert_conditions(want.get("conditions", {}), gateway["conditions"], want["gateway"],
                          tally)
        listeners = {ls["name"]: ls for ls in gateway["listeners"]}
        if "totalAttachedRoutes" in want:
            total = sum(ls["attachedRoutes"] for ls in gateway["listeners"])
            assert total == want["totalAttachedRoutes"], gateway
            tally.decided += 1
        for listener in want.get("listeners", []):
            assert_listener(listener, listeners[listener["name"]],
                            f"{want['gateway']} listener {listener['name']}", tally)
        if "attachedListenerSets" in want:
            assert gateway.get("attachedListenerSets") == want["attachedListenerSets"], \
                f"{want['gateway']}: attachedListenerSets {gateway.get('attachedListenerSets')}"
            tally.decided += 1
    sets_shown = {(s["listenerSet"], s["kind"]): s for g in gateways["gateways"]
             for s in g.get("listenerSets", [])}
    for want in expected.get("listenersets", []):
        got_set = sets_shown.get((want["listenerset"], want["kind"]))
        where = f"{want['kind']} {want['listenerset']}"
        assert got_set is not None, f"{where} not in {sorted(sets_shown)}"
        assert_conditions(want.get("conditions", {}), got_set["conditions"], where, tally)
        by_name = {ls["name"]: ls for ls in got_set["listeners"]}
        for listener in want.get("listeners", []):
            assert_listener(listener, by_name[listener["name"]],
                            f"{where} listener {listener['name']}", tally)
    assert tally.decided, f"nothing decided: {tally.undecided}"
    if tally.undecided:
        print("undecided:", *tally.undecided, sep="\n  ")


@needs_shared_corpus
def test_a_case_through_the_cli() -> None:
    case = CONFORMANCE / "gateway" / "httproute-invalid-reference-grant"
    out = io.StringIO()
    code = main(["call", "check_route_resolution", "--manifests", str(case / "manifests.yaml"),
                 "--args", '{"route": "gateway-conformance-infra/reference-grant"}'],
                stdout=out)
    assert code == 0
    (route,) = json.loads(out.getvalue())["routes"]
    (parent,) = route["parents"]
    assert parent["conditions"]["Accepted"]["status"] == "True"
    assert parent["conditions"]["ResolvedRefs"] == {
        "status": "False", "reason": "RefNotPermitted",
        "message": parent["conditions"]["ResolvedRefs"]["message"]}
    out = io.StringIO()
    case = CONFORMANCE / "gateway" / "gateway-with-attached-routes"
    assert main(["call", "check_gateway_status", "-f", str(case / "manifests.yaml"), "--args",
                 '{"gateway": "gateway-conformance-infra/gateway-with-two-attached-routes"}'],
                stdout=out) == 0
    (gateway,) = json.loads(out.getvalue())["gateways"]
    assert [ls["attachedRoutes"] for ls in gateway["listeners"]] == [2]


def test_a_condition_expected_absent_or_on_the_gateway_is_checked() -> None:
    overlapping = {"OverlappingTLSConfig": {"status": "True", "reason": "OverlappingHostnames"}}
    assert_conditions({"OverlappingTLSConfig": None}, {}, "listener")
    with pytest.raises(AssertionError, match="must not be set"):
        assert_conditions({"OverlappingTLSConfig": None}, overlapping, "listener")
    case = OWN_CORPUS / "gateway" / "gateway-listener-unsupported-protocol"
    expected = json.loads((case / "expected.json").read_text())
    _, gateways = answers(case)
    wanted = expected["gateways"][0]["gateway"]
    (answer,) = [g for g in gateways["gateways"] if g["gateway"] == wanted]
    with pytest.raises(AssertionError):
        assert_conditions({"Accepted": {"status": "True", "reason": None}}, answer["conditions"],
                          answer["gateway"])
