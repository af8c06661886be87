"""How the simulator shapes response bodies: metadata-only lists as client-go's metadata
informers ask for them, single-line streams, and slow bodies for the slow_body fault."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from netsight.sim.faults import Faults


def wants_metadata_only(accept: str | None) -> bool:
    """Whether an Accept header asks for PartialObjectMetadata(List), as client-go's
    metadata informers do (``application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1``)."""
    for media_range in (accept or "").split(","):
        params = dict(p.strip().partition("=")[::2] for p in media_range.split(";")[1:])
        if params.get("as", "").startswith("PartialObjectMetadata") \
                and params.get("g") == "meta.k8s.io":
            return True
    return False


def aggregated_discovery(accept: str | None) -> str | None:
    """The apidiscovery.k8s.io version (v2, v2beta1) of APIGroupDiscoveryList an Accept
    header asks for first, as kubectl and client-go send it; None: the plain lists."""
    for media_range in (accept or "").split(","):
        kind, *rest = media_range.split(";")
        params = dict(p.strip().partition("=")[::2] for p in rest)
        if kind.strip() == "application/json" and params.get("g") == "apidiscovery.k8s.io" \
                and params.get("as") == "APIGroupDiscoveryList" \
                and params.get("v") in ("v2", "v2beta1"):
            return params["v"]
    return None


async def once(line: bytes) -> AsyncIterator[bytes]:
    yield line


async def slowly(body: bytes, faults: Faults, piece: int = 16_384) -> AsyncIterator[bytes]:
    """``body`` a piece at a time, ``faults.slow_body`` seconds apart (read each time: the
    fault may end while a body is on its way)."""
    for start in range(0, len(body), piece):
        if faults.slow_body:
            await asyncio.sleep(faults.slow_body)
        yield body[start:start + piece]
