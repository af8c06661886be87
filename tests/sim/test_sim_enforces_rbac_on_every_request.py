"""With enforcement on, the simulator authenticates and authorizes every request as
kube-apiserver does: 401 for an unknown token, 403 in the API server's words for what the
token's rules do not allow (watch is its own verb), discovery for any authenticated user,
and every decision kept."""

from __future__ import annotations

from typing import Any

import aiohttp
import orjson
import pytest

from netsight.sim.access import SERVICE_ACCOUNT_TOKEN
from netsight.sim.apiserver import SimServer

pytestmark = pytest.mark.anyio

TEAM = "system:serviceaccount:a:team"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def get(http: aiohttp.ClientSession, url: str, token: str | None = None,
              **params: str) -> tuple[int, dict[str, Any]]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with http.get(url, params=params, headers=headers) as response:
        body = await response.read()
        if params.get("watch"):
            return response.status, orjson.loads(body.splitlines()[0]) if body else {}
        return response.status, orjson.loads(body)


async def team_cluster(sim: SimServer, http: aiohttp.ClientSession) -> None:
    """Namespaces a and b, and a token that may list (not watch) pods in a only."""
    for name in ("a", "b"):
        await http.post(sim.url + "/api/v1/namespaces", data=orjson.dumps(
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}),
            headers={"Content-Type": "application/json"})
    async with http.post(sim.url + "/sim/access", headers={
            "Authorization": f"Bearer {sim.control_token}"}, data=orjson.dumps({
            "enforce": True, "tokens": {"team-token": {"username": TEAM}},
            "rules": [{"user": TEAM, "verbs": ["get", "list"], "resources": ["pods"],
                       "namespaces": ["a"]},
                      {"user": TEAM, "verbs": ["list"], "resources": ["networkpolicies"],
                       "apiGroups": ["networking.k8s.io"], "namespaces": ["a"]}]})) as done:
        assert (await done.json())["enforce"] is True


async def test_off_by_default_the_simulator_serves_everyone() -> None:
    async with SimServer() as sim, aiohttp.ClientSession() as http:
        status, _ = await get(http, sim.url + "/api/v1/pods")
        assert status == 200
        assert not sim.access.decisions


async def test_unknown_tokens_get_401_and_anonymous_callers_only_public_paths() -> None:
    async with SimServer() as sim, aiohttp.ClientSession() as http:
        await team_cluster(sim, http)
        status, body = await get(http, sim.url + "/api/v1/pods", "no-such-token")
        assert (status, body) == (401, {
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "Unauthorized", "reason": "Unauthorized", "code": 401})
        assert (await get(http, sim.url + "/version"))[0] == 200
        status, body = await get(http, sim.url + "/api/v1")
        assert status == 403
        assert body["message"] == 'forbidden: User "system:anonymous" cannot get path "/api/v1"'
        status, body = await get(http, sim.url + "/api/v1/namespaces/a/pods")
        assert body["message"] == ('pods is forbidden: User "system:anonymous" cannot list '
                                   'resource "pods" in API group "" in the namespace "a"')


async def test_a_namespaced_grant_reaches_its_namespace_and_verbs_only() -> None:
    async with SimServer() as sim, aiohttp.ClientSession() as http:
        await team_cluster(sim, http)
        url, token = sim.url, "team-token"
        for path in ("/api", "/api/v1", "/apis", "/apis/networking.k8s.io/v1"):
            assert (await get(http, url + path, token))[0] == 200, path
        assert (await get(http, url + "/api/v1/namespaces/a/pods", token))[0] == 200
        refused = {
            "/api/v1/namespaces/b/pods": 'pods is forbidden: User "system:serviceaccount:a:'
            'team" cannot list resource "pods" in API group "" in the namespace "b"',
            "/api/v1/pods": 'pods is forbidden: User "system:serviceaccount:a:team" cannot '
            'list resource "pods" in API group "" at the cluster scope',
            "/api/v1/namespaces": 'namespaces is forbidden: User "system:serviceaccount:a:'
            'team" cannot list resource "namespaces" in API group "" at the cluster scope',
            "/api/v1/namespaces/a": 'namespaces "a" is forbidden: User "system:serviceaccount'
            ':a:team" cannot get resource "namespaces" in API group "" in the namespace "a"',
            "/apis/networking.k8s.io/v1/namespaces/b/networkpolicies":
                'networkpolicies.networking.k8s.io is forbidden: User "system:serviceaccount:'
                'a:team" cannot list resource "networkpolicies" in API group '
                '"networking.k8s.io" in the namespace "b"',
            "/api/v1/namespaces/a/pods/p/log": 'pods "p" is forbidden: User "system:service'
            'account:a:team" cannot get resource "pods/log" in API group "" in the '
            'namespace "a"',
        }
        for path, message in refused.items():
            status, body = await get(http, url + path, token)
            assert (status, body["reason"], body["message"]) == (403, "Forbidden", message)
        status, body = await get(http, url + "/api/v1/namespaces/a/pods", token, watch="1")
        assert status == 403
        assert "cannot watch resource" in body["message"]
        assert body["details"] == {"kind": "pods"}
        seen = [(d.verb, d.resource, d.namespace, d.allowed) for d in sim.access.decisions
                if d.user == TEAM and d.resource.startswith("pods")]
        assert seen == [("list", "pods", "a", True), ("list", "pods", "b", False),
                        ("list", "pods", "", False), ("get", "pods/log", "a", False),
                        ("watch", "pods", "a", False)]


async def test_writes_are_authorized_by_their_verb() -> None:
    async with SimServer() as sim, aiohttp.ClientSession() as http:
        await team_cluster(sim, http)
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}}
        async with http.post(sim.url + "/api/v1/namespaces/a/pods", data=orjson.dumps(pod),
                             headers={"Authorization": "Bearer team-token"}) as response:
            assert response.status == 403
            assert "cannot create resource" in (await response.json())["message"]
        # netsight's own service account keeps reading everything, and nothing else.
        assert (await get(http, sim.url + "/api/v1/pods", SERVICE_ACCOUNT_TOKEN))[0] == 200
        async with http.delete(sim.url + "/api/v1/namespaces/b",
                               headers={"Authorization": f"Bearer {SERVICE_ACCOUNT_TOKEN}"}
                               ) as response:
            assert response.status == 403
            assert 'namespaces "b" is forbidden' in (await response.json())["message"]
