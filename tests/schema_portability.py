"""The MCP Inspector's tool-schema portability rules (``inspector --cli --method tools/list
--strict``), restated for the schemas netsight writes, so the suite checks every schema
without Node: a ``type`` list, a subschema that constrains nothing, a bare boolean schema
and a ``$ref`` outside the document are each a problem."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

# Keywords whose presence makes a schema constrain its value (the Inspector's list).
CONSTRAINING = frozenset({
    "type", "enum", "const", "multipleOf", "maximum", "exclusiveMaximum", "minimum",
    "exclusiveMinimum", "maxLength", "minLength", "pattern", "format", "contentMediaType",
    "contentEncoding", "contentSchema", "maxItems", "minItems", "uniqueItems", "maxContains",
    "minContains", "maxProperties", "minProperties", "required", "dependentRequired", "allOf",
    "anyOf", "oneOf", "not", "items", "prefixItems", "contains", "additionalItems",
    "unevaluatedItems", "properties", "patternProperties", "additionalProperties",
    "unevaluatedProperties", "propertyNames", "dependentSchemas", "dependencies", "$ref",
    "$dynamicRef", "$recursiveRef"})
SUBSCHEMA = ("items", "additionalItems", "unevaluatedItems", "contains", "not",
             "propertyNames", "if", "then", "else", "additionalProperties",
             "unevaluatedProperties", "contentSchema")
SUBSCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")
SUBSCHEMA_MAPS = ("properties", "patternProperties", "dependentSchemas", "$defs",
                  "definitions")
# Where true or false is a value of the keyword rather than a schema.
BOOLEAN_VALUED = frozenset({"additionalProperties", "unevaluatedProperties",
                            "additionalItems", "unevaluatedItems"})


def problems(schema: Any, path: str = "", keyword: str | None = None) -> Iterator[str]:
    """Each portability problem of ``schema``, as ``path: issue``."""
    if isinstance(schema, bool):
        if keyword not in BOOLEAN_VALUED:
            yield f"{path}: bare {schema} where a schema object is expected"
        return
    if not isinstance(schema, dict):
        return
    if isinstance(schema.get("type"), list):
        yield f"{path}: type is a list {schema['type']}"
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref and not ref.startswith("#"):
        yield f"{path}: $ref outside the document ({ref})"
    constrains = bool(CONSTRAINING & schema.keys()) or (
        "if" in schema and ("then" in schema or "else" in schema))
    if not constrains and keyword != "not":
        yield f"{path}: constrains nothing"
    for key in SUBSCHEMA:
        if key in schema:
            value = schema[key]
            children = value if key == "items" and isinstance(value, list) else [value]
            for child in children:
                yield from problems(child, f"{path}.{key}", key)
    for key in SUBSCHEMA_LISTS:
        for index, child in enumerate(schema.get(key) or ()):
            yield from problems(child, f"{path}.{key}[{index}]", key)
    for key in SUBSCHEMA_MAPS:
        for name, child in (schema.get(key) or {}).items():
            yield from problems(child, f"{path}.{key}.{name}", key)
