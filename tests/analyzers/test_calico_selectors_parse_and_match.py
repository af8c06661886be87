"""Calico selector parser: every operator of the policy reference, precedence, three-valued
matching, and malformed expressions refused with where and what."""

from __future__ import annotations

import re

import pytest

from netsight.analyzers.policy.calico_selectors import UNKNOWN, SelectorError, parse

LABELS = {"app": "web", "tier": "frontend", "env": "prod", "team.example.com/owner": "ops"}


def lookup(key: str) -> object:
    return LABELS.get(key)


@pytest.mark.parametrize(("text", "expected"), [
    ("", True),  # empty: all()
    ("all()", True),
    ("app == 'web'", True),
    ('app == "db"', False),
    ("app != 'db'", True),
    ("missing != 'x'", True),  # != matches objects without the label
    ("has(app)", True),
    ("!has(app)", False),
    ("has(missing)", False),
    ("app in {'web', 'db'}", True),
    ("app in {}", False),
    ("app not in {'db'}", True),
    ("missing not in {'db'}", True),
    ("missing in {'db'}", False),
    ("tier contains 'ont'", True),
    ("tier starts with 'front'", True),
    ("tier ends with 'end'", True),
    ("missing starts with 'x'", False),
    ("team.example.com/owner == 'ops'", True),
    ("app == 'web' && env == 'dev'", False),
    ("app == 'db' || env == 'prod'", True),
    # && binds tighter than ||
    ("app == 'db' && env == 'dev' || tier == 'frontend'", True),
    ("app == 'db' && (env == 'dev' || tier == 'frontend')", False),
    ("!(app == 'db')", True),
    ("!!has(app)", True),
    ("global()", False),  # never a pod
])
def test_selector_matches_per_the_reference(text: str, expected: bool) -> None:
    assert parse(text).matches(lookup) is expected


def test_global_matches_non_namespaced_resources_only() -> None:
    assert parse("global()").matches(lookup, global_=True) is True


def test_unknown_labels_leave_the_answer_open_unless_the_rest_decides() -> None:
    def unknown(key: str) -> object:
        return UNKNOWN if key == "ns" else LABELS.get(key)
    assert parse("ns == 'x'").matches(unknown) is None
    assert parse("ns == 'x' && app == 'db'").matches(unknown) is False
    assert parse("ns == 'x' || app == 'web'").matches(unknown) is True
    assert parse("!(ns == 'x')").matches(unknown) is None


@pytest.mark.parametrize(("text", "where"), [
    ("app ==", "expected a quoted value after =="),
    ("app = 'x'", "unexpected character"),
    ("app == web", "expected a quoted value"),
    ("has(app", "expected ')' closing has("),
    ("(app == 'x'", "expected ')'"),
    ("app == 'x' &&", "unexpected end of selector"),
    ("app in {'a' 'b'}", "expected ',' or '}'"),
    ("app in 'a'", "expected '{'"),
    ("app == 'x' app == 'y'", "unexpected 'app'"),
    ("app", "unexpected end of selector"),
    ("== 'x'", "expected a label key"),
    ("app like 'x'", "expected ==, !=, in, not in"),
    ("app == 'x", "unexpected character"),
])
def test_malformed_selectors_are_refused_with_where_and_what(text: str, where: str) -> None:
    with pytest.raises(SelectorError, match=re.escape(where)):
        parse(text)


def test_selectors_print_back_in_their_own_syntax() -> None:
    text = "app == 'web' && (env != 'dev' || has(tier)) && app not in {'a', 'b'}"
    assert parse(str(parse(text))) == parse(text)
