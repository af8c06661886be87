"""Shared fixtures: building graphs from YAML text and locating the shared corpus."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from netsight.graph.ingest.manifests import load_manifests
from netsight.graph.store.live import GraphStore, Source

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
CONFORMANCE = SHARED / "conformance"
# Cases of the same four kinds (netpol, anp, gateway, istio), in the same format, written for
# this project from the upstream suites the shared corpus comes from: each expected.json's
# "source" names the upstream test it follows. The corpus tests run them beside the shared ones.
OWN_CORPUS = ROOT / "tests" / "corpus"
# The shared corpus sits beside the clone, not in it: on a bare clone its tests skip, saying so.
needs_shared_corpus = pytest.mark.skipif(
    not CONFORMANCE.is_dir(),
    reason=f"shared conformance corpus not found at {CONFORMANCE} (a bare clone); "
           "its cases run where ../shared/conformance exists, tests/corpus always runs")


def corpus_cases(*kinds: str) -> list[Path]:
    """The case folders of the given kinds, the shared corpus's and this project's own."""
    return sorted(p.parent for root in (CONFORMANCE, OWN_CORPUS) for kind in kinds
                  for p in (root / kind).glob("*/expected.json"))


def corpus_name(case: Path) -> str:
    """``kind/name`` of a case folder, whichever corpus holds it."""
    return f"{case.parent.name}/{case.name}"


def corpus_id(case: Path) -> str:
    """A test id telling the two corpora apart: ``shared:kind/name`` or ``own:kind/name``."""
    origin = "shared" if case.is_relative_to(CONFORMANCE) else "own"
    return f"{origin}:{corpus_name(case)}"

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
