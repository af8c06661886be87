"""A small cluster for the hostile-input tests: what a caller allowed only namespace "shop"
may read (``visible.yaml``), and objects of namespace "edge" they may not (``hidden.yaml``)."""

from __future__ import annotations

import functools
from pathlib import Path

from netsight.graph.store.live import GraphView, Source
from tests.conftest import store_from_yaml

HERE = Path(__file__).parent
VISIBLE = (HERE / "visible.yaml").read_text()
HIDDEN = (HERE / "hidden.yaml").read_text()


@functools.cache
def visible_view() -> GraphView:
    """The visible objects alone, loaded once (the tests using it only read it)."""
    return store_from_yaml(VISIBLE, Source.CLUSTER).view()
