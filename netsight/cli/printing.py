"""How ``netsight call`` prints an answer or an error (JSON, YAML or text), and whether the
answer holds a finding at or above ``--fail-on``."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import IO, Any

import orjson
import yaml

from netsight.analyzers.core.contracts import Severity
from netsight.analyzers.core.rendering import render_error, render_text

OUTPUTS = ("json", "yaml", "text")
FAIL_ON = (Severity.CRITICAL.value, Severity.WARNING.value)
_Dumper: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def print_answer(data: dict[str, Any], output: str, out: IO[str]) -> None:
    _print(data, output, out, render_text)


def print_error(error: dict[str, Any], output: str, out: IO[str]) -> None:
    _print(error, output, out, render_error)


def _print(data: dict[str, Any], output: str, out: IO[str],
           text: Callable[[dict[str, Any]], str]) -> None:
    if output == "json":
        out.write(orjson.dumps(data, option=orjson.OPT_INDENT_2).decode() + "\n")
    elif output == "yaml":
        out.write(yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True))
    else:
        out.write(text(data) + "\n")


def fails(data: Any, threshold: str) -> bool:
    """Whether the answer holds a finding of severity ``threshold`` or worse, wherever it
    sits (top-level findings, or those of each Service, Ingress, Gateway listed)."""
    worst = {s.value for s in Severity if s.rank <= Severity(threshold).rank}
    return any(finding.get("severity") in worst for finding in _findings(data))


def _findings(data: Any) -> Iterator[dict[str, Any]]:
    if isinstance(data, dict):
        if isinstance(data.get("code"), str) and isinstance(data.get("severity"), str):
            yield data
        for value in data.values():
            yield from _findings(value)
    elif isinstance(data, list):
        for item in data:
            yield from _findings(item)
