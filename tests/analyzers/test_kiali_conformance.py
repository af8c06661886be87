"""Kiali's validations (mTLS consistency, AuthorizationPolicy and Sidecar references),
checked against cases derived from Kiali's own checker tests
(tests/corpus/kiali; each case's ``source`` names the upstream test).

A Kiali checker test runs one checker on one object (or a group checker on a few) and
asserts which validations it returns. netsight runs all its checks at once, so a case is
compared on the Kiali codes the checker reports (``codes``) and the objects it judged
(``objects``): the findings there, read as (KIA code from equivalentCodes, kind,
resource), must equal ``validations`` as a multiset.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from netsight.analyzers.checks import istio_policy_lint, mesh_config, mtls_consistency
from netsight.analyzers.core.codes import Code
from netsight.analyzers.tools import call_tool
from netsight.graph.store.live import Source
from tests.conftest import corpus_cases, corpus_id, store_from_yaml

KIALI_CASES = corpus_cases("kiali")
# The analyzers that report Kiali's validations, and the codes of theirs that carry KIA codes.
ANALYZERS = ("mtls_consistency", "istio_policies", "mesh_config")
KIALI: tuple[Code, ...] = tuple(
    code for check in (mtls_consistency.CHECK, istio_policy_lint.CHECK, mesh_config.CHECK)
    for code in check.metadata.codes if any(e.startswith("KIA") for e in code.equivalent))

Validation = tuple[str, str, str]  # (KIA code, kind, namespace/name)


def findings(case: Path) -> list[dict[str, Any]]:
    store = store_from_yaml((case / "manifests.yaml").read_text(), Source.MANIFESTS)
    answer = call_tool(store.view(), "analyze_config",
                       {"analyzers": list(ANALYZERS), "limit": 500})
    found: list[dict[str, Any]] = answer.model_dump(mode="json", by_alias=True)["findings"]
    return found


def test_the_corpus_covers_every_kiali_code() -> None:
    covered = {c for case in KIALI_CASES
               for c in json.loads((case / "expected.json").read_text())["codes"]}
    assert covered == {kia for code in KIALI for kia in code.equivalent if kia.startswith("KIA")}
    assert len(KIALI_CASES) >= 80


@pytest.mark.parametrize("case", KIALI_CASES, ids=corpus_id)
def test_kiali_case(case: Path) -> None:
    expected = json.loads((case / "expected.json").read_text())
    codes, objects = set(expected["codes"]), {(o["kind"], o["resource"])
                                             for o in expected["objects"]}
    want: Counter[Validation] = Counter(
        (v["code"], v["kind"], v["resource"]) for v in expected["validations"])
    got: Counter[Validation] = Counter()
    for finding in findings(case):
        resource = finding["resource"]
        where = (resource["kind"], f"{resource.get('namespace', '')}/{resource['name']}")
        for kia in set(finding.get("equivalentCodes") or ()) & codes:
            if where in objects:
                got[(kia, *where)] += 1
    assert got == want, f"missing {dict(want - got)}; unexpected {dict(got - want)}"
