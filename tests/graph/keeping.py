"""The collector's keeper running for the length of a block, as the informers run it."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest

from netsight.graph.runtime.collector import keep_collections_young


@contextlib.asynccontextmanager
async def keeper(**settings: Any) -> AsyncIterator[None]:
    """``keep_collections_young(**settings)``, started (its thresholds set, RSS read) when
    the block begins and cancelled when it ends."""
    task = asyncio.create_task(keep_collections_young(**settings))
    await asyncio.sleep(0)
    try:
        yield
    finally:
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
