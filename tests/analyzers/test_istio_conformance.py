"""Every istioctl analyze expectation of the shared corpus (../shared/conformance/istio),
checked through the real CLI: ``netsight call analyze_config --manifests CASE``.

As the corpus README says, a case lists exactly what one upstream analyzer emits and other
analyzers may add findings. So each case is compared on the netsight codes that stand for
that analyzer (mesh_config.UPSTREAM): those findings, read as (IST code from
equivalentCodes, kind, resource), must equal the expected multiset. A resource written
without a namespace is an object the manifests gave none, which netsight files under the
default namespace, or a cluster-scoped one (a Namespace), which has none.
"""

from __future__ import annotations

import io
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from netsight.analyzers.checks.mesh_config import UPSTREAM
from netsight.cli import main
from netsight.graph.model.kinds import is_cluster_scoped
from tests.conftest import CONFORMANCE, corpus_cases, corpus_id, needs_shared_corpus

ISTIO_CASES = corpus_cases("istio")  # the shared corpus's and tests/corpus's
MANIFEST_DEFAULT_NAMESPACE = "default"

Message = tuple[str, str, str]  # (IST code, kind, namespace/name)


def expected_messages(expected: dict[str, Any]) -> Counter[Message]:
    found: Counter[Message] = Counter()
    for message in expected["messages"]:
        resource = message["resource"]
        if is_cluster_scoped(message["kind"]):
            resource = f"/{resource}"  # a Namespace, say: netsight gives it no namespace
        elif "/" not in resource:
            resource = f"{MANIFEST_DEFAULT_NAMESPACE}/{resource}"
        found[(message["code"], message["kind"], resource)] += 1
    return found


def cli_findings(case: Path) -> list[dict[str, Any]]:
    out = io.StringIO()
    code = main(["call", "analyze_config", "--manifests", str(case / "manifests.yaml"),
                 "--args", '{"limit": 500}'], stdout=out)
    assert code == 0, out.getvalue()
    answer = json.loads(out.getvalue())
    assert answer["page"]["remaining"] == 0
    findings: list[dict[str, Any]] = answer["findings"]
    return findings


def netsight_messages(findings: list[dict[str, Any]], analyzer: str,
                      ist_codes: set[str]) -> Counter[Message]:
    mine = {code.code for code in UPSTREAM[analyzer]}
    found: Counter[Message] = Counter()
    for finding in findings:
        if finding["code"] not in mine:
            continue
        resource = finding["resource"]
        equivalent = [c for c in finding.get("equivalentCodes", []) if c in ist_codes] or \
            finding.get("equivalentCodes", ["(none)"])[:1]
        found[(equivalent[0], resource["kind"],
               f"{resource.get('namespace', '')}/{resource['name']}")] += 1
    return found


@needs_shared_corpus
def test_corpus_has_istio_cases() -> None:
    assert len([c for c in ISTIO_CASES if c.is_relative_to(CONFORMANCE)]) >= 13


def test_every_corpus_analyzer_has_netsight_codes() -> None:
    analyzers = {json.loads((c / "expected.json").read_text())["analyzer"]
                 for c in ISTIO_CASES}
    assert analyzers <= set(UPSTREAM), analyzers - set(UPSTREAM)
    for codes in UPSTREAM.values():
        assert all(code.equivalent for code in codes)


@pytest.mark.parametrize("case", ISTIO_CASES, ids=corpus_id)
def test_istio_case(case: Path) -> None:
    expected = json.loads((case / "expected.json").read_text())
    want = expected_messages(expected)
    ist_codes = {code for code, _, _ in want} | set(expected.get("absentCodes", ()))
    got = netsight_messages(cli_findings(case), expected["analyzer"], ist_codes)
    assert got == want, f"missing {dict(want - got)}; unexpected {dict(got - want)}"
