"""Stateless pagination: an opaque cursor holds the offset and which query it belongs to."""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Sequence
from typing import TypeVar

import orjson

from netsight.analyzers.core.contracts import ErrorCode, Page, ToolFailure

T = TypeVar("T")


def query_fingerprint(*parts: object) -> str:
    try:
        data = orjson.dumps(parts, default=str)
    except TypeError:  # a lone surrogate ("\ud800") in an argument, which orjson refuses
        data = json.dumps(parts, default=str).encode()
    return hashlib.blake2s(data, digest_size=6).hexdigest()


def encode_cursor(offset: int, fingerprint: str) -> str:
    return base64.urlsafe_b64encode(orjson.dumps({"o": offset, "q": fingerprint})).decode()


def decode_cursor(cursor: str | None, fingerprint: str, *, tool: str) -> int:
    if cursor is None:
        return 0
    try:
        data = orjson.loads(base64.urlsafe_b64decode(cursor.encode()))
        offset, owner = int(data["o"]), data["q"]
    except (ValueError, KeyError, TypeError, orjson.JSONDecodeError):
        raise ToolFailure(
            ErrorCode.INVALID_INPUT,
            "cursor: not a cursor netsight issued; pass the nextCursor of a previous "
            "answer, or omit it to start from the beginning",
            tool=tool,
        ) from None
    if owner != fingerprint or offset < 0:
        raise ToolFailure(
            ErrorCode.INVALID_INPUT,
            "cursor: it belongs to a query with other arguments; repeat the same "
            "arguments with it, or omit it to start again",
            tool=tool,
        )
    return offset


def paginate(
    items: Sequence[T], *, limit: int, cursor: str | None, fingerprint: str, tool: str
) -> tuple[list[T], Page]:
    offset = decode_cursor(cursor, fingerprint, tool=tool)
    chunk = list(items[offset : offset + limit])
    end = offset + len(chunk)
    remaining = max(len(items) - end, 0)
    return chunk, Page(
        total=len(items),
        returned=len(chunk),
        remaining=remaining,
        next_cursor=encode_cursor(end, fingerprint) if remaining else None,
    )
