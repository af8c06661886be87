"""``netsight call TOOL --server URL``: a running netsight (uvicorn on a loopback port,
informers on the simulated API server) called over MCP Streamable HTTP by the SDK's client."""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path
from typing import Any

import pytest

from netsight.analyzers.core.calling import to_json
from netsight.analyzers.tools import call_tool
from netsight.cli import EXIT_FINDINGS, EXIT_OK, EXIT_TOOL_ERROR, EXIT_USAGE, main
from netsight.cli.server_call import mcp_endpoint
from tests.server.authenticated import ADMIN, grant_demo_callers, serving_with_auth
from tests.server.conftest import Served, demo_sim, serving, without_metadata

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def call(*argv: str) -> tuple[int, Any]:
    out = io.StringIO()
    code = await asyncio.to_thread(main, list(argv), stdout=out, stderr=io.StringIO())
    try:
        return code, json.loads(out.getvalue())
    except json.JSONDecodeError:
        return code, out.getvalue()


def on_its_graph(served: Served, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    result = call_tool(served.graph.store.view(), tool, args)
    return to_json(result, detail=bool(args.get("detail")))


async def test_the_answer_is_the_servers(tmp_path: Path) -> None:
    async with demo_sim() as sim, serving(sim, tmp_path) as served:
        for endpoint in (served.url, served.mcp_url, served.url + "/"):
            code, data = await call("call", "diagnose_service", "--server", endpoint,
                                    "--service", "shop/cart", "--detail")
            assert code == EXIT_OK, data
            assert data["metadata"]["clusterName"] == "sim"
            assert without_metadata(data) == without_metadata(on_its_graph(
                served, "diagnose_service", {"service": "shop/cart", "detail": True}))

        code, data = await call("call", "analyze_config", "--server", served.url, "-n", "shop",
                                "--fail-on", "warning", "--args", '{"limit": 3}')
        assert code == EXIT_FINDINGS
        assert len(data["findings"]) == 3


async def test_tool_errors_come_back_as_the_servers_tool_errors(tmp_path: Path) -> None:
    async with demo_sim() as sim, serving(sim, tmp_path) as served:
        code, error = await call("call", "diagnose_service", "--server", served.url,
                                 "--service", "shop/cartt")
        assert code == EXIT_TOOL_ERROR
        assert error["code"] == "NOT_FOUND"
        assert error["tool"] == "diagnose_service"
        assert "'cart'" in error["message"]

        code, error = await call("call", "find_blocking_policies", "--server", served.url,
                                 "--source", "shop/frontend")
        assert code == EXIT_TOOL_ERROR
        assert error["code"] == "INVALID_INPUT"
        assert "destination: required" in error["message"]


async def test_a_token_is_sent_as_bearer_and_its_absence_is_said(tmp_path: Path) -> None:
    async with demo_sim() as sim:
        grant_demo_callers(sim)
        async with serving_with_auth(sim, tmp_path) as served:
            code, error = await call("call", "list_services", "--server", served.url)
            assert code == EXIT_TOOL_ERROR
            assert error["code"] == "AUTH_FAILED"
            assert "--token" in error["message"]

            code, data = await call("call", "list_services", "--server", served.url,
                                    "--token", ADMIN)
            assert code == EXIT_OK, data
            assert data["services"]


async def test_no_server_listening_is_a_tool_error_naming_the_url() -> None:
    code, error = await call("call", "list_services", "--server", "http://127.0.0.1:9")
    assert code == EXIT_TOOL_ERROR
    assert error["code"] == "INVALID_INPUT"
    assert "http://127.0.0.1:9/mcp" in error["message"]


def test_a_server_with_a_kubeconfig_is_a_usage_error(capsys: pytest.CaptureFixture[str]
                                                       ) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["call", "list_services", "--server", "http://127.0.0.1:9", "--context", "x"])
    assert exit_.value.code == EXIT_USAGE
    assert "--server" in capsys.readouterr().err


def test_the_mcp_endpoint_is_added_to_a_base_url() -> None:
    assert mcp_endpoint("http://h:8080") == "http://h:8080/mcp"
    assert mcp_endpoint("http://h:8080/") == "http://h:8080/mcp"
    assert mcp_endpoint("https://h/netsight/mcp") == "https://h/netsight/mcp"
