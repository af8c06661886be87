"""The shared conformance corpus (upstream NetworkPolicy e2e and ANP/BANP conformance
expectations) answered through reachability_matrix, and query by query through
find_blocking_policies: every query must match.

Cases are read from ../shared/conformance at test time, never copied here; this project's own
cases of the same kinds (tests/corpus) run beside them.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from netsight.analyzers.core.calling import to_json
from netsight.analyzers.tools import call_tool
from netsight.cli import main
from netsight.graph.ingest.manifests import load_manifests
from netsight.graph.store.live import GraphStore, Source
from tests.conftest import CONFORMANCE, corpus_cases, corpus_id, needs_shared_corpus

CASES = corpus_cases("netpol", "anp")


def _queries(case: Path) -> list[dict[str, Any]]:
    queries: list[dict[str, Any]] = json.loads((case / "expected.json").read_text())["queries"]
    return queries


def _args(queries: list[dict[str, Any]]) -> dict[str, Any]:
    return {"ports": sorted({q["port"] for q in queries}),
            "protocols": sorted({q["protocol"] for q in queries})}


def _key(entry: dict[str, Any]) -> tuple[str, str, int, str]:
    return entry["from"], entry["to"], entry["port"], entry["protocol"]


def _all_entries(case: Path, args: dict[str, Any]) -> dict[tuple[str, str, int, str], Any]:
    """The whole matrix, following cursors the way a client would."""
    store = GraphStore(source=Source.MANIFESTS, cluster_name="conformance")
    load_manifests(store, [str(case / "manifests.yaml")])
    view = store.view()
    found: dict[tuple[str, str, int, str], Any] = {}
    cursor = None
    while True:
        page_args = {**args, "limit": 50, **({"cursor": cursor} if cursor else {})}
        answer = to_json(call_tool(view, "reachability_matrix", page_args), detail=False)
        found.update((_key(e), e["allowed"]) for e in answer["entries"])
        cursor = answer["page"].get("nextCursor")
        if cursor is None:
            return found


@needs_shared_corpus
def test_corpus_has_policy_cases() -> None:
    shared = [c for c in CASES if c.is_relative_to(CONFORMANCE)]
    names = {c.parent.name for c in shared}
    assert names == {"netpol", "anp"}, f"conformance corpus not found under {CONFORMANCE}"
    assert len(shared) >= 10


@pytest.mark.parametrize("case", CASES, ids=corpus_id)
def test_every_query_matches_upstream(case: Path) -> None:
    queries = _queries(case)
    entries = _all_entries(case, _args(queries))
    wrong = [(q, entries.get(_key(q), "missing")) for q in queries
             if entries.get(_key(q), "missing") != q["allowed"]]
    assert not wrong, "\n".join(f"{q} -> got {got}" for q, got in wrong)


@pytest.mark.parametrize("case", CASES, ids=corpus_id)
def test_find_blocking_policies_answers_every_query_alike(case: Path) -> None:
    # The per-pair tool takes its own path to a verdict (per-pod engine, not the matrix's
    # policy sets); upstream's answer must come out of it too.
    store = GraphStore(source=Source.MANIFESTS, cluster_name="conformance")
    load_manifests(store, [str(case / "manifests.yaml")])
    view = store.view()
    wrong = []
    for q in _queries(case):
        answer = to_json(call_tool(view, "find_blocking_policies", {
            "source": q["from"], "destination": q["to"], "port": q["port"],
            "protocol": q["protocol"]}), detail=False)
        if answer["allowed"] != q["allowed"]:
            wrong.append(f"{q} -> got {answer['allowed']}")
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("case", CASES, ids=corpus_id)
def test_the_cli_answers_a_case_whole(case: Path) -> None:
    queries = _queries(case)
    out = io.StringIO()
    code = main(["call", "reachability_matrix", "--manifests", str(case / "manifests.yaml"),
                 "--args", json.dumps(_args(queries))], stdout=out)
    assert code == 0
    answer = json.loads(out.getvalue())
    assert answer["page"]["remaining"] == 0  # the default page holds a conformance matrix
    entries = {_key(e): e["allowed"] for e in answer["entries"]}
    assert all(entries[_key(q)] == q["allowed"] for q in queries)


@needs_shared_corpus
def test_the_netsight_command_in_a_process() -> None:
    case = CONFORMANCE / "netpol" / "sctp-allow-not-tcp"
    queries = _queries(case)
    done = subprocess.run(
        [sys.executable, "-m", "netsight.cli", "call", "reachability_matrix",
         "--manifests", str(case / "manifests.yaml"), "--args", json.dumps(_args(queries))],
        capture_output=True, text=True, check=False, timeout=60)
    assert done.returncode == 0, done.stderr
    entries = {_key(e): e["allowed"] for e in json.loads(done.stdout)["entries"]}
    assert all(entries[_key(q)] == q["allowed"] for q in queries)
