"""The demo's Linkerd namespace, through the informers: books/web's requests to books/api are
refused by Linkerd, for the reason the README gives (its Server admits only the identity of
service account ``web``, and books/web runs as ``storefront``)."""

from __future__ import annotations

from typing import Any

import pytest

from netsight.analyzers.core.calling import answer, to_json
from netsight.analyzers.tools import TOOLS
from tests.conftest import ROOT
from tests.server.conftest import Served

pytestmark = pytest.mark.anyio


def verdict(served: Served, source: str) -> dict[str, Any]:
    args = {"source": source, "destination": "Service/books/api", "port": 80}
    found: dict[str, Any] = to_json(answer(TOOLS["find_blocking_policies"],
                                           served.graph.store.view(), args), detail=False)
    return found


async def test_linkerd_refuses_the_wrong_identity(shared: Served) -> None:
    found = verdict(shared, "books/web-7b4f-a")
    assert found["allowed"] is False
    assert {(b["kind"], b["name"]) for b in found["blockingPolicies"]} == {
        ("Server", "api-http"), ("AuthorizationPolicy", "api-from-web")}
    path = found["decisions"][1]["path"]
    assert "[Linkerd] Deny: Server api-http" in path
    assert "storefront.books.serviceaccount.identity.linkerd.cluster.local" in path


async def test_the_readme_describes_the_linkerd_namespace() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("#### The demo's Linkerd namespace\n", 1)[1].split("\n#", 1)[0]
    assert "books/api" in section
    assert "api-from-web" in section
