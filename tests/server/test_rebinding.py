"""On loopback, netsight answers only requests addressed to a loopback name: a web page that
rebinds its own hostname to 127.0.0.1 cannot read the cluster's graph through the browser."""

from __future__ import annotations

import aiohttp
import pytest

from netsight.server.rebinding import hostname
from tests.server.conftest import Served

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(("headers", "status"), [
    ({}, 200),
    ({"Host": "localhost:9"}, 200),
    ({"Origin": "http://127.0.0.1:3000"}, 200),
    ({"Host": "attacker.example:8080"}, 403),
    ({"Host": "attacker.example"}, 403),
    ({"Origin": "http://attacker.example"}, 403),
    ({"Host": "127.0.0.1.attacker.example"}, 403),
])
async def test_only_loopback_names_are_answered(shared: Served, headers: dict[str, str],
                                                status: int) -> None:
    async with aiohttp.ClientSession() as http:
        for path in ("/api/graph", "/dashboard", "/healthz"):
            async with http.get(shared.url + path, headers=headers) as response:
                assert response.status == status, (path, headers)
                if status == 403:
                    body = await response.json()
                    assert body["code"] == "FORBIDDEN"
                    assert "DNS-rebinding" in body["message"]


@pytest.mark.parametrize(("value", "host"), [
    ("127.0.0.1:8080", "127.0.0.1"), ("localhost", "localhost"), ("[::1]:8080", "::1"),
    ("[::1]", "::1"), ("example.com:80", "example.com"), ("", ""),
])
def test_host_header_parsing(value: str, host: str) -> None:
    assert hostname(value) == host
