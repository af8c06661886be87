"""``netsight serve`` takes its synced graph out of the cyclic collector's reach.

Without ``gc.freeze()`` after the initial lists, a full collection rescans the whole graph,
on the event loop, whenever a call allocates enough to set one off: at 100k pods that holds
every caller (and ``/healthz``) for longer than ``TOOL_TIMEOUT``.
"""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from netsight.sim.apiserver import SimServer
from tests.server.conftest import eventually, serving

pytestmark = pytest.mark.anyio


async def test_the_graph_is_frozen_once_the_informers_synced(sim: SimServer,
                                                             tmp_path: Path) -> None:
    gc.unfreeze()  # whatever earlier tests froze
    assert gc.get_freeze_count() == 0
    async with serving(sim, tmp_path) as served:
        assert served.graph.watcher is not None
        await eventually(lambda: gc.get_freeze_count() > 0, timeout=5)
        assert gc.isenabled()
