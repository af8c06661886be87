"""With probes enabled the tool list still fits its budget, the probe tools' schemas are as
portable as the others', and their arguments are checked like every tool's."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from mcp import Client

from netsight.analyzers.core.calling import parse_args
from netsight.analyzers.core.contracts import ErrorCode, ToolFailure
from netsight.analyzers.core.declarations import Toolset
from netsight.analyzers.probing import connectivity, http_requests
from netsight.server.probe_tools import probe_tools
from netsight.sim.apiserver import SimServer
from netsight.sim.demo import load_demo
from tests.schema_portability import problems
from tests.server.conftest import serving
from tests.server.test_tool_list_is_portable import BUDGET_BYTES, listed_tools

pytestmark = pytest.mark.anyio


# The probe tools' own share: they are a toolset of their own (``probes``), offered only
# where probes are enabled, beside a default list already near its budget; a deployment
# that enables them and needs the whole list within budget leaves out another toolset.
PROBES_BUDGET = 2_400


async def test_the_probe_tools_keep_to_their_share_of_the_tool_list(tmp_path: Path) -> None:
    sim = SimServer()
    load_demo(sim.state)
    async with sim:
        async with serving(sim, tmp_path) as served:
            without = await listed_tools(served.mcp_url)
        async with serving(sim, tmp_path, probes=True) as served:
            result = await listed_tools(served.mcp_url)
            async with Client(served.mcp_url) as client:
                bad = await client.call_tool("check_connectivity", {
                    "source": "shop/web", "destination": "x", "port": 80, "protocol": "UDP"})
        narrowed = {"core", "policy", "routing", "probes"}
        async with serving(sim, tmp_path, probes=True,
                           toolsets=frozenset(Toolset(t) for t in narrowed)) as served:
            fewer = await listed_tools(served.mcp_url)
    names = {tool["name"] for tool in result["tools"]}
    assert names - {tool["name"] for tool in without["tools"]} == \
        {"check_connectivity", "probe_http"}
    added = len(orjson.dumps(result)) - len(orjson.dumps(without))
    assert added <= PROBES_BUDGET, f"the probe tools take {added} bytes of tools/list"
    assert len(orjson.dumps(fewer)) <= BUDGET_BYTES  # without the mesh toolset, it fits
    assert bad.is_error
    assert "probes test TCP only" in bad.content[0].text  # type: ignore[union-attr]


def test_the_probe_tools_schemas_are_portable() -> None:
    tools = probe_tools(None)  # schemas only: no runner
    for tool in tools.values():
        assert list(problems(tool.input_schema())) == [], tool.name
        assert list(problems(tool.output_schema())) == [], tool.name


@pytest.mark.parametrize(("model", "arguments", "says"), [
    (connectivity.Args, {"source": "shop/web", "destination": "data/db", "port": 0},
     "port"),
    (connectivity.Args, {"source": "shop/web", "destination": "data/db", "port": 5432,
                         "extra": 1}, "unknown argument"),
    (http_requests.Args, {}, "give url, or service"),
    (http_requests.Args, {"url": "ftp://x/"}, "url"),
    (http_requests.Args, {"url": "http://a/", "service": "data/db"}, "not both"),
    (http_requests.Args, {"url": "http://a/", "port": 80}, "port: only with service"),
    (http_requests.Args, {"service": "data/db", "method": "TRACE"}, "method"),
])
def test_bad_arguments_say_what_to_send(model: type, arguments: dict[str, object],
                                        says: str) -> None:
    tools = probe_tools(None)
    tool = next(t for t in tools.values() if t.args is model)
    with pytest.raises(ToolFailure) as failure:
        parse_args(tool, arguments)
    assert failure.value.code is ErrorCode.INVALID_INPUT
    assert says in failure.value.message
