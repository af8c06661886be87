"""The simulator answers TokenReview and SubjectAccessReview as the API server does, from a
policy set in-process or over ``POST /sim/access``; the reviews need the requester's own
token and RBAC. (kubectl cannot create them here: client-go sends no bearer token over the
simulator's plain HTTP.)"""

from __future__ import annotations

from typing import Any

import aiohttp
import orjson
import pytest

from netsight.sim.access import AUTHENTICATED, SERVICE_ACCOUNT, SERVICE_ACCOUNT_TOKEN
from netsight.sim.apiserver import SimServer

pytestmark = pytest.mark.anyio

TOKEN_REVIEWS = "/apis/authentication.k8s.io/v1/tokenreviews"
ACCESS_REVIEWS = "/apis/authorization.k8s.io/v1/subjectaccessreviews"
NETSIGHT = {"Authorization": f"Bearer {SERVICE_ACCOUNT_TOKEN}"}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def token_review(token: str) -> dict[str, Any]:
    return {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview",
            "spec": {"token": token}}


def access_review(user: str, verb: str, resource: str, namespace: str = "",
                  groups: list[str] | None = None) -> dict[str, Any]:
    return {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
            "spec": {"user": user, "groups": groups or [], "resourceAttributes": {
                "verb": verb, "resource": resource, "group": "", "namespace": namespace}}}


async def post(http: aiohttp.ClientSession, url: str, body: dict[str, Any],
               headers: dict[str, str] | None = None) -> tuple[int, dict[str, Any]]:
    async with http.post(url, data=orjson.dumps(body),
                         headers={"Content-Type": "application/json", **(headers or {})}
                         ) as response:
        return response.status, orjson.loads(await response.read())


def control(sim: SimServer) -> dict[str, str]:
    return {"Authorization": f"Bearer {sim.control_token}"}


async def configure(http: aiohttp.ClientSession, sim: SimServer, body: dict[str, Any]) -> int:
    async with http.post(sim.url + "/sim/access", data=orjson.dumps(body),
                         headers=control(sim)) as response:
        return response.status


async def test_token_review_names_the_user_and_groups() -> None:
    async with SimServer() as sim, aiohttp.ClientSession() as http:
        sim.access.add_token("alice-token", "alice", groups=["team-shop"])
        status, answer = await post(http, sim.url + TOKEN_REVIEWS, token_review("alice-token"),
                                    NETSIGHT)
        assert status == 201
        assert answer["kind"] == "TokenReview"
        assert answer["status"]["authenticated"] is True
        assert answer["status"]["user"]["username"] == "alice"
        assert answer["status"]["user"]["groups"] == ["team-shop", AUTHENTICATED]

        status, answer = await post(http, sim.url + TOKEN_REVIEWS, token_review("guess"),
                                    NETSIGHT)
        assert status == 201
        assert answer["status"]["authenticated"] is False
        assert "user" not in answer["status"] or not answer["status"]["user"]

        status, answer = await post(http, sim.url + TOKEN_REVIEWS, token_review(""), NETSIGHT)
        assert (status, answer["reason"]) == (422, "Invalid")


async def test_access_review_follows_the_rules() -> None:
    async with SimServer() as sim, aiohttp.ClientSession() as http:
        sim.access.allow(user="alice", verbs=["list", "get"], resources=["pods"],
                         namespaces=["shop"])
        sim.access.allow(group="sre", verbs=["*"], resources=["*"])

        async def allowed(review: dict[str, Any]) -> bool:
            status, answer = await post(http, sim.url + ACCESS_REVIEWS, review, NETSIGHT)
            assert status == 201, answer
            assert answer["kind"] == "SubjectAccessReview"
            return bool(answer["status"]["allowed"])

        assert await allowed(access_review("alice", "list", "pods", "shop"))
        assert not await allowed(access_review("alice", "list", "pods", "pay"))
        assert not await allowed(access_review("alice", "list", "pods"))  # all namespaces
        assert not await allowed(access_review("alice", "delete", "pods", "shop"))
        assert not await allowed(access_review("alice", "list", "services", "shop"))
        assert await allowed(access_review("bob", "list", "pods", groups=["sre"]))
        assert await allowed(access_review("root", "delete", "nodes",
                                           groups=["system:masters"]))
        _, answer = await post(http, sim.url + ACCESS_REVIEWS,
                               access_review("alice", "list", "pods", "shop"), NETSIGHT)
        assert "alice" in answer["status"]["reason"]

        nobody = access_review("", "list", "pods", "shop")
        status, answer = await post(http, sim.url + ACCESS_REVIEWS, nobody, NETSIGHT)
        assert (status, answer["reason"]) == (422, "Invalid")


async def test_reviews_need_the_requesters_own_token_and_rbac() -> None:
    async with SimServer() as sim, aiohttp.ClientSession() as http:
        sim.access.add_token("alice-token", "alice")
        review = token_review("alice-token")
        status, answer = await post(http, sim.url + TOKEN_REVIEWS, review)
        assert (status, answer["reason"]) == (401, "Unauthorized")
        status, answer = await post(http, sim.url + TOKEN_REVIEWS, review,
                                    {"Authorization": "Bearer wrong"})
        assert status == 401
        # alice is someone, but may not review tokens.
        status, answer = await post(http, sim.url + TOKEN_REVIEWS, review,
                                    {"Authorization": "Bearer alice-token"})
        assert (status, answer["reason"]) == (403, "Forbidden")
        assert 'User "alice" cannot create resource "tokenreviews"' in answer["message"]
        status, _ = await post(http, sim.url + ACCESS_REVIEWS,
                               access_review("alice", "list", "pods", "shop"),
                               {"Authorization": "Bearer alice-token"})
        assert status == 403
        status, _ = await post(http, sim.url + TOKEN_REVIEWS, review, NETSIGHT)
        assert status == 201


async def test_the_policy_is_set_over_http_too() -> None:
    async with SimServer() as sim, aiohttp.ClientSession() as http:
        body = {"tokens": {"carol-token": {"username": "carol", "groups": ["team-pay"]}},
                "rules": [{"group": "team-pay", "verbs": ["list"], "resources": ["pods"],
                           "namespaces": ["pay"]}]}
        async with http.post(sim.url + "/sim/access", data=orjson.dumps(body),
                             headers=control(sim)) as response:
            assert response.status == 200
            assert b"carol-token" not in await response.read()
        _, answer = await post(http, sim.url + TOKEN_REVIEWS, token_review("carol-token"),
                               NETSIGHT)
        assert answer["status"]["user"]["username"] == "carol"
        _, answer = await post(http, sim.url + ACCESS_REVIEWS,
                               access_review("carol", "list", "pods", "pay", ["team-pay"]),
                               NETSIGHT)
        assert answer["status"]["allowed"] is True

        assert await configure(http, sim, {"revoke": ["carol-token"]}) == 200
        _, answer = await post(http, sim.url + TOKEN_REVIEWS, token_review("carol-token"),
                               NETSIGHT)
        assert answer["status"]["authenticated"] is False
        assert await configure(http, sim, {"reset": True}) == 200
        assert sim.access.authenticate(SERVICE_ACCOUNT_TOKEN) is not None
        assert sim.access.rules
        assert all(r.user == SERVICE_ACCOUNT for r in sim.access.rules)
        assert await configure(http, sim, {"rules": [{"verbs": ["get"]}]}) == 400
