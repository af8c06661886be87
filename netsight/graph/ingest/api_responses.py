"""The API server's answers as the informers act on them: HTTP statuses and ERROR events
become a small set of errors, handled in one place (the informer loop)."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any, Protocol

import aiohttp
import orjson


class Gone(Exception):
    """410: the resourceVersion (or continue token) is too old; re-list."""


class Forbidden(Exception):
    """403: RBAC does not let netsight list or watch this kind."""


class NotServed(Exception):
    """404: the API server no longer serves this kind (its CRD was deleted)."""


class TooLargeResourceVersion(Exception):
    """504 "Too large resource version": the API server's storage has not reached the
    resourceVersion asked for. One the informer saw there went back (etcd restored from a
    backup, another cluster at the same address): what the graph holds may be gone, and a
    watch from that version would be accepted and silent. Re-list (client-go's reflector
    does too)."""


class Transient(Exception):
    """5xx, 429 or an unreadable answer: retry after a backoff."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class Stalled(Transient):
    """A watch stream sent nothing for longer than its server lets a healthy one be silent."""


# What ends a list or a watch that a retry after a backoff may get past: the answers above,
# a dropped or refused connection, a timeout, a body that is not JSON.
RETRYABLE = (Transient, aiohttp.ClientError, TimeoutError, OSError, orjson.JSONDecodeError)


class Response(Protocol):
    """The part of an aiohttp response the informers use."""

    status: int
    content: aiohttp.StreamReader

    @property
    def headers(self) -> Mapping[str, str]: ...

    async def read(self) -> bytes: ...

    def release(self) -> Any: ...


class Transport(Protocol):
    """GET a path with query parameters and hand back the raw, unread response."""

    async def get(self, path: str, params: list[tuple[str, str]], *,
                  accept: str | None = None) -> Response: ...


def check_response(response: Response, body: bytes | None = None) -> None:
    status = response.status
    if 200 <= status < 300:
        return
    details = _status_of(body)
    message = str(details.get("message") or f"HTTP {status}")
    if status == 410:
        raise Gone(message)
    if status == 504 and too_large(details):
        raise TooLargeResourceVersion(message)
    if status == 403:
        raise Forbidden(message)
    if status == 404:
        raise NotServed(message)
    retry_after = response.headers.get("Retry-After")
    raise Transient(f"HTTP {status}: {message}",
                    float(retry_after) if retry_after and retry_after.isdigit() else None)


def _status_of(body: bytes | None) -> Mapping[str, Any]:
    """The Status object an error answer carries, or {} if it is not one."""
    with contextlib.suppress(orjson.JSONDecodeError):
        status = orjson.loads(body or b"null")
        if isinstance(status, dict):
            return status
    return {}


def too_large(status: Mapping[str, Any]) -> bool:
    """Whether a Status is "Too large resource version" (apimachinery's
    IsTooLargeResourceVersion: reason Timeout with the cause ResourceVersionTooLarge)."""
    details = status.get("details")
    causes = details.get("causes") if isinstance(details, dict) else None
    return status.get("reason") == "Timeout" and isinstance(causes, list) and any(
        isinstance(c, dict) and c.get("reason") == "ResourceVersionTooLarge" for c in causes)


def raise_on_error(event: Mapping[str, Any]) -> None:
    """An ERROR event ends the stream: 410 (or a version the server has not reached) means
    re-list, anything else retry."""
    if event.get("type") != "ERROR":
        return
    obj = event.get("object") or {}
    if obj.get("code") == 410:
        raise Gone(str(obj.get("message")))
    if too_large(obj):
        raise TooLargeResourceVersion(str(obj.get("message")))
    raise Transient(f"watch error {obj.get('code')}: {obj.get('message')}")


async def get_json(transport: Transport, path: str,
                    params: list[tuple[str, str]] | None = None, *,
                    accept: str | None = None) -> dict[str, Any]:
    response = await transport.get(path, params or [], accept=accept)
    try:
        body = await response.read()
    finally:
        response.release()
    check_response(response, body)
    data: dict[str, Any] = orjson.loads(body)
    return data
