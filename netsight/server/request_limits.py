"""What a request may carry: whole numbers in its query and headers, and a bounded body.

``str.isdigit()`` accepts "²" (which ``int()`` refuses) and ``int()`` refuses more than
4,300 digits with a ValueError: both became a 500. A number here is a short run of ASCII
digits, anything else the caller's mistake (400). A body is refused by its Content-Length
before it is read, and while it streams (chunked, or no Content-Length), so no more than the
limit is ever held.
"""

from __future__ import annotations

import re

from starlette.requests import Request

from netsight.analyzers.core.contracts import ErrorCode
from netsight.server.http_errors import HttpFailure

MAX_DIGITS = 19  # a signed 64-bit integer's; a longer number is no count netsight keeps
_DIGITS = re.compile(f"[0-9]{{1,{MAX_DIGITS}}}")


def whole_number(text: str) -> int | None:
    """``text`` as a non-negative int when it is 1-19 ASCII digits; None otherwise."""
    return int(text) if _DIGITS.fullmatch(text) else None


class BodyTooLarge(HttpFailure):
    def __init__(self, limit: int) -> None:
        # 413 Content Too Large; the connection closes so the rest of the body is not read.
        super().__init__(ErrorCode.INVALID_INPUT, f"the body is over {limit} bytes",
                         status=413, headers={"Connection": "close"})


async def read_body(request: Request, limit: int) -> bytes:
    """The body of ``request``, at most ``limit`` bytes.

    Raises:
        BodyTooLarge: Content-Length says more, or the stream passes the limit.
    """
    declared = request.headers.get("content-length")
    if declared is not None:
        size = whole_number(declared.strip())
        if size is None or size > limit:
            raise BodyTooLarge(limit)
    body = bytearray()
    async for chunk in request.stream():
        if len(body) + len(chunk) > limit:
            raise BodyTooLarge(limit)
        body += chunk
    return bytes(body)
