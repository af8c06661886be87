"""A plain-text rendering of any tool result, for people and for text-only MCP clients.

It walks the JSON form, so every tool gets a rendering without a renderer of its own:
findings become ``[SEVERITY] CODE resource: summary`` lines, other fields ``key: value``.
"""

from __future__ import annotations

from typing import Any


def render_text(data: dict[str, Any]) -> str:
    lines: list[str] = []
    meta = data.get("metadata", {})
    header = f"netsight · {meta.get('clusterName', '?')} ({meta.get('source', '?')}, " \
             f"generation {meta.get('graphGeneration', '?')})"
    lines.append(header)
    for key, value in data.items():
        if key == "metadata":
            continue
        if key == "findings":
            lines.append(f"findings: {len(value)}" if value else "findings: none")
            lines.extend(_finding(f) for f in value)
        elif isinstance(value, list) and value and isinstance(value[0], dict):
            lines.append(f"{key}:")
            lines.extend("  - " + _inline(item) for item in value)
        elif isinstance(value, dict):
            lines.append(f"{key}: {_inline(value)}")
        elif isinstance(value, list):
            lines.append(f"{key}: {', '.join(map(str, value)) if value else '-'}")
        else:
            lines.append(f"{key}: {value}")
    return "\n".join(lines)


def render_error(error: dict[str, Any]) -> str:
    return f"error {error.get('code')} in {error.get('tool')}: {error.get('message')}"


def _finding(finding: dict[str, Any]) -> str:
    res = finding.get("resource")
    where = ""
    if res:
        ns = f"{res['namespace']}/" if res.get("namespace") else ""
        where = f" {res['kind']}/{ns}{res['name']}"
    line = f"  [{finding['severity'].upper()}] {finding['code']}{where}: {finding['summary']}"
    extra = [f"      {label}: {finding[key]}" for key, label in
             (("detail", "why"), ("suggestion", "fix")) if finding.get(key)]
    extra.extend(
        f"      at {ev['resource']['kind']} {ev['resource']['name']} {ev['fieldPath']}"
        + (f" = {ev['value']!r}" if "value" in ev else "")
        for ev in finding.get("evidence", [])
    )
    return "\n".join([line, *extra])


def _inline(value: dict[str, Any]) -> str:
    return ", ".join(f"{k}={_scalar(v)}" for k, v in value.items())


def _scalar(value: Any) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(map(str, value)) + "]"
    return str(value)
