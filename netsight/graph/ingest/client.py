"""The connection to a real (or simulated) API server, through kubernetes-asyncio.

kubernetes-asyncio handles configuration: kubeconfig contexts, in-cluster service account
tokens, client certificates, exec credential plugins and TLS. Requests go out raw and
bodies come back unread, for the informers to parse with orjson.
"""

from __future__ import annotations

import os
from typing import Any

import aiohttp
from kubernetes_asyncio import client, config

from netsight.graph.ingest.api_responses import Response

# No total timeout: a watch legitimately stays open for minutes. The informers enforce an
# inactivity timeout on the stream instead; connecting must still be quick.
_TIMEOUT = aiohttp.ClientTimeout(total=None, connect=15, sock_connect=15)
_READ_TIMEOUT = aiohttp.ClientTimeout(total=None, connect=15, sock_connect=15, sock_read=60)
# A single request/answer (TokenReview, SubjectAccessReview, probe pods): an API server that
# accepts the connection and then hangs must not hold a caller's request forever.
_REQUEST_TIMEOUT = aiohttp.ClientTimeout(total=15, connect=5, sock_connect=5)


class KubeTransport:
    def __init__(self, api: client.ApiClient) -> None:
        self.api = api

    @classmethod
    async def connect(cls, kubeconfig: str | None = None, context: str | None = None, *,
                      connections: int = 100) -> KubeTransport:
        """In-cluster configuration inside a pod (unless a kubeconfig is named), else the
        kubeconfig (``--kubeconfig``, ``$KUBECONFIG`` or ``~/.kube/config``); at most
        ``connections`` open to the API server at once (every watch holds one)."""
        configuration = client.Configuration()
        configuration.connection_pool_maxsize = connections
        if kubeconfig is None and context is None and os.environ.get(
                "KUBERNETES_SERVICE_HOST"):
            config.load_incluster_config(  # type: ignore[no-untyped-call]
                client_configuration=configuration)
        else:
            await config.load_kube_config(config_file=kubeconfig, context=context,
                                          client_configuration=configuration)
        return cls(client.ApiClient(configuration))

    @property
    def host(self) -> str:
        return str(self.api.configuration.host)

    async def get(self, path: str, params: list[tuple[str, str]], *,
                  accept: str | None = None) -> Response:
        watch = any(key == "watch" for key, _ in params)
        response: Response = await self.api.call_api(
            path, "GET", query_params=params, _preload_content=False,
            header_params={"Accept": accept} if accept else None,
            auth_settings=["BearerToken"],
            # A list or discovery answer must keep coming; a watch may be silent for a while
            # and has the informer's inactivity timeout instead.
            _request_timeout=_TIMEOUT if watch else _READ_TIMEOUT,
        )
        self._forget_last_response()
        return response

    async def request(self, method: str, path: str, body: Any = None,
                      params: list[tuple[str, str]] | None = None, *,
                      content_type: str = "application/json") -> Response:
        response: Response = await self.api.call_api(
            path, method, query_params=params or [], body=body,
            header_params={"Content-Type": content_type, "Accept": "application/json"},
            _preload_content=False, auth_settings=["BearerToken"],
            _request_timeout=_REQUEST_TIMEOUT,
        )
        self._forget_last_response()
        return response

    def _forget_last_response(self) -> None:
        # The generated ApiClient keeps its last response, and with it the body once read
        # (a list page: megabytes), until the next call; the caller holds what it needs.
        self.api.last_response = None  # type: ignore[attr-defined]  # set by call_api

    async def close(self) -> None:
        await self.api.close()
