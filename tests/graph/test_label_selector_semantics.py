"""Label selectors: matchLabels and matchExpressions as apimachinery evaluates them, and
the validation of their shape."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from netsight.graph.model.errors import MalformedObject
from netsight.graph.model.selectors import (
    LabelSelector,
    Operator,
    Requirement,
    parse_label_selector,
    parse_string_map,
    selector_from_map,
)
from tests.graph.oracle import selector_matches
from tests.graph.universe import LABEL_SETS, label_selectors


def parse(raw: object) -> LabelSelector:
    return parse_label_selector(raw, "spec.podSelector")


def expr(key: str, operator: str, *values: str) -> dict[str, Any]:
    result: dict[str, Any] = {"key": key, "operator": operator}
    if values:
        result["values"] = list(values)
    return result


@pytest.mark.parametrize(
    ("selector", "labels", "expected"),
    [
        ({"matchLabels": {"app": "web"}}, {"app": "web", "tier": "x"}, True),
        ({"matchLabels": {"app": "web"}}, {"app": "api"}, False),
        ({"matchLabels": {"app": "web"}}, {}, False),
        ({"matchLabels": {"app": "web", "tier": "x"}}, {"app": "web"}, False),
        ({"matchLabels": {"app": ""}}, {"app": ""}, True),
        ({"matchLabels": {"app": ""}}, {}, False),
        ({"matchExpressions": [expr("app", "In", "web", "api")]}, {"app": "api"}, True),
        ({"matchExpressions": [expr("app", "In", "web")]}, {"app": "db"}, False),
        ({"matchExpressions": [expr("app", "In", "web")]}, {}, False),
        ({"matchExpressions": [expr("app", "NotIn", "web")]}, {"app": "db"}, True),
        ({"matchExpressions": [expr("app", "NotIn", "web")]}, {"app": "web"}, False),
        # NotIn matches objects without the key (apimachinery's selection.Matches).
        ({"matchExpressions": [expr("app", "NotIn", "web")]}, {}, True),
        ({"matchExpressions": [expr("app", "Exists")]}, {"app": ""}, True),
        ({"matchExpressions": [expr("app", "Exists")]}, {"tier": "x"}, False),
        ({"matchExpressions": [expr("app", "DoesNotExist")]}, {"tier": "x"}, True),
        ({"matchExpressions": [expr("app", "DoesNotExist")]}, {"app": "web"}, False),
        # Terms are ANDed, matchLabels with expressions and expressions with each other.
        ({"matchLabels": {"app": "web"}, "matchExpressions": [expr("tier", "Exists")]},
         {"app": "web"}, False),
        ({"matchExpressions": [expr("app", "In", "web", "api"), expr("app", "NotIn", "api")]},
         {"app": "api"}, False),
        ({"matchExpressions": [expr("app", "In", "web", "api"), expr("app", "NotIn", "api")]},
         {"app": "web"}, True),
    ],
)
def test_selector_matches_labels(
    selector: dict[str, Any], labels: dict[str, str], expected: bool
) -> None:
    assert parse(selector).matches(labels) is expected


@pytest.mark.parametrize(
    "raw", [None, {}, {"matchLabels": {}}, {"matchLabels": None, "matchExpressions": None},
            {"matchExpressions": []}],
)
def test_empty_selector_matches_everything(raw: object) -> None:
    selector = parse(raw)

    assert selector.is_empty
    assert selector == LabelSelector()
    assert selector.matches({})
    assert selector.matches({"app": "web", "anything": "else"})
    assert selector.describe() == "<all>"


def test_selector_with_a_term_is_not_empty() -> None:
    assert not parse({"matchExpressions": [expr("app", "Exists")]}).is_empty
    assert not parse({"matchLabels": {"app": "web"}}).is_empty


def test_parsed_selector_values() -> None:
    selector = parse({"matchLabels": {"b": "2", "a": "1"},
                      "matchExpressions": [expr("app", "NotIn", "x", "y", "x")]})

    assert selector.match_labels == (("a", "1"), ("b", "2"))
    assert selector.requirements == (Requirement("app", Operator.NOT_IN, frozenset({"x", "y"})),)


def test_service_selector_map_is_match_labels() -> None:
    selector = selector_from_map({"tier": "x", "app": "web"})

    assert selector == parse({"matchLabels": {"app": "web", "tier": "x"}})
    assert selector.matches({"app": "web", "tier": "x", "extra": "1"})
    assert not selector.matches({"app": "web"})


def test_describe_reads_like_kubectl() -> None:
    selector = parse({
        "matchLabels": {"app": "web"},
        "matchExpressions": [expr("tier", "In", "y", "x"), expr("env", "NotIn", "dev"),
                             expr("canary", "Exists"), expr("legacy", "DoesNotExist")],
    })

    assert selector.describe() == "app=web,tier in (x,y),env notin (dev),canary,!legacy"


@pytest.mark.parametrize(
    ("raw", "field_path"),
    [
        ("app=web", "spec.podSelector"),
        (["app"], "spec.podSelector"),
        ({"matchLabels": ["app"]}, "spec.podSelector.matchLabels"),
        ({"matchLabels": {"app": 1}}, "spec.podSelector.matchLabels.app"),
        ({"matchLabels": {"app": None}}, "spec.podSelector.matchLabels.app"),
        ({"matchExpressions": {"key": "app"}}, "spec.podSelector.matchExpressions"),
        ({"matchExpressions": ["app"]}, "spec.podSelector.matchExpressions[0]"),
        ({"matchExpressions": [{"operator": "Exists"}]},
         "spec.podSelector.matchExpressions[0].key"),
        ({"matchExpressions": [expr("", "Exists")]}, "spec.podSelector.matchExpressions[0].key"),
        ({"matchExpressions": [expr("app", "Exists"), expr("app", "in", "web")]},
         "spec.podSelector.matchExpressions[1].operator"),
        ({"matchExpressions": [{"key": "app"}]},
         "spec.podSelector.matchExpressions[0].operator"),
        ({"matchExpressions": [expr("app", "Equals", "web")]},
         "spec.podSelector.matchExpressions[0].operator"),
        ({"matchExpressions": [expr("app", "In")]}, "spec.podSelector.matchExpressions[0].values"),
        ({"matchExpressions": [expr("app", "NotIn")]},
         "spec.podSelector.matchExpressions[0].values"),
        ({"matchExpressions": [expr("app", "Exists", "web")]},
         "spec.podSelector.matchExpressions[0].values"),
        ({"matchExpressions": [expr("app", "DoesNotExist", "web")]},
         "spec.podSelector.matchExpressions[0].values"),
        ({"matchExpressions": [{"key": "app", "operator": "In", "values": "web"}]},
         "spec.podSelector.matchExpressions[0].values"),
        ({"matchExpressions": [{"key": "app", "operator": "In", "values": [1]}]},
         "spec.podSelector.matchExpressions[0].values"),
    ],
)
def test_invalid_selector_is_rejected_with_field_path(raw: object, field_path: str) -> None:
    with pytest.raises(MalformedObject) as caught:
        parse(raw)

    assert caught.value.field_path == field_path
    assert str(caught.value).startswith(f"{field_path}: ")


def test_bad_operator_message_lists_the_valid_ones() -> None:
    with pytest.raises(MalformedObject, match="In, NotIn, Exists, DoesNotExist; got 'Equals'"):
        parse({"matchExpressions": [expr("app", "Equals", "web")]})


@pytest.mark.parametrize("raw", [None, {}])
def test_absent_string_map_is_empty(raw: object) -> None:
    assert parse_string_map(raw, "metadata.labels") == {}


def test_string_map_is_copied() -> None:
    raw = {"app": "web"}
    parsed = parse_string_map(raw, "metadata.labels")
    raw["app"] = "api"

    assert parsed == {"app": "web"}


@settings(max_examples=200, deadline=None)
@given(raw=label_selectors(), labels=st.sampled_from(LABEL_SETS))
def test_selector_matching_agrees_with_apimachinery_semantics(
    raw: dict[str, Any] | None, labels: dict[str, str]
) -> None:
    assert parse(raw).matches(labels) is selector_matches(raw, labels)
