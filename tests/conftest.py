"""Shared fixtures: building graphs from YAML text and locating the shared corpus."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from netsight.graph.loading import load_manifests
from netsight.graph.store import GraphStore, Source

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
CONFORMANCE = SHARED / "conformance"

# Hypothesis profiles, stated here rather than taken from its built-ins. Each property test
# sets its own max_examples; a profile only decides what a run may depend on. Neither has a
# deadline: a per-example time limit is a timed assertion, and fails on a loaded machine.
# "ci" (chosen when CI is set, as .ci/run's CI does) is derandomized, so a failure there
# reproduces with the same examples, and keeps no example database on a fresh clone.
settings.register_profile("dev", deadline=None)
settings.register_profile("ci", deadline=None, derandomize=True, database=None,
                          print_blob=True, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))


def store_from_yaml(text: str, source: Source = Source.MANIFESTS) -> GraphStore:
    store = GraphStore(source=source, cluster_name="test")
    load_manifests(store, ["-"], stdin=io.StringIO(text))
    return store


@pytest.fixture
def examples_dir() -> Path:
    return ROOT / "examples"
