"""The tool list an agent loads into every conversation: within its byte budget with every
tool offered, and free of the schema constructs some clients reject, as the MCP Inspector
CLI's strict check (``--method tools/list --strict``) reports them."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import pytest

from netsight.analyzers.core.declarations import DEFAULT_TOOLSETS
from netsight.analyzers.tools import TOOLS
from tests.server.conftest import Served

pytestmark = pytest.mark.anyio

# Of compact JSON, for the whole tools/list result: agent clients load every definition into
# the model's context on every conversation, and some warn or truncate past ~25k tokens.
BUDGET_BYTES = 25 * 1024
OFFERED = {name for name, tool in TOOLS.items() if tool.toolset in DEFAULT_TOOLSETS}
ROOT = Path(__file__).resolve().parents[2]
INSPECTOR = ROOT / ".tools" / "inspector" / "node_modules" / ".bin" / "mcp-inspector"
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "budget", "version": "0"}}}
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


async def listed_tools(url: str) -> dict[str, Any]:
    """The ``result`` of tools/list as the server sends it, over one raw session."""
    async with aiohttp.ClientSession() as http:
        async with http.post(url, json=INITIALIZE, headers=HEADERS) as answer:
            assert answer.status == 200
            session = {"Mcp-Session-Id": answer.headers["Mcp-Session-Id"],
                       "Mcp-Protocol-Version": "2025-06-18"}
        async with http.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                             headers={**HEADERS, **session}) as answer:
            assert answer.status == 202
        async with http.post(url, json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
                             headers={**HEADERS, **session}) as answer:
            assert answer.status == 200
            result: dict[str, Any] = orjson.loads(await answer.read())["result"]
    return result


async def test_the_tool_list_stays_within_its_budget(shared: Served) -> None:
    result = await listed_tools(shared.mcp_url)
    # Every tool a default server offers (all but the opt-in notes toolset's).
    assert {tool["name"] for tool in result["tools"]} == OFFERED
    assert all("outputSchema" in tool for tool in result["tools"])
    size = len(orjson.dumps(result))
    largest = sorted(((len(orjson.dumps(tool)), tool["name"]) for tool in result["tools"]),
                     reverse=True)[:5]
    assert size <= BUDGET_BYTES, f"tools/list is {size} bytes; largest tools: {largest}"


def inspector() -> Path:
    """The pinned Inspector CLI, fetched by .ci/get-inspector.sh where it is missing."""
    if not INSPECTOR.exists():
        if shutil.which("npm") is None:
            pytest.skip("the MCP Inspector needs npm (Node.js), which is not installed")
        fetched = subprocess.run(["bash", str(ROOT / ".ci" / "get-inspector.sh")],
                                 capture_output=True, text=True, timeout=600, check=False)
        if fetched.returncode != 0:
            pytest.skip("the MCP Inspector could not be installed from npm: "
                        f"{fetched.stderr.strip()[-300:]}")
    return INSPECTOR


async def test_the_inspector_finds_no_portability_problem(shared: Served,
                                                          tmp_path: Path) -> None:
    command = [str(inspector()), "--cli", shared.mcp_url, "--transport", "http",
               "--method", "tools/list", "--strict", "--format", "json"]
    # Its catalog and client config default to ~/.mcp-inspector: kept out of the home.
    env = {**os.environ, "HOME": str(tmp_path), "MCP_CATALOG_PATH": str(tmp_path / "mcp.json"),
           "MCP_CLIENT_CONFIG_PATH": str(tmp_path / "client.json")}
    process = await asyncio.create_subprocess_exec(
        *command, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env)
    out, err = await asyncio.wait_for(process.communicate(), 120)
    assert process.returncode == 0, err.decode()[-2000:]
    report = json.loads(out)
    assert {tool["name"] for tool in report["result"]["tools"]} == OFFERED
    # --strict adds schemaFindings (warnings and errors) to the JSON whenever there are any.
    assert report.get("schemaFindings", []) == [], json.dumps(report["schemaFindings"])[:2000]
    assert "Warning:" not in err.decode()
    assert "Error:" not in err.decode()
