"""A megabyte-long argument costs its caller a megabyte, not more: every error quotes at
most a short prefix of a bad value (a validation error's input and location, a NOT_FOUND's
name, an unknown tool or argument), so an error is a few kilobytes whatever was sent.

Every tool of the catalog gets, for each of its arguments (read from its input schema), a
1 MB string there, in a list there and as a key and a value of a map there; and a 1 MB
unknown argument. An answer (a 1 MB value some argument takes) holds it at most once, and
where the value fits (a request path, a header) not even that: diff_routes repeats the
request in each finding, by a prefix when it is long.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from netsight.analyzers.core.calling import to_json
from netsight.analyzers.core.contracts import ErrorCode, ToolFailure
from netsight.analyzers.tools import TOOLS, call_tool
from tests.analyzers.hostile import visible_view

BIG = "y" * (1 << 20)
ERROR_BYTES = 4096
# The arguments each tool needs, for an error to come from the argument under test.
NEEDED: dict[str, dict[str, Any]] = {
    "diagnose_service": {"service": "shop/web"},
    "diff_routes": {"host": "shop.example.com"},
    "find_blocking_policies": {"source": "shop/client", "destination": "shop/web-1",
                               "port": 8080},
    "reachability_matrix": {"ports": [8080]},
    "who_can_reach": {"destination": "shop/web-1", "port": 8080},
    "what_can_reach": {"source": "shop/client"},
    "gateway_get": {"gateway": "shop/gw"},
}
BAD_VALUES = {"string": BIG, "list": [BIG], "key": {BIG: "v"}, "value": {"k": BIG}}


def sent(tool: str, args: dict[str, Any]) -> tuple[bool, str]:
    """(whether it failed, the error or the answer as JSON)."""
    try:
        return False, json.dumps(to_json(call_tool(visible_view(), tool, args),
                                         detail=True))
    except ToolFailure as failure:
        error = failure.to_error()
    assert error.code != ErrorCode.INTERNAL_ERROR, error.message[:300]
    return True, json.dumps(error.model_dump(mode="json"))


CASES = [(tool, argument, shape) for tool in TOOLS
         for argument in TOOLS[tool].args.model_json_schema()["properties"]
         for shape in BAD_VALUES]


@pytest.mark.parametrize(("tool", "argument", "shape"), CASES,
                         ids=[f"{t}-{a}-{s}" for t, a, s in CASES])
def test_a_megabyte_value_is_quoted_by_a_short_prefix(tool: str, argument: str,
                                                      shape: str) -> None:
    failed, text = sent(tool, {**NEEDED.get(tool, {}), argument: BAD_VALUES[shape]})
    if failed:
        assert len(text) < ERROR_BYTES, text[:300]
    else:
        assert text.count(BIG[:1000]) <= 1


# Megabyte values that fit their argument: the answer is not made of them.
FITTING = [
    ("diff_routes", {"path": "/" + BIG}), ("diff_routes", {"method": "A" * len(BIG)}),
    ("diff_routes", {"path": "/" + BIG, "expected_backend": "shop/web"}),
    ("diff_routes", {"host": "none.example.com", "path": "/" + BIG}),
    ("diff_routes", {"path": "/" + BIG, "via": "mesh", "source_namespace": "shop"}),
    ("diff_routes", {"headers": {BIG: BIG}}), ("diff_routes", {"query": {BIG: BIG}}),
    ("diff_routes", {"via": "mesh", "source_namespace": "shop", "source_labels": {BIG: BIG}}),
    ("list_ingresses", {"ingress_class": BIG}),
    ("find_blocking_policies", {"path": "/" + "y" * 4000}),
]


@pytest.mark.parametrize(("tool", "args"), FITTING, ids=[f"{t}-{i}" for i, (t, _) in
                                                          enumerate(FITTING)])
def test_a_megabyte_value_that_fits_is_not_repeated_in_the_answer(tool: str,
                                                                  args: dict[str, Any]) -> None:
    failed, text = sent(tool, {**NEEDED.get(tool, {}), **args})
    assert not failed, text[:300]
    assert len(text) < 64 * 1024


@pytest.mark.parametrize("tool", sorted(TOOLS))
def test_a_megabyte_unknown_argument_is_quoted_by_a_short_prefix(tool: str) -> None:
    failed, text = sent(tool, {**NEEDED.get(tool, {}), BIG: 1})
    assert failed
    assert len(text) < ERROR_BYTES, text[:300]


def test_a_megabyte_tool_name_is_quoted_by_a_short_prefix() -> None:
    with pytest.raises(ToolFailure) as failure:
        call_tool(visible_view(), BIG, {})
    assert failure.value.code == ErrorCode.INVALID_INPUT
    assert len(json.dumps(failure.value.to_error().model_dump(mode="json"))) < ERROR_BYTES
