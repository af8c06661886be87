"""``netsight call TOOL --flag VALUE``: one flag per argument of the tool, made from its input
schema when the parser is built, so an argument a tool gains or changes is a flag at once.

Scalars take their value as the schema allows it (``--port 5432`` is a number where the
schema takes one, ``--port http`` a name where it takes a string); lists take the flag
repeated or values separated by commas; maps take ``KEY=VALUE``, repeated; anything else
takes JSON. ``namespace`` also answers to ``-n``, as in kubectl.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

import orjson

# Namespace attributes of tool arguments: apart from the command's own options.
_DEST = "tool_arg:"
_SCALARS = frozenset({"string", "integer", "number", "boolean"})
_INTEGER = re.compile(r"[+-]?\d+")

Schema = Mapping[str, Any]


def add_tool_flags(parser: argparse._ActionsContainer, schema: Schema,
                   reserved: Collection[str]) -> list[str]:
    """Add a flag for each property of ``schema``; those whose flag ``reserved`` already
    holds are left to ``--args`` and returned."""
    defs: Mapping[str, Any] = schema.get("$defs") or {}
    required = set(schema.get("required") or ())
    left: list[str] = []
    for name, prop in (schema.get("properties") or {}).items():
        flag = "--" + re.sub(r"(?<=[a-z0-9])([A-Z])", r"-\1", name).replace("_", "-").lower()
        if flag in reserved:
            left.append(name)
            continue
        options = ["-n", flag] if name == "namespace" and "-n" not in reserved else [flag]
        _add(parser, options, name, prop, defs, required=name in required)
    return left


def tool_arguments(namespace: argparse.Namespace) -> dict[str, Any]:
    """The tool arguments given as flags, by their schema names."""
    return {key.removeprefix(_DEST): value for key, value in vars(namespace).items()
            if key.startswith(_DEST)}


def _add(parser: argparse._ActionsContainer, options: list[str], name: str, prop: Schema,
         defs: Mapping[str, Any], *, required: bool) -> None:
    variants = _variants(prop, defs)
    types = {v.get("type") for v in variants}
    common: dict[str, Any] = {"dest": _DEST + name, "default": argparse.SUPPRESS,
                              "help": _help(prop, variants, defs, required=required)}
    metavar = re.sub(r"^-+", "", options[-1]).replace("-", "_").upper()
    if types == {"boolean"}:
        action = argparse.BooleanOptionalAction if prop.get("default") is True \
            else "store_true"
        parser.add_argument(*options, action=action, **common)
        return
    if len(variants) == 1 and types == {"array"} and _is_scalar(variants[0].get("items"),
                                                                   defs):
        items = _variants(variants[0]["items"], defs)
        parser.add_argument(*options, action=_Extend, type=_listed(_scalar(items)),
                            metavar=f"{metavar}[,...]", **common)
        return
    if len(variants) == 1 and types == {"object"} and not variants[0].get("properties") \
            and _is_scalar(variants[0].get("additionalProperties"), defs):
        parser.add_argument(*options, action=_Pairs, type=_pair, metavar="KEY=VALUE",
                            **common)
        return
    if types <= _SCALARS:
        enum = [e for v in variants for e in v.get("enum") or ()]
        choices = enum if enum and len(variants) == 1 else None
        parser.add_argument(*options, type=_scalar(variants), choices=choices,
                            metavar=None if choices else metavar, **common)
        return
    parser.add_argument(*options, type=_json, metavar="JSON", **common)


def _variants(prop: Schema | None, defs: Mapping[str, Any]) -> list[Schema]:
    """The shapes a value may take, references resolved, ``null`` left out (a flag not
    given is already "none")."""
    if not isinstance(prop, Mapping):
        return [{}]
    if "$ref" in prop:
        return _variants(defs.get(str(prop["$ref"]).rsplit("/", 1)[-1]), defs)
    options = prop.get("anyOf") or prop.get("oneOf") or [prop]
    found = [v for o in options for v in (_variants(o, defs) if "$ref" in o else [o])]
    return [v for v in found if v.get("type") != "null"] or [{}]


def _is_scalar(prop: Schema | None, defs: Mapping[str, Any]) -> bool:
    return isinstance(prop, Mapping) and all(
        v.get("type") in _SCALARS or "enum" in v for v in _variants(prop, defs))


def _help(prop: Schema, variants: Sequence[Schema], defs: Mapping[str, Any], *,
          required: bool) -> str:
    text = str(prop.get("description") or prop.get("title") or "").rstrip(".")
    enum = [str(e) for v in variants for e in v.get("enum") or ()]
    items = [str(e) for v in variants for i in _variants(v.get("items"), defs)
             for e in i.get("enum") or ()]
    if items:
        text += f"; of {', '.join(items)}"
    if required:
        text += " (required)"
    elif "default" in prop and prop["default"] not in (None, False) and not enum:
        text += f" (default: {orjson.dumps(prop['default']).decode().strip(chr(34))})"
    return text.replace("%", "%%")  # argparse formats help with %


def _scalar(variants: Sequence[Schema]) -> Callable[[str], Any]:
    types = {v.get("type") for v in variants}

    def convert(text: str) -> Any:
        if types & {"integer", "number"} and _INTEGER.fullmatch(text.strip()):
            return int(text)
        if "number" in types:
            try:
                return float(text)
            except ValueError:
                pass
        if "boolean" in types and text.lower() in ("true", "false"):
            return text.lower() == "true"
        if types & {"string", None} or any("enum" in v for v in variants):
            return text
        raise argparse.ArgumentTypeError(f"not a number: {text!r}")

    return convert


def _listed(convert: Callable[[str], Any]) -> Callable[[str], list[Any]]:
    def split(text: str) -> list[Any]:
        return [convert(part.strip()) for part in text.split(",") if part.strip()]

    return split


def _pair(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    return key, value


def _json(text: str) -> Any:
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise argparse.ArgumentTypeError(f"not valid JSON ({exc})") from None


class _Extend(argparse.Action):
    """Repeated, each value a list: one list of them all."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        setattr(namespace, self.dest, [*(getattr(namespace, self.dest, None) or ()), *values])


class _Pairs(argparse.Action):
    """Repeated ``KEY=VALUE``: one map."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        key, value = values
        setattr(namespace, self.dest, {**(getattr(namespace, self.dest, None) or {}),
                                       key: value})
