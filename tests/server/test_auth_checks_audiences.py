"""Token audiences (``--auth-audience``): netsight asks TokenReview about the audiences it is
configured with and accepts only tokens issued for one of them; without any, the API server
checks its own audience, so a token minted for netsight alone is refused. The simulator's
TokenReview answers audiences as the API server does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import aiohttp
import pytest

from netsight.server.auth import TOKEN_REVIEWS
from netsight.sim.access import API_AUDIENCES, SERVICE_ACCOUNT_TOKEN
from netsight.sim.apiserver import SimServer
from tests.server.authenticated import ADMIN, bearer, grant_demo_callers, serving_with_auth
from tests.server.conftest import Served

pytestmark = pytest.mark.anyio

FOR_NETSIGHT = "netsight-audience-token-0123"  # a projected token with audience "netsight"
FOR_BOTH = "both-audiences-token-4567"


def issue_audience_tokens(sim: SimServer) -> None:
    grant_demo_callers(sim)  # ADMIN: an ordinary token, for the API server's audience
    sim.access.add_token(FOR_NETSIGHT, "agent", groups=["sre"], audiences=["netsight"])
    sim.access.add_token(FOR_BOTH, "agent2", groups=["sre"],
                         audiences=["netsight", *API_AUDIENCES])


async def token_review(sim: SimServer, spec: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    body = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": spec}
    async with aiohttp.ClientSession() as http, http.post(
            sim.url + TOKEN_REVIEWS, json=body, headers=bearer(SERVICE_ACCOUNT_TOKEN)) as answer:
        return answer.status, await answer.json()


async def graph_status(served: Served, token: str) -> int:
    async with aiohttp.ClientSession() as http, \
            http.get(f"{served.url}/api/graph", headers=bearer(token)) as response:
        return response.status


async def test_the_simulators_token_review_answers_the_intersection_of_audiences(
        sim: SimServer) -> None:
    issue_audience_tokens(sim)
    status, review = await token_review(sim, {"token": FOR_BOTH, "audiences": ["netsight",
                                                                               "other"]})
    assert status == 201
    assert review["status"]["authenticated"] is True
    assert review["status"]["audiences"] == ["netsight"]

    _, review = await token_review(sim, {"token": ADMIN, "audiences": ["netsight"]})
    assert review["status"]["authenticated"] is False
    assert "target audiences" in review["status"]["error"]

    _, review = await token_review(sim, {"token": FOR_NETSIGHT})  # the API server's audience
    assert review["status"]["authenticated"] is False
    _, review = await token_review(sim, {"token": ADMIN})
    assert review["status"]["audiences"] == list(API_AUDIENCES)

    status, _ = await token_review(sim, {"token": ADMIN, "audiences": "netsight"})
    assert status == 422


async def test_a_token_for_another_audience_is_no_credential_for_the_simulator(
        sim: SimServer) -> None:
    issue_audience_tokens(sim)
    sim.access.allow(user="agent", verbs=["create"], resources=["tokenreviews"])
    async with aiohttp.ClientSession() as http, http.post(
            sim.url + TOKEN_REVIEWS, headers=bearer(FOR_NETSIGHT),
            json={"kind": "TokenReview", "spec": {"token": ADMIN}}) as answer:
        assert answer.status == 401


async def test_with_an_audience_only_tokens_issued_for_it_are_accepted(
        sim: SimServer, tmp_path: Path) -> None:
    issue_audience_tokens(sim)
    async with serving_with_auth(sim, tmp_path, auth_audiences=("netsight",)) as served:
        assert await graph_status(served, FOR_NETSIGHT) == 200
        assert await graph_status(served, FOR_BOTH) == 200
        assert await graph_status(served, ADMIN) == 401  # an ordinary service account token


async def test_without_an_audience_the_api_servers_own_is_required(
        sim: SimServer, tmp_path: Path) -> None:
    issue_audience_tokens(sim)
    async with serving_with_auth(sim, tmp_path) as served:
        assert await graph_status(served, ADMIN) == 200
        assert await graph_status(served, FOR_NETSIGHT) == 401


async def test_a_review_answered_without_audiences_is_refused_when_one_is_required(
        sim: SimServer, tmp_path: Path) -> None:
    """An authenticator that ignores spec.audiences answers none: its "authenticated" vouches
    for the API server's audience, not netsight's."""
    issue_audience_tokens(sim)
    async with aiohttp.ClientSession() as http, \
            http.post(f"{sim.url}/sim/access", json={"audienceAware": False},
                      headers=bearer(str(sim.control_token))) as answer:
        assert answer.status == 200
    _, review = await token_review(sim, {"token": ADMIN, "audiences": ["netsight"]})
    assert review["status"]["authenticated"] is True
    assert "audiences" not in review["status"]
    async with serving_with_auth(sim, tmp_path, auth_audiences=("netsight",)) as served:
        assert await graph_status(served, ADMIN) == 401
