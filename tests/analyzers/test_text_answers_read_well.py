"""The text rendering (MCP text content, ``netsight call -o text``) reads as a person would
write it: no Python repr, absent fields left out, nested values as indented lines."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from netsight.analyzers.core.rendering import render_text
from netsight.analyzers.tools import TOOLS
from tests.analyzers.test_testdata import CASES, TESTDATA, load_case, run_case

# Python's None printed as a value. Not: English ("None of the pods"), the Gateway API's
# allowedListeners value ("from None") and a headless Service as a manifest spells it
# ("clusterIP: None", where the JSON field reads clusterIp).
PYTHON_NONE = re.compile(r"(?<![\w-])None(?![\w-])(?! of )")
LEGITIMATE_NONE = ("from None", "clusterIP: None", "None of ")
REPRS = ("{'", "['")

ANSWERED = [c for c in CASES if "error" not in load_case(c)[1]]


def repr_in(text: str) -> list[str]:
    lines = []
    for line in text.splitlines():
        cleaned = line
        for phrase in LEGITIMATE_NONE:
            cleaned = cleaned.replace(phrase, "")
        if PYTHON_NONE.search(cleaned) or any(r in line for r in REPRS):
            lines.append(line)
    return lines


def test_every_tool_has_an_answered_case() -> None:
    covered = {load_case(c)[0]["tool"] for c in ANSWERED}
    assert set(TOOLS) - {"recent_changes"} <= covered, set(TOOLS) - covered


@pytest.mark.parametrize("detail", [False, True], ids=["compact", "detail"])
@pytest.mark.parametrize("case", ANSWERED, ids=[f"{c.parent.name}/{c.name}" for c in ANSWERED])
def test_text_has_no_python_repr(case: Path, detail: bool) -> None:
    data, _ = run_case(case, detail=detail)
    if "error" in data:
        pytest.skip("the case answers with an error in this mode")
    text = render_text(data)
    assert not repr_in(text), "\n".join(repr_in(text))


def answer(**fields: Any) -> dict[str, Any]:
    return {"metadata": {"clusterName": "c", "source": "manifests", "graphGeneration": 1},
            **fields}


def test_absent_fields_are_left_out_and_undecided_is_said() -> None:
    text = render_text(answer(matchesExpected=None, incomplete=None, allowed=None,
                              backends=[{"service": "shop/cart", "weight": None}]))
    assert "matchesExpected" not in text
    assert "incomplete" not in text
    assert "allowed: undecided" in text
    assert "  - service=shop/cart" in text.splitlines()
    assert "weight" not in text


def test_nested_values_are_indented_lines() -> None:
    long = "a message long enough that the mapping cannot stay on one line of the answer"
    text = render_text(answer(gateway={"conditions": {"Accepted": {
        "status": "True", "reason": "Accepted", "message": long}}, "ready": True}))
    assert text.splitlines()[1:] == [
        "gateway:",
        "  conditions:",
        "    Accepted:",
        "      status: True",
        "      reason: Accepted",
        f"      message: {long}",
        "  ready: true",
    ]


@pytest.mark.parametrize(("service", "shown"), [
    ({"type": "ClusterIP", "headless": False, "clusterIp": None}, "not stated"),
    ({"type": "ClusterIP", "headless": True, "clusterIp": "None"}, "none (headless"),
    ({"type": "ExternalName", "headless": False, "clusterIp": None}, "none (ExternalName"),
    ({"type": "ClusterIP", "headless": False, "clusterIp": "10.0.0.1"}, "10.0.0.1"),
])
def test_cluster_ip_says_what_it_means(service: dict[str, Any], shown: str) -> None:
    text = render_text(answer(**service))
    assert f"clusterIp: {shown}" in text
    assert "clusterIp: None" not in text


def test_meanings_hold_in_nested_and_one_line_mappings() -> None:
    text = render_text(answer(services=[{"service": "a/b", "headless": True,
                                         "clusterIp": "None", "allowed": None}]))
    assert "    clusterIp: none (headless" in text.splitlines()[4]
    assert "None" not in text
    assert "  - at=a/b, allowed=undecided (see notEvaluated)" in \
        render_text(answer(decisions=[{"at": "a/b", "allowed": None, "rule": None}]))


def test_a_verdict_the_cni_does_not_enforce_says_so_first() -> None:
    answer, _ = run_case(TESTDATA / "find_blocking_policies" / "flannel-enforces-no-policy",
                         detail=False)
    lines = render_text(answer).splitlines()
    assert lines[1] == "policies not enforced: Flannel: Flannel enforces no NetworkPolicy"
    answer, _ = run_case(TESTDATA / "find_blocking_policies" / "cluster-cni-not-watched",
                         detail=False)
    assert render_text(answer).splitlines()[1] == \
        "policies enforcement unknown: no CNI detected (DaemonSet: not watched)"
