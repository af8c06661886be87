"""``netsight call`` on a cluster: the simulated API server over real HTTP, reached through a
kubeconfig as kubectl would; only the kinds the tool reads are listed, once, never watched."""

from __future__ import annotations

import asyncio
import io
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from netsight.cli import EXIT_FINDINGS, EXIT_OK, EXIT_TOOL_ERROR, main
from netsight.sim.apiserver import SimConfig, SimServer
from netsight.sim.scenarios import demo
from tests.server.conftest import serving

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def sim() -> AsyncIterator[SimServer]:
    server = SimServer(config=SimConfig(bookmark_interval=0.1))
    server.state.apply(demo())
    async with server:
        yield server


async def call(*argv: str) -> tuple[int, Any, str]:
    """``main`` on a thread of its own (it runs its own event loop), the simulator
    answering on this one."""
    out, err = io.StringIO(), io.StringIO()
    code = await asyncio.to_thread(main, list(argv), stdout=out, stderr=err)
    try:
        return code, json.loads(out.getvalue()), err.getvalue()
    except json.JSONDecodeError:
        return code, out.getvalue(), err.getvalue()


def listed(sim: SimServer) -> set[str]:
    """The resources listed: /api/v1/PLURAL and /apis/GROUP/VERSION/PLURAL, not discovery."""
    paths = {path for method, path, _ in sim.api.request_log if method == "GET"}
    return {path.rsplit("/", 1)[-1] for path in paths
            if path.count("/") == (3 if path.startswith("/api/") else 4)}


def without_metadata(data: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if k != "metadata"}


async def test_the_current_context_answers_from_a_list_of_the_tools_kinds(
        sim: SimServer, tmp_path: Path) -> None:
    kubeconfig = str(sim.write_kubeconfig(tmp_path / "kubeconfig"))

    code, data, err = await call("call", "diagnose_service", "--kubeconfig", kubeconfig,
                                 "--service", "shop/cart")

    assert code == EXIT_OK, data
    assert data["metadata"]["source"] == "cluster"
    assert data["status"] == "critical"
    # What diagnose_service reads and a cluster serves: the Service's own kinds, and those of
    # its layers (routes and the ServiceEntries Istio routes may name, policies of every
    # layer the demo serves — Istio's, Linkerd's —, mesh, DNS) and its Events; nothing else.
    assert listed(sim) == {"namespaces", "pods", "services", "endpointslices", "events",
                           "ingresses", "networkpolicies", "configmaps", "secrets",
                           "gatewayclasses", "gateways", "httproutes", "referencegrants",
                           "destinationrules", "virtualservices", "peerauthentications",
                           "authorizationpolicies", "serviceentries", "servers",
                           "meshtlsauthentications"}
    assert not any(query.get("watch") for _, _, query in sim.api.request_log)
    assert err == ""  # quick: no progress shown


@pytest.mark.parametrize(("tool", "flags"), [
    ("analyze_config", ["--limit", "100"]),
    ("list_services", ["--limit", "100"]),
    ("find_blocking_policies", ["--source", "shop/frontend", "--destination",
                                "Service/data/postgres", "--port", "5432", "--detail"]),
    ("check_gateway_status", []),
    ("check_mesh_config", ["--limit", "100"]),
])
async def test_the_tools_kinds_listed_once_answer_as_a_server_watching_everything(
        sim: SimServer, tmp_path: Path, tool: str, flags: list[str]) -> None:
    kubeconfig = str(sim.write_kubeconfig(tmp_path / "kubeconfig"))
    async with serving(sim, tmp_path) as served:
        code, once, _ = await call("call", tool, "--kubeconfig", kubeconfig, *flags)
        _, args, _ = await call("call", tool, "--server", served.url, *flags)
    assert code == EXIT_OK, once
    assert once["metadata"]["source"] == "cluster"
    assert without_metadata(once) == without_metadata(args)


async def test_context_picks_the_kubeconfig_entry(sim: SimServer, tmp_path: Path) -> None:
    path = sim.write_kubeconfig(tmp_path / "kubeconfig")
    config = yaml.safe_load(path.read_text())
    # The current context now points at nothing listening; --context names the simulator.
    config["clusters"].append({"name": "gone", "cluster": {"server": "http://127.0.0.1:9"}})
    config["contexts"].append({"name": "gone", "context": {"cluster": "gone",
                                                           "user": "netsight-sim"}})
    config["current-context"] = "gone"
    path.write_text(yaml.safe_dump(config))

    code, data, _ = await call("call", "list_services", "--kubeconfig", str(path))
    assert code == EXIT_TOOL_ERROR
    assert data["code"] == "INVALID_INPUT"
    assert "127.0.0.1:9" in data["message"]

    code, data, _ = await call("call", "list_services", "--kubeconfig", str(path),
                               "--context", "netsight-sim", "-n", "shop")
    assert code == EXIT_OK, data
    assert data["services"]

    code, data, _ = await call("call", "list_services", "--kubeconfig", str(path),
                               "--context", "nope")
    assert code == EXIT_TOOL_ERROR
    assert "nope" in data["message"]


