"""Write the values table of helm/netsight/README.md from the ``# --`` comments of values.yaml.

helm-docs' convention: a comment starting ``# --`` (continued by the ``#`` lines right after
it) documents the key on the next line; the table gives the key's full path, its type, its
default and the comment. helm-docs itself is a Go binary this project does not install, so
this script does the part of it the chart needs. The table sits in the README between the
markers below; everything else in the README is written by hand.

    python helm/values_docs.py           # rewrite the README's table
    python helm/values_docs.py --check   # exit 1 if the committed table is stale
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

import yaml

CHART = Path(__file__).resolve().parent / "netsight"
BEGIN = "<!-- values table: helm/values_docs.py writes from here -->"
END = "<!-- values table: to here -->"

_KEY = re.compile(r"^(?P<indent> *)(?P<key>[A-Za-z0-9_.-]+):")


def documented_keys(text: str) -> list[tuple[str, str]]:
    """(dotted key, description) for every key under a ``# --`` comment, in file order."""
    found: list[tuple[str, str]] = []
    path: list[tuple[int, str]] = []  # (indent, key) of the enclosing keys
    comment: list[str] | None = None
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("# --"):
            comment = [stripped[4:].strip()]
            continue
        if comment is not None and stripped.startswith("#"):
            comment.append(stripped[1:].strip())
            continue
        match = _KEY.match(line)
        if match is None:
            if not stripped.startswith("- "):
                comment = None  # a comment documents only the key right below it
            continue
        indent = len(match["indent"])
        while path and path[-1][0] >= indent:
            path.pop()
        path.append((indent, match["key"]))
        if comment is not None:
            found.append((".".join(key for _, key in path), " ".join(comment).strip()))
        comment = None
    return found


def lookup(values: dict[str, Any], dotted: str) -> Any:
    node: Any = values
    for key in dotted.split("."):
        node = node[key]
    return node


def type_of(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "list"
    if isinstance(value, dict):
        return "object"
    return "null" if value is None else type(value).__name__


def cell(text: str) -> str:
    return text.replace("|", "\\|")


def table(values_text: str) -> str:
    values = yaml.safe_load(values_text)
    rows = ["| Key | Type | Default | Description |", "| --- | --- | --- | --- |"]
    for key, description in documented_keys(values_text):
        value = lookup(values, key)
        default = json.dumps(value, separators=(",", ":"))
        rows.append(f"| `{key}` | {type_of(value)} | `{cell(default)}` | {cell(description)} |")
    return "\n".join(rows) + "\n"


def rendered(readme: str, values_text: str) -> str:
    """``readme`` with the table between the markers replaced by one from ``values_text``."""
    head, begin, rest = readme.partition(BEGIN)
    _, end, tail = rest.partition(END)
    if not begin or not end:
        raise ValueError(f"README.md lacks the markers {BEGIN!r} ... {END!r}")
    return f"{head}{BEGIN}\n{table(values_text)}{END}{tail}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="report a stale README instead of rewriting it")
    args = parser.parse_args(argv)
    readme_path = CHART / "README.md"
    readme = readme_path.read_text()
    fresh = rendered(readme, (CHART / "values.yaml").read_text())
    if fresh == readme:
        return 0
    if args.check:
        print(f"{readme_path} is stale: run python helm/values_docs.py", file=sys.stderr)
        return 1
    readme_path.write_text(fresh)
    return 0


if __name__ == "__main__":
    sys.exit(main())
