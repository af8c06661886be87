"""Values that look like numbers, times or documents but are none (a superscript digit, a
number of 100,000 digits, a duration reaching back before 1970, a time before year 1, a
list nested 1,000 deep, a YAML integer or date Python cannot make) are the caller's to fix:
INVALID_INPUT naming the argument, never INTERNAL_ERROR with a traceback in the log.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest

from netsight.analyzers.core.contracts import ErrorCode, ToolFailure
from netsight.analyzers.tools import call_tool
from tests.analyzers.hostile import visible_view
from tests.analyzers.test_errors_quote_a_short_prefix_of_bad_values import NEEDED


def nested(depth: int) -> list[Any]:
    """A list nested ``depth`` deep (a JSON decoder's limit stops far sooner)."""
    outer: list[Any] = []
    inner = outer
    for _ in range(depth):
        inner.append([])
        inner = inner[0]
    return outer


AGAINST = ["²", "٣", "9999999999d", "1" * 100_000, "99999999999999d", "1" * 30 + "h",
           "0001-01-01T00:00:00+14:00", "10m\n", "1\n", 10**100_000, -(10**100_000), -1,
           10**30]
PROPOSED = ["[" * 1000 + "]" * 1000, '{"a": ' * 1000 + "1" + "}" * 1000,
            "a:\n" + "".join(" " * i + "- \n" for i in range(1, 400)), "a: &a [*a]",
            "a: " + "9" * 5000, '{"a": ' + "9" * 5000 + "}", "a: 2025-13-45",
            "a: !!timestamp 2025-01-01T99:00:00Z", "a: !!float 1e99999999999999999999",
            "a: \ud800", '{"a": "\ud800"}']
CASES: list[tuple[str, dict[str, Any], str]] = [
    *(("diff_routes", {"against": value}, "against:") for value in AGAINST),
    *(("diff_routes", {"proposed": value}, "proposed:") for value in PROPOSED),
    ("diagnose_service", {"port": "²"}, "port:"),
    ("diagnose_service", {"port": "http\n"}, "port:"),
    ("diagnose_service", {"service": "shop\n/web"}, "service:"),
    ("list_services", {"namespace": "shop\n"}, "namespace:"),
    ("find_blocking_policies", {"method": "GET\n"}, "method:"),
    ("find_blocking_policies", {"host": "shop.example.com\n"}, "host:"),
    ("find_blocking_policies", {"source": "ip:fe80::1%" + "e" * 100_000}, "source:"),
    ("what_can_reach", {"source": "ip:\u0661\u0660.0.0.1"}, "source:"),  # Arabic-Indic "10"
    ("who_can_reach", {"port": 10**100_000}, "port:"),
    ("recent_changes", {"minutes": float("nan")}, "minutes:"),
    ("recent_changes", {"minutes": float("inf")}, "minutes:"),
    ("list_services", {"health": nested(100_000)}, "arguments:"),
    ("list_services", {"health": [nested(100_000)]}, "arguments:"),
    ("diff_routes", {"headers": {"a": nested(100_000)}}, "headers"),
    ("analyze_config", {"codes": nested(100_000)}, "codes"),
]


@pytest.mark.parametrize(("tool", "args", "names"), CASES,
                         ids=[f"{t}-{i}" for i, (t, _, _) in enumerate(CASES)])
def test_an_odd_value_is_invalid_input(tool: str, args: dict[str, Any], names: str,
                                       caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.ERROR), pytest.raises(ToolFailure) as failure:
        call_tool(visible_view(), tool, {**NEEDED.get(tool, {}), **args})
    assert failure.value.code == ErrorCode.INVALID_INPUT, failure.value.message[:300]
    assert failure.value.message.startswith(names.rstrip(":")), failure.value.message[:300]
    assert not caplog.records


def test_a_lone_surrogate_in_a_paged_querys_argument_is_answered() -> None:
    # The query's fingerprint (its cursor's owner) is computed from every argument.
    call_tool(visible_view(), "list_ingresses", {"ingress_class": "\ud800"})


def test_a_generation_or_duration_of_ordinary_size_still_answers() -> None:
    for against in (0, "0", "000000000000000000000000000", "90s", "1h30m", "2d",
                    "2025-06-01T10:00:00Z"):
        call_tool(visible_view(), "diff_routes", {**NEEDED["diff_routes"],
                                                  "against": against})
