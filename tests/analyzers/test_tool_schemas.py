"""The schemas a tool is advertised with (``core.tool_schemas``): every real answer over the
testdata, compact and detailed, is valid under its tool's output schema, checked the way the
SDK client checks answers; a wrong top-level value is rejected; no schema carries a title, a
type list or a subschema that constrains nothing."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from jsonschema.validators import validator_for
from pydantic import BaseModel, Field
from referencing import Registry

from netsight.analyzers.core.tool_schemas import ArgsSchema, ResultShape
from netsight.analyzers.tools import TOOLS
from tests.analyzers.test_testdata import CASES, load_case, run_case
from tests.schema_portability import problems


def wrong(value: Any) -> Any:
    """A value of another JSON type than ``value``."""
    return "not this type" if isinstance(value, dict | list) else {"not": "this type"}


def validator(schema: dict[str, Any]) -> Any:
    cls = validator_for(schema)
    cls.check_schema(schema)
    return cls(schema, registry=Registry())  # as mcp.client.session builds it


def answers() -> Iterator[tuple[str, dict[str, Any]]]:
    """Real answers: every testdata case that answers rather than fails, in both modes."""
    for case in CASES:
        tool = load_case(case)[0]["tool"]
        for detail in (True, False):
            data, _ = run_case(case, detail=detail)
            if "error" not in data:
                yield tool, data


@pytest.fixture(scope="module")
def real_answers() -> list[tuple[str, dict[str, Any]]]:
    return list(answers())


def test_every_tool_answers_within_its_output_schema(
        real_answers: list[tuple[str, dict[str, Any]]]) -> None:
    assert {tool for tool, _ in real_answers} == set(TOOLS)  # every tool has a real answer
    checks = {name: validator(tool.output_schema()) for name, tool in TOOLS.items()}
    for tool, data in real_answers:
        errors = [error.message for error in checks[tool].iter_errors(data)]
        assert not errors, (tool, errors[:3])


def test_a_wrong_top_level_value_is_rejected(
        real_answers: list[tuple[str, dict[str, Any]]]) -> None:
    largest: dict[str, dict[str, Any]] = {}
    for tool, data in real_answers:  # per tool, the answer with the most fields
        if len(data) > len(largest.get(tool, {})):
            largest[tool] = data
    for tool, data in largest.items():
        check = validator(TOOLS[tool].output_schema())
        for key, value in data.items():
            if value is not None:  # null: its field's other type is not known here
                assert not check.is_valid({**data, key: wrong(value)}), (tool, key)
        for key in TOOLS[tool].output_schema().get("required", ()):
            assert not check.is_valid({k: v for k, v in data.items() if k != key}), (tool, key)


@pytest.mark.parametrize("name", TOOLS)
def test_schemas_are_portable_and_carry_no_titles(name: str) -> None:
    tool = TOOLS[name]
    for kind, schema in (("input", tool.input_schema()), ("output", tool.output_schema())):
        assert list(problems(schema)) == [], (name, kind)
        assert '"title"' not in json.dumps(schema).replace('"title": {', ""), (name, kind)
    assert all(field.get("description") for field in tool.input_schema()["properties"].values())
    assert '"description"' not in json.dumps(tool.output_schema()), name


class Inner(BaseModel):
    """Docstrings are for the code's readers."""

    deep: int


class Answer(BaseModel):
    """An answer."""

    name: str = Field(description="prose the answer shows anyway")
    maybe: int | None
    items: list[Inner]
    inner: Inner | None = None
    anything: Any = None


def test_an_output_shape_lists_top_level_fields_and_their_types() -> None:
    assert Answer.model_json_schema(mode="serialization", schema_generator=ResultShape) == {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "maybe": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
            "items": {"type": "array", "items": {"type": "object"}},
            "inner": {"anyOf": [{"type": "object"}, {"type": "null"}]},
            "anything": {"anyOf": [{"type": t} for t in
                                   ("string", "number", "boolean", "object", "array", "null")]},
        },
        "required": ["name", "maybe", "items"],
    }


class Args(BaseModel):
    """What the caller sends."""

    namespace: str | None = Field(default=None, description="Only this namespace")
    limit: int = Field(default=10, description="Items per page")
    inner: Inner | None = Field(default=None, description="A nested value")


def test_an_input_schema_keeps_descriptions_and_drops_null_defaults() -> None:
    assert Args.model_json_schema(schema_generator=ArgsSchema) == {
        "$defs": {"Inner": {"properties": {"deep": {"type": "integer"}}, "required": ["deep"],
                            "type": "object"}},
        "properties": {
            "namespace": {"description": "Only this namespace", "type": "string"},
            "limit": {"default": 10, "description": "Items per page", "type": "integer"},
            "inner": {"$ref": "#/$defs/Inner", "description": "A nested value"},
        },
        "type": "object",
    }
    # Null stays a valid argument: the server validates with the model, not the schema.
    assert Args.model_validate({"namespace": None}).namespace is None
