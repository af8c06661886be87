"""ToolError JSON as an HTTP answer: one status per error code, and the failures that carry
their own status (a body too large, an access check that could not be made, shutdown)."""

from __future__ import annotations

from collections.abc import Mapping

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from netsight.analyzers.core.contracts import ErrorCode, ToolError, ToolFailure

STATUS = {ErrorCode.INVALID_INPUT: 400, ErrorCode.NOT_FOUND: 404, ErrorCode.FORBIDDEN: 403,
          ErrorCode.AUTH_FAILED: 401, ErrorCode.CRD_NOT_AVAILABLE: 404,
          ErrorCode.PROVIDER_NOT_FOUND: 404, ErrorCode.PROBE_TIMEOUT: 504,
          ErrorCode.PROBE_LIMIT_REACHED: 429, ErrorCode.INTERNAL_ERROR: 500}


class HttpFailure(ToolFailure):
    """A ToolFailure whose HTTP status is not its code's: 413 for a body too large, 503 for
    what a retry shortly may answer. Over MCP it is a ToolError like any other."""

    def __init__(self, code: ErrorCode, message: str, *, status: int,
                 headers: Mapping[str, str] | None = None, tool: str = "") -> None:
        super().__init__(code, message, tool=tool)
        self.status, self.headers = status, dict(headers or {})


def failure_response(exc: ToolFailure, endpoint: str) -> JSONResponse:
    """``exc`` as its ToolError JSON, with the status its code (or the failure) calls for."""
    error = ToolError(code=exc.code, message=exc.message, tool=exc.tool or endpoint,
                      detail=exc.detail)
    if isinstance(exc, HttpFailure):
        return JSONResponse(error.model_dump(mode="json"), status_code=exc.status,
                            headers=exc.headers)
    return JSONResponse(error.model_dump(mode="json"), status_code=STATUS.get(exc.code, 500))


async def http_failure_handler(request: Request, exc: Exception) -> Response:
    """Starlette's handler for an HttpFailure an endpoint did not catch itself."""
    assert isinstance(exc, HttpFailure)
    return failure_response(exc, request.url.path)
