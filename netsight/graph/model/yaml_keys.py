"""Reading YAML as kubectl does: a mapping that gives a key twice is refused.

PyYAML keeps the last value of a repeated key, so two objects run together without ``---``
would merge silently into one wrong object. Manifests and diff_routes proposals both read
through :data:`Loader`.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

import yaml
from yaml.error import Mark

# libyaml is several times faster; PyYAML's wheels ship it.
_FastLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_MERGE_TAG = "tag:yaml.org,2002:merge"


class DuplicateKey(yaml.constructor.ConstructorError):
    """A key given twice in one mapping. kubectl refuses it; PyYAML keeps the last value, so
    two objects run together without ``---`` would merge into one wrong object."""

    def __init__(self, key: str, first: Mark, again: Mark, *, top_level: bool) -> None:
        super().__init__(None, None, f"duplicate key {key!r}", again)
        self.key, self.first, self.top_level = key, first, top_level

    def describe(self, start: int) -> str:
        """The problem, with the first key's line counted from the file's line ``start``."""
        hint = "; a second object without '---' before it?" if self.top_level else ""
        return f"{self.problem} (first on line {start + self.first.line}{hint})"


class RefusingDuplicateKeys(yaml.constructor.SafeConstructor):
    document: yaml.Node | None = None

    def construct_document(self, node: yaml.Node) -> Any:
        self.document = node
        return super().construct_document(node)

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Hashable, Any]:
        if isinstance(node, yaml.MappingNode):
            # The keys as written, before merge keys (``<<``) bring in others that explicit
            # keys may override; a scalar key is its tag and text.
            first: dict[tuple[str, str], Mark] = {}
            for key_node, _ in node.value:
                if isinstance(key_node, yaml.ScalarNode) and key_node.tag != _MERGE_TAG:
                    mark = first.setdefault((key_node.tag, key_node.value), key_node.start_mark)
                    if mark is not key_node.start_mark:
                        raise DuplicateKey(key_node.value, mark, key_node.start_mark,
                                           top_level=node is self.document)
        return super().construct_mapping(node, deep=deep)


Loader: Any = type("Loader", (RefusingDuplicateKeys, _FastLoader), {})
