"""A plain-text rendering of any tool result, for people and for text-only MCP clients.

It walks the JSON form, so every tool gets a rendering without a renderer of its own:
findings become ``[SEVERITY] CODE resource: summary`` lines, other fields compact YAML-like
``key: value`` lines, nested values indented under their key. Absent (null) fields are left
out, unless their absence is itself the answer (``allowed``: undecided).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

# A mapping of scalars is written on one line ("ready=2, notReady=0") when it fits in this.
WIDTH = 100
INDENT = "  "


def _cluster_ip(service: Mapping[str, Any]) -> str:
    # Kubernetes spells a headless Service's clusterIP "None", which reads as unset: say
    # what either means.
    if service.get("headless") or service.get("clusterIp") == "None":
        return "none (headless: DNS answers with the pods' addresses)"
    if service.get("type") == "ExternalName":
        return "none (ExternalName: DNS answers with a CNAME)"
    return "not stated (the API server assigns one when the Service is created)"


# Fields whose null is an answer, not an absence: what it means, given the fields beside it.
NULL_MEANS: dict[str, Callable[[Mapping[str, Any]], str]] = {
    "allowed": lambda _: "undecided (see notEvaluated)",
    "clusterIp": _cluster_ip,
    "selector": lambda _: "none (endpoints are managed by hand)",
}


def render_text(data: dict[str, Any]) -> str:
    meta = data.get("metadata", {})
    lines = [f"netsight · {meta.get('clusterName', '?')} ({meta.get('source', '?')}, "
             f"generation {meta.get('graphGeneration', '?')})"]
    enforcement = meta.get("enforcement")
    if enforcement:  # a verdict the CNI does not (or may not) enforce: said up front
        state = "not enforced" if enforcement.get("enforced") is False else \
            "enforcement unknown"
        lines.append(f"policies {state}: {enforcement.get('reason', '')}")
    lines.extend(_fields({k: v for k, v in data.items() if k != "metadata"}, 0))
    return "\n".join(lines)


def render_error(error: dict[str, Any]) -> str:
    return f"error {error.get('code')} in {error.get('tool')}: {error.get('message')}"


def _shown(mapping: Mapping[str, Any]) -> dict[str, Any]:
    """The fields of ``mapping`` as shown: nulls left out or said in words (NULL_MEANS)."""
    shown = {}
    for key, value in mapping.items():
        if value is None or (key == "clusterIp" and value == "None"):
            meaning = NULL_MEANS.get(key)
            if meaning is None:
                continue
            value = meaning(mapping)
        shown[key] = value
    return shown


def _fields(mapping: Mapping[str, Any], depth: int) -> Iterator[str]:
    for key, value in _shown(mapping).items():
        yield from _field(key, value, depth)


def _field(key: str, value: Any, depth: int) -> Iterator[str]:
    pad = INDENT * depth
    if key == "findings" and isinstance(value, list):
        yield f"{pad}findings: {len(value)}" if value else f"{pad}findings: none"
        for finding in value:
            yield from _finding(finding, depth + 1)
        return
    if isinstance(value, str) and "\n" in value:
        yield f"{pad}{key}: |"
        yield from _block(value, depth + 1)
        return
    inline = _inline(value)
    if inline is not None and (len(pad) + len(key) + 2 + len(inline) <= WIDTH
                               or not isinstance(value, Mapping | list)):
        yield f"{pad}{key}: {inline}"
    elif isinstance(value, Mapping):
        yield f"{pad}{key}:"
        yield from _fields(value, depth + 1)
    else:
        yield f"{pad}{key}:"
        yield from _items(value, depth + 1)


def _items(values: list[Any], depth: int) -> Iterator[str]:
    """A list as YAML writes one: ``- `` before each item, a mapping's fields under its first."""
    pad = INDENT * depth
    for item in values:
        inline = _inline(item)
        if inline is not None and (len(pad) + 2 + len(inline) <= WIDTH
                                   or not isinstance(item, Mapping | list)):
            yield f"{pad}- {inline}"
            continue
        lines = list(_fields(item, depth + 1) if isinstance(item, Mapping)
                     else _items(item, depth + 1) if isinstance(item, list)
                     else _block(str(item), depth + 1))
        for i, line in enumerate(lines):
            yield f"{pad}- {line[len(pad) + 2:]}" if i == 0 else line


def _inline(value: Any) -> str | None:
    """``value`` on one line if it is a scalar, a list of scalars or a mapping of scalars;
    else None. Null fields of a mapping are left out; an empty one reads ``none``."""
    if isinstance(value, Mapping):
        present = _shown(value)
        if not present:
            return "none"
        if not all(_is_scalar(v) for v in present.values()):
            return None
        return ", ".join(f"{k}={_scalar(v)}" for k, v in present.items())
    if isinstance(value, list):
        if not value:
            return "none"
        if not all(_is_scalar(v) for v in value):
            return None
        return ", ".join(_scalar(v) for v in value)
    return _scalar(value)


def _is_scalar(value: Any) -> bool:
    return value is None or (isinstance(value, str | int | float | bool) and \
        not (isinstance(value, str) and "\n" in value))


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if value == "":
        return '""'
    return str(value)


def _finding(finding: Mapping[str, Any], depth: int) -> Iterator[str]:
    pad = INDENT * depth
    res = finding.get("resource")
    where = ""
    if res:
        ns = f"{res['namespace']}/" if res.get("namespace") else ""
        where = f" {res['kind']}/{ns}{res['name']}"
    yield f"{pad}[{finding['severity'].upper()}] {finding['code']}{where}: {finding['summary']}"
    more = pad + INDENT * 2
    for key, label in (("detail", "why"), ("suggestion", "fix")):
        if finding.get(key):
            yield f"{more}{label}: {finding[key]}"
    for ev in finding.get("evidence") or ():
        at = f"{more}at {ev['resource']['kind']} {ev['resource']['name']} {ev['fieldPath']}"
        if "value" not in ev:
            yield at
            continue
        inline = _inline(ev["value"])
        value = ev["value"]
        if inline is not None and (len(at) + 3 + len(inline) <= WIDTH
                                   or not isinstance(value, Mapping | list)):
            yield f"{at} = {inline}"
        else:
            yield f"{at} ="
            yield from (_fields(value, depth + 3) if isinstance(value, Mapping)
                        else _items(value, depth + 3))


def _block(text: str, depth: int) -> Iterator[str]:
    """A text of several lines, each indented under its key (YAML's ``|``)."""
    yield from (f"{INDENT * depth}{line}" for line in text.splitlines())
