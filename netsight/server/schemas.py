"""Output schemas as MCP clients validate them: the same JSON Schema, cheaper to check.

The official SDK client checks every ``structuredContent`` against the tool's
``outputSchema`` with ``jsonschema`` (pure Python) before returning the result. Pydantic
writes each nested model as a ``$ref`` into ``$defs`` and each optional field as
``anyOf: [{type: X}, {type: null}]``; resolving a ``$ref`` rebuilds a validator per
object, and each ``anyOf`` branch is a sub-validation. Inlining the references and writing
the optional types as a type list (``type: [X, "null"]``, the same constraint in JSON
Schema) makes that check, a part of every tool call's latency, cheaper
(``benchmarks/serving.py`` measures it). The schema accepts and rejects exactly what
pydantic's does (tests/server/test_output_schemas_validate_as_pydantic_writes_them.py).

A definition that refers to itself, directly or not, stays a ``$ref`` where it recurs
(inlining it would never end), its definition kept in ``$defs``.
"""

from __future__ import annotations

from typing import Any

DEFS = "$defs"
REF = "$ref"
_LOCAL = f"#/{DEFS}/"
# Keywords that constrain nothing (JSON Schema's meta-data vocabulary).
ANNOTATIONS = frozenset({"title", "description", "default", "examples", "deprecated",
                         "readOnly", "writeOnly", "$comment"})


def flattened(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with its local ``$ref``s inlined and type-only ``anyOf``s as type lists."""
    defs: dict[str, Any] = schema.get(DEFS, {})
    kept: dict[str, Any] = {}  # the recursive definitions, still referenced
    body = {key: value for key, value in schema.items() if key != DEFS}
    result: dict[str, Any] = _flatten(body, defs, (), kept)
    if kept:
        result[DEFS] = kept
    return result


def _flatten(node: Any, defs: dict[str, Any], inside: tuple[str, ...],
             kept: dict[str, Any]) -> Any:
    if isinstance(node, list):
        return [_flatten(item, defs, inside, kept) for item in node]
    if not isinstance(node, dict):
        return node
    ref = node.get(REF)
    if isinstance(ref, str) and ref.startswith(_LOCAL) and ref[len(_LOCAL):] in defs:
        name = ref[len(_LOCAL):]
        if name in inside:  # recursive: keep the reference, and the definition once
            if name not in kept:
                kept[name] = {}  # placeholder first: its own body refers to it
                kept[name] = _flatten(defs[name], defs, (name,), kept)
            return node
        target = _flatten(defs[name], defs, (*inside, name), kept)
        siblings = {key: _flatten(value, defs, inside, kept)
                    for key, value in node.items() if key != REF}
        # Keywords beside a $ref apply with it: annotations (a field's description, its
        # default) replace the definition's; a constraint both set must hold twice.
        if any(key in target and key not in ANNOTATIONS for key in siblings):
            return {**siblings, "allOf": [target]}
        return {**target, **siblings}
    out = {key: _flatten(value, defs, inside, kept) for key, value in node.items()}
    return _type_list(out)


def _type_list(node: dict[str, Any]) -> dict[str, Any]:
    """``anyOf: [{type: A}, {type: B}]`` -> ``type: [A, B]``: only where every branch is a
    bare type and the node sets no type of its own, so the two forms mean the same."""
    branches = node.get("anyOf")
    if not isinstance(branches, list) or "type" in node or not branches:
        return node
    types: list[str] = []
    for branch in branches:
        if not (isinstance(branch, dict) and branch.keys() == {"type"}
                and isinstance(branch["type"], str)):
            return node
        types.append(branch["type"])
    out = {key: value for key, value in node.items() if key != "anyOf"}
    out["type"] = types
    return out
