"""Lists as kube-apiserver serves them: pages of a consistent snapshot (``limit`` and
``continue``), read at the resourceVersion that ``resourceVersion`` and
``resourceVersionMatch`` ask for."""

from __future__ import annotations

import asyncio
import base64
import itertools
import time
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from netsight.sim.resources import ResourceType
from netsight.sim.selection import Selection
from netsight.sim.state import META_V1, ApiError, Obj, SimState, partial_metadata, too_large

NOT_OLDER_THAN, EXACT = "NotOlderThan", "Exact"


@dataclass
class Snapshot:
    rv: int
    items: list[Obj]
    created: float = field(default_factory=time.monotonic)


def _invalid(message: str) -> ApiError:
    return ApiError(422, "Invalid", f'ListOptions.meta.k8s.io "" is invalid: {message}')


class Lists:
    """Answers list requests over a :class:`SimState`, keeping the snapshots that its
    continue tokens page through."""

    def __init__(self, state: SimState, *, snapshot_ttl: float, too_large_wait: float) -> None:
        self.state = state
        self.snapshot_ttl = snapshot_ttl  # how long a continue token stays valid
        self.too_large_wait = too_large_wait
        self._snapshots: OrderedDict[str, Snapshot] = OrderedDict()
        self._ids = itertools.count(1)

    def forget(self) -> None:
        """Drop every snapshot: a restarted server honours no continue token."""
        self._snapshots.clear()

    async def answer(self, rtype: ResourceType, selection: Selection,
                     params: Mapping[str, str], metadata_only: bool = False) -> Obj:
        """The body of one list page."""
        limit, cont = params.get("limit"), params.get("continue")
        try:
            size = int(limit) if limit else 0
        except ValueError:
            raise ApiError(400, "BadRequest", f"invalid limit {limit!r}") from None
        if cont:
            snapshot, snapshot_id, offset = self._continued(cont, params)
        else:
            rv, items = await self._read(rtype, selection, params, paged=size > 0)
            snapshot, snapshot_id, offset = Snapshot(rv, items), "", 0
        end = len(snapshot.items) if size <= 0 else offset + size
        page = snapshot.items[offset:end]
        metadata: dict[str, Any] = {"resourceVersion": str(snapshot.rv)}
        if end < len(snapshot.items):
            if not snapshot_id:
                snapshot_id = str(next(self._ids))
                self._snapshots[snapshot_id] = snapshot
                while len(self._snapshots) > 64:
                    self._snapshots.popitem(last=False)
            metadata["continue"] = base64.urlsafe_b64encode(
                orjson.dumps([snapshot_id, end])).decode()
            metadata["remainingItemCount"] = len(snapshot.items) - end
        elif snapshot_id:
            self._snapshots.pop(snapshot_id, None)
        if metadata_only:
            return {"kind": "PartialObjectMetadataList", "apiVersion": META_V1,
                    "metadata": metadata, "items": [partial_metadata(o) for o in page]}
        return {
            "kind": rtype.list_kind, "apiVersion": rtype.api_version, "metadata": metadata,
            # The real server sends list items without kind and apiVersion.
            "items": [{k: v for k, v in o.items() if k != "kind" and k != "apiVersion"}
                      for o in page],
        }

    def _continued(self, token: str, params: Mapping[str, str]) -> tuple[Snapshot, str, int]:
        if params.get("resourceVersionMatch"):
            raise _invalid("resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden "
                           "when continue is provided")
        if params.get("resourceVersion") not in (None, "", "0"):
            raise ApiError(400, "BadRequest", "specifying resource version is not allowed "
                           "when using continue")
        try:
            snapshot_id, offset = orjson.loads(base64.urlsafe_b64decode(token.encode()))
            snapshot_id, offset = str(snapshot_id), int(offset)
        except (ValueError, TypeError, orjson.JSONDecodeError):
            raise ApiError(400, "BadRequest", "invalid continue token") from None
        snapshot = self._snapshots.get(snapshot_id)
        if snapshot is None or time.monotonic() - snapshot.created > self.snapshot_ttl:
            raise ApiError(410, "Expired", "The provided continue parameter is too old "
                           "to display a consistent list result. You can start a new list "
                           "without the continue parameter.")
        return snapshot, snapshot_id, offset

    async def _read(self, rtype: ResourceType, selection: Selection,
                    params: Mapping[str, str], *, paged: bool) -> tuple[int, list[Obj]]:
        """The objects at the resourceVersion asked for, and that resourceVersion.

        Unset: the most recent; "0": any (there is one here, the most recent). Another
        value with ``Exact`` — or with ``limit`` and no match, the legacy meaning — that
        version exactly; with ``NotOlderThan`` (or neither) at least that version. A version
        the storage has not reached is refused with 504 "Too large resource version": at
        once where kube-apiserver reads etcd (a paged or Exact read), after waiting for its
        watch cache to catch up otherwise.
        """
        version = params.get("resourceVersion") or ""
        match = params.get("resourceVersionMatch") or ""
        if match and match not in (NOT_OLDER_THAN, EXACT):
            raise _invalid(f'resourceVersionMatch: Unsupported value: "{match}": supported '
                           f'values: "{EXACT}", "{NOT_OLDER_THAN}"')
        if match and not version:
            raise _invalid("resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden "
                           "unless resourceVersion is provided")
        if match == EXACT and version == "0":
            raise _invalid('resourceVersionMatch: Forbidden: resourceVersionMatch "exact" is '
                           'forbidden for resourceVersion "0"')
        state = self.state
        if version in ("", "0"):
            return state.list(rtype, selection)
        try:
            wanted = int(version)
        except ValueError:
            raise ApiError(400, "BadRequest", f"invalid resource version: {version}") from None
        if match == EXACT or (not match and paged):
            return wanted, state.list_at(rtype, selection, wanted)
        from_etcd = paged
        if wanted > state.rv and not from_etcd:
            loop = asyncio.get_running_loop()
            deadline = loop.time() + self.too_large_wait
            while state.rv < wanted and loop.time() < deadline:
                await asyncio.sleep(0.02)
        if wanted > state.rv:
            raise too_large(wanted, state.rv, 0 if from_etcd else 1)
        return state.list(rtype, selection)
