"""The output schemas netsight advertises (``schemas.flattened``: ``$ref``s inlined,
optional types as type lists) accept and reject exactly what pydantic's own schemas do,
checked the way the SDK client checks answers (``jsonschema``, the draft the schema names)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from jsonschema.validators import validator_for
from pydantic import BaseModel
from referencing import Registry

from netsight.analyzers.tools import TOOLS
from netsight.server.mcp_tools import mcp_tool
from netsight.server.schemas import flattened
from tests.analyzers.test_testdata import CASES, load_case, run_case

WRONG = {"not": "this type"}  # of no type a leaf of any answer has


def validator(schema: dict[str, Any]) -> Any:
    cls = validator_for(schema)
    cls.check_schema(schema)
    return cls(schema, registry=Registry())  # as mcp.client.session builds it


def answers() -> Iterator[tuple[str, dict[str, Any]]]:
    """Real answers: every testdata case that answers rather than fails."""
    for case in CASES:
        tool = load_case(case)[0]["tool"]
        data, _ = run_case(case)
        if "error" not in data:
            yield tool, data


def with_wrong_leaves(data: Any) -> Iterator[Any]:
    """``data`` once per leaf (and per list), with that one value of a wrong type."""
    if isinstance(data, dict):
        for key, value in data.items():
            for wrong in with_wrong_leaves(value):
                yield {**data, key: wrong}
    elif isinstance(data, list):
        yield WRONG
        for index, value in enumerate(data[:2]):
            for wrong in with_wrong_leaves(value):
                yield [*data[:index], wrong, *data[index + 1:]]
    else:
        yield WRONG


@pytest.fixture(scope="module")
def real_answers() -> list[tuple[str, dict[str, Any]]]:
    return list(answers())


def test_advertised_output_schemas_have_no_references() -> None:
    for spec in TOOLS.values():
        advertised = mcp_tool(spec).output_schema
        assert advertised == flattened(spec.output_schema())
        assert "$ref" not in json.dumps(advertised), spec.name


def test_every_real_answer_is_valid_under_both_schemas(
        real_answers: list[tuple[str, dict[str, Any]]]) -> None:
    assert {tool for tool, _ in real_answers} >= {"find_blocking_policies", "diagnose_service"}
    checks: dict[str, tuple[Any, Any]] = {}
    for tool, data in real_answers:
        if tool not in checks:
            schema = TOOLS[tool].output_schema()
            checks[tool] = validator(schema), validator(flattened(schema))
        pydantic_s, advertised = checks[tool]
        assert pydantic_s.is_valid(data), tool
        assert advertised.is_valid(data), tool


def test_answers_with_a_wrong_value_are_rejected_alike(
        real_answers: list[tuple[str, dict[str, Any]]]) -> None:
    largest: dict[str, dict[str, Any]] = {}
    for tool, data in real_answers:  # per tool, the answer with the most to get wrong
        if len(json.dumps(data)) > len(json.dumps(largest.get(tool, {}))):
            largest[tool] = data
    rejected = 0
    for tool, data in largest.items():
        schema = TOOLS[tool].output_schema()
        pydantic_s, advertised = validator(schema), validator(flattened(schema))
        for wrong in with_wrong_leaves(data):
            verdict = pydantic_s.is_valid(wrong)
            assert advertised.is_valid(wrong) == verdict, (tool, wrong)
            rejected += not verdict
    assert rejected > 100  # the variants do test something


class Node(BaseModel):
    name: str
    parent: Node | None = None
    children: list[Node] = []


class Tree(BaseModel):
    root: Node
    size: int | None


def test_a_recursive_definition_stays_a_reference() -> None:
    schema = Tree.model_json_schema(mode="serialization")
    flat = flattened(schema)
    assert set(flat["$defs"]) == {"Node"}
    assert flat["properties"]["root"]["properties"]["parent"] == {
        "anyOf": [{"$ref": "#/$defs/Node"}, {"type": "null"}], "default": None}
    assert flat["properties"]["size"]["type"] == ["integer", "null"]
    tree = {"root": {"name": "a", "children": [{"name": "b", "parent": {"name": "a"}}]},
            "size": 2}
    broken = {"root": {"name": "a", "children": [{"name": "b", "parent": {"name": 1}}]},
              "size": 2}
    for candidate in (schema, flat):
        assert validator(candidate).is_valid(tree)
        assert not validator(candidate).is_valid(broken)


def test_an_any_of_with_more_than_types_is_left_alone() -> None:
    schema = {"anyOf": [{"type": "string", "minLength": 2}, {"type": "null"}]}
    assert flattened(schema) == schema


def test_keywords_beside_a_reference_are_kept() -> None:
    schema = {"properties": {"x": {"$ref": "#/$defs/X", "description": "the x"}},
              "$defs": {"X": {"type": "object", "title": "X"}}}
    assert flattened(schema) == {
        "properties": {"x": {"type": "object", "title": "X", "description": "the x"}}}


def test_a_constraint_beside_a_reference_and_in_it_must_hold_both_times() -> None:
    schema = {"properties": {"x": {"$ref": "#/$defs/X", "required": ["b"]}},
              "$defs": {"X": {"type": "object", "required": ["a"]}}}
    flat = flattened(schema)
    assert flat == {"properties": {"x": {"required": ["b"], "allOf": [
        {"type": "object", "required": ["a"]}]}}}
    for candidate in (schema, flat):
        assert not validator(candidate).is_valid({"x": {"a": 1}})
        assert not validator(candidate).is_valid({"x": {"b": 1}})
        assert validator(candidate).is_valid({"x": {"a": 1, "b": 1}})
