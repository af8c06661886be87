"""DNS-rebinding protection for a server listening on loopback.

A web page on any site can make the browser resolve a name it controls to 127.0.0.1 and
then read a workstation's netsight (the whole cluster's topology) as same-origin. The SDK
guards ``/mcp`` that way; this guards every route: on loopback, a request must name a
loopback host in ``Host`` and, when the browser sends one, in ``Origin``.
"""

from __future__ import annotations

from urllib.parse import urlsplit

import orjson
from starlette.types import ASGIApp, Receive, Scope, Send

LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "::1"})


def hostname(value: str) -> str:
    """The host of a ``Host`` header value (``[::1]:8080`` -> ``::1``)."""
    if value.startswith("["):
        return value[1:value.find("]")] if "]" in value else value
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


class LoopbackOnly:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]
                       if k in (b"host", b"origin")}
            host = hostname(headers.get("host", "")).lower()
            origin = headers.get("origin")
            origin_host = (urlsplit(origin).hostname or "") if origin else None
            if host not in LOOPBACK_NAMES or (
                    origin_host is not None and origin_host not in LOOPBACK_NAMES):
                body = orjson.dumps({
                    "code": "FORBIDDEN", "tool": None,
                    "message": "this netsight listens on loopback and answers only requests "
                               "addressed to 127.0.0.1, localhost or [::1] (DNS-rebinding "
                               "protection); listen on another address with --host and auth"})
                await send({"type": "http.response.start", "status": 403, "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode())]})
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)
