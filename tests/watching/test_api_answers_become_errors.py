"""What the informers make of the API server's error answers: 504 "Too large resource
version" (as the simulator sends it, and as apimachinery recognises it) means re-list; a
504 without that cause is an ordinary timeout, to retry."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson
import pytest

from netsight.graph.ingest.api_responses import (
    Gone,
    TooLargeResourceVersion,
    Transient,
    check_response,
    raise_on_error,
)
from netsight.sim.state import ApiError, too_large


class Answer:
    def __init__(self, status: int, headers: Mapping[str, str] | None = None) -> None:
        self.status, self.headers = status, headers or {}


def body(error: ApiError) -> bytes:
    return orjson.dumps(error.status())


@pytest.mark.parametrize("retry", [0, 1])
def test_too_large_resource_version_means_relist(retry: int) -> None:
    error = too_large(12, 7, retry)
    with pytest.raises(TooLargeResourceVersion, match="Too large resource version: 12"):
        check_response(Answer(504), body(error))
    with pytest.raises(TooLargeResourceVersion):
        raise_on_error({"type": "ERROR", "object": error.status()})


@pytest.mark.parametrize("status", [
    ApiError(504, "Timeout", "Timeout: request did not complete").status(),
    {**too_large(12, 7).status(), "reason": "InternalError"},
    {**too_large(12, 7).status(), "details": {"causes": "ResourceVersionTooLarge"}},
])
def test_other_timeouts_are_retried(status: dict[str, Any]) -> None:
    with pytest.raises(Transient):
        check_response(Answer(504), orjson.dumps(status))


def test_gone_is_still_gone() -> None:
    with pytest.raises(Gone):
        check_response(Answer(410), body(ApiError(410, "Expired", "too old")))
    with pytest.raises(Transient, match="HTTP 500"):
        check_response(Answer(500), b"not json")