async def test_kubeconfig_defaults_to_the_environments(
        sim: SimServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KUBECONFIG", str(sim.write_kubeconfig(tmp_path / "kubeconfig")))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)

    code, data, _ = await call("call", "analyze_config", "--fail-on", "critical")

    assert code == EXIT_FINDINGS  # the demo's deliberate faults
    assert data["metadata"]["source"] == "cluster"


async def test_a_slow_list_shows_progress_on_stderr(sim: SimServer, tmp_path: Path) -> None:
    kubeconfig = str(sim.write_kubeconfig(tmp_path / "kubeconfig"))
    sim.state.faults.latency = 0.4  # discovery and lists: well over a second in all

    code, data, err = await call("call", "k8s_networkpolicies", "--kubeconfig", kubeconfig)

    assert code == EXIT_OK, data
    lines = err.splitlines()
    assert lines[0].startswith(f"netsight: listing from {sim.url}: ")
    assert lines[-1].startswith("netsight: listed ")
    assert "kinds" in lines[-1]
    assert json.dumps(data)  # stdout holds the answer alone


async def test_a_forbidden_kind_is_said_in_the_answer(sim: SimServer, tmp_path: Path) -> None:
    kubeconfig = str(sim.write_kubeconfig(tmp_path / "kubeconfig"))
    sim.state.faults.forbidden.add("endpointslices")

    code, data, err = await call("call", "diagnose_service", "--kubeconfig", kubeconfig,
                                 "--service", "shop/frontend", "--detail")

    assert code == EXIT_OK, data
    assert "EndpointSlice" in json.dumps(data)
    assert "forbidden" in json.dumps(data)
    assert "could not list EndpointSlice" in err


async def test_a_provider_the_cluster_lacks_is_a_tool_error(tmp_path: Path) -> None:
    async with SimServer() as bare:
        kubeconfig = str(bare.write_kubeconfig(tmp_path / "kubeconfig"))
        code, data, _ = await call("call", "check_mesh_config", "--kubeconfig", kubeconfig)
    assert code == EXIT_TOOL_ERROR
    assert data["code"] == "CRD_NOT_AVAILABLE"


async def test_recent_changes_asks_for_a_server(sim: SimServer, tmp_path: Path) -> None:
    kubeconfig = str(sim.write_kubeconfig(tmp_path / "kubeconfig"))
    code, data, _ = await call("call", "recent_changes", "--kubeconfig", kubeconfig)
    assert code == EXIT_TOOL_ERROR
    assert "--server" in data["message"]


async def test_no_kubeconfig_at_all_says_where_it_looked(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)

    code, data, _ = await call("call", "list_services")

    assert code == EXIT_TOOL_ERROR
    assert data["code"] == "INVALID_INPUT"
    assert f"{tmp_path}/.kube/config does not exist" in data["message"]


async def test_watch_namespaces_lists_only_them_with_a_role_only_token(
        sim: SimServer, tmp_path: Path) -> None:
    team = "system:serviceaccount:shop:netsight"
    sim.access.add_token("shop-token", team)
    sim.access.allow(user=team, verbs=("get", "list", "watch"), resources=("*",),
                     namespaces=("shop",))
    sim.access.enforce = True
    kubeconfig = str(sim.write_kubeconfig(tmp_path / "kubeconfig", token="shop-token"))

    code, data, err = await call("call", "diagnose_service", "--kubeconfig", kubeconfig,
                                 "--watch-namespaces", "shop", "--service", "shop/cart")

    assert code == EXIT_OK, data
    assert data["status"] == "critical"  # the selector fault, seen from shop alone
    # A Role reads no cluster-scoped kind: the GatewayClasses of the routes layer are not
    # visible either, and said so.
    assert data["metadata"]["scope"] == {"namespaces": ["shop"],
                                         "notVisible": ["GatewayClass", "Namespace"]}
    assert "could not list GatewayClass, Namespace" in err
    assert {(d.resource, d.namespace) for d in sim.access.decisions if d.user == team
            and not d.resource.startswith("/")} == {
        ("namespaces", ""), ("gatewayclasses", ""),
        *((resource, "shop") for resource in (
            "pods", "services", "endpointslices", "events", "ingresses", "networkpolicies",
            "configmaps", "secrets", "gateways", "httproutes", "referencegrants",
            "destinationrules", "virtualservices", "peerauthentications",
            "authorizationpolicies", "serviceentries", "servers", "meshtlsauthentications"))}

    code, data, _ = await call("call", "diagnose_service", "--kubeconfig", kubeconfig,
                               "--watch-namespaces", "shop", "--service", "data/postgres")
    assert code == EXIT_TOOL_ERROR
    assert data["code"] == "INVALID_INPUT"
    assert "namespace 'data' is not watched" in data["message"]
