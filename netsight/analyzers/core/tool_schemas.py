"""The JSON Schemas a tool is advertised with. Agent clients load every tool's schemas into the
model's context on every conversation, so they carry shapes and what a caller must know to
send arguments, nothing else: no titles (they repeat the name), no prose on answers.

Both are pydantic's own schemas, written by :class:`GenerateJsonSchema` subclasses, in forms
every client dialect reads: a nullable value is ``anyOf: [X, {type: null}]``, never a type
list, and no schema accepts anything without saying so.
"""

from __future__ import annotations

from typing import Any

from pydantic.json_schema import GenerateJsonSchema, JsonSchemaMode, JsonSchemaValue, NoDefault
from pydantic_core import CoreSchema, core_schema

# Any value, where a schema must still name its types to constrain something.
ANY_VALUE = ("string", "number", "boolean", "object", "array", "null")
_LOCAL = "#/$defs/"


class Untitled(GenerateJsonSchema):
    """Pydantic's schema without titles and without the docstrings of classes (models,
    enums), which are written for the code's readers."""

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False

    def model_schema(self, schema: core_schema.ModelSchema) -> JsonSchemaValue:
        json_schema = super().model_schema(schema)
        json_schema.pop("title", None)
        json_schema.pop("description", None)
        return json_schema

    def generate(self, schema: CoreSchema,
                 mode: JsonSchemaMode = "validation") -> JsonSchemaValue:
        json_schema = super().generate(schema, mode)
        # An enum's title and docstring are set after enum_schema, by pydantic's own hook.
        for definition in json_schema.get("$defs", {}).values():
            definition.pop("title", None)
            definition.pop("description", None)
        return json_schema


class ArgsSchema(Untitled):
    """An input schema: argument descriptions kept (they say what to send), and an optional
    argument whose default is null advertised as its type alone, since leaving it out is how
    a caller asks for the default."""

    def default_schema(self, schema: core_schema.WithDefaultSchema) -> JsonSchemaValue:
        inner = schema["schema"]
        if schema.get("default", NoDefault) is None and inner["type"] == "nullable":
            return self.generate_inner(inner["schema"])
        return super().default_schema(schema)


class ResultShape(Untitled):
    """An output schema: the answer's top-level fields, those always present as required, and
    the JSON type of each (an enum's values, ``null`` where a field may be null). A nested
    object is typed as an object without its fields: a whole answer's fields, described to the
    leaves, would cost several times the budget of the tool list, and the answer shows them."""

    def generate(self, schema: CoreSchema,
                 mode: JsonSchemaMode = "serialization") -> JsonSchemaValue:
        full = super().generate(schema, mode)
        return shaped(full, full.get("$defs", {}), top=True)


def shaped(node: dict[str, Any], defs: dict[str, Any], *, top: bool = False) -> dict[str, Any]:
    """``node`` (a schema of pydantic's, its ``$ref``s into ``defs``) as :class:`ResultShape`
    writes it: fields listed at the top level only, each with its type."""
    node = _resolved(node, defs)
    for keyword in ("anyOf", "oneOf"):
        if keyword in node:
            branches: list[dict[str, Any]] = []
            for branch in node[keyword]:
                if (kept := shaped(branch, defs)) not in branches:
                    branches.append(kept)
            return branches[0] if len(branches) == 1 else {"anyOf": branches}
    if len(node.get("allOf", ())) == 1:
        return shaped(node["allOf"][0], defs, top=top)
    if "const" in node:
        return {"const": node["const"]}
    if "enum" in node:
        return {key: node[key] for key in ("type", "enum") if key in node}
    kind = node.get("type")
    if kind == "array":
        return {"type": "array", "items": shaped(node.get("items", {}), defs)}
    if kind == "object" and top:
        out: dict[str, Any] = {"type": "object", "properties": {
            name: shaped(field, defs) for name, field in node.get("properties", {}).items()}}
        if node.get("required"):
            out["required"] = node["required"]
        return out
    if isinstance(kind, str):
        return {"type": kind}
    return {"anyOf": [{"type": t} for t in (ANY_VALUE if kind is None else kind)]}


def _resolved(node: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    ref = node.get("$ref")
    while isinstance(ref, str) and ref.startswith(_LOCAL):
        node = {**defs[ref[len(_LOCAL):]], **{k: v for k, v in node.items() if k != "$ref"}}
        ref = node.get("$ref")
    return node
