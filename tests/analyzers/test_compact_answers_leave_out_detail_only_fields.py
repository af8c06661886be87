"""A compact answer is the detail answer of the same result without the detail-only fields,
at every depth.

``DetailAware`` leaves those fields out before serialising (a verdict's steps and their
evidence were most of a compact answer's serialisation time), and find_blocking_policies
evaluates a compact question without explain (no evidence of the rules a denial missed)
and builds its decisions without steps; this checks a compact answer is still exactly the
detail answer without those fields, and that serialising leaves the result whole.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from netsight.analyzers.core.calling import to_json
from netsight.analyzers.policy.results import DetailAware
from netsight.analyzers.tools import call_tool
from tests.analyzers.test_testdata import CASES
from tests.conftest import store_from_yaml

POLICY_CASES = [c for c in CASES if c.parent.name in {
    "find_blocking_policies", "reachability_matrix", "who_can_reach", "what_can_reach"}]


def without_detail(value: Any, dumped: Any) -> Any:
    """``dumped`` (``value``'s detail-mode JSON) without the fields ``value``'s detail-aware
    models list as detail-only, walking the models and their JSON side by side."""
    if isinstance(value, list | tuple):
        return [without_detail(v, d) for v, d in zip(value, dumped, strict=True)]
    if not isinstance(value, BaseModel) or not isinstance(dumped, dict):
        return dumped
    hidden = value._detail_only if isinstance(value, DetailAware) else ()
    out = dict(dumped)
    for name, field in type(value).model_fields.items():
        key = field.serialization_alias or field.alias or name
        if key not in out:
            continue
        if name in hidden:
            del out[key]
        else:
            out[key] = without_detail(getattr(value, name), out[key])
    return out


def _answer(case: Path, *, detail: bool) -> tuple[Any, dict[str, Any]]:
    query = json.loads((case / "query.json").read_text())
    view = store_from_yaml((case / "cluster.yaml").read_text()).view()
    return call_tool(view, query["tool"], {**query["args"], "detail": detail}), query


@pytest.mark.parametrize("case", POLICY_CASES, ids=lambda c: f"{c.parent.name}/{c.name}")
def test_compact_answer_is_the_detail_answer_without_detail_only_fields(case: Path) -> None:
    result, _ = _answer(case, detail=True)
    detailed = to_json(result, detail=True)
    expected = without_detail(result, detailed)
    assert to_json(result, detail=False) == expected
    if case.parent.name == "find_blocking_policies":
        # The compact question, evaluated without explain, answers the same.
        compact = to_json(_answer(case, detail=False)[0], detail=False)
        assert {**compact, "metadata": None} == {**expected, "metadata": None}
    # Serialising compact left the result whole: the detail answer is unchanged.
    assert to_json(result, detail=True) == detailed


def test_detail_answers_keep_steps_and_evidence_that_compact_ones_leave_out() -> None:
    answers = [_answer(c, detail=True)[0] for c in POLICY_CASES
               if c.parent.name == "find_blocking_policies"]
    detailed = [to_json(a, detail=True) for a in answers]
    compact = [to_json(a, detail=False) for a in answers]
    assert any(step.get("evidence") for answer in detailed
               for decision in answer["decisions"] for step in decision["steps"])
    assert all("steps" not in decision for answer in compact
               for decision in answer["decisions"])
    assert all("suggestion" not in answer for answer in compact)
    assert any("suggestion" in answer for answer in detailed)
