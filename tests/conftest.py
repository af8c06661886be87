"""Shared fixtures: building graphs from YAML text and locating the shared corpus."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from netsight.graph.loading import load_manifests
from netsight.graph.store import GraphStore, Source

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
CONFORMANCE = SHARED / "conformance"


def store_from_yaml(text: str, source: Source = Source.MANIFESTS) -> GraphStore:
    store = GraphStore(source=source, cluster_name="test")
    load_manifests(store, ["-"], stdin=io.StringIO(text))
    return store


@pytest.fixture
def examples_dir() -> Path:
    return ROOT / "examples"
